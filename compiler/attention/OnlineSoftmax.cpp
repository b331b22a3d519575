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
// `mha.online_attention`: scf::tileUsingSCF makes its key loop through the
// TilingInterface below (the keys a reduction into the whole state),
// scf::peelForLoopAndSimplifyBounds peels the short last block, and each
// block decomposes into the ops above (updateBlock). The correction is guarded
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
#include "compiler/attention/AttentionMath.h"
#include "compiler/attention/GenericBuilder.h"
#include "dialects/MhaDialect.h"
#include "dialects/MhaOnlineAttention.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
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
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::mha;

namespace {
using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

/// The static size of `size`, or `ShapedType::kDynamic`.
int64_t staticSize(OpFoldResult size) {
  return getConstantIntValue(size).value_or(ShapedType::kDynamic);
}

/// `source[offsets][sizes]` with unit strides, of the same rank.
Value slice(OpBuilder &b, Location loc, Value source,
            ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes,
                                        strides);
}

/// `source` written back into `dest` at `slice`'s place: the inverse of
/// `slice`, which bufferization recognizes as in place.
Value unslice(OpBuilder &b, Location loc, Value source, Value dest,
              ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  return tensor::InsertSliceOp::create(b, loc, source, dest, offsets, sizes,
                                       strides);
}

/// `size` as an attribute where it is a constant: also the constant
/// `affine.apply` that loop peeling leaves for a full block's size.
OpFoldResult foldSize(OpFoldResult size) {
  auto value = dyn_cast<Value>(size);
  if (!value)
    return size;
  if (auto apply = value.getDefiningOp<affine::AffineApplyOp>())
    if (apply.getAffineMap().isSingleConstant())
      return OpBuilder(apply).getIndexAttr(
          apply.getAffineMap().getSingleConstantResult());
  return getAsOpFoldResult(value);
}

/// The sizes of `value` as far as its type or the slice that made it says
/// (without creating ops): an attribute where static, the slice's size value
/// where that made it, else null.
SmallVector<OpFoldResult> getKnownSizes(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> sizes(type.getRank());
  SmallVector<OpFoldResult> made;
  if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>()) {
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    for (auto [index, size] : llvm::enumerate(slice.getMixedSizes()))
      if (!dropped.test(index))
        made.push_back(foldSize(size));
  }
  Builder b(value.getContext());
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    sizes[dim] = !type.isDynamicDim(dim) ? b.getIndexAttr(type.getDimSize(dim))
                 : made.empty()          ? OpFoldResult()
                                         : made[dim];
  return sizes;
}

/// `slice`, or `source` itself where that is the whole of it from 0 (the
/// whole of a block, or the keys of a range that is all of them).
Value sliceUnlessWhole(OpBuilder &b, Location loc, Value source,
                       ArrayRef<OpFoldResult> offsets,
                       ArrayRef<OpFoldResult> sizes) {
  bool whole = llvm::all_of(offsets, [](OpFoldResult offset) {
    return isConstantIntValue(offset, 0);
  });
  SmallVector<OpFoldResult> known = getKnownSizes(source);
  for (auto [size, knownSize] : llvm::zip_equal(sizes, known))
    whole = whole && knownSize &&
            (knownSize == size ||
             (getConstantIntValue(size) &&
              getConstantIntValue(size) == getConstantIntValue(knownSize)));
  return whole ? source : slice(b, loc, source, offsets, sizes);
}

/// `value` in f32: widened (exactly) where it is a bf16 key or value
/// element, read from a bf16 cache. Widening inside the ops that read a key
/// block means a step reads the cache's bf16 bytes once, and no f32 copy of
/// the cache ever exists.
bool isBF16(Value value) {
  return getElementTypeOrSelf(value.getType()).isBF16();
}

Value widen(OpBuilder &b, Location loc, Value value) {
  if (!value.getType().isBF16())
    return value;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), value);
}

/// Builds the linalg ops (on f32 tensors) of the online softmax; their
/// scalar bodies are AttentionMath's.
struct TileOps : GenericBuilder {
  using GenericBuilder::GenericBuilder;

