//===- VectorCleanup.cpp - mha-vectorize's vector ops simplified ----------===//

#include "compiler/codegen/VectorCleanup.h"
#include "compiler/codegen/UnmaskContractions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::mha;

namespace {
/// The value that leaves a reduction of `kind` unchanged, or null.
TypedAttr reductionIdentity(vector::CombiningKind kind, FloatType type) {
  const llvm::fltSemantics &semantics = type.getFloatSemantics();
  switch (kind) {
  case vector::CombiningKind::ADD:
    return FloatAttr::get(type, 0.0);
  case vector::CombiningKind::MUL:
    return FloatAttr::get(type, 1.0);
  case vector::CombiningKind::MAXIMUMF:
  case vector::CombiningKind::MAXNUMF:
    return FloatAttr::get(type, APFloat::getInf(semantics, /*Negative=*/true));
  case vector::CombiningKind::MINIMUMF:
  case vector::CombiningKind::MINNUMF:
    return FloatAttr::get(type, APFloat::getInf(semantics));
  default:
    return {};
  }
}

/// `vector.mask %m { vector.multi_reduction <kind> %x, %acc }` of a peeled
/// block, as the unmasked reduction of `select(%m, %x, identity)`. Masked
/// lanes hold the padding of their masked read, which the reduction must not
/// see (a 0 in the row maximum of scores near -1000 makes every exp 0). Our
/// pipeline let such lanes through the masked form
/// (test/numerics/large-logits.test, query tile 32 at T = 70), and its
/// lowering is unrolled lane by lane; a select per vector is exact and keeps
/// the plain reduction's lowering.
struct MaskedReductionAsSelect : OpRewritePattern<vector::MaskOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MaskOp mask,
                                PatternRewriter &rewriter) const override {
    auto reduction =
        dyn_cast_or_null<vector::MultiDimReductionOp>(mask.getMaskableOp());
    if (!reduction || mask.hasPassthru())
      return rewriter.notifyMatchFailure(mask, "not a masked reduction");
    auto sourceType = cast<VectorType>(reduction.getSource().getType());
    auto elementType = dyn_cast<FloatType>(sourceType.getElementType());
    TypedAttr identity =
        elementType ? reductionIdentity(reduction.getKind(), elementType)
                    : TypedAttr();
    if (!identity ||
        mask.getMask().getType() != sourceType.clone(rewriter.getI1Type()))
      return rewriter.notifyMatchFailure(mask, "no identity to mask with");
    Location loc = reduction.getLoc();
    Value neutral =
        arith::ConstantOp::create(rewriter, loc, sourceType,
                                  DenseElementsAttr::get(sourceType, identity));
    Value kept = arith::SelectOp::create(rewriter, loc, mask.getMask(),
                                         reduction.getSource(), neutral);
    rewriter.replaceOpWithNewOp<vector::MultiDimReductionOp>(
        mask, kept, reduction.getAcc(), reduction.getReductionMask(),
        reduction.getKind());
    return success();
  }
};
} // namespace

void mlir::mha::populateMaskedReductionAsSelectPatterns(
    RewritePatternSet &patterns) {
  patterns.add<MaskedReductionAsSelect>(patterns.getContext());
}

LogicalResult mlir::mha::simplifyVectorOps(func::FuncOp func) {
  MLIRContext *context = func.getContext();
  RewritePatternSet patterns(context);
  tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
  vector::populateVectorReductionToContractPatterns(patterns);
  vector::populateSinkVectorOpsPatterns(patterns);
  vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
  // Masked reads and writes of peeled blocks become transfers that take
  // the mask as an operand, which bufferize like any other transfer.
  vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
  populateMaskedReductionAsSelectPatterns(patterns);
  if (failed(applyPatternsGreedily(func, std::move(patterns))))
    return failure();
  // Then, on the uses in their final form, the FMAs of a peeled block's
  // contraction without the mask whose lanes only its masked write would
  // have read.
  RewritePatternSet unmask(context);
  populateUnmaskContractionPatterns(unmask);
  return applyPatternsGreedily(func, std::move(unmask));
}
