//===- LowerToLinalg.cpp - The steps of the layer to linalg on tensors ----===//
//
// Each mha op becomes linalg named ops where one exists (matmul, transpose,
// broadcast, fill) and `linalg.generic` contractions where the data layout
// needs its own indexing maps: per-head weights, the output projection of
// the heads, and the two contractions of attention, whose key/value operand
// reads head `h floordiv (H / Hkv)` so that grouped-query attention never
// copies keys or values. The softmax is written out step by step instead of
// using `linalg.softmax`, whose decomposition starts its max at NaN and gives
// a fully masked row NaN instead of zeros.
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/LowerToLinalg.h"
#include "compiler/Passes.h"
#include "compiler/attention/AttentionMath.h"
#include "compiler/attention/GenericBuilder.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/Sequence.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHALOWERTOLINALG
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
using utils::IteratorType;
constexpr IteratorType kParallel = IteratorType::parallel;
constexpr IteratorType kReduction = IteratorType::reduction;

/// The first element type among `op`'s operands and results that is a float
/// other than f32, or null when everything is f32 (masks are i1).
Type findNonF32ElementType(Operation *op) {
  // An append moves rows: a bf16 cache (mha-widen-bf16 leaves the op bf16,
  // so that the cache is updated in place) is lowered as it is.
  if (isa<CacheAppendOp>(op) &&
      getElementTypeOrSelf(op->getResult(0).getType()).isBF16())
    return {};
  auto check = [](Type type) -> Type {
    Type element = getElementTypeOrSelf(type);
    return isa<FloatType>(element) && !element.isF32() ? element : Type();
  };
  for (Type type : op->getOperandTypes())
    if (Type bad = check(type))
      return bad;
  for (Type type : op->getResultTypes())
    if (Type bad = check(type))
      return bad;
  return {};
}

/// Builds the linalg form of one mha op at one location: the generics of
/// GenericBuilder, and the named ops and reshapes of the layer. Sizes are
/// carried as OpFoldResults so that static sizes stay static in the types
/// and dynamic batch and sequence sizes are read with `tensor.dim`.
class LinalgBuilder : public GenericBuilder {
public:
  using GenericBuilder::GenericBuilder;

  /// Size `dim` of `value`.
  OpFoldResult dim(Value value, int64_t dim) {
    return tensor::getMixedSize(builder, loc, value, dim);
  }

  OpFoldResult index(int64_t size) { return builder.getIndexAttr(size); }

  /// `input` repeated along `dimensions` of a tensor of `sizes`.
  Value broadcast(Value input, ArrayRef<OpFoldResult> sizes,
                  ArrayRef<int64_t> dimensions) {
    return linalg::BroadcastOp::create(builder, loc, input, empty(sizes),
                                       dimensions)
        ->getResult(0);
  }

  /// The accumulator of a projection: the bias repeated along `dimensions`,
  /// or zeros when there is no bias.
  Value biasOrZeros(Value bias, ArrayRef<OpFoldResult> sizes,
                    ArrayRef<int64_t> dimensions) {
    return bias ? broadcast(bias, sizes, dimensions) : zeros(sizes);
  }

