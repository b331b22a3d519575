//===- QuantizedCache.cpp - The arithmetic of int8 caches -----------------===//

#include "compiler/utils/QuantizedCache.h"
#include "compiler/utils/GenericBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::mha;

Value mlir::mha::buildDequantizedElement(OpBuilder &builder, Location loc,
                                         Value code, Value scale) {
  Value wide =
      arith::SIToFPOp::create(builder, loc, builder.getF32Type(), code);
  return arith::MulFOp::create(builder, loc, wide, scale);
}

Value mlir::mha::buildQuantizedCode(OpBuilder &builder, Location loc, Value x,
                                    Value scale) {
  Type f32 = builder.getF32Type();
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(builder, loc, f32,
                                     builder.getF32FloatAttr(value));
  };
  // A row of zeros has scale 0: its codes are 0, not 0/0.
  Value zero = constant(0.0);
  Value isZero = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OEQ,
                                       scale, zero);
  Value quotient = arith::DivFOp::create(builder, loc, x, scale);
  Value rounded = math::RoundEvenOp::create(builder, loc, quotient);
  Value clamped = arith::MaximumFOp::create(
      builder, loc,
      arith::MinimumFOp::create(builder, loc, rounded,
                                constant(kInt8CacheMaxCode)),
      constant(-kInt8CacheMaxCode));
  Value code = arith::SelectOp::create(builder, loc, isZero, zero, clamped);
  return arith::FPToSIOp::create(builder, loc, builder.getI8Type(), code);
}

std::pair<Value, Value>
mlir::mha::buildQuantizedRows(OpBuilder &builder, Location loc, Value update) {
  GenericBuilder b(builder, loc);
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(builder, loc, update); // [B, Hkv, T, d]
  SmallVector<OpFoldResult> rowSizes(ArrayRef(sizes).take_front(3));
  // (batch, head, token, feature)
  SmallVector<utils::IteratorType> reduceRow = {kParallel, kParallel, kParallel,
                                                kReduction};
  SmallVector<utils::IteratorType> elementwise(4, kParallel);
  AffineMap all = b.map(4, {0, 1, 2, 3}), row = b.map(4, {0, 1, 2});
  Value maxAbs = b.generic(
      update, b.zeros(rowSizes), {all, row}, reduceRow,
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value magnitude = math::AbsFOp::create(nb, nloc, args[0]);
        return arith::MaximumFOp::create(nb, nloc, args[1], magnitude);
      });
  Value scales = b.generic(
      maxAbs, b.empty(rowSizes), {b.map(3, {0, 1, 2}), b.map(3, {0, 1, 2})},
      {kParallel, kParallel, kParallel},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value divisor = arith::ConstantOp::create(
            nb, nloc, nb.getF32Type(), nb.getF32FloatAttr(kInt8CacheMaxCode));
        return arith::DivFOp::create(nb, nloc, args[0], divisor);
      });
  Value codes =
      b.generic(ValueRange{update, scales}, b.empty(sizes, builder.getI8Type()),
                {all, row, all}, elementwise,
                [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                  return buildQuantizedCode(nb, nloc, args[0], args[1]);
                });
  return {codes, scales};
}
