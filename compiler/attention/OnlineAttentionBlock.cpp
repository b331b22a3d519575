//===- OnlineAttentionBlock.cpp - One block of the online softmax ---------===//
//
// One block of `mha.online_attention` as linalg ops on tensors (the update
// in OnlineSoftmax.cpp's banner): the scores, the block's maximum and the
// correction of the running state, the weights, the running sum and the
// accumulator. Every op writes into a view of the state or of the scratch
// that the key loop carries, so that bufferization keeps them in place.
//
//===----------------------------------------------------------------------===//

#include "compiler/attention/OnlineSoftmax.h"
#include "compiler/attention/TileTensors.h"
#include "compiler/utils/AttentionMath.h"
#include "compiler/utils/BF16Parts.h"
#include "compiler/utils/GenericBuilder.h"
#include "compiler/utils/QuantizedCache.h"
#include "dialects/MhaDialect.h"
#include "dialects/MhaOnlineAttention.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::mha;

namespace {
/// `value` in f32: widened (exactly) where it is a bf16 key or value
/// element, read from a bf16 cache. Widening inside the ops that read a key
/// block means a step reads the cache's bf16 bytes once, and no f32 copy of
/// the cache ever exists.
Value widen(OpBuilder &b, Location loc, Value value) {
  if (!value.getType().isBF16())
    return value;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), value);
}

/// c + a · b with `a` [M, K] f32 and `b` [K, N] in pairs of rows
/// (SdpaTiling::pack: row 2i + 1 the lo parts of row 2i's pairs): a
/// `linalg.generic` over (m, pair, n, element) marked `mha.amx_split`,
/// which mha-amx-split lowers to AMX tiles; its body is the same sum
/// (buildSplitMultiplyAdd) element by element.
Value buildSplitDot(GenericBuilder &ops, Value a, Value bPairs, Value c) {
  OpBuilder &b = ops.builder;
  Type f32 = b.getF32Type();
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(bPairs.getType());
  auto half = [](int64_t size) {
    return ShapedType::isDynamic(size) ? size : size / 2;
  };
  Value aPairs = tensor::ExpandShapeOp::create(
      b, ops.loc,
      RankedTensorType::get({aType.getDimSize(0), half(aType.getDimSize(1)), 2},
                            f32),
      a, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  Value bParts = tensor::ExpandShapeOp::create(
      b, ops.loc,
      RankedTensorType::get({half(bType.getDimSize(0)), 2, bType.getDimSize(1)},
                            f32),
      bPairs, SmallVector<ReassociationIndices>{{0, 1}, {2}});
  // (m, pair, n, element): part `lo` of the pair of rows.
  auto part = [&](int64_t lo) {
    return ops.affineMap(4, {ops.d(1), ops.constantExpr(lo), ops.d(2)});
  };
  Value result = ops.generic(
      {aPairs, bParts, bParts}, c,
      {ops.map(4, {0, 1, 3}), part(0), part(1), ops.map(4, {0, 2})},
      {kParallel, kReduction, kParallel, kReduction},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value element = linalg::IndexOp::create(nb, nloc, 3);
        return buildSplitMultiplyAdd(
            nb, nloc, args[0], buildBF16PairElement(nb, nloc, args[1], element),
            buildBF16PairElement(nb, nloc, args[2], element), args[3]);
      });
  MhaDialect::AmxSplitAttrHelper(b.getContext())
      .setAttr(result.getDefiningOp(), b.getUnitAttr());
  return result;
}

/// The update of `state` by the block of `numKeys` keys from `keyStart`:
/// `tile`'s keys, values, Kᵀ and mask are those of the block. One method
/// per step, in the order the ops are built.
class BlockUpdate {
public:
  BlockUpdate(OpBuilder &b, Location loc, const AttentionTile &tile,
              const OnlineSoftmaxState &state, Value keyStart,
              OpFoldResult numKeys, bool causal, ValueRange scoreInputs,
              Region *scoreMod)
      : b(b), loc(loc), ops(b, loc), tile(tile), state(state),
        keyStart(keyStart), numKeys(numKeys), causal(causal),
        scoreInputs(scoreInputs), scoreMod(scoreMod), zero(b.getIndexAttr(0)),
        rows(tile.numQueries),
        keyDim(cast<RankedTensorType>(tile.key.getType()).getDimSize(1)),
        valueDim(cast<RankedTensorType>(tile.value.getType()).getDimSize(1)),
        dk(b.getIndexAttr(keyDim)), dv(b.getIndexAttr(valueDim)),
        widened(state.widened) {}

