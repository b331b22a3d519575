//===- Strategy.cpp - Tile and register-block sizes from the target -------===//

#include "compiler/codegen/Strategy.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <unistd.h>

using namespace mlir::mha;

namespace {
/// A cache size from sysconf, or `fallback` where the host reports none
/// (0 or -1: some kernels and containers do not say).
int64_t hostCacheBytes(int name, int64_t fallback) {
#ifdef _SC_LEVEL1_DCACHE_SIZE
  long bytes = sysconf(name);
  if (bytes > 0)
    return bytes;
#else
  (void)name;
#endif
  return fallback;
}
} // namespace

TargetDescription TargetDescription::fromFeatures(
    llvm::function_ref<bool(llvm::StringRef)> hasFeature) {
  TargetDescription target;
  if (hasFeature("avx512f")) {
    target.vectorBits = 512;
    target.vectorRegisters = 32;
  } else if (hasFeature("avx2") || hasFeature("avx")) {
    target.vectorBits = 256;
    target.vectorRegisters = 16;
  } else {
    target.vectorBits = 128;
    target.vectorRegisters = 16;
  }
#ifdef _SC_LEVEL1_DCACHE_SIZE
  target.l1Bytes = hostCacheBytes(_SC_LEVEL1_DCACHE_SIZE, target.l1Bytes);
  target.l2Bytes = hostCacheBytes(_SC_LEVEL2_CACHE_SIZE, target.l2Bytes);
#endif
  return target;
}

const TargetDescription &TargetDescription::host() {
  static const TargetDescription host = [] {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    return fromFeatures(
        [&](llvm::StringRef name) { return features.lookup(name); });
  }();
  return host;
}

CodegenStrategy
mlir::mha::deriveCodegenStrategy(const TargetDescription &target) {
  CodegenStrategy strategy;
  strategy.lanes = std::max<int64_t>(target.vectorBits / 32, 1);
  // An eighth of the registers hold a row of the right operand (4 zmm of
  // 32, 2 ymm of 16); the accumulators take what is left but that row and
  // 2 registers for broadcasts.
  int64_t columnRegisters = std::max<int64_t>(target.vectorRegisters / 8, 2);
  strategy.cols = columnRegisters * strategy.lanes;
  strategy.rows = std::max<int64_t>(
      (target.vectorRegisters - columnRegisters - 2) / columnRegisters, 1);
  // FMAs per step: one per accumulator register; enough steps per
  // iteration for at least as many FMAs as registers.
  int64_t accumulators = strategy.rows * columnRegisters;
  strategy.reductionUnroll =
      llvm::divideCeil(target.vectorRegisters, accumulators);
  strategy.maxVectorLength = target.vectorRegisters / 2 * strategy.lanes;
  // 8 row blocks by at most 4 column blocks per parallel tile.
  strategy.projectionRowTile = 8 * strategy.rows;
  strategy.projectionColTile = 4 * strategy.cols;
  // The weight panel of a tile, [K, columns] for K up to 1024, stays in a
  // quarter of L2 while the tile's row blocks pass over it, beside the
  // tile's rows of the input and the next tile's panel.
  constexpr int64_t kPanelDepth = 1024;
  int64_t panelColumns = target.l2Bytes / 4 / (kPanelDepth * 4);
  int64_t fitting = panelColumns / strategy.cols * strategy.cols;
  strategy.projectionColTile =
      std::clamp<int64_t>(fitting, strategy.cols, strategy.projectionColTile);
  // Attention: key blocks of two register-block widths; the largest
  // power-of-two query tile whose block of scores fits in 2/3 of L1.
  strategy.attentionKeyTile = 2 * strategy.cols;
  int64_t scoreRows = target.l1Bytes * 2 / 3 / (strategy.attentionKeyTile * 4);
  strategy.attentionQueryTile = std::clamp<int64_t>(
      int64_t(llvm::bit_floor(uint64_t(std::max<int64_t>(scoreRows, 1)))), 16,
      256);
  return strategy;
}

const CodegenStrategy &mlir::mha::hostCodegenStrategy() {
  static const CodegenStrategy strategy =
      deriveCodegenStrategy(TargetDescription::host());
  return strategy;
}