  /// c + a · b with `a` [M, K] f32 and `b` [K, N] in pairs of rows
  /// (SdpaTiling::pack: row 2i + 1 the lo parts of row 2i's pairs): a
  /// `linalg.generic` over (m, pair, n, element) marked `mha.amx_split`,
  /// which mha-amx-split lowers to AMX tiles; its body is the same sum
  /// (buildSplitMultiplyAdd) element by element.
  Value splitDot(Value a, Value bPairs, Value c) {
    Type f32 = builder.getF32Type();
    auto aType = cast<RankedTensorType>(a.getType());
    auto bType = cast<RankedTensorType>(bPairs.getType());
    auto half = [](int64_t size) {
      return ShapedType::isDynamic(size) ? size : size / 2;
    };
    Value aPairs = tensor::ExpandShapeOp::create(
        builder, loc,
        RankedTensorType::get(
            {aType.getDimSize(0), half(aType.getDimSize(1)), 2}, f32),
        a, SmallVector<ReassociationIndices>{{0}, {1, 2}});
    Value bParts = tensor::ExpandShapeOp::create(
        builder, loc,
        RankedTensorType::get(
            {half(bType.getDimSize(0)), 2, bType.getDimSize(1)}, f32),
        bPairs, SmallVector<ReassociationIndices>{{0, 1}, {2}});
    // (m, pair, n, element): part `lo` of the pair of rows.
    auto part = [&](int64_t lo) {
      return affineMap(4, {d(1), constantExpr(lo), d(2)});
    };
    Value result = generic(
        {aPairs, bParts, bParts}, c,
        {map(4, {0, 1, 3}), part(0), part(1), map(4, {0, 2})},
        {kPar, kRed, kPar, kRed},
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          Value element = linalg::IndexOp::create(nb, nloc, 3);
          return buildSplitMultiplyAdd(
              nb, nloc, args[0],
              buildBF16PairElement(nb, nloc, args[1], element),
              buildBF16PairElement(nb, nloc, args[2], element), args[3]);
        });
    MhaDialect::AmxSplitAttrHelper(getContext())
        .setAttr(result.getDefiningOp(), builder.getUnitAttr());
    return result;
  }

  /// A new f32 buffer of `shape`. `bufferization.alloc_tensor`, not
  /// `tensor.empty`: CSE merges equal `tensor.empty` ops, and two loop-carried
  /// scratch tensors that start from one value end up sharing one buffer.
  Value alloc(ArrayRef<int64_t> shape, ValueRange dynamicSizes = {}) {
    return bufferization::AllocTensorOp::create(
        builder, loc, RankedTensorType::get(shape, builder.getF32Type()),
        dynamicSizes);
  }
};

/// Erases `value`'s slice, and the slices it was cut from, where nothing
/// else reads them (defined below).
void eraseDeadSlices(RewriterBase &rewriter, Value value);

/// Dimension `dim` of `value`, static where known (defined below).
OpFoldResult getSize(OpBuilder &b, Location loc, Value value, unsigned dim = 0);
} // namespace

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
}

bool OnlineSoftmaxBuilder::isOneQuery() const {
  return !tile.keyT && isConstantIntValue(tile.numQueries, 1);
}

OnlineSoftmaxState
OnlineSoftmaxBuilder::initialize(Value accInit, Value maxInit, Value sumInit) {
  TileOps ops{builder, loc};
  OnlineSoftmaxState state;
  int64_t rows = staticSize(tile.numQueries);
  SmallVector<Value> dynamicRows;
  if (ShapedType::isDynamic(rows))
    dynamicRows.push_back(cast<Value>(tile.numQueries));
  if (!maxInit)
    maxInit = ops.alloc({rows}, dynamicRows);
  if (!sumInit)
    sumInit = ops.alloc({rows}, dynamicRows);
  state.max = ops.fill(ops.minusInfinity(), maxInit);
  state.sum = ops.fill(ops.f32Constant(0.0), sumInit);
  state.acc = ops.fill(ops.f32Constant(0.0), accInit);

  // Scratch of the largest block: a static shape, so that it can live on
  // the stack, bounded by the sizes when those are static and smaller.
  int64_t maxRows = ShapedType::isDynamic(rows) ? queryTile : rows;
  int64_t keys = cast<RankedTensorType>(tile.key.getType()).getDimSize(0);
  int64_t maxKeys =
      ShapedType::isDynamic(keys) ? keyTile : std::min(keyTile, keys);
  state.scores = ops.alloc({maxRows, maxKeys});
  // One query against its keys reads each key row once, along dk
  // (updateBlock): the scratch holds the products [keys, dk], not Kᵀ.
  state.keysT = isOneQuery() ? ops.alloc({maxKeys, keyDim})
                             : ops.alloc({keyDim, maxKeys});
  // A bf16 value block is widened into f32 before P·V (whose contraction
  // needs one element type), and so is a bf16 key block before its
  // transpose (updateBlock); f32 ones need none.
  if (isBF16(tile.key) || isBF16(tile.value))
    state.widened = ops.alloc({maxKeys, std::max(keyDim, valueDim)});
  state.newMax = ops.alloc({maxRows});
  state.correction = ops.alloc({maxRows});
  return state;
}