  OnlineSoftmaxState run();

private:
  /// Whether key j of the block may be attended by query i (loop dimensions
  /// 1 and 0): the mask (args[1]), for blocks crossing the diagonal
  /// key <= query (+ S - T when bottom-right aligned), and the window.
  /// Null: every key.
  Value allowed(OpBuilder &nb, Location nloc, ValueRange args) const;
  /// The positions in the sequence of query i and key j (loop dimensions
  /// 0 and 1) of a generic over the block.
  Value queryIndex(OpBuilder &nb, Location nloc) const;
  Value keyIndex(OpBuilder &nb, Location nloc) const;

  /// The `score_mod` region on the block's scaled scores, in place.
  Value modifyScores(Value scores);

  /// `block` ([numKeys, `width`] bf16, or i8 codes with their `scales`
  /// [numKeys]) widened into the widened scratch: f32 rows, the codes
  /// dequantized (code · scale, QuantizedCache.h).
  Value widenBlock(Value block, OpFoldResult width, Value scales = {});

  /// S = Q · Kᵀ into the scores scratch, and `keysT` the view that it read
  /// Kᵀ from (the products of one query, written back after the step).
  Value computeScores();
  /// One query (decoding): S[0, j] = Σ_k q[k]·K[j, k], read along the
  /// contiguous key rows: the products [tk, dk] (one vector of dk per key)
  /// into the scratch, then one sum per key. Transposing K first would move
  /// every key twice for a single dot product each.
  Value computeOneQueryScores();
  /// Kᵀ of the block: the caller's view, or the block transposed into the
  /// scratch.
  Value transposeKeys();

  /// blockMax, the correction and m = m_new from the scores.
  void updateMax(Value scores);
  /// P over the scores, and l = l·corr + rowsum(P).
  Value computeWeights(Value scores);
  /// acc = acc·corr + P · V.
  Value accumulate(Value weights);

  OpBuilder &b;
  Location loc;
  GenericBuilder ops;
  const AttentionTile &tile;
  const OnlineSoftmaxState &state;
  Value keyStart;
  OpFoldResult numKeys;
  bool causal;
  /// The op's score inputs ([tq or 1, n] each) and region (null: the
  /// scores are not modified).
  ValueRange scoreInputs;
  Region *scoreMod;
  OpFoldResult zero, rows;
  int64_t keyDim, valueDim;
  OpFoldResult dk, dv;

  SoftmaxConstants constants;
  /// The block's keys, values, mask and score inputs, with static shapes
  /// where the block size is static; the scales of i8 keys and values
  /// (null otherwise).
  Value keys, values, mask, keyScales, valueScales;
  SmallVector<Value> blockInputs;
  /// The widened scratch: a bf16 block of keys, then one of values.
  Value widened;
  /// What the step writes, in the state's order.
  Value keysT, blockMax, correction, max, sum;
};

Value BlockUpdate::queryIndex(OpBuilder &nb, Location nloc) const {
  // Rows that are the query heads of one decoding step are one query.
  if (tile.sharedPosition)
    return tile.queryStart;
  return arith::AddIOp::create(nb, nloc, tile.queryStart,
                               linalg::IndexOp::create(nb, nloc, 0));
}

Value BlockUpdate::keyIndex(OpBuilder &nb, Location nloc) const {
  return arith::AddIOp::create(nb, nloc, keyStart,
                               linalg::IndexOp::create(nb, nloc, 1));
}

Value BlockUpdate::allowed(OpBuilder &nb, Location nloc,
                           ValueRange args) const {
  Value maskElement = mask ? args[1] : Value();
  if (!causal && !tile.window)
    return maskElement;
  Value query = queryIndex(nb, nloc), key = keyIndex(nb, nloc);
  if (causal)
    return buildAllowed(nb, nloc, maskElement, key, query, tile.causalOffset,
                        tile.window);
  // A block below the diagonal tests the window alone.
  Value inWindow = buildWindowPredicate(
      nb, nloc, key, buildQueryPosition(nb, nloc, query, tile.causalOffset),
      tile.window);
  if (!maskElement)
    return inWindow;
  return arith::AndIOp::create(nb, nloc, maskElement, inWindow);
}

