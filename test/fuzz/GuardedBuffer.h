//===- GuardedBuffer.h - A buffer that ends at an inaccessible page -*- C++ -*-===//
//
// The fuzzers hand the compiled libraries buffers that end right before a
// PROT_NONE page, so that a read or write one byte past an array faults at
// once, with or without the sanitizers.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TEST_FUZZ_GUARDEDBUFFER_H
#define MHA_TEST_FUZZ_GUARDEDBUFFER_H

#include <cstdlib>
#include <sys/mman.h>
#include <unistd.h>

/// `bytes` bytes that end right before a PROT_NONE page.
struct GuardedBuffer {
  explicit GuardedBuffer(size_t bytes) : bytes(bytes) {
    size_t page = sysconf(_SC_PAGESIZE);
    mapped = ((bytes + page - 1) / page + 1) * page;
    base = static_cast<char *>(mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base == MAP_FAILED || mprotect(base + mapped - page, page, PROT_NONE))
      abort();
    data = base + mapped - page - bytes;
  }
  ~GuardedBuffer() { munmap(base, mapped); }
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;
  size_t bytes, mapped;
  char *base, *data;
};

#endif // MHA_TEST_FUZZ_GUARDEDBUFFER_H
