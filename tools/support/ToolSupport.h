//===- ToolSupport.h - What every mha tool does the same way ----*- C++ -*-===//
//
// The exit codes that mha-opt, mha-gen and mha-run share, and command-line
// parsing that reports a bad option like every other error instead of
// exiting with LLVM's code 1 (which means "check failed" here).
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_SUPPORT_TOOLSUPPORT_H
#define MHA_TOOLS_SUPPORT_TOOLSUPPORT_H

#include "llvm/ADT/StringRef.h"

namespace mha {
namespace tools {

/// The documented exit codes of the mha tools (README.md, "The tools").
enum ExitCode {
  /// Success.
  kOk = 0,
  /// A check failed: mha-run's output is outside the tolerance of --expect
  /// or --check; mha-opt's -verify-diagnostics found other diagnostics.
  kMismatch = 1,
  /// Bad usage or bad input: an unknown option or a bad value, a file that
  /// cannot be read, a graph that does not parse or verify, a bad `.npy`.
  kBadInput = 2,
  /// The graph is valid but a pass or the JIT failed on it.
  kCompileFailed = 3,
};

/// Parses the command line as cl::ParseCommandLineOptions does, but prints
/// a bad option as `<tool>: error: ...` and returns false, so that the tool
/// can exit with kBadInput. `--help` and `--version` still exit with 0.
bool parseCommandLine(int argc, const char *const *argv,
                      llvm::StringRef overview);

} // namespace tools
} // namespace mha

#endif // MHA_TOOLS_SUPPORT_TOOLSUPPORT_H
