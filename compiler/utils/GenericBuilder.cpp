//===- GenericBuilder.cpp - linalg.generic and its companions -------------===//

#include "compiler/utils/GenericBuilder.h"
#include "compiler/utils/AttentionMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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
