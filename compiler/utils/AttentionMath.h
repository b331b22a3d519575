//===- AttentionMath.h - The arithmetic of attention, once ------*- C++ -*-===//
//
// Every lowering of attention builds its arithmetic here: the decomposed
// path (`mha-lower-to-linalg`), the fused path (`mha-tile-attention`'s
// online softmax and key-split merge) and `mha.attention_weights`. The
// sizes of an `mha.sdpa`, the key/value head that a query head reads (GQA),
// the mask's batch broadcast, the causal diagonal (with KV-cache positions),
// and the scalar bodies of the softmax steps, so that the paths cannot
// disagree on any of them. The loops around the bodies (whole rows, or one
// block of keys at a time) are each path's own.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_UTILS_ATTENTIONMATH_H
#define MHA_COMPILER_UTILS_ATTENTIONMATH_H

#include "mlir/IR/Builders.h"

namespace mlir {
namespace mha {

//===----------------------------------------------------------------------===//
// Sizes and indexing
//===----------------------------------------------------------------------===//

/// The first static size among the (value, dimension) candidates, which the
/// verifier makes agree; else the run-time size of the first one
/// (`tensor.dim` at the builder's insertion point).
OpFoldResult getKnownSize(OpBuilder &builder, Location loc,
                          ArrayRef<std::pair<Value, int64_t>> candidates);

/// B, T and S of attention of `query [B, H, T, dk]` against
/// `key [B, Hkv, S, dk]` (`value [B, Hkv, S, dv]` and `mask [B or 1, T, S]`
/// may be null): static where any operand knows them.
struct AttentionSizes {
  OpFoldResult batch, queries, keys;

