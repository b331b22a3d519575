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
// (vectorizeLinalgOps), then the vector ops simplified into the forms the
// lowering expects (simplifyVectorOps). Two passes finish the register
// blocks: mha-hoist-accumulators keeps each block's accumulator in
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
#include "compiler/codegen/Strategy.h"
#include "compiler/codegen/UnmaskContractions.h"
#include "compiler/workarounds/SpecializeContraction.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAVECTORIZE
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// Marks the register blocks of one op while its loops are tiled and peeled.
constexpr StringLiteral kRegisterBlockAttr =
    MhaDialect::RegisterBlockAttrHelper::getNameStr();

/// The largest divisor of `extent` that is at most `limit`: tiles that
/// divide their loop keep every tile static, so no masks are needed.
int64_t largestDivisorAtMost(int64_t extent, int64_t limit) {
  for (int64_t size = std::min(extent, limit); size > 1; --size)
    if (extent % size == 0)
      return size;
  return 1;
}

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

/// The register blocks of one op: the tile size along each loop (the whole
/// extent where it is not tiled) and the vector shape of a block, which may
/// be larger: its extra lanes are masked.
struct RegisterBlocks {
  SmallVector<int64_t> sizes;
  SmallVector<int64_t> vectorSizes;
};

/// The width of a masked vector for `extent` elements along lanes: a power
/// of two of registers (100 of 128 lanes, not of 112). LLVM has no legal
/// mask type of 3 or 7 registers, and assembles such masked operations lane
/// by lane, through the stack.
int64_t maskedWidth(int64_t extent, int64_t lanes) {
  return lanes *
         int64_t(llvm::PowerOf2Ceil(uint64_t(llvm::divideCeil(extent, lanes))));
}

/// The block and vector size along a loop whose elements lie along vector
/// lanes (`lanes` of them per register). A loop of at most one register, or
/// a divisor of the extent that fills whole registers, keeps every block
/// static and unmasked. Otherwise a loop of a few registers is one block in
/// masked whole registers, and a long or `?` one
/// is cut into blocks of `limit` whose last is peeled off and masked: an
/// odd width such as 25 would leave every block's registers part empty and
/// LLVM's code for such vectors is slow.
std::pair<int64_t, int64_t> laneBlock(int64_t range, int64_t limit,
                                      int64_t lanes) {
  if (ShapedType::isDynamic(range))
    return {limit, limit};
  // Part of one register: an exact, unmasked vector.
  if (range <= lanes && range <= limit)
    return {range, range};
  for (int64_t size = std::min(range, limit); size >= lanes; --size)
    if (range % size == 0 && size % lanes == 0)
      return {size, size};
  int64_t masked = maskedWidth(range, lanes);
  if (range <= limit && masked <= limit)
    return {range, masked};
  return {limit, limit};
}

/// A constant bound on a `?` size, read off the IR that computes it: a
/// tile's size is `affine.min(tile, rest)` or a constant, carried through
/// slices, destination-passing ops and loop-carried tensors. Cheaper than
/// the value-bounds analysis, whose Presburger systems over the nested
/// tile loops took seconds per layer, and enough for the tiles we make.
std::optional<int64_t> sizeBound(OpFoldResult size, int depth);

std::optional<int64_t> dimBound(Value tensor, unsigned dim, int depth) {
  if (depth > 16)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(tensor.getType());
  if (!type || dim >= type.getRank())
    return std::nullopt;
  if (ShapedType::isStatic(type.getDimSize(dim)))
    return type.getDimSize(dim);
  if (auto argument = dyn_cast<BlockArgument>(tensor)) {
    auto loop = dyn_cast<scf::ForOp>(argument.getOwner()->getParentOp());
    if (!loop || argument.getArgNumber() < loop.getNumInductionVars())
      return std::nullopt;
    return dimBound(loop.getTiedLoopInit(argument)->get(), dim, depth + 1);
  }
  Operation *producer = tensor.getDefiningOp();
  if (auto slice = dyn_cast_or_null<tensor::ExtractSliceOp>(producer)) {
    // The result's dimensions are the source's not dropped.
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    for (unsigned source = 0, result = 0; source < sizes.size(); ++source) {
      if (dropped.test(source))
        continue;
      if (result++ == dim)
        return sizeBound(sizes[source], depth + 1);
    }
    return std::nullopt;
  }
  if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(producer))
    return sizeBound(empty.getMixedSizes()[dim], depth + 1);
  if (auto destination =
          dyn_cast_or_null<DestinationStyleOpInterface>(producer))
    return dimBound(destination.getTiedOpOperand(cast<OpResult>(tensor))->get(),
                    dim, depth + 1);
  if (auto loop = dyn_cast_or_null<scf::ForOp>(producer))
    return dimBound(loop.getInits()[cast<OpResult>(tensor).getResultNumber()],
                    dim, depth + 1);
  return std::nullopt;
}

