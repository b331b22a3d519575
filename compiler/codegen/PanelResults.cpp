//===- PanelResults.cpp - Projection results in panels, without serial passes
//===//
//
// See PanelResults.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/PanelResults.h"

#include "dialects/MhaDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace {
/// Whether `value` is the accumulator (the DPS init) of a marked
/// projection.
bool isProjectionInit(Value value) {
  return llvm::any_of(value.getUses(), [](OpOperand &use) {
    auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
    return op &&
           op->hasAttr(mha::MhaDialect::ProjectionAttrHelper::getNameStr()) &&
           op.isDpsInit(&use);
  });
}

/// The generic that upstream's fold by expansion makes of the bias
/// broadcast, named a broadcast again: what mha-tile-projections fuses.
struct BiasBroadcastInPanels : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp generic,
                                PatternRewriter &rewriter) const override {
    if (!generic->hasOneUse() || !isProjectionInit(generic->getResult(0)) ||
        !linalg::isaBroadcastOpInterface(generic))
      return rewriter.notifyMatchFailure(generic, "not a projection's bias");
    return success(succeeded(linalg::specializeGenericOp(rewriter, generic)));
  }
};

/// Whether upstream's fold by expansion may take `operand`: the source of
/// an expand_shape that is a projection's accumulator, made by a broadcast
/// that nothing else reads but for its sizes (a `?` result's tensor.dim,
/// which folds to the sizes of the broadcast's init).
bool isBiasInPanels(OpOperand *operand) {
  auto expand = dyn_cast<tensor::ExpandShapeOp>(operand->getOwner());
  if (!expand ||
      !isa_and_present<linalg::BroadcastOp>(operand->get().getDefiningOp()))
    return false;
  auto otherUse = [&](Operation *user) {
    return user != expand && !isa<tensor::DimOp>(user);
  };
  return llvm::none_of(operand->get().getUsers(), otherUse) &&
         isProjectionInit(expand.getResult());
}

/// `insert_slice (collapse_shape %x) into %dest` as `collapse_shape
/// (insert_slice %x into (expand_shape %dest))` (PanelResults.h).
struct InsertBeforeCollapse : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::InsertSliceOp insert,
                                PatternRewriter &rewriter) const override {
    auto collapse = insert.getSource().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || !collapse->hasOneUse() ||
        insert.getSourceType().getRank() != insert.getDestType().getRank() ||
        !llvm::all_of(insert.getMixedStrides(), isOneInteger))
      return rewriter.notifyMatchFailure(insert, "not a collapsed result");
    RankedTensorType expandedType = collapse.getSrcType();
    RankedTensorType destType = insert.getDestType();
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    SmallVector<OpFoldResult> offsets, sizes;
    // A merged dimension must be inserted whole, and its parts static.
    for (auto [dim, group] : llvm::enumerate(groups)) {
      if (group.size() == 1) {
        offsets.push_back(insert.getMixedOffsets()[dim]);
        sizes.push_back(insert.getMixedSizes()[dim]);
        continue;
      }
      std::optional<int64_t> size =
          getConstantIntValue(insert.getMixedSizes()[dim]);
      if (!isZeroInteger(insert.getMixedOffsets()[dim]) ||
          destType.isDynamicDim(dim) || !size ||
          *size != destType.getDimSize(dim) ||
          llvm::any_of(group, [&](int64_t part) {
            return expandedType.isDynamicDim(part);
          }))
        return rewriter.notifyMatchFailure(insert, "a merged part is cut");
      for (int64_t part : group) {
        offsets.push_back(rewriter.getIndexAttr(0));
        sizes.push_back(rewriter.getIndexAttr(expandedType.getDimSize(part)));
      }
    }
    // The destination in the source's panels, as early as it exists: the
    // source's tensor.empty, before it, is then replaced by a slice of it.
    Value dest = insert.getDest();
    OpBuilder::InsertionGuard guard(rewriter);
    if (auto argument = dyn_cast<BlockArgument>(dest))
      rewriter.setInsertionPointToStart(argument.getOwner());
    else
      rewriter.setInsertionPointAfterValue(dest);
    Location loc = insert.getLoc();
    SmallVector<OpFoldResult> destSizes =
        tensor::getMixedSizes(rewriter, loc, dest);
    SmallVector<OpFoldResult> expandedSizes;
    for (auto [dim, group] : llvm::enumerate(groups)) {
      if (group.size() == 1) {
        expandedSizes.push_back(destSizes[dim]);
        continue;
      }
      for (int64_t part : group)
        expandedSizes.push_back(
            rewriter.getIndexAttr(expandedType.getDimSize(part)));
    }
    auto [staticSizes, dynamicSizes] = decomposeMixedValues(expandedSizes);
    auto panelType =
        RankedTensorType::get(staticSizes, destType.getElementType());
    Value panels = tensor::ExpandShapeOp::create(rewriter, loc, panelType, dest,
                                                 groups, expandedSizes);
    rewriter.setInsertionPoint(insert);
    SmallVector<OpFoldResult> strides(offsets.size(), rewriter.getIndexAttr(1));
    Value inserted = tensor::InsertSliceOp::create(
        rewriter, loc, collapse.getSrc(), panels, offsets, sizes, strides);
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(insert, destType,
                                                         inserted, groups);
    return success();
  }
};
/// The panels of a tensor.empty: a tensor.empty in panels, whose sizes are
/// the expand_shape's. The expansion above makes the bias broadcast's init
/// an expand_shape of its tensor.empty; eliminate-empty-tensors, which
/// follows same-typed values only, needs the tensor.empty itself.
/// (Upstream's populateFoldTensorEmptyPatterns left this one as it was.)
struct EmptyInPanels : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    if (!expand.getSrc().getDefiningOp<tensor::EmptyOp>())
      return rewriter.notifyMatchFailure(expand, "not of a tensor.empty");
    rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
        expand, expand.getMixedOutputShape(),
        expand.getResultType().getElementType());
    return success();
  }
};
} // namespace

void mlir::mha::populatePanelResultPatterns(RewritePatternSet &patterns) {
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, isBiasInPanels);
  patterns.add<BiasBroadcastInPanels, InsertBeforeCollapse, EmptyInPanels>(
      patterns.getContext());
  tensor::DimOp::getCanonicalizationPatterns(patterns, patterns.getContext());
}
