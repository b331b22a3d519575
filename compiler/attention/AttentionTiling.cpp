//===- AttentionTiling.cpp - An mha.sdpa cut into query tiles -------------===//

#include "compiler/attention/AttentionTiling.h"
#include "compiler/utils/AttentionMath.h"
#include "compiler/utils/UnitLoops.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <numeric>

using namespace mlir;
using namespace mlir::mha;

Value SdpaTiling::getBF16Source(Value operand) {
  auto extf = operand.getDefiningOp<arith::ExtFOp>();
  if (!extf)
    return {};
  auto type = dyn_cast<RankedTensorType>(extf.getIn().getType());
  return type && type.getElementType().isBF16() ? extf.getIn() : Value();
}

std::pair<Value, Value> SdpaTiling::getInt8Source(Value operand) {
  auto dequantize = operand.getDefiningOp<DequantizeOp>();
  if (!dequantize)
    return {};
  return {dequantize.getCodes(), dequantize.getScales()};
}

PagedViewOp SdpaTiling::getPagedSource(Value operand) {
  return operand.getDefiningOp<PagedViewOp>();
}

void SdpaTiling::readPages() {
  PagedViewOp keys = getPagedSource(key), values = getPagedSource(value);
  if (!keys || !values || keys.getTable() != values.getTable() ||
      keys.getPageSize() != values.getPageSize())
    return;
  // An int8 cache's scales are views of the same table.
  auto pagedScales = [&](Value scales) -> std::optional<Value> {
    if (!scales)
      return Value();
    PagedViewOp view = getPagedSource(scales);
    if (!view || view.getTable() != keys.getTable())
      return std::nullopt;
    return view.getPool();
  };
  std::optional<Value> keyScalePages = pagedScales(keyScales),
                       valueScalePages = pagedScales(valueScales);
  if (!keyScalePages || !valueScalePages)
    return;
  keyScalePool = *keyScalePages;
  valueScalePool = *valueScalePages;
  keyPool = keys.getPool();
  valuePool = values.getPool();
  blockTable = keys.getTable();
  pageSize = keys.getPageSize();
  // Blocks that divide the page never straddle two (a multiple of 16, as
  // is every key tile).
  keyTile = std::gcd(keyTile, pageSize);
}

SdpaTiling::SdpaTiling(OpBuilder &builder, SdpaOp op, int64_t queryTile,
                       int64_t keyTile)
    : loc(op.getLoc()), query(op.getQuery()), key(op.getKey()),
      value(op.getValue()), mask(op.getMask()), positions(op.getPositions()),
      causal(op.getCausal()),
      causalBottomRight(op.getCausal() && op.getCausalBottomRight()),
      scale(op.getEffectiveScale()), attnBias(op.getAttnBias()),
      alibiSlopes(op.getAlibiSlopes()), sinks(op.getSinks()),
      window(op.getWindow()), queryTile(queryTile), keyTile(keyTile) {
  if (std::optional<APFloat> cap = op.getSoftcap())
    softcap = cap->convertToDouble();
  scoreMod = getScoreModRegion(op);
  // Keys and values of a cache (positions) widened from bf16 are read in
  // bf16, one key block at a time, and widened inside the tile
  // (OnlineSoftmax.cpp): half the bytes, and no f32 copy of the whole cache
  // per call. (Without positions, Kᵀ of every head may be made up front,
  // transposeKeys, in f32 from the widened keys.)
  if (positions) {
    if (Value narrow = getBF16Source(key))
      key = narrow;
    if (Value narrow = getBF16Source(value))
      value = narrow;
    // An int8 cache likewise: its codes and scales, dequantized per key
    // block (a quarter of the bytes, and no f32 copy of the cache).
    if (auto [codes, scales] = getInt8Source(key); codes) {
      key = codes;
      keyScales = scales;
    }
    if (auto [codes, scales] = getInt8Source(value); codes) {
      value = codes;
      valueScales = scales;
    }
    // A paged cache's views (after a bf16 widening): each key block is
    // read from its page through the table.
    readPages();
  }
  readSizes(builder);
}

