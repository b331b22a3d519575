//===- BufferCache.cpp - Reuse compiled code's buffers across calls -------===//

#include "runtime/BufferCache.h"

#include <algorithm>
#include <cstdlib>
#include <list>
#include <malloc.h>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <unordered_map>
#include <utility>

using namespace mha::runtime;

namespace {
/// Blocks are interchangeable when both their size and alignment match.
using BlockKind = std::pair<size_t, size_t>;

struct Cache {
  std::mutex mutex;
  /// Blocks of at least kMinCachedBytes handed out and not yet released.
  std::unordered_map<void *, BlockKind> live;
  /// Released blocks, the least recently released first: when the cache
  /// is full, those go, so that it holds what the latest calls use (the
  /// blocks of one-off work, such as preparing the weights, leave it).
  std::list<std::pair<BlockKind, void *>> free;
  /// The released blocks of each kind (entries of `free`).
  std::multimap<BlockKind, std::list<std::pair<BlockKind, void *>>::iterator>
      freeByKind;
  size_t liveBytes = 0, peakLiveBytes = 0, freeBytes = 0;

  /// Frees the least recently released block.
  void evictOldest() {
    auto oldest = free.begin();
    auto [first, last] = freeByKind.equal_range(oldest->first);
    for (auto entry = first; entry != last; ++entry)
      if (entry->second == oldest) {
        freeByKind.erase(entry);
        break;
      }
    freeBytes -= oldest->first.first;
    std::free(oldest->second);
    free.erase(oldest);
  }
};

/// Never destroyed: compiled code may still release blocks while static
/// destructors run at exit.
Cache &cache() {
  static Cache *instance = new Cache();
  return *instance;
}

void *allocateFromLibrary(size_t bytes, size_t alignment) {
  if (bytes >= buffer_cache::kHugePageBytes) {
    // Aligned to a huge page and marked for transparent huge pages: the
    // fused attention reads a key block of Kᵀ as dk rows S floats apart,
    // each on its own 4 KiB page: with the other operands, more pages than
    // the first-level data TLB has entries; on 2 MiB pages a few
    // (docs/performance.md). Where
    // the kernel has THP off, madvise fails and the block stays on small
    // pages.
    void *pointer = nullptr;
    if (posix_memalign(&pointer,
                       std::max(alignment, buffer_cache::kHugePageBytes),
                       bytes) != 0)
      return nullptr;
#ifdef MADV_HUGEPAGE
    madvise(pointer, bytes, MADV_HUGEPAGE);
#endif
    return pointer;
  }
  if (alignment == 0)
    return std::malloc(bytes);
  // aligned_alloc wants a multiple of the alignment.
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded);
}
} // namespace

void *buffer_cache::allocate(size_t bytes, size_t alignment) {
  if (bytes < kMinCachedBytes)
    return allocateFromLibrary(bytes, alignment);
  BlockKind kind(bytes, alignment);
  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto found = c.freeByKind.find(kind);
    if (found != c.freeByKind.end()) {
      void *pointer = found->second->second;
      c.free.erase(found->second);
      c.freeByKind.erase(found);
      c.freeBytes -= bytes;
      c.live.emplace(pointer, kind);
      c.liveBytes += bytes;
      c.peakLiveBytes = std::max(c.peakLiveBytes, c.liveBytes);
      return pointer;
    }
  }
  void *pointer = allocateFromLibrary(bytes, alignment);
  if (!pointer)
    return nullptr;
  std::lock_guard<std::mutex> lock(c.mutex);
  c.live.emplace(pointer, kind);
  c.liveBytes += bytes;
  c.peakLiveBytes = std::max(c.peakLiveBytes, c.liveBytes);
  return pointer;
}

void buffer_cache::release(void *pointer) {
  // A block with less room than the smallest cached size was never cached:
  // no lock for the many small blocks.
  if (!pointer || malloc_usable_size(pointer) < kMinCachedBytes)
    return std::free(pointer);
  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto found = c.live.find(pointer);
    if (found != c.live.end()) {
      BlockKind kind = found->second;
      c.live.erase(found);
      c.liveBytes -= kind.first;
      // Twice the peak: a call's blocks need not all be live at once (the
      // layer's buffers and its result, held by the caller until the next
      // call, say), yet all are reused.
      c.freeByKind.emplace(kind, c.free.insert(c.free.end(), {kind, pointer}));
      c.freeBytes += kind.first;
      while (c.freeBytes > 2 * c.peakLiveBytes)
        c.evictOldest();
      return;
    }
  }
  std::free(pointer);
}

void buffer_cache::clear() {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  while (!c.free.empty())
    c.evictOldest();
  c.peakLiveBytes = c.liveBytes;
}

size_t buffer_cache::cachedBytes() {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.freeBytes;
}
