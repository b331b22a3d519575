//===- Vectorize.cpp - Register-blocked vector code for the linalg tiles --===//
//
// After tiling, a layer is small linalg ops inside parallel loops:
// the projections' and attention's matmuls and the softmax's elementwise
// and row-reduction ops. Each is tiled once more, to the block that one
// vector instruction sequence computes, and vectorized with upstream
// linalg::vectorize:
//
// - a contraction is tiled to `rows x cols` outputs and a reduction step
//   of 1, so its vector.contract becomes `rows` broadcast-FMAs of a
//   `cols`-wide row of the right operand (the outer-product lowering); the
//   accumulator's read and write are then loop-invariant in the reduction
//   loop and are hoisted out of it, so the block stays in registers for the
//   whole reduction (rows * cols / 16 zmm registers with AVX-512);
// - every other op keeps its last dimension whole (one vector along it)
//   and is tiled by 1 in the others.
//
// A loop whose extent is `?` (the last, partial tile of a length that the
// tile does not divide, or a `?` sequence) is cut into the same whole
// blocks, and its last iteration is peeled off (scf::peelForLoopAndSimplify-
// Bounds): every block but that one has static sizes and the code above;
// the peeled block is vectorized with masks to the whole block's shape.
//
// A contraction whose row count is `?`, or static but not a multiple of
// the block's (9 rows of blocks of 6), is cut into whole blocks of `rows`
// rows and a rest in blocks of its own static size or of rows/2, rows/4,
// ... 1 row when it is `?` (vectorizeRowParts).
//
// The pass has two stages: the ops cut into blocks and vectorized
// (vectorizeLinalgOps; the block sizes are chosen in RegisterBlockSizes.h,
// the ops tiled to them in RegisterBlockTiling.h), then the vector ops
// simplified into the forms the lowering expects (simplifyVectorOps,
// VectorCleanup.h). Two passes finish the register blocks:
// mha-hoist-accumulators keeps each block's accumulator in
// registers through its reduction loop (HoistAccumulators.cpp), and
// mha-unroll-reductions does several reduction steps per iteration
// (UnrollReductions.cpp). The block sizes are the function's mha.codegen
// (mha-strategy, from the target rule in Strategy.h).
//
// What is not vectorized stays for convert-linalg-to-loops: ops on boolean
// masks, reductions whose body is not one combining op, and generics over
// more than three loops (the decomposed path).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/codegen/RegisterBlockSizes.h"
#include "compiler/codegen/RegisterBlockTiling.h"
#include "compiler/codegen/VectorCleanup.h"
#include "compiler/strategy/Strategy.h"
#include "compiler/workarounds/SpecializeContraction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAVECTORIZE
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// Whether each reduction of `op` folds its accumulator with one
/// combining op whose result is yielded as is: the form whose vector code
/// (a vector.multi_reduction of that kind) is known. Other bodies, such as
/// `select(c, max(acc, x), acc)`, stay scalar; the lowering writes masked
/// reductions in the plain form instead (`max(acc, select(c, x, -inf))`).
bool hasPlainReductions(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0)
    return true;
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  for (auto [index, acc] : llvm::enumerate(op.getRegionOutputArgs())) {
    if (!acc.hasOneUse())
      return false;
    Operation *combiner = *acc.getUsers().begin();
    if (!isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
             arith::MaxNumFOp, arith::MinNumFOp>(combiner) ||
        yield.getOperand(index) != combiner->getResult(0))
      return false;
  }
  return true;
}

/// Whether `op` reads or writes a tensor of i1 (a boolean mask). A memref
/// of i1 holds one byte per element, but a vector<N x i1> load reads N
/// packed bits, so such ops stay scalar. (mha-mask-bytes turns the masks
/// that only linalg.generic ops read into bytes first.)
bool hasBooleanTensors(linalg::LinalgOp op) {
  return llvm::any_of(op->getOperandTypes(), [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.getElementType().isInteger(1);
  });
}