  static AttentionSizes get(OpBuilder &builder, Location loc, Value query,
                            Value key, Value value, Value mask);
};

/// The key/value head that query head `head` reads: head floordiv (H / Hkv).
/// Grouped-query heads share their keys and values through this map (an
/// indexing map or a slice offset), never through copies.
AffineExpr getKeyValueHead(AffineExpr head, int64_t heads, int64_t kvHeads);

/// Whether the batch of `mask`, known only at run time, is 1 (broadcast
/// over the batch): an i1 at the builder's insertion point. Null when the
/// mask's type says it (or there is no mask).
Value buildMaskBroadcasts(OpBuilder &builder, Location loc, Value mask);

/// The row of `mask` that batch element `batchIndex` reads: 0 when the mask
/// broadcasts (statically, or `broadcasts` from `buildMaskBroadcasts` at run
/// time), else `batchIndex`.
OpFoldResult getMaskBatchRow(OpBuilder &builder, Location loc, Value mask,
                             Value broadcasts, OpFoldResult batchIndex);

//===----------------------------------------------------------------------===//
// Which keys a query may attend
//===----------------------------------------------------------------------===//

/// The offset of the causal diagonal (key j is visible to query i when
/// j <= i + offset): S - T for the bottom-right alignment, folded to a
/// constant when T and S are static, else an `arith.subi` at the builder's
/// insertion point. Null for the top-left alignment (offset 0), whose
/// predicate needs no offset.
Value buildCausalOffset(OpBuilder &builder, Location loc,
                        bool causalBottomRight, OpFoldResult numQueries,
                        OpFoldResult numKeys);

/// Whether `key` is visible to `query` (both index values): key <= query, or
/// key <= query + `offset` when `offset` (from `buildCausalOffset`, or a
/// sequence's KV-cache position) is not null. Every lowering of the causal
/// rule builds it here, so that the decomposed and the fused paths cannot
/// disagree on the diagonal.
Value buildCausalPredicate(OpBuilder &builder, Location loc, Value key,
                           Value query, Value offset);

/// Whether `key` is inside the sliding window of `window` keys (an index
/// value) that ends at the query's position `position` (its index plus the
/// causal offset, or its KV-cache position): position - window < key, the
/// query's own key included. Compared signed, since the position is
/// negative for the first queries of a bottom-right causal attention with
/// fewer keys than queries.
Value buildWindowPredicate(OpBuilder &builder, Location loc, Value key,
                           Value position, Value window);

/// Whether a key may be attended: the mask element `maskElement` (i1, or
/// null without a mask) and, when `key` and `query` are given (causal
/// attention), `buildCausalPredicate(key, query, causalOffset)` and, with
/// `window` (an index value, or null), `buildWindowPredicate` at the
/// query's position query + causalOffset. Null when every key is allowed.
Value buildAllowed(OpBuilder &builder, Location loc, Value maskElement,
                   Value key, Value query, Value causalOffset,
                   Value window = {});

//===----------------------------------------------------------------------===//
// The score steps (mha.sdpa's softcap, ALiBi and bias)
//===----------------------------------------------------------------------===//

/// The query's position p_i that ALiBi's distance and the window measure
/// from: `query` (an index value) plus `causalOffset` (S - T bottom-right,
/// the sequence's KV-cache position), or `query` alone where that is null.
Value buildQueryPosition(OpBuilder &builder, Location loc, Value query,
                         Value causalOffset);

/// The score steps of mha.sdpa (dialects/MhaAttentionOps.td) on one raw score
/// `score` = q·k, in the ops' order: s·`scale` (an f32 value; none where
/// null, the score already scaled); with
/// `softcap` (f32 c, or null) c·tanh(s / c); with `slope` (f32, or null)
/// + slope·(key - position) (`key` and `position` index values, the
/// distance exact in f32 up to 2^24 keys); with `bias` (f32, or null)
/// + bias. The scale comes first because the steps are defined on scaled
/// scores: the softmax then takes the result with a scale of 1
/// (SoftmaxConstants::create with 1), not the raw scores' late scale.
Value buildScoreSteps(OpBuilder &builder, Location loc, Value score,
                      Value scale, Value softcap, Value slope, Value bias,
                      Value key, Value position);

/// The value that a `score_mod` region (dialects/ScoreModRegion.cpp)
/// yields for `arguments`, its block's arguments (null for one the region
/// does not use): its ops cloned at the builder's insertion point. Every path
/// that applies the region (the fused key blocks, the decomposed score matrix,
/// the attention maps) inlines it here.
Value buildScoreMod(OpBuilder &builder, Region &region, ValueRange arguments);

/// Adds `offset` (an index value defined above `op`) to argument `argument`
/// of `op`'s `score_mod` region, where it has one: the batch element or head
/// of a rewrite that gives `op` a slice of its sequences or heads, so that
/// the region still receives the whole op's.
void offsetScoreModArgument(OpBuilder &builder, Operation *op,
                            unsigned argument, Value offset);

//===----------------------------------------------------------------------===//
// The softmax steps (scalar bodies of linalg.generic ops)
//===----------------------------------------------------------------------===//

/// The softmax's exponentials are powers of 2: e^((s - m)·scale) =
/// 2^((s - m)·scale·log2(e)), so the scale takes log2(e) along
/// (getLog2Scale). The row maxima are those of the raw scores, and each
/// exponent is the difference of two raw scores times that scale: the
/// difference first, so that the row's largest score gets exactly 2^0 and
/// its neighbours their exact distance at any magnitude. (An FMA of
/// s·scale - m·scale would save an operation, but m·scale is rounded: the
/// error, up to half an ulp of m·scale, is 2^256 at scores of 1e10 and
/// turns the whole row into 0 or inf.)
double getLog2Scale(double scale);

/// The f32 constants that the softmax steps read, built once at the
/// builder's insertion point (outside the generic ops that use them).
/// `log2Scale` is getLog2Scale of the attention's scale.
struct SoftmaxConstants {
  Value log2Scale, zero, one, minusInfinity;