SdpaTiling::SdpaTiling(OpBuilder &builder, SdpaSplitOp op, int64_t queryTile)
    : loc(op.getLoc()), query(op.getQuery()), key(op.getKey()),
      value(op.getValue()), mask(op.getMask()), positions(op.getPositions()),
      keyScales(op.getKeyScales()), valueScales(op.getValueScales()),
      causal(op.getCausal()),
      causalBottomRight(op.getCausal() && op.getCausalBottomRight()),
      scale(op.getScale().convertToDouble()), attnBias(op.getAttnBias()),
      alibiSlopes(op.getAlibiSlopes()), window(op.getWindow()),
      queryTile(queryTile), keyTile(op.getKeyBlock()) {
  if (std::optional<APFloat> cap = op.getSoftcap())
    softcap = cap->convertToDouble();
  scoreMod = getScoreModRegion(op);
  // The split takes the views of a paged cache, as mha.sdpa's tiles do.
  if (positions)
    readPages();
  readSizes(builder);
}

void SdpaTiling::readSizes(OpBuilder &builder) {
  heads = cast<RankedTensorType>(query.getType()).getDimSize(1);
  kvHeads = cast<RankedTensorType>(key.getType()).getDimSize(1);
  keyDim = cast<RankedTensorType>(query.getType()).getDimSize(3);
  valueDim = cast<RankedTensorType>(value.getType()).getDimSize(3);
  AttentionSizes sizes =
      AttentionSizes::get(builder, loc, query, key, value, mask);
  batch = sizes.batch;
  numQueries = sizes.queries;
  numKeys = sizes.keys;
  causalOffset =
      buildCausalOffset(builder, loc, causalBottomRight, numQueries, numKeys);
  maskBroadcasts = buildMaskBroadcasts(builder, loc, mask);
}

void SdpaTiling::eraseDeadWidenings(RewriterBase &rewriter) const {
  SmallVector<Operation *> dead;
  for (Value narrow : {key, value})
    if (getElementTypeOrSelf(narrow.getType()).isBF16())
      for (Operation *user : narrow.getUsers())
        if (isa<arith::ExtFOp>(user) && user->use_empty() &&
            !llvm::is_contained(dead, user))
          dead.push_back(user);
  // And the unused dequantization of an int8 cache's codes.
  for (Value codes : {key, value})
    if (getElementTypeOrSelf(codes.getType()).isInteger(8))
      for (Operation *user : codes.getUsers())
        if (isa<DequantizeOp>(user) && user->use_empty() &&
            !llvm::is_contained(dead, user))
          dead.push_back(user);
  for (Operation *extf : dead)
    rewriter.eraseOp(extf);
  // And the unused views of a paged cache (the tiles read the pages).
  for (Value view : {key, value, keyScales, valueScales})
    if (PagedViewOp op = view ? getPagedSource(view) : PagedViewOp();
        op && op->use_empty())
      rewriter.eraseOp(op);
}

void SdpaTiling::replaceByTiles(RewriterBase &rewriter, SdpaOp op,
                                scf::ForallOp forall,
                                ValueRange replacements) const {
  for (Operation &nested :
       llvm::make_early_inc_range(llvm::reverse(*forall.getBody())))
    if (isOpTriviallyDead(&nested))
      rewriter.eraseOp(&nested);
  rewriter.replaceOp(op, replacements);
  eraseDeadWidenings(rewriter);
}

OpFoldResult SdpaTiling::apply(OpBuilder &builder, AffineExpr expr,
                               ArrayRef<OpFoldResult> operands) const {
  return affine::makeComposedFoldedAffineApply(builder, loc, expr, operands);
}

OpFoldResult SdpaTiling::getNumQueryTiles(OpBuilder &builder) const {
  return apply(builder, builder.getAffineDimExpr(0).ceilDiv(queryTile),
               {numQueries});
}

OpFoldResult SdpaTiling::getTileRows(OpBuilder &builder,
                                     OpFoldResult queryStart) const {
  std::optional<int64_t> staticQueries = getConstantIntValue(numQueries);
  if (staticQueries && *staticQueries <= queryTile)
    return builder.getIndexAttr(*staticQueries);
  if (staticQueries && *staticQueries % queryTile == 0)
    return builder.getIndexAttr(queryTile);
  AffineExpr d0 = builder.getAffineDimExpr(0), d1 = builder.getAffineDimExpr(1);
  return affine::makeComposedFoldedAffineMin(
      builder, loc,
      AffineMap::get(2, 0, {builder.getAffineConstantExpr(queryTile), d0 - d1},
                     builder.getContext()),
      {numQueries, queryStart});
}

