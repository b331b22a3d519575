//===- OnlineSoftmax.cpp - Flash-style attention of one query tile --------===//
//
// Per key block [s0, s0 + tk) of a query tile:
//
//   S     = Q · K_blockᵀ                          (scores, [tq, tk])
//   m_new = max(m, max over allowed j of S)
//   corr  = m == m_new ? 1 : exp2((m - m_new)·c)  (1 when both are -inf)
//   P     = allowed ? exp2((S - m_new)·c) : 0     (over S, in place)
//   l     = l·corr + rowsum(P)
//   acc   = acc·corr + P · V_block
//
// (c = scale·log2(e): exp2 of a distance times c is exp of the scaled
// distance. The maxima are raw scores, and each exponent is a distance
// between raw scores: getLog2Scale in AttentionMath.h says why.)
// and at the end out = l == 0 ? 0 : acc / l (combineKeySplits merges the
// states of several key ranges first). A range of keys is one
// `mha.online_attention`: scf::tileUsingSCF makes its key loop through its
// TilingInterface (OnlineAttentionInterfaces.cpp: the keys a reduction into
// the whole state), scf::peelForLoopAndSimplifyBounds peels the short last
// block, and each block decomposes into the ops above
// (OnlineAttentionBlock.cpp). This file builds the state and the key loop.
// The correction is guarded
// because a row that has seen no allowed key yet has m = m_new = -inf, and
// exp2(-inf - -inf) is NaN; P is selected, not computed from -inf, for the
// same reason. Every step is a linalg op on tensors written into a
// destination that the loop carries, so bufferization updates the same
// buffers in place and allocates nothing per key block.
//
// The loops are ordered for the code that linalg-to-loops produces: the
// score contraction runs (query, dk, key) over the block's keys transposed
// to [dk, tk], and P·V runs (query, key, value column), so that the
// innermost loop walks contiguous memory and reduces nothing; LLVM can
// vectorize it without reassociating floating-point sums, which keeps
// results bitwise reproducible.
//
//===----------------------------------------------------------------------===//

#include "compiler/attention/OnlineSoftmax.h"
#include "compiler/attention/TileTensors.h"
#include "compiler/utils/AttentionMath.h"
#include "compiler/utils/GenericBuilder.h"
#include "dialects/MhaOnlineAttention.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace mlir::mha;

using utils::IteratorType;

/// The static size of `size`, or `ShapedType::kDynamic`.
static int64_t staticSize(OpFoldResult size) {
  return getConstantIntValue(size).value_or(ShapedType::kDynamic);
}

/// A new f32 buffer of `shape`. `bufferization.alloc_tensor`, not
/// `tensor.empty`: CSE merges equal `tensor.empty` ops, and two loop-carried
/// scratch tensors that start from one value end up sharing one buffer.
static Value allocScratch(OpBuilder &builder, Location loc,
                          ArrayRef<int64_t> shape,
                          ValueRange dynamicSizes = {}) {
  return bufferization::AllocTensorOp::create(
      builder, loc, RankedTensorType::get(shape, builder.getF32Type()),
      dynamicSizes);
}

SmallVector<Value> OnlineSoftmaxState::asRange() const {
  SmallVector<Value> values = {max,   sum,    acc,       scores,
                               keysT, newMax, correction};
  if (widened)
    values.push_back(widened);
  return values;
}

OnlineSoftmaxState OnlineSoftmaxState::fromRange(ValueRange values) {
  assert((values.size() == 7 || values.size() == 8) &&
         "expects the values of asRange");
  return {values[0], values[1],
          values[2], values[3],
          values[4], values[5],
          values[6], values.size() == 8 ? values[7] : Value()};
}

OnlineSoftmaxBuilder::OnlineSoftmaxBuilder(OpBuilder &builder, Location loc,
                                           const AttentionTile &tile,
                                           int64_t queryTile, int64_t keyTile)
    : builder(builder), loc(loc), tile(tile), queryTile(queryTile),
      keyTile(keyTile) {
  keyDim = cast<RankedTensorType>(tile.key.getType()).getDimSize(1);
  valueDim = cast<RankedTensorType>(tile.value.getType()).getDimSize(1);
  if (CodegenSizesAttr sizes =
          getRecordedCodegenSizes(builder.getInsertionBlock()->getParentOp()))
    tailKeys = sizes.getTailKeys();
}

