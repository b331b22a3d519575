//===- SplitKeys.cpp - Attention with too few query tiles: split the keys -===//
//
// When B·H·⌈T/BQ⌉ is below the number of key splits P (decoding one token of
// one head, say), the query tiles alone cannot keep the cores busy. This
// pattern also splits the keys into P ranges of whole key blocks: each range
// runs the online softmax into its unnormalized state (acc, m, l), and
// `combineKeySplits` merges the P states in split order. P is the op's
// `key_splits` (mha.tiles, chosen by mha-strategy from an option),
// not the thread count, so the result does not depend on the thread count;
// with S static, P is at most the number of key blocks. Top-left
// causal attention is left to the query tiles: with T ≤ BQ its queries see
// only the first T keys. Bottom-right causal attention is split (decoding:
// the last query sees every key): each range stops at the tile's causal end
// T' + S - T (T' the end of the tile) and tests the diagonal in every block.
//
// The loops are scf::tileUsingSCF's, twice:
// - the `scf.forall` over the splits and the merge:
//   PartialReductionOuterParallel with P threads on the key dimension,
//   through mha.sdpa's `PartialReductionOpInterface`
//   (SdpaTilingInterface.cpp), whose split is an `mha.sdpa_split`, the
//   unnormalized state of every (batch, head, query) over the split's keys;
// - the `scf.for` loops over (batch, head, query tile) within a split: that
//   op's `TilingInterface`, each tile `SdpaTiling::buildSplitTile` below,
//   the same `mha.online_attention` tiled over the keys as in the query
//   tiles (OnlineSoftmax.h).
// Two steps because LLVM 22's tileUsingSCF tiles no parallel dimension
// together with a partial reduction ("tiling parallel dimensions is not
// supported with partial reduction tiling strategies"), and mha.sdpa's own
// tile is the normalized output, not the three partial states (IREE has
// the same split between `attention` and a batched `online_attention`). A
// static OpenMP schedule of the split forall gives each thread whole
// splits. What is ours: the ranges are not upstream's equal parts of S (the
// offsets and sizes tileUsingSCF computes for the key dimension): a range
// is whole key blocks, [p·chunk, min(S, (p + 1)·chunk)) with chunk =
// ⌈⌈S/BK⌉/P⌉·BK, and with `positions` (a KV cache) the keys of sequence b
// end at positions[b] + T, known at run time per batch element:
// buildSplitTile computes them from the split index.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/attention/AttentionTiling.h"
#include "compiler/attention/OnlineSoftmax.h"
#include "compiler/attention/SdpaTilingInterface.h"
#include "compiler/strategy/AttentionPath.h"
#include "compiler/strategy/AttentionStrategy.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::mha;

namespace {
struct SplitKeysSdpa : OpRewritePattern<SdpaOp> {
  SplitKeysSdpa(MLIRContext *context, const MhaTileAttentionOptions &options)
      : OpRewritePattern(context, /*benefit=*/2), mode(options.attention) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    // The strategy's ranges (mha-strategy), where the op can be
    // split into that many (tiles written in a graph are not trusted).
    AttentionTilesAttr tiles = getAttentionTiles(op);
    int64_t queryTile = tiles.getQueryTile(), keyTile = tiles.getKeyTile();
    int64_t splits =
        std::min(tiles.getKeySplits(), getMaxKeySplits(op, keyTile));
    if (splits < 2)
      return rewriter.notifyMatchFailure(op, "no key splits");
    if (!chooseAttentionPath(*getAttentionShape(op), mode).fused)
      return rewriter.notifyMatchFailure(op, "the rule picks decomposed");

    SdpaTiling tiling(rewriter, op, queryTile, keyTile);
    OpFoldResult zero = rewriter.getIndexAttr(0);
    scf::SCFTilingOptions options;
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
        .setReductionTilingStrategy(
            ReductionTilingStrategy::PartialReductionOuterParallel)
        .setReductionDims({kSdpaKeyDim})
        .setNumThreads({zero, zero, zero, rewriter.getIndexAttr(splits)});
    SdpaTilingScope scope(tiling);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(tiled))
      return rewriter.notifyMatchFailure(op, "could not split the keys");
    // Each split's mha.sdpa_split, tiled over (batch, head, query tile)
    // into scf.for loops; a dimension of one tile gets no loop.
    SdpaSplitOp split;
    tiled->loops.front()->walk([&](SdpaSplitOp nested) { split = nested; });
    if (!split)
      return rewriter.notifyMatchFailure(op, "no key split to tile");
    auto tileSize = [&](OpFoldResult extent, int64_t size) {
      std::optional<int64_t> known = getConstantIntValue(extent);
      return rewriter.getIndexAttr(known && *known <= size ? 0 : size);
    };
    SmallVector<OpFoldResult> tileSizes = {
        tileSize(tiling.batch, 1),
        tileSize(rewriter.getIndexAttr(tiling.heads), 1),
        tileSize(tiling.numQueries, queryTile)};
    rewriter.setInsertionPoint(split);
    auto splitTiling = cast<TilingInterface>(split.getOperation());
    SmallVector<Value> states;
    if (llvm::all_of(tileSizes, isZeroInteger)) {
      // One tile (decoding one sequence of one head), which tileUsingSCF
      // would leave as it is: its implementation, written into the
      // destinations.
      SmallVector<Range> domain = splitTiling.getIterationDomain(rewriter);
      SmallVector<OpFoldResult> offsets, sizes;
      for (const Range &range : domain) {
        offsets.push_back(range.offset);
        sizes.push_back(range.size);
      }
      FailureOr<TilingResult> tile =
          splitTiling.getTiledImplementation(rewriter, offsets, sizes);
      if (failed(tile))
        return rewriter.notifyMatchFailure(op, "could not build a key split");
      for (auto [i, state] : llvm::enumerate(tile->tiledValues)) {
        SmallVector<OpFoldResult> stateOffsets, stateSizes;
        (void)splitTiling.getResultTilePosition(rewriter, i, offsets, sizes,
                                                stateOffsets, stateSizes);
        SmallVector<OpFoldResult> strides(stateSizes.size(),
                                          rewriter.getIndexAttr(1));
        states.push_back(tensor::InsertSliceOp::create(
            rewriter, op.getLoc(), state, split.getDpsInits()[i], stateOffsets,
            stateSizes, strides));
      }
    } else {
      scf::SCFTilingOptions splitOptions;
      splitOptions.setLoopType(scf::SCFTilingOptions::LoopType::ForOp)
          .setTileSizes(tileSizes);
      FailureOr<scf::SCFTilingResult> splitTiled =
          scf::tileUsingSCF(rewriter, splitTiling, splitOptions);
      if (failed(splitTiled))
        return rewriter.notifyMatchFailure(op, "could not tile a key split");
      states = splitTiled->replacements;
    }
    rewriter.replaceOp(split, states);
    // tileUsingSCF's key offset and size of each split, equal parts of S,
    // where buildSplitTile chooses whole blocks, are left unused.
    tiling.replaceByTiles(rewriter, op,
                          cast<scf::ForallOp>(tiled->loops.front()),
                          tiled->replacements);
    return success();
  }

  AttentionMode mode;
};
} // namespace

