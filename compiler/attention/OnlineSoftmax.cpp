//===- OnlineSoftmax.cpp - Flash-style attention of one query tile --------===//
//
// Per key block [s0, s0 + tk) of a query tile:
//
//   S     = Q · K_blockᵀ                          (scores, [tq, tk])
//   m_new = max(m, max over allowed j of S·scale)
//   corr  = m == m_new ? 1 : exp(m - m_new)       (1 when both are -inf)
//   P     = allowed ? exp(S·scale - m_new) : 0    (over S, in place)
//   l     = l·corr + rowsum(P)
//   acc   = acc·corr + P · V_block
//
// and at the end out = l == 0 ? 0 : acc / l (combineKeySplits merges the
// states of several key ranges first). The correction is guarded
// because a row that has seen no allowed key yet has m = m_new = -inf, and
// exp(-inf - -inf) is NaN; P is selected, not computed from -inf, for the
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

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/TypeUtilities.h"

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
struct TileOps {
  OpBuilder &b;
  Location loc;

  Value f32(double value) { return buildF32Constant(b, loc, value); }
  Value minusInfinity() { return buildMinusInfinity(b, loc); }

  AffineMap map(unsigned numDims, ArrayRef<unsigned> dims) {
    return getProjection(b.getContext(), numDims, dims);
  }

  Value generic(ValueRange inputs, Value init, ArrayRef<AffineMap> maps,
                ArrayRef<IteratorType> iterators,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    return buildGeneric(b, loc, inputs, init, maps, iterators, body);
  }

  Value fill(Value value, Value init) {
    return linalg::FillOp::create(b, loc, ValueRange{value}, ValueRange{init})
        .getResult(0);
  }

  /// out = l == 0 ? 0 : acc / l, in place of `acc` ([rows..., dv]) with
  /// `sum` l ([rows...]).
  Value normalize(Value sum, Value acc) {
    unsigned rank = cast<RankedTensorType>(acc.getType()).getRank();
    SmallVector<unsigned> rows =
        llvm::to_vector(llvm::seq<unsigned>(0, rank - 1));
    SmallVector<unsigned> all = llvm::to_vector(llvm::seq<unsigned>(0, rank));
    SoftmaxConstants constants;
    constants.zero = f32(0.0);
    return generic({sum}, acc, {map(rank, rows), map(rank, all)},
                   SmallVector<IteratorType>(rank, IteratorType::parallel),
                   [&](OpBuilder &nb, Location nloc, ValueRange args) {
                     return buildNormalized(nb, nloc, constants, args[0],
                                            args[1]);
                   });
  }

  /// A new f32 buffer of `shape`. `bufferization.alloc_tensor`, not
  /// `tensor.empty`: CSE merges equal `tensor.empty` ops, and two loop-carried
  /// scratch tensors that start from one value end up sharing one buffer.
  Value alloc(ArrayRef<int64_t> shape, ValueRange dynamicSizes = {}) {
    return bufferization::AllocTensorOp::create(
        b, loc, RankedTensorType::get(shape, b.getF32Type()), dynamicSizes);
  }
};
} // namespace

SmallVector<Value> OnlineSoftmaxState::asRange() const {
  SmallVector<Value> values = {max,   sum,    acc,       scores,
                               keysT, newMax, correction};
  if (valuesWide)
    values.push_back(valuesWide);
  return values;
}

OnlineSoftmaxState OnlineSoftmaxState::fromRange(ValueRange values) {
  assert((values.size() == 7 || values.size() == 8) &&
         "expects the values of asRange");
  return {values[0],
          values[1],
          values[2],
          values[3],
          values[4],
          values[5],
          values[6],
          values.size() == 8 ? values[7] : Value()};
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
  state.sum = ops.fill(ops.f32(0.0), sumInit);
  state.acc = ops.fill(ops.f32(0.0), accInit);

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
  // needs one element type); f32 values need none.
  if (isBF16(tile.value))
    state.valuesWide = ops.alloc({maxKeys, valueDim});
  state.newMax = ops.alloc({maxRows});
  state.correction = ops.alloc({maxRows});
  return state;
}

