//===- MemoryLimit.cpp - The most memory arrays may take ------------------===//

#include "runtime/MemoryLimit.h"

#include <unistd.h>

using namespace mha::runtime;

uint64_t mha::runtime::getMemoryLimit() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  // sysconf cannot fail for these on Linux; if it ever does, no limit is
  // better than refusing everything.
  if (pages <= 0 || pageSize <= 0)
    return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
}

llvm::Error mha::runtime::checkMemoryLimit(uint64_t bytes,
                                           const llvm::Twine &what) {
  uint64_t limit = getMemoryLimit();
  if (bytes <= limit)
    return llvm::Error::success();
  return llvm::createStringError(what + " needs " + llvm::Twine(bytes) +
                                 " bytes, more than the memory limit of " +
                                 llvm::Twine(limit) +
                                 " bytes (the physical memory)");
}
