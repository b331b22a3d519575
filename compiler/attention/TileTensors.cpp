//===- TileTensors.cpp - Views of an attention tile's tensors -------------===//

#include "compiler/attention/TileTensors.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::mha;

Value mlir::mha::slice(OpBuilder &b, Location loc, Value source,
                       ArrayRef<OpFoldResult> offsets,
                       ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes,
                                        strides);
}

Value mlir::mha::unslice(OpBuilder &b, Location loc, Value source, Value dest,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  return tensor::InsertSliceOp::create(b, loc, source, dest, offsets, sizes,
                                       strides);
}

/// `size` as an attribute where it is a constant: also the constant
/// `affine.apply` that loop peeling leaves for a full block's size.
static OpFoldResult foldSize(OpFoldResult size) {
  auto value = dyn_cast<Value>(size);
  if (!value)
    return size;
  if (auto apply = value.getDefiningOp<affine::AffineApplyOp>())
    if (apply.getAffineMap().isSingleConstant())
      return OpBuilder(apply).getIndexAttr(
          apply.getAffineMap().getSingleConstantResult());
  return getAsOpFoldResult(value);
}

SmallVector<OpFoldResult> mlir::mha::getKnownSizes(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> sizes(type.getRank());
  SmallVector<OpFoldResult> made;
  if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>()) {
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    for (auto [index, size] : llvm::enumerate(slice.getMixedSizes()))
      if (!dropped.test(index))
        made.push_back(foldSize(size));
  }
  Builder b(value.getContext());
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    sizes[dim] = !type.isDynamicDim(dim) ? b.getIndexAttr(type.getDimSize(dim))
                 : made.empty()          ? OpFoldResult()
                                         : made[dim];
  return sizes;
}

Value mlir::mha::sliceUnlessWhole(OpBuilder &b, Location loc, Value source,
                                  ArrayRef<OpFoldResult> offsets,
                                  ArrayRef<OpFoldResult> sizes) {
  bool whole = llvm::all_of(offsets, [](OpFoldResult offset) {
    return isConstantIntValue(offset, 0);
  });
  SmallVector<OpFoldResult> known = getKnownSizes(source);
  for (auto [size, knownSize] : llvm::zip_equal(sizes, known))
    whole = whole && knownSize &&
            (knownSize == size ||
             (getConstantIntValue(size) &&
              getConstantIntValue(size) == getConstantIntValue(knownSize)));
  return whole ? source : slice(b, loc, source, offsets, sizes);
}

OpFoldResult mlir::mha::getSize(OpBuilder &b, Location loc, Value value,
                                unsigned dim) {
  if (OpFoldResult known = getKnownSizes(value)[dim])
    return known;
  return tensor::getMixedSize(b, loc, value, dim);
}

Value mlir::mha::withStaticSizes(OpBuilder &b, Location loc, Value value) {
  auto slice = value ? value.getDefiningOp<tensor::ExtractSliceOp>()
                     : tensor::ExtractSliceOp();
  if (!slice)
    return value;
  auto range = slice.getSource().getDefiningOp<tensor::ExtractSliceOp>();
  if (range && range.getSourceType().getRank() != range.getType().getRank())
    range = {};
  SmallVector<OpFoldResult> sizes;
  for (OpFoldResult size : slice.getMixedSizes())
    sizes.push_back(foldSize(size));
  // The same rank reduction, with the sizes that are constants static.
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  SmallVector<int64_t> shape;
  for (auto [index, size] : llvm::enumerate(sizes))
    if (!dropped.test(index))
      shape.push_back(getConstantIntValue(size).value_or(ShapedType::kDynamic));
  auto type = RankedTensorType::get(shape, slice.getType().getElementType());
  if (type == slice.getType() && !range)
    return value;
  Value source = slice.getSource();
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets(),
                            strides = slice.getMixedStrides();
  if (range) {
    SmallVector<OpFoldResult> combinedOffsets, combinedSizes, combinedStrides;
    if (succeeded(affine::mergeOffsetsSizesAndStrides(
            b, loc, range.getMixedOffsets(), range.getMixedSizes(),
            range.getMixedStrides(), range.getDroppedDims(), offsets, sizes,
            strides, combinedOffsets, combinedSizes, combinedStrides))) {
      source = range.getSource();
      offsets = combinedOffsets;
      sizes = combinedSizes;
      strides = combinedStrides;
    }
  }
  return tensor::ExtractSliceOp::create(b, loc, type, source, offsets, sizes,
                                        strides);
}

void mlir::mha::eraseDeadSlices(RewriterBase &rewriter, Value value) {
  while (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (!slice->use_empty())
      return;
    value = slice.getSource();
    rewriter.eraseOp(slice);
  }
}

bool mlir::mha::isBF16(Value value) {
  return getElementTypeOrSelf(value.getType()).isBF16();
}
