//===- AMXPermission.h - Linux's permission for the AMX tile data -*- C++
//-*-===//
//
// Linux (5.16+) enables AMX's 8 KiB of tile state for a process only on
// request: until `arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`
// succeeds, an AMX instruction raises SIGILL. Granted once, it holds for
// every thread of the process. The JIT runtime asks before it runs code
// with AMX instructions, and the tools that run the compiled code in their
// own process (mha-run, the Python module) before they let `bf16-dot=auto`
// pick AMX (processMayUseAMX); the compiler itself decides from the target
// alone. Header-only. The request itself is AMXTileData.h's, in C, which
// the C wrapper of mha-compile's libraries compiles in too.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_AMXPERMISSION_H
#define MHA_RUNTIME_AMXPERMISSION_H

#include "runtime/AMXTileData.h"

#include <cstring>
#include <string>

namespace mha::runtime {

/// Asks Linux for this process's permission to use the AMX tile data.
/// Idempotent; returns an empty string on success, else why it failed.
inline std::string requestAMXTileData() {
#if defined(__linux__) && defined(__x86_64__)
  int refused = mhaRequestAMXTileData();
  if (refused == 0)
    return "";
  return std::string("arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) "
                     "failed: ") +
         std::strerror(refused);
#else
  return "AMX needs Linux on x86-64";
#endif
}

/// Whether this process may run code with AMX instructions on a CPU that
/// has AMX-BF16 (`cpuHasAMX`): false without it, else whether Linux grants
/// the tile data (requestAMXTileData). A tool whose JIT targets this machine
/// sets MhaPipelineOptions::targetMayUseAMX from it.
inline bool processMayUseAMX(bool cpuHasAMX) {
  return cpuHasAMX && requestAMXTileData().empty();
}

} // namespace mha::runtime

#endif // MHA_RUNTIME_AMXPERMISSION_H