SmallVector<Value> SdpaTiling::buildSplitTile(OpBuilder &builder, Value split,
                                              int64_t splits, Value b, Value h,
                                              OpFoldResult queryStart,
                                              OpFoldResult rows, Value acc,
                                              Value max, Value sum) const {
  AffineExpr d0 = builder.getAffineDimExpr(0), d1 = builder.getAffineDimExpr(1);
  MLIRContext *context = builder.getContext();
  AffineMap pair = AffineMap::get(2, 0, {d0, d1}, context);
  bool bottomRight = causal && causalBottomRight;

  // Split p takes whole key blocks [p·chunk, min(S, (p + 1)·chunk)). With
  // positions, the keys of sequence b end at positions[b] + T (the cache's
  // capacity after that is never read): the splits share those.
  Value position;
  OpFoldResult keysEnd = numKeys;
  if (positions) {
    position = loadPosition(builder, b);
    keysEnd = getPositionKeyEnd(builder, position);
  }
  // With a window, the splits share the keys from the tile's window on:
  // the blocks before it are seen by no query of the tile.
  OpFoldResult keysBegin = builder.getIndexAttr(0);
  if (window) {
    OpFoldResult diagonal = queryStart;
    if (position)
      diagonal = apply(builder, d0 + d1, {queryStart, position});
    else if (causalOffset)
      diagonal = apply(builder, d0 + d1,
                       {queryStart, getAsOpFoldResult(causalOffset)});
    keysBegin = affine::makeComposedFoldedAffineMin(
        builder, loc, pair, {getWindowBegin(builder, diagonal), keysEnd});
  }
  OpFoldResult chunk =
      apply(builder, (d0 - d1).ceilDiv(keyTile).ceilDiv(splits) * keyTile,
            {keysEnd, keysBegin});
  OpFoldResult begin = apply(builder, d0 * d1 + builder.getAffineDimExpr(2),
                             {split, chunk, keysBegin});
  OpFoldResult end = affine::makeComposedFoldedAffineMin(
      builder, loc, pair, {keysEnd, apply(builder, d0 + d1, {begin, chunk})});

  AttentionTile tile = sliceTile(builder, b, h, queryStart, rows);
  if (position)
    tile.causalOffset = position;
  OnlineSoftmaxBuilder softmax(builder, loc, tile, queryTile, keyTile);
  OnlineSoftmaxState state = softmax.initialize(acc, max, sum);
  bool fullKeyBlocks = hasFullKeyBlocks(false);
  bool causalBlocks = false;
  if (position) {
    // Each range ends where it ends at run time: whole blocks, then the
    // tail (iterateKeyRange). One query sees exactly the keys below
    // positions[b] + 1; more test the diagonal.
    state = softmax.iterateKeyRange(
        state, begin, end, /*causal=*/!isConstantIntValue(numQueries, 1));
  } else {
    OpFoldResult rangeEnd = end;
    // Decoding (T = 1): the one query is the last and sees every key, so
    // the ranges are those of attention without causality.
    if (bottomRight && !isConstantIntValue(numQueries, 1)) {
      // The keys after the tile's last diagonal key are masked for every
      // row: the range stops there, and the diagonal is tested in every
      // block. A range that starts after it runs no block, and its state
      // (m = -inf, l = 0) weighs 0 in the merge.
      OpFoldResult causalEnd =
          apply(builder, d0 + d1 + builder.getAffineDimExpr(2),
                {queryStart, rows, getAsOpFoldResult(causalOffset)});
      rangeEnd = affine::makeComposedFoldedAffineMin(builder, loc, pair,
                                                     {end, causalEnd});
      causalBlocks = true;
      fullKeyBlocks = false;
    }
    state = softmax.iterateKeyBlocks(state, begin, rangeEnd, causalBlocks,
                                     fullKeyBlocks);
  }
  return {state.acc, state.max, state.sum};
}

void mlir::mha::populateSplitKeysPatterns(
    RewritePatternSet &patterns, const MhaTileAttentionOptions &options) {
  patterns.add<SplitKeysSdpa>(patterns.getContext(), options);
}