  /// `input` with its dimensions permuted: result dim i is input dim
  /// `permutation[i]`.
  Value transpose(Value input, ArrayRef<int64_t> permutation) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t from : permutation)
      sizes.push_back(dim(input, from));
    return linalg::TransposeOp::create(builder, loc, input, empty(sizes),
                                       permutation)
        ->getResult(0);
  }

  /// `input` reshaped to `sizes` by splitting dimensions (`reassociation`
  /// says which result dimensions each input dimension becomes).
  Value expand(Value input, ArrayRef<ReassociationIndices> reassociation,
               ArrayRef<OpFoldResult> sizes) {
    auto type = RankedTensorType::get(staticShape(sizes), builder.getF32Type());
    return tensor::ExpandShapeOp::create(builder, loc, type, input,
                                         reassociation, sizes);
  }

  Value collapse(Value input, ArrayRef<ReassociationIndices> reassociation) {
    return tensor::CollapseShapeOp::create(builder, loc, input, reassociation);
  }

  /// `value` with the type the replaced op declared, which may know more
  /// static sizes than the lowering derived.
  Value castTo(Value value, Type type) {
    if (value.getType() == type)
      return value;
    return tensor::CastOp::create(builder, loc, type, value);
  }

  /// `input [..., D_in] · weight [D_in, D_out] (+ bias [D_out])` as one
  /// matmul over the rows of `input` flattened to 2-D.
  Value rowsTimesWeight(Value input, Value weight, Value bias) {
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    int64_t inWidth = inputType.getDimSize(rank - 1);
    int64_t outWidth = cast<RankedTensorType>(weight.getType()).getDimSize(1);
    ReassociationIndices outer =
        llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));

    // The result's sizes: the input's leading ones and D_out.
    SmallVector<OpFoldResult> sizes;
    for (int64_t i : outer)
      sizes.push_back(dim(input, i));
    sizes.push_back(index(outWidth));

    Value rows = input;
    if (rank == 1)
      rows = expand(input, {{0, 1}}, {index(1), index(inWidth)});
    else if (rank > 2)
      rows = collapse(input, {outer, {rank - 1}});

    Value init = biasOrZeros(bias, {dim(rows, 0), index(outWidth)}, {0});
    Value product = markProjection(
        linalg::MatmulOp::create(builder, loc, TypeRange{init.getType()},
                                 ValueRange{rows, weight}, ValueRange{init})
            .getResult(0));
    if (rank == 1)
      return collapse(product, {{0, 1}});
    if (rank == 2)
      return product;
    return expand(product, {outer, {rank - 1}}, sizes);
  }

  /// Tags the op of a projection's contraction, so that
  /// `mha-tile-projections` finds it among attention's contractions.
  Value markProjection(Value contraction) {
    contraction.getDefiningOp()->setAttr(
        MhaDialect::ProjectionAttrHelper::getNameStr(),
        UnitAttr::get(getContext()));
    return contraction;
  }

private:
  static SmallVector<int64_t> staticShape(ArrayRef<OpFoldResult> sizes) {
    SmallVector<int64_t> shape;
    for (OpFoldResult size : sizes)
      shape.push_back(getConstantIntValue(size).value_or(ShapedType::kDynamic));
    return shape;
  }
};

/// Base of the patterns: refuses element types other than f32, which the
/// lowering does not handle yet (the pass reports them first).
template <typename OpTy> struct F32Pattern : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    if (findNonF32ElementType(op))
      return rewriter.notifyMatchFailure(op, "only f32 is lowered");
    LinalgBuilder builder(rewriter, op.getLoc());
    Value result = lower(op, adaptor, builder);
    rewriter.replaceOp(op, builder.castTo(result, op.getType()));
    return success();
  }

  /// Builds the replacement of `op`.
  virtual Value lower(OpTy op, OpAdaptor adaptor, LinalgBuilder &b) const = 0;
};

//===----------------------------------------------------------------------===//
// mha.project
//===----------------------------------------------------------------------===//

struct LowerProject : F32Pattern<ProjectOp> {
  using F32Pattern::F32Pattern;

  Value lower(ProjectOp op, OpAdaptor adaptor,
              LinalgBuilder &b) const override {
    if (op.isPerHead())
      return lowerPerHead(adaptor, b);
    if (std::optional<int64_t> heads = op.getNumHeads())
      return lowerWritingHeads(adaptor, *heads, b);
    return b.rowsTimesWeight(adaptor.getInput(), adaptor.getWeight(),
                             adaptor.getBias());
  }

private:
  /// The accumulator of a projection into heads `[B, H, T, d]`: the bias
  /// (laid out head after head) viewed as `[H, d]` and repeated over batch
  /// and tokens, or zeros.
  static Value headsInit(Value bias, ArrayRef<OpFoldResult> sizes,
                         LinalgBuilder &b) {
    if (bias)
      bias = b.expand(bias, {{0, 1}}, {sizes[1], sizes[3]});
    return b.biasOrZeros(bias, sizes, {0, 2});
  }