bool SdpaTiling::hasFullKeyBlocks(bool causalBounds) const {
  std::optional<int64_t> staticKeys = getConstantIntValue(numKeys);
  if (!staticKeys || *staticKeys % keyTile != 0)
    return false;
  if (!causalBounds)
    return true;
  // The causal bounds are multiples of BK when the query tiles are full,
  // BQ is a multiple of BK and so is the diagonal's offset.
  std::optional<int64_t> staticQueries = getConstantIntValue(numQueries);
  if (causalOffset &&
      getConstantIntValue(getAsOpFoldResult(causalOffset)).value_or(1) %
              keyTile !=
          0)
    return false;
  return staticQueries && *staticQueries % queryTile == 0 &&
         queryTile % keyTile == 0;
}

Value SdpaTiling::sliceTrailing(OpBuilder &builder, Value source,
                                ArrayRef<OpFoldResult> offsets,
                                ArrayRef<OpFoldResult> sizes,
                                unsigned keptRank) const {
  SmallVector<int64_t> shape;
  for (OpFoldResult size : sizes.take_back(keptRank))
    shape.push_back(getConstantIntValue(size).value_or(ShapedType::kDynamic));
  auto sourceType = cast<RankedTensorType>(source.getType());
  auto type = RankedTensorType::get(shape, sourceType.getElementType());
  SmallVector<OpFoldResult> strides(sizes.size(), builder.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(builder, loc, type, source, offsets,
                                        sizes, strides);
}

Value SdpaTiling::loadPosition(OpBuilder &builder, Value b) const {
  Value position = tensor::ExtractOp::create(builder, loc, positions, b);
  return arith::IndexCastOp::create(builder, loc, builder.getIndexType(),
                                    position);
}

OpFoldResult SdpaTiling::getPositionKeyEnd(OpBuilder &builder,
                                           Value position) const {
  AffineExpr d0 = builder.getAffineDimExpr(0), d1 = builder.getAffineDimExpr(1);
  MLIRContext *context = builder.getContext();
  OpFoldResult end = affine::makeComposedFoldedAffineMin(
      builder, loc, AffineMap::get(2, 0, {d0, d1}, context),
      {numKeys, apply(builder, d0 + d1, {position, numQueries})});
  return affine::makeComposedFoldedAffineMax(
      builder, loc,
      AffineMap::get(1, 0, {d0, builder.getAffineConstantExpr(0)}, context),
      {end});
}

Value SdpaTiling::createEmpty(OpBuilder &builder, RankedTensorType type,
                              ArrayRef<OpFoldResult> sizes) const {
  SmallVector<Value> dynamicSizes;
  for (auto [i, size] : llvm::enumerate(sizes))
    if (type.isDynamicDim(i))
      dynamicSizes.push_back(
          getValueOrCreateConstantIndexOp(builder, loc, size));
  return tensor::EmptyOp::create(builder, loc, type, dynamicSizes);
}

OpFoldResult SdpaTiling::getWindowBegin(OpBuilder &builder,
                                        OpFoldResult diagonal) const {
  if (!window)
    return builder.getIndexAttr(0);
  // The tile's first query, at `diagonal`, sees keys from diagonal - W + 1
  // on, and its later queries fewer: the blocks before that are skipped,
  // so that the cost follows the window, not the context.
  AffineExpr d0 = builder.getAffineDimExpr(0);
  OpFoldResult first = affine::makeComposedFoldedAffineMax(
      builder, loc,
      AffineMap::get(1, 0, {builder.getAffineConstantExpr(0), d0 + 1 - *window},
                     builder.getContext()),
      {diagonal});
  return apply(builder, d0.floorDiv(keyTile) * keyTile, {first});
}

AttentionTile SdpaTiling::sliceTile(OpBuilder &builder, Value b, Value h,
                                    OpFoldResult queryStart,
                                    OpFoldResult rows) const {
  OpFoldResult zero = builder.getIndexAttr(0), one = builder.getIndexAttr(1);
  OpFoldResult dk = builder.getIndexAttr(keyDim),
               dv = builder.getIndexAttr(valueDim);
  // Query head h reads key/value head h floordiv (H / Hkv): a view, so
  // grouped-query heads share their keys and values without copies.
  OpFoldResult kvHead =
      apply(builder,
            getKeyValueHead(builder.getAffineDimExpr(0), heads, kvHeads), {h});

  AttentionTile tile;
  tile.query = sliceTrailing(builder, query, {b, h, queryStart, zero},
                             {one, one, rows, dk}, 2);
  tile.key = sliceTrailing(builder, key, {b, kvHead, zero, zero},
                           {one, one, numKeys, dk}, 2);
  tile.value = sliceTrailing(builder, value, {b, kvHead, zero, zero},
                             {one, one, numKeys, dv}, 2);
  if (keysT)
    tile.keyT = sliceTrailing(builder, keysT, {b, kvHead, zero, zero},
                              {one, one, dk, numKeys}, 2);
  if (blockTable) {
    // The head's pages [N, P, d], and the sequence's row of the table;
    // `key` and `value` are the first page, for their shapes only.
    OpFoldResult page = builder.getIndexAttr(pageSize);
    auto pagesOf = [&](Value pool, OpFoldResult width) {
      auto type = cast<RankedTensorType>(pool.getType());
      auto pagesType = RankedTensorType::get(
          {type.getDimSize(0), pageSize, type.getDimSize(3)},
          type.getElementType());
      return tensor::ExtractSliceOp::create(
          builder, loc, pagesType, pool, {zero, kvHead, zero, zero},
          {tensor::getMixedSize(builder, loc, pool, 0), one, page, width},
          {one, one, one, one});
    };
    tile.keyPages = pagesOf(keyPool, dk);
    tile.valuePages = pagesOf(valuePool, dv);
    tile.pageTable = sliceTrailing(
        builder, blockTable, {b, zero},
        {one, tensor::getMixedSize(builder, loc, blockTable, 1)}, 1);
    tile.pageSize = pageSize;
    tile.key = sliceTrailing(builder, tile.keyPages, {zero, zero, zero},
                             {one, page, dk}, 2);
    tile.value = sliceTrailing(builder, tile.valuePages, {zero, zero, zero},
                               {one, page, dv}, 2);
    // An int8 pool's scales: the head's pages [N, P], and the first one.
    auto scalePagesOf = [&](Value pool) -> Value {
      if (!pool)
        return {};
      auto type = cast<RankedTensorType>(pool.getType());
      return tensor::ExtractSliceOp::create(
          builder, loc,
          RankedTensorType::get({type.getDimSize(0), pageSize},
                                type.getElementType()),
          pool, {zero, kvHead, zero},
          {tensor::getMixedSize(builder, loc, pool, 0), one, page},
          {one, one, one});
    };
    tile.keyScalePages = scalePagesOf(keyScalePool);
    tile.valueScalePages = scalePagesOf(valueScalePool);
    if (tile.keyScalePages)
      tile.keyScales = sliceTrailing(builder, tile.keyScalePages, {zero, zero},
                                     {one, page}, 1);
    if (tile.valueScalePages)
      tile.valueScales = sliceTrailing(builder, tile.valueScalePages,
                                       {zero, zero}, {one, page}, 1);
  } else {
    if (keyScales)
      tile.keyScales = sliceTrailing(builder, keyScales, {b, kvHead, zero},
                                     {one, one, numKeys}, 1);
    if (valueScales)
      tile.valueScales = sliceTrailing(builder, valueScales, {b, kvHead, zero},
                                       {one, one, numKeys}, 1);
  }
  tile.packed = packed;
  tile.sharedPosition = sharedQueryPosition;
  if (mask) {
    OpFoldResult maskRow =
        getMaskBatchRow(builder, loc, mask, maskBroadcasts, b);
    tile.maskRows = sliceTrailing(builder, mask, {maskRow, queryStart, zero},
                                  {one, rows, numKeys}, 2);
  }
  tile.queryStart = getValueOrCreateConstantIndexOp(builder, loc, queryStart);
  tile.causalOffset = causalOffset;
  tile.numQueries = rows;
  tile.scale = scale;
  // The score steps: the tile's rows of the bias (a dimension of 1
  // broadcasts: its one row, head or sequence), the head's slope and sink.
  if (attnBias) {
    auto biasType = cast<RankedTensorType>(attnBias.getType());
    auto along = [&](unsigned dim, OpFoldResult offset) {
      return biasType.getDimSize(dim) == 1 ? zero : offset;
    };
    bool sharedRow = biasType.getDimSize(2) == 1;
    tile.biasRows =
        sliceTrailing(builder, attnBias,
                      {along(0, b), along(1, h), along(2, queryStart), zero},
                      {one, one, sharedRow ? one : rows, numKeys}, 2);
  }
  Value hIndex = getValueOrCreateConstantIndexOp(builder, loc, h);
  if (alibiSlopes)
    tile.slope = tensor::ExtractOp::create(builder, loc, alibiSlopes, hIndex);
  if (sinks)
    tile.sink = tensor::ExtractOp::create(builder, loc, sinks, hIndex);
  if (window)
    tile.window = arith::ConstantIndexOp::create(builder, loc, *window);
  tile.softcap = softcap;
  if (scoreMod) {
    tile.scoreMod = scoreMod;
    tile.batchIndex = b;
    tile.headIndex = hIndex;
  }
  return tile;
}

OpFoldResult SdpaTiling::laterOf(OpBuilder &builder, OpFoldResult bound,
                                 OpFoldResult windowBegin) const {
  if (!window)
    return bound;
  AffineExpr d0 = builder.getAffineDimExpr(0), d1 = builder.getAffineDimExpr(1);
  return affine::makeComposedFoldedAffineMax(
      builder, loc, AffineMap::get(2, 0, {d0, d1}, builder.getContext()),
      {bound, windowBegin});
}

OnlineSoftmaxState SdpaTiling::iteratePositionKeys(
    OpBuilder &builder, OnlineSoftmaxBuilder &softmax, OnlineSoftmaxState state,
    OpFoldResult queryStart, OpFoldResult rows, Value position) const {
  AffineExpr d0 = builder.getAffineDimExpr(0), d1 = builder.getAffineDimExpr(1);
  OpFoldResult zero = builder.getIndexAttr(0), one = builder.getIndexAttr(1);
  auto applyExpr = [&](AffineExpr expr, ArrayRef<OpFoldResult> operands) {
    return apply(builder, expr, operands);
  };
  // Query i of the tile sees keys j <= position + queryStart + i: the
  // keys end at the tile's last query's diagonal (never past the new
  // tokens, so the unused capacity of the cache is never read), the
  // whole blocks below the first query's diagonal need no test, and the
  // rest (the diagonal blocks; the keys after the last whole block when
  // decoding) is iterateKeyRange's.
  // Rows that share one position (sharedQueryPosition) see the keys
  // of the tile's one query: its diagonal is the position's, and its
  // last query is its first.
  MLIRContext *context = builder.getContext();
  AffineMap pair = AffineMap::get(2, 0, {d0, d1}, context);
  OpFoldResult diagonal = sharedQueryPosition
                              ? OpFoldResult(position)
                              : applyExpr(d0 + d1, {queryStart, position});
  OpFoldResult queriesAlong = sharedQueryPosition ? one : rows;
  OpFoldResult keyEnd = affine::makeComposedFoldedAffineMax(
      builder, loc, pair,
      {builder.getIndexAttr(0),
       affine::makeComposedFoldedAffineMin(
           builder, loc, pair,
           {numKeys, applyExpr(d0 + d1, {diagonal, queriesAlong})})});
  // (A static key count below BK has no whole block.)
  std::optional<int64_t> staticKeys = getConstantIntValue(numKeys);
  OpFoldResult fullEnd = affine::makeComposedFoldedAffineMax(
      builder, loc, pair,
      {builder.getIndexAttr(0),
       affine::makeComposedFoldedAffineMin(
           builder, loc, pair,
           {applyExpr(d0.floorDiv(keyTile) * keyTile, {keyEnd}),
            applyExpr((d0 + 1).floorDiv(keyTile) * keyTile, {diagonal})})});
  OpFoldResult windowBegin = getWindowBegin(builder, diagonal);
  if (staticKeys && *staticKeys < keyTile)
    fullEnd = zero;
  else
    state = softmax.iterateKeyBlocks(state, windowBegin, fullEnd,
                                     /*causal=*/false, /*fullBlocks=*/true);
  // One query per tile (or rows at one position) sees exactly the keys
  // below keyEnd.
  bool onePosition = sharedQueryPosition || isConstantIntValue(rows, 1);
  state = softmax.iterateKeyRange(state, laterOf(builder, fullEnd, windowBegin),
                                  keyEnd,
                                  /*causal=*/!onePosition);
  return state;
}

OnlineSoftmaxState SdpaTiling::iterateCausalKeys(OpBuilder &builder,
                                                 OnlineSoftmaxBuilder &softmax,
                                                 OnlineSoftmaxState state,
                                                 OpFoldResult queryStart,
                                                 OpFoldResult rows) const {
  AffineExpr d0 = builder.getAffineDimExpr(0), d1 = builder.getAffineDimExpr(1);
  auto applyExpr = [&](AffineExpr expr, ArrayRef<OpFoldResult> operands) {
    return apply(builder, expr, operands);
  };
  bool fullKeyBlocks = hasFullKeyBlocks(causal);
  // Keys after the tile's last query are masked for every row: stop
  // there. Blocks that end at or before the first query are wholly
  // allowed and skip the test. Bottom-right aligned, both bounds move by
  // the diagonal's offset S - T; with S < T they may fall below 0 (the
  // tile sees fewer keys, or none), so they are clamped to 0 there.
  AffineMap minMap = AffineMap::get(2, 0, {d0, d1}, builder.getContext());
  OpFoldResult diagonal = queryStart;
  if (causalOffset)
    diagonal =
        applyExpr(d0 + d1, {queryStart, getAsOpFoldResult(causalOffset)});
  auto atLeastZero = [&](OpFoldResult bound) {
    if (!causalOffset)
      return bound;
    return affine::makeComposedFoldedAffineMax(
        builder, loc, minMap, {builder.getIndexAttr(0), bound});
  };
  OpFoldResult keyEnd = atLeastZero(affine::makeComposedFoldedAffineMin(
      builder, loc, minMap, {numKeys, applyExpr(d0 + d1, {diagonal, rows})}));
  OpFoldResult fullEnd = atLeastZero(affine::makeComposedFoldedAffineMin(
      builder, loc, minMap,
      {keyEnd, applyExpr((d0 + 1).floorDiv(keyTile) * keyTile, {diagonal})}));
  OpFoldResult windowBegin = getWindowBegin(builder, diagonal);
  state = softmax.iterateKeyBlocks(state, windowBegin, fullEnd,
                                   /*causal=*/false, fullKeyBlocks);
  state = softmax.iterateKeyBlocks(
      state, laterOf(builder, fullEnd, windowBegin), keyEnd,
      /*causal=*/true, fullKeyBlocks);
  return state;
}

Value SdpaTiling::buildTile(OpBuilder &builder, Value b, Value h,
                            OpFoldResult queryStart, OpFoldResult tileRows,
                            Value out) const {
  OpFoldResult zero = builder.getIndexAttr(0), one = builder.getIndexAttr(1);
  OpFoldResult dv = builder.getIndexAttr(valueDim);
  // The attention of the tile's `rows` queries (tileRows, or a constant
  // that equals it at run time), [rows, dv].
  auto attendTile = [&](OpFoldResult rows) -> Value {
    AttentionTile tile = sliceTile(builder, b, h, queryStart, rows);
    // With positions, the diagonal of sequence b is moved by positions[b].
    Value position;
    if (positions)
      tile.causalOffset = position = loadPosition(builder, b);

    OnlineSoftmaxBuilder softmax(builder, loc, tile, queryTile, keyTile);
    // The accumulator is the result's own slice when the caller has the
    // result's destination (a loop's shared output): written in place.
    auto accType = RankedTensorType::get(
        {getConstantIntValue(rows).value_or(ShapedType::kDynamic), valueDim},
        builder.getF32Type());
    Value accInit = out ? sliceTrailing(builder, out, {b, h, queryStart, zero},
                                        {one, one, rows, dv}, 2)
                        : createEmpty(builder, accType, {rows, dv});
    OnlineSoftmaxState state = softmax.initialize(accInit);
    bool fullKeyBlocks = hasFullKeyBlocks(causal);
    if (position)
      state = iteratePositionKeys(builder, softmax, state, queryStart, rows,
                                  position);
    else if (causal)
      state = iterateCausalKeys(builder, softmax, state, queryStart, rows);
    else
      state = softmax.iterateKeyBlocks(state, zero, numKeys,
                                       /*causal=*/false, fullKeyBlocks);
    return softmax.finalize(state);
  };
  if (!positions || getConstantIntValue(tileRows) || !oneQueryBranch)
    return attendTile(tileRows);
  // A cache's queries are `?`: one token (decoding) and many (the prefill)
  // run the same code. A tile of one query takes its own branch, where the
  // size 1 is static: its scores are then dot products along the key rows,
  // which read each key once, where the general tile transposes every key
  // block first (twice the traffic).
  Value rowCount = getValueOrCreateConstantIndexOp(builder, loc, tileRows);
  Value isOne =
      arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, rowCount,
                            arith::ConstantIndexOp::create(builder, loc, 1));
  auto resultType = RankedTensorType::get({ShapedType::kDynamic, valueDim},
                                          builder.getF32Type());
  auto ifOp = scf::IfOp::create(builder, loc, TypeRange{resultType}, isOne,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value oneRow = attendTile(builder.getIndexAttr(1));
  scf::YieldOp::create(
      builder, loc,
      ValueRange{tensor::CastOp::create(builder, loc, resultType, oneRow)});
  builder.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(builder, loc, ValueRange{attendTile(tileRows)});
  return ifOp.getResult(0);
}