/// Rewrites a batch_reduce_matmul over one static batch into the matmul of
/// that batch's slices.
FailureOr<linalg::MatmulOp> batchOfOneToMatmul(RewriterBase &rewriter,
                                               linalg::BatchReduceMatmulOp op) {
  auto lhsType = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  auto rhsType = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  if (!lhsType || !rhsType || lhsType.getDimSize(0) != 1 ||
      !op.hasPureTensorSemantics() || op.hasUserDefinedMaps())
    return failure();
  rewriter.setInsertionPoint(op);
  // The other sizes may be `?` (a peeled last block).
  auto dropBatch = [&](Value operand, RankedTensorType type) -> Value {
    auto sliceType = RankedTensorType::get(type.getShape().drop_front(),
                                           type.getElementType());
    SmallVector<OpFoldResult> offsets(3, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, op.getLoc(), operand);
    sizes.front() = rewriter.getIndexAttr(1);
    return tensor::ExtractSliceOp::create(rewriter, op.getLoc(), sliceType,
                                          operand, offsets, sizes, strides);
  };
  Value lhs = dropBatch(op.getDpsInputs()[0], lhsType);
  Value rhs = dropBatch(op.getDpsInputs()[1], rhsType);
  auto matmul =
      linalg::MatmulOp::create(rewriter, op.getLoc(), op->getResultTypes(),
                               ValueRange{lhs, rhs}, op.getDpsInits());
  rewriter.replaceOp(op, matmul->getResults());
  return matmul;
}

/// Vectorizes one register block to vectors of `vectorSizes` along its
/// loops, masked where the block is smaller or its sizes are `?` (a peeled
/// last block).
LogicalResult vectorizeBlock(RewriterBase &rewriter, linalg::LinalgOp block,
                             SmallVector<int64_t> vectorSizes, int64_t lanes) {
  block->removeAttr(kRegisterBlockAttr);
  // A last block smaller than the vectors (the 13 keys left of 77 in blocks
  // of 64, in a peeled loop of one trip) takes whole registers of its size:
  // 16 lanes, masked to 13, not a 64-wide vector with 51 lanes masked off.
  // Extents along lanes (multiples of `lanes`) round up to a power of two
  // of registers (36 keys stay 64 wide: a mask of 48 lanes is no legal
  // mask type for LLVM, and T = 100 ran 1.6 times slower with it); the
  // others (rows) are exact.
  for (auto [dim, range] : llvm::enumerate(block.getStaticLoopRanges())) {
    int64_t &size = vectorSizes[dim];
    std::optional<int64_t> extent = ShapedType::isStatic(range)
                                        ? std::optional<int64_t>(range)
                                        : loopBound(block, dim);
    if (extent && *extent < size)
      size = size % lanes == 0
                 ? std::min<int64_t>(size, maskedWidth(*extent, lanes))
                 : *extent;
  }
  // A block of a batch_reduce_matmul steps one batch at a time: it is a
  // matmul of the batch's slices. As such its vector.contract has one
  // reduction dimension, which the outer-product lowering needs (with two,
  // it falls back to one dot product per result element).
  if (auto batched =
          dyn_cast<linalg::BatchReduceMatmulOp>(block.getOperation()))
    if (FailureOr<linalg::MatmulOp> matmul =
            batchOfOneToMatmul(rewriter, batched);
        succeeded(matmul)) {
      block = *matmul;
      // The matmul has the batch_reduce_matmul's loops but the batch.
      vectorSizes.erase(vectorSizes.begin());
    }
  // A block that fills its vectors exactly is vectorized without masks.
  if (ArrayRef<int64_t>(vectorSizes) ==
      ArrayRef<int64_t>(block.getStaticLoopRanges()))
    vectorSizes.clear();
  SmallVector<bool> scalable(vectorSizes.size(), false);
  if (failed(linalg::vectorizeOpPrecondition(block, vectorSizes, scalable)))
    return failure();
  rewriter.setInsertionPoint(block);
  FailureOr<linalg::VectorizationResult> vectorized =
      linalg::vectorize(rewriter, block, vectorSizes, scalable,
                        /*vectorizeNDExtract=*/false,
                        /*flatten1DDepthwiseConv=*/false,
                        /*assumeDynamicDimsMatchVecSizes=*/false,
                        /*createNamedContraction=*/true);
  if (failed(vectorized))
    return failure();
  if (block->getNumResults())
    rewriter.replaceOp(block, vectorized->replacements);
  else
    rewriter.eraseOp(block);
  return success();
}

LogicalResult vectorizeOp(RewriterBase &rewriter, linalg::LinalgOp op,
                          const MhaVectorizeOptions &options,
                          const FrozenRewritePatternSet *cleanup);