  /// `[B, H, T, w] · [H, w, d]`, or `[B, T, H·w]` read as `[B, T, H, w]`:
  /// head h multiplies its own slice by its own matrix.
  static Value lowerPerHead(OpAdaptor adaptor, LinalgBuilder &b) {
    Value input = adaptor.getInput();
    Value weight = adaptor.getWeight();
    ArrayRef<int64_t> w = cast<RankedTensorType>(weight.getType()).getShape();
    int64_t heads = w[0], sliceWidth = w[1], outWidth = w[2];
    // (batch, head, token, column, row of the slice)
    auto [d0, d1, d2, d3, d4] =
        std::make_tuple(b.d(0), b.d(1), b.d(2), b.d(3), b.d(4));
    AffineMap inputMap = b.affineMap(5, {d0, d1, d2, d4});
    OpFoldResult tokens = b.dim(input, 2);
    if (cast<RankedTensorType>(input.getType()).getRank() == 3) {
      // Reading the slices in place is what saves split_heads' copy.
      tokens = b.dim(input, 1);
      input = b.expand(
          input, {{0}, {1}, {2, 3}},
          {b.dim(input, 0), tokens, b.index(heads), b.index(sliceWidth)});
      inputMap = b.affineMap(5, {d0, d2, d1, d4});
    }
    SmallVector<OpFoldResult> sizes = {b.dim(input, 0), b.index(heads), tokens,
                                       b.index(outWidth)};
    Value init = headsInit(adaptor.getBias(), sizes, b);
    return b.markProjection(b.contraction(
        input, weight, init,
        {inputMap, b.affineMap(5, {d1, d4, d3}),
         b.affineMap(5, {d0, d1, d2, d3})},
        {kParallel, kParallel, kParallel, kParallel, kReduction}));
  }

  /// `[B, T, D] · [D, H·d]` written as heads `[B, H, T, d]`: the weight is
  /// read as `[D, H, d]`, so each head's columns land in place and no
  /// transposed copy is made.
  static Value lowerWritingHeads(OpAdaptor adaptor, int64_t heads,
                                 LinalgBuilder &b) {
    Value input = adaptor.getInput();
    auto weightType = cast<RankedTensorType>(adaptor.getWeight().getType());
    int64_t inWidth = weightType.getDimSize(0);
    int64_t headDim = weightType.getDimSize(1) / heads;
    Value weight =
        b.expand(adaptor.getWeight(), {{0}, {1, 2}},
                 {b.index(inWidth), b.index(heads), b.index(headDim)});
    SmallVector<OpFoldResult> sizes = {b.dim(input, 0), b.index(heads),
                                       b.dim(input, 1), b.index(headDim)};
    Value init = headsInit(adaptor.getBias(), sizes, b);
    // (batch, head, token, column, input column)
    auto [d0, d1, d2, d3, d4] =
        std::make_tuple(b.d(0), b.d(1), b.d(2), b.d(3), b.d(4));
    return b.markProjection(b.contraction(
        input, weight, init,
        {b.affineMap(5, {d0, d2, d4}), b.affineMap(5, {d4, d1, d3}),
         b.affineMap(5, {d0, d1, d2, d3})},
        {kParallel, kParallel, kParallel, kParallel, kReduction}));
  }
};

//===----------------------------------------------------------------------===//
// mha.split_heads and mha.concat_heads
//===----------------------------------------------------------------------===//

struct LowerSplitHeads : F32Pattern<SplitHeadsOp> {
  using F32Pattern::F32Pattern;

  Value lower(SplitHeadsOp op, OpAdaptor adaptor,
              LinalgBuilder &b) const override {
    // [B, T, H·d] -> [B, T, H, d] -> [B, H, T, d].
    Value input = adaptor.getInput();
    int64_t heads = op.getNumHeads();
    int64_t width = cast<RankedTensorType>(input.getType()).getDimSize(2);
    Value split = b.expand(input, {{0}, {1}, {2, 3}},
                           {b.dim(input, 0), b.dim(input, 1), b.index(heads),
                            b.index(width / heads)});
    return b.transpose(split, {0, 2, 1, 3});
  }
};

//===----------------------------------------------------------------------===//
// mha.cache_append
//===----------------------------------------------------------------------===//

