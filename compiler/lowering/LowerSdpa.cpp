//===- LowerSdpa.cpp - mha.sdpa and mha.attention_weights to linalg -------===//
//
// The decomposed attention: Q·Kᵀ, the softmax step by step (row max, exp,
// row sum, the reciprocal of the sum) and P·V as linalg ops on whole
// tensors, whose key/value operand reads head `h floordiv (H / Hkv)` so
// that grouped-query attention never copies keys or values. The softmax is
// written out instead of using `linalg.softmax`, whose decomposition starts
// its max at NaN and gives a fully masked row NaN instead of zeros.
// `mha.attention_weights` is built by the same softmax
// (buildAttentionProbabilities).
//
//===----------------------------------------------------------------------===//

#include "compiler/lowering/LowerToLinalg.h"
#include "compiler/utils/AttentionMath.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::mha;

namespace {
using utils::IteratorType;

struct LowerSdpa : F32Pattern<SdpaOp> {
  using F32Pattern::F32Pattern;

  Value lower(SdpaOp op, OpAdaptor adaptor, GenericBuilder &b) const override {
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
    ScoreSteps steps = {adaptor.getAttnBias(), adaptor.getAlibiSlopes(),
                        adaptor.getSinks(),    op.getWindowAttr(),
                        op.getSoftcapAttr(),   ScoreSteps::of(op).scoreMod};
    return buildSoftmax(b, query, key, mask, adaptor.getPositions(),
                        op.getCausal(), op.getCausalBottomRight(),
                        op.getEffectiveScale(), steps, sizes, b.index(valueDim),
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
  /// diagonal of sequence b by positions[b]. `steps` (their tensors those
  /// of the lowered operands) modify the scores, narrow the keys to a
  /// window and add the sinks to the denominators.
  static Value buildSoftmax(GenericBuilder &b, Value query, Value key,
                            Value mask, Value positions, bool causal,
                            bool causalBottomRight, double scaleFactor,
                            const ScoreSteps &steps,
                            const AttentionSizes &sizes, OpFoldResult rowWidth,
                            function_ref<Value(Value)> weigh) {
    int64_t heads = cast<RankedTensorType>(query.getType()).getDimSize(1);
    int64_t kvHeads = cast<RankedTensorType>(key.getType()).getDimSize(1);
    OpFoldResult batch = sizes.batch;
    OpFoldResult numHeads = b.index(heads);

    // Steps that change the scores are defined on scaled scores: those
    // are computed first, and the softmax takes them with a scale of 1
    // (here with sinks too, whose logits join the scaled row maxima).
    // Without them the scale stays in the exponent (getLog2Scale).
    bool modifiesScores = steps.modifiesScores() || steps.sinks;
    SoftmaxConstants constants = SoftmaxConstants::create(
        b.builder, b.loc, modifiesScores ? 1.0 : scaleFactor);

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
    // With a window, also key index > query position - W.
    Causality causality{
        causal,
        causal ? buildCausalOffset(b.builder, b.loc, causalBottomRight,
                                   sizes.queries, sizes.keys)
               : Value(),
        causal && positions,
        causal && steps.window ? arith::ConstantIndexOp::create(
                                     b.builder, b.loc, steps.window.getInt())
                                     .getResult()
                               : Value()};
    SmallVector<Value> maskInputs;
    SmallVector<AffineMap> maskMaps;
    appendMaskInputs(b, mask, causality.positions ? positions : Value(), batch,
                     maskInputs, maskMaps);

    SmallVector<OpFoldResult> rowSizes = {batch, numHeads, sizes.queries};
    if (modifiesScores)
      scores = buildModifiedScores(b, scores, positions, scaleFactor, steps,
                                   causality, scoreSizes);

    Value rowMax = buildRowMax(b, constants, scores, steps.sinks, mask,
                               causality, maskInputs, maskMaps, rowSizes);

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
          Value max = args[1];
          if (modifiesScores)
            max = buildFiniteMax(nb, nloc, constants, max);
          return buildMaskedExp(nb, nloc, constants, args[0], max, allowed);
        });

    Value rowSum =
        buildRowSum(b, constants, weights, steps.sinks, rowMax, rowSizes);
    Value unnormalized = weigh(weights);

    return normalizeRows(b, constants, unnormalized, rowSum, rowSizes,
                         rowWidth);
  }

private:
  /// Whether the causal rule applies, the offset of its diagonal (null:
  /// top-left, offset 0), and whether the row-wise steps get each
  /// sequence's position as their last input (which then is the offset).
  struct Causality {
    bool causal;
    Value offset;
    bool positions;
    /// The window's size W (index), or null without a window.
    Value window;
  };

