//===- TileProjections.cpp - Parallel tiles of the projections ------------===//
//
// The projections are most of a layer's arithmetic outside attention. Tiling
// their result (never their reduction) into an scf.forall lets the threads
// share them while each output element is still summed by one thread in one
// order, so results do not depend on the thread count. The tile is turned
// back into a named op (matmul, batch_reduce_matmul), which is what later
// vectorization expects.
//
//===----------------------------------------------------------------------===//

#include "compiler/OptionRanges.h"
#include "compiler/Passes.h"
#include "compiler/codegen/PanelResults.h"
#include "compiler/strategy/Strategy.h"
#include "compiler/utils/UnitLoops.h"
#include "compiler/workarounds/SpecializeContraction.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHATILEPROJECTIONS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// Tile sizes of `op`'s loops: the result's last dimension (columns) by
/// `colTile`, its rows by `rowTile`, its other (batch, head, panel)
/// dimensions by 1, and reductions not at all. The rows are the last but
/// one dimension, or the last before it that the weights (input 1) do not
/// index: a result [B, T, N/P, P] of a weight in panels
/// (mha-weight-layouts) has its rows before the panels.
SmallVector<OpFoldResult> projectionTileSizes(OpBuilder &b, linalg::LinalgOp op,
                                              int64_t rowTile,
                                              int64_t colTile) {
  SmallVector<OpFoldResult> sizes(op.getNumLoops(), b.getIndexAttr(0));
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  AffineMap result = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  unsigned rank = result.getNumResults();
  // Whether result dimension `position` indexes the weights.
  auto indexesWeights = [&](unsigned position) {
    auto dim = dyn_cast<AffineDimExpr>(result.getResult(position));
    return dim && op.getNumDpsInputs() >= 2 &&
           op.getMatchingIndexingMap(op.getDpsInputOperand(1))
               .isFunctionOfDim(dim.getPosition());
  };
  unsigned rowPosition = rank >= 2 ? rank - 2 : 0;
  if (indexesWeights(rowPosition))
    for (unsigned position = rowPosition; position-- > 0;)
      if (!indexesWeights(position)) {
        rowPosition = position;
        break;
      }
  for (auto [position, expr] : llvm::enumerate(result.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      continue;
    int64_t size = 1;
    if (position + 1 == rank)
      size = colTile;
    else if (position == rowPosition)
      size = rowTile;
    // A tile as large as the whole dimension would be a loop of one
    // iteration: leave the dimension untiled instead.
    int64_t range = ranges[dim.getPosition()];
    if (ShapedType::isStatic(range) && size >= range && size > 1)
      size = 0;
    sizes[dim.getPosition()] = b.getIndexAttr(size);
  }
  return sizes;
}

/// The loops of `op` in the order of its tile loops: those that index the
/// weights (the second input: column tiles, panels) first, then the rows,
/// then the batch loops (tiled by 1, not indexing the weights). The
/// parallel loop's static schedule gives each thread a contiguous range of
/// tiles:
/// - with the batch outermost, every thread would read every weight tile
///   once per batch row it owns (decoding B = 4 sequences of one token each
///   reads the weights 4 times); innermost, the tiles that share a weight
///   tile follow each other on one thread, which reads it from memory once
///   and from its cache for the other rows;
/// - with the rows outermost, 128 rows in tiles of 48 (48, 48, 32) split
///   between two threads as 1.5 row tiles each, 144 rows against 112;
///   with the columns outermost each thread takes whole columns of row
///   tiles, the same rows, and reads only its share of the weights.
/// Each output is still summed by one thread in one order: the results do
/// not change.
SmallVector<int64_t> weightLoopsFirst(linalg::LinalgOp op,
                                      ArrayRef<OpFoldResult> tileSizes) {
  if (op.getNumDpsInputs() < 2)
    return {};
  AffineMap weights = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  SmallVector<int64_t> order, rows, batch;
  for (unsigned loop = 0, e = op.getNumLoops(); loop < e; ++loop) {
    bool indexesWeights = weights.isFunctionOfDim(loop);
    bool isBatch = isOneInteger(tileSizes[loop]) && !indexesWeights;
    (isBatch ? batch : indexesWeights ? order : rows).push_back(loop);
  }
  llvm::append_range(order, rows);
  llvm::append_range(order, batch);
  return order;
}

/// A contraction `C[m, n] += sum_r sum_k A[r, m, k] · B[r, k, n]` with `r`
/// before `k` among the loops, i.e. the summation order of
/// `linalg.batch_reduce_matmul`.
bool isBatchReduceMatmul(linalg::GenericOp op) {
  if (!linalg::isaContractionOpInterface(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || !dims->batch.empty() || dims->m.size() != 1 ||
      dims->n.size() != 1 || dims->k.size() != 2)
    return false;
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned position) { return getAffineDimExpr(position, ctx); };
  AffineExpr m = d(dims->m[0]), n = d(dims->n[0]), r = d(dims->k[0]),
             k = d(dims->k[1]);
  unsigned numLoops = op.getNumLoops();
  SmallVector<AffineMap> expected = {
      AffineMap::get(numLoops, 0, {r, m, k}, ctx),
      AffineMap::get(numLoops, 0, {r, k, n}, ctx),
      AffineMap::get(numLoops, 0, {m, n}, ctx)};
  return op.getIndexingMapsArray() == expected;
}

/// Whether `op` is a fill, or a broadcast that still broadcasts once its
/// unit dimensions are dropped. A broadcast along unit dimensions only (the
/// bias of a one-token tile) would become a copy, which folds away: the
/// tile would then accumulate into the bias argument itself, which one-shot
/// bufferization may write in place.
bool isBroadcastOrFill(linalg::LinalgOp op) {
  if (isa<linalg::FillOp>(op.getOperation()))
    return true;
  auto broadcast = dyn_cast<linalg::BroadcastOp>(op.getOperation());
  if (!broadcast)
    return false;
  ArrayRef<int64_t> shape = broadcast.getInit().getType().getShape();
  return llvm::any_of(broadcast.getDimensions(),
                      [&](int64_t dim) { return shape[dim] != 1; });
}

/// Turns a tile that is a `linalg.generic` with unit dimensions into the
/// named op it is: unit dimensions dropped (rank-reducing slices), then a
/// `linalg.matmul` or `linalg.batch_reduce_matmul`. A tile that matches
/// neither stays a generic, which is correct, only less recognizable.
/// The accumulator's producer fused with the tile (bias broadcast, zero
/// fill) drops the same unit dimensions first, as a generic: the slices
/// between the two then fold away, and the tile's accumulator is that
/// producer's result, read by the tile alone, which mha-vectorize fuses
/// into the register blocks.
void nameTile(RewriterBase &rewriter, linalg::GenericOp tile) {
  Value init = tile.getNumDpsInits() == 1 ? tile.getDpsInits()[0] : Value();
  if (auto producer =
          init ? init.getDefiningOp<linalg::LinalgOp>() : linalg::LinalgOp();
      producer && init.hasOneUse() && isBroadcastOrFill(producer)) {
    rewriter.setInsertionPoint(producer);
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, producer);
    if (succeeded(generic))
      dropUnitLoops(rewriter, *generic);
  }
  tile =
      dyn_cast<linalg::GenericOp>(dropUnitLoops(rewriter, tile).getOperation());
  if (!tile)
    return;
  rewriter.setInsertionPoint(tile);
  if (isBatchReduceMatmul(tile)) {
    rewriter.replaceOpWithNewOp<linalg::BatchReduceMatmulOp>(
        tile, tile.getResultTypes(), tile.getDpsInputs(), tile.getDpsInits());
    return;
  }
  (void)specializeGenericOpChecked(rewriter, tile);
}

