//===- MhaAttentionOps.cpp - Verifiers of the attention ops --------------===//
//
// mha.sdpa, mha.attention_weights and mha.attention: their result types and
// the rules on their operands, clauses and score steps.
//
//===----------------------------------------------------------------------===//

#include "dialects/AttentionClauses.h"
#include "dialects/InferredTypes.h"
#include "dialects/MhaOps.h"
#include "dialects/ShapeChecker.h"
#include "dialects/VariantChecks.h"

#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::mha;

//===----------------------------------------------------------------------===//
// SdpaOp
//===----------------------------------------------------------------------===//

/// `query [B, H, T, dk]`, `value [B, Hkv, S, dv]` -> `[B, H, T, dv]`.
LogicalResult SdpaOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  RankedTensorType query = tensorType(adaptor.getQuery());
  RankedTensorType key = tensorType(adaptor.getKey());
  RankedTensorType value = tensorType(adaptor.getValue());
  if (query.getRank() != 4 || key.getRank() != 4 || value.getRank() != 4)
    return emitOptionalError(location, "mha.sdpa: no result type for these "
                                       "operand ranks");
  ArrayRef<int64_t> q = query.getShape();
  int64_t batch =
      refineDim(refineDim(q[0], key.getDimSize(0)), value.getDimSize(0));
  types.push_back(tensorOf({batch, q[1], q[2], value.getDimSize(3)},
                           query.getElementType()));
  return success();
}

bool SdpaOp::isCompatibleReturnTypes(TypeRange inferred, TypeRange declared) {
  return compatibleResults(inferred, declared);
}

/// `scale` if set, else `1/√dk` (dimension 3 of `query`).
static double effectiveScale(std::optional<APFloat> scale,
                             RankedTensorType query) {
  if (scale)
    return scale->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(query.getDimSize(3)));
}

double SdpaOp::getEffectiveScale() {
  return effectiveScale(getScale(), getQuery().getType());
}

/// Checks a mask `[B or 1, T, S]` (rank 3 by its ODS type) against the
/// batch, query and key sizes.
static LogicalResult verifyMask(ShapeChecker &check, Value mask, int64_t batch,
                                int64_t queries, int64_t keys) {
  if (!mask)
    return success();
  ArrayRef<int64_t> shape = tensorType(mask).getShape();
  if (shape[0] != 1 &&
      failed(check.dim("mask batch (B or 1)", batch, shape[0])))
    return failure();
  if (failed(check.dim("mask query length (T)", queries, shape[1])) ||
      failed(check.dim("mask key length (S)", keys, shape[2])))
    return failure();
  return success();
}

/// `causal_bottom_right` says where the causal diagonal lies: without
/// `causal` there is no diagonal, and the graph most likely lost its `causal`.
static LogicalResult verifyCausal(Operation *op, bool causal,
                                  bool causalBottomRight) {
  if (!causalBottomRight || causal)
    return success();
  return op->emitOpError()
         << "expects causal_bottom_right only together with causal, got "
            "causal_bottom_right without causal";
}

/// `positions [B]` put query `i` of sequence `b` at `positions[b] + i` on the
/// top-left causal diagonal: they need `causal`, and say nothing about the
/// bottom-right alignment, which places the queries itself.
static LogicalResult verifyPositions(Operation *op, ShapeChecker &check,
                                     Value positions, bool causal,
                                     bool causalBottomRight, int64_t batch) {
  if (!positions)
    return success();
  if (!causal)
    return op->emitOpError()
           << "expects positions only together with causal, got positions "
              "without causal";
  if (causalBottomRight)
    return op->emitOpError()
           << "expects positions with the top-left causal alignment, got "
              "causal(bottom_right)";
  return check.dim("positions size (B)", batch,
                   tensorType(positions).getDimSize(0));
}

/// A scale multiplies the scores: it must be a positive finite number.
static LogicalResult verifyScale(Operation *op, std::optional<APFloat> scale) {
  if (!scale)
    return success();
  double value = scale->convertToDouble();
  if (std::isfinite(value) && value > 0)
    return success();
  return op->emitOpError() << "expects scale to be positive and finite, got "
                           << value;
}

