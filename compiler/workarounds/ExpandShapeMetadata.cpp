//===- ExpandShapeMetadata.cpp - memref.expand_shape as descriptor math ---===//
//
// LLVM 22's expand-strided-metadata assumes at most one dynamic size per
// reassociation group of a `memref.expand_shape` and crashes otherwise
// (llvm/llvm-project#186830, fixed in LLVM 23). Our projections produce
// exactly that: rows [B·T, D] expanded back to [B, T, D] with B and T
// dynamic. This pattern rewrites such an expand_shape the way the fixed
// upstream pass does, reading every size from `output_shape`.
//
// Retired by: LLVM 23's expand-strided-metadata, once the minimum LLVM is 23.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAEXPANDSHAPEMETADATA
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;

namespace {
/// `lhs * rhs`, folded when both are constants.
OpFoldResult multiply(OpBuilder &b, Location loc, OpFoldResult lhs,
                      OpFoldResult rhs) {
  std::optional<int64_t> l = getConstantIntValue(lhs);
  std::optional<int64_t> r = getConstantIntValue(rhs);
  if (l && r)
    return b.getIndexAttr(*l * *r);
  if (l == 1)
    return rhs;
  if (r == 1)
    return lhs;
  return arith::MulIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, lhs),
                               getValueOrCreateConstantIndexOp(b, loc, rhs))
      .getResult();
}

/// Where `type` knows a size statically, use it: reinterpret_cast requires
/// its static operands to agree with the result type.
OpFoldResult preferStatic(OpBuilder &b, int64_t fromType, OpFoldResult value) {
  return ShapedType::isStatic(fromType) ? b.getIndexAttr(fromType) : value;
}

struct ExpandShapeWithDynamicGroup : OpRewritePattern<memref::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    MemRefType resultType = op.getResultType();
    SmallVector<ReassociationIndices, 4> groups = op.getReassociationIndices();
    bool severalDynamic = llvm::any_of(groups, [&](ReassociationIndices group) {
      return llvm::count_if(group, [&](int64_t dim) {
               return resultType.isDynamicDim(dim);
             }) > 1;
    });
    if (!severalDynamic)
      return rewriter.notifyMatchFailure(
          op, "at most one dynamic size per group: upstream handles it");

    MemRefType sourceType = op.getSrcType();
    SmallVector<int64_t> sourceStrides, resultStrides;
    int64_t sourceOffset, resultOffset;
    if (failed(sourceType.getStridesAndOffset(sourceStrides, sourceOffset)) ||
        failed(resultType.getStridesAndOffset(resultStrides, resultOffset)))
      return rewriter.notifyMatchFailure(op, "not a strided layout");

    Location loc = op.getLoc();
    auto metadata =
        memref::ExtractStridedMetadataOp::create(rewriter, loc, op.getSrc());
    SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
    SmallVector<OpFoldResult> strides(resultType.getRank());
    // Inside a group the last dimension keeps the source stride and each
    // one before it strides over the sizes after it.
    for (auto [sourceDim, group] : llvm::enumerate(groups)) {
      OpFoldResult stride = preferStatic(rewriter, sourceStrides[sourceDim],
                                         metadata.getStrides()[sourceDim]);
      for (int64_t i = group.size() - 1; i >= 0; --i) {
        strides[group[i]] =
            preferStatic(rewriter, resultStrides[group[i]], stride);
        if (i > 0)
          stride = multiply(rewriter, loc, stride, sizes[group[i]]);
      }
    }
    OpFoldResult offset = preferStatic(
        rewriter, resultOffset,
        preferStatic(rewriter, sourceOffset, metadata.getOffset()));
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
        op, resultType, metadata.getBaseBuffer(), offset, sizes, strides);
    return success();
  }
};

struct MhaExpandShapeMetadataPass
    : mha::impl::MhaExpandShapeMetadataBase<MhaExpandShapeMetadataPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    mha::populateExpandShapeMetadataPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::mha::populateExpandShapeMetadataPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ExpandShapeWithDynamicGroup>(patterns.getContext());
}