/// An `scf.for` over the sequences that inserts each one's new rows into the
/// cache at its own length (`tensor.insert_slice` at a dynamic offset),
/// carrying the cache: bufferized, every insert writes the cache's buffer in
/// place. A sequence whose rows do not fit (length < 0 or length + T > C) is
/// skipped (`scf.if`), so that a wrong length never writes outside the
/// cache; the tools check the lengths before a call and say so.
struct LowerCacheAppend : F32Pattern<CacheAppendOp> {
  using F32Pattern::F32Pattern;

  Value lower(CacheAppendOp op, OpAdaptor adaptor,
              LinalgBuilder &b) const override {
    OpBuilder &builder = b.builder;
    Location loc = b.loc;
    Value update = adaptor.getUpdate(), cache = adaptor.getCache(),
          lengths = adaptor.getLengths();
    auto cacheType = cast<RankedTensorType>(cache.getType());
    int64_t heads = cacheType.getDimSize(1), width = cacheType.getDimSize(3);
    Value batch = getValueOrCreateConstantIndexOp(
        builder, loc,
        getKnownSize(builder, loc, {{cache, 0}, {update, 0}, {lengths, 0}}));
    OpFoldResult rows = b.dim(update, 2);
    // C - T in i64: the largest length after which the rows still fit.
    Type i64 = builder.getI64Type();
    auto asI64 = [&](OpFoldResult size) -> Value {
      Value index = getValueOrCreateConstantIndexOp(builder, loc, size);
      return arith::IndexCastOp::create(builder, loc, i64, index);
    };
    Value room = arith::SubIOp::create(builder, loc, asI64(b.dim(cache, 2)),
                                       asI64(rows));
    Value zeroI64 = arith::ConstantIntOp::create(builder, loc, i64, 0);
    Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
    Value one = arith::ConstantIndexOp::create(builder, loc, 1);
    SmallVector<OpFoldResult> sizes = {builder.getIndexAttr(1),
                                       builder.getIndexAttr(heads), rows,
                                       builder.getIndexAttr(width)};
    SmallVector<OpFoldResult> strides(4, builder.getIndexAttr(1));
    auto loop = scf::ForOp::create(
        builder, loc, zero, batch, one, ValueRange{cache},
        [&](OpBuilder &nb, Location nloc, Value seq, ValueRange carried) {
          Value length =
              tensor::ExtractOp::create(nb, nloc, lengths, ValueRange{seq});
          Value notNegative = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::sge, length, zeroI64);
          Value fits = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::sle, length, room);
          Value ok = arith::AndIOp::create(nb, nloc, notNegative, fits);
          auto ifOp = scf::IfOp::create(
              nb, nloc, ok,
              [&](OpBuilder &tb, Location tloc) {
                Value offset = arith::IndexCastOp::create(
                    tb, tloc, tb.getIndexType(), length);
                OpFoldResult zeroAttr = tb.getIndexAttr(0);
                Value rowsOfSeq = tensor::ExtractSliceOp::create(
                    tb, tloc, update,
                    ArrayRef<OpFoldResult>{seq, zeroAttr, zeroAttr, zeroAttr},
                    sizes, strides);
                // A linalg.copy into the cache's slice, not the bare
                // insert_slice: mha-vectorize makes it whole-row vector
                // reads and writes, where the insert_slice bufferized to a
                // memref.copy that became scalar loops. The slice is
                // written back where it was taken, in place.
                SmallVector<OpFoldResult> at = {seq, zeroAttr, offset,
                                                zeroAttr};
                Value target = tensor::ExtractSliceOp::create(
                    tb, tloc, carried[0], at, sizes, strides);
                Value copied =
                    linalg::CopyOp::create(tb, tloc, rowsOfSeq, target)
                        .getResult(0);
                Value written = tensor::InsertSliceOp::create(
                    tb, tloc, copied, carried[0], at, sizes, strides);
                scf::YieldOp::create(tb, tloc, written);
              },
              [&](OpBuilder &eb, Location eloc) {
                scf::YieldOp::create(eb, eloc, carried[0]);
              });
          scf::YieldOp::create(nb, nloc, ifOp.getResult(0));
        });
    return loop.getResult(0);
  }
};