/// The rules on `query [B, H, T, dk]` and `key [B, Hkv, S, dk]` (rank 4 by
/// their ODS types) that `mha.sdpa` and `mha.attention_weights` share.
static LogicalResult verifyQueryAndKey(ShapeChecker &check, Value query,
                                       Value key) {
  ArrayRef<int64_t> q = tensorType(query).getShape();
  ArrayRef<int64_t> k = tensorType(key).getShape();
  if (failed(check.isStatic(query, "query", 1, "head count")) ||
      failed(check.isStatic(query, "query", 3, "head dimension")) ||
      failed(check.isStatic(key, "key", 1, "head count")) ||
      failed(check.isStatic(key, "key", 3, "head dimension")) ||
      failed(check.dim("key batch", q[0], k[0])) ||
      failed(check.dim("key head dimension (dk)", q[3], k[3])) ||
      failed(check.positive("the key/value head count", k[1])) ||
      failed(check.divides("the key/value head count", k[1],
                           "the query head count", q[1])))
    return failure();
  return success();
}

LogicalResult SdpaOp::verify() {
  ShapeChecker check(*this);
  if (failed(verifyQueryAndKey(check, getQuery(), getKey())))
    return failure();
  ArrayRef<int64_t> q = getQuery().getType().getShape();
  ArrayRef<int64_t> k = getKey().getType().getShape();
  ArrayRef<int64_t> v = getValue().getType().getShape();
  if (failed(check.isStatic(getValue(), "value", 1, "head count")) ||
      failed(check.isStatic(getValue(), "value", 3, "value dimension")) ||
      failed(check.dim("value batch", refineDim(q[0], k[0]), v[0])) ||
      failed(check.dim("value heads (Hkv)", k[1], v[1])) ||
      failed(check.dim("value length (S)", k[2], v[2])) ||
      failed(verifyMask(check, getMask(), refineDim(q[0], k[0]), q[2],
                        refineDim(k[2], v[2]))) ||
      failed(verifyCausal(*this, getCausal(), getCausalBottomRight())) ||
      failed(verifyPositions(*this, check, getPositions(), getCausal(),
                             getCausalBottomRight(),
                             refineDim(refineDim(q[0], k[0]), v[0]))) ||
      failed(verifyScale(*this, getScale())) ||
      failed(verifyScoreSteps(*this, check, ScoreSteps::of(*this), getCausal(),
                              refineDim(refineDim(q[0], k[0]), v[0]), q[1],
                              q[2], refineDim(k[2], v[2]))))
    return failure();
  return verifyResultType(*this);
}

RankedTensorType SdpaOp::inferResultType() { return inferredResultType(*this); }

//===----------------------------------------------------------------------===//
// AttentionWeightsOp
//===----------------------------------------------------------------------===//

/// `query [B, H, T, dk]`, `key [B, Hkv, S, dk]` -> `[B, H, T, S]`.
LogicalResult AttentionWeightsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  RankedTensorType query = tensorType(adaptor.getQuery());
  RankedTensorType key = tensorType(adaptor.getKey());
  if (query.getRank() != 4 || key.getRank() != 4)
    return emitOptionalError(location, "mha.attention_weights: no result type "
                                       "for these operand ranks");
  ArrayRef<int64_t> q = query.getShape();
  types.push_back(tensorOf(
      {refineDim(q[0], key.getDimSize(0)), q[1], q[2], key.getDimSize(2)},
      query.getElementType()));
  return success();
}

bool AttentionWeightsOp::isCompatibleReturnTypes(TypeRange inferred,
                                                 TypeRange declared) {
  return compatibleResults(inferred, declared);
}

double AttentionWeightsOp::getEffectiveScale() {
  return effectiveScale(getScale(), getQuery().getType());
}

LogicalResult AttentionWeightsOp::verify() {
  ShapeChecker check(*this);
  if (failed(verifyQueryAndKey(check, getQuery(), getKey())))
    return failure();
  ArrayRef<int64_t> q = getQuery().getType().getShape();
  ArrayRef<int64_t> k = getKey().getType().getShape();
  if (failed(verifyMask(check, getMask(), refineDim(q[0], k[0]), q[2], k[2])) ||
      failed(verifyCausal(*this, getCausal(), getCausalBottomRight())) ||
      failed(verifyPositions(*this, check, getPositions(), getCausal(),
                             getCausalBottomRight(), refineDim(q[0], k[0]))) ||
      failed(verifyScale(*this, getScale())) ||
      failed(verifyScoreSteps(*this, check, ScoreSteps::of(*this), getCausal(),
                              refineDim(q[0], k[0]), q[1], q[2], k[2])))
    return failure();
  return verifyResultType(*this);
}