/// The value of `map` (the smallest of its results) applied to `values`
/// where each is a constant or the induction variable of an scf.for of
/// constant bounds that runs once (the peeled last block of a static
/// extent: keys 64 to 77 of blocks of 64), else nothing.
std::optional<int64_t> evaluateInOneTrip(AffineMap map, ValueRange values) {
  SmallVector<Attribute> operands;
  Builder builder(map.getContext());
  for (Value operand : values) {
    std::optional<int64_t> value = getConstantIntValue(operand);
    if (scf::ForOp loop = scf::getForInductionVarOwner(operand)) {
      std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()),
                             upper = getConstantIntValue(loop.getUpperBound()),
                             step = getConstantIntValue(loop.getStep());
      if (lower && upper && step && *lower < *upper && *lower + *step >= *upper)
        value = lower;
    }
    if (!value)
      return std::nullopt;
    operands.push_back(builder.getIndexAttr(*value));
  }
  SmallVector<Attribute> results;
  if (failed(map.constantFold(operands, results)) || results.empty())
    return std::nullopt;
  std::optional<int64_t> smallest;
  for (Attribute result : results) {
    auto integer = dyn_cast<IntegerAttr>(result);
    if (!integer)
      return std::nullopt;
    smallest = std::min(smallest.value_or(integer.getInt()), integer.getInt());
  }
  return smallest;
}

std::optional<int64_t> sizeBound(OpFoldResult size, int depth) {
  if (std::optional<int64_t> constant = getConstantIntValue(size))
    return constant;
  auto value = dyn_cast<Value>(size);
  if (!value)
    return std::nullopt;
  if (auto apply = value.getDefiningOp<affine::AffineApplyOp>())
    return evaluateInOneTrip(apply.getAffineMap(), apply.getMapOperands());
  if (auto min = value.getDefiningOp<affine::AffineMinOp>()) {
    if (std::optional<int64_t> exact =
            evaluateInOneTrip(min.getAffineMap(), min.getMapOperands()))
      return exact;
    std::optional<int64_t> bound;
    for (AffineExpr result : min.getAffineMap().getResults())
      if (auto constant = dyn_cast<AffineConstantExpr>(result))
        bound =
            std::min(bound.value_or(constant.getValue()), constant.getValue());
    return bound;
  }
  if (auto dim = value.getDefiningOp<tensor::DimOp>())
    if (std::optional<int64_t> index = dim.getConstantIndex())
      return dimBound(dim.getSource(), *index, depth + 1);
  return std::nullopt;
}

/// A constant bound on the extent of `op`'s loop `dim`, from any operand
/// that it indexes.
std::optional<int64_t> loopBound(linalg::LinalgOp op, unsigned dim) {
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [position, expr] : llvm::enumerate(map.getResults()))
      if (auto dimExpr = dyn_cast<AffineDimExpr>(expr);
          dimExpr && dimExpr.getPosition() == dim)
        if (std::optional<int64_t> bound =
                dimBound(operand.get(), position, /*depth=*/0))
          return bound;
  }
  return std::nullopt;
}

/// The widest column block of a contraction block of `rows` rows. A block
/// of fewer rows than `options.rows` (one token of a decode step) holds
/// fewer accumulators: wider columns give it as many independent FMA
/// chains, up to 4 × `options.cols` (one row of 128 floats: 8 zmm
/// registers), where 2 registers would leave each FMA waiting for the last
/// one's result.
int64_t columnLimit(int64_t rows, const MhaVectorizeOptions &options) {
  if (rows >= options.rows)
    return options.cols;
  return std::min(options.cols * (options.rows / rows), 4 * options.cols);
}

