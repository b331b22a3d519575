//===- MhaQuantizedCache.cpp - Verifiers of the int8 cache ops ------------===//
//
// mha.cache_append_quantized and mha.dequantize: the codes' shape follows
// mha.cache_append's rules, and the scales have one entry per row of the
// codes.
//
//===----------------------------------------------------------------------===//

#include "dialects/InferredTypes.h"
#include "dialects/MhaOps.h"
#include "dialects/ShapeChecker.h"

using namespace mlir;
using namespace mlir::mha;

/// `scales [B, Hkv, C]` has one entry per row of `codes [B, Hkv, C, d]`.
static LogicalResult verifyScales(ShapeChecker &check, Value codes,
                                  Value scales) {
  ArrayRef<int64_t> c = cast<RankedTensorType>(codes.getType()).getShape();
  ArrayRef<int64_t> s = cast<RankedTensorType>(scales.getType()).getShape();
  if (failed(check.dim("scales batch (B)", c[0], s[0])) ||
      failed(check.dim("scales heads (Hkv)", c[1], s[1])) ||
      failed(check.dim("scales rows (C)", c[2], s[2])))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// CacheAppendQuantizedOp
//===----------------------------------------------------------------------===//

LogicalResult CacheAppendQuantizedOp::verify() {
  if (failed(verifyCacheAppendShapes(*this, getUpdate(), getCodes(),
                                     getLengths(), "codes")))
    return failure();
  ShapeChecker check(*this);
  return verifyScales(check, getCodes(), getScales());
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

/// `codes [B, Hkv, C, d]` (i8) -> `[B, Hkv, C, d]` (f32).
LogicalResult DequantizeOp::inferReturnTypes(MLIRContext *context,
                                             std::optional<Location> location,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  RankedTensorType codes = tensorType(adaptor.getCodes());
  if (codes.getRank() != 4)
    return emitOptionalError(location, "mha.dequantize: no result type for "
                                       "this operand");
  types.push_back(codes.clone(Float32Type::get(context)));
  return success();
}

bool DequantizeOp::isCompatibleReturnTypes(TypeRange inferred,
                                           TypeRange declared) {
  return compatibleResults(inferred, declared);
}

LogicalResult DequantizeOp::verify() {
  // The result's shape is the codes' (inferReturnTypes, checked before).
  ShapeChecker check(*this);
  return verifyScales(check, getCodes(), getScales());
}