RankedTensorType AttentionWeightsOp::inferResultType() {
  return inferredResultType(*this);
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

namespace {
/// The sizes of one attention layer, read off its operands.
struct LayerSizes {
  int64_t numHeads, numKvHeads, headDim, valueDim;
};
} // namespace

/// Checks the three input weights (shared or split-first form) and their
/// biases, and finds the head and value dimensions.
static FailureOr<LayerSizes> verifyInputWeights(AttentionOp op,
                                                ShapeChecker &check) {
  LayerSizes sizes;
  sizes.numHeads = op.getNumHeads();
  sizes.numKvHeads = op.getEffectiveNumKvHeads();
  if (failed(check.divides("num_kv_heads", sizes.numKvHeads, "num_heads",
                           sizes.numHeads)))
    return failure();

  int64_t modelDim = op.getQuery().getType().getDimSize(2);
  int64_t kvDim = tensorType(op.getKeyValueSource()).getDimSize(2);
  if (op.isSplitFirst()) {
    // Head h projects columns h*w .. (h+1)*w-1 of the input with w_q[h].
    if (failed(check.rank(op.getWQ(), "w_q", 3, "[H, D/H, dk]")) ||
        failed(check.rank(op.getWK(), "w_k", 3, "[Hkv, D_kv/Hkv, dk]")) ||
        failed(check.rank(op.getWV(), "w_v", 3, "[Hkv, D_kv/Hkv, dv]")) ||
        failed(check.divides("num_heads", sizes.numHeads, "the model width",
                             modelDim)) ||
        failed(check.divides("num_kv_heads", sizes.numKvHeads,
                             "the key/value width", kvDim)))
      return failure();
    ArrayRef<int64_t> wq = op.getWQ().getType().getShape();
    ArrayRef<int64_t> wk = op.getWK().getType().getShape();
    ArrayRef<int64_t> wv = op.getWV().getType().getShape();
    sizes.headDim = wq[2];
    sizes.valueDim = wv[2];
    if (failed(check.dim("w_q heads", sizes.numHeads, wq[0])) ||
        failed(check.dim("w_q rows (D/H)", modelDim / sizes.numHeads, wq[1])) ||
        failed(check.dim("w_k heads", sizes.numKvHeads, wk[0])) ||
        failed(check.dim("w_k rows (D_kv/Hkv)", kvDim / sizes.numKvHeads,
                         wk[1])) ||
        failed(check.dim("w_k columns (dk)", sizes.headDim, wk[2])) ||
        failed(check.dim("w_v heads", sizes.numKvHeads, wv[0])) ||
        failed(
            check.dim("w_v rows (D_kv/Hkv)", kvDim / sizes.numKvHeads, wv[1])))
      return failure();
  } else {
    if (failed(check.rank(op.getWQ(), "w_q", 2, "[D, H*dk]")) ||
        failed(check.rank(op.getWK(), "w_k", 2, "[D_kv, Hkv*dk]")) ||
        failed(check.rank(op.getWV(), "w_v", 2, "[D_kv, Hkv*dv]")))
      return failure();
    ArrayRef<int64_t> wq = op.getWQ().getType().getShape();
    ArrayRef<int64_t> wk = op.getWK().getType().getShape();
    ArrayRef<int64_t> wv = op.getWV().getType().getShape();
    if (failed(check.dim("w_q rows (D)", modelDim, wq[0])) ||
        failed(check.divides("num_heads", sizes.numHeads, "the w_q columns",
                             wq[1])) ||
        failed(check.dim("w_k rows (D_kv)", kvDim, wk[0])) ||
        failed(check.dim("w_v rows (D_kv)", kvDim, wv[0])) ||
        failed(check.divides("num_kv_heads", sizes.numKvHeads,
                             "the w_v columns", wv[1])))
      return failure();
    sizes.headDim = wq[1] / sizes.numHeads;
    sizes.valueDim = wv[1] / sizes.numKvHeads;
    if (failed(check.dim("w_k columns (Hkv*dk)",
                         sizes.numKvHeads * sizes.headDim, wk[1])))
      return failure();
  }
  int64_t qColumns, kColumns, vColumns;
  if (failed(check.multiply("H*dk", sizes.numHeads, sizes.headDim, qColumns)) ||
      failed(check.multiply("Hkv*dk", sizes.numKvHeads, sizes.headDim,
                            kColumns)) ||
      failed(check.multiply("Hkv*dv", sizes.numKvHeads, sizes.valueDim,
                            vColumns)) ||
      failed(check.bias(op.getBQ(), "b_q", qColumns)) ||
      failed(check.bias(op.getBK(), "b_k", kColumns)) ||
      failed(check.bias(op.getBV(), "b_v", vColumns)))
    return failure();
  return sizes;
}

/// The QK-norm and rotary options of a layer whose heads are `headDim`
/// wide: each option only with what it modifies, the norms both or neither,
/// the rotary embedding in self-attention (its positions are those of one
/// sequence).
static LogicalResult verifyQueryKeyOptions(AttentionOp op, ShapeChecker &check,
                                           int64_t headDim) {
  if (!op.getQNorm() != !op.getKNorm())
    return op.emitOpError() << "expects q_norm and k_norm together, got only "
                            << (op.getQNorm() ? "q_norm" : "k_norm");
  if (op.getQNorm()) {
    if (failed(check.dim("q_norm size (dk)", headDim,
                         tensorType(op.getQNorm()).getDimSize(0))) ||
        failed(check.dim("k_norm size (dk)", headDim,
                         tensorType(op.getKNorm()).getDimSize(0))))
      return failure();
  } else if (op.getQkNormEps()) {
    return op.emitOpError() << "expects qk_norm_eps only together with q_norm "
                               "and k_norm";
  }
  if (std::optional<APFloat> eps = op.getQkNormEps())
    if (failed(verifyNormEpsilon(op, eps->convertToDouble())))
      return failure();
  if (!op.getRope()) {
    if (op.getRotaryDim() || op.getRopeBase() || op.getRopeScale() ||
        op.getRopeMscale() || op.getRopeInvFreq())
      return op.emitOpError()
             << "expects rotary_dim, rope_base, rope_scale, rope_mscale and "
                "rope_inv_freq only together with rope";
    return success();
  }
  if (op.getKv())
    return op.emitOpError() << "expects rope only in self-attention, got kv";
  auto value = [](std::optional<APFloat> attr, double byDefault) {
    return attr ? attr->convertToDouble() : byDefault;
  };
  return verifyRope(
      op, check, *op.getRope(), op.getEffectiveRotaryDim(headDim), headDim,
      op.getRopeInvFreq(), value(op.getRopeBase(), 10000.0),
      value(op.getRopeScale(), 1.0), value(op.getRopeMscale(), 1.0));
}

/// `query [B, T, D]` (and `kv [B, S, D_kv]`), `w_o [H·dv, D_out]` ->
/// `[B, T, D_out]` (of the query's element type; a bf16 layer may declare
/// f32, `compatibleResults`).
LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType query = tensorType(adaptor.getQuery());
  RankedTensorType wo = tensorType(adaptor.getWO());
  if (query.getRank() != 3 || wo.getRank() != 2)
    return emitOptionalError(location, "mha.attention: no result type for "
                                       "these operand ranks");
  int64_t batch = query.getDimSize(0);
  if (Value kv = adaptor.getKv())
    batch = refineDim(batch, tensorType(kv).getDimSize(0));
  types.push_back(tensorOf({batch, query.getDimSize(1), wo.getDimSize(1)},
                           query.getElementType()));
  return success();
}

