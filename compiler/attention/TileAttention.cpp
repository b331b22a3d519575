//===- TileAttention.cpp - mha.sdpa to tiled, fused, parallel attention ---===//
//
// Rewrites `mha.sdpa` into flash-style attention, in the three steps of
// IREE's LinalgExt attention done by one rewrite:
//
// 1. tile: an `scf.forall` over (batch, head, query block), each iteration
//    slicing its queries, its rows of the mask and its key/value head
//    (query head h reads head h / (H / Hkv): a view, never a copy) and
//    writing its [tq, dv] block of the result;
// 2. online softmax: inside, `scf.for` over key blocks carrying the running
//    maximum, sum and output (OnlineSoftmax.h); with `causal` the loop ends
//    at the tile's last query (+ S - T when bottom-right aligned), so blocks
//    wholly above the diagonal are never visited, and only blocks that
//    cross the diagonal test key <= query;
// 3. decompose: each key block's work is linalg ops on tensors (scores,
//    maximum, exponentials, sums, P·V) in one loop body, so a [tq, tk] block
//    of scores is all that exists of the score matrix.
//
// The three are one pattern because the intermediate forms would need ops
// of their own (IREE has `attention` and `online_attention`); their code is
// split the same way: this file tiles, OnlineSoftmax.cpp does the rest.
// SplitKeys.cpp adds a pattern for attention with too few query tiles to
// keep the cores busy, which also splits the keys.
//
//===----------------------------------------------------------------------===//

#include "compiler/OptionRanges.h"
#include "compiler/Passes.h"
#include "compiler/attention/AttentionPath.h"
#include "compiler/attention/AttentionTiling.h"
#include "compiler/attention/OnlineSoftmax.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHATILEATTENTION
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
struct TileSdpa : OpRewritePattern<SdpaOp> {
  TileSdpa(MLIRContext *context, const MhaTileAttentionOptions &options)
      : OpRewritePattern(context), queryTile(options.queryTile),
        keyTile(options.keyTile), mode(options.attention) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (!SdpaTiling::isF32(op))
      return rewriter.notifyMatchFailure(op, "only f32 is tiled");
    if (!chooseAttentionPath(*getAttentionShape(op), mode).fused)
      return rewriter.notifyMatchFailure(op, "the rule picks decomposed");

    Location loc = op.getLoc();
    // Causal key blocks are all full (static shapes, so vectorized) when
    // the key tile divides the query tile: every block then ends at or
    // before a query tile's start, or is the tile's diagonal block.
    int64_t keyTile = this->keyTile;
    if (op.getCausal())
      while (queryTile % keyTile != 0)
        --keyTile;
    SdpaTiling tiling(rewriter, op, queryTile, keyTile);
    bool causal = tiling.causal;
    OpFoldResult numQueryTiles = tiling.getNumQueryTiles(rewriter);
    OpFoldResult heads = rewriter.getIndexAttr(tiling.heads);
    OpFoldResult zero = rewriter.getIndexAttr(0),
                 one = rewriter.getIndexAttr(1);
    OpFoldResult dv = rewriter.getIndexAttr(tiling.valueDim);

    // Every query tile of a head reads all its keys transposed: with more
    // than one tile per head, transpose each head once, up front.
    // Not with positions: the keys are a cache, mostly unused capacity, and
    // a tile reads only those below its sequence's length.
    std::optional<int64_t> tiles = getConstantIntValue(numQueryTiles);
    if ((!tiles || *tiles > 1) && !tiling.positions &&
        failed(tiling.transposeKeys(rewriter)))
      return rewriter.notifyMatchFailure(op, "could not tile Kᵀ");