Value BlockUpdate::modifyScores(Value scores) {
  // s <- score_mod(s·scale, inputs..., p_i, j) in place, before the block's
  // maximum reads them.
  SmallVector<AffineMap> maps;
  for (Value input : blockInputs) {
    // An input row shared by the tile's queries is read along the keys only.
    bool sharedRow = cast<RankedTensorType>(input.getType()).getDimSize(0) == 1;
    maps.push_back(sharedRow ? ops.affineMap(2, {ops.constantExpr(0), ops.d(1)})
                             : ops.map(2, {0, 1}));
  }
  maps.push_back(ops.map(2, {0, 1}));
  Value scale = ops.f32Constant(tile.scale);
  // The positions only where the region reads them: a body without
  // linalg.index stays an elementwise op for every later pass.
  Block &body = scoreMod->front();
  unsigned positionArgument = body.getNumArguments() - 2;
  bool readsPosition = !body.getArgument(positionArgument).use_empty();
  bool readsKey = !body.getArgument(positionArgument + 1).use_empty();
  auto modify = [&](OpBuilder &nb, Location nloc, ValueRange args) {
    SmallVector<Value> arguments = {
        arith::MulFOp::create(nb, nloc, args.back(), scale)};
    llvm::append_range(arguments, args.drop_back());
    arguments.push_back(readsPosition
                            ? buildQueryPosition(nb, nloc, queryIndex(nb, nloc),
                                                 tile.causalOffset)
                            : Value());
    arguments.push_back(readsKey ? keyIndex(nb, nloc) : Value());
    return buildScoreMod(nb, *scoreMod, arguments);
  };
  return ops.generic(blockInputs, scores, maps, {kParallel, kParallel}, modify);
}

Value BlockUpdate::widenBlock(Value block, OpFoldResult width, Value scales) {
  Value wide = slice(b, loc, widened, {zero, zero}, {numKeys, width});
  if (scales)
    // The scale multiplies its row as the row is read: the block's codes
    // and scales are read once from the cache, and the products (Q·Kᵀ and
    // P·V) read f32 from L1 as with a bf16 cache.
    wide = ops.generic(
        {block, scales}, wide,
        {ops.map(2, {0, 1}), ops.map(2, {0}), ops.map(2, {0, 1})},
        {kParallel, kParallel},
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          return buildDequantizedElement(nb, nloc, args[0], args[1]);
        });
  else
    wide = ops.generic({block}, wide, {ops.map(2, {0, 1}), ops.map(2, {0, 1})},
                       {kParallel, kParallel},
                       [](OpBuilder &nb, Location nloc, ValueRange args) {
                         return widen(nb, nloc, args[0]);
                       });
  widened = unslice(b, loc, wide, widened, {zero, zero}, {numKeys, width});
  return wide;
}

Value BlockUpdate::computeOneQueryScores() {
  Type f32 = b.getF32Type();
  SmallVector<OpFoldResult> unit(2, b.getIndexAttr(1));
  Value queryRow = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({keyDim}, f32), tile.query,
      ArrayRef<OpFoldResult>{zero, zero},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), dk}, unit);
  // i8 codes are dequantized first, the scale multiplying its row.
  if (keyScales)
    keys = widenBlock(keys, dk, keyScales);
  keysT = slice(b, loc, state.keysT, {zero, zero}, {numKeys, dk});
  keysT = ops.generic({queryRow, keys}, keysT,
                      {ops.map(2, {1}), ops.map(2, {0, 1}), ops.map(2, {0, 1})},
                      {kParallel, kParallel},
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
  Value scores = slice(b, loc, state.scores, {zero, zero}, {rows, numKeys});
  Value scoreRow = tensor::ExtractSliceOp::create(
      b, loc, rowType, scores, ArrayRef<OpFoldResult>{zero, zero},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), numKeys}, unit);
  scoreRow = ops.fill(constants.zero, scoreRow);
  scoreRow = ops.generic(
      {keysT}, scoreRow, {ops.map(2, {0, 1}), ops.map(2, {0})},
      {kParallel, kReduction},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return arith::AddFOp::create(nb, nloc, args[1], args[0]).getResult();
      });
  return tensor::InsertSliceOp::create(
      b, loc, scoreRow, scores, ArrayRef<OpFoldResult>{zero, zero},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), numKeys}, unit);
}

Value BlockUpdate::transposeKeys() {
  if (tile.keyT)
    return sliceUnlessWhole(b, loc, tile.keyT, {zero, zero}, {dk, numKeys});
  Value into = slice(b, loc, state.keysT, {zero, zero}, {dk, numKeys});
  // A bf16 block is widened along its rows first, then transposed in f32:
  // a read that transposes and widens at once is lowered to one scalar
  // load per 16-bit element.
  if (isBF16(keys) || keyScales)
    keys = widenBlock(keys, dk, keyScales);
  return linalg::TransposeOp::create(b, loc, keys, into,
                                     ArrayRef<int64_t>{1, 0})
      ->getResult(0);
}

