//===- SplitKeys.cpp - Attention with too few query tiles: split the keys -===//
//
// When B·H·⌈T/BQ⌉ is below the number of key splits P (decoding one token of
// one head, say), the query tiles alone cannot keep the cores busy. This
// pattern also splits the keys into P ranges of whole key blocks: an
// `scf.forall` over (split, batch, head, query tile) runs the online softmax
// of each range and writes its unnormalized state (acc, m, l), and
// `combineKeySplits` merges the P states in split order. P is a compile-time
// option, not the thread count, so the result does not depend on the thread
// count; with S static, P is at most the number of key blocks. Top-left
// causal attention is left to the query tiles: with T ≤ BQ its queries see
// only the first T keys. Bottom-right causal attention is split (decoding:
// the last query sees every key): each range stops at the tile's causal end
// T' + S - T (T' the end of the tile) and tests the diagonal in every block.
// The key loop of each range is the same `mha.online_attention` tiled by
// scf::tileUsingSCF as in the query tiles (OnlineSoftmax.h); the forall over
// (split, batch, head, query tile) and the merge are still built here:
// `PartialReductionOpInterface` on mha.sdpa (partial states of key ranges,
// merged by combineKeySplits), so that tileUsingSCF's
// PartialReductionOuterParallel made them in one forall, is not written yet.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/attention/AttentionPath.h"
#include "compiler/attention/AttentionTiling.h"
#include "compiler/attention/OnlineSoftmax.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
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

    Location loc = op.getLoc();
    SdpaTiling tiling(rewriter, op, queryTile, keyTile);
    int64_t batch = shape.batch, heads = shape.heads, queries = shape.queries,
            valueDim = tiling.valueDim;
    // The partial outputs, [P, B, H, T, dv] f32: the result's size times P,
    // which a static result near the int64 limit would overflow. Then the
    // query tiles alone do the work.
    std::optional<int64_t> partsBytes = int64_t(4) * splits;
    for (int64_t size : {batch, heads, queries, valueDim})
      if (partsBytes)
        partsBytes = llvm::checkedMul<int64_t>(*partsBytes, size);
    if (!partsBytes)
      return rewriter.notifyMatchFailure(op, "the partial outputs' size "
                                             "overflows");
    Type f32 = rewriter.getF32Type();
    auto partsType = [&](ArrayRef<int64_t> trailing) {
      SmallVector<int64_t> parts = {splits, batch, heads, queries};
      llvm::append_range(parts, trailing);
      return RankedTensorType::get(parts, f32);
    };
    // Each split writes its slice of these; alloc_tensor rather than
    // tensor.empty, which CSE would merge into one buffer for two outputs.
    auto alloc = [&](RankedTensorType type) -> Value {
      return bufferization::AllocTensorOp::create(rewriter, loc, type,
                                                  ValueRange{});
    };
    Value accParts = alloc(partsType({valueDim}));
    Value maxParts = alloc(partsType({}));
    Value sumParts = alloc(partsType({}));

    // The split is the outermost dimension, so that the static schedule
    // gives each thread whole splits.
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{
            rewriter.getIndexAttr(splits), rewriter.getIndexAttr(batch),
            rewriter.getIndexAttr(heads), tiling.getNumQueryTiles(rewriter)},
        ValueRange{accParts, maxParts, sumParts}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(forall.getTerminator());
      SmallVector<Value> ivs = forall.getInductionVars();
      Value split = ivs[0], b = ivs[1], h = ivs[2], tileIndex = ivs[3];
      ValueRange outs = forall.getRegionIterArgs();

      // Split p takes whole key blocks [p·chunk, min(S, (p + 1)·chunk)).
      // With positions, the keys of sequence b end at positions[b] + T
      // (the cache's capacity after that is never read): the splits share
      // those.
      AffineExpr d0 = rewriter.getAffineDimExpr(0),
                 d1 = rewriter.getAffineDimExpr(1);
      Value position;
      OpFoldResult keysEnd = tiling.numKeys;
      if (positions) {
        position = tiling.loadPosition(rewriter, b);
        keysEnd = tiling.getPositionKeyEnd(rewriter, position);
      }
      OpFoldResult chunk = tiling.apply(
          rewriter, d0.ceilDiv(keyTile).ceilDiv(splits) * keyTile, {keysEnd});
      OpFoldResult begin = tiling.apply(rewriter, d0 * d1, {split, chunk});
      OpFoldResult end = affine::makeComposedFoldedAffineMin(
          rewriter, loc, AffineMap::get(2, 0, {d0, d1}, rewriter.getContext()),
          {keysEnd, tiling.apply(rewriter, d0 + d1, {begin, chunk})});

      OpFoldResult queryStart =
          tiling.apply(rewriter, d0 * queryTile, {tileIndex});
      OpFoldResult rows = tiling.getTileRows(rewriter, queryStart);
      AttentionTile tile = tiling.sliceTile(rewriter, b, h, queryStart, rows);
      if (position)
        tile.causalOffset = position;
      OpFoldResult zero = rewriter.getIndexAttr(0),
                   one = rewriter.getIndexAttr(1),
                   dv = rewriter.getIndexAttr(valueDim);
      SmallVector<OpFoldResult> rowOffsets = {split, b, h, queryStart};
      SmallVector<OpFoldResult> rowSizes = {one, one, one, rows};
      SmallVector<OpFoldResult> accOffsets = rowOffsets, accSizes = rowSizes;
      accOffsets.push_back(zero);
      accSizes.push_back(dv);

      OnlineSoftmaxBuilder softmax(rewriter, loc, tile, queryTile, keyTile);
      // The state lives in this split's slices of the outputs.
      OnlineSoftmaxState state = softmax.initialize(
          tiling.sliceTrailing(rewriter, outs[0], accOffsets, accSizes, 2),
          tiling.sliceTrailing(rewriter, outs[1], rowOffsets, rowSizes, 1),
          tiling.sliceTrailing(rewriter, outs[2], rowOffsets, rowSizes, 1));
      bool fullKeyBlocks = tiling.hasFullKeyBlocks(false);
      bool causalBlocks = false;
      if (positions) {
        // Each range ends where it ends at run time: whole blocks, then the
        // tail (iterateKeyRange). One query sees exactly the keys below
        // positions[b] + 1; more test the diagonal.
        state = softmax.iterateKeyRange(
            state, begin, end,
            /*causal=*/!isConstantIntValue(tiling.numQueries, 1));
      } else {
        OpFoldResult rangeEnd = end;
        // Decoding (T = 1): the one query is the last and sees every key, so
        // the ranges are those of attention without causality.
        if (bottomRight && !isConstantIntValue(tiling.numQueries, 1)) {
          // The keys after the tile's last diagonal key are masked for every
          // row: the range stops there, and the diagonal is tested in every
          // block. A range that starts after it runs no block, and its state
          // (m = -inf, l = 0) weighs 0 in the merge.
          OpFoldResult causalEnd = tiling.apply(
              rewriter, d0 + d1 + rewriter.getAffineDimExpr(2),
              {queryStart, rows, getAsOpFoldResult(tiling.causalOffset)});
          rangeEnd = affine::makeComposedFoldedAffineMin(
              rewriter, loc,
              AffineMap::get(2, 0, {d0, d1}, rewriter.getContext()),
              {end, causalEnd});
          causalBlocks = true;
          fullKeyBlocks = false;
        }
        state = softmax.iterateKeyBlocks(state, begin, rangeEnd, causalBlocks,
                                         fullKeyBlocks);
      }

      rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
      auto insert = [&](Value source, Value dest,
                        ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes) {
        SmallVector<OpFoldResult> strides(sizes.size(), one);
        tensor::ParallelInsertSliceOp::create(rewriter, loc, source, dest,
                                              offsets, sizes, strides);
      };
      insert(state.acc, outs[0], accOffsets, accSizes);
      insert(state.max, outs[1], rowOffsets, rowSizes);
      insert(state.sum, outs[2], rowOffsets, rowSizes);
    }

    Value init = tiling.createEmpty(rewriter, op.getType(),
                                    {tiling.batch, rewriter.getIndexAttr(heads),
                                     tiling.numQueries,
                                     rewriter.getIndexAttr(valueDim)});
    rewriter.replaceOp(op, combineKeySplits(rewriter, loc, forall.getResult(0),
                                            forall.getResult(1),
                                            forall.getResult(2), init));
    tiling.eraseDeadWidenings(rewriter);
    return success();
  }

  int64_t queryTile, keyTile, maxSplits;
  AttentionMode mode;
};
} // namespace

void mlir::mha::populateSplitKeysPatterns(
    RewritePatternSet &patterns, const MhaTileAttentionOptions &options) {
  patterns.add<SplitKeysSdpa>(patterns.getContext(), options);
}
