//===- BF16Parts.cpp - f32 as bf16 parts, and bf16 pairs ------------------===//

#include "compiler/utils/BF16Parts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"

using namespace mlir;
using namespace mlir::mha;

/// The same arithmetic on a scalar or on a vector of f32: `type` with
/// `element` as its element type.
static Type withElementType(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

/// f32 `value` rounded to bf16 on its bits, kept in f32: half of bf16's
/// last place added to the f32 and the low 16 bits cleared (to nearest,
/// ties away from zero), so that `value` - hi is exact. Two integer ops
/// where rounding with a conversion and widening back takes a conversion,
/// a zero extension and a shift. A carry into the exponent is the right
/// rounding; out of a NaN's payload into the sign, hi loses the NaN, but
/// `value` - hi keeps it in lo, and hi·b + lo·b is NaN.
static Value buildBF16HiInF32(OpBuilder &builder, Location loc, Value value) {
  Type i32 = withElementType(value.getType(), builder.getI32Type());
  auto constant = [&](uint32_t bits) {
    return createScalarOrSplatConstant(builder, loc, i32, APInt(32, bits));
  };
  Value halfPlace = arith::AddIOp::create(
      builder, loc, arith::BitcastOp::create(builder, loc, i32, value),
      constant(0x8000u));
  Value highBits =
      arith::AndIOp::create(builder, loc, halfPlace, constant(0xFFFF0000u));
  return arith::BitcastOp::create(builder, loc, value.getType(), highBits);
}

Value mlir::mha::buildBF16Part(OpBuilder &builder, Location loc, Value value,
                               bool lo) {
  Value hi = buildBF16HiInF32(builder, loc, value);
  Type bf16 = withElementType(value.getType(), builder.getBF16Type());
  if (!lo)
    return arith::TruncFOp::create(builder, loc, bf16, hi);
  Value rest = arith::SubFOp::create(builder, loc, value, hi);
  return arith::TruncFOp::create(builder, loc, bf16, rest);
}

Value mlir::mha::buildBF16Part(OpBuilder &builder, Location loc, Value value,
                               Value lo) {
  Value hi = buildBF16HiInF32(builder, loc, value);
  Value rest = arith::SubFOp::create(builder, loc, value, hi);
  Value part = arith::SelectOp::create(builder, loc, lo, rest, hi);
  return arith::TruncFOp::create(
      builder, loc, withElementType(value.getType(), builder.getBF16Type()),
      part);
}

Value mlir::mha::buildBF16Pair(OpBuilder &builder, Location loc, Value first,
                               Value second) {
  auto half = [&](Value value) {
    Value bits =
        arith::BitcastOp::create(builder, loc, builder.getI16Type(), value);
    return arith::ExtUIOp::create(builder, loc, builder.getI32Type(), bits)
        .getResult();
  };
  Value high = arith::ShLIOp::create(
      builder, loc, half(second),
      arith::ConstantOp::create(builder, loc, builder.getI32IntegerAttr(16)));
  Value pair = arith::OrIOp::create(builder, loc, half(first), high);
  return arith::BitcastOp::create(builder, loc, builder.getF32Type(), pair);
}

Value mlir::mha::buildBF16PairElement(OpBuilder &builder, Location loc,
                                      Value pair, Value index) {
  Type i32 = builder.getI32Type();
  Value shift = arith::MulIOp::create(
      builder, loc, arith::IndexCastOp::create(builder, loc, i32, index),
      arith::ConstantOp::create(builder, loc, builder.getI32IntegerAttr(16)));
  Value bits = arith::ShRUIOp::create(
      builder, loc, arith::BitcastOp::create(builder, loc, i32, pair), shift);
  Value half =
      arith::TruncIOp::create(builder, loc, builder.getI16Type(), bits);
  Value element =
      arith::BitcastOp::create(builder, loc, builder.getBF16Type(), half);
  return arith::ExtFOp::create(builder, loc, builder.getF32Type(), element);
}