OnlineSoftmaxState
OnlineSoftmaxBuilder::iterateKeyRange(const OnlineSoftmaxState &state,
                                      OpFoldResult begin, OpFoldResult end,
                                      bool causal) {
  AffineExpr d0 = builder.getAffineDimExpr(0), d1 = builder.getAffineDimExpr(1);
  // An empty range (end < begin) stays empty in every loop below.
  end = affine::makeComposedFoldedAffineMax(
      builder, loc, AffineMap::get(2, 0, {d0, d1}, builder.getContext()),
      {begin, end});
  // The end of the whole blocks of `block` keys from `from`.
  auto wholeBlocksEnd = [&](OpFoldResult from, int64_t block) {
    return affine::makeComposedFoldedAffineApply(
        builder, loc, d0 + (d1 - d0).floorDiv(block) * block, {from, end});
  };
  // A block size larger than a static key count would slice past the
  // scratch (sized by the keys): no such block fits anyway.
  int64_t keys = cast<RankedTensorType>(tile.key.getType()).getDimSize(0);
  auto fits = [&](int64_t block) {
    return ShapedType::isDynamic(keys) || block <= keys;
  };
  OnlineSoftmaxState next = state;
  OpFoldResult from = begin;
  if (fits(keyTile)) {
    OpFoldResult fullEnd = wholeBlocksEnd(from, keyTile);
    next = iterateKeyBlocks(next, from, fullEnd, causal, /*fullBlocks=*/true);
    from = fullEnd;
  }
  if (keyTile > kTailKeys && fits(kTailKeys)) {
    OpFoldResult tailEnd = wholeBlocksEnd(from, kTailKeys);
    next = iterateKeyBlocks(next, from, tailEnd, causal,
                            /*fullBlocks=*/true, kTailKeys);
    from = tailEnd;
  }
  return iterateKeyBlocks(next, from, end, causal, /*fullBlocks=*/false,
                          std::min(keyTile, kTailKeys));
}

OnlineSoftmaxState OnlineSoftmaxBuilder::iterateKeyBlocks(
    const OnlineSoftmaxState &state, OpFoldResult begin, OpFoldResult end,
    bool causal, bool fullBlocks, int64_t blockKeys) {
  int64_t keyTile = blockKeys ? blockKeys : this->keyTile;
  Value lower = getValueOrCreateConstantIndexOp(builder, loc, begin);
  Value upper = getValueOrCreateConstantIndexOp(builder, loc, end);
  Value step = arith::ConstantIndexOp::create(builder, loc, keyTile);
  auto loop = scf::ForOp::create(
      builder, loc, lower, upper, step, state.asRange(),
      [&](OpBuilder &b, Location nloc, Value keyStart, ValueRange carried) {
        // The last block of a range that is not a multiple of BK is short.
        OpFoldResult numKeys = b.getIndexAttr(keyTile);
        if (!fullBlocks) {
          AffineExpr d0 = b.getAffineDimExpr(0), d1 = b.getAffineDimExpr(1);
          numKeys = affine::makeComposedFoldedAffineMin(
              b, nloc,
              AffineMap::get(2, 0, {b.getAffineConstantExpr(keyTile), d0 - d1},
                             b.getContext()),
              {upper, keyStart});
        }
        OnlineSoftmaxState next =
            updateBlock(b, nloc, OnlineSoftmaxState::fromRange(carried),
                        keyStart, numKeys, causal);
        scf::YieldOp::create(b, nloc, next.asRange());
      });
  return OnlineSoftmaxState::fromRange(loop.getResults());
}

