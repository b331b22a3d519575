//===- MhaOnlineAttention.cpp - The online-softmax update op --------------===//

#include "dialects/MhaOnlineAttention.h"
#include "dialects/ShapeChecker.h"

#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <string>

using namespace mlir;
using namespace mlir::mha;

//===----------------------------------------------------------------------===//
// OnlineAttentionOp
//===----------------------------------------------------------------------===//

MutableOperandRange OnlineAttentionOp::getDpsInitsMutable() {
  // The destinations are the operands from `max` to the last scratch.
  unsigned begin = getODSOperandIndexAndLength(8).first;
  return MutableOperandRange(getOperation(), begin,
                             getOperation()->getNumOperands() - begin);
}

LogicalResult OnlineAttentionOp::verify() {
  ShapeChecker check(*this);
  struct Ranked {
    Value value;
    StringRef name;
    int64_t rank;
    StringRef layout;
  };
  SmallVector<Ranked> ranked = {
      {getQuery(), "query", 2, "[tq, dk]"},
      {getKey(), "key", 2, "[n, dk]"},
      {getValue(), "value", 2, "[n, dv]"},
      {getKeysT(), "keys_t", 2, "[dk, n]"},
      {getMask(), "mask", 2, "[tq, n]"},
      {getAcc(), "acc", 2, "[tq, dv]"},
      {getMax(), "max", 1, "[tq]"},
      {getSum(), "sum", 1, "[tq]"},
      {getScores(), "the scores scratch", 2, "[BQ, BK]"},
      {getKeysScratch(), "the keys scratch", 2, "[dk, BK] or [BK, dk]"},
      {getNewMax(), "the new maximum scratch", 1, "[BQ]"},
      {getCorrection(), "the correction scratch", 1, "[BQ]"},
      {getValuesScratch(), "the values scratch", 2, "[BK, dv]"}};
  for (const Ranked &operand : ranked)
    if (operand.value && failed(check.rank(operand.value, operand.name,
                                           operand.rank, operand.layout)))
      return failure();
  ArrayRef<int64_t> q = getQuery().getType().getShape();
  ArrayRef<int64_t> k = getKey().getType().getShape();
  ArrayRef<int64_t> v = getValue().getType().getShape();
  int64_t queries = q[0], keys = ShapedType::isDynamic(k[0]) ? v[0] : k[0];
  if (failed(check.isStatic(getQuery(), "query", 1, "head dimension")) ||
      failed(check.isStatic(getValue(), "value", 1, "value dimension")) ||
      failed(check.dim("key head dimension (dk)", q[1], k[1])) ||
      failed(check.dim("value length (n)", k[0], v[0])))
    return failure();
  if (Value keysT = getKeysT()) {
    ArrayRef<int64_t> kt = cast<RankedTensorType>(keysT.getType()).getShape();
    if (failed(check.dim("keys_t head dimension (dk)", q[1], kt[0])) ||
        failed(check.dim("keys_t length (n)", keys, kt[1])))
      return failure();
  }
  if (getPacked() && (!getKeysT() || q[1] % 2 != 0 ||
                      !getValue().getType().getElementType().isF32()))
    return emitOpError() << "expects packed with keys_t, an even head "
                            "dimension and f32 values, got dk = "
                         << q[1] << (getKeysT() ? "" : ", no keys_t")
                         << ", values of "
                         << getValue().getType().getElementType();
  if (Value mask = getMask()) {
    ArrayRef<int64_t> m = cast<RankedTensorType>(mask.getType()).getShape();
    if (failed(check.dim("mask rows (tq)", queries, m[0])) ||
        failed(check.dim("mask length (n)", keys, m[1])))
      return failure();
  }
  ArrayRef<int64_t> acc = getAcc().getType().getShape();
  if (failed(check.dim("acc rows (tq)", queries, acc[0])) ||
      failed(check.dim("acc columns (dv)", v[1], acc[1])) ||
      failed(check.dim("max size (tq)", queries,
                       getMax().getType().getDimSize(0))) ||
      failed(check.dim("sum size (tq)", queries,
                       getSum().getType().getDimSize(0))))
    return failure();
  if (getCausalOffset() && !getCausal())
    return emitOpError() << "expects causal_offset only together with causal, "
                            "got causal_offset without causal";
  double scale = getScale().convertToDouble();
  if (!std::isfinite(scale) || scale <= 0)
    return emitOpError() << "expects scale to be positive and finite, got "
                         << scale;
  // The values are widened into their scratch only where they are bf16.
  bool bf16Values = getValue().getType().getElementType().isBF16();
  if (bf16Values != bool(getValuesScratch()))
    return emitOpError() << "expects a values scratch exactly with bf16 "
                            "values, got "
                         << (getValuesScratch() ? "one" : "none") << " with "
                         << getValue().getType().getElementType() << " values";
  return success();
}

#define GET_OP_CLASSES
#include "dialects/MhaOnlineAttention.cpp.inc"
