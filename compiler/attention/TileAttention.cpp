//===- TileAttention.cpp - mha.sdpa to tiled, fused, parallel attention ---===//
//
// Rewrites `mha.sdpa` into flash-style attention, the steps of IREE's
// LinalgExt attention:
//
// 1. tile: `scf::tileUsingSCF` with an `scf.forall` over (batch, head,
//    query block), through mha.sdpa's `TilingInterface`
//    (SdpaTilingInterface.h); each iteration slices its queries, its rows
//    of the mask and its key/value head (query head h reads head
//    h / (H / Hkv): a view, never a copy) and writes its [tq, dv] block of
//    the result in place;
// 2. online softmax: the tiled implementation (SdpaTiling::buildTile) fills
//    the running maximum, sum and output and makes an
//    `mha.online_attention` (IREE's `online_attention`) per range of keys
//    the tile sees; with `causal` the keys end at the tile's last query
//    (+ S - T when bottom-right aligned), so blocks wholly above the
//    diagonal are never visited, and only the range of blocks that cross
//    the diagonal tests key <= query;
// 3. tile the keys: `scf::tileUsingSCF` through mha.online_attention's
//    `TilingInterface` makes the key loop (an scf.for carrying the state),
//    `scf::peelForLoopAndSimplifyBounds` peels its short last block
//    (OnlineSoftmax.h, tileKeys);
// 4. decompose: each key block's update is linalg ops on tensors (scores,
//    maximum, exponentials, sums, P·V; their bodies AttentionMath's)
//    through linalg's `AggregatedOpInterface`, so a [tq, tk] block of
//    scores is all that exists of the score matrix.
//
// Ours, where upstream has no mechanism: the causal block skipping (the key
// ranges, step 2) and the balanced order of causal query tiles, a rewrite
// of the forall's query offset after tiling. SplitKeys.cpp adds a pattern
// for attention with too few query tiles to keep the cores busy, which
// also splits the keys: scf::tileUsingSCF's PartialReductionOuterParallel
// through mha.sdpa's PartialReductionOpInterface.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/attention/AttentionTiling.h"
#include "compiler/attention/GroupedQueries.h"
#include "compiler/attention/SdpaTilingInterface.h"
#include "compiler/strategy/AttentionPath.h"
#include "compiler/strategy/AttentionStrategy.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
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
      : OpRewritePattern(context), mode(options.attention),
        amxSplit(options.amxSplit), groupQueryHeads(options.groupQueryHeads) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (!isF32Attention(op))
      return rewriter.notifyMatchFailure(op, "only f32 is tiled");
    if (!chooseAttentionPath(*getAttentionShape(op), mode).fused)
      return rewriter.notifyMatchFailure(op, "the rule picks decomposed");
    if (groupQueryHeads && canGroupQueryHeads(op))
      return groupAndTile(op, rewriter);
    return tile(op, rewriter, /*sharedQueryPosition=*/false);
  }

  /// A decoding step's query heads as the rows of one tile per key/value
  /// head (GroupedQueries.h). With a cache, T is `?`: one token takes the
  /// grouped op and more (a prefill) `op` as it is, in an `scf.if`. Both
  /// are tiled here, so that neither comes back to this pattern.
  LogicalResult groupAndTile(SdpaOp op, PatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    auto queryType = cast<RankedTensorType>(op.getQuery().getType());
    if (!queryType.isDynamicDim(2)) {
      auto [grouped, result] = buildGroupedSdpa(rewriter, op, op.getQuery());
      if (failed(tile(grouped, rewriter, /*sharedQueryPosition=*/true)))
        return failure();
      rewriter.replaceOp(op, result);
      return success();
    }
    Value queries = tensor::DimOp::create(rewriter, loc, op.getQuery(), 2);
    Value oneQuery =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, queries,
                              arith::ConstantIndexOp::create(rewriter, loc, 1));
    auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{op.getType()},
                                  oneQuery, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
    SmallVector<int64_t> oneQueryShape(queryType.getShape());
    oneQueryShape[2] = 1;
    Value query = tensor::CastOp::create(
        rewriter, loc, queryType.clone(oneQueryShape), op.getQuery());
    auto [grouped, result] = buildGroupedSdpa(rewriter, op, query);
    scf::YieldOp::create(rewriter, loc,
                         ValueRange{tensor::CastOp::create(
                             rewriter, loc, op.getType(), result)});
    rewriter.setInsertionPointToStart(&ifOp.getElseRegion().front());
    auto perHead = cast<SdpaOp>(rewriter.clone(*op));
    scf::YieldOp::create(rewriter, loc, perHead.getResult());
    if (failed(tile(grouped, rewriter, /*sharedQueryPosition=*/true)) ||
        failed(tile(perHead, rewriter, /*sharedQueryPosition=*/false,
                    /*oneQueryBranch=*/false)))
      return failure();
    rewriter.replaceOp(op, ifOp.getResults());
    return success();
  }

  /// `op` tiled into an scf.forall over (batch, head, query tile) of fused
  /// attention (SdpaTiling::buildTile; the flags are SdpaTiling's).
  LogicalResult tile(SdpaOp op, PatternRewriter &rewriter,
                     bool sharedQueryPosition,
                     bool oneQueryBranch = true) const {
    rewriter.setInsertionPoint(op);
    // The strategy's tiles (mha-strategy); with causal, its key
    // block divides the query tile.
    AttentionTilesAttr tiles = getAttentionTiles(op);
    int64_t queryTile = tiles.getQueryTile();
    SdpaTiling tiling(rewriter, op, queryTile, tiles.getKeyTile());
    tiling.sharedQueryPosition = sharedQueryPosition;
    tiling.oneQueryBranch = oneQueryBranch;

    // Every query tile of a head reads all its keys transposed: with more
    // than one tile per head, transpose each head once, up front.
    // Not with positions: the keys are a cache, mostly unused capacity, and
    // a tile reads only those below its sequence's length.
    // Attention of a bf16 layer computes Q·Kᵀ and P·V on AMX where the
    // shapes allow (mha-amx-split): its keys and values packed per head,
    // also for a single query tile (whose blocks would otherwise transpose
    // K in f32).
    std::optional<int64_t> queries = getConstantIntValue(tiling.numQueries);
    // (Only where the function's recorded bf16 path, if any, is AMX.)
    std::optional<BF16Path> path = getRecordedBF16Path(op);
    if (amxSplit && (!path || *path == BF16Path::Amx) &&
        MhaDialect::Bf16LayerAttrHelper(op.getContext()).isAttrPresent(op) &&
        tiling.canPack()) {
      if (failed(tiling.pack(rewriter)))
        return rewriter.notifyMatchFailure(op, "could not pack K and V");
    } else if ((!queries || *queries > queryTile) && !tiling.positions &&
               failed(tiling.transposeKeys(rewriter))) {
      return rewriter.notifyMatchFailure(op, "could not tile Kᵀ");
    }

    // The scf.forall over (batch, head, query tile) is scf::tileUsingSCF's;
    // each tile is mha.sdpa's tiled implementation (SdpaTilingInterface.h),
    // the fused attention of one head's query tile.
    OpFoldResult one = rewriter.getIndexAttr(1),
                 zero = rewriter.getIndexAttr(0);
    scf::SCFTilingOptions options;
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
        .setTileSizes({one, one, rewriter.getIndexAttr(queryTile), zero});
    FailureOr<scf::SCFTilingResult> tiled = [&] {
      SdpaTilingScope scope(tiling);
      return scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
    }();
    if (failed(tiled))
      return rewriter.notifyMatchFailure(op, "could not tile");
    auto forall = cast<scf::ForallOp>(tiled->loops.front());
    if (tiling.causal)
      balanceQueryTiles(rewriter, forall, tiling);
    // tileUsingSCF's tile sizes, min(BQ, T - offset), where the tile
    // counted its rows itself (static where they are), are left unused.
    tiling.replaceByTiles(rewriter, op, forall, tiled->replacements);
    return success();
  }

  /// With causal, the tiles near the end of the sequence see more keys;
  /// visiting them in the order 0, n-1, 1, n-2, ... gives each contiguous
  /// share of the (statically scheduled) parallel loop the same work. The
  /// bottom-right offset shifts every tile's key count by the same S - T
  /// (clamped to [0, S]), so the order balances both alignments. No upstream
  /// mechanism permutes a loop's iterations: the query offset of iteration
  /// i·BQ becomes BQ·order(i) in every use.
  static void balanceQueryTiles(RewriterBase &rewriter, scf::ForallOp forall,
                                const SdpaTiling &tiling) {
    Location loc = forall.getLoc();
    Value queryOffset = forall.getInductionVars()[2];
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    AffineExpr d0 = rewriter.getAffineDimExpr(0),
               d1 = rewriter.getAffineDimExpr(1);
    int64_t queryTile = tiling.queryTile;
    auto apply = [&](AffineExpr expr, ArrayRef<OpFoldResult> operands) {
      return getValueOrCreateConstantIndexOp(
          rewriter, loc, tiling.apply(rewriter, expr, operands));
    };
    OpFoldResult numQueryTiles = tiling.getNumQueryTiles(rewriter);
    Value tileIndex = apply(d0.floorDiv(queryTile), {queryOffset});
    Value pair = apply(d0.floorDiv(2), {tileIndex});
    Value fromEnd = apply(d1 - 1 - d0.floorDiv(2), {tileIndex, numQueryTiles});
    Value odd = apply(d0 % 2, {tileIndex});
    Value isEven =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, odd,
                              arith::ConstantIndexOp::create(rewriter, loc, 0));
    Value queryBlock =
        arith::SelectOp::create(rewriter, loc, isEven, pair, fromEnd);
    Value balanced = apply(d0 * queryTile, {queryBlock});
    SmallPtrSet<Operation *, 8> order;
    for (Value v :
         {tileIndex, pair, fromEnd, odd, isEven, queryBlock, balanced})
      if (Operation *def = v.getDefiningOp())
        order.insert(def);
    rewriter.replaceAllUsesExcept(queryOffset, balanced, order);
  }

  AttentionMode mode;
  bool amxSplit;
  bool groupQueryHeads;
};

struct MhaTileAttentionPass
    : mha::impl::MhaTileAttentionBase<MhaTileAttentionPass> {
  using Base::Base;

  /// The options as the patterns take them.
  MhaTileAttentionOptions getOptions() const {
    MhaTileAttentionOptions options;
    options.attention = attention;
    options.amxSplit = amxSplit;
    options.groupQueryHeads = groupQueryHeads;
    return options;
  }

  void runOnOperation() override {
    MhaTileAttentionOptions options = getOptions();
    // The tiles pad Kᵀ's rows and cut the last key blocks by the
    // function's record (row_padding, tail_keys).
    bool tiles = options.attention != AttentionMode::Decomposed &&
                 getOperation()
                     .walk([](Operation *op) {
                       return isa<SdpaOp, SdpaSplitOp>(op)
                                  ? WalkResult::interrupt()
                                  : WalkResult::advance();
                     })
                     .wasInterrupted();
    CodegenSizesAttr sizes = getRecordedCodegenSizes(getOperation());
    if (tiles && (!sizes || !sizes.getRowPadding() || !sizes.getTailKeys())) {
      getOperation().emitError()
          << "mha-tile-attention: no #mha.codegen_sizes record with "
             "row_padding and tail_keys: run mha-strategy first";
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
