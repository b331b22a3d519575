//===- MhaOnlineAttention.cpp - The online-softmax update op --------------===//

#include "dialects/MhaOnlineAttention.h"
#include "dialects/ShapeChecker.h"
#include "dialects/VariantChecks.h"

#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace mlir;
using namespace mlir::mha;

//===----------------------------------------------------------------------===//
// OnlineAttentionOp
//===----------------------------------------------------------------------===//

/// An i8 `codes` (the keys or values of an int8 cache) comes with `scales`,
/// one per row (the codes' dimensions before the last, from `firstDim`),
/// and other element types without.
static LogicalResult verifyCodeScales(Operation *op, Value codes, Value scales,
                                      StringRef name, unsigned firstDim) {
  auto codesType = cast<RankedTensorType>(codes.getType());
  bool int8 = codesType.getElementType().isInteger(8);
  if (int8 != bool(scales))
    return op->emitOpError()
           << "expects " << name << "_scales exactly with i8 " << name
           << "s, got " << (scales ? "scales" : "none") << " with "
           << codesType.getElementType() << " " << name << "s";
  if (!scales)
    return success();
  ArrayRef<int64_t> rows = codesType.getShape().drop_back();
  auto scalesType = cast<RankedTensorType>(scales.getType());
  bool agree = scalesType.getRank() == int64_t(rows.size());
  for (unsigned dim = firstDim; agree && dim < rows.size(); ++dim)
    agree = dimsAgree(rows[dim], scalesType.getDimSize(dim));
  if (!agree)
    return op->emitOpError()
           << "expects " << name << "_scales to have one entry per row of the "
           << name << "s, got " << scalesType << " for " << codesType;
  return success();
}

MutableOperandRange OnlineAttentionOp::getDpsInitsMutable() {
  // The destinations are the operands from `max` to the last scratch.
  unsigned begin = getODSOperandIndexAndLength(12).first;
  return MutableOperandRange(getOperation(), begin,
                             getOperation()->getNumOperands() - begin);
}

LogicalResult OnlineAttentionOp::verify() {
  ShapeChecker check(*this);
  if (failed(check.ranks(
          {{getQuery(), "query", 2, "[tq, dk]"},
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
           {getWidenedScratch(), "the widened scratch", 2,
            "[BK, max(dk, dv)]"}})))
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
  if (getCausalOffset() && !getCausal() && !getWindow() &&
      !getScoreModRegion(*this))
    return emitOpError() << "expects causal_offset only together with causal, "
                            "window or score_mod, got causal_offset alone";
  for (Value input : getScoreInputs()) {
    ArrayRef<int64_t> shape = tensorType(input).getShape();
    if (shape.size() != 2)
      return emitOpError() << "expects each score input to have rank 2 ([tq "
                              "or 1, n]), got rank "
                           << shape.size();
    if ((shape[0] != 1 &&
         failed(check.dim("score input rows (tq or 1)", queries, shape[0]))) ||
        failed(check.dim("score input length (n)", keys, shape[1])))
      return failure();
  }
  if (!getScoreInputs().empty() && !getScoreModRegion(*this))
    return emitOpError() << "expects score_inputs only with a score_mod "
                            "region, got "
                         << getScoreInputs().size() << " without one";
  double scale = getScale().convertToDouble();
  if (!std::isfinite(scale) || scale <= 0)
    return emitOpError() << "expects scale to be positive and finite, got "
                         << scale;
  if (failed(verifyCodeScales(*this, getKey(), getKeyScales(), "key", 0)) ||
      failed(verifyCodeScales(*this, getValue(), getValueScales(), "value", 0)))
    return failure();
  // bf16 and i8 blocks are widened into their scratch; f32 ones are read in
  // place.
  bool bf16Operands = !getKey().getType().getElementType().isF32() ||
                      !getValue().getType().getElementType().isF32();
  if (bf16Operands != bool(getWidenedScratch()))
    return emitOpError() << "expects a widened scratch exactly with bf16 or "
                            "i8 keys or values, got "
                         << (getWidenedScratch() ? "one" : "none") << " with "
                         << getKey().getType().getElementType() << " keys and "
                         << getValue().getType().getElementType() << " values";
  if (Value widened = getWidenedScratch()) {
    int64_t columns = cast<RankedTensorType>(widened.getType()).getDimSize(1);
    int64_t needed = std::max(q[1], v[1]);
    if (ShapedType::isStatic(columns) && columns < needed)
      return emitOpError() << "expects the widened scratch to have at least "
                              "max(dk, dv) = "
                           << needed << " columns, got " << columns;
  }
  return success();
}

LogicalResult OnlineAttentionOp::verifyRegions() {
  // The score, each score input's element, the query's and the key's
  // positions.
  Type f32 = Float32Type::get(getContext()),
       index = IndexType::get(getContext());
  SmallVector<Type> arguments(1 + getScoreInputs().size(), f32);
  arguments.append({index, index});
  return verifyScoreModRegion(*this, arguments);
}

//===----------------------------------------------------------------------===//
// SdpaSplitOp
//===----------------------------------------------------------------------===//