OnlineAttentionOp OnlineSoftmaxBuilder::createUpdate(
    RewriterBase &rewriter, const OnlineSoftmaxState &state, OpFoldResult begin,
    OpFoldResult count, bool causal) {
  OpFoldResult zero = rewriter.getIndexAttr(0);
  OpFoldResult dk = rewriter.getIndexAttr(keyDim),
               dv = rewriter.getIndexAttr(valueDim);
  // The range's keys, values and mask: views of the tile's.
  Value keys =
      sliceUnlessWhole(rewriter, loc, tile.key, {begin, zero}, {count, dk});
  Value values =
      sliceUnlessWhole(rewriter, loc, tile.value, {begin, zero}, {count, dv});
  Value keysT, mask;
  if (tile.keyT)
    keysT =
        sliceUnlessWhole(rewriter, loc, tile.keyT, {zero, begin}, {dk, count});
  if (tile.maskRows)
    mask = sliceUnlessWhole(rewriter, loc, tile.maskRows, {zero, begin},
                            {tile.numQueries, count});
  SmallVector<Value> inits = state.asRange();
  return OnlineAttentionOp::create(
      rewriter, loc, ValueRange(inits).getTypes(), tile.query, keys, values,
      keysT, mask, tile.queryStart,
      getValueOrCreateConstantIndexOp(rewriter, loc, begin),
      causal ? tile.causalOffset : Value(),
      rewriter.getF64FloatAttr(tile.scale),
      causal ? rewriter.getUnitAttr() : nullptr,
      tile.packed ? rewriter.getUnitAttr() : nullptr, inits[0], inits[1],
      inits[2], inits[3], inits[4], inits[5], inits[6],
      state.widened ? state.widened : Value());
}