bool AttentionTile::isOneQuery() const {
  return !keyT && isConstantIntValue(numQueries, 1);
}

OnlineSoftmaxState
OnlineSoftmaxBuilder::initialize(Value accInit, Value maxInit, Value sumInit) {
  GenericBuilder ops(builder, loc);
  OnlineSoftmaxState state;
  int64_t rows = staticSize(tile.numQueries);
  SmallVector<Value> dynamicRows;
  if (ShapedType::isDynamic(rows))
    dynamicRows.push_back(cast<Value>(tile.numQueries));
  if (!maxInit)
    maxInit = allocScratch(builder, loc, {rows}, dynamicRows);
  if (!sumInit)
    sumInit = allocScratch(builder, loc, {rows}, dynamicRows);
  state.max = ops.fill(ops.minusInfinity(), maxInit);
  state.sum = ops.fill(ops.f32Constant(0.0), sumInit);
  state.acc = ops.fill(ops.f32Constant(0.0), accInit);

  // Scratch of the largest block: a static shape, so that it can live on
  // the stack, bounded by the sizes when those are static and smaller.
  int64_t maxRows = ShapedType::isDynamic(rows) ? queryTile : rows;
  int64_t keys = cast<RankedTensorType>(tile.key.getType()).getDimSize(0);
  int64_t maxKeys =
      ShapedType::isDynamic(keys) ? keyTile : std::min(keyTile, keys);
  state.scores = allocScratch(builder, loc, {maxRows, maxKeys});
  // One query against its keys reads each key row once, along dk
  // (OnlineAttentionBlock.cpp): the scratch holds the products [keys, dk],
  // not Kᵀ.
  state.keysT = tile.isOneQuery()
                    ? allocScratch(builder, loc, {maxKeys, keyDim})
                    : allocScratch(builder, loc, {keyDim, maxKeys});
  // A bf16 value block is widened into f32 before P·V (whose contraction
  // needs one element type), and so is a bf16 key block before its
  // transpose (OnlineAttentionBlock.cpp); f32 ones need none.
  if (isBF16(tile.key) || isBF16(tile.value) || tile.keyScales ||
      tile.valueScales)
    state.widened =
        allocScratch(builder, loc, {maxKeys, std::max(keyDim, valueDim)});
  state.newMax = allocScratch(builder, loc, {maxRows});
  state.correction = allocScratch(builder, loc, {maxRows});
  return state;
}

/// Fills the empty `score_mod` region of `update` with the score steps of
/// `tile`, in mha.sdpa's order: softcap, ALiBi (the head's slope, read
/// above the op), the bias (the update's one score input), then mha.sdpa's
/// own region, whose batch and head arguments are the tile's. The score it
/// receives is already scaled (decomposeOnlineAttention).
static void buildTileScoreMod(OpBuilder &builder, Location loc,
                              OnlineAttentionOp update,
                              const AttentionTile &tile) {
  OpBuilder::InsertionGuard guard(builder);
  Type f32 = builder.getF32Type(), index = builder.getIndexType();
  SmallVector<Type> types = {f32};
  if (tile.biasRows)
    types.push_back(f32);
  types.append({index, index});
  Block *body = builder.createBlock(&update.getScoreMod().front(), {}, types,
                                    SmallVector<Location>(types.size(), loc));
  Value score = body->getArgument(0);
  Value position = body->getArgument(types.size() - 2);
  Value key = body->getArgument(types.size() - 1);
  Value softcap =
      tile.softcap ? arith::ConstantOp::create(
                         builder, loc, builder.getF32FloatAttr(*tile.softcap))
                         .getResult()
                   : Value();
  score = buildScoreSteps(
      builder, loc, score, /*scale=*/Value(), softcap, tile.slope,
      tile.biasRows ? body->getArgument(1) : Value(), key, position);
  if (tile.scoreMod)
    score =
        buildScoreMod(builder, *tile.scoreMod,
                      {score, tile.batchIndex, tile.headIndex, position, key});
  YieldOp::create(builder, loc, score);
}