/// The register blocks that cut `op` into what is vectorized, or nothing
/// when `op` is not vectorized.
std::optional<RegisterBlocks>
registerBlocks(linalg::LinalgOp op, const MhaVectorizeOptions &options) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty())
    return std::nullopt;
  // The tiles are at most 3-D. A generic over more loops is the decomposed
  // path's whole [B, H, T, S] step, whose rank-reduced slices would not
  // fold into the transfers and would bufferize to copies: it stays scalar.
  if (isa<linalg::GenericOp>(op.getOperation()) && ranges.size() > 3)
    return std::nullopt;
  // Loops not named below are stepped one at a time around the block.
  RegisterBlocks blocks{SmallVector<int64_t>(ranges.size(), 1),
                        SmallVector<int64_t>(ranges.size(), 1)};
  auto alongLanes = [&](unsigned dim, int64_t limit) {
    // A `?` extent with a small bound (a partial key block of at most 128)
    // is one block of masked whole registers, not blocks of `limit`.
    std::optional<int64_t> bound = loopBound(op, dim);
    if (ShapedType::isDynamic(ranges[dim]) && bound && *bound <= limit) {
      blocks.sizes[dim] = ranges[dim];
      blocks.vectorSizes[dim] = llvm::alignTo(*bound, options.lanes);
      return;
    }
    std::tie(blocks.sizes[dim], blocks.vectorSizes[dim]) =
        laneBlock(ranges[dim], limit, options.lanes);
  };

  if (linalg::isaContractionOpInterface(op)) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims) || dims->n.empty())
      return std::nullopt;
    // A vector times a matrix (a projection of one token per head, as
    // decoding has): the columns along the lanes, the reduction one step
    // at a time; each step is one broadcast-FMA per register of columns.
    if (dims->m.empty()) {
      alongLanes(dims->n.back(), options.cols);
      return blocks;
    }
    // Rows are broadcasts, one FMA each, so any count of them fills the
    // registers. A static row count is whole blocks and a block of the rest
    // (no masks), as a `?` count is whole blocks and a peeled rest; a
    // count below two blocks is one block, or blocks of a divisor.
    unsigned row = dims->m.back(), col = dims->n.back();
    int64_t rows = options.rows;
    if (ShapedType::isStatic(ranges[row])) {
      int64_t divisor = largestDivisorAtMost(ranges[row], options.rows);
      // Up to half a block past one block (7 to 9 of 6) is one block of
      // full columns: its few spilled accumulators cost less than a
      // second pass over the right operand for a block of 1 to 3 rows.
      // Columns narrowed to keep the accumulators in registers (9 × 32)
      // cost more than either: each pass then reads half of every row of
      // the weights' panels, and T = 9's projections ran 1.3 to 1.4 times
      // T = 8's (docs/performance.md, 2026-11-28). Below two whole blocks
      // a large divisor (5 of 10) is used, otherwise a block and the rest
      // (11: 6 + 5). From two whole blocks on, the full block stays (64
      // rows: 10 × 6 and a rest of 4, not 16 × 4): a smaller block reads
      // each row of the right operand for fewer FMAs.
      if (ranges[row] <= options.rows + options.rows / 2)
        rows = ranges[row];
      else if (ranges[row] < 2 * options.rows && 2 * divisor > options.rows)
        rows = divisor;
    }
    blocks.sizes[row] = blocks.vectorSizes[row] = rows;
    alongLanes(col, columnLimit(rows, options));
    return blocks;
  }

  // A transpose moves square blocks: a 16x16 block is read as 16 rows and
  // transposed in registers with shuffles (vector-transpose-lowering=
  // shuffle16x16), where one whole output row would gather a column one
  // element at a time.
  if (isa<linalg::TransposeOp>(op.getOperation()) && ranges.size() >= 2) {
    for (size_t dim = ranges.size() - 2; dim < ranges.size(); ++dim)
      alongLanes(dim, 16);
    return blocks;
  }

  // Elementwise ops, row reductions, fills, copies, broadcasts: one vector
  // along the last loop, split when it is longer than `maxVectorLength`.
  // A static row that fits one vector is that vector, unmasked: LLVM 22's
  // AVX-512 instruction selection takes seconds on a function with many
  // constant-mask stores (`llvm.masked.store` of 17 lanes of 32), and a
  // row op has no register block to fill.
  unsigned last = ranges.size() - 1;
  if (ShapedType::isStatic(ranges[last]) &&
      ranges[last] <= options.maxVectorLength) {
    // Past one register, a row that whole registers do not fill (100 keys:
    // 6 registers and 4 lanes) is a block of the whole registers and a
    // peeled block of the rest, one register masked to its lanes
    // (vectorizeBlock). As one vector<100xf32>, LLVM widens it to 128
    // lanes and fills the 28 extra ones of each reduction lane by lane
    // (`vinsertps`), and assembles its loads and stores from pieces.
    int64_t whole = llvm::alignDown(ranges[last], options.lanes);
    int64_t size = whole > 0 && whole != ranges[last] ? whole : ranges[last];
    blocks.sizes[last] = blocks.vectorSizes[last] = size;
    return blocks;
  }
  alongLanes(last, options.maxVectorLength);
  return blocks;
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