  static SoftmaxConstants create(OpBuilder &builder, Location loc,
                                 double scale);
};

/// acc + lhs·rhs: the body of both contractions, Q·Kᵀ and P·V.
Value buildMultiplyAdd(OpBuilder &builder, Location loc, Value lhs, Value rhs,
                       Value acc);

/// acc + hi(q)·hi(k) + lo(q)·hi(k) + hi(q)·lo(k), with `q` f32 and `kHi`,
/// `kLo` widened bf16: the products AMX computes for Q·Kᵀ with both split
/// in hi + lo (all but lo·lo).
Value buildSplitMultiplyAdd(OpBuilder &builder, Location loc, Value q,
                            Value kHi, Value kLo, Value acc);

/// Builds whether the key of the current iteration may be attended (an i1,
/// or null for every key), after the arithmetic that does not depend on it.
using AllowedBuilder = function_ref<Value()>;

/// max(runningMax, allowed ? score : -inf): the row maximum of the scores
/// before scaling; the scale is positive (the ops' verifiers), so the
/// largest score is also the largest scaled one. A key that is not allowed
/// counts as -inf,
/// so the body stays a plain max-reduction that the vectorizer recognizes.
/// The max is `arith.maxnumf`, the one of the attention math:
/// mha-no-nan-row-max lets LLVM reduce it without NaN checks
/// (compiler/workarounds/NoNaNRowMax.cpp says why no result changes).
Value buildMaskedMax(OpBuilder &builder, Location loc,
                     const SoftmaxConstants &constants, Value score,
                     AllowedBuilder allowed, Value runningMax);

/// allowed ? exp2((score - max)·log2Scale) : 0 (e^((score - max)·scale)
/// with `max` the row's largest raw score): exactly 0 for a key that is not
/// allowed, also where the row's max is -inf (no NaN from -inf - -inf).
Value buildMaskedExp(OpBuilder &builder, Location loc,
                     const SoftmaxConstants &constants, Value score, Value max,
                     AllowedBuilder allowed);

/// The online softmax's correction of what was summed under `oldMax` when
/// the maximum grows by `blockMax`: with m_new = max(oldMax, blockMax),
/// oldMax == m_new ? 1 : exp2((oldMax - m_new)·log2Scale) (raw maxima),
/// guarded because a row that has seen no allowed key yet has
/// oldMax = m_new = -inf.
Value buildCorrection(OpBuilder &builder, Location loc,
                      const SoftmaxConstants &constants, Value oldMax,
                      Value blockMax);

/// The weight of a partial softmax with maximum `max` in a merge whose
/// maximum is `maxAll`: max == -inf ? 0 : exp2((max - maxAll)·log2Scale)
/// (raw maxima). A part that saw no allowed key weighs nothing, also where
/// maxAll is -inf too.
Value buildPartWeight(OpBuilder &builder, Location loc,
                      const SoftmaxConstants &constants, Value max,
                      Value maxAll);

/// max == -inf ? 0 : max, the maximum that the exponentials of the score
/// steps' path subtract: a bias may make every allowed score of a row -inf,
/// and exp2(-inf - -inf) would be NaN where each weight must be 0 (and a
/// sink's weight e^(sink)). The plain path needs no such guard: its scores
/// are finite wherever a key is allowed.
Value buildFiniteMax(OpBuilder &builder, Location loc,
                     const SoftmaxConstants &constants, Value max);

/// sum == 0 ? 0 : acc / sum: a row that attended no key gives exactly 0.
Value buildNormalized(OpBuilder &builder, Location loc,
                      const SoftmaxConstants &constants, Value sum, Value acc);

/// sum > 0 ? 1 / sum : 0, for rows that are then multiplied (the decomposed
/// path divides the dv outputs of a row, not its S weights).
Value buildReciprocalOrZero(OpBuilder &builder, Location loc,
                            const SoftmaxConstants &constants, Value sum);

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_UTILS_ATTENTIONMATH_H
