//===- MemoryLimit.h - The most memory arrays may take ----------*- C++ -*-===//
//
// Sizes come from files and graphs that anyone can write. Every array is
// checked against this limit before it is allocated, so that a shape of 2^40
// elements is a clear error instead of a failed allocation, a crash in
// compiled code that does not check malloc, or the OOM killer.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_MEMORYLIMIT_H
#define MHA_RUNTIME_MEMORYLIMIT_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace mha {
namespace runtime {

/// Returns the limit in bytes: the machine's physical memory
/// (sysconf(_SC_PHYS_PAGES) pages of sysconf(_SC_PAGESIZE) bytes).
uint64_t getMemoryLimit();

/// Fails if `bytes` exceed the memory limit; the message starts with `what`
/// ("shape [2, 3] of float32", "the inputs and the output together").
llvm::Error checkMemoryLimit(uint64_t bytes, const llvm::Twine &what);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_MEMORYLIMIT_H
