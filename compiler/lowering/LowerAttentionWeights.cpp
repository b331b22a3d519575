//===- LowerAttentionWeights.cpp - mha.attention_weights to linalg --------===//
//
// The weights are built by the very code that lowers `mha.sdpa`'s softmax
// (buildAttentionProbabilities), so the maps that `mha-run --dump-attention`
// draws are those the decomposed layer multiplies its values by: same
// scaling, same mask and causal rule, same zeros for rows that attend no key.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/lowering/LowerToLinalg.h"
#include "dialects/MhaOps.h"

#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::mha;

namespace {
struct LowerAttentionWeights : OpConversionPattern<AttentionWeightsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AttentionWeightsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getType().getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "only f32 is lowered");
    Value probabilities = buildAttentionProbabilities(
        rewriter, op.getLoc(), adaptor.getQuery(), adaptor.getKey(),
        adaptor.getMask(), adaptor.getPositions(), op.getCausal(),
        op.getCausalBottomRight(), op.getEffectiveScale(),
        ScoreSteps{adaptor.getAttnBias(), adaptor.getAlibiSlopes(),
                   adaptor.getSinks(), op.getWindowAttr(), op.getSoftcapAttr(),
                   ScoreSteps::of(op).scoreMod});
    // The declared type may know sizes that the operands leave open.
    rewriter.replaceOp(op, GenericBuilder(rewriter, op.getLoc())
                               .castTo(probabilities, op.getType()));
    return success();
  }
};
} // namespace

void mlir::mha::populateAttentionWeightsToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerAttentionWeights>(patterns.getContext());
}
