//===- BufferCacheTest.cpp - Tests of the compiled code's buffer cache ----===//
//
// A released block comes back for the next allocation of the same size and
// alignment, never for another size or alignment; small blocks go back to
// the C library, and beyond the cap the least recently released blocks do;
// blocks of a huge page or more start on one.
//
//===----------------------------------------------------------------------===//

#include "runtime/BufferCache.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>

using namespace mha::runtime;

namespace {

constexpr size_t kLarge = size_t(1) << 20;

class BufferCacheTest : public ::testing::Test {
protected:
  void SetUp() override { buffer_cache::clear(); }
  void TearDown() override { buffer_cache::clear(); }
};

TEST_F(BufferCacheTest, ReusesAReleasedBlockOfTheSameSize) {
  void *first = buffer_cache::allocate(kLarge, 0);
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, kLarge);
  buffer_cache::release(first);
  EXPECT_EQ(buffer_cache::cachedBytes(), kLarge);
  void *second = buffer_cache::allocate(kLarge, 0);
  EXPECT_EQ(second, first);
  EXPECT_EQ(buffer_cache::cachedBytes(), 0u);
  buffer_cache::release(second);
}

TEST_F(BufferCacheTest, NeverHandsOutAnotherSizeOrAlignment) {
  void *block = buffer_cache::allocate(kLarge, 0);
  buffer_cache::release(block);
  void *larger = buffer_cache::allocate(2 * kLarge, 0);
  void *aligned = buffer_cache::allocate(kLarge, 4096);
  EXPECT_NE(larger, block);
  EXPECT_NE(aligned, block);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 4096, 0u);
  // Both are new blocks: the released one is still cached.
  EXPECT_EQ(buffer_cache::cachedBytes(), kLarge);
  buffer_cache::release(larger);
  buffer_cache::release(aligned);
}

TEST_F(BufferCacheTest, LeavesSmallBlocksToTheCLibrary) {
  void *small = buffer_cache::allocate(buffer_cache::kMinCachedBytes / 2, 0);
  ASSERT_NE(small, nullptr);
  buffer_cache::release(small);
  EXPECT_EQ(buffer_cache::cachedBytes(), 0u);
  // Blocks it did not allocate are freed, whatever their size.
  buffer_cache::release(std::malloc(kLarge));
  EXPECT_EQ(buffer_cache::cachedBytes(), 0u);
  buffer_cache::release(nullptr);
}

TEST_F(BufferCacheTest, HoldsAtMostTwiceThePeak) {
  // Three blocks live at once set the peak to 3 MiB, so 6 MiB may be kept;
  // later blocks of other sizes fill that and the rest are freed.
  void *blocks[3];
  for (void *&block : blocks)
    block = buffer_cache::allocate(kLarge, 0);
  for (void *block : blocks)
    buffer_cache::release(block);
  EXPECT_EQ(buffer_cache::cachedBytes(), 3 * kLarge);
  for (size_t size : {kLarge + 64, kLarge + 128, kLarge + 192, kLarge + 256})
    buffer_cache::release(buffer_cache::allocate(size, 0));
  EXPECT_LE(buffer_cache::cachedBytes(), 6 * kLarge);
  EXPECT_GT(buffer_cache::cachedBytes(), 5 * kLarge);
}

TEST_F(BufferCacheTest, TheLatestReleasedBlockIsKeptWhenFull) {
  // One-off blocks (the prepared weights' scratch) fill the cache to twice
  // the peak; the block that each call then releases last (its result,
  // held by the caller until then) must still be kept, or every call maps
  // it afresh. The oldest block goes instead.
  void *scratch[2];
  for (void *&block : scratch)
    block = buffer_cache::allocate(kLarge, 0);
  for (void *block : scratch)
    buffer_cache::release(block);
  void *more[2] = {buffer_cache::allocate(kLarge + 64, 0),
                   buffer_cache::allocate(kLarge + 64, 0)};
  for (void *block : more)
    buffer_cache::release(block);
  // The peak is two blocks of 1 MiB + 64, so the cache may hold twice
  // that: it holds all four blocks.
  const size_t limit = 2 * (2 * (kLarge + 64));
  EXPECT_EQ(buffer_cache::cachedBytes(), 4 * kLarge + 128);
  // A call's result: a new size, allocated and released. Kept, it would
  // exceed the limit: the oldest block goes, not the result.
  void *result = buffer_cache::allocate(kLarge + 128, 0);
  buffer_cache::release(result);
  EXPECT_LE(buffer_cache::cachedBytes(), limit);
  // The next call gets it back.
  void *again = buffer_cache::allocate(kLarge + 128, 0);
  EXPECT_EQ(again, result);
  buffer_cache::release(again);
}

TEST_F(BufferCacheTest, LargeBlocksStartOnAHugePage) {
  // Blocks of 2 MiB and more start on a 2 MiB boundary, whatever alignment
  // is asked, so that transparent huge pages can back them; smaller ones
  // keep the alignment they ask for and are cached as before.
  void *large = buffer_cache::allocate(buffer_cache::kHugePageBytes + 64, 64);
  void *unaligned = buffer_cache::allocate(3 * buffer_cache::kHugePageBytes, 0);
  ASSERT_NE(large, nullptr);
  ASSERT_NE(unaligned, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % buffer_cache::kHugePageBytes,
            0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(unaligned) %
                buffer_cache::kHugePageBytes,
            0u);
  // The whole block is usable, and comes back for the same request.
  std::memset(large, 1, buffer_cache::kHugePageBytes + 64);
  buffer_cache::release(large);
  EXPECT_EQ(buffer_cache::allocate(buffer_cache::kHugePageBytes + 64, 64),
            large);
  buffer_cache::release(large);
  buffer_cache::release(unaligned);
}

} // namespace