    // The result, written tile by tile.
    Value init = tiling.createEmpty(
        rewriter, op.getType(), {tiling.batch, heads, tiling.numQueries, dv});
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{tiling.batch, heads, numQueryTiles},
        ValueRange{init}, std::nullopt);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(forall.getTerminator());
    SmallVector<Value> ivs = forall.getInductionVars();
    Value b = ivs[0], h = ivs[1], tileIndex = ivs[2];
    Value out = forall.getRegionIterArgs()[0];

    AffineExpr d0 = rewriter.getAffineDimExpr(0),
               d1 = rewriter.getAffineDimExpr(1);
    auto apply = [&](AffineExpr expr, ArrayRef<OpFoldResult> operands) {
      return tiling.apply(rewriter, expr, operands);
    };
    // With causal, the tiles near the end of the sequence see more keys;
    // visiting them in the order 0, n-1, 1, n-2, ... gives each contiguous
    // share of the (statically scheduled) parallel loop the same work. The
    // bottom-right offset shifts every tile's key count by the same S - T
    // (clamped to [0, S]), so the order balances both alignments.
    Value queryBlock = tileIndex;
    if (causal) {
      auto value = [&](OpFoldResult ofr) {
        return getValueOrCreateConstantIndexOp(rewriter, loc, ofr);
      };
      Value pair = value(apply(d0.floorDiv(2), {tileIndex}));
      Value fromEnd =
          value(apply(d1 - 1 - d0.floorDiv(2), {tileIndex, numQueryTiles}));
      Value odd = value(apply(d0 % 2, {tileIndex}));
      Value isEven = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, odd,
          arith::ConstantIndexOp::create(rewriter, loc, 0));
      queryBlock =
          arith::SelectOp::create(rewriter, loc, isEven, pair, fromEnd);
    }
    OpFoldResult queryStart = apply(d0 * queryTile, {queryBlock});
    OpFoldResult tileRows = tiling.getTileRows(rewriter, queryStart);
    // The attention of the tile's `rows` queries (tileRows, or a constant
    // that equals it at run time), [rows, dv].
    auto attendTile = [&](OpFoldResult rows) -> Value {
      AttentionTile tile = tiling.sliceTile(rewriter, b, h, queryStart, rows);
      // With positions, the diagonal of sequence b is moved by positions[b].
      Value position;
      if (tiling.positions)
        tile.causalOffset = position = tiling.loadPosition(rewriter, b);

      OnlineSoftmaxBuilder softmax(rewriter, loc, tile, queryTile, keyTile);
      Value accInit = tiling.sliceTrailing(
          rewriter, out, {b, h, queryStart, zero}, {one, one, rows, dv}, 2);
      OnlineSoftmaxState state = softmax.initialize(accInit);
      bool fullKeyBlocks = tiling.hasFullKeyBlocks(causal);
      if (position) {
        // Query i of the tile sees keys j <= position + queryStart + i: the
        // keys end at the tile's last query's diagonal (never past the new
        // tokens, so the unused capacity of the cache is never read), the
        // whole blocks below the first query's diagonal need no test, and the
        // rest (the diagonal blocks; the keys after the last whole block when
        // decoding) is iterateKeyRange's.
        MLIRContext *context = rewriter.getContext();
        AffineMap pair = AffineMap::get(2, 0, {d0, d1}, context);
        OpFoldResult diagonal = apply(d0 + d1, {queryStart, position});
        OpFoldResult keyEnd = affine::makeComposedFoldedAffineMax(
            rewriter, loc, pair,
            {rewriter.getIndexAttr(0),
             affine::makeComposedFoldedAffineMin(
                 rewriter, loc, pair,
                 {tiling.numKeys, apply(d0 + d1, {diagonal, rows})})});
        // (A static key count below BK has no whole block.)
        std::optional<int64_t> staticKeys = getConstantIntValue(tiling.numKeys);
        OpFoldResult fullEnd = affine::makeComposedFoldedAffineMax(
            rewriter, loc, pair,
            {rewriter.getIndexAttr(0),
             affine::makeComposedFoldedAffineMin(
                 rewriter, loc, pair,
                 {apply(d0.floorDiv(keyTile) * keyTile, {keyEnd}),
                  apply((d0 + 1).floorDiv(keyTile) * keyTile, {diagonal})})});
        if (staticKeys && *staticKeys < keyTile)
          fullEnd = zero;
        else
          state =
              softmax.iterateKeyBlocks(state, zero, fullEnd,
                                       /*causal=*/false, /*fullBlocks=*/true);
        // One query per tile sees exactly the keys below keyEnd.
        bool oneQuery = isConstantIntValue(rows, 1);
        state = softmax.iterateKeyRange(state, fullEnd, keyEnd,
                                        /*causal=*/!oneQuery);
      } else if (causal) {
        // Keys after the tile's last query are masked for every row: stop
        // there. Blocks that end at or before the first query are wholly
        // allowed and skip the test. Bottom-right aligned, both bounds move by
        // the diagonal's offset S - T; with S < T they may fall below 0 (the
        // tile sees fewer keys, or none), so they are clamped to 0 there.
        AffineMap minMap =
            AffineMap::get(2, 0, {d0, d1}, rewriter.getContext());
        OpFoldResult diagonal = queryStart;
        if (tiling.causalOffset)
          diagonal = apply(
              d0 + d1, {queryStart, getAsOpFoldResult(tiling.causalOffset)});
        auto atLeastZero = [&](OpFoldResult bound) {
          if (!tiling.causalOffset)
            return bound;
          return affine::makeComposedFoldedAffineMax(
              rewriter, loc, minMap, {rewriter.getIndexAttr(0), bound});
        };
        OpFoldResult keyEnd = atLeastZero(affine::makeComposedFoldedAffineMin(
            rewriter, loc, minMap,
            {tiling.numKeys, apply(d0 + d1, {diagonal, rows})}));
        OpFoldResult fullEnd = atLeastZero(affine::makeComposedFoldedAffineMin(
            rewriter, loc, minMap,
            {keyEnd, apply((d0 + 1).floorDiv(keyTile) * keyTile, {diagonal})}));
        state = softmax.iterateKeyBlocks(state, zero, fullEnd, /*causal=*/false,
                                         fullKeyBlocks);
        state = softmax.iterateKeyBlocks(state, fullEnd, keyEnd,
                                         /*causal=*/true, fullKeyBlocks);
      } else {
        state = softmax.iterateKeyBlocks(state, zero, tiling.numKeys,
                                         /*causal=*/false, fullKeyBlocks);
      }
      return softmax.finalize(state);
    };
    OpFoldResult rows = tileRows;
    Value result;
    if (tiling.positions && !getConstantIntValue(tileRows)) {
      // A cache's queries are `?`: one token (decoding) and many (the
      // prefill) run the same code. A tile of one query takes its own
      // branch, where the size 1 is static: its scores are then dot products
      // along the key rows, which read each key once, where the general
      // tile transposes every key block first (twice the traffic).
      Value rowCount = getValueOrCreateConstantIndexOp(rewriter, loc, rows);
      Value isOne = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, rowCount,
          arith::ConstantIndexOp::create(rewriter, loc, 1));
      auto resultType = RankedTensorType::get(
          {ShapedType::kDynamic, tiling.valueDim}, rewriter.getF32Type());
      auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{resultType}, isOne,
                                    /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard branchGuard(rewriter);
        rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
        Value one = attendTile(rewriter.getIndexAttr(1));
        scf::YieldOp::create(
            rewriter, loc,
            ValueRange{tensor::CastOp::create(rewriter, loc, resultType, one)});
        rewriter.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(rewriter, loc, ValueRange{attendTile(rows)});
      }
      result = ifOp.getResult(0);
    } else {
      result = attendTile(rows);
    }

    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    SmallVector<OpFoldResult> strides(4, one);
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, result, out,
        ArrayRef<OpFoldResult>{b, h, queryStart, zero},
        ArrayRef<OpFoldResult>{one, one, rows, dv}, strides);
    rewriter.replaceOp(op, forall.getResult(0));
    return success();
  }

  int64_t queryTile, keyTile;
  AttentionMode mode;
};

