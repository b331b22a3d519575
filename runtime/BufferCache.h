//===- BufferCache.h - Reuse buffers across calls ---------------*- C++ -*-===//
//
// A compiled layer allocates its intermediate buffers (Q, K, V, the heads,
// the result) with malloc on every call and frees them before it returns.
// glibc serves blocks of 128 KiB and more with mmap and unmaps them on free,
// so each call faults every page of those buffers in again and the kernel
// zeroes it: about 16,400 page faults per call when decoding (4, 1, 512, 8)
// against 4096 keys (a 64 MiB K|V buffer), which took 118 to 132 ms per
// call then and 105 to 109 ms with this cache. Like the caching
// allocators of serving runtimes, this keeps such blocks when the compiled
// code frees them and hands them out again for an allocation of the same
// size and alignment, which the next call makes.
//
// The JIT gives compiled code these functions as its allocation functions,
// `_mlir_memref_to_llvm_alloc`, `..._aligned_alloc` and `..._free`
// (JitRunner.cpp). Libraries from mha-compile define the same functions in
// their C wrapper, with a cache of their own written in C
// (tools/mha-compile/library/mha_library.c), as they need no C++ runtime.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_BUFFERCACHE_H
#define MHA_RUNTIME_BUFFERCACHE_H

#include <cstddef>

namespace mha {
namespace runtime {
namespace buffer_cache {

/// Blocks smaller than this go straight to the C library, whose heap reuses
/// them without page faults anyway (glibc's default mmap threshold).
inline constexpr size_t kMinCachedBytes = size_t(128) << 10;

/// Blocks of at least this many bytes start on a huge page (x86-64's 2 MiB
/// page of one page-table entry) and ask the kernel for transparent huge
/// pages (madvise MADV_HUGEPAGE). Smaller ones would waste most of it.
inline constexpr size_t kHugePageBytes = size_t(2) << 20;

/// A block of `bytes` aligned to `alignment` (0: malloc's), a cached one of
/// the same size and alignment when there is one; null when the C library
/// has no memory. Thread-safe, as compiled code allocates in OpenMP threads.
void *allocate(size_t bytes, size_t alignment);

/// Gives back a block from `allocate`, or any other block of the C
/// library's. Blocks of at least kMinCachedBytes are kept for reuse; where
/// the cache would then hold more than twice the most memory the compiled
/// code has had allocated at once, the least recently released blocks are
/// freed.
void release(void *pointer);

/// Frees every cached block and forgets the peak (for tests, and a host
/// that is done running).
void clear();

/// Bytes held for reuse now.
size_t cachedBytes();

} // namespace buffer_cache
} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_BUFFERCACHE_H