MutableOperandRange SdpaSplitOp::getDpsInitsMutable() {
  // The destinations are acc, max and sum, the last three operands.
  unsigned begin = getODSOperandIndexAndLength(10).first;
  return MutableOperandRange(getOperation(), begin, 3);
}

LogicalResult SdpaSplitOp::verify() {
  ShapeChecker check(*this);
  if (failed(check.ranks(
          {{getQuery(), "query", 4, "[B, H, T, dk]"},
           {getKey(), "key", 4, "[B, Hkv, S, dk]"},
           {getValue(), "value", 4, "[B, Hkv, S, dv]"},
           {getMask(), "mask", 3, "[B or 1, T, S]"},
           {getPositions(), "positions", 1, "[B]"},
           {getAttnBias(), "bias", 4, "[B or 1, H or 1, T or 1, S]"},
           {getAlibiSlopes(), "alibi slopes", 1, "[H]"},
           {getAcc(), "acc", 4, "[B, H, T, dv]"},
           {getMax(), "max", 3, "[B, H, T]"},
           {getSum(), "sum", 3, "[B, H, T]"}})))
    return failure();
  ArrayRef<int64_t> q = getQuery().getType().getShape();
  ArrayRef<int64_t> k = getKey().getType().getShape();
  ArrayRef<int64_t> v = getValue().getType().getShape();
  if (failed(check.isStatic(getQuery(), "query", 1, "head count (H)")) ||
      failed(check.isStatic(getQuery(), "query", 3, "head dimension (dk)")) ||
      failed(check.isStatic(getKey(), "key", 1, "head count (Hkv)")) ||
      failed(check.isStatic(getValue(), "value", 3, "value dimension (dv)")) ||
      failed(check.positive("the key/value head count (Hkv)", k[1])) ||
      failed(check.divides("the key/value head count (Hkv)", k[1],
                           "the query head count (H)", q[1])) ||
      failed(check.dim("key batch (B)", q[0], k[0])) ||
      failed(check.dim("key head dimension (dk)", q[3], k[3])) ||
      failed(check.dim("value batch (B)", q[0], v[0])) ||
      failed(check.dim("value head count (Hkv)", k[1], v[1])) ||
      failed(check.dim("value length (S)", k[2], v[2])))
    return failure();
  if (failed(verifyCodeScales(*this, getKey(), getKeyScales(), "key", 1)) ||
      failed(verifyCodeScales(*this, getValue(), getValueScales(), "value", 1)))
    return failure();
  int64_t keys = ShapedType::isDynamic(k[2]) ? v[2] : k[2];
  if (Value mask = getMask()) {
    ArrayRef<int64_t> m = cast<RankedTensorType>(mask.getType()).getShape();
    if (m[0] != 1 && failed(check.dim("mask batch (B or 1)", q[0], m[0])))
      return failure();
    if (failed(check.dim("mask rows (T)", q[2], m[1])) ||
        failed(check.dim("mask length (S)", keys, m[2])))
      return failure();
  }
  if (Value positions = getPositions()) {
    if (failed(check.dim("positions size (B)", q[0],
                         tensorType(positions).getDimSize(0))))
      return failure();
    if (!getCausal() || getCausalBottomRight())
      return emitOpError() << "expects positions only with top-left causal "
                              "attention (causal without "
                              "causal_bottom_right)";
  }
  if (getCausalBottomRight() && !getCausal())
    return emitOpError() << "expects causal_bottom_right only together with "
                            "causal";
  ArrayRef<int64_t> acc = getAcc().getType().getShape();
  for (auto [what, expected, found] :
       {std::tuple<StringRef, int64_t, int64_t>{"acc batch (B)", q[0], acc[0]},
        {"acc head count (H)", q[1], acc[1]},
        {"acc rows (T)", q[2], acc[2]},
        {"acc columns (dv)", v[3], acc[3]}})
    if (failed(check.dim(what, expected, found)))
      return failure();
  const StringRef dimNames[] = {"batch (B)", "head count (H)", "rows (T)"};
  for (auto [name, state] :
       {std::pair<StringRef, Value>{"max", getMax()}, {"sum", getSum()}}) {
    ArrayRef<int64_t> shape = tensorType(state).getShape();
    for (auto [index, dimName] : llvm::enumerate(dimNames))
      if (failed(
              check.dim((name + " " + dimName).str(), q[index], shape[index])))
        return failure();
  }
  double scale = getScale().convertToDouble();
  if (!std::isfinite(scale) || scale <= 0)
    return emitOpError() << "expects scale to be positive and finite, got "
                         << scale;
  ScoreSteps steps{getAttnBias(),   getAlibiSlopes(), Value(),
                   getWindowAttr(), getSoftcapAttr(), getScoreModRegion(*this)};
  return verifyScoreSteps(*this, check, steps, getCausal(), q[0], q[1], q[2],
                          keys);
}

LogicalResult SdpaSplitOp::verifyRegions() {
  return verifyScoreModRegion(*this, getScoreModArgumentTypes(getContext()));
}

#define GET_OP_CLASSES
#include "dialects/MhaOnlineAttention.cpp.inc"
