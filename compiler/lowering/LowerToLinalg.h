//===- LowerToLinalg.h - Linalg lowering pieces for reuse -------*- C++ -*-===//
//
// What `mha-lower-to-linalg` shares with other lowerings, so that an op that
// needs the same arithmetic as `mha.sdpa` builds it the same way instead of
// repeating it.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_LOWERING_LOWERTOLINALG_H
#define MHA_COMPILER_LOWERING_LOWERTOLINALG_H

#include "mlir/IR/Builders.h"

namespace mlir {
namespace mha {
struct ScoreSteps;

/// Builds, at the insertion point of `builder`, the attention probabilities
/// `[B, H, T, S]` of `query [B, H, T, dk]` against `key [B, Hkv, S, dk]`
/// (f32 tensors; `mask [B or 1, T, S]` of i1 or null): the softmax that the
/// lowering of `mha.sdpa` multiplies its values by, normalized. Keys that may
/// not be attended get exactly 0, and a row that may attend no key is all 0.
/// `causalBottomRight` moves the causal diagonal as `mha.sdpa`'s does.
/// `positions [B]` (i64, or null) put query i of sequence b at
/// positions[b] + i on the causal diagonal (mha.sdpa's `positions`).
/// `steps` are the op's score steps, their tensors the lowered operands.
Value buildAttentionProbabilities(OpBuilder &builder, Location loc, Value query,
                                  Value key, Value mask, Value positions,
                                  bool causal, bool causalBottomRight,
                                  double scale, const ScoreSteps &steps);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_LOWERING_LOWERTOLINALG_H