struct LowerConcatHeads : F32Pattern<ConcatHeadsOp> {
  using F32Pattern::F32Pattern;

  Value lower(ConcatHeadsOp op, OpAdaptor adaptor,
              LinalgBuilder &b) const override {
    // [B, H, T, d] -> [B, T, H, d] -> [B, T, H·d].
    Value tokensFirst = b.transpose(adaptor.getInput(), {0, 2, 1, 3});
    return b.collapse(tokensFirst, {{0}, {1}, {2, 3}});
  }
};

//===----------------------------------------------------------------------===//
// mha.output_project
//===----------------------------------------------------------------------===//

struct LowerOutputProject : F32Pattern<OutputProjectOp> {
  using F32Pattern::F32Pattern;

  Value lower(OutputProjectOp op, OpAdaptor adaptor,
              LinalgBuilder &b) const override {
    if (!op.readsHeads())
      return b.rowsTimesWeight(adaptor.getInput(), adaptor.getWeight(),
                               adaptor.getBias());

    // [B, H, T, dv] · [H·dv, D_out]: contract over head and value dimension
    // at once, reading W as [H, dv, D_out], so no concatenated copy is made.
    Value input = adaptor.getInput();
    ArrayRef<int64_t> in = cast<RankedTensorType>(input.getType()).getShape();
    int64_t heads = in[1], valueDim = in[3];
    int64_t outWidth =
        cast<RankedTensorType>(adaptor.getWeight().getType()).getDimSize(1);
    Value weight =
        b.expand(adaptor.getWeight(), {{0, 1}, {2}},
                 {b.index(heads), b.index(valueDim), b.index(outWidth)});
    Value init = b.biasOrZeros(
        adaptor.getBias(),
        {b.dim(input, 0), b.dim(input, 2), b.index(outWidth)}, {0, 1});
    // (batch, token, output column, head, value column)
    auto [d0, d1, d2, d3, d4] =
        std::make_tuple(b.d(0), b.d(1), b.d(2), b.d(3), b.d(4));
    return b.markProjection(b.contraction(
        input, weight, init,
        {b.affineMap(5, {d0, d3, d1, d4}), b.affineMap(5, {d3, d4, d2}),
         b.affineMap(5, {d0, d1, d2})},
        {kParallel, kParallel, kParallel, kReduction, kReduction}));
  }
};

//===----------------------------------------------------------------------===//
// mha.sdpa
//===----------------------------------------------------------------------===//

struct LowerSdpa : F32Pattern<SdpaOp> {
  using F32Pattern::F32Pattern;

