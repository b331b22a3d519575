//===- BF16Parts.h - f32 as bf16 parts, and bf16 pairs ----------*- C++ -*-===//
//
// The bf16 paths compute f32 products on bf16 units: an f32 operand is split
// into hi + lo bf16 parts, and AMX reads its B operand as pairs of bf16 in
// one 32-bit element. Attention's packed keys (mha-tile-attention's AMX
// path), mha-amx-split's A parts and the bf16 output projection
// (mha-bf16-projections) all split and pair here, so that they round alike.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_UTILS_BF16PARTS_H
#define MHA_COMPILER_UTILS_BF16PARTS_H

#include "mlir/IR/Builders.h"

namespace mlir {
namespace mha {

/// f32 `value` (a scalar or a vector) rounded to bf16 (hi: to nearest,
/// ties away from zero), or with `lo` what that rounding left, rounded to
/// nearest even (lo): hi + lo is `value` to a relative 2^-17. The one
/// hi + lo split of the bf16 paths: attention's packed operands,
/// mha-amx-split's A parts and the output projection's terms.
Value buildBF16Part(OpBuilder &builder, Location loc, Value value, bool lo);
/// The same with the part chosen at run time (`lo`, an i1): one rounding of
/// the chosen f32, where selecting between the two parts rounds both.
Value buildBF16Part(OpBuilder &builder, Location loc, Value value, Value lo);

/// The bf16 pair (`first`, `second`) as the bits of one f32, `first` in the
/// low half: one element of an AMX B operand (a K pair).
Value buildBF16Pair(OpBuilder &builder, Location loc, Value first,
                    Value second);

/// Element `index` (0 or 1, an index value) of the pair `pair`
/// (buildBF16Pair), widened to f32.
Value buildBF16PairElement(OpBuilder &builder, Location loc, Value pair,
                           Value index);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_UTILS_BF16PARTS_H
