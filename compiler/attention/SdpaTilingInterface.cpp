//===- SdpaTilingInterface.cpp - mha.sdpa as a TilingInterface op ---------===//

#include "compiler/attention/SdpaTilingInterface.h"
#include "compiler/attention/AttentionMath.h"
#include "compiler/attention/AttentionPath.h"
#include "compiler/attention/AttentionTiling.h"
#include "dialects/MhaDialect.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/TilingInterface.h"

#include <optional>

using namespace mlir;
using namespace mlir::mha;

namespace {
thread_local const SdpaTiling *currentTiling = nullptr;

/// The rows of the query tile at `offset` of `size` rows: with a scope, the
/// same count as SdpaTiling's, whose static forms tileUsingSCF's
/// `min(BQ, T - offset)` does not fold to (T when T <= BQ, BQ when BQ
/// divides T): static shapes are what the vectorizer needs.
OpFoldResult getTileRows(OpBuilder &b, OpFoldResult offset, OpFoldResult size) {
  const SdpaTiling *tiling = SdpaTilingScope::getCurrent();
  if (!tiling || getConstantIntValue(size))
    return size;
  return tiling->getTileRows(b, offset);
}

/// B, T and S of `op`: the scope's, which were read once before the loops,
/// else read at the builder's insertion point.
AttentionSizes getSizes(SdpaOp op, OpBuilder &b) {
  if (const SdpaTiling *tiling = SdpaTilingScope::getCurrent())
    return {tiling->batch, tiling->numQueries, tiling->numKeys};
  return AttentionSizes::get(b, op.getLoc(), op.getQuery(), op.getKey(),
                             op.getValue(), op.getMask());
}

/// (batch, head, query, key): the keys are the softmax's reduction.
struct SdpaTilingInterface
    : TilingInterface::ExternalModel<SdpaTilingInterface, SdpaOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *) const {
    return {utils::IteratorType::parallel, utils::IteratorType::parallel,
            utils::IteratorType::parallel, utils::IteratorType::reduction};
  }

  SmallVector<Range> getIterationDomain(Operation *op, OpBuilder &b) const {
    auto sdpa = cast<SdpaOp>(op);
    AttentionSizes sizes = getSizes(sdpa, b);
    OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
    OpFoldResult heads =
        b.getIndexAttr(sdpa.getQuery().getType().getDimSize(1));
    return {{zero, sizes.batch, one},
            {zero, heads, one},
            {zero, sizes.queries, one},
            {zero, sizes.keys, one}};
  }

  /// One (batch, head) and every key per tile: the online softmax runs over
  /// one head's rows, and splitting the keys needs a merge of partial
  /// states (SplitKeys.cpp), not a tile of this op.
  FailureOr<TilingResult>
  getTiledImplementation(Operation *op, OpBuilder &b,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) const {
    auto sdpa = cast<SdpaOp>(op);
    if (!isConstantIntValue(sizes[0], 1) || !isConstantIntValue(sizes[1], 1))
      return op->emitOpError("expects tiles of one batch element and one head");
    if (!isConstantIntValue(offsets[3], 0))
      return op->emitOpError("expects tiles of every key");
    std::optional<SdpaTiling> own;
    const SdpaTiling *tiling = SdpaTilingScope::getCurrent();
    if (!tiling) {
      int64_t rows = getConstantIntValue(sizes[2]).value_or(kDefaultQueryTile);
      own.emplace(b, sdpa, rows, kDefaultKeyTile);
      tiling = &*own;
    }
    // Inside an scf.forall, the tile is written into its shared output,
    // which is this op's destination (tensor::getOrCreateDestinations).
    Value out;
    if (auto forall = dyn_cast<scf::ForallOp>(b.getBlock()->getParentOp()))
      if (forall.getRegionIterArgs().size() == 1 &&
          forall.getRegionIterArgs()[0].getType() == sdpa.getType())
        out = forall.getRegionIterArgs()[0];
    Location loc = op->getLoc();
    Value tile = tiling->buildTile(
        b, getValueOrCreateConstantIndexOp(b, loc, offsets[0]),
        getValueOrCreateConstantIndexOp(b, loc, offsets[1]), offsets[2],
        getTileRows(b, offsets[2], sizes[2]), out);
    return TilingResult{{tile.getDefiningOp()}, {tile}, {}};
  }

  LogicalResult
  getResultTilePosition(Operation *op, OpBuilder &b, unsigned resultNumber,
                        ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes,
                        SmallVector<OpFoldResult> &resultOffsets,
                        SmallVector<OpFoldResult> &resultSizes) const {
    auto sdpa = cast<SdpaOp>(op);
    resultOffsets = {offsets[0], offsets[1], offsets[2], b.getIndexAttr(0)};
    resultSizes = {sizes[0], sizes[1], getTileRows(b, offsets[2], sizes[2]),
                   b.getIndexAttr(sdpa.getType().getDimSize(3))};
    return success();
  }
};

/// [B, H, T, dv], for the destination that tiling creates when sizes are
/// dynamic.
struct SdpaReifyShapes
    : ReifyRankedShapedTypeOpInterface::ExternalModel<SdpaReifyShapes, SdpaOp> {
  LogicalResult reifyResultShapes(Operation *op, OpBuilder &b,
                                  ReifiedRankedShapedTypeDims &shapes) const {
    auto sdpa = cast<SdpaOp>(op);
    AttentionSizes sizes = getSizes(sdpa, b);
    shapes.push_back({sizes.batch, b.getIndexAttr(sdpa.getType().getDimSize(1)),
                      sizes.queries,
                      b.getIndexAttr(sdpa.getType().getDimSize(3))});
    return success();
  }
};
} // namespace

SdpaTilingScope::SdpaTilingScope(const SdpaTiling &tiling)
    : previous(currentTiling) {
  currentTiling = &tiling;
}

SdpaTilingScope::~SdpaTilingScope() { currentTiling = previous; }

const SdpaTiling *SdpaTilingScope::getCurrent() { return currentTiling; }

void mlir::mha::registerSdpaTilingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, MhaDialect *) {
    SdpaOp::attachInterface<SdpaTilingInterface, SdpaReifyShapes>(*context);
  });
}
