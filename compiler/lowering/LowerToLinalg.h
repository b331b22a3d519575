//===- LowerToLinalg.h - What the lowerings to linalg share -----*- C++ -*-===//
//
// The pieces of `mha-lower-to-linalg` that its patterns share across files
// (LowerToLinalg.cpp: the projections, heads and caches; LowerSdpa.cpp:
// attention; LowerAttentionWeights.cpp: the attention maps;
// LowerRopeAndNorm.cpp, LowerQuantizedCache.cpp, LowerPagedCache.cpp): the
// base of the patterns, which lowers f32 only and builds with
// GenericBuilder, and what an op that needs the same arithmetic as
// `mha.sdpa` calls to build it the same way instead of repeating it.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_LOWERING_LOWERTOLINALG_H
#define MHA_COMPILER_LOWERING_LOWERTOLINALG_H

#include "compiler/utils/GenericBuilder.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace mha {
struct ScoreSteps;

/// The first element type among `op`'s operands and results that is a float
/// other than f32, or null when everything is f32 (masks are i1).
Type findNonF32ElementType(Operation *op);

/// Base of the patterns: refuses element types other than f32, which the
/// lowering does not handle yet (the pass reports them first).
template <typename OpTy> struct F32Pattern : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    if (findNonF32ElementType(op))
      return rewriter.notifyMatchFailure(op, "only f32 is lowered");
    GenericBuilder builder(rewriter, op.getLoc());
    Value result = lower(op, adaptor, builder);
    rewriter.replaceOp(op, builder.castTo(result, op.getType()));
    return success();
  }

  /// Builds the replacement of `op`.
  virtual Value lower(OpTy op, OpAdaptor adaptor, GenericBuilder &b) const = 0;
};

/// The lowering of `mha.sdpa` (LowerSdpa.cpp).
void populateSdpaToLinalgPatterns(RewritePatternSet &patterns);

/// The lowering of `mha.rms_norm` and `mha.rope` (LowerRopeAndNorm.cpp).
void populateRopeAndNormToLinalgPatterns(RewritePatternSet &patterns);

/// The lowering of `mha.cache_append_quantized` and `mha.dequantize`
/// (LowerQuantizedCache.cpp).
void populateQuantizedCacheToLinalgPatterns(RewritePatternSet &patterns);

/// The lowering of `mha.paged_cache_append` and `mha.paged_view`
/// (LowerPagedCache.cpp).
void populatePagedCacheToLinalgPatterns(RewritePatternSet &patterns);

/// An `scf.for` over the sequences that writes each one's new rows of
/// `updates` ([B, Hkv, T, ...]) into the matching `caches` ([B, Hkv, C,
/// ...]) at row `lengths[b]` (`linalg.copy` into the slice, written back in
/// place), carrying the caches; a sequence whose rows do not fit (length <
/// 0 or length + T > C, with T and C those of the first pair) is skipped,
/// so that a wrong length never writes outside a cache. Returns the caches
/// after the loop. Every cache append lowers to it.
SmallVector<Value> buildCacheAppendLoop(OpBuilder &builder, Location loc,
                                        Value lengths, ValueRange updates,
                                        ValueRange caches);

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
