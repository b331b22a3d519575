//===- Strategy.h - Tile and register-block sizes from the target -*- C++ -*-//
//
// One place derives the sizes that the code generation passes use from the
// CPU the code is compiled for: the register block of mha-vectorize and the
// parallel tiles of mha-tile-projections. The passes' and pipelines'
// defaults are this rule applied to the host (the JIT's target);
// `mha-compile --cpu` applies it to its CPU; options set by hand override
// it. docs/pipeline.md ("Sizes from the target") states the rule.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_CODEGEN_STRATEGY_H
#define MHA_COMPILER_CODEGEN_STRATEGY_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir {
namespace mha {

/// What the rule reads off a CPU.
struct TargetDescription {
  /// Bits of the widest float vector register (512 with AVX-512F, 256 with
  /// AVX2, 128 otherwise).
  int64_t vectorBits = 512;
  /// Vector registers the code may use (32 zmm with AVX-512F, 16 else).
  int64_t vectorRegisters = 32;
  /// Data cache sizes of one core.
  int64_t l1Bytes = 48 * 1024;
  int64_t l2Bytes = 2 * 1024 * 1024;

  /// The CPU whose target features `hasFeature` answers (LLVM's names:
  /// "avx512f", "avx2"), with the host's cache sizes where it reports them
  /// (a library for another CPU assumes the host's caches, or the defaults
  /// above where the host reports none).
  static TargetDescription
  fromFeatures(llvm::function_ref<bool(llvm::StringRef)> hasFeature);
  /// This machine's CPU: the JIT's target.
  static const TargetDescription &host();
};

/// The sizes the code generation passes use.
struct CodegenStrategy {
  /// f32 elements of one vector register (mha-vectorize `lanes`).
  int64_t lanes;
  /// Rows and columns of a contraction's register block (mha-vectorize
  /// `rows` and `cols`).
  int64_t rows, cols;
  /// Longest vector along the last loop of a non-contraction op
  /// (mha-vectorize `max-vector-length`).
  int64_t maxVectorLength;
  /// Rows and columns of a projection's parallel tile
  /// (mha-tile-projections `row-tile` and `col-tile`).
  int64_t projectionRowTile, projectionColTile;
};

/// The rule (docs/pipeline.md, "Sizes from the target"):
/// - a register block is 2 registers of columns, so that each broadcast of
///   a left-operand element feeds 2 FMAs, and as many rows as fill half of
///   the registers with accumulators; the other half holds the broadcasts
///   and the right operand's rows that the unrolled reduction step loads
///   ahead (AVX-512: 8 x 32 floats in 16 of 32 zmm; AVX2: 4 x 16 in 8 of
///   16 ymm);
/// - a non-contraction row is at most half the registers long;
/// - a projection tile is 4 x 4 register blocks: each weight row loaded
///   from L2 serves 4 row blocks and each input row in L1 4 column blocks,
///   and a tile is small enough that 2 threads get many (8 heads x T/32);
///   its columns are fewer where a [1024, cols] weight panel would not fit
///   in half of L2.
CodegenStrategy deriveCodegenStrategy(const TargetDescription &target);

/// deriveCodegenStrategy(TargetDescription::host()), computed once.
const CodegenStrategy &hostCodegenStrategy();

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_CODEGEN_STRATEGY_H