bool AttentionOp::isCompatibleReturnTypes(TypeRange inferred,
                                          TypeRange declared) {
  return compatibleResults(inferred, declared, /*widensBF16=*/true);
}

LogicalResult AttentionOp::verify() {
  ShapeChecker check(*this);
  if (failed(check.isStatic(getQuery(), "query", 2, "model width")))
    return failure();
  ArrayRef<int64_t> query = getQuery().getType().getShape();
  int64_t kvLen = query[1];
  if (Value kv = getKv()) {
    if (failed(check.isStatic(kv, "kv", 2, "key/value width")) ||
        failed(check.dim("kv batch", query[0], tensorType(kv).getDimSize(0))))
      return failure();
    kvLen = tensorType(kv).getDimSize(1);
  }
  FailureOr<LayerSizes> sizes = verifyInputWeights(*this, check);
  if (failed(sizes))
    return failure();
  if (failed(check.rank(getWO(), "w_o", 2, "[H*dv, D_out]")))
    return failure();
  RankedTensorType wo = getWO().getType();
  int64_t oRows;
  // The mask's batch is the layer's: kv's batch where the query's is `?`.
  int64_t batch = query[0];
  if (Value kv = getKv())
    batch = refineDim(batch, tensorType(kv).getDimSize(0));
  if (failed(check.multiply("H*dv", sizes->numHeads, sizes->valueDim, oRows)) ||
      failed(check.dim("w_o rows (H*dv)", oRows, wo.getDimSize(0))) ||
      failed(check.bias(getBO(), "b_o", wo.getDimSize(1))) ||
      failed(verifyMask(check, getMask(), batch, query[1], kvLen)) ||
      failed(verifyCausal(*this, getCausal(), getCausalBottomRight())) ||
      failed(verifyScale(*this, getScale())) ||
      failed(verifyScoreSteps(*this, check, ScoreSteps::of(*this), getCausal(),
                              batch, sizes->numHeads, query[1], kvLen)) ||
      failed(verifyQueryKeyOptions(*this, check, sizes->headDim)))
    return failure();
  return verifyResultType(*this);
}

RankedTensorType AttentionOp::inferResultType() {
  return inferredResultType(*this);
}
