//===- SdpaTilingInterface.cpp - mha.sdpa as a TilingInterface op ---------===//

#include "compiler/attention/SdpaTilingInterface.h"
#include "compiler/attention/AttentionTiling.h"
#include "compiler/strategy/AttentionPath.h"
#include "compiler/strategy/AttentionStrategy.h"
#include "compiler/utils/AttentionMath.h"
#include "dialects/MhaDialect.h"
#include "dialects/MhaOnlineAttention.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

/// B, T and S of `op` (mha.sdpa or mha.sdpa_split): the scope's, which
/// were read once before the loops, else read at the builder's insertion
/// point.
template <typename OpT> AttentionSizes getSizes(OpT op, OpBuilder &b) {
  if (const SdpaTiling *tiling = SdpaTilingScope::getCurrent())
    return {tiling->batch, tiling->numQueries, tiling->numKeys};
  return AttentionSizes::get(b, op.getLoc(), op.getQuery(), op.getKey(),
                             op.getValue(), op.getMask());
}

/// The (batch, head, query) loops of `op`.
template <typename OpT>
SmallVector<Range> getQueryDomain(OpT op, OpBuilder &b) {
  AttentionSizes sizes = getSizes(op, b);
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  return {{zero, sizes.batch, one},
          {zero, b.getIndexAttr(op.getQuery().getType().getDimSize(1)), one},
          {zero, sizes.queries, one}};
}

/// The scope's tiling, else one of `op`'s own, built into `own`.
template <typename... Args>
const SdpaTiling &getTiling(std::optional<SdpaTiling> &own, OpBuilder &b,
                            Args &&...args) {
  if (const SdpaTiling *tiling = SdpaTilingScope::getCurrent())
    return *tiling;
  return own.emplace(b, std::forward<Args>(args)...);
}

