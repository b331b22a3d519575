//===- VariantChecks.h - The verifier rules of the attention variants -*- C++
//-*-===//
//
// The rules on the score steps (bias, ALiBi, sinks, window, softcap) and on
// the rotary embedding and QK-norm options, which mha.attention, mha.sdpa
// and mha.attention_weights share with mha.rope and mha.rms_norm.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_DIALECTS_VARIANTCHECKS_H
#define MHA_DIALECTS_VARIANTCHECKS_H

#include "dialects/MhaOps.h"
#include "dialects/ShapeChecker.h"

namespace mlir {
namespace mha {

/// The score steps of an attention of `heads` query heads, `queries`
/// queries and `keys` keys per sequence of a batch of `batch`: the bias
/// `[B or 1, H or 1, T or 1, S]` (a `?` is the full size, a broadcast is a
/// static 1), slopes and sinks `[H]`, a window only with `causal`, a
/// positive finite softcap.
LogicalResult verifyScoreSteps(Operation *op, ShapeChecker &check,
                               const ScoreSteps &steps, bool causal,
                               int64_t batch, int64_t heads, int64_t queries,
                               int64_t keys);

/// The rotary embedding's numbers: `layout` half or interleaved, an even
/// `rotaryDim` of at most `headDim`, `invFreq` (if any) of `rotaryDim / 2`,
/// a positive finite base and scale, a finite mscale.
LogicalResult verifyRope(Operation *op, ShapeChecker &check, StringRef layout,
                         int64_t rotaryDim, int64_t headDim, Value invFreq,
                         double base, double scale, double mscale);

/// A finite, non-negative RMSNorm epsilon.
LogicalResult verifyNormEpsilon(Operation *op, double eps);

} // namespace mha
} // namespace mlir

#endif // MHA_DIALECTS_VARIANTCHECKS_H