/// Tiles one marked projection into an scf.forall and fuses the producer
/// of its accumulator (bias broadcast or zero fill) into the loop.
struct TileProjection : OpInterfaceRewritePattern<linalg::LinalgOp> {
  TileProjection(MLIRContext *context, int64_t rowTile, int64_t colTile)
      : OpInterfaceRewritePattern(context), rowTile(rowTile), colTile(colTile) {
  }

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasAttr(MhaDialect::ProjectionAttrHelper::getNameStr()))
      return rewriter.notifyMatchFailure(op, "not a projection");
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1)
      return rewriter.notifyMatchFailure(op, "not one result on tensors");
    SmallVector<OpFoldResult> tileSizes =
        projectionTileSizes(rewriter, op, rowTile, colTile);
    if (llvm::all_of(tileSizes, isZeroInteger))
      return rewriter.notifyMatchFailure(op, "nothing to tile");

    scf::SCFTilingOptions tiling;
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
        .setTileSizes(tileSizes)
        .setInterchange(weightLoopsFirst(op, tileSizes));
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    // Only the accumulator's producer: it is elementwise over the result,
    // so its tile is computed exactly once, by the thread that uses it.
    options.setFusionControlFn(
        [](tensor::ExtractSliceOp, OpResult producer, bool isDestination)
            -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          if (isDestination &&
              isa<linalg::FillOp, linalg::BroadcastOp>(producer.getOwner()))
            return scf::SCFTileAndFuseOptions::ControlFnResult{};
          return std::nullopt;
        });
    FailureOr<scf::SCFTileAndFuseResult> tiled =
        scf::tileConsumerAndFuseProducersUsingSCF(
            rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(tiled))
      return rewriter.notifyMatchFailure(op, "tiling failed");

    // The tile is a clone and would keep the marker: drop it so that the
    // tile is not tiled again.
    SmallVector<linalg::GenericOp> genericTiles;
    for (Operation *tile : tiled->tiledAndFusedOps) {
      if (tile->getName() != op->getName())
        continue;
      rewriter.modifyOpInPlace(tile, [&] {
        tile->removeAttr(MhaDialect::ProjectionAttrHelper::getNameStr());
      });
      if (auto generic = dyn_cast<linalg::GenericOp>(tile))
        genericTiles.push_back(generic);
    }
    for (OpResult result : op->getResults())
      rewriter.replaceAllUsesWith(result, tiled->replacements.lookup(result));
    rewriter.eraseOp(op);
    for (linalg::GenericOp tile : genericTiles)
      nameTile(rewriter, tile);
    return success();
  }

  int64_t rowTile, colTile;
};

