//===- SplitKeys.cpp - Attention with too few query tiles: split the keys -===//
//
// When B·H·⌈T/BQ⌉ is below the number of key splits P (decoding one token of
// one head, say), the query tiles alone cannot keep the cores busy. This
// pattern also splits the keys into P ranges of whole key blocks: each range
// runs the online softmax into its unnormalized state (acc, m, l), and
// `combineKeySplits` merges the P states in split order. P is a compile-time
// option, not the thread count, so the result does not depend on the thread
// count; with S static, P is at most the number of key blocks. Top-left
// causal attention is left to the query tiles: with T ≤ BQ its queries see
// only the first T keys. Bottom-right causal attention is split (decoding:
// the last query sees every key): each range stops at the tile's causal end
// T' + S - T (T' the end of the tile) and tests the diagonal in every block.
//
// The `scf.forall` over the splits and the merge are scf::tileUsingSCF's
// (PartialReductionOuterParallel, P threads on the key dimension) through
// mha.sdpa's `PartialReductionOpInterface` (SdpaTilingInterface.cpp); the
// split's state is `SdpaTiling::buildKeySplit` below, and the key loop of
// each range the same `mha.online_attention` tiled by scf::tileUsingSCF as
// in the query tiles (OnlineSoftmax.h). What LLVM 22 lacks, and what is
// ours instead:
// - tileUsingSCF tiles no parallel dimension together with a partial
//   reduction ("tiling parallel dimensions is not supported with partial
//   reduction tiling strategies"), so its forall is over the splits alone
//   and each split is handed every (batch, head, query). The query tiles
//   within a split are an scf.for nest (scf::buildLoopNest) in
//   buildKeySplit: mha.sdpa's TilingInterface cannot make it, since its
//   tile is the normalized output, one result, not the three partial
//   states (that would take an op for the partial states of a key range
//   over (batch, head, query), IREE's batched online_attention; ours is
//   one query tile of one head). A static OpenMP schedule of the split
//   forall still gives each thread whole splits, as before.
// - The ranges are not upstream's equal parts of S (the offsets and sizes
//   tileUsingSCF computes for the key dimension): a range is whole key
//   blocks, [p·chunk, min(S, (p + 1)·chunk)) with chunk = ⌈⌈S/BK⌉/P⌉·BK, and
//   with `positions` (a KV cache) the keys of sequence b end at
//   positions[b] + T, known at run time per batch element: buildKeySplit
//   computes them from the split index (`splitReductionIvs`).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/attention/AttentionPath.h"
#include "compiler/attention/AttentionTiling.h"
#include "compiler/attention/OnlineSoftmax.h"
#include "compiler/attention/SdpaTilingInterface.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::mha;

namespace {
struct SplitKeysSdpa : OpRewritePattern<SdpaOp> {
  SplitKeysSdpa(MLIRContext *context, const MhaTileAttentionOptions &options)
      : OpRewritePattern(context, /*benefit=*/2), queryTile(options.queryTile),
        keyTile(options.keyTile), maxSplits(options.keySplits),
        mode(options.attention) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    bool bottomRight = op.getCausal() && op.getCausalBottomRight();
    bool positions = op.getCausal() && op.getPositions();
    if (!SdpaTiling::isF32(op) ||
        (op.getCausal() && !bottomRight && !positions) || maxSplits < 2)
      return rewriter.notifyMatchFailure(op, "no key splits");
    AttentionShape shape = *getAttentionShape(op);
    if (!chooseAttentionPath(shape, mode).fused)
      return rewriter.notifyMatchFailure(op, "the rule picks decomposed");
    if (ShapedType::isDynamic(shape.batch) ||
        ShapedType::isDynamic(shape.queries))
      return rewriter.notifyMatchFailure(op, "dynamic query tiles");
    // Sizes come from the graph, which may be hostile: every product is
    // checked (a product that overflows is certainly not "few tiles").
    std::optional<int64_t> queryTiles =
        llvm::checkedMul<int64_t>(shape.batch, shape.heads);
    if (queryTiles)
      queryTiles = llvm::checkedMul<int64_t>(
          *queryTiles, llvm::divideCeil(shape.queries, queryTile));
    if (!queryTiles || *queryTiles >= maxSplits)
      return rewriter.notifyMatchFailure(op, "enough query tiles");
    // A range has at least one key block: more ranges than blocks would
    // only be empty ranges, each with its own partial output to merge.
    int64_t splits = maxSplits;
    if (!ShapedType::isDynamic(shape.keys))
      splits = std::min(splits, int64_t(llvm::divideCeil(shape.keys, keyTile)));
    if (splits < 2)
      return rewriter.notifyMatchFailure(op, "one key block");
    // The partial outputs, [P, B, H, T, dv] f32: the result's size times P,
    // which a static result near the int64 limit would overflow. Then the
    // query tiles alone do the work.
    std::optional<int64_t> partsBytes = int64_t(4) * splits;
    for (int64_t size : {shape.batch, shape.heads, shape.queries,
                         int64_t(op.getType().getDimSize(3))})
      if (partsBytes)
        partsBytes = llvm::checkedMul<int64_t>(*partsBytes, size);
    if (!partsBytes)
      return rewriter.notifyMatchFailure(op, "the partial outputs' size "
                                             "overflows");

