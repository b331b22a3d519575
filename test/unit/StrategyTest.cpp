//===- StrategyTest.cpp - The sizes the target rule gives -----------------===//
//
// deriveCodegenStrategy (compiler/strategy/Strategy.h) on described CPUs,
// against the sizes that docs/pipeline.md ("Sizes from the target") works
// out by hand from its rule. The lit tests see only the host's sizes; these
// cover the CPUs the CI machines and `mha-compile --cpu` may be.
//
//===----------------------------------------------------------------------===//

#include "compiler/strategy/Strategy.h"

#include <gtest/gtest.h>

using namespace mlir::mha;

namespace {
TargetDescription describe(int64_t vectorBits, int64_t registers, int64_t l1KiB,
                           int64_t l2KiB) {
  TargetDescription target;
  target.vectorBits = vectorBits;
  target.vectorRegisters = registers;
  target.l1Bytes = l1KiB * 1024;
  target.l2Bytes = l2KiB * 1024;
  return target;
}

TEST(Strategy, Avx512WithLargeL1) {
  // Sapphire Rapids and Zen 5: 32 zmm, 48 KiB of L1d, 2 MiB of L2.
  CodegenStrategy sizes = deriveCodegenStrategy(describe(512, 32, 48, 2048));
  EXPECT_EQ(sizes.lanes, 16);
  EXPECT_EQ(sizes.rows, 6);
  EXPECT_EQ(sizes.cols, 64);
  EXPECT_EQ(sizes.reductionUnroll, 2);
  EXPECT_EQ(sizes.maxVectorLength, 256);
  EXPECT_EQ(sizes.projectionRowTile, 48);
  EXPECT_EQ(sizes.projectionColTile, 128);
  // Key blocks of 2 x 64 columns; 48 KiB / (128 x 4 B) = 96 rows, so 64.
  EXPECT_EQ(sizes.attentionKeyTile, 128);
  EXPECT_EQ(sizes.attentionQueryTile, 64);
}

TEST(Strategy, Avx512WithSmallCaches) {
  // Skylake-SP: 32 KiB of L1d (32768 / 512 = 64 rows exactly), 1 MiB of
  // L2 (a [1024, 64] panel in a quarter of it: 64 columns).
  CodegenStrategy sizes = deriveCodegenStrategy(describe(512, 32, 32, 1024));
  EXPECT_EQ(sizes.attentionQueryTile, 64);
  EXPECT_EQ(sizes.attentionKeyTile, 128);
  EXPECT_EQ(sizes.projectionColTile, 64);
}

TEST(Strategy, Avx2) {
  // 16 ymm: blocks of 6 x 16 (BLIS's Haswell kernel), key blocks of 32;
  // 32 KiB / (32 x 4 B) = 256 rows, capped at 128.
  CodegenStrategy sizes = deriveCodegenStrategy(describe(256, 16, 32, 1024));
  EXPECT_EQ(sizes.lanes, 8);
  EXPECT_EQ(sizes.rows, 6);
  EXPECT_EQ(sizes.cols, 16);
  EXPECT_EQ(sizes.maxVectorLength, 64);
  EXPECT_EQ(sizes.attentionKeyTile, 32);
  EXPECT_EQ(sizes.attentionQueryTile, 128);
}

TEST(Strategy, QueryTileBounds) {
  // 8 KiB: 16 rows; 4 KiB would be 8, raised to the smallest tile, 16.
  EXPECT_EQ(
      deriveCodegenStrategy(describe(512, 32, 8, 2048)).attentionQueryTile, 16);
  EXPECT_EQ(
      deriveCodegenStrategy(describe(512, 32, 4, 2048)).attentionQueryTile, 16);
  // A power of two: 40 KiB gives 80 rows, so 64.
  EXPECT_EQ(
      deriveCodegenStrategy(describe(512, 32, 40, 2048)).attentionQueryTile,
      64);
}

TEST(Strategy, FeaturesPickTheVectors) {
  auto has = [](std::initializer_list<llvm::StringRef> features) {
    return [features](llvm::StringRef name) {
      return llvm::is_contained(features, name);
    };
  };
  EXPECT_EQ(
      TargetDescription::fromFeatures(has({"avx512f", "avx2"})).vectorBits,
      512);
  EXPECT_EQ(TargetDescription::fromFeatures(has({"avx2"})).vectorBits, 256);
  EXPECT_EQ(TargetDescription::fromFeatures(has({"avx2"})).vectorRegisters, 16);
  EXPECT_EQ(TargetDescription::fromFeatures(has({})).vectorBits, 128);
}
} // namespace
