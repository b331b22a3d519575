//===- RegisterBlockTiling.cpp - Tiling to register blocks ----------------===//

#include "compiler/codegen/RegisterBlockTiling.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::mha;

bool mlir::mha::isElementwiseInit(linalg::LinalgOp op) {
  if (isa<linalg::FillOp>(op.getOperation()))
    return true;
  return isa<linalg::GenericOp, linalg::BroadcastOp>(op.getOperation()) &&
         op.getNumDpsInits() == 1 &&
         op.getNumLoops() == op.getNumParallelLoops() &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() &&
         !op.payloadUsesValueFromOperand(op.getDpsInitOperand(0));
}

linalg::LinalgOp mlir::mha::getFusableInit(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return {};
  Value init = op.getDpsInits()[0];
  auto producer = init.getDefiningOp<linalg::LinalgOp>();
  return producer && init.hasOneUse() && isElementwiseInit(producer)
             ? producer
             : linalg::LinalgOp();
}

namespace {
/// Tiles the parallel loops of `op` as `tiling` says, with the initial value
/// it starts from (getFusableInit) fused into them: each tile of that value
/// (marked kBlockInitAttr) writes the part that one tile of `op` then
/// accumulates into. Returns the outermost loop made (null where none is),
/// or failure, `op` untouched, where `op` has no such initial value.
FailureOr<scf::ForOp>
tileAndFuseInit(RewriterBase &rewriter, linalg::LinalgOp op,
                const scf::SCFTilingOptions &tiling,
                Operation **tiledOp = nullptr,
                SmallVector<LoopLikeOpInterface> *loops = nullptr) {
  linalg::LinalgOp init = getFusableInit(op);
  if (!init)
    return failure();
  scf::SCFTileAndFuseOptions fusion;
  fusion.setTilingOptions(tiling);
  fusion.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer,
          bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (producer.getOwner() != init.getOperation())
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), fusion);
  if (failed(fused))
    return failure();
  for (OpResult result : op->getResults())
    if (Value replacement = fused->replacements.lookup(result))
      rewriter.replaceAllUsesWith(result, replacement);
  for (Operation *fusedOp : fused->tiledAndFusedOps)
    if (fusedOp != fused->tiledAndFusedOps.front())
      fusedOp->setAttr(kBlockInitAttr, rewriter.getUnitAttr());
  if (tiledOp)
    *tiledOp = fused->tiledAndFusedOps.front();
  if (loops)
    *loops = fused->loops;
  rewriter.eraseOp(op);
  if (init->use_empty())
    rewriter.eraseOp(init);
  if (fused->loops.empty())
    return scf::ForOp();
  return dyn_cast<scf::ForOp>(fused->loops.front().getOperation());
}

/// The fused initial value (kBlockInitAttr) that register block `block`
/// starts from, directly or through the reduction loops around it and their
/// slices, or null.
linalg::LinalgOp getBlockInit(linalg::LinalgOp block) {
  if (block.getNumDpsInits() != 1)
    return {};
  Value init = block.getDpsInits()[0];
  while (true) {
    if (auto slice = init.getDefiningOp<tensor::ExtractSliceOp>()) {
      init = slice.getSource();
    } else if (auto argument = dyn_cast<BlockArgument>(init)) {
      auto loop = dyn_cast<scf::ForOp>(argument.getOwner()->getParentOp());
      if (!loop || argument.getArgNumber() < loop.getNumInductionVars())
        return {};
      init = loop.getTiedLoopInit(argument)->get();
    } else {
      break;
    }
  }
  auto producer = init.getDefiningOp<linalg::LinalgOp>();
  return producer && producer->hasAttr(kBlockInitAttr) ? producer
                                                       : linalg::LinalgOp();
}
} // namespace

