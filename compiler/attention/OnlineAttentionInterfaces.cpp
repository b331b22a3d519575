//===- OnlineAttentionInterfaces.cpp - Tiling mha.online_attention --------===//
//
// The interfaces that make `mha.online_attention` a tileable op: its
// TilingInterface (one reduction loop, the keys, whose tiles update the
// whole state) gives scf::tileUsingSCF the key loop of tileKeys, and
// linalg's AggregatedOpInterface decomposes one block into linalg ops
// (decomposeOnlineAttention), as IREE's `online_attention` does.
//
//===----------------------------------------------------------------------===//

#include "compiler/attention/OnlineSoftmax.h"
#include "compiler/attention/TileTensors.h"
#include "dialects/MhaDialect.h"
#include "dialects/MhaOnlineAttention.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;
using namespace mlir::mha;

namespace {
/// `mha.online_attention` as a TilingInterface op: its one loop is the keys,
/// a reduction into the destinations, so that a tile of keys updates the
/// whole state (FullReduction tiling makes the key loop, with the state its
/// loop-carried values).
struct OnlineAttentionTilingInterface
    : TilingInterface::ExternalModel<OnlineAttentionTilingInterface,
                                     OnlineAttentionOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *) const {
    return {utils::IteratorType::reduction};
  }

  SmallVector<Range> getIterationDomain(Operation *op, OpBuilder &b) const {
    auto update = cast<OnlineAttentionOp>(op);
    // The count that made the keys, except an `affine.apply`: tiling
    // composes that into each tile's size (`affine.min`), and peeling can
    // only prove the whole tiles' sizes against the loop's own upper bound,
    // so the count is then a `tensor.dim`.
    OpFoldResult keys = getKnownSizes(update.getKey())[0];
    auto keysValue = dyn_cast_if_present<Value>(keys);
    if (!keys ||
        (keysValue && keysValue.getDefiningOp<affine::AffineApplyOp>()))
      keys = tensor::DimOp::create(b, op->getLoc(), update.getKey(), 0)
                 .getResult();
    return {{b.getIndexAttr(0), keys, b.getIndexAttr(1)}};
  }

  /// The same update by the keys [offset, offset + size): views of the
  /// keys, values, Kᵀ, mask and score inputs, the first key's position moved;
  /// the destinations are the whole state (which tiling has made the loop's).
  FailureOr<TilingResult>
  getTiledImplementation(Operation *op, OpBuilder &b,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) const {
    auto update = cast<OnlineAttentionOp>(op);
    Location loc = op->getLoc();
    OpFoldResult offset = offsets[0], size = sizes[0];
    OpFoldResult zero = b.getIndexAttr(0);
    auto dim = [&](Value value, unsigned index) {
      return b.getIndexAttr(
          cast<RankedTensorType>(value.getType()).getDimSize(index));
    };
    SmallVector<Operation *> slices;
    auto sliceOf = [&](Value source, ArrayRef<OpFoldResult> sliceOffsets,
                       ArrayRef<OpFoldResult> sliceSizes) -> Value {
      Value result = slice(b, loc, source, sliceOffsets, sliceSizes);
      slices.push_back(result.getDefiningOp());
      return result;
    };
    // The views first, then the op that reads them.
    Value key = update.getKey(), value = update.getValue();
    Value keys = sliceOf(key, {offset, zero}, {size, dim(key, 1)});
    Value values = sliceOf(value, {offset, zero}, {size, dim(value, 1)});
    Value keysT, mask;
    SmallVector<Value> scoreInputs;
    if (Value whole = update.getKeysT())
      keysT = sliceOf(whole, {zero, offset}, {dim(whole, 0), size});
    if (Value whole = update.getMask())
      mask = sliceOf(whole, {zero, offset}, {getSize(b, loc, whole, 0), size});
    // An int8 cache's scales: one per key.
    Value keyScales, valueScales;
    if (Value whole = update.getKeyScales())
      keyScales = sliceOf(whole, {offset}, {size});
    if (Value whole = update.getValueScales())
      valueScales = sliceOf(whole, {offset}, {size});
    for (Value whole : update.getScoreInputs())
      scoreInputs.push_back(
          sliceOf(whole, {zero, offset}, {getSize(b, loc, whole, 0), size}));
    AffineExpr d0 = b.getAffineDimExpr(0), d1 = b.getAffineDimExpr(1);
    Value keyStart = getValueOrCreateConstantIndexOp(
        b, loc,
        affine::makeComposedFoldedAffineApply(b, loc, d0 + d1,
                                              {update.getKeyStart(), offset}));
    auto tiled = cast<OnlineAttentionOp>(b.clone(*op));
    tiled.getKeyMutable().assign(keys);
    tiled.getValueMutable().assign(values);
    if (keysT)
      tiled.getKeysTMutable().assign(keysT);
    if (mask)
      tiled.getMaskMutable().assign(mask);
    if (keyScales)
      tiled.getKeyScalesMutable().assign(keyScales);
    if (valueScales)
      tiled.getValueScalesMutable().assign(valueScales);
    tiled.getScoreInputsMutable().assign(scoreInputs);
    tiled.getKeyStartMutable().assign(keyStart);
    return TilingResult{
        {tiled}, SmallVector<Value>(tiled->getResults()), slices};
  }

  /// Every key tile writes the whole of every destination.
  LogicalResult
  getResultTilePosition(Operation *op, OpBuilder &b, unsigned resultNumber,
                        ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes,
                        SmallVector<OpFoldResult> &resultOffsets,
                        SmallVector<OpFoldResult> &resultSizes) const {
    Value init = cast<OnlineAttentionOp>(op).getDpsInits()[resultNumber];
    resultSizes = tensor::getMixedSizes(b, op->getLoc(), init);
    resultOffsets.assign(resultSizes.size(), b.getIndexAttr(0));
    return success();
  }
};

/// One block of `mha.online_attention` decomposes into linalg ops.
struct OnlineAttentionDecomposition
    : linalg::AggregatedOpInterface::ExternalModel<OnlineAttentionDecomposition,
                                                   OnlineAttentionOp> {
  FailureOr<SmallVector<Value>> decomposeOperation(Operation *op,
                                                   OpBuilder &b) const {
    return decomposeOnlineAttention(b, cast<OnlineAttentionOp>(op));
  }
};
} // namespace

void mlir::mha::registerOnlineAttentionTilingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, MhaDialect *) {
    OnlineAttentionOp::attachInterface<OnlineAttentionTilingInterface,
                                       OnlineAttentionDecomposition>(*context);
  });
}
