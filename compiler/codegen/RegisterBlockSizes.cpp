//===- RegisterBlockSizes.cpp - Register block sizes ----------------------===//
//
// A `?` extent is bounded from the IR that computes it (sizeBound): one
// with a small bound, such as a partial key block, is then one block of
// masked whole registers.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/RegisterBlockSizes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::mha;

namespace {
/// The largest divisor of `extent` that is at most `limit`: tiles that
/// divide their loop keep every tile static, so no masks are needed.
int64_t largestDivisorAtMost(int64_t extent, int64_t limit) {
  for (int64_t size = std::min(extent, limit); size > 1; --size)
    if (extent % size == 0)
      return size;
  return 1;
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

} // namespace

int64_t mlir::mha::maskedWidth(int64_t extent, int64_t lanes) {
  return lanes *
         int64_t(llvm::PowerOf2Ceil(uint64_t(llvm::divideCeil(extent, lanes))));
}

std::optional<int64_t> mlir::mha::loopBound(linalg::LinalgOp op, unsigned dim) {
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

std::optional<RegisterBlocks>
mlir::mha::getRegisterBlocks(linalg::LinalgOp op,
                             const MhaVectorizeOptions &options) {
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