OnlineAttentionOp OnlineSoftmaxBuilder::createUpdate(
    RewriterBase &rewriter, const OnlineSoftmaxState &state, OpFoldResult begin,
    OpFoldResult count, bool causal, OpFoldResult rowBegin) {
  OpFoldResult zero = rewriter.getIndexAttr(0);
  OpFoldResult dk = rewriter.getIndexAttr(keyDim),
               dv = rewriter.getIndexAttr(valueDim);
  if (!rowBegin)
    rowBegin = begin;
  // The range's keys, values and mask: views of the tile's.
  Value keys =
      sliceUnlessWhole(rewriter, loc, tile.key, {rowBegin, zero}, {count, dk});
  Value values = sliceUnlessWhole(rewriter, loc, tile.value, {rowBegin, zero},
                                  {count, dv});
  Value keysT, mask, keyScales, valueScales;
  SmallVector<Value> scoreInputs;
  if (tile.keyT)
    keysT =
        sliceUnlessWhole(rewriter, loc, tile.keyT, {zero, begin}, {dk, count});
  if (tile.keyScales)
    keyScales =
        sliceUnlessWhole(rewriter, loc, tile.keyScales, {rowBegin}, {count});
  if (tile.valueScales)
    valueScales =
        sliceUnlessWhole(rewriter, loc, tile.valueScales, {rowBegin}, {count});
  if (tile.maskRows)
    mask = sliceUnlessWhole(rewriter, loc, tile.maskRows, {zero, begin},
                            {tile.numQueries, count});
  if (tile.biasRows)
    scoreInputs.push_back(
        sliceUnlessWhole(rewriter, loc, tile.biasRows, {zero, begin},
                         {getSize(rewriter, loc, tile.biasRows, 0), count}));
  // The window and the score steps read the query's position in every
  // block, not only in those that cross the diagonal.
  bool positioned = causal || tile.window || tile.modifiesScores();
  SmallVector<Value> inits = state.asRange();
  auto update = OnlineAttentionOp::create(
      rewriter, loc, ValueRange(inits).getTypes(), tile.query, keys, values,
      keysT, mask, tile.queryStart,
      getValueOrCreateConstantIndexOp(rewriter, loc, begin),
      positioned ? tile.causalOffset : Value(), scoreInputs, tile.window,
      rewriter.getF64FloatAttr(tile.scale),
      causal ? rewriter.getUnitAttr() : nullptr,
      tile.packed ? rewriter.getUnitAttr() : nullptr,
      tile.sharedPosition ? rewriter.getUnitAttr() : nullptr, keyScales,
      valueScales, inits[0], inits[1], inits[2], inits[3], inits[4], inits[5],
      inits[6], state.widened ? state.widened : Value(),
      tile.modifiesScores() ? 1 : 0);
  if (tile.modifiesScores())
    buildTileScoreMod(rewriter, loc, update, tile);
  return update;
}

OnlineSoftmaxState OnlineSoftmaxBuilder::updateByKeys(
    const OnlineSoftmaxState &state, OpFoldResult begin, OpFoldResult end,
    bool causal, ArrayRef<int64_t> blockSizes, bool fullBlocks) {
  if (tile.pageTable)
    return updateByPages(state, begin, end, causal, blockSizes, fullBlocks);
  IRRewriter rewriter(builder);
  AffineExpr d0 = builder.getAffineDimExpr(0), d1 = builder.getAffineDimExpr(1);
  // An empty range (end < begin) has no keys; all the keys need no clamp.
  OpFoldResult count = end;
  if (!isConstantIntValue(begin, 0) || end != getKnownSizes(tile.key)[0])
    count = affine::makeComposedFoldedAffineMax(
        rewriter, loc,
        AffineMap::get(2, 0, {d1 - d0, builder.getAffineConstantExpr(0)},
                       builder.getContext()),
        {begin, end});
  if (isConstantIntValue(count, 0))
    return state;
  OnlineAttentionOp update =
      createUpdate(rewriter, state, begin, count, causal);
  FailureOr<SmallVector<Value>> results =
      tileKeys(rewriter, update, blockSizes, fullBlocks);
  // tileUsingSCF fails only on a malformed op, which createUpdate does not
  // make.
  assert(succeeded(results) && "expects the key loop to tile");
  return OnlineSoftmaxState::fromRange(*results);
}

