//===- MhaCanonicalize.cpp - Folders and canonicalization patterns --------===//
//
// Splitting and concatenating heads only move data, so a split that undoes a
// concat (or the reverse) is the identity, and an output projection can read
// the heads directly instead of a concatenated copy.
//
//===----------------------------------------------------------------------===//

#include "dialects/MhaOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::mha;

/// split_heads(concat_heads(x)) -> x, when the head counts match.
OpFoldResult SplitHeadsOp::fold(FoldAdaptor) {
  auto concat = getInput().getDefiningOp<ConcatHeadsOp>();
  if (!concat || concat.getInput().getType() != getType())
    return {};
  return concat.getInput();
}

/// concat_heads(split_heads(x)) -> x.
OpFoldResult ConcatHeadsOp::fold(FoldAdaptor) {
  auto split = getInput().getDefiningOp<SplitHeadsOp>();
  if (!split || split.getInput().getType() != getType())
    return {};
  return split.getInput();
}

namespace {
/// output_project(concat_heads(x)) -> output_project(x): the contraction runs
/// over heads and value dimension at once, and no concatenated copy is made.
struct OutputProjectOfConcatHeads : OpRewritePattern<OutputProjectOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(OutputProjectOp op,
                                PatternRewriter &rewriter) const override {
    auto concat = op.getInput().getDefiningOp<ConcatHeadsOp>();
    if (!concat)
      return rewriter.notifyMatchFailure(op, "input is not mha.concat_heads");
    rewriter.modifyOpInPlace(
        op, [&] { op.getInputMutable().assign(concat.getInput()); });
    return success();
  }
};
} // namespace

void OutputProjectOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                  MLIRContext *context) {
  patterns.add<OutputProjectOfConcatHeads>(context);
}