Value BlockUpdate::computeScores() {
  if (tile.isOneQuery())
    return computeOneQueryScores();
  keysT = transposeKeys();
  Value scores = slice(b, loc, state.scores, {zero, zero}, {rows, numKeys});
  scores = ops.fill(constants.zero, scores);
  // S = Q · Kᵀ over keys packed in pairs (mha-amx-split).
  if (tile.packed) {
    // The fill is marked too: mha-amx-split starts the tiles at zero instead
    // (mha-vectorize leaves it).
    MhaDialect::AmxSplitAttrHelper(b.getContext())
        .setAttr(scores.getDefiningOp(), b.getUnitAttr());
    return buildSplitDot(ops, tile.query, keysT, scores);
  }
  // S = Q · Kᵀ over (query i, dk k, key j).
  return ops.contraction(
      tile.query, keysT, scores,
      {ops.map(3, {0, 1}), ops.map(3, {1, 2}), ops.map(3, {0, 2})},
      {kParallel, kReduction, kParallel});
}

void BlockUpdate::updateMax(Value scores) {
  // blockMax = max over allowed j of S, from -inf (buildMaskedMax). It does
  // not start from m: the vectorizer's canonicalization would fold a copy
  // of m away and update m in place while its old value is still read
  // below, which bufferization could only resolve with a buffer per key
  // block.
  constants.minusInfinity = ops.minusInfinity();
  blockMax = slice(b, loc, state.newMax, {zero}, {rows});
  blockMax = ops.fill(constants.minusInfinity, blockMax);
  SmallVector<Value> maxInputs = {scores};
  SmallVector<AffineMap> maxMaps = {ops.map(2, {0, 1})};
  if (mask) {
    maxInputs.push_back(mask);
    maxMaps.push_back(ops.map(2, {0, 1}));
  }
  maxMaps.push_back(ops.map(2, {0}));
  blockMax =
      ops.generic(maxInputs, blockMax, maxMaps, {kParallel, kReduction},
                  [&](OpBuilder &nb, Location nloc, ValueRange args) {
                    return buildMaskedMax(
                        nb, nloc, constants, args[0],
                        [&] { return allowed(nb, nloc, args); }, args.back());
                  });

  // m_new = max(m, blockMax); corr = m == m_new ? 1 : exp((m - m_new)·scale).
  correction = slice(b, loc, state.correction, {zero}, {rows});
  correction = ops.generic(
      {state.max, blockMax}, correction,
      {ops.map(1, {0}), ops.map(1, {0}), ops.map(1, {0})}, {kParallel},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        return buildCorrection(nb, nloc, constants, args[0], args[1]);
      });
  // Then m = m_new, element by element in place.
  max = ops.generic(
      {blockMax}, state.max, {ops.map(1, {0}), ops.map(1, {0})}, {kParallel},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return arith::MaximumFOp::create(nb, nloc, args[1], args[0])
            .getResult();
      });
}

/// The body of acc·corr and l·corr: the running value times the correction.
Value rescale(OpBuilder &nb, Location nloc, ValueRange args) {
  return arith::MulFOp::create(nb, nloc, args[1], args[0]).getResult();
}

Value BlockUpdate::computeWeights(Value scores) {
  // P = allowed ? exp((S - m_new)·scale) : 0, over S.
  SmallVector<Value> expInputs = {max};
  SmallVector<AffineMap> expMaps = {ops.map(2, {0})};
  if (mask) {
    expInputs.push_back(mask);
    expMaps.push_back(ops.map(2, {0, 1}));
  }
  expMaps.push_back(ops.map(2, {0, 1}));
  Value weights = ops.generic(
      expInputs, scores, expMaps, {kParallel, kParallel},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        // The mask is args[1], as in the maximum's body; the score is last.
        // A bias may leave every allowed score of a row at -inf, whose
        // weights are then 0, not exp(-inf + inf).
        Value rowMax =
            scoreMod ? buildFiniteMax(nb, nloc, constants, args[0]) : args[0];
        return buildMaskedExp(nb, nloc, constants, args.back(), rowMax,
                              [&] { return allowed(nb, nloc, args); });
      });

  // l = l·corr + rowsum(P).
  sum = ops.generic({correction}, state.sum, {ops.map(1, {0}), ops.map(1, {0})},
                    {kParallel}, rescale);
  sum = ops.generic(
      {weights}, sum, {ops.map(2, {0, 1}), ops.map(2, {0})},
      {kParallel, kReduction},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        return arith::AddFOp::create(nb, nloc, args[1], args[0]).getResult();
      });
  return weights;
}