  Value lower(SdpaOp op, OpAdaptor adaptor, LinalgBuilder &b) const override {
    Value query = adaptor.getQuery(), key = adaptor.getKey(),
          value = adaptor.getValue(), mask = adaptor.getMask();
    int64_t heads = op.getQuery().getType().getDimSize(1);
    int64_t kvHeads = op.getKey().getType().getDimSize(1);
    int64_t valueDim = op.getValue().getType().getDimSize(3);
    AttentionSizes sizes =
        AttentionSizes::get(b.builder, b.loc, query, key, value, mask);

    // unnormalized[b, h, t, n] = sum_s weights[b, h, t, s] * V[b, h / G, s, n]
    // The softmax normalization is applied to these dv outputs of a row
    // rather than to its S weights: the same product, fewer multiplications.
    auto weighValues = [&](Value weights) {
      AffineExpr d0 = b.d(0), d1 = b.d(1), d2 = b.d(2), d3 = b.d(3),
                 d4 = b.d(4);
      AffineExpr kvHead = getKeyValueHead(d1, heads, kvHeads);
      Value init = b.zeros(
          {sizes.batch, b.index(heads), sizes.queries, b.index(valueDim)});
      SmallVector<AffineMap> maps = {b.affineMap(5, {d0, d1, d2, d4}),
                                     b.affineMap(5, {d0, kvHead, d4, d3}),
                                     b.affineMap(5, {d0, d1, d2, d3})};
      SmallVector<IteratorType> iterators = {kParallel, kParallel, kParallel,
                                             kParallel, kReduction};
      if (!adaptor.getPositions())
        return b.contraction(weights, value, init, maps, iterators);
      // With positions, the values past a sequence's length are unused
      // capacity of a cache: whatever the caller's memory holds, possibly
      // NaN, which a weight of 0 would not cancel (0 * NaN). Keys that may
      // not be attended add nothing instead.
      Value zero = b.f32Constant(0.0);
      return b.generic(
          {weights, value}, init, maps, iterators,
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            // acc + (w == 0 ? 0 : w·v).
            Value product = arith::MulFOp::create(nb, nloc, args[0], args[1]);
            Value unused = arith::CmpFOp::create(
                nb, nloc, arith::CmpFPredicate::OEQ, args[0], zero);
            product = arith::SelectOp::create(nb, nloc, unused, zero, product);
            return arith::AddFOp::create(nb, nloc, args[2], product)
                .getResult();
          });
    };
    return buildSoftmax(b, query, key, mask, adaptor.getPositions(),
                        op.getCausal(), op.getCausalBottomRight(),
                        op.getEffectiveScale(), sizes, b.index(valueDim),
                        weighValues);
  }

  /// The softmax of the scores of `query [B, H, T, dk]` against
  /// `key [B, Hkv, S, dk]`, applied to rows that `weigh` computes from the
  /// unnormalized weights `[B, H, T, S]` (`exp(scores * scale - rowMax)`,
  /// exactly 0 for keys that may not be attended): returns those rows
  /// `[B, H, T, rowWidth]` divided by the weights' row sums, and 0 for a row
  /// that may attend no key. Shared by `mha.sdpa` (rows: the weights times
  /// the values) and `mha.attention_weights` (rows: the weights), so that the
  /// two cannot disagree. `positions [B]` (i64, or null) move the causal
  /// diagonal of sequence b by positions[b].
  static Value buildSoftmax(LinalgBuilder &b, Value query, Value key,
                            Value mask, Value positions, bool causal,
                            bool causalBottomRight, double scaleFactor,
                            const AttentionSizes &sizes, OpFoldResult rowWidth,
                            function_ref<Value(Value)> weigh) {
    int64_t heads = cast<RankedTensorType>(query.getType()).getDimSize(1);
    int64_t kvHeads = cast<RankedTensorType>(key.getType()).getDimSize(1);
    OpFoldResult batch = sizes.batch;
    OpFoldResult numHeads = b.index(heads);

    SoftmaxConstants constants =
        SoftmaxConstants::create(b.builder, b.loc, scaleFactor);

    // Loop dimensions of the row-wise steps: (batch, head, query, key).
    AffineExpr d0 = b.d(0), d1 = b.d(1), d2 = b.d(2), d3 = b.d(3), d4 = b.d(4);
    AffineMap rows4 = b.affineMap(4, {d0, d1, d2, d3});
    AffineMap perRow4 = b.affineMap(4, {d0, d1, d2});
    SmallVector<IteratorType> rowReduction = {kParallel, kParallel, kParallel,
                                              kReduction};
    SmallVector<IteratorType> elementwise(4, kParallel);

    // Query head h reads key/value head h floordiv (H / Hkv): grouped-query
    // attention shares K and V through the indexing map, without copies.
    AffineExpr kvHead = getKeyValueHead(d1, heads, kvHeads);

    // scores[b, h, t, s] = sum_k Q[b, h, t, k] * K[b, h / G, s, k].
    SmallVector<OpFoldResult> scoreSizes = {batch, numHeads, sizes.queries,
                                            sizes.keys};
    Value scores = b.contraction(
        query, key, b.zeros(scoreSizes),
        {b.affineMap(5, {d0, d1, d2, d4}), b.affineMap(5, {d0, kvHead, d3, d4}),
         b.affineMap(5, {d0, d1, d2, d3})},
        {kParallel, kParallel, kParallel, kParallel, kReduction});

    // Which keys a query may attend: the mask (a leading 1 broadcasts over
    // the batch) and, when causal, key index <= query index (+ S - T when
    // bottom-right aligned).
    Causality causality{causal,
                        causal ? buildCausalOffset(b.builder, b.loc,
                                                   causalBottomRight,
                                                   sizes.queries, sizes.keys)
                               : Value(),
                        causal && positions};
    SmallVector<Value> maskInputs;
    SmallVector<AffineMap> maskMaps;
    if (mask) {
      auto maskType = cast<RankedTensorType>(mask.getType());
      AffineExpr maskBatch = d0;
      if (maskType.getDimSize(0) == 1)
        maskBatch = b.constantExpr(0);
      else if (maskType.isDynamicDim(0) && !isConstantIntValue(batch, 1))
        mask = broadcastMaskBatch(b, mask, batch);
      maskInputs.push_back(mask);
      maskMaps.push_back(b.affineMap(4, {maskBatch, d2, d3}));
    }
    // The positions are one more input of the row-wise steps, after the
    // mask: position[b] for every (head, query, key) of sequence b.
    if (causality.positions) {
      maskInputs.push_back(positions);
      maskMaps.push_back(b.affineMap(4, {d0}));
    }

    SmallVector<OpFoldResult> rowSizes = {batch, numHeads, sizes.queries};

    // rowMax[b, h, t] = max over allowed s of scores; -inf when no key is
    // allowed.
    SmallVector<Value> maxInputs = {scores};
    llvm::append_range(maxInputs, maskInputs);
    SmallVector<AffineMap> maxMaps = {rows4};
    llvm::append_range(maxMaps, maskMaps);
    maxMaps.push_back(perRow4);
    Value rowMax = b.generic(
        maxInputs, b.filled(rowSizes, constants.minusInfinity), maxMaps,
        rowReduction, [&](OpBuilder &nb, Location nloc, ValueRange args) {
          auto allowed = [&] {
            return allowedIn(nb, nloc, args, mask, causality);
          };
          return buildMaskedMax(nb, nloc, constants, args[0], allowed,
                                args.back());
        });
    AffineMap rows3 = b.affineMap(3, {d0, d1, d2});

    // weights[b, h, t, s] = exp((scores - rowMax)·scale) for allowed keys,
    // exactly 0 for the others (also where rowMax is -inf).
    SmallVector<Value> expInputs = {scores, rowMax};
    llvm::append_range(expInputs, maskInputs);
    SmallVector<AffineMap> expMaps = {rows4, perRow4};
    llvm::append_range(expMaps, maskMaps);
    expMaps.push_back(rows4);
    Value weights = b.generic(
        expInputs, b.empty(scoreSizes), expMaps, elementwise,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          auto allowed = [&] {
            return allowedIn(nb, nloc, args, mask, causality);
          };
          return buildMaskedExp(nb, nloc, constants, args[0], args[1], allowed);
        });

    // rowSum[b, h, t] = sum over s of weights.
    Value rowSum = b.generic(
        {weights}, b.zeros(rowSizes), {rows4, perRow4}, rowReduction,
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          return arith::AddFOp::create(nb, nloc, args[1], args[0]).getResult();
        });

    Value unnormalized = weigh(weights);

    // 1 / rowSum, and 0 for a row that may attend no key (sum 0), so that
    // such a row gives zeros, never NaN.
    Value inverse =
        b.generic({rowSum}, b.empty(rowSizes), {rows3, rows3},
                  SmallVector<IteratorType>(3, kParallel),
                  [&](OpBuilder &nb, Location nloc, ValueRange args) {
                    return buildReciprocalOrZero(nb, nloc, constants, args[0]);
                  });

    return b.generic(
        {unnormalized, inverse},
        b.empty({batch, numHeads, sizes.queries, rowWidth}),
        {rows4, perRow4, rows4}, elementwise,
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          return arith::MulFOp::create(nb, nloc, args[0], args[1]).getResult();
        });
  }