OnlineSoftmaxState OnlineSoftmaxBuilder::updateByKeys(
    const OnlineSoftmaxState &state, OpFoldResult begin, OpFoldResult end,
    bool causal, ArrayRef<int64_t> blockSizes, bool fullBlocks) {
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
  if (keyTile > kTailKeys && fits(kTailKeys))
    blockSizes.push_back(kTailKeys);
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

namespace {
/// One query without a transposed view of its keys: the scores are dot
/// products along each key row.
bool isOneQuery(const AttentionTile &tile) {
  return !tile.keyT && isConstantIntValue(tile.numQueries, 1);
}

/// Dimension `dim` of `value`: static where the type or the slice that made
/// it says so (a peeled loop's blocks are slices of a constant size, typed
/// `?` by the tiling that made them before the peeling).
OpFoldResult getSize(OpBuilder &b, Location loc, Value value, unsigned dim) {
  if (OpFoldResult known = getKnownSizes(value)[dim])
    return known;
  return tensor::getMixedSize(b, loc, value, dim);
}

/// `value` with the static type its sizes allow: a slice of a constant size
/// typed `?` (a peeled loop's block, made by tiling before the peeling) is
/// made again so that the block's ops see static shapes (what the vectorizer
/// needs). A block sliced out of a range of keys that is itself a slice of
/// the same rank is taken straight from what the range was sliced from: one
/// view per block, as the key loop had before it was tiled.
Value withStaticSizes(OpBuilder &b, Location loc, Value value) {
  auto slice = value ? value.getDefiningOp<tensor::ExtractSliceOp>()
                     : tensor::ExtractSliceOp();
  if (!slice)
    return value;
  auto range = slice.getSource().getDefiningOp<tensor::ExtractSliceOp>();
  if (range && range.getSourceType().getRank() != range.getType().getRank())
    range = {};
  SmallVector<OpFoldResult> sizes;
  for (OpFoldResult size : slice.getMixedSizes())
    sizes.push_back(foldSize(size));
  // The same rank reduction, with the sizes that are constants static.
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  SmallVector<int64_t> shape;
  for (auto [index, size] : llvm::enumerate(sizes))
    if (!dropped.test(index))
      shape.push_back(getConstantIntValue(size).value_or(ShapedType::kDynamic));
  auto type = RankedTensorType::get(shape, slice.getType().getElementType());
  if (type == slice.getType() && !range)
    return value;
  Value source = slice.getSource();
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets(),
                            strides = slice.getMixedStrides();
  if (range) {
    SmallVector<OpFoldResult> combinedOffsets, combinedSizes, combinedStrides;
    if (succeeded(affine::mergeOffsetsSizesAndStrides(
            b, loc, range.getMixedOffsets(), range.getMixedSizes(),
            range.getMixedStrides(), range.getDroppedDims(), offsets, sizes,
            strides, combinedOffsets, combinedSizes, combinedStrides))) {
      source = range.getSource();
      offsets = combinedOffsets;
      sizes = combinedSizes;
      strides = combinedStrides;
    }
  }
  return tensor::ExtractSliceOp::create(b, loc, type, source, offsets, sizes,
                                        strides);
}

void eraseDeadSlices(RewriterBase &rewriter, Value value) {
  while (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (!slice->use_empty())
      return;
    value = slice.getSource();
    rewriter.eraseOp(slice);
  }
}

/// The update of `state` by the block of `numKeys` keys from `keyStart`:
/// `tile`'s keys, values, Kᵀ and mask are those of the block.
OnlineSoftmaxState updateBlock(OpBuilder &b, Location loc,
                               const AttentionTile &tile,
                               const OnlineSoftmaxState &state, Value keyStart,
                               OpFoldResult numKeys, bool causal);
} // namespace

FailureOr<SmallVector<Value>>
mlir::mha::decomposeOnlineAttention(OpBuilder &b, OnlineAttentionOp op) {
  Location loc = op.getLoc();
  AttentionTile tile;
  tile.query = op.getQuery();
  tile.key = withStaticSizes(b, loc, op.getKey());
  tile.value = withStaticSizes(b, loc, op.getValue());
  tile.keyT = withStaticSizes(b, loc, op.getKeysT());
  tile.packed = op.getPacked();
  tile.maskRows = withStaticSizes(b, loc, op.getMask());
  tile.queryStart = op.getQueryStart();
  tile.causalOffset = op.getCausalOffset();
  tile.numQueries = getSize(b, loc, op.getQuery());
  tile.scale = op.getScale().convertToDouble();
  OpFoldResult numKeys = getSize(b, loc, tile.key);
  // The block must fit the scratch.
  auto fitsScratch = [&](Value scratch, unsigned dim) {
    int64_t capacity =
        cast<RankedTensorType>(scratch.getType()).getDimSize(dim);
    std::optional<int64_t> keys = getConstantIntValue(numKeys);
    return ShapedType::isDynamic(capacity) || !keys || *keys <= capacity;
  };
  if (!fitsScratch(op.getScores(), 1))
    return op.emitOpError("expects a block of at most as many keys as the "
                          "scores scratch has columns");
  OnlineSoftmaxState state = OnlineSoftmaxState::fromRange(op.getDpsInits());
  return updateBlock(b, loc, tile, state, op.getKeyStart(), numKeys,
                     op.getCausal())
      .asRange();
}

namespace {
OnlineSoftmaxState updateBlock(OpBuilder &b, Location loc,
                               const AttentionTile &tile,
                               const OnlineSoftmaxState &state, Value keyStart,
                               OpFoldResult numKeys, bool causal) {
  int64_t keyDim = cast<RankedTensorType>(tile.key.getType()).getDimSize(1);
  int64_t valueDim = cast<RankedTensorType>(tile.value.getType()).getDimSize(1);
  bool oneQuery = isOneQuery(tile);
  TileOps ops{b, loc};
  OpFoldResult zero = b.getIndexAttr(0);
  OpFoldResult rows = tile.numQueries;
  OpFoldResult dk = b.getIndexAttr(keyDim), dv = b.getIndexAttr(valueDim);
  SoftmaxConstants constants;
  constants.log2Scale = ops.f32Constant(getLog2Scale(tile.scale));
  constants.zero = ops.f32Constant(0.0);
  constants.one = ops.f32Constant(1.0);
  Value zeroF = constants.zero;

  // The block's keys, values and mask, with static shapes where the block
  // size is static.
  Value keys = sliceUnlessWhole(b, loc, tile.key, {zero, zero}, {numKeys, dk});
  Value values =
      sliceUnlessWhole(b, loc, tile.value, {zero, zero}, {numKeys, dv});
  Value mask;
  if (tile.maskRows)
    mask =
        sliceUnlessWhole(b, loc, tile.maskRows, {zero, zero}, {rows, numKeys});

  // Whether key j of the block may be attended by query i: the mask, and
  // for blocks crossing the diagonal key <= query (+ S - T when bottom-right
  // aligned). Null: every key.
  auto allowed = [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
    Value maskElement = mask ? args[1] : Value();
    if (!causal)
      return maskElement;
    Value query = arith::AddIOp::create(nb, nloc, tile.queryStart,
                                        linalg::IndexOp::create(nb, nloc, 0));
    Value key = arith::AddIOp::create(nb, nloc, keyStart,
                                      linalg::IndexOp::create(nb, nloc, 1));
    return buildAllowed(nb, nloc, maskElement, key, query, tile.causalOffset);
  };
  SmallVector<Value> maskInput;
  if (mask)
    maskInput.push_back(mask);

  // The widened scratch: a bf16 block of keys below, then one of values.
  Value widened = state.widened;

  // One query (decoding): S[0, j] = Σ_k q[k]·K[j, k], read along the
  // contiguous key rows: the products [tk, dk] (one vector of dk per key)
  // into the scratch, then one sum per key. Transposing K first would move
  // every key twice for a single dot product each.
  Value keysT;
  Value scores;
  Type f32 = b.getF32Type();
  if (oneQuery) {
    SmallVector<OpFoldResult> unit(2, b.getIndexAttr(1));
    Value queryRow = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({keyDim}, f32), tile.query,
        ArrayRef<OpFoldResult>{zero, zero},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), dk}, unit);
    keysT = slice(b, loc, state.keysT, {zero, zero}, {numKeys, dk});
    keysT = ops.generic(
        {queryRow, keys}, keysT,
        {ops.map(2, {1}), ops.map(2, {0, 1}), ops.map(2, {0, 1})}, {kPar, kPar},
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          return arith::MulFOp::create(nb, nloc, args[0],
                                       widen(nb, nloc, args[1]))
              .getResult();
        });
    std::optional<int64_t> staticKeys = getConstantIntValue(numKeys);
    auto rowType =
        RankedTensorType::get({staticKeys.value_or(ShapedType::kDynamic)}, f32);
    // The row is sliced out of the block's scores and written back into
    // them, so that bufferization keeps both in the scratch.
    scores = slice(b, loc, state.scores, {zero, zero}, {rows, numKeys});
    Value scoreRow = tensor::ExtractSliceOp::create(
        b, loc, rowType, scores, ArrayRef<OpFoldResult>{zero, zero},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), numKeys}, unit);
    scoreRow = ops.fill(zeroF, scoreRow);
    scoreRow = ops.generic(
        {keysT}, scoreRow, {ops.map(2, {0, 1}), ops.map(2, {0})}, {kPar, kRed},
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          return arith::AddFOp::create(nb, nloc, args[1], args[0]).getResult();
        });
    scores = tensor::InsertSliceOp::create(
        b, loc, scoreRow, scores, ArrayRef<OpFoldResult>{zero, zero},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), numKeys}, unit);
  } else if (tile.keyT) {
    keysT = sliceUnlessWhole(b, loc, tile.keyT, {zero, zero}, {dk, numKeys});
  } else {
    keysT = slice(b, loc, state.keysT, {zero, zero}, {dk, numKeys});
    // A bf16 block is widened along its rows first, then transposed in f32:
    // a read that transposes and widens at once is lowered to one scalar
    // load per 16-bit element.
    if (isBF16(keys)) {
      Value keysWide = slice(b, loc, widened, {zero, zero}, {numKeys, dk});
      keysWide = ops.generic(
          {keys}, keysWide, {ops.map(2, {0, 1}), ops.map(2, {0, 1})},
          {kPar, kPar}, [](OpBuilder &nb, Location nloc, ValueRange args) {
            return widen(nb, nloc, args[0]);
          });
      widened = unslice(b, loc, keysWide, widened, {zero, zero}, {numKeys, dk});
      keys = keysWide;
    }
    keysT = linalg::TransposeOp::create(b, loc, keys, keysT,
                                        ArrayRef<int64_t>{1, 0})
                ->getResult(0);
  }

  // S = Q · Kᵀ over keys packed in pairs (mha-amx-split).
  if (tile.packed) {
    scores = slice(b, loc, state.scores, {zero, zero}, {rows, numKeys});
    // The fill is marked too: mha-amx-split starts the tiles at zero instead
    // (mha-vectorize leaves it).
    scores = ops.fill(zeroF, scores);
    MhaDialect::AmxSplitAttrHelper(b.getContext())
        .setAttr(scores.getDefiningOp(), b.getUnitAttr());
    scores = ops.splitDot(tile.query, keysT, scores);
  } else if (!oneQuery) {
    // S = Q · Kᵀ over (query i, dk k, key j).
    scores = slice(b, loc, state.scores, {zero, zero}, {rows, numKeys});
    scores = ops.fill(zeroF, scores);
    scores = ops.contraction(
        tile.query, keysT, scores,
        {ops.map(3, {0, 1}), ops.map(3, {1, 2}), ops.map(3, {0, 2})},
        {kPar, kRed, kPar});
  }

  // blockMax = max over allowed j of S, from -inf (buildMaskedMax). It does
  // not start
  // from m: the vectorizer's canonicalization would fold a copy of m away
  // and update m in place while its old value is still read below, which
  // bufferization could only resolve with a buffer per key block.
  constants.minusInfinity = ops.minusInfinity();
  Value blockMax = slice(b, loc, state.newMax, {zero}, {rows});
  blockMax = ops.fill(constants.minusInfinity, blockMax);
  SmallVector<Value> maxInputs = {scores};
  llvm::append_range(maxInputs, maskInput);
  SmallVector<AffineMap> maxMaps = {ops.map(2, {0, 1})};
  if (mask)
    maxMaps.push_back(ops.map(2, {0, 1}));
  maxMaps.push_back(ops.map(2, {0}));
  blockMax =
      ops.generic(maxInputs, blockMax, maxMaps, {kPar, kRed},
                  [&](OpBuilder &nb, Location nloc, ValueRange args) {
                    return buildMaskedMax(
                        nb, nloc, constants, args[0],
                        [&] { return allowed(nb, nloc, args); }, args.back());
                  });

  // m_new = max(m, blockMax); corr = m == m_new ? 1 : exp((m - m_new)·scale).
  Value correction = slice(b, loc, state.correction, {zero}, {rows});
  correction = ops.generic(
      {state.max, blockMax}, correction,
      {ops.map(1, {0}), ops.map(1, {0}), ops.map(1, {0})}, {kPar},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        return buildCorrection(nb, nloc, constants, args[0], args[1]);
      });
  // Then m = m_new, element by element in place.
  Value max =
      ops.generic({blockMax}, state.max, {ops.map(1, {0}), ops.map(1, {0})},
                  {kPar}, [](OpBuilder &nb, Location nloc, ValueRange args) {
                    return arith::MaximumFOp::create(nb, nloc, args[1], args[0])
                        .getResult();
                  });

  // P = allowed ? exp((S - m_new)·scale) : 0, over S.
  SmallVector<Value> expInputs = {max};
  llvm::append_range(expInputs, maskInput);
  SmallVector<AffineMap> expMaps = {ops.map(2, {0})};
  if (mask)
    expMaps.push_back(ops.map(2, {0, 1}));
  expMaps.push_back(ops.map(2, {0, 1}));
  Value weights = ops.generic(
      expInputs, scores, expMaps, {kPar, kPar},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        // The mask is args[1], as in the maximum's body; the score is last.
        return buildMaskedExp(nb, nloc, constants, args.back(), args[0],
                              [&] { return allowed(nb, nloc, args); });
      });

  // l = l·corr + rowsum(P).
  auto rescale = [](OpBuilder &nb, Location nloc, ValueRange args) {
    return arith::MulFOp::create(nb, nloc, args[1], args[0]).getResult();
  };
  Value sum = ops.generic({correction}, state.sum,
                          {ops.map(1, {0}), ops.map(1, {0})}, {kPar}, rescale);
  sum = ops.generic(
      {weights}, sum, {ops.map(2, {0, 1}), ops.map(2, {0})}, {kPar, kRed},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return arith::AddFOp::create(nb, nloc, args[1], args[0]).getResult();
      });

  // A bf16 block of values, widened into the scratch: read once from the
  // cache, then P·V reads f32 from L1.
  if (isBF16(values)) {
    Value valuesWide = slice(b, loc, widened, {zero, zero}, {numKeys, dv});
    valuesWide = ops.generic(
        {values}, valuesWide, {ops.map(2, {0, 1}), ops.map(2, {0, 1})},
        {kPar, kPar}, [](OpBuilder &nb, Location nloc, ValueRange args) {
          return widen(nb, nloc, args[0]);
        });
    widened = unslice(b, loc, valuesWide, widened, {zero, zero}, {numKeys, dv});
    values = valuesWide;
  }

  // acc = acc·corr + P · V over (query i, key j, value column n).
  Value acc =
      ops.generic({correction}, state.acc,
                  {ops.map(2, {0}), ops.map(2, {0, 1})}, {kPar, kPar}, rescale);
  if (tile.packed)
    acc = ops.splitDot(weights, values, acc);
  else
    acc = ops.contraction(
        weights, values, acc,
        {ops.map(3, {0, 1}), ops.map(3, {1, 2}), ops.map(3, {0, 2})},
        {kPar, kRed, kPar});

  OnlineSoftmaxState next;
  next.max = max;
  next.sum = sum;
  next.acc = acc;
  next.scores =
      unslice(b, loc, weights, state.scores, {zero, zero}, {rows, numKeys});
  next.keysT =
      tile.keyT ? state.keysT
      : oneQuery
          ? unslice(b, loc, keysT, state.keysT, {zero, zero}, {numKeys, dk})
          : unslice(b, loc, keysT, state.keysT, {zero, zero}, {dk, numKeys});
  next.newMax = unslice(b, loc, blockMax, state.newMax, {zero}, {rows});
  next.correction =
      unslice(b, loc, correction, state.correction, {zero}, {rows});
  next.widened = widened;
  return next;
}
} // namespace

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
                     SmallVector<IteratorType>(rank, kPar),
                     [&](OpBuilder &nb, Location nloc, ValueRange args) {
                       return buildNormalized(nb, nloc, constants, args[0],
                                              args[1]);
                     });
}

