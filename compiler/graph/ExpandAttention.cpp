//===- ExpandAttention.cpp - mha.attention to its five steps --------------===//

#include "compiler/Passes.h"
#include "dialects/MhaOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAEXPAND
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
struct ExpandAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // Q, K or V of every head as [B, heads, len, d]. Split first cuts the
    // input into head slices that each head projects with its own matrix;
    // otherwise one wide projection is cut into heads afterwards.
    // In self-attention Q, K and V read the same slices: split them once.
    llvm::SmallDenseMap<std::pair<Value, int64_t>, Value> slicesOf;
    auto projectHeads = [&](Value input, Value weight, Value bias,
                            int64_t heads) -> Value {
      if (op.isSplitFirst()) {
        Value &slices = slicesOf[{input, heads}];
        if (!slices)
          slices = SplitHeadsOp::create(rewriter, loc, input, heads);
        return ProjectOp::create(rewriter, loc, slices, weight, bias);
      }
      Value projected = ProjectOp::create(rewriter, loc, input, weight, bias);
      return SplitHeadsOp::create(rewriter, loc, projected, heads);
    };
    int64_t numHeads = op.getNumHeads();
    int64_t numKvHeads = op.getEffectiveNumKvHeads();
    Value source = op.getKeyValueSource();
    Value query = projectHeads(op.getQuery(), op.getWQ(), op.getBQ(), numHeads);
    Value key = projectHeads(source, op.getWK(), op.getBK(), numKvHeads);
    Value value = projectHeads(source, op.getWV(), op.getBV(), numKvHeads);
    Value heads = SdpaOp::create(rewriter, loc, query, key, value, op.getMask(),
                                 op.getCausal(), op.getCausalBottomRight(),
                                 op.getScaleAttr());
    Value concat = ConcatHeadsOp::create(rewriter, loc, heads);
    rewriter.replaceOpWithNewOp<OutputProjectOp>(op, op.getType(), concat,
                                                 op.getWO(), op.getBO());
    return success();
  }
};

struct MhaExpandPass : mha::impl::MhaExpandBase<MhaExpandPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateExpandAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::mha::populateExpandAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpandAttention>(patterns.getContext());
}
