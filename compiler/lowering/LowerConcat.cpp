//===- LowerConcat.cpp - tensor.concat as linalg.copy into slices ---------===//
//
// The packed weights of `mha-fuse-projections` are a `tensor.concat`. Its own
// bufferization copies each operand with `memref.copy` into a strided view of
// the result, and such a copy lowers to a call of `memrefCopy` from MLIR's
// runner library, which neither the JIT nor a compiled library links. As a
// `linalg.copy` into a slice of the result, each operand is written in place
// by the loops every linalg op becomes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace {
struct ConcatToLinalgCopies : OpConversionPattern<tensor::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tensor::ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ReifiedRankedShapedTypeDims shapes;
    if (failed(reifyResultShapes(rewriter, op, shapes)))
      return rewriter.notifyMatchFailure(op, "cannot compute the result size");
    int64_t dim = op.getDim();
    RankedTensorType type = op.getResultType();
    int64_t rank = type.getRank();
    Value result = tensor::EmptyOp::create(rewriter, loc, shapes.front(),
                                           type.getElementType());
    OpFoldResult offset = rewriter.getIndexAttr(0);
    for (Value input : adaptor.getInputs()) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      SmallVector<OpFoldResult> inputSizes =
          tensor::getMixedSizes(rewriter, loc, input);
      offsets[dim] = offset;
      Value slice = tensor::ExtractSliceOp::create(
          rewriter, loc, result, offsets, inputSizes, strides);
      Value copied =
          linalg::CopyOp::create(rewriter, loc, input, slice).getResult(0);
      result = tensor::InsertSliceOp::create(rewriter, loc, copied, result,
                                             offsets, inputSizes, strides);
      offset = add(rewriter, loc, offset, inputSizes[dim]);
    }
    if (result.getType() != type)
      result = tensor::CastOp::create(rewriter, loc, type, result);
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  /// `lhs + rhs`, folded when both are constants.
  static OpFoldResult add(OpBuilder &b, Location loc, OpFoldResult lhs,
                          OpFoldResult rhs) {
    std::optional<int64_t> l = getConstantIntValue(lhs);
    std::optional<int64_t> r = getConstantIntValue(rhs);
    if (l && r)
      return b.getIndexAttr(*l + *r);
    return arith::AddIOp::create(b, loc,
                                 getValueOrCreateConstantIndexOp(b, loc, lhs),
                                 getValueOrCreateConstantIndexOp(b, loc, rhs))
        .getResult();
  }
};
} // namespace

void mlir::mha::populateConcatToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ConcatToLinalgCopies>(patterns.getContext());
}