/// Vectorizes a contraction whose row count (loop `row`) is `?`, or static
/// and no multiple of `rows`: whole blocks of `rows` rows, then the rest
/// (fewer than `rows`): a static rest is one block of its size (9 rows are
/// 6 and 3), a `?` one is split the same way in blocks of rows/2, rows/4,
/// ... and 1 row (6 gives 3 and 1). Every part has static rows and is
/// vectorized without masks. Before, the rest was one block of `rows` rows
/// under a mask, whose masked reads of the left operand are scalar loads
/// and whose FMAs are mostly on masked lanes (a decode step's projections
/// computed one row as 8); then it was one row at a time, which reads the
/// weight row of each reduction step once per row: a block of 4 rows has
/// 4 × 4 column registers (columnLimit) and reads it once for 4 FMAs.
/// Returns failure when `op` was not split (it is then untouched).
LogicalResult vectorizeRowParts(RewriterBase &rewriter, linalg::LinalgOp op,
                                unsigned row, int64_t rows,
                                const MhaVectorizeOptions &options,
                                const FrozenRewritePatternSet &cleanup) {
  // A static count's rest is known (64 rows of 6 leave 4), though the
  // peeled loop may leave its part `?`: one block of it, not 3 + 1.
  int64_t range = op.getStaticLoopRanges()[row];
  int64_t restRows = ShapedType::isStatic(range) && range % rows != 0
                         ? range % rows
                         : rows / 2;
  FailureOr<SmallVector<linalg::LinalgOp>> parts =
      splitRows(rewriter, op, row, rows, cleanup);
  if (failed(parts))
    return failure();
  for (linalg::LinalgOp part : *parts) {
    // The rest: the same split with its static size, or half the rows.
    if (rows > 1 && ShapedType::isDynamic(part.getStaticLoopRanges()[row]) &&
        succeeded(
            vectorizeRowParts(rewriter, part, row, restRows, options, cleanup)))
      continue;
    (void)vectorizeOp(rewriter, part, options, /*cleanup=*/nullptr);
  }
  return success();
}

/// Tiles `op` to its register blocks and vectorizes them. Leaves `op`
/// untouched when it cannot be vectorized. With `cleanup`, a contraction
/// whose row count is `?` or not a multiple of its block's is first split
/// into parts of static rows
/// (vectorizeRowParts), each vectorized on its own.
LogicalResult vectorizeOp(RewriterBase &rewriter, linalg::LinalgOp op,
                          const MhaVectorizeOptions &options,
                          const FrozenRewritePatternSet *cleanup) {
  // A contraction written as a generic (attention's QK^T and PV) becomes
  // the named matmul it is, whose vector.contract has the canonical
  // (m, k) x (k, n) form that the outer-product lowering expects.
  // Only plain 2-D matmuls: LLVM 22 builds an invalid batch_matmul from a
  // generic with two batch dimensions (the decomposed path's [B, H, ...]).
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      generic && linalg::isaContractionOpInterface(op) &&
      op.getNumLoops() == 3) {
    FailureOr<linalg::LinalgOp> named =
        specializeGenericOpChecked(rewriter, generic);
    if (succeeded(named))
      op = *named;
  }

  std::optional<RegisterBlocks> blocks = getRegisterBlocks(op, options);
  if (!blocks || !hasPlainReductions(op) || hasBooleanTensors(op))
    return failure();
  if (cleanup && linalg::isaContractionOpInterface(op)) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (succeeded(dims) && !dims->m.empty()) {
      // `?` rows, or static rows that the block does not divide (9 of 6):
      // whole blocks, then the rest as blocks of its own static size, not
      // one masked block of `rows` whose masked rows are FMAs thrown away.
      unsigned row = dims->m.back();
      int64_t blockRows = blocks->sizes[row];
      bool parts = ShapedType::isDynamic(ranges[row]) ||
                   (blockRows < ranges[row] && ranges[row] % blockRows != 0);
      if (parts && succeeded(vectorizeRowParts(rewriter, op, row, options.rows,
                                               options, *cleanup)))
        return success();
    }
  }
  // An op with `?` sizes is checked block by block, with vector sizes.
  if (llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic) &&
      failed(linalg::vectorizeOpPrecondition(op)))
    return failure();
  op->setAttr(kRegisterBlockAttr, rewriter.getUnitAttr());
  AffineMap initMap = op.getNumDpsInits() == 1
                          ? op.getMatchingIndexingMap(op.getDpsInitOperand(0))
                          : AffineMap();
  SmallVector<linalg::LinalgOp> inits;
  FailureOr<SmallVector<linalg::LinalgOp>> tiles =
      tileToRegisterBlocks(rewriter, op, blocks->sizes, inits);
  if (failed(tiles)) {
    op->removeAttr(kRegisterBlockAttr);
    return failure();
  }
  for (linalg::LinalgOp tile : *tiles)
    if (failed(
            vectorizeBlock(rewriter, tile, blocks->vectorSizes, options.lanes)))
      tile->removeAttr(kRegisterBlockAttr);
  // The tiles of a fused initial value: vectors of their block's result.
  SmallVector<int64_t> initSizes;
  if (initMap && initMap.isProjectedPermutation())
    for (AffineExpr result : initMap.getResults())
      initSizes.push_back(
          blocks->vectorSizes[cast<AffineDimExpr>(result).getPosition()]);
  for (linalg::LinalgOp init : inits) {
    init->removeAttr(kBlockInitAttr);
    (void)vectorizeBlock(rewriter, init, initSizes, options.lanes);
  }
  return success();
}