Value OnlineSoftmaxBuilder::finalize(const OnlineSoftmaxState &state) {
  return buildNormalizedRows(builder, loc, state.sum, state.acc);
}

Value mlir::mha::combineKeySplits(OpBuilder &builder, Location loc,
                                  Value accParts, Value maxParts,
                                  Value sumParts, Value init, double scale) {
  GenericBuilder ops(builder, loc);
  unsigned rowRank = cast<RankedTensorType>(init.getType()).getRank() - 1;
  SmallVector<OpFoldResult> rowSizes =
      tensor::getMixedSizes(builder, loc, init);
  rowSizes.pop_back();
  // Loop dimensions: the rows, (the value column,) and the split last.
  SmallVector<unsigned> rows = llvm::to_vector(llvm::seq<unsigned>(0, rowRank));
  auto withSplit = [&](unsigned split, ArrayRef<unsigned> dims) {
    SmallVector<unsigned> result = {split};
    llvm::append_range(result, dims);
    return result;
  };
  SmallVector<IteratorType> overSplits(rowRank, kPar);
  overSplits.push_back(kRed);

  // M = max_p m_p.
  unsigned split = rowRank;
  Value maxAll = ops.generic(
      {maxParts}, ops.filled(rowSizes, ops.minusInfinity()),
      {ops.map(rowRank + 1, withSplit(split, rows)),
       ops.map(rowRank + 1, rows)},
      overSplits, [](OpBuilder &nb, Location nloc, ValueRange args) {
        return arith::MaximumFOp::create(nb, nloc, args[1], args[0])
            .getResult();
      });

  // Σ_p w_p·x_p with w_p = buildPartWeight(m_p, M).
  SoftmaxConstants constants;
  constants.log2Scale = ops.f32Constant(getLog2Scale(scale));
  constants.zero = ops.f32Constant(0.0);
  constants.minusInfinity = ops.minusInfinity();
  Value zeroF = constants.zero;
  auto weighted = [&](OpBuilder &nb, Location nloc, ValueRange args) {
    Value w = buildPartWeight(nb, nloc, constants, args[1], args[2]);
    return buildMultiplyAdd(nb, nloc, args[0], w, args[3]);
  };

  // l = Σ_p w_p·l_p.
  Value sum =
      ops.generic({sumParts, maxParts, maxAll}, ops.filled(rowSizes, zeroF),
                  {ops.map(rowRank + 1, withSplit(split, rows)),
                   ops.map(rowRank + 1, withSplit(split, rows)),
                   ops.map(rowRank + 1, rows), ops.map(rowRank + 1, rows)},
                  overSplits, weighted);

  // acc = Σ_p w_p·acc_p over (rows, value column n, split).
  unsigned column = rowRank, lastSplit = rowRank + 1;
  SmallVector<unsigned> rowsAndColumn = rows;
  rowsAndColumn.push_back(column);
  SmallVector<IteratorType> overColumnsAndSplits(rowRank + 1, kPar);
  overColumnsAndSplits.push_back(kRed);
  Value acc = ops.generic(
      {accParts, maxParts, maxAll}, ops.fill(zeroF, init),
      {ops.map(rowRank + 2, withSplit(lastSplit, rowsAndColumn)),
       ops.map(rowRank + 2, withSplit(lastSplit, rows)),
       ops.map(rowRank + 2, rows), ops.map(rowRank + 2, rowsAndColumn)},
      overColumnsAndSplits, weighted);

  return buildNormalizedRows(builder, loc, sum, acc);
}