    SdpaTiling tiling(rewriter, op, queryTile, keyTile);
    OpFoldResult zero = rewriter.getIndexAttr(0);
    scf::SCFTilingOptions options;
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
        .setReductionTilingStrategy(
            ReductionTilingStrategy::PartialReductionOuterParallel)
        .setReductionDims({kSdpaKeyDim})
        .setNumThreads({zero, zero, zero, rewriter.getIndexAttr(splits)});
    FailureOr<scf::SCFTilingResult> tiled = [&] {
      SdpaTilingScope scope(tiling);
      return scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
    }();
    if (failed(tiled))
      return rewriter.notifyMatchFailure(op, "could not split the keys");
    // tileUsingSCF's key offset and size of each split, equal parts of S,
    // where buildKeySplit chose whole blocks: unused.
    auto forall = cast<scf::ForallOp>(tiled->loops.front());
    for (Operation &nested :
         llvm::make_early_inc_range(llvm::reverse(*forall.getBody())))
      if (isOpTriviallyDead(&nested))
        rewriter.eraseOp(&nested);
    rewriter.replaceOp(op, tiled->replacements);
    tiling.eraseDeadWidenings(rewriter);
    return success();
  }

  int64_t queryTile, keyTile, maxSplits;
  AttentionMode mode;
};
} // namespace

SmallVector<Value> SdpaTiling::buildKeySplit(OpBuilder &builder, Value split,
                                             int64_t splits,
                                             ValueRange parts) const {
  AffineExpr d0 = builder.getAffineDimExpr(0), d1 = builder.getAffineDimExpr(1);
  MLIRContext *context = builder.getContext();
  AffineMap pair = AffineMap::get(2, 0, {d0, d1}, context);
  bool bottomRight = causal && causalBottomRight;
  OpFoldResult zero = builder.getIndexAttr(0), one = builder.getIndexAttr(1),
               dv = builder.getIndexAttr(valueDim);

  // The state of query tile `tileIndex` of head h of batch element b,
  // written into its rows of this split's parts.
  auto buildQueryTile = [&](Value b, Value h, Value tileIndex,
                            ValueRange outs) -> scf::ValueVector {
    // Split p takes whole key blocks [p·chunk, min(S, (p + 1)·chunk)).
    // With positions, the keys of sequence b end at positions[b] + T (the
    // cache's capacity after that is never read): the splits share those.
    Value position;
    OpFoldResult keysEnd = numKeys;
    if (positions) {
      position = loadPosition(builder, b);
      keysEnd = getPositionKeyEnd(builder, position);
    }
    OpFoldResult chunk = apply(
        builder, d0.ceilDiv(keyTile).ceilDiv(splits) * keyTile, {keysEnd});
    OpFoldResult begin = apply(builder, d0 * d1, {split, chunk});
    OpFoldResult end = affine::makeComposedFoldedAffineMin(
        builder, loc, pair, {keysEnd, apply(builder, d0 + d1, {begin, chunk})});

    OpFoldResult queryStart = apply(builder, d0 * queryTile, {tileIndex});
    OpFoldResult rows = getTileRows(builder, queryStart);
    AttentionTile tile = sliceTile(builder, b, h, queryStart, rows);
    if (position)
      tile.causalOffset = position;
    SmallVector<OpFoldResult> rowOffsets = {zero, b, h, queryStart};
    SmallVector<OpFoldResult> rowSizes = {one, one, one, rows};
    SmallVector<OpFoldResult> accOffsets = rowOffsets, accSizes = rowSizes;
    accOffsets.push_back(zero);
    accSizes.push_back(dv);

    OnlineSoftmaxBuilder softmax(builder, loc, tile, queryTile, keyTile);
    // The state lives in this tile's rows of the split's parts.
    OnlineSoftmaxState state = softmax.initialize(
        sliceTrailing(builder, outs[0], accOffsets, accSizes, 2),
        sliceTrailing(builder, outs[1], rowOffsets, rowSizes, 1),
        sliceTrailing(builder, outs[2], rowOffsets, rowSizes, 1));
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

    auto insert = [&](Value source, Value dest, ArrayRef<OpFoldResult> offsets,
                      ArrayRef<OpFoldResult> sizes) -> Value {
      SmallVector<OpFoldResult> strides(sizes.size(), one);
      return tensor::InsertSliceOp::create(builder, loc, source, dest, offsets,
                                           sizes, strides);
    };
    return {insert(state.acc, outs[0], accOffsets, accSizes),
            insert(state.max, outs[1], rowOffsets, rowSizes),
            insert(state.sum, outs[2], rowOffsets, rowSizes)};
  };

  // The split's own loops over (batch, head, query tile), which
  // tileUsingSCF does not tile with the keys (file header): only those
  // with more than one iteration, a single one is index 0 (decoding one
  // sequence of one head: no loop, and static offsets).
  OpFoldResult extents[] = {batch, builder.getIndexAttr(heads),
                            getNumQueryTiles(builder)};
  SmallVector<Value> lbs, ubs, steps;
  for (OpFoldResult extent : extents) {
    if (isConstantIntValue(extent, 1))
      continue;
    lbs.push_back(getValueOrCreateConstantIndexOp(builder, loc, zero));
    ubs.push_back(getValueOrCreateConstantIndexOp(builder, loc, extent));
    steps.push_back(getValueOrCreateConstantIndexOp(builder, loc, one));
  }
  // (buildLoopNest builds the body with `builder` itself.)
  scf::LoopNest nest = scf::buildLoopNest(
      builder, loc, lbs, ubs, steps, parts,
      [&](OpBuilder &, Location, ValueRange ivs, ValueRange outs) {
        SmallVector<Value> indices;
        auto iv = ivs.begin();
        for (OpFoldResult extent : extents)
          indices.push_back(
              isConstantIntValue(extent, 1)
                  ? Value(arith::ConstantIndexOp::create(builder, loc, 0))
                  : *iv++);
        return buildQueryTile(indices[0], indices[1], indices[2], outs);
      });
  return nest.results;
}

void mlir::mha::populateSplitKeysPatterns(
    RewritePatternSet &patterns, const MhaTileAttentionOptions &options) {
  patterns.add<SplitKeysSdpa>(patterns.getContext(), options);
}
