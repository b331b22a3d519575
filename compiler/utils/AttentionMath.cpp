//===- AttentionMath.cpp - The arithmetic of attention, written once ------===//

#include "compiler/utils/AttentionMath.h"
#include "compiler/utils/BF16Parts.h"
#include "compiler/utils/GenericBuilder.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::mha;

OpFoldResult
mlir::mha::getKnownSize(OpBuilder &builder, Location loc,
                        ArrayRef<std::pair<Value, int64_t>> candidates) {
  for (auto [value, dim] : candidates) {
    auto type = cast<RankedTensorType>(value.getType());
    if (!type.isDynamicDim(dim))
      return builder.getIndexAttr(type.getDimSize(dim));
  }
  auto [value, dim] = candidates.front();
  return tensor::DimOp::create(builder, loc, value, dim).getResult();
}

AttentionSizes AttentionSizes::get(OpBuilder &builder, Location loc,
                                   Value query, Value key, Value value,
                                   Value mask) {
  SmallVector<std::pair<Value, int64_t>> batchDims = {{query, 0}, {key, 0}};
  SmallVector<std::pair<Value, int64_t>> queryDims = {{query, 2}};
  SmallVector<std::pair<Value, int64_t>> keyDims = {{key, 2}};
  if (value) {
    batchDims.push_back({value, 0});
    keyDims.push_back({value, 2});
  }
  if (mask) {
    queryDims.push_back({mask, 1});
    keyDims.push_back({mask, 2});
  }
  AttentionSizes sizes;
  sizes.batch = getKnownSize(builder, loc, batchDims);
  sizes.queries = getKnownSize(builder, loc, queryDims);
  sizes.keys = getKnownSize(builder, loc, keyDims);
  return sizes;
}

AffineExpr mlir::mha::getKeyValueHead(AffineExpr head, int64_t heads,
                                      int64_t kvHeads) {
  return head.floorDiv(heads / kvHeads);
}

Value mlir::mha::buildMaskBroadcasts(OpBuilder &builder, Location loc,
                                     Value mask) {
  if (!mask || !cast<RankedTensorType>(mask.getType()).isDynamicDim(0))
    return {};
  Value maskBatch = tensor::DimOp::create(builder, loc, mask, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  return arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                               maskBatch, one);
}

OpFoldResult mlir::mha::getMaskBatchRow(OpBuilder &builder, Location loc,
                                        Value mask, Value broadcasts,
                                        OpFoldResult batchIndex) {
  if (broadcasts)
    return arith::SelectOp::create(
               builder, loc, broadcasts,
               arith::ConstantIndexOp::create(builder, loc, 0),
               getValueOrCreateConstantIndexOp(builder, loc, batchIndex))
        .getResult();
  if (cast<RankedTensorType>(mask.getType()).getDimSize(0) == 1)
    return builder.getIndexAttr(0);
  return batchIndex;
}

Value mlir::mha::buildCausalOffset(OpBuilder &builder, Location loc,
                                   bool causalBottomRight,
                                   OpFoldResult numQueries,
                                   OpFoldResult numKeys) {
  if (!causalBottomRight)
    return {};
  std::optional<int64_t> queries = getConstantIntValue(numQueries);
  std::optional<int64_t> keys = getConstantIntValue(numKeys);
  if (queries && keys)
    return arith::ConstantIndexOp::create(builder, loc, *keys - *queries);
  return arith::SubIOp::create(
      builder, loc, getValueOrCreateConstantIndexOp(builder, loc, numKeys),
      getValueOrCreateConstantIndexOp(builder, loc, numQueries));
}

Value mlir::mha::buildCausalPredicate(OpBuilder &builder, Location loc,
                                      Value key, Value query, Value offset) {
  if (!offset)
    return arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::ule, key,
                                 query);
  // S - T is negative when there are fewer keys than queries: the sum may
  // be negative, so the comparison is signed.
  Value diagonal = arith::AddIOp::create(builder, loc, query, offset);
  return arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sle, key,
                               diagonal);
}

Value mlir::mha::buildWindowPredicate(OpBuilder &builder, Location loc,
                                      Value key, Value position, Value window) {
  // position - window < key as key + window > position: no subtraction
  // below 0 for the first keys.
  Value end = arith::AddIOp::create(builder, loc, key, window);
  return arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::sgt, end,
                               position);
}