Value BlockUpdate::accumulate(Value weights) {
  // A bf16 block of values, widened into the scratch: read once from the
  // cache, then P·V reads f32 from L1.
  if (isBF16(values) || valueScales)
    values = widenBlock(values, dv, valueScales);

  // acc = acc·corr + P · V over (query i, key j, value column n).
  Value acc = ops.generic({correction}, state.acc,
                          {ops.map(2, {0}), ops.map(2, {0, 1})},
                          {kParallel, kParallel}, rescale);
  if (tile.packed)
    return buildSplitDot(ops, weights, values, acc);
  return ops.contraction(
      weights, values, acc,
      {ops.map(3, {0, 1}), ops.map(3, {1, 2}), ops.map(3, {0, 2})},
      {kParallel, kReduction, kParallel});
}

OnlineSoftmaxState BlockUpdate::run() {
  // Modified scores already carry the scale.
  constants.log2Scale =
      ops.f32Constant(getLog2Scale(scoreMod ? 1.0 : tile.scale));
  constants.zero = ops.f32Constant(0.0);
  constants.one = ops.f32Constant(1.0);
  keys = sliceUnlessWhole(b, loc, tile.key, {zero, zero}, {numKeys, dk});
  values = sliceUnlessWhole(b, loc, tile.value, {zero, zero}, {numKeys, dv});
  if (tile.keyScales)
    keyScales = sliceUnlessWhole(b, loc, tile.keyScales, {zero}, {numKeys});
  if (tile.valueScales)
    valueScales = sliceUnlessWhole(b, loc, tile.valueScales, {zero}, {numKeys});
  if (tile.maskRows)
    mask =
        sliceUnlessWhole(b, loc, tile.maskRows, {zero, zero}, {rows, numKeys});
  for (Value input : scoreInputs)
    blockInputs.push_back(sliceUnlessWhole(
        b, loc, input, {zero, zero}, {getSize(b, loc, input, 0), numKeys}));

  Value scores = computeScores();
  if (scoreMod)
    scores = modifyScores(scores);
  updateMax(scores);
  Value weights = computeWeights(scores);
  Value acc = accumulate(weights);

  OnlineSoftmaxState next;
  next.max = max;
  next.sum = sum;
  next.acc = acc;
  next.scores =
      unslice(b, loc, weights, state.scores, {zero, zero}, {rows, numKeys});
  next.keysT =
      tile.keyT ? state.keysT
      : tile.isOneQuery()
          ? unslice(b, loc, keysT, state.keysT, {zero, zero}, {numKeys, dk})
          : unslice(b, loc, keysT, state.keysT, {zero, zero}, {dk, numKeys});
  next.newMax = unslice(b, loc, blockMax, state.newMax, {zero}, {rows});
  next.correction =
      unslice(b, loc, correction, state.correction, {zero}, {rows});
  next.widened = widened;
  return next;
}
} // namespace

FailureOr<SmallVector<Value>>
mlir::mha::decomposeOnlineAttention(OpBuilder &b, OnlineAttentionOp op) {
  Location loc = op.getLoc();
  AttentionTile tile;
  tile.query = op.getQuery();
  tile.key = withStaticSizes(b, loc, op.getKey());
  tile.value = withStaticSizes(b, loc, op.getValue());
  tile.keyScales = withStaticSizes(b, loc, op.getKeyScales());
  tile.valueScales = withStaticSizes(b, loc, op.getValueScales());
  tile.keyT = withStaticSizes(b, loc, op.getKeysT());
  tile.packed = op.getPacked();
  tile.sharedPosition = op.getSharedPosition();
  tile.maskRows = withStaticSizes(b, loc, op.getMask());
  tile.queryStart = op.getQueryStart();
  tile.causalOffset = op.getCausalOffset();
  tile.numQueries = getSize(b, loc, op.getQuery());
  tile.scale = op.getScale().convertToDouble();
  tile.window = op.getWindow();
  SmallVector<Value> scoreInputs;
  for (Value input : op.getScoreInputs())
    scoreInputs.push_back(withStaticSizes(b, loc, input));
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
  Region *scoreMod = getScoreModRegion(op);
  return BlockUpdate(b, loc, tile, state, op.getKeyStart(), numKeys,
                     op.getCausal(), scoreInputs, scoreMod)
      .run()
      .asRange();
}