OnlineSoftmaxState OnlineSoftmaxBuilder::updateByPages(
    const OnlineSoftmaxState &state, OpFoldResult begin, OpFoldResult end,
    bool causal, ArrayRef<int64_t> blockSizes, bool fullBlocks) {
  MLIRContext *context = builder.getContext();
  AffineExpr d0 = builder.getAffineDimExpr(0), d1 = builder.getAffineDimExpr(1);
  int64_t pageSize = tile.pageSize;
  auto apply = [&](AffineExpr expr, ArrayRef<OpFoldResult> operands) {
    return affine::makeComposedFoldedAffineApply(builder, loc, expr, operands);
  };
  auto pair = AffineMap::get(2, 0, {d0, d1}, context);
  Value firstPage = getValueOrCreateConstantIndexOp(
      builder, loc, apply(d0.floorDiv(pageSize), {begin}));
  Value endPage = getValueOrCreateConstantIndexOp(
      builder, loc, apply(d0.ceilDiv(pageSize), {end}));
  Value pages = tensor::DimOp::create(builder, loc, tile.keyPages, 0);
  // A whole block of the range stays whole in its page where P is whole
  // blocks.
  bool pageBlocks = fullBlocks && pageSize % blockSizes.front() == 0;
  // The body is built once the loop is in place (tileKeys folds affine
  // maps, which look at the regions above their operands).
  auto loop = scf::ForOp::create(
      builder, loc, firstPage, endPage,
      arith::ConstantIndexOp::create(builder, loc, 1), state.asRange());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(loop.getBody());
  OpBuilder &b = builder;
  Location nloc = loc;
  Value page = loop.getInductionVar();
  ValueRange carried = loop.getRegionIterArgs();
  OpFoldResult pageStart = apply(d0 * pageSize, {page});
  OpFoldResult lo =
      affine::makeComposedFoldedAffineMax(b, nloc, pair, {begin, pageStart});
  OpFoldResult hi = affine::makeComposedFoldedAffineMin(
      b, nloc, pair, {end, apply(d0 + pageSize, {pageStart})});
  OpFoldResult count = affine::makeComposedFoldedAffineMax(
      b, nloc,
      AffineMap::get(2, 0, {d1 - d0, b.getAffineConstantExpr(0)}, context),
      {lo, hi});
  // The page's entry, clamped into the pool: the tools check the
  // tables, and a wrong entry must not read outside the pool.
  Value entry = arith::IndexCastOp::create(
      b, nloc, b.getIndexType(),
      tensor::ExtractOp::create(b, nloc, tile.pageTable, page));
  Value lastPage = arith::SubIOp::create(
      b, nloc, pages, arith::ConstantIndexOp::create(b, nloc, 1));
  entry = arith::MaxSIOp::create(
      b, nloc, arith::ConstantIndexOp::create(b, nloc, 0),
      arith::MinSIOp::create(b, nloc, entry, lastPage));
  // Page `entry` of `pages` ([N, P, d], or [N, P] of an int8 pool's
  // scales): its rows, [P, d] or [P].
  auto pageOf = [&](Value pages) -> Value {
    if (!pages)
      return {};
    auto type = cast<RankedTensorType>(pages.getType());
    auto rowsType = RankedTensorType::get(type.getShape().drop_front(),
                                          type.getElementType());
    OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
    SmallVector<OpFoldResult> offsets(type.getRank(), zero), sizes = {one};
    offsets[0] = entry;
    for (int64_t size : type.getShape().drop_front())
      sizes.push_back(b.getIndexAttr(size));
    return tensor::ExtractSliceOp::create(
        b, nloc, rowsType, pages, offsets, sizes,
        SmallVector<OpFoldResult>(type.getRank(), one));
  };
  AttentionTile whole = tile;
  tile.key = pageOf(tile.keyPages);
  tile.value = pageOf(tile.valuePages);
  if (tile.keyScalePages)
    tile.keyScales = pageOf(tile.keyScalePages);
  if (tile.valueScalePages)
    tile.valueScales = pageOf(tile.valueScalePages);
  IRRewriter rewriter(b);
  OnlineAttentionOp update =
      createUpdate(rewriter, OnlineSoftmaxState::fromRange(carried), lo, count,
                   causal, apply(d0 - d1, {lo, pageStart}));
  tile = whole;
  FailureOr<SmallVector<Value>> results =
      tileKeys(rewriter, update, blockSizes, pageBlocks);
  assert(succeeded(results) && "expects the key loop to tile");
  scf::YieldOp::create(b, nloc, *results);
  return OnlineSoftmaxState::fromRange(loop.getResults());
}