/// A tile of one batch element and one head, which the online softmax
/// runs over (its rows are one head's).
LogicalResult checkOneHead(Operation *op, ArrayRef<OpFoldResult> sizes) {
  if (isConstantIntValue(sizes[0], 1) && isConstantIntValue(sizes[1], 1))
    return success();
  return op->emitOpError("expects tiles of one batch element and one head");
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
    SmallVector<Range> domain = getQueryDomain(sdpa, b);
    domain.push_back(
        {b.getIndexAttr(0), getSizes(sdpa, b).keys, b.getIndexAttr(1)});
    return domain;
  }

  /// One (batch, head) and every key per tile: the online softmax runs over
  /// one head's rows, and splitting the keys needs a merge of partial
  /// states (SdpaPartialReduction below), not a tile of this op.
  FailureOr<TilingResult>
  getTiledImplementation(Operation *op, OpBuilder &b,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) const {
    auto sdpa = cast<SdpaOp>(op);
    if (failed(checkOneHead(op, sizes)))
      return failure();
    if (!isConstantIntValue(offsets[3], 0))
      return op->emitOpError("expects tiles of every key");
    std::optional<SdpaTiling> own;
    AttentionTilesAttr tiles = getAttentionTiles(sdpa);
    const SdpaTiling *tiling =
        &getTiling(own, b, sdpa,
                   getConstantIntValue(sizes[2]).value_or(tiles.getQueryTile()),
                   tiles.getKeyTile());
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

/// The keys split into P ranges whose unnormalized states (acc, m, l) are
/// merged: tileUsingSCF's PartialReductionOuterParallel with P threads on
/// the key dimension (SplitKeys.cpp). LLVM 22 tiles no parallel dimension
/// with it, so every tile is one split of every (batch, head, query).
struct SdpaPartialReduction
    : PartialReductionOpInterface::ExternalModel<SdpaPartialReduction, SdpaOp> {
  /// acc [P, B, H, T, dv], m and l [P, B, H, T], from `sizes` (B, H, T, P).
  /// alloc_tensor rather than tensor.empty, which CSE would merge into one
  /// buffer for two outputs. Each split initializes its own slices.
  FailureOr<SmallVector<Value>> generateInitialTensorForPartialReduction(
      Operation *op, OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
      const SetVector<unsigned> &reductionDims) const {
    if (!isKeysOnly(reductionDims))
      return failure();
    auto sdpa = cast<SdpaOp>(op);
    SmallVector<OpFoldResult> partSizes = {sizes[kSdpaKeyDim], sizes[0],
                                           sizes[1], sizes[2]};
    auto alloc = [&](ArrayRef<OpFoldResult> shape) -> Value {
      auto [staticShape, dynamicSizes] = decomposeMixedValues(shape);
      return bufferization::AllocTensorOp::create(
          b, loc, RankedTensorType::get(staticShape, b.getF32Type()),
          dynamicSizes);
    };
    SmallVector<OpFoldResult> accSizes = partSizes;
    accSizes.push_back(b.getIndexAttr(sdpa.getType().getDimSize(3)));
    return SmallVector<Value>{alloc(accSizes), alloc(partSizes),
                              alloc(partSizes)};
  }

  /// Split `splitReductionIvs[0]` of P (the parts' leading size): an
  /// mha.sdpa_split into this split's slices of the parts, whose own range
  /// of whole key blocks (SplitKeys.cpp) replaces the key `offsets` and
  /// `sizes` of the tile, equal parts of S. SplitKeys.cpp then tiles it
  /// over (batch, head, query tile).
  FailureOr<TilingResult>
  tileToPartialReduction(Operation *op, OpBuilder &b, Location loc,
                         ReductionTilingStrategy strategy, ValueRange init,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes,
                         const SetVector<unsigned> &reductionDims,
                         ArrayRef<OpFoldResult> splitReductionIvs) const {
    auto sdpa = cast<SdpaOp>(op);
    if (strategy != ReductionTilingStrategy::PartialReductionOuterParallel ||
        !isKeysOnly(reductionDims))
      return op->emitOpError("expects the keys split into parallel ranges");
    for (unsigned dim : {0u, 1u, 2u})
      if (!isConstantIntValue(offsets[dim], 0))
        return op->emitOpError("expects every batch element, head and query "
                               "in each key split");
    int64_t splits = cast<RankedTensorType>(init[0].getType()).getDimSize(0);
    if (ShapedType::isDynamic(splits))
      return op->emitOpError("expects a static number of key splits");
    std::optional<SdpaTiling> own;
    AttentionTilesAttr tiles = getAttentionTiles(sdpa);
    const SdpaTiling *tiling =
        &getTiling(own, b, sdpa, tiles.getQueryTile(), tiles.getKeyTile());
    // This split's [B, H, T, dv] and [B, H, T] of the parts [P, ...].
    SmallVector<Value> parts;
    for (auto [i, partial] : llvm::enumerate(init)) {
      SmallVector<OpFoldResult> partOffsets, partSizes;
      (void)getPartialResultTilePosition(op, b, i, strategy, offsets, sizes,
                                         reductionDims, splitReductionIvs,
                                         partOffsets, partSizes);
      auto partType = cast<RankedTensorType>(partial.getType());
      auto sliceType = RankedTensorType::get(partType.getShape().drop_front(),
                                             partType.getElementType());
      SmallVector<OpFoldResult> strides(partSizes.size(), b.getIndexAttr(1));
      parts.push_back(tensor::ExtractSliceOp::create(
          b, loc, sliceType, partial, partOffsets, partSizes, strides));
    }
    auto split = SdpaSplitOp::create(
        b, loc,
        TypeRange{parts[0].getType(), parts[1].getType(), parts[2].getType()},
        sdpa.getQuery(), tiling->key, tiling->value, sdpa.getMask(),
        sdpa.getPositions(), sdpa.getAttnBias(), sdpa.getAlibiSlopes(),
        tiling->keyScales, tiling->valueScales,
        getValueOrCreateConstantIndexOp(b, loc, splitReductionIvs[0]),
        b.getI64IntegerAttr(splits), b.getI64IntegerAttr(tiling->keyTile),
        b.getF64FloatAttr(tiling->scale), sdpa.getWindowAttr(),
        sdpa.getSoftcapAttr(), tiling->causal ? b.getUnitAttr() : nullptr,
        tiling->causalBottomRight ? b.getUnitAttr() : nullptr, parts[0],
        parts[1], parts[2], sdpa->getNumRegions());
    if (tiling->scoreMod)
      ScoreSteps::of(sdpa).cloneScoreModInto(split.getScoreMod().front());
    // The split's query tiles are the op's (getSplitQueryTile).
    MhaDialect::TilesAttrHelper(b.getContext()).setAttr(split, tiles);
    return TilingResult{{split}, SmallVector<Value>(split->getResults()), {}};
  }

  /// combineKeySplits: the splits added in order, so the result does not
  /// depend on which thread computed which.
  FailureOr<MergeResult>
  mergeReductions(Operation *op, OpBuilder &b, Location loc,
                  ValueRange partialReduce,
                  const SetVector<unsigned> &reductionDims) const {
    auto sdpa = cast<SdpaOp>(op);
    AttentionSizes sizes = getSizes(sdpa, b);
    SmallVector<OpFoldResult> resultSizes = {
        sizes.batch, b.getIndexAttr(sdpa.getType().getDimSize(1)),
        sizes.queries, b.getIndexAttr(sdpa.getType().getDimSize(3))};
    Value init = tensor::EmptyOp::create(b, loc, resultSizes, b.getF32Type());
    // The splits' states are over the modified scores (scale 1) where the
    // op has softcap, ALiBi, a bias or a score_mod region, as each tile's
    // are (OnlineSoftmax.h).
    ScoreSteps steps = ScoreSteps::of(sdpa);
    Value merged = combineKeySplits(
        b, loc, partialReduce[0], partialReduce[1], partialReduce[2], init,
        sdpa.getEffectiveScale(), steps.modifiesScores(), steps.sinks);
    return MergeResult{{merged.getDefiningOp()}, {merged}};
  }

  /// Split p's slice of each part: [p, 0, 0, 0(, 0)] of [1, B, H, T(, dv)].
  LogicalResult getPartialResultTilePosition(
      Operation *op, OpBuilder &b, unsigned resultNumber,
      ReductionTilingStrategy strategy, ArrayRef<OpFoldResult> offsets,
      ArrayRef<OpFoldResult> sizes, const SetVector<unsigned> &reductionDims,
      ArrayRef<OpFoldResult> splitReductionIvs,
      SmallVector<OpFoldResult> &resultOffsets,
      SmallVector<OpFoldResult> &resultSizes) const {
    OpFoldResult zero = b.getIndexAttr(0);
    resultOffsets = {splitReductionIvs[0], zero, zero, zero};
    resultSizes = {b.getIndexAttr(1), sizes[0], sizes[1], sizes[2]};
    if (resultNumber == 0) {
      resultOffsets.push_back(zero);
      resultSizes.push_back(
          b.getIndexAttr(cast<SdpaOp>(op).getType().getDimSize(3)));
    }
    return success();
  }

private:
  static bool isKeysOnly(const SetVector<unsigned> &reductionDims) {
    return reductionDims.size() == 1 && reductionDims[0] == kSdpaKeyDim;
  }
};

/// The query tile of `split`: its `mha.tiles`, which the mha.sdpa it splits
/// hands it (SdpaPartialReduction), else its function's record
/// (getRecordedAttentionQueryTile), else the strategy's for the default
/// target description, as getAttentionTiles does for an mha.sdpa: never
/// this machine's, so that the IR does not depend on where it is compiled.
static int64_t getSplitQueryTile(SdpaSplitOp split) {
  return getRecordedAttentionQueryTile(split).value_or(
      deriveCodegenStrategy(TargetDescription()).attentionQueryTile);
}

/// mha.sdpa_split over (batch, head, query): a tile of one batch element
/// and one head is its queries' state over the split's key blocks
/// (SdpaTiling::buildSplitTile), mha.online_attention tiled over the keys.
struct SdpaSplitTilingInterface
    : TilingInterface::ExternalModel<SdpaSplitTilingInterface, SdpaSplitOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *) const {
    return SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel);
  }

  SmallVector<Range> getIterationDomain(Operation *op, OpBuilder &b) const {
    return getQueryDomain(cast<SdpaSplitOp>(op), b);
  }

  FailureOr<TilingResult>
  getTiledImplementation(Operation *op, OpBuilder &b,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) const {
    auto split = cast<SdpaSplitOp>(op);
    if (failed(checkOneHead(op, sizes)))
      return failure();
    // Its key blocks are the op's `key_block`; its query tile the tile's
    // rows where static, else the split's own (getSplitQueryTile).
    std::optional<SdpaTiling> own;
    const SdpaTiling *tiling = &getTiling(
        own, b, split,
        getConstantIntValue(sizes[2]).value_or(getSplitQueryTile(split)));
    Location loc = op->getLoc();
    OpFoldResult rows = getTileRows(b, offsets[2], sizes[2]);
    OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
    SmallVector<OpFoldResult> rowOffsets = {offsets[0], offsets[1], offsets[2]};
    SmallVector<OpFoldResult> rowSizes = {one, one, rows};
    SmallVector<OpFoldResult> accOffsets = rowOffsets, accSizes = rowSizes;
    accOffsets.push_back(zero);
    accSizes.push_back(b.getIndexAttr(tiling->valueDim));
    SmallVector<Value> states = tiling->buildSplitTile(
        b, split.getSplit(), split.getSplits(),
        getValueOrCreateConstantIndexOp(b, loc, offsets[0]),
        getValueOrCreateConstantIndexOp(b, loc, offsets[1]), offsets[2], rows,
        tiling->sliceTrailing(b, split.getAcc(), accOffsets, accSizes, 2),
        tiling->sliceTrailing(b, split.getMax(), rowOffsets, rowSizes, 1),
        tiling->sliceTrailing(b, split.getSum(), rowOffsets, rowSizes, 1));
    SmallVector<Operation *> tiled;
    for (Value state : states)
      if (Operation *producer = state.getDefiningOp())
        tiled.push_back(producer);
    return TilingResult{tiled, states, {}};
  }

  LogicalResult
  getResultTilePosition(Operation *op, OpBuilder &b, unsigned resultNumber,
                        ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes,
                        SmallVector<OpFoldResult> &resultOffsets,
                        SmallVector<OpFoldResult> &resultSizes) const {
    auto split = cast<SdpaSplitOp>(op);
    resultOffsets = {offsets[0], offsets[1], offsets[2]};
    resultSizes = {sizes[0], sizes[1], getTileRows(b, offsets[2], sizes[2])};
    if (resultNumber == 0) {
      resultOffsets.push_back(b.getIndexAttr(0));
      resultSizes.push_back(
          b.getIndexAttr(split.getValue().getType().getDimSize(3)));
    }
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
    SdpaOp::attachInterface<SdpaTilingInterface, SdpaPartialReduction,
                            SdpaReifyShapes>(*context);
    SdpaSplitOp::attachInterface<SdpaSplitTilingInterface>(*context);
  });
}
