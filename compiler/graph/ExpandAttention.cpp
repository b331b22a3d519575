//===- ExpandAttention.cpp - mha.attention to its five steps --------------===//

#include "compiler/Passes.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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
    // A bf16 layer computes in f32 from its bf16 inputs, weights and
    // biases: they are widened (exactly) here and the five steps are f32,
    // with Q, K, V and the heads' output unrounded. (Rounding Q and the
    // heads' output to bf16 as well breaks the accuracy target of
    // test/bf16 on some reference cases.) Widened once per value: x is
    // both the queries' and the keys' input in self-attention.
    llvm::SmallDenseMap<Value, Value> widened;
    auto operand = [&](Value value) -> Value {
      auto type = value ? dyn_cast<RankedTensorType>(value.getType())
                        : RankedTensorType();
      if (!type || !type.getElementType().isBF16())
        return value;
      Value &wide = widened[value];
      if (!wide)
        wide = arith::ExtFOp::create(rewriter, loc,
                                     type.clone(rewriter.getF32Type()), value);
      return wide;
    };
    // All of them before the first projection, which mha-fuse-projections
    // packs with the others: their weights must exist there.
    for (Value value : op->getOperands())
      operand(value);
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
    Value source = operand(op.getKeyValueSource());
    Value query = projectHeads(operand(op.getQuery()), operand(op.getWQ()),
                               operand(op.getBQ()), numHeads);
    Value key = projectHeads(source, operand(op.getWK()), operand(op.getBK()),
                             numKvHeads);
    Value value = projectHeads(source, operand(op.getWV()), operand(op.getBV()),
                               numKvHeads);
    // Each head's Q and K normalized, then rotated by its position, as the
    // models do: QK-norm before the rotary embedding.
    if (Value qNorm = op.getQNorm()) {
      FloatAttr eps = op.getQkNormEpsAttr() ? op.getQkNormEpsAttr()
                                            : rewriter.getF64FloatAttr(1e-6);
      query = RmsNormOp::create(rewriter, loc, query.getType(), query,
                                operand(qNorm), eps);
      key = RmsNormOp::create(rewriter, loc, key.getType(), key,
                              operand(op.getKNorm()), eps);
    }
    if (std::optional<StringRef> layout = op.getRope()) {
      int64_t headDim = cast<RankedTensorType>(query.getType()).getDimSize(3);
      auto f64 = [&](FloatAttr attr, double byDefault) {
        return attr ? attr : rewriter.getF64FloatAttr(byDefault);
      };
      auto rope = [&](Value input) -> Value {
        return RopeOp::create(
            rewriter, loc, input.getType(), input, /*offsets=*/Value(),
            operand(op.getRopeInvFreq()), rewriter.getStringAttr(*layout),
            rewriter.getI64IntegerAttr(op.getEffectiveRotaryDim(headDim)),
            f64(op.getRopeBaseAttr(), 10000.0), f64(op.getRopeScaleAttr(), 1.0),
            f64(op.getRopeMscaleAttr(), 1.0));
      };
      query = rope(query);
      key = rope(key);
    }
    Value heads = SdpaOp::create(rewriter, loc, query, key, value, op.getMask(),
                                 op.getCausal(), op.getCausalBottomRight(),
                                 op.getScaleAttr(), /*positions=*/Value(),
                                 ScoreSteps::of(op));
    // Attention of bf16 operands may compute its products on bf16 parts of
    // the f32 Q, K and V (mha-tile-attention's amx-scores).
    if (!widened.empty())
      MhaDialect::Bf16LayerAttrHelper(rewriter.getContext())
          .setAttr(heads.getDefiningOp(), rewriter.getUnitAttr());
    Value concat = ConcatHeadsOp::create(rewriter, loc, heads);
    RankedTensorType type = op.getType();
    if (widened.empty()) {
      rewriter.replaceOpWithNewOp<OutputProjectOp>(op, type, concat, op.getWO(),
                                                   op.getBO());
      return success();
    }
    // The output in f32, rounded once where the layer returns bf16.
    Value y = OutputProjectOp::create(rewriter, loc,
                                      type.clone(rewriter.getF32Type()), concat,
                                      operand(op.getWO()), operand(op.getBO()));
    if (type.getElementType().isBF16())
      y = arith::TruncFOp::create(rewriter, loc, type, y);
    rewriter.replaceOp(op, y);
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