OnlineSoftmaxState
OnlineSoftmaxBuilder::iterateKeyRange(const OnlineSoftmaxState &state,
                                      OpFoldResult begin, OpFoldResult end,
                                      bool causal) {
  // A block size larger than a static key count would slice past the
  // scratch (sized by the keys): no such block fits anyway.
  int64_t keys = cast<RankedTensorType>(tile.key.getType()).getDimSize(0);
  auto fits = [&](int64_t block) {
    return ShapedType::isDynamic(keys) || block <= keys;
  };
  SmallVector<int64_t> blockSizes;
  if (fits(keyTile))
    blockSizes.push_back(keyTile);
  if (tailKeys > 0 && keyTile > tailKeys && fits(tailKeys))
    blockSizes.push_back(tailKeys);
  return updateByKeys(state, begin, end, causal, blockSizes,
                      /*fullBlocks=*/false);
}

OnlineSoftmaxState OnlineSoftmaxBuilder::iterateKeyBlocks(
    const OnlineSoftmaxState &state, OpFoldResult begin, OpFoldResult end,
    bool causal, bool fullBlocks, int64_t blockKeys) {
  int64_t block = blockKeys ? blockKeys : keyTile;
  // The scratch holds no more keys than a static key count.
  int64_t keys = cast<RankedTensorType>(tile.key.getType()).getDimSize(0);
  if (!ShapedType::isDynamic(keys))
    block = std::max<int64_t>(1, std::min(block, keys));
  return updateByKeys(state, begin, end, causal, {block}, fullBlocks);
}

/// Replaces `op`, one block, by its decomposition (linalg's
/// AggregatedOpInterface), and erases the views it no longer needs.
static FailureOr<SmallVector<Value>> decomposeBlock(RewriterBase &rewriter,
                                                    OnlineAttentionOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  FailureOr<SmallVector<Value>> results =
      cast<linalg::AggregatedOpInterface>(op.getOperation())
          .decomposeOperation(rewriter);
  if (failed(results))
    return failure();
  SmallVector<Value> operands = op->getOperands();
  rewriter.replaceOp(op, *results);
  for (Value operand : operands)
    eraseDeadSlices(rewriter, operand);
  return results;
}