  /// rowMax[b, h, t]: the maximum of the allowed scores of each row, from
  /// -inf or from the head's sink: the sink joins the maximum that the
  /// exponentials subtract, so that neither its weight nor the scores'
  /// overflow. -inf for a row that may attend no key.
  static Value buildRowMax(GenericBuilder &b, const SoftmaxConstants &constants,
                           Value scores, Value sinks, Value mask,
                           const Causality &causality,
                           ArrayRef<Value> maskInputs,
                           ArrayRef<AffineMap> maskMaps,
                           ArrayRef<OpFoldResult> rowSizes) {
    AffineExpr d0 = b.d(0), d1 = b.d(1), d2 = b.d(2), d3 = b.d(3);
    AffineMap rows3 = b.affineMap(3, {d0, d1, d2});
    Value maxInit = sinks ? b.generic({sinks}, b.empty(rowSizes),
                                      {b.affineMap(3, {d1}), rows3},
                                      SmallVector<IteratorType>(3, kParallel),
                                      [](OpBuilder &, Location,
                                         ValueRange args) { return args[0]; })
                          : b.filled(rowSizes, constants.minusInfinity);
    SmallVector<Value> inputs = {scores};
    llvm::append_range(inputs, maskInputs);
    SmallVector<AffineMap> maps = {b.affineMap(4, {d0, d1, d2, d3})};
    llvm::append_range(maps, maskMaps);
    maps.push_back(b.affineMap(4, {d0, d1, d2}));
    return b.generic(inputs, maxInit, maps,
                     {kParallel, kParallel, kParallel, kReduction},
                     [&](OpBuilder &nb, Location nloc, ValueRange args) {
                       auto allowed = [&] {
                         return allowedIn(nb, nloc, args, mask, causality);
                       };
                       return buildMaskedMax(nb, nloc, constants, args[0],
                                             allowed, args.back());
                     });
  }

  /// rowSum[b, h, t] = sum over s of weights, plus e^(sink - rowMax) with
  /// sinks (a weight that multiplies no value).
  static Value buildRowSum(GenericBuilder &b, const SoftmaxConstants &constants,
                           Value weights, Value sinks, Value rowMax,
                           ArrayRef<OpFoldResult> rowSizes) {
    AffineExpr d0 = b.d(0), d1 = b.d(1), d2 = b.d(2), d3 = b.d(3);
    AffineMap rows3 = b.affineMap(3, {d0, d1, d2});
    Value sumInit = b.zeros(rowSizes);
    if (sinks)
      sumInit = b.generic({sinks, rowMax}, b.empty(rowSizes),
                          {b.affineMap(3, {d1}), rows3, rows3},
                          SmallVector<IteratorType>(3, kParallel),
                          [&](OpBuilder &nb, Location nloc, ValueRange args) {
                            Value max =
                                buildFiniteMax(nb, nloc, constants, args[1]);
                            return buildMaskedExp(nb, nloc, constants, args[0],
                                                  max, [] { return Value(); });
                          });
    return b.generic(
        {weights}, sumInit,
        {b.affineMap(4, {d0, d1, d2, d3}), b.affineMap(4, {d0, d1, d2})},
        {kParallel, kParallel, kParallel, kReduction},
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          return arith::AddFOp::create(nb, nloc, args[1], args[0]).getResult();
        });
  }