/// Marks an initial value that a contraction's accumulators start from
/// (getFusableInit), and the tiles it is fused into the register blocks as
/// (tileToRegisterBlocks), until each is vectorized.
constexpr StringLiteral kBlockInitAttr =
    MhaDialect::BlockInitAttrHelper::getNameStr();

/// Whether `op` computes each element of its result on its own, from no
/// more than broadcast inputs: a fill, or a broadcast (of a bias) as a
/// generic, which mha-tile-projections makes of the projections'.
bool isElementwiseInit(linalg::LinalgOp op) {
  if (isa<linalg::FillOp>(op.getOperation()))
    return true;
  return isa<linalg::GenericOp, linalg::BroadcastOp>(op.getOperation()) &&
         op.getNumDpsInits() == 1 &&
         op.getNumLoops() == op.getNumParallelLoops() &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() &&
         !op.payloadUsesValueFromOperand(op.getDpsInitOperand(0));
}

/// The initial value that `op`'s accumulators start from, when `op` alone
/// reads it: attention's zeroed block of scores, a projection's bias.
/// Fused into the register blocks, it becomes a register block of zeros or
/// of the bias, instead of a pass that writes the whole buffer and blocks
/// that load it back.
linalg::LinalgOp getFusableInit(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return {};
  Value init = op.getDpsInits()[0];
  auto producer = init.getDefiningOp<linalg::LinalgOp>();
  return producer && init.hasOneUse() && isElementwiseInit(producer)
             ? producer
             : linalg::LinalgOp();
}

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