private:
  /// Whether the causal rule applies, the offset of its diagonal (null:
  /// top-left, offset 0), and whether the row-wise steps get each
  /// sequence's position as their last input (which then is the offset).
  struct Causality {
    bool causal;
    Value offset;
    bool positions;
  };

  /// Whether the key of this iteration may be attended: the mask element
  /// and, when causal, key index <= query index (+ the offset, or the
  /// sequence's position; loop dimensions 3 and 2). The mask and the
  /// position are the last inputs, in that order. Null when every key is
  /// allowed.
  static Value allowedIn(OpBuilder &nb, Location nloc, ValueRange args,
                         Value mask, const Causality &causality) {
    unsigned positionIndex = args.size() - 2;
    unsigned maskIndex = positionIndex - (causality.positions ? 1 : 0);
    Value maskElement = mask ? args[maskIndex] : Value();
    if (!causality.causal)
      return maskElement;
    Value queryIndex = linalg::IndexOp::create(nb, nloc, 2);
    Value keyIndex = linalg::IndexOp::create(nb, nloc, 3);
    Value offset = causality.offset;
    if (causality.positions)
      offset = arith::IndexCastOp::create(nb, nloc, nb.getIndexType(),
                                          args[positionIndex]);
    return buildAllowed(nb, nloc, maskElement, keyIndex, queryIndex, offset);
  }

  /// A mask whose batch size is only known at run time is 1 (broadcast) or
  /// B: read row `b` or row 0 accordingly into a [B, T, S] mask.
  static Value broadcastMaskBatch(LinalgBuilder &b, Value mask,
                                  OpFoldResult batch) {
    Value broadcasts = buildMaskBroadcasts(b.builder, b.loc, mask);
    Type i1 = b.builder.getI1Type();
    Value init = b.empty({batch, b.dim(mask, 1), b.dim(mask, 2)}, i1);
    return b.generic(
        ValueRange{}, init, {b.map(3, {0, 1, 2})},
        SmallVector<IteratorType>(3, kParallel),
        [&](OpBuilder &nb, Location nloc, ValueRange) {
          Value row = getValueOrCreateConstantIndexOp(
              nb, nloc,
              getMaskBatchRow(
                  nb, nloc, mask, broadcasts,
                  linalg::IndexOp::create(nb, nloc, 0).getResult()));
          return tensor::ExtractOp::create(
                     nb, nloc, mask,
                     ValueRange{row, linalg::IndexOp::create(nb, nloc, 1),
                                linalg::IndexOp::create(nb, nloc, 2)})
              .getResult();
        });
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct MhaLowerToLinalgPass
    : mha::impl::MhaLowerToLinalgBase<MhaLowerToLinalgPass> {
  void runOnOperation() override {
    // Say why an op cannot be lowered before the conversion does, which
    // would only report that it failed to legalize.
    bool unsupported = false;
    getOperation().walk([&](Operation *op) {
      if (!isa<MhaDialect>(op->getDialect()))
        return;
      if (isa<AttentionOp>(op)) {
        op->emitOpError("must be expanded before lowering to linalg (run "
                        "mha-expand first)");
        unsupported = true;
      } else if (Type bad = findNonF32ElementType(op)) {
        op->emitOpError() << "expects f32 elements to lower to linalg, got "
                          << bad;
        unsupported = true;
      }
    });
    if (unsupported)
      return signalPassFailure();

    ConversionTarget target(getContext());
    target.addIllegalDialect<MhaDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    RewritePatternSet patterns(&getContext());
    populateMhaToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::mha::populateMhaToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerProject, LowerSplitHeads, LowerSdpa, LowerConcatHeads,
               LowerOutputProject, LowerCacheAppend>(patterns.getContext());
  populateAttentionWeightsToLinalgPatterns(patterns);
}

Value mlir::mha::buildAttentionProbabilities(OpBuilder &builder, Location loc,
                                             Value query, Value key, Value mask,
                                             Value positions, bool causal,
                                             bool causalBottomRight,
                                             double scale) {
  LinalgBuilder b(builder, loc);
  AttentionSizes sizes =
      AttentionSizes::get(builder, loc, query, key, /*value=*/{}, mask);
  return LowerSdpa::buildSoftmax(b, query, key, mask, positions, causal,
                                 causalBottomRight, scale, sizes, sizes.keys,
                                 [](Value weights) { return weights; });
}