struct MhaTileProjectionsPass
    : mha::impl::MhaTileProjectionsBase<MhaTileProjectionsPass> {
  using MhaTileProjectionsBase::MhaTileProjectionsBase;

  /// Refuses options out of range where they are parsed (`mha-opt
  /// --mha-tile-projections="row-tile=-1"`), before any IR is touched.
  LogicalResult initializeOptions(
      StringRef text,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Base::initializeOptions(text, errorHandler)))
      return failure();
    if (llvm::Error error = checkTileProjectionsOptions({rowTile, colTile}))
      return errorHandler("mha-tile-projections: " +
                          llvm::toString(std::move(error)));
    return success();
  }

  void runOnOperation() override {
    // Options set in C++ (createMhaTileProjections) are not parsed.
    if (llvm::Error error = checkTileProjectionsOptions({rowTile, colTile})) {
      getOperation().emitError()
          << "mha-tile-projections: " << llvm::toString(std::move(error));
      return signalPassFailure();
    }
    // The tiles recorded on the function (mha-strategy), else the
    // options.
    MhaTileProjectionsOptions tiles{rowTile, colTile};
    if (CodegenSizesAttr sizes = getRecordedCodegenSizes(getOperation()))
      tiles = {sizes.getProjectionRows(), sizes.getProjectionCols()};
    // Results in panels: their bias where the tiles can fuse it, their
    // chunk's insert where bufferization can write it in place.
    RewritePatternSet panels(&getContext());
    populatePanelResultPatterns(panels);
    if (failed(applyPatternsGreedily(getOperation(), std::move(panels))))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateTileProjectionsPatterns(patterns, tiles);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::mha::populateTileProjectionsPatterns(
    RewritePatternSet &patterns, const MhaTileProjectionsOptions &options) {
  patterns.add<TileProjection>(patterns.getContext(), options.rowTile,
                               options.colTile);
}