Value mlir::mha::buildAllowed(OpBuilder &builder, Location loc,
                              Value maskElement, Value key, Value query,
                              Value causalOffset, Value window) {
  if (!key)
    return maskElement;
  Value beforeQuery =
      buildCausalPredicate(builder, loc, key, query, causalOffset);
  if (window) {
    Value position = buildQueryPosition(builder, loc, query, causalOffset);
    beforeQuery = arith::AndIOp::create(
        builder, loc, beforeQuery,
        buildWindowPredicate(builder, loc, key, position, window));
  }
  if (!maskElement)
    return beforeQuery;
  return arith::AndIOp::create(builder, loc, maskElement, beforeQuery);
}

Value mlir::mha::buildQueryPosition(OpBuilder &builder, Location loc,
                                    Value query, Value causalOffset) {
  if (!causalOffset)
    return query;
  return arith::AddIOp::create(builder, loc, query, causalOffset);
}

Value mlir::mha::buildScoreSteps(OpBuilder &builder, Location loc, Value score,
                                 Value scale, Value softcap, Value slope,
                                 Value bias, Value key, Value position) {
  if (scale)
    score = arith::MulFOp::create(builder, loc, score, scale);
  if (softcap) {
    // Divided, not multiplied by 1/c, as the models (and the reference)
    // compute it. math.tanh lowers to llvm.intr.tanh: saturates to ±1, no
    // NaN for any finite score.
    Value ratio = arith::DivFOp::create(builder, loc, score, softcap);
    score = arith::MulFOp::create(builder, loc, softcap,
                                  math::TanhOp::create(builder, loc, ratio));
  }
  if (slope) {
    // j - p_i is negative for the keys before the query: signed.
    Value distance = arith::SubIOp::create(builder, loc, key, position);
    Value wide = arith::IndexCastOp::create(builder, loc, builder.getI64Type(),
                                            distance);
    Value asFloat =
        arith::SIToFPOp::create(builder, loc, builder.getF32Type(), wide);
    score = arith::AddFOp::create(
        builder, loc, score,
        arith::MulFOp::create(builder, loc, slope, asFloat));
  }
  if (bias)
    score = arith::AddFOp::create(builder, loc, score, bias);
  return score;
}

Value mlir::mha::buildScoreMod(OpBuilder &builder, Region &region,
                               ValueRange arguments) {
  Block &body = region.front();
  IRMapping mapping;
  for (auto [argument, value] : llvm::zip_equal(body.getArguments(), arguments))
    if (value)
      mapping.map(argument, value);
  for (Operation &op : body.without_terminator())
    builder.clone(op, mapping);
  return mapping.lookup(body.getTerminator()->getOperand(0));
}

void mlir::mha::offsetScoreModArgument(OpBuilder &builder, Operation *op,
                                       unsigned argument, Value offset) {
  Region *region = getScoreModRegion(op);
  if (!region)
    return;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&region->front());
  BlockArgument local = region->front().getArgument(argument);
  Value whole = arith::AddIOp::create(builder, op->getLoc(), local, offset);
  local.replaceAllUsesExcept(whole, whole.getDefiningOp());
}

double mlir::mha::getLog2Scale(double scale) {
  // The verifiers allow any finite scale, but scale·log2(e) can pass f32's
  // largest number, and an infinite factor would make the largest score's
  // 0·inf a NaN; capped, it still sends every other score's weight to 0.
  return std::min(scale * llvm::numbers::log2e,
                  double(std::numeric_limits<float>::max()));
}

SoftmaxConstants SoftmaxConstants::create(OpBuilder &builder, Location loc,
                                          double scale) {
  GenericBuilder ops(builder, loc);
  SoftmaxConstants constants;
  constants.log2Scale = ops.f32Constant(getLog2Scale(scale));
  constants.zero = ops.f32Constant(0.0);
  constants.one = ops.f32Constant(1.0);
  constants.minusInfinity = ops.minusInfinity();
  return constants;
}

Value mlir::mha::buildMultiplyAdd(OpBuilder &builder, Location loc, Value lhs,
                                  Value rhs, Value acc) {
  Value product = arith::MulFOp::create(builder, loc, lhs, rhs);
  return arith::AddFOp::create(builder, loc, acc, product);
}

