//===- AttentionBatchTiling.cpp - mha.attention tiled over its batch ------===//

#include "compiler/graph/AttentionBatchTiling.h"
#include "compiler/utils/AttentionMath.h"
#include "dialects/MhaDialect.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;
using namespace mlir::mha;

namespace {
/// Sequences [offset, offset + size) of `value`, a tensor whose first
/// dimension is the batch.
Value sliceBatch(OpBuilder &b, Location loc, Value value, OpFoldResult offset,
                 OpFoldResult size) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = offset;
  sizes[0] = size;
  return tensor::ExtractSliceOp::create(b, loc, value, offsets, sizes, strides);
}

/// The batch and query length of the layer's result, [B, T, D_out].
SmallVector<OpFoldResult> getResultSizes(AttentionOp op, OpBuilder &b) {
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(b, op.getLoc(), op.getQuery());
  sizes[2] = b.getIndexAttr(op.getType().getDimSize(2));
  return sizes;
}

struct AttentionBatchTiling
    : TilingInterface::ExternalModel<AttentionBatchTiling, AttentionOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *) const {
    return {utils::IteratorType::parallel};
  }

  SmallVector<Range> getIterationDomain(Operation *op, OpBuilder &b) const {
    auto attention = cast<AttentionOp>(op);
    return {{b.getIndexAttr(0), getResultSizes(attention, b)[0],
             b.getIndexAttr(1)}};
  }

  /// The layer on sequences [offsets[0], offsets[0] + sizes[0]): the same op
  /// on the slices of the query, kv, mask and score bias. The other
  /// operands are per head or feature and are shared by every slice.
  FailureOr<TilingResult>
  getTiledImplementation(Operation *op, OpBuilder &b,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) const {
    auto attention = cast<AttentionOp>(op);
    Location loc = op->getLoc();
    SmallVector<Operation *> slices;
    auto slice = [&](Value value, OpFoldResult offset, OpFoldResult size) {
      Value sliced = sliceBatch(b, loc, value, offset, size);
      slices.push_back(sliced.getDefiningOp());
      return sliced;
    };
    Value query = slice(attention.getQuery(), offsets[0], sizes[0]);
    Value kv = attention.getKv()
                   ? slice(attention.getKv(), offsets[0], sizes[0])
                   : Value();
    // The mask's rows of these sequences, or its one row shared by the
    // batch ([1, T, S]: whole when its type says so; at run time for a `?`
    // batch, by the rule of every lowering of the mask, getMaskBatchRow).
    // The score bias ([B or 1, H or 1, T or 1, S]) by the same rule.
    auto sliceRows = [&](Value rowsOf) -> Value {
      if (!rowsOf ||
          cast<RankedTensorType>(rowsOf.getType()).getDimSize(0) == 1)
        return rowsOf;
      Value broadcasts = buildMaskBroadcasts(b, loc, rowsOf);
      OpFoldResult rows = sizes[0];
      if (broadcasts)
        rows =
            arith::SelectOp::create(
                b, loc, broadcasts, arith::ConstantIndexOp::create(b, loc, 1),
                getValueOrCreateConstantIndexOp(b, loc, sizes[0]))
                .getResult();
      return slice(rowsOf,
                   getMaskBatchRow(b, loc, rowsOf, broadcasts, offsets[0]),
                   rows);
    };
    Value mask = sliceRows(attention.getMask());
    Value attnBias = sliceRows(attention.getAttnBias());
    auto tiled = cast<AttentionOp>(b.clone(*op));
    tiled.getQueryMutable().assign(query);
    if (kv)
      tiled.getKvMutable().assign(kv);
    if (mask)
      tiled.getMaskMutable().assign(mask);
    if (attnBias)
      tiled.getAttnBiasMutable().assign(attnBias);
    // The region receives each sequence's batch element in the whole op.
    if (!isConstantIntValue(offsets[0], 0))
      offsetScoreModArgument(
          b, tiled, 1, getValueOrCreateConstantIndexOp(b, loc, offsets[0]));
    SmallVector<int64_t> shape(attention.getType().getShape());
    shape[0] = getConstantIntValue(sizes[0]).value_or(ShapedType::kDynamic);
    tiled.getResult().setType(attention.getType().clone(shape));
    return TilingResult{{tiled}, {tiled.getResult()}, slices};
  }

  LogicalResult getResultTilePosition(
      Operation *op, OpBuilder &b, unsigned, ArrayRef<OpFoldResult> offsets,
      ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
      SmallVector<OpFoldResult> &resultSizes) const {
    auto attention = cast<AttentionOp>(op);
    resultOffsets = {offsets[0], b.getIndexAttr(0), b.getIndexAttr(0)};
    resultSizes = getResultSizes(attention, b);
    resultSizes[0] = sizes[0];
    return success();
  }
};

/// [B, T, D_out], for the destination that tiling creates when B or T is
/// dynamic.
struct AttentionReifyShapes
    : ReifyRankedShapedTypeOpInterface::ExternalModel<AttentionReifyShapes,
                                                      AttentionOp> {
  LogicalResult reifyResultShapes(Operation *op, OpBuilder &b,
                                  ReifiedRankedShapedTypeDims &shapes) const {
    shapes.push_back(getResultSizes(cast<AttentionOp>(op), b));
    return success();
  }
};
} // namespace

void mlir::mha::registerAttentionBatchTilingExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, MhaDialect *) {
    AttentionOp::attachInterface<AttentionBatchTiling, AttentionReifyShapes>(
        *context);
  });
}
