//===- FoldHeadLayouts.cpp - Fold head splits and concats into projections ===//
//
// Splitting `[B, T, H·d]` into heads `[B, H, T, d]` and concatenating them
// back are transposing copies once lowered. Each is next to a projection
// that can read or write the other layout through its indexing maps at no
// cost, so the copies are folded into those projections.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAFOLDHEADLAYOUTS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// Replaces `op` by `folded`, cast to `op`'s type where `op` knew more static
/// sizes than the folded projection infers from its operands.
void replaceWithProject(PatternRewriter &rewriter, Operation *op,
                        ProjectOp folded) {
  Value result = folded.getResult();
  Type type = op->getResult(0).getType();
  if (result.getType() != type)
    result = tensor::CastOp::create(rewriter, op->getLoc(), type, result);
  rewriter.replaceOp(op, result);
}

/// split_heads(project(x, w, b), H) -> project(x, w, b) heads(H): the
/// projection stores each head's columns where the split would copy them.
struct SplitHeadsOfProject : OpRewritePattern<SplitHeadsOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SplitHeadsOp op,
                                PatternRewriter &rewriter) const override {
    auto project = op.getInput().getDefiningOp<ProjectOp>();
    if (!project || project.writesHeads())
      return rewriter.notifyMatchFailure(op, "input is not a shared projection "
                                             "into [B, T, D_out]");
    // Another user needs the [B, T, D_out] result: folding would compute
    // the projection twice.
    if (!project->hasOneUse())
      return rewriter.notifyMatchFailure(op, "the projection has other users");
    replaceWithProject(rewriter, op,
                       ProjectOp::create(rewriter, project.getLoc(),
                                         project.getInput(),
                                         project.getWeight(), project.getBias(),
                                         op.getNumHeads()));
    return success();
  }
};

/// project(split_heads(x), w) with per-head `w` -> project(x, w): head h
/// reads its columns of `x` in place.
struct PerHeadProjectOfSplitHeads : OpRewritePattern<ProjectOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ProjectOp op,
                                PatternRewriter &rewriter) const override {
    auto split = op.getInput().getDefiningOp<SplitHeadsOp>();
    if (!op.isPerHead() || !split)
      return rewriter.notifyMatchFailure(
          op, "not a per-head projection of mha.split_heads");
    replaceWithProject(rewriter, op,
                       ProjectOp::create(rewriter, op.getLoc(),
                                         split.getInput(), op.getWeight(),
                                         op.getBias(), std::nullopt));
    return success();
  }
};

struct MhaFoldHeadLayoutsPass
    : mha::impl::MhaFoldHeadLayoutsBase<MhaFoldHeadLayoutsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFoldHeadLayoutsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::mha::populateFoldHeadLayoutsPatterns(RewritePatternSet &patterns) {
  patterns.add<SplitHeadsOfProject, PerHeadProjectOfSplitHeads>(
      patterns.getContext());
  // output_project(concat_heads(o)) -> output_project(o) is already a
  // canonicalization; reuse it so this pass does the whole job alone.
  OutputProjectOp::getCanonicalizationPatterns(patterns, patterns.getContext());
}
