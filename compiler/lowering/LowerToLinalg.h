//===- LowerToLinalg.h - Pieces of the linalg lowering for reuse -*- C++
//-*-===//
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

/// Builds, at the insertion point of `builder`, the attention probabilities
/// `[B, H, T, S]` of `query [B, H, T, dk]` against `key [B, Hkv, S, dk]`
/// (f32 tensors; `mask [B or 1, T, S]` of i1 or null): the softmax that the
/// lowering of `mha.sdpa` multiplies its values by, normalized. Keys that may
/// not be attended get exactly 0, and a row that may attend no key is all 0.
/// `causalBottomRight` moves the causal diagonal as `mha.sdpa`'s does.
/// `positions [B]` (i64, or null) put query i of sequence b at
/// positions[b] + i on the causal diagonal (mha.sdpa's `positions`).
Value buildAttentionProbabilities(OpBuilder &builder, Location loc, Value query,
                                  Value key, Value mask, Value positions,
                                  bool causal, bool causalBottomRight,
                                  double scale);

/// The offset of the causal diagonal (key j is visible to query i when
/// j <= i + offset): S - T for the bottom-right alignment, folded to a
/// constant when T and S are static, else an `arith.subi` at the builder's
/// insertion point. Null for the top-left alignment (offset 0), whose
/// predicate needs no offset.
Value buildCausalOffset(OpBuilder &builder, Location loc,
                        bool causalBottomRight, OpFoldResult numQueries,
                        OpFoldResult numKeys);

/// Whether `key` is visible to `query` (both index values): key <= query, or
/// key <= query + `offset` when `offset` (from `buildCausalOffset`) is not
/// null. Every lowering of the causal rule builds it here, so that the
/// decomposed and the fused paths cannot disagree on the diagonal.
Value buildCausalPredicate(OpBuilder &builder, Location loc, Value key,
                           Value query, Value offset);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_LOWERING_LOWERTOLINALG_H
