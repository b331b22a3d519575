//===- GenericBuilder.cpp - linalg.generic and its companions -------------===//

#include "compiler/utils/GenericBuilder.h"
#include "compiler/utils/AttentionMath.h"
#include "dialects/MhaDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace mlir::mha;

AffineExpr GenericBuilder::d(unsigned position) const {
  return getAffineDimExpr(position, getContext());
}

AffineExpr GenericBuilder::constantExpr(int64_t value) const {
  return getAffineConstantExpr(value, getContext());
}

AffineMap GenericBuilder::map(unsigned numDims, ArrayRef<unsigned> dims) const {
  SmallVector<AffineExpr> exprs;
  for (unsigned dim : dims)
    exprs.push_back(d(dim));
  return affineMap(numDims, exprs);
}

AffineMap GenericBuilder::affineMap(unsigned numDims,
                                    ArrayRef<AffineExpr> results) const {
  return AffineMap::get(numDims, 0, results, getContext());
}

Value GenericBuilder::f32Constant(double value) {
  return arith::ConstantOp::create(builder, loc,
                                   builder.getF32FloatAttr(float(value)));
}

Value GenericBuilder::minusInfinity() {
  return arith::ConstantOp::create(
      builder, loc,
      builder.getFloatAttr(builder.getF32Type(),
                           APFloat::getInf(APFloat::IEEEsingle(), true)));
}

Value GenericBuilder::empty(ArrayRef<OpFoldResult> sizes, Type elementType) {
  return tensor::EmptyOp::create(
      builder, loc, sizes, elementType ? elementType : builder.getF32Type());
}

Value GenericBuilder::fill(Value value, Value init) {
  return linalg::FillOp::create(builder, loc, ValueRange{value},
                                ValueRange{init})
      .getResult(0);
}

Value GenericBuilder::filled(ArrayRef<OpFoldResult> sizes, Value value) {
  return fill(value, empty(sizes));
}

Value GenericBuilder::zeros(ArrayRef<OpFoldResult> sizes) {
  return filled(sizes, f32Constant(0.0));
}

Value GenericBuilder::generic(ValueRange inputs, Value init,
                              ArrayRef<AffineMap> maps,
                              ArrayRef<utils::IteratorType> iterators,
                              BodyBuilder body) {
  return linalg::GenericOp::create(
             builder, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
             maps, iterators,
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               linalg::YieldOp::create(nested, nestedLoc,
                                       body(nested, nestedLoc, args));
             })
      .getResult(0);
}

Value GenericBuilder::contraction(Value lhs, Value rhs, Value init,
                                  ArrayRef<AffineMap> maps,
                                  ArrayRef<utils::IteratorType> iterators) {
  return generic({lhs, rhs}, init, maps, iterators,
                 [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
                   return buildMultiplyAdd(nested, nestedLoc, args[0], args[1],
                                           args[2]);
                 });
}

OpFoldResult GenericBuilder::dim(Value value, int64_t dim) {
  return tensor::getMixedSize(builder, loc, value, dim);
}

OpFoldResult GenericBuilder::index(int64_t size) {
  return builder.getIndexAttr(size);
}

Value GenericBuilder::broadcast(Value input, ArrayRef<OpFoldResult> sizes,
                                ArrayRef<int64_t> dimensions) {
  return linalg::BroadcastOp::create(builder, loc, input, empty(sizes),
                                     dimensions)
      ->getResult(0);
}

Value GenericBuilder::biasOrZeros(Value bias, ArrayRef<OpFoldResult> sizes,
                                  ArrayRef<int64_t> dimensions) {
  return bias ? broadcast(bias, sizes, dimensions) : zeros(sizes);
}

Value GenericBuilder::transpose(Value input, ArrayRef<int64_t> permutation) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t from : permutation)
    sizes.push_back(dim(input, from));
  return linalg::TransposeOp::create(builder, loc, input, empty(sizes),
                                     permutation)
      ->getResult(0);
}

Value GenericBuilder::expand(Value input,
                             ArrayRef<ReassociationIndices> reassociation,
                             ArrayRef<OpFoldResult> sizes) {
  SmallVector<int64_t> shape;
  for (OpFoldResult size : sizes)
    shape.push_back(getConstantIntValue(size).value_or(ShapedType::kDynamic));
  auto type = RankedTensorType::get(shape, builder.getF32Type());
  return tensor::ExpandShapeOp::create(builder, loc, type, input, reassociation,
                                       sizes);
}

Value GenericBuilder::collapse(Value input,
                               ArrayRef<ReassociationIndices> reassociation) {
  return tensor::CollapseShapeOp::create(builder, loc, input, reassociation);
}

Value GenericBuilder::castTo(Value value, Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(builder, loc, type, value);
}

Value GenericBuilder::rowsTimesWeight(Value input, Value weight, Value bias) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  int64_t inWidth = inputType.getDimSize(rank - 1);
  int64_t outWidth = cast<RankedTensorType>(weight.getType()).getDimSize(1);
  ReassociationIndices outer = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));

  // The result's sizes: the input's leading ones and D_out.
  SmallVector<OpFoldResult> sizes;
  for (int64_t i : outer)
    sizes.push_back(dim(input, i));
  sizes.push_back(index(outWidth));

  Value rows = input;
  if (rank == 1)
    rows = expand(input, {{0, 1}}, {index(1), index(inWidth)});
  else if (rank > 2)
    rows = collapse(input, {outer, {rank - 1}});

  Value init = biasOrZeros(bias, {dim(rows, 0), index(outWidth)}, {0});
  Value product = markProjection(
      linalg::MatmulOp::create(builder, loc, TypeRange{init.getType()},
                               ValueRange{rows, weight}, ValueRange{init})
          .getResult(0));
  if (rank == 1)
    return collapse(product, {{0, 1}});
  if (rank == 2)
    return product;
  return expand(product, {outer, {rank - 1}}, sizes);
}

Value GenericBuilder::markProjection(Value contraction) {
  contraction.getDefiningOp()->setAttr(
      MhaDialect::ProjectionAttrHelper::getNameStr(),
      UnitAttr::get(getContext()));
  return contraction;
}