/// Stage 1: every linalg op on tensors cut into its register blocks, each
/// vectorized (vectorizeOp).
void vectorizeLinalgOps(func::FuncOp func, const MhaVectorizeOptions &options) {
  MLIRContext *context = func.getContext();
  SmallVector<linalg::LinalgOp> ops;
  // The products marked mha.amx_split become AMX tiles after bufferization
  // (mha-amx-split).
  // An initial value that a contraction alone starts from (a fill, a bias
  // broadcast) waits for it, which fuses it into its register blocks
  // (tileToRegisterBlocks); one (or a tile of one) left after that is
  // vectorized on its own, last.
  func.walk([&](linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics() ||
        MhaDialect::AmxSplitAttrHelper(context).isAttrPresent(op))
      return;
    if (isElementwiseInit(op) && !op->use_empty()) {
      auto user = dyn_cast<linalg::LinalgOp>(*op->user_begin());
      if (user && linalg::isaContractionOpInterface(user) &&
          getFusableInit(user) == op) {
        op->setAttr(kBlockInitAttr, UnitAttr::get(context));
        return;
      }
    }
    ops.push_back(op);
  });
  // The canonicalization patterns, for the parts of split row loops.
  RewritePatternSet canonicalization(context);
  for (Dialect *dialect : context->getLoadedDialects())
    dialect->getCanonicalizationPatterns(canonicalization);
  for (RegisteredOperationName name : context->getRegisteredOperations())
    name.getCanonicalizationPatterns(canonicalization, context);
  FrozenRewritePatternSet cleanup(std::move(canonicalization));
  IRRewriter rewriter(context);
  for (linalg::LinalgOp op : ops)
    (void)vectorizeOp(rewriter, op, options, &cleanup);
  SmallVector<linalg::LinalgOp> leftInits;
  func.walk([&](linalg::LinalgOp init) {
    if (init->removeAttr(kBlockInitAttr))
      leftInits.push_back(init);
  });
  for (linalg::LinalgOp init : leftInits)
    (void)vectorizeOp(rewriter, init, options, &cleanup);
}

struct MhaVectorizePass : mha::impl::MhaVectorizeBase<MhaVectorizePass> {
  using MhaVectorizeBase::MhaVectorizeBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (rows < 1 || cols < 1 || maxVectorLength < 1 || lanes < 1) {
      func.emitError() << "mha-vectorize expects rows, cols, "
                          "max-vector-length and lanes >= 1, got rows="
                       << int64_t(rows) << " cols=" << int64_t(cols)
                       << " max-vector-length=" << int64_t(maxVectorLength)
                       << " lanes=" << int64_t(lanes);
      return signalPassFailure();
    }
    MhaVectorizeOptions options;
    options.rows = rows;
    options.cols = cols;
    options.maxVectorLength = maxVectorLength;
    options.lanes = lanes;
    // The sizes recorded on the function (mha-strategy) take the
    // options' place.
    if (CodegenSizesAttr sizes = getRecordedCodegenSizes(func)) {
      options.rows = sizes.getRegisterRows();
      options.cols = sizes.getRegisterCols();
      options.maxVectorLength = sizes.getMaxVectorLength();
      options.lanes = sizes.getLanes();
    }
    vectorizeLinalgOps(func, options);
    if (failed(simplifyVectorOps(func)))
      signalPassFailure();
  }
};
} // namespace
