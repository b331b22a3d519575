//===- AttentionBatchTiling.cpp - mha.attention tiled over its batch ------===//

#include "compiler/graph/AttentionBatchTiling.h"
#include "dialects/MhaDialect.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;
using namespace mlir::mha;

namespace {
/// True if `mask` has one row per sequence; false if it is `[1, T, S]`,
/// shared by a batch of more than one.
bool isPerSequence(AttentionOp op, Value mask) {
  return cast<RankedTensorType>(mask.getType()).getDimSize(0) ==
         op.getQuery().getType().getDimSize(0);
}

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
  /// on the slices of the query, kv and a per-sequence mask.
  FailureOr<TilingResult>
  getTiledImplementation(Operation *op, OpBuilder &b,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) const {
    auto attention = cast<AttentionOp>(op);
    Location loc = op->getLoc();
    SmallVector<Operation *> slices;
    auto slice = [&](Value value) {
      Value sliced = sliceBatch(b, loc, value, offsets[0], sizes[0]);
      slices.push_back(sliced.getDefiningOp());
      return sliced;
    };
    Value query = slice(attention.getQuery());
    Value kv = attention.getKv() ? slice(attention.getKv()) : Value();
    Value mask = attention.getMask();
    if (mask && isPerSequence(attention, mask))
      mask = slice(mask);
    auto tiled = cast<AttentionOp>(b.clone(*op));
    tiled.getQueryMutable().assign(query);
    if (kv)
      tiled.getKvMutable().assign(kv);
    if (mask)
      tiled.getMaskMutable().assign(mask);
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