  /// rows [B, H, T, rowWidth] times 1 / rowSum, and 0 for a row that may
  /// attend no key (sum 0), so that such a row gives zeros, never NaN.
  static Value normalizeRows(GenericBuilder &b,
                             const SoftmaxConstants &constants, Value rows,
                             Value rowSum, ArrayRef<OpFoldResult> rowSizes,
                             OpFoldResult rowWidth) {
    AffineExpr d0 = b.d(0), d1 = b.d(1), d2 = b.d(2), d3 = b.d(3);
    AffineMap rows3 = b.affineMap(3, {d0, d1, d2});
    Value inverse =
        b.generic({rowSum}, b.empty(rowSizes), {rows3, rows3},
                  SmallVector<IteratorType>(3, kParallel),
                  [&](OpBuilder &nb, Location nloc, ValueRange args) {
                    return buildReciprocalOrZero(nb, nloc, constants, args[0]);
                  });
    SmallVector<OpFoldResult> sizes(rowSizes);
    sizes.push_back(rowWidth);
    AffineMap rows4 = b.affineMap(4, {d0, d1, d2, d3});
    return b.generic(
        {rows, inverse}, b.empty(sizes),
        {rows4, b.affineMap(4, {d0, d1, d2}), rows4},
        SmallVector<IteratorType>(4, kParallel),
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          return arith::MulFOp::create(nb, nloc, args[0], args[1]).getResult();
        });
  }

  /// The scores after mha.sdpa's score steps (buildScoreSteps, then the
  /// `score_mod` region, buildScoreMod): scaled, soft-capped, with ALiBi's
  /// slope·(key - query position) and the bias
  /// `[B or 1, H or 1, T or 1, S]`, whose dimensions of static size 1 read
  /// index 0 (broadcast; the verifier makes any other size the full one).
  /// The query position is that of the causal rule (S - T bottom-right,
  /// positions[b] with a cache).
  static Value buildModifiedScores(GenericBuilder &b, Value scores,
                                   Value positions, double scaleFactor,
                                   const ScoreSteps &steps,
                                   const Causality &causality,
                                   ArrayRef<OpFoldResult> scoreSizes) {
    AffineExpr d0 = b.d(0), d1 = b.d(1), d2 = b.d(2), d3 = b.d(3);
    Value scale = b.f32Constant(scaleFactor);
    Value softcap = steps.softcap
                        ? b.f32Constant(steps.softcap.getValueAsDouble())
                        : Value();
    SmallVector<Value> inputs = {scores};
    SmallVector<AffineMap> maps = {b.affineMap(4, {d0, d1, d2, d3})};
    if (steps.attnBias) {
      auto biasType = cast<RankedTensorType>(steps.attnBias.getType());
      SmallVector<AffineExpr> biasIndex = {d0, d1, d2, d3};
      for (int64_t dim = 0; dim < 3; ++dim)
        if (biasType.getDimSize(dim) == 1)
          biasIndex[dim] = b.constantExpr(0);
      inputs.push_back(steps.attnBias);
      maps.push_back(b.affineMap(4, biasIndex));
    }
    // ALiBi and the region measure from the query's position.
    bool positioned = steps.alibiSlopes || steps.scoreMod;
    bool readsPosition = positioned && causality.positions;
    if (steps.alibiSlopes) {
      inputs.push_back(steps.alibiSlopes);
      maps.push_back(b.affineMap(4, {d1}));
    }
    if (readsPosition) {
      inputs.push_back(positions);
      maps.push_back(b.affineMap(4, {d0}));
    }
    maps.push_back(b.affineMap(4, {d0, d1, d2, d3}));
    return b.generic(
        inputs, b.empty(scoreSizes), maps,
        SmallVector<IteratorType>(4, kParallel),
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          unsigned next = 1;
          Value bias = steps.attnBias ? args[next++] : Value();
          Value slope = steps.alibiSlopes ? args[next++] : Value();
          Value key, position;
          if (positioned) {
            key = linalg::IndexOp::create(nb, nloc, 3);
            Value offset = causality.offset;
            if (readsPosition)
              offset = arith::IndexCastOp::create(nb, nloc, nb.getIndexType(),
                                                  args[next++]);
            position = buildQueryPosition(
                nb, nloc, linalg::IndexOp::create(nb, nloc, 2), offset);
          }
          Value score = buildScoreSteps(nb, nloc, args[0], scale, softcap,
                                        slope, bias, key, position);
          if (!steps.scoreMod)
            return score;
          return buildScoreMod(nb, *steps.scoreMod,
                               {score, linalg::IndexOp::create(nb, nloc, 0),
                                linalg::IndexOp::create(nb, nloc, 1), position,
                                key});
        });
  }

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
    return buildAllowed(nb, nloc, maskElement, keyIndex, queryIndex, offset,
                        causality.window);
  }

  /// The inputs of the row-wise steps after the scores, with their maps
  /// over (batch, head, query, key): the mask (a leading 1 broadcasts over
  /// the batch) and then, where not null, `positions`: position[b] for every
  /// (head, query, key) of sequence b.
  static void appendMaskInputs(GenericBuilder &b, Value mask, Value positions,
                               OpFoldResult batch,
                               SmallVectorImpl<Value> &inputs,
                               SmallVectorImpl<AffineMap> &maps) {
    AffineExpr d0 = b.d(0), d2 = b.d(2), d3 = b.d(3);
    if (mask) {
      auto maskType = cast<RankedTensorType>(mask.getType());
      AffineExpr maskBatch = d0;
      if (maskType.getDimSize(0) == 1)
        maskBatch = b.constantExpr(0);
      else if (maskType.isDynamicDim(0) && !isConstantIntValue(batch, 1))
        mask = broadcastMaskBatch(b, mask, batch);
      inputs.push_back(mask);
      maps.push_back(b.affineMap(4, {maskBatch, d2, d3}));
    }
    if (positions) {
      inputs.push_back(positions);
      maps.push_back(b.affineMap(4, {d0}));
    }
  }

  /// A mask whose batch size is only known at run time is 1 (broadcast) or
  /// B: read row `b` or row 0 accordingly into a [B, T, S] mask.
  static Value broadcastMaskBatch(GenericBuilder &b, Value mask,
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
} // namespace

void mlir::mha::populateSdpaToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerSdpa>(patterns.getContext());
}

Value mlir::mha::buildAttentionProbabilities(OpBuilder &builder, Location loc,
                                             Value query, Value key, Value mask,
                                             Value positions, bool causal,
                                             bool causalBottomRight,
                                             double scale,
                                             const ScoreSteps &steps) {
  GenericBuilder b(builder, loc);
  AttentionSizes sizes =
      AttentionSizes::get(builder, loc, query, key, /*value=*/{}, mask);
  return LowerSdpa::buildSoftmax(
      b, query, key, mask, positions, causal, causalBottomRight, scale, steps,
      sizes, sizes.keys, [](Value weights) { return weights; });
}