struct MhaTileAttentionPass
    : mha::impl::MhaTileAttentionBase<MhaTileAttentionPass> {
  using Base::Base;

  /// The options as the patterns take them.
  MhaTileAttentionOptions getOptions() const {
    MhaTileAttentionOptions options;
    options.queryTile = queryTile;
    options.keyTile = keyTile;
    options.keySplits = keySplits;
    options.attention = attention;
    return options;
  }

  /// Refuses options out of range where they are parsed (`mha-opt
  /// --mha-tile-attention="key-splits=0"`), before any IR is touched.
  LogicalResult initializeOptions(
      StringRef text,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Base::initializeOptions(text, errorHandler)))
      return failure();
    if (llvm::Error error = checkTileAttentionOptions(getOptions()))
      return errorHandler("mha-tile-attention: " +
                          llvm::toString(std::move(error)));
    return success();
  }

  void runOnOperation() override {
    // Options set in C++ (createMhaTileAttention) are not parsed: the same
    // check, before any size is computed from them.
    MhaTileAttentionOptions options = getOptions();
    if (llvm::Error error = checkTileAttentionOptions(options)) {
      emitError(getOperation().getLoc())
          << "mha-tile-attention: " << llvm::toString(std::move(error));
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateTileAttentionPatterns(patterns, options);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

void mlir::mha::populateTileAttentionPatterns(
    RewritePatternSet &patterns, const MhaTileAttentionOptions &options) {
  if (options.attention == AttentionMode::Decomposed)
    return;
  patterns.add<TileSdpa>(patterns.getContext(), options);
  populateSplitKeysPatterns(patterns, options);
}