namespace {
/// `mha.online_attention` as a TilingInterface op: its one loop is the keys,
/// a reduction into the destinations, so that a tile of keys updates the
/// whole state (FullReduction tiling makes the key loop, with the state its
/// loop-carried values).
struct OnlineAttentionTilingInterface
    : TilingInterface::ExternalModel<OnlineAttentionTilingInterface,
                                     OnlineAttentionOp> {
  SmallVector<utils::IteratorType> getLoopIteratorTypes(Operation *) const {
    return {utils::IteratorType::reduction};
  }

  SmallVector<Range> getIterationDomain(Operation *op, OpBuilder &b) const {
    auto update = cast<OnlineAttentionOp>(op);
    // The count that made the keys, except an `affine.apply`: tiling
    // composes that into each tile's size (`affine.min`), and peeling can
    // only prove the whole tiles' sizes against the loop's own upper bound,
    // so the count is then a `tensor.dim`.
    OpFoldResult keys = getKnownSizes(update.getKey())[0];
    auto keysValue = dyn_cast_if_present<Value>(keys);
    if (!keys ||
        (keysValue && keysValue.getDefiningOp<affine::AffineApplyOp>()))
      keys = tensor::DimOp::create(b, op->getLoc(), update.getKey(), 0)
                 .getResult();
    return {{b.getIndexAttr(0), keys, b.getIndexAttr(1)}};
  }

  /// The same update by the keys [offset, offset + size): views of the
  /// keys, values, Kᵀ and mask, the first key's position moved; the
  /// destinations are the whole state (which tiling has made the loop's).
  FailureOr<TilingResult>
  getTiledImplementation(Operation *op, OpBuilder &b,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes) const {
    auto update = cast<OnlineAttentionOp>(op);
    Location loc = op->getLoc();
    OpFoldResult offset = offsets[0], size = sizes[0];
    OpFoldResult zero = b.getIndexAttr(0);
    auto dim = [&](Value value, unsigned index) {
      return b.getIndexAttr(
          cast<RankedTensorType>(value.getType()).getDimSize(index));
    };
    SmallVector<Operation *> slices;
    auto sliceOf = [&](Value source, ArrayRef<OpFoldResult> sliceOffsets,
                       ArrayRef<OpFoldResult> sliceSizes) -> Value {
      Value result = slice(b, loc, source, sliceOffsets, sliceSizes);
      slices.push_back(result.getDefiningOp());
      return result;
    };
    // The views first, then the op that reads them.
    Value key = update.getKey(), value = update.getValue();
    Value keys = sliceOf(key, {offset, zero}, {size, dim(key, 1)});
    Value values = sliceOf(value, {offset, zero}, {size, dim(value, 1)});
    Value keysT, mask;
    if (Value whole = update.getKeysT())
      keysT = sliceOf(whole, {zero, offset}, {dim(whole, 0), size});
    if (Value whole = update.getMask())
      mask = sliceOf(whole, {zero, offset}, {getSize(b, loc, whole, 0), size});
    AffineExpr d0 = b.getAffineDimExpr(0), d1 = b.getAffineDimExpr(1);
    Value keyStart = getValueOrCreateConstantIndexOp(
        b, loc,
        affine::makeComposedFoldedAffineApply(b, loc, d0 + d1,
                                              {update.getKeyStart(), offset}));
    auto tiled = cast<OnlineAttentionOp>(b.clone(*op));
    tiled.getKeyMutable().assign(keys);
    tiled.getValueMutable().assign(values);
    if (keysT)
      tiled.getKeysTMutable().assign(keysT);
    if (mask)
      tiled.getMaskMutable().assign(mask);
    tiled.getKeyStartMutable().assign(keyStart);
    return TilingResult{
        {tiled}, SmallVector<Value>(tiled->getResults()), slices};
  }

  /// Every key tile writes the whole of every destination.
  LogicalResult
  getResultTilePosition(Operation *op, OpBuilder &b, unsigned resultNumber,
                        ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes,
                        SmallVector<OpFoldResult> &resultOffsets,
                        SmallVector<OpFoldResult> &resultSizes) const {
    Value init = cast<OnlineAttentionOp>(op).getDpsInits()[resultNumber];
    resultSizes = tensor::getMixedSizes(b, op->getLoc(), init);
    resultOffsets.assign(resultSizes.size(), b.getIndexAttr(0));
    return success();
  }
};
} // namespace

namespace {
/// One block of `mha.online_attention` decomposes into linalg ops, as
/// IREE's `online_attention` does through the same interface.
struct OnlineAttentionDecomposition
    : linalg::AggregatedOpInterface::ExternalModel<OnlineAttentionDecomposition,
                                                   OnlineAttentionOp> {
  FailureOr<SmallVector<Value>> decomposeOperation(Operation *op,
                                                   OpBuilder &b) const {
    return decomposeOnlineAttention(b, cast<OnlineAttentionOp>(op));
  }
};
} // namespace

void mlir::mha::registerOnlineAttentionTilingInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, MhaDialect *) {
    OnlineAttentionOp::attachInterface<OnlineAttentionTilingInterface,
                                       OnlineAttentionDecomposition>(*context);
  });
}