FailureOr<SmallVector<linalg::LinalgOp>>
mlir::mha::tileToRegisterBlocks(RewriterBase &rewriter, linalg::LinalgOp op,
                                ArrayRef<int64_t> sizes,
                                SmallVector<linalg::LinalgOp> &fusedInits) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ArrayRef<int64_t>(sizes) == ArrayRef<int64_t>(ranges)) {
    // One block, whose initial value an outer split may have fused.
    if (linalg::LinalgOp init = getBlockInit(op))
      fusedInits.push_back(init);
    return SmallVector<linalg::LinalgOp>{op};
  }
  // A loop whose tile is the whole extent is not tiled at all (size 0):
  // a one-trip loop would carry the accumulator's slice as a loop value.
  SmallVector<int64_t> tileSizes;
  for (auto [size, range] : llvm::zip_equal(sizes, ranges))
    tileSizes.push_back(size == range ? 0 : size);
  // Reduction loops innermost: the accumulator block is then the same in
  // all their iterations, and is hoisted out of them.
  SmallVector<int64_t> interchange;
  SmallVector<int64_t> parallelSizes(tileSizes), reductionSizes(tileSizes);
  for (auto [dim, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (type == utils::IteratorType::parallel) {
      interchange.push_back(dim);
      reductionSizes[dim] = 0;
    } else {
      parallelSizes[dim] = 0;
    }
  }
  for (auto [dim, type] : llvm::enumerate(op.getIteratorTypesArray()))
    if (type != utils::IteratorType::parallel)
      interchange.push_back(dim);
  auto tilingOptions = [&](ArrayRef<int64_t> sizes) {
    scf::SCFTilingOptions tiling;
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForOp)
        .setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes))
        .setInterchange(interchange);
    return tiling;
  };

  SmallVector<LoopLikeOpInterface> tileLoops;
  Operation *tiledOp = nullptr;
  linalg::LinalgOp init = getFusableInit(op);
  rewriter.setInsertionPoint(op);
  if (init && llvm::any_of(parallelSizes, [](int64_t s) { return s != 0; })) {
    // The parallel loops first, with the initial value fused into them: it
    // is then written tile by tile, each tile before the reduction loops of
    // its block. (Fused into loops that also step the reduction, it would
    // reset the block at each step.)
    if (failed(tileAndFuseInit(rewriter, op, tilingOptions(parallelSizes),
                               &tiledOp, &tileLoops)))
      return failure();
    // Then the reduction loops of each block.
    if (llvm::any_of(reductionSizes, [](int64_t s) { return s != 0; })) {
      rewriter.setInsertionPoint(tiledOp);
      FailureOr<scf::SCFTilingResult> reduced =
          scf::tileUsingSCF(rewriter, cast<TilingInterface>(tiledOp),
                            tilingOptions(reductionSizes));
      if (succeeded(reduced)) {
        rewriter.replaceOp(tiledOp, reduced->replacements);
        tiledOp = reduced->tiledOps.back();
        llvm::append_range(tileLoops, reduced->loops);
      }
    }
  } else {
    FailureOr<scf::SCFTilingResult> tiled =
        scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()),
                          tilingOptions(tileSizes));
    if (failed(tiled))
      return failure();
    rewriter.replaceOp(op, tiled->replacements);
    tiledOp = tiled->tiledOps.back();
    tileLoops = tiled->loops;
  }

  // Innermost loop first: peeling an outer loop then copies the inner
  // loops, already peeled, into its last iteration.
  SmallVector<scf::ForOp> loops;
  for (LoopLikeOpInterface loop : tileLoops)
    if (auto forOp = dyn_cast<scf::ForOp>(loop.getOperation()))
      loops.push_back(forOp);
  for (scf::ForOp loop : llvm::reverse(loops)) {
    scf::ForOp lastIteration;
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, loop, lastIteration);
  }
  // The blocks: the tile in every copy of the loop nest.
  SmallVector<linalg::LinalgOp> blocks;
  Operation *outermost = loops.empty() ? tiledOp : loops.front().getOperation();
  Block *parent = outermost->getBlock();
  StringRef name = tiledOp->getName().getStringRef();
  for (Operation &sibling : *parent)
    sibling.walk([&](linalg::LinalgOp candidate) {
      if (candidate->getName().getStringRef() == name &&
          candidate->hasAttr(kRegisterBlockAttr))
        blocks.push_back(candidate);
    });
  for (linalg::LinalgOp block : blocks)
    if (linalg::LinalgOp init = getBlockInit(block);
        init && !llvm::is_contained(fusedInits, init))
      fusedInits.push_back(init);
  return blocks;
}

namespace {
/// Marks the parts of a contraction whose rows were split (below) until
/// each is vectorized.
constexpr StringLiteral kRowPartAttr =
    MhaDialect::RowPartAttrHelper::getNameStr();
} // namespace

FailureOr<SmallVector<linalg::LinalgOp>>
mlir::mha::splitRows(RewriterBase &rewriter, linalg::LinalgOp op, unsigned row,
                     int64_t rows, const FrozenRewritePatternSet &cleanup) {
  Operation *parent = op->getParentOp();
  SmallVector<OpFoldResult> sizes(op.getNumLoops(), rewriter.getIndexAttr(0));
  sizes[row] = rewriter.getIndexAttr(rows);
  scf::SCFTilingOptions tiling;
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForOp)
      .setTileSizes(sizes);
  op->setAttr(kRowPartAttr, rewriter.getUnitAttr());
  rewriter.setInsertionPoint(op);
  scf::ForOp loop;
  if (FailureOr<scf::ForOp> fused = tileAndFuseInit(rewriter, op, tiling);
      succeeded(fused)) {
    loop = *fused;
  } else {
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), tiling);
    if (failed(tiled) || tiled->loops.size() != 1) {
      op->removeAttr(kRowPartAttr);
      return failure();
    }
    rewriter.replaceOp(op, tiled->replacements);
    loop = cast<scf::ForOp>(tiled->loops.front().getOperation());
  }
  SmallVector<Operation *> regions = {loop};
  // Blocks of one row are all whole.
  scf::ForOp partial;
  if (rows > 1 &&
      succeeded(scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial))) {
    regions.push_back(partial);
    // Every iteration of `loop` is now a whole block, so its tile size
    // `min(rows, rest - iv)` is `rows`. The peeling folds that min only
    // where it is written in the loop's own bound; the rest of a rest
    // (rows = 4 inside the peeled 8) has it composed with the outer loop's
    // offsets, which the peeling cannot relate to its bound.
    for (Operation &nested : llvm::make_early_inc_range(*loop.getBody()))
      if (auto min = dyn_cast<affine::AffineMinOp>(nested))
        if (llvm::any_of(min.getAffineMap().getResults(), [&](AffineExpr e) {
              auto constant = dyn_cast<AffineConstantExpr>(e);
              return constant && constant.getValue() == rows;
            })) {
          rewriter.setInsertionPoint(min);
          rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(min, rows);
        }
  }

  // Constant sizes (`rows` after peeling) become static types.
  SmallVector<Operation *> toClean;
  for (Operation *region : regions)
    region->walk([&](Operation *nested) {
      if (nested != region)
        toClean.push_back(nested);
    });
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(toClean, cleanup, config);

  SmallVector<linalg::LinalgOp> parts;
  parent->walk([&](linalg::LinalgOp candidate) {
    if (candidate->hasAttr(kRowPartAttr))
      parts.push_back(candidate);
  });
  for (linalg::LinalgOp part : parts)
    part->removeAttr(kRowPartAttr);
  return parts;
}