OnlineSoftmaxState OnlineSoftmaxBuilder::updateBlock(
    OpBuilder &b, Location loc, const OnlineSoftmaxState &state, Value keyStart,
    OpFoldResult numKeys, bool causal) {
  TileOps ops{b, loc};
  OpFoldResult zero = b.getIndexAttr(0);
  OpFoldResult rows = tile.numQueries;
  OpFoldResult dk = b.getIndexAttr(keyDim), dv = b.getIndexAttr(valueDim);
  SoftmaxConstants constants;
  constants.scale = ops.f32(tile.scale);
  constants.zero = ops.f32(0.0);
  constants.one = ops.f32(1.0);
  Value zeroF = constants.zero;

  // The block's keys, values and mask: views of the operands, not copies.
  Value keys = slice(b, loc, tile.key, {keyStart, zero}, {numKeys, dk});
  Value values = slice(b, loc, tile.value, {keyStart, zero}, {numKeys, dv});
  Value mask;
  if (tile.maskRows)
    mask = slice(b, loc, tile.maskRows, {zero, keyStart}, {rows, numKeys});

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

  // One query (decoding): S[0, j] = Σ_k q[k]·K[j, k], read along the
  // contiguous key rows: the products [tk, dk] (one vector of dk per key)
  // into the scratch, then one sum per key. Transposing K first would move
  // every key twice for a single dot product each.
  Value keysT;
  Value scores;
  Type f32 = b.getF32Type();
  if (isOneQuery()) {
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
    keysT = slice(b, loc, tile.keyT, {zero, keyStart}, {dk, numKeys});
  } else {
    keysT = slice(b, loc, state.keysT, {zero, zero}, {dk, numKeys});
    if (isBF16(keys))
      // Transposed and widened in one pass over the bf16 block.
      keysT = ops.generic({keys}, keysT, {ops.map(2, {1, 0}), ops.map(2, {0, 1})},
                          {kPar, kPar},
                          [](OpBuilder &nb, Location nloc, ValueRange args) {
                            return widen(nb, nloc, args[0]);
                          });
    else
      keysT = linalg::TransposeOp::create(b, loc, keys, keysT,
                                          ArrayRef<int64_t>{1, 0})
                  ->getResult(0);
  }

  // S = Q · Kᵀ over (query i, dk k, key j).
  if (!isOneQuery()) {
    scores = slice(b, loc, state.scores, {zero, zero}, {rows, numKeys});
    scores = ops.fill(zeroF, scores);
    scores = ops.generic(
        {tile.query, keysT}, scores,
        {ops.map(3, {0, 1}), ops.map(3, {1, 2}), ops.map(3, {0, 2})},
        {kPar, kRed, kPar}, [](OpBuilder &nb, Location nloc, ValueRange args) {
          return buildMultiplyAdd(nb, nloc, args[0], args[1], args[2]);
        });
  }

  // blockMax = max over allowed j of S·scale, from -inf. It does not start
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

  // m_new = max(m, blockMax); corr = m == m_new ? 1 : exp(m - m_new).
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

  // P = allowed ? exp(S·scale - m_new) : 0, over S.
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
  Value valuesWide;
  if (isBF16(values)) {
    valuesWide = slice(b, loc, state.valuesWide, {zero, zero}, {numKeys, dv});
    valuesWide = ops.generic({values}, valuesWide,
                             {ops.map(2, {0, 1}), ops.map(2, {0, 1})},
                             {kPar, kPar},
                             [](OpBuilder &nb, Location nloc, ValueRange args) {
                               return widen(nb, nloc, args[0]);
                             });
    values = valuesWide;
  }

  // acc = acc·corr + P · V over (query i, key j, value column n).
  Value acc =
      ops.generic({correction}, state.acc,
                  {ops.map(2, {0}), ops.map(2, {0, 1})}, {kPar, kPar}, rescale);
  acc = ops.generic(
      {weights, values}, acc,
      {ops.map(3, {0, 1}), ops.map(3, {1, 2}), ops.map(3, {0, 2})},
      {kPar, kRed, kPar}, [](OpBuilder &nb, Location nloc, ValueRange args) {
        return buildMultiplyAdd(nb, nloc, args[0], args[1], args[2]);
      });

  OnlineSoftmaxState next;
  next.max = max;
  next.sum = sum;
  next.acc = acc;
  next.scores =
      unslice(b, loc, weights, state.scores, {zero, zero}, {rows, numKeys});
  next.keysT =
      tile.keyT ? state.keysT
      : isOneQuery()
          ? unslice(b, loc, keysT, state.keysT, {zero, zero}, {numKeys, dk})
          : unslice(b, loc, keysT, state.keysT, {zero, zero}, {dk, numKeys});
  next.newMax = unslice(b, loc, blockMax, state.newMax, {zero}, {rows});
  next.correction =
      unslice(b, loc, correction, state.correction, {zero}, {rows});
  next.valuesWide =
      valuesWide ? unslice(b, loc, valuesWide, state.valuesWide, {zero, zero},
                           {numKeys, dv})
                 : state.valuesWide;
  return next;
}

Value OnlineSoftmaxBuilder::finalize(const OnlineSoftmaxState &state) {
  return TileOps{builder, loc}.normalize(state.sum, state.acc);
}

Value mlir::mha::combineKeySplits(OpBuilder &builder, Location loc,
                                  Value accParts, Value maxParts,
                                  Value sumParts, Value init) {
  TileOps ops{builder, loc};
  unsigned rowRank = cast<RankedTensorType>(init.getType()).getRank() - 1;
  SmallVector<OpFoldResult> rowSizes =
      tensor::getMixedSizes(builder, loc, init);
  rowSizes.pop_back();
  auto rowsOf = [&](Value fill) {
    Value empty =
        tensor::EmptyOp::create(builder, loc, rowSizes, builder.getF32Type());
    return ops.fill(fill, empty);
  };
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
      {maxParts}, rowsOf(ops.minusInfinity()),
      {ops.map(rowRank + 1, withSplit(split, rows)),
       ops.map(rowRank + 1, rows)},
      overSplits, [](OpBuilder &nb, Location nloc, ValueRange args) {
        return arith::MaximumFOp::create(nb, nloc, args[1], args[0])
            .getResult();
      });

  // Σ_p w_p·x_p with w_p = buildPartWeight(m_p, M).
  SoftmaxConstants constants;
  constants.zero = ops.f32(0.0);
  constants.minusInfinity = ops.minusInfinity();
  Value zeroF = constants.zero;
  auto weighted = [&](OpBuilder &nb, Location nloc, ValueRange args) {
    Value w = buildPartWeight(nb, nloc, constants, args[1], args[2]);
    return buildMultiplyAdd(nb, nloc, args[0], w, args[3]);
  };

  // l = Σ_p w_p·l_p.
  Value sum =
      ops.generic({sumParts, maxParts, maxAll}, rowsOf(zeroF),
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

  return ops.normalize(sum, acc);
}