Value mlir::mha::buildSplitMultiplyAdd(OpBuilder &builder, Location loc,
                                       Value q, Value kHi, Value kLo,
                                       Value acc) {
  Type f32 = builder.getF32Type();
  Value qHi = arith::ExtFOp::create(builder, loc, f32,
                                    buildBF16Part(builder, loc, q,
                                                  /*lo=*/false));
  Value qLo = arith::ExtFOp::create(builder, loc, f32,
                                    buildBF16Part(builder, loc, q,
                                                  /*lo=*/true));
  acc = buildMultiplyAdd(builder, loc, qHi, kHi, acc);
  acc = buildMultiplyAdd(builder, loc, qLo, kHi, acc);
  return buildMultiplyAdd(builder, loc, qHi, kLo, acc);
}

Value mlir::mha::buildMaskedMax(OpBuilder &builder, Location loc,
                                const SoftmaxConstants &constants, Value score,
                                AllowedBuilder getAllowed, Value runningMax) {
  if (Value allowed = getAllowed())
    score = arith::SelectOp::create(builder, loc, allowed, score,
                                    constants.minusInfinity);
  return arith::MaxNumFOp::create(builder, loc, runningMax, score);
}

Value mlir::mha::buildMaskedExp(OpBuilder &builder, Location loc,
                                const SoftmaxConstants &constants, Value score,
                                Value max, AllowedBuilder getAllowed) {
  Value distance = arith::SubFOp::create(builder, loc, score, max);
  Value shifted =
      arith::MulFOp::create(builder, loc, distance, constants.log2Scale);
  Value weight = math::Exp2Op::create(builder, loc, shifted);
  if (Value allowed = getAllowed())
    weight =
        arith::SelectOp::create(builder, loc, allowed, weight, constants.zero);
  return weight;
}

Value mlir::mha::buildCorrection(OpBuilder &builder, Location loc,
                                 const SoftmaxConstants &constants,
                                 Value oldMax, Value blockMax) {
  Value newMax = arith::MaximumFOp::create(builder, loc, oldMax, blockMax);
  Value same = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OEQ,
                                     oldMax, newMax);
  Value diff = arith::SubFOp::create(builder, loc, oldMax, newMax);
  Value rescale = math::Exp2Op::create(
      builder, loc,
      arith::MulFOp::create(builder, loc, diff, constants.log2Scale));
  return arith::SelectOp::create(builder, loc, same, constants.one, rescale);
}

Value mlir::mha::buildPartWeight(OpBuilder &builder, Location loc,
                                 const SoftmaxConstants &constants, Value max,
                                 Value maxAll) {
  Value none = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OEQ,
                                     max, constants.minusInfinity);
  Value diff = arith::SubFOp::create(builder, loc, max, maxAll);
  Value rescale = math::Exp2Op::create(
      builder, loc,
      arith::MulFOp::create(builder, loc, diff, constants.log2Scale));
  return arith::SelectOp::create(builder, loc, none, constants.zero, rescale);
}

Value mlir::mha::buildFiniteMax(OpBuilder &builder, Location loc,
                                const SoftmaxConstants &constants, Value max) {
  Value none = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OEQ,
                                     max, constants.minusInfinity);
  return arith::SelectOp::create(builder, loc, none, constants.zero, max);
}

Value mlir::mha::buildNormalized(OpBuilder &builder, Location loc,
                                 const SoftmaxConstants &constants, Value sum,
                                 Value acc) {
  Value none = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OEQ,
                                     sum, constants.zero);
  Value normalized = arith::DivFOp::create(builder, loc, acc, sum);
  return arith::SelectOp::create(builder, loc, none, constants.zero,
                                 normalized);
}

Value mlir::mha::buildReciprocalOrZero(OpBuilder &builder, Location loc,
                                       const SoftmaxConstants &constants,
                                       Value sum) {
  Value positive = arith::CmpFOp::create(
      builder, loc, arith::CmpFPredicate::OGT, sum, constants.zero);
  Value reciprocal = arith::DivFOp::create(builder, loc, constants.one, sum);
  return arith::SelectOp::create(builder, loc, positive, reciprocal,
                                 constants.zero);
}