/// Restates the key count of `op`, a peeled loop's short block, as
/// min(`bound`, count): peeling leaves it `ub - iv`, whose bound the
/// vectorizer cannot see, and would vectorize the few keys as a whole
/// scratch row; with the min it masks vectors of `bound` keys, as for any
/// short block.
static void boundKeys(RewriterBase &rewriter, OnlineAttentionOp op,
                      int64_t bound) {
  Location loc = op.getLoc();
  OpFoldResult count = getSize(rewriter, loc, op.getKey());
  if (getConstantIntValue(count))
    return;
  MLIRContext *context = rewriter.getContext();
  OpFoldResult bounded = affine::makeComposedFoldedAffineMin(
      rewriter, loc,
      AffineMap::get(
          1, 0,
          {getAffineConstantExpr(bound, context), getAffineDimExpr(0, context)},
          context),
      {count});
  // The block's views cut again with the bounded count (from what they
  // were cut from, so that each stays one view).
  auto resized = [&](Value view, unsigned dim) -> Value {
    auto made = view.getDefiningOp<tensor::ExtractSliceOp>();
    if (made && made.getSourceType().getRank() == made.getType().getRank()) {
      SmallVector<OpFoldResult> sizes = made.getMixedSizes();
      sizes[dim] = bounded;
      return tensor::ExtractSliceOp::create(rewriter, loc, made.getSource(),
                                            made.getMixedOffsets(), sizes,
                                            made.getMixedStrides());
    }
    OpFoldResult zero = rewriter.getIndexAttr(0);
    SmallVector<OpFoldResult> sizes = {getSize(rewriter, loc, view, 0),
                                       getSize(rewriter, loc, view, 1)};
    sizes[dim] = bounded;
    return slice(rewriter, loc, view, {zero, zero}, sizes);
  };
  auto rowSlice = [&](Value view) { return resized(view, 0); };
  auto columnSlice = [&](Value view) { return resized(view, 1); };
  SmallVector<Value> views = op->getOperands();
  rewriter.modifyOpInPlace(op, [&] {
    op.getKeyMutable().assign(rowSlice(op.getKey()));
    op.getValueMutable().assign(rowSlice(op.getValue()));
    if (Value keysT = op.getKeysT())
      op.getKeysTMutable().assign(columnSlice(keysT));
    if (Value mask = op.getMask())
      op.getMaskMutable().assign(columnSlice(mask));
  });
  for (Value view : views)
    eraseDeadSlices(rewriter, view);
}

FailureOr<SmallVector<Value>> mlir::mha::tileKeys(RewriterBase &rewriter,
                                                  OnlineAttentionOp op,
                                                  ArrayRef<int64_t> blockSizes,
                                                  bool fullBlocks,
                                                  int64_t bound) {
  OpBuilder::InsertionGuard guard(rewriter);
  // One block of every key (fewer than the smallest block size).
  if (blockSizes.empty()) {
    if (bound) {
      rewriter.setInsertionPoint(op);
      boundKeys(rewriter, op, bound);
    }
    return decomposeBlock(rewriter, op);
  }
  // The key loop: the keys are the op's reduction, the state its
  // destinations, which the loop carries (FullReduction).
  scf::SCFTilingOptions options;
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp)
      .setTileSizes({rewriter.getIndexAttr(blockSizes.front())});
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  auto loop = cast<scf::ForOp>(tiled->loops.front().getOperation());
  // Every tile writes the whole state, which tileUsingSCF inserts into the
  // carried destinations at offset 0 with their sizes; with dynamic rows it
  // cannot fold that insert (its sizes are `tensor.dim`s of the inits), and
  // bufferization would copy the state onto itself per block: the tile's
  // value is yielded as it is.
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (OpOperand &yielded : yield->getOpOperands()) {
    auto insert = yielded.get().getDefiningOp<tensor::InsertSliceOp>();
    if (!insert || insert.getSourceType() != insert.getDestType() ||
        insert.getDest() !=
            loop.getRegionIterArgs()[yielded.getOperandNumber()] ||
        !llvm::all_of(insert.getMixedOffsets(), [](OpFoldResult offset) {
          return isConstantIntValue(offset, 0);
        }))
      continue;
    rewriter.modifyOpInPlace(yield, [&] { yielded.set(insert.getSource()); });
    if (insert->use_empty())
      rewriter.eraseOp(insert);
  }
  // Whole blocks have static shapes (what the vectorizer needs): the last,
  // short block is peeled off the loop, which leaves the others of
  // exactly `blockSizes.front()` keys.
  scf::ForOp partial;
  SmallVector<Value> results = loop.getResults();
  if (succeeded(scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial))) {
    if (fullBlocks) {
      // The caller knows that the range is whole blocks: the short block
      // never runs.
      rewriter.replaceOp(partial, partial.getInitArgs());
    } else {
      results = partial.getResults();
      // The short block, in blocks of the next size, and so on.
      OnlineAttentionOp rest;
      partial.walk([&](OnlineAttentionOp nested) { rest = nested; });
      if (rest && failed(tileKeys(rewriter, rest, blockSizes.drop_front(),
                                  /*fullBlocks=*/false, blockSizes.front())))
        return failure();
    }
  }
  // Each block's update is linalg ops on tensors.
  SmallVector<OnlineAttentionOp> blocks;
  loop.walk([&](OnlineAttentionOp nested) { blocks.push_back(nested); });
  for (OnlineAttentionOp block : blocks)
    if (failed(decomposeBlock(rewriter, block)))
      return failure();
  return results;
}