/// Tiles `op` to its register blocks with the reduction loops innermost, and
/// peels the last iteration off every loop whose step may not divide its
/// extent, so that all but the last block of a loop have static sizes.
/// Returns the blocks: `op` itself when it is one block already. An
/// initial value that `op` alone starts from (getFusableInit) is tiled with
/// the blocks, in their parallel loops and before their reduction loops;
/// its tiles, to be vectorized with the blocks, go to `fusedInits`.
FailureOr<SmallVector<linalg::LinalgOp>>
tileToRegisterBlocks(RewriterBase &rewriter, linalg::LinalgOp op,
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

/// Marks the parts of a contraction whose rows were split (below) until
/// each is vectorized.
constexpr StringLiteral kRowPartAttr =
    MhaDialect::RowPartAttrHelper::getNameStr();

/// The row loop of a contraction whose row count is `?`, when it is not
/// one block (a decode step's tiles of one token per sequence, or the last
/// partial tile of a prefill), or static but not a multiple of `rows`:
/// whole blocks of `rows` rows and the rest, peeled off. `cleanup` (the
/// canonicalization patterns) makes the whole blocks' slices static; the
/// rest keeps `?` rows, fewer than `rows`, or has its static size.
/// Returns the parts, or failure when `op` was not split (it is then
/// untouched). Each output element keeps its summation order.
FailureOr<SmallVector<linalg::LinalgOp>>
splitRows(RewriterBase &rewriter, linalg::LinalgOp op, unsigned row,
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

  std::optional<RegisterBlocks> blocks = registerBlocks(op, options);
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

/// The value that leaves a reduction of `kind` unchanged, or null.
TypedAttr reductionIdentity(vector::CombiningKind kind, FloatType type) {
  const llvm::fltSemantics &semantics = type.getFloatSemantics();
  switch (kind) {
  case vector::CombiningKind::ADD:
    return FloatAttr::get(type, 0.0);
  case vector::CombiningKind::MUL:
    return FloatAttr::get(type, 1.0);
  case vector::CombiningKind::MAXIMUMF:
  case vector::CombiningKind::MAXNUMF:
    return FloatAttr::get(type, APFloat::getInf(semantics, /*Negative=*/true));
  case vector::CombiningKind::MINIMUMF:
  case vector::CombiningKind::MINNUMF:
    return FloatAttr::get(type, APFloat::getInf(semantics));
  default:
    return {};
  }
}

/// `vector.mask %m { vector.multi_reduction <kind> %x, %acc }` of a peeled
/// block, as the unmasked reduction of `select(%m, %x, identity)`. Masked
/// lanes hold the padding of their masked read, which the reduction must not
/// see (a 0 in the row maximum of scores near -1000 makes every exp 0). Our
/// pipeline let such lanes through the masked form
/// (test/numerics/large-logits.test, query tile 32 at T = 70), and its
/// lowering is unrolled lane by lane; a select per vector is exact and keeps
/// the plain reduction's lowering.
struct MaskedReductionAsSelect : OpRewritePattern<vector::MaskOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MaskOp mask,
                                PatternRewriter &rewriter) const override {
    auto reduction =
        dyn_cast_or_null<vector::MultiDimReductionOp>(mask.getMaskableOp());
    if (!reduction || mask.hasPassthru())
      return rewriter.notifyMatchFailure(mask, "not a masked reduction");
    auto sourceType = cast<VectorType>(reduction.getSource().getType());
    auto elementType = dyn_cast<FloatType>(sourceType.getElementType());
    TypedAttr identity =
        elementType ? reductionIdentity(reduction.getKind(), elementType)
                    : TypedAttr();
    if (!identity ||
        mask.getMask().getType() != sourceType.clone(rewriter.getI1Type()))
      return rewriter.notifyMatchFailure(mask, "no identity to mask with");
    Location loc = reduction.getLoc();
    Value neutral =
        arith::ConstantOp::create(rewriter, loc, sourceType,
                                  DenseElementsAttr::get(sourceType, identity));
    Value kept = arith::SelectOp::create(rewriter, loc, mask.getMask(),
                                         reduction.getSource(), neutral);
    rewriter.replaceOpWithNewOp<vector::MultiDimReductionOp>(
        mask, kept, reduction.getAcc(), reduction.getReductionMask(),
        reduction.getKind());
    return success();
  }
};

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

/// Stage 2: the vector ops in the forms the later lowering expects.
/// Slices read or written by the vector ops fold into their transfers,
/// contractions recognized in reductions of products become
/// vector.contract.
LogicalResult simplifyVectorOps(func::FuncOp func) {
  MLIRContext *context = func.getContext();
  RewritePatternSet patterns(context);
  tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
  vector::populateVectorReductionToContractPatterns(patterns);
  vector::populateSinkVectorOpsPatterns(patterns);
  vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
  // Masked reads and writes of peeled blocks become transfers that take
  // the mask as an operand, which bufferize like any other transfer.
  vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
  patterns.add<MaskedReductionAsSelect>(context);
  if (failed(applyPatternsGreedily(func, std::move(patterns))))
    return failure();
  // Then, on the uses in their final form, the FMAs of a peeled block's
  // contraction without the mask whose lanes only its masked write would
  // have read.
  RewritePatternSet unmask(context);
  populateUnmaskContractionPatterns(unmask);
  return applyPatternsGreedily(func, std::move(unmask));
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
