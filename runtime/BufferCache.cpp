//===- BufferCache.cpp - Reuse compiled code's buffers across calls -------===//

#include "runtime/BufferCache.h"

#include <cstdlib>
#include <malloc.h>
#include <map>
#include <mutex>
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
  /// Released blocks, by kind.
  std::multimap<BlockKind, void *> free;
  size_t liveBytes = 0, peakLiveBytes = 0, freeBytes = 0;
};

/// Never destroyed: compiled code may still release blocks while static
/// destructors run at exit.
Cache &cache() {
  static Cache *instance = new Cache();
  return *instance;
}

void *allocateFromLibrary(size_t bytes, size_t alignment) {
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
    auto found = c.free.find(kind);
    if (found != c.free.end()) {
      void *pointer = found->second;
      c.free.erase(found);
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
      // prepared weights and the layer's buffers, say), yet all are reused.
      if (c.freeBytes + kind.first <= 2 * c.peakLiveBytes) {
        c.free.emplace(kind, pointer);
        c.freeBytes += kind.first;
        return;
      }
    }
  }
  std::free(pointer);
}

void buffer_cache::clear() {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto &[kind, pointer] : c.free)
    std::free(pointer);
  c.free.clear();
  c.freeBytes = 0;
  c.peakLiveBytes = c.liveBytes;
}

size_t buffer_cache::cachedBytes() {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.freeBytes;
}