Value mlir::mha::buildNormalizedRows(OpBuilder &builder, Location loc,
                                     Value sum, Value acc) {
  GenericBuilder ops(builder, loc);
  unsigned rank = cast<RankedTensorType>(acc.getType()).getRank();
  SmallVector<unsigned> rows =
      llvm::to_vector(llvm::seq<unsigned>(0, rank - 1));
  SmallVector<unsigned> all = llvm::to_vector(llvm::seq<unsigned>(0, rank));
  SoftmaxConstants constants;
  constants.zero = ops.f32Constant(0.0);
  return ops.generic({sum}, acc, {ops.map(rank, rows), ops.map(rank, all)},
                     SmallVector<IteratorType>(rank, kParallel),
                     [&](OpBuilder &nb, Location nloc, ValueRange args) {
                       return buildNormalized(nb, nloc, constants, args[0],
                                              args[1]);
                     });
}

Value OnlineSoftmaxBuilder::finalize(const OnlineSoftmaxState &state) {
  if (!tile.sink)
    return buildNormalizedRows(builder, loc, state.sum, state.acc);
  // The head's sink joins each row's denominator.
  Value denominators =
      addSinkWeights(builder, loc, state.max, state.sum, tile.sink, AffineMap(),
                     tile.scale, tile.modifiesScores());
  return buildNormalizedRows(builder, loc, denominators, state.acc);
}

Value mlir::mha::addSinkWeights(OpBuilder &builder, Location loc, Value max,
                                Value sum, Value sinks, AffineMap sinkMap,
                                double scale, bool modifiedScores) {
  GenericBuilder ops(builder, loc);
  unsigned rank = cast<RankedTensorType>(sum.getType()).getRank();
  SmallVector<unsigned> rows = llvm::to_vector(llvm::seq<unsigned>(0, rank));
  // In the exponentials' units: the raw scores' exponent is
  // (s - m)·scale·log2(e), so the sink (a logit, already scaled) enters as
  // sink / scale.
  Value log2Scale = ops.f32Constant(getLog2Scale(modifiedScores ? 1.0 : scale));
  Value toScores = ops.f32Constant(modifiedScores ? 1.0 : 1.0 / scale);
  SmallVector<Value> inputs = {max};
  SmallVector<AffineMap> maps = {ops.map(rank, rows)};
  if (sinkMap) {
    inputs.push_back(sinks);
    maps.push_back(sinkMap);
  }
  maps.push_back(ops.map(rank, rows));
  return ops.generic(
      inputs, sum, maps, SmallVector<IteratorType>(rank, kParallel),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value rowSink = sinkMap ? args[1] : sinks;
        Value inScores = arith::MulFOp::create(nb, nloc, rowSink, toScores);
        Value distance = arith::SubFOp::create(nb, nloc, inScores, args[0]);
        Value weight = math::Exp2Op::create(
            nb, nloc, arith::MulFOp::create(nb, nloc, distance, log2Scale));
        return arith::AddFOp::create(nb, nloc, args.back(), weight).getResult();
      });
}
