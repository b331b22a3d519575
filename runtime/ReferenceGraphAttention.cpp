//===- ReferenceGraphAttention.cpp - The attention ops of ReferenceGraph --===//
//
// mha.sdpa and mha.attention_weights through the attention core of
// runtime/ReferenceAttention.h (referenceHeadAttention), mha.attention
// through the whole layer (referenceAttention), with every score step those
// support: scale, softcap, ALiBi, bias, mask, causal in both alignments,
// positions, window and sinks.
//
//===----------------------------------------------------------------------===//

#include "runtime/AttentionProblem.h"
#include "runtime/ReferenceAttention.h"
#include "runtime/ReferenceGraphOps.h"

#include "dialects/MhaOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using llvm::Error;

namespace mha::runtime::graphref {

namespace {
/// The float and bool operands of one attention op, kept alive for the
/// pointers of its AttentionOperands.
struct BoundOperands {
  AttentionOperands operands;
  std::vector<std::vector<float>> floats;

  const float *bind(const Tensor *tensor) {
    if (!tensor)
      return nullptr;
    floats.push_back(tensor->toFloats());
    return floats.back().data();
  }
};
} // namespace

/// Checks and binds the score operands that mha.sdpa, mha.attention_weights
/// and mha.attention share (mask, bias, ALiBi slopes, sinks) for `shape`.
static Error bindScoreOperands(Operation *op, OpContext &context,
                               const AttentionShape &shape, Value mask,
                               Value bias, Value alibi, Value sinks,
                               BoundOperands &bound) {
  auto lookup = [&](Value value) {
    return value ? context.lookup(value) : nullptr;
  };
  const int64_t b = shape.batch, h = shape.numHeads;
  const int64_t t = shape.seqLen, s = shape.kvSeqLen;
  if (const Tensor *m = lookup(mask)) {
    if (m->shape.size() != 3 || (m->shape[0] != 1 && m->shape[0] != b) ||
        m->shape[1] != t || m->shape[2] != s)
      return operandError(op, "mask " + formatShape(m->shape) +
                                  " is not [B or 1, T, S]");
    bound.operands.mask = m->array->bools();
    bound.operands.maskBatch = m->shape[0];
  }
  if (const Tensor *scoreBias = lookup(bias)) {
    const std::vector<int64_t> &dims = scoreBias->shape;
    int64_t full[3] = {b, h, t};
    if (dims.size() != 4 || dims[3] != s)
      return operandError(op, "bias " + formatShape(dims) +
                                  " is not [B or 1, H or 1, T or 1, S]");
    for (int i = 0; i < 3; ++i) {
      if (dims[i] != 1 && dims[i] != full[i])
        return operandError(op, "bias " + formatShape(dims) +
                                    " is not [B or 1, H or 1, T or 1, S]");
      bound.operands.attnBiasDims[i] = dims[i];
    }
    bound.operands.attnBias = bound.bind(scoreBias);
  }
  for (auto [value, name, target] :
       {std::tuple(alibi, "alibi slopes", &bound.operands.alibiSlopes),
        std::tuple(sinks, "sinks", &bound.operands.sinks)}) {
    const Tensor *tensor = lookup(value);
    if (tensor && tensor->numElements() != h)
      return operandError(op, llvm::Twine(name) + " " +
                                  formatShape(tensor->shape) + " are not [H]");
    *target = bound.bind(tensor);
  }
  return Error::success();
}

/// The keys the queries of one sequence may read, summed over the batch:
/// S each, or up to positions[b] + T (never below 0 nor above S).
static double keysRead(const AttentionShape &shape, const int64_t *positions) {
  if (!positions)
    return double(shape.batch) * shape.kvSeqLen;
  double keys = 0;
  for (int64_t b = 0; b < shape.batch; ++b)
    keys += double(
        std::clamp<int64_t>(positions[b] + shape.seqLen, 0, shape.kvSeqLen));
  return keys;
}

/// mha.sdpa and mha.attention_weights: query [B, H, T, dk], key
/// [B, Hkv, S, dk], value [B, Hkv, S, dv] give [B, H, T, dv], or the
/// weights [B, H, T, S].
template <typename OpTy>
static Error evaluateHeads(OpTy op, Value value, OpContext &context,
                           Tensor &result) {
  const Tensor &q = *context.lookup(op.getQuery());
  const Tensor &k = *context.lookup(op.getKey());
  const Tensor *v = value ? context.lookup(value) : nullptr;
  if (q.shape.size() != 4 || k.shape.size() != 4 ||
      (v && v->shape.size() != 4) || q.shape[0] != k.shape[0] ||
      k.shape[1] == 0 || q.shape[1] % k.shape[1] != 0 ||
      q.shape[3] != k.shape[3] ||
      (v && (v->shape[0] != k.shape[0] || v->shape[1] != k.shape[1] ||
             v->shape[2] != k.shape[2])))
    return operandError(
        op, "query " + formatShape(q.shape) + ", key " + formatShape(k.shape) +
                (v ? ", value " + formatShape(v->shape) : "") + " do not fit");
  AttentionShape shape;
  shape.batch = q.shape[0];
  shape.numHeads = q.shape[1];
  shape.seqLen = q.shape[2];
  shape.headDim = q.shape[3];
  shape.numKvHeads = k.shape[1];
  shape.kvSeqLen = k.shape[2];
  shape.valueDim = v ? v->shape[3] : 1;
  readAttentionClauses(op, shape);
  BoundOperands bound;
  if (auto error =
          bindScoreOperands(op, context, shape, op.getMask(), op.getAttnBias(),
                            op.getAlibiSlopes(), op.getSinks(), bound))
    return error;
  if (Value positions = op.getPositions()) {
    const Tensor &lengths = *context.lookup(positions);
    if (lengths.numElements() != shape.batch)
      return operandError(op, "positions " + formatShape(lengths.shape) +
                                  " are not [B]");
    bound.operands.positions = lengths.array->i64();
  }
  const int64_t b = shape.batch, h = shape.numHeads, t = shape.seqLen;
  const int64_t s = shape.kvSeqLen, hkv = shape.numKvHeads;
  const int64_t dk = shape.headDim, dv = shape.valueDim;
  context.flops += 2.0 * h * t * keysRead(shape, bound.operands.positions) *
                   double(dk + (v ? dv : 0));
  result.shape =
      v ? std::vector<int64_t>{b, h, t, dv} : std::vector<int64_t>{b, h, t, s};
  if (context.shapesOnly)
    return Error::success();

  // The core reads token-major rows: [B, T, H, d].
  std::vector<double> qRows(q.data.size()), kRows(k.data.size()), vRows;
  moveHeads(q.data, qRows, b, t, h, dk, /*toHeads=*/false);
  moveHeads(k.data, kRows, b, s, hkv, dk, /*toHeads=*/false);
  NpyArray weights;
  NpyArray *probabilities = context.probabilities;
  if (!v)
    probabilities = &weights;
  else
    context.probabilities = nullptr;
  if (probabilities)
    *probabilities = NpyArray::zeros(ElementType::F32, {b, h, t, s});
  float *p = probabilities ? probabilities->f32() : nullptr;
  if (!v) {
    referenceHeadAttention(shape, bound.operands, qRows.data(), kRows.data(),
                           nullptr, nullptr, p);
    result.data.assign(p, p + weights.numElements());
    return Error::success();
  }
  vRows.resize(v->data.size());
  moveHeads(v->data, vRows, b, s, hkv, dv, /*toHeads=*/false);
  std::vector<double> heads(b * t * h * dv);
  referenceHeadAttention(shape, bound.operands, qRows.data(), kRows.data(),
                         vRows.data(), heads.data(), p);
  result.data.resize(heads.size());
  moveHeads(heads, result.data, b, t, h, dv, /*toHeads=*/true);
  return Error::success();
}

Error evaluateSdpa(Operation *op, OpContext &context, Tensor &result) {
  if (auto sdpa = dyn_cast<mlir::mha::SdpaOp>(op))
    return evaluateHeads(sdpa, sdpa.getValue(), context, result);
  return evaluateHeads(cast<mlir::mha::AttentionWeightsOp>(op), Value(),
                       context, result);
}

/// Checks that each weight, bias and parameter of the layer `op` has the
/// element count `shape` gives it.
static Error checkLayerOperands(mlir::mha::AttentionOp op, OpContext &context,
                                const AttentionShape &shape) {
  const int64_t h = shape.numHeads, hkv = shape.numKvHeads;
  const int64_t dk = shape.headDim, dv = shape.valueDim;
  const int64_t d = shape.modelDim, dkv = shape.kvDim, out = shape.outDim;
  // Split first, each head's matrix reads its slice: [H, D/H, dk].
  const int64_t qHeads = shape.splitFirst ? 1 : h;
  const int64_t kvHeads = shape.splitFirst ? 1 : hkv;
  const std::pair<Value, int64_t> expected[] = {
      {op.getWQ(), d * qHeads * dk},
      {op.getWK(), dkv * kvHeads * dk},
      {op.getWV(), dkv * kvHeads * dv},
      {op.getWO(), h * dv * out},
      {op.getBQ(), h * dk},
      {op.getBK(), hkv * dk},
      {op.getBV(), hkv * dv},
      {op.getBO(), out},
      {op.getQNorm(), dk},
      {op.getKNorm(), dk},
      {op.getRopeInvFreq(), shape.effectiveRotaryDim() / 2}};
  for (auto [value, count] : expected)
    if (value && context.lookup(value)->numElements() != count)
      return operandError(op, "operand " +
                                  formatShape(context.lookup(value)->shape) +
                                  " does not fit the layer's sizes");
  return Error::success();
}

Error evaluateAttentionLayer(Operation *operation, OpContext &context,
                             Tensor &result) {
  auto op = cast<mlir::mha::AttentionOp>(operation);
  const Tensor &x = *context.lookup(op.getQuery());
  const Tensor &kv = *context.lookup(op.getKeyValueSource());
  if (x.shape.size() != 3 || kv.shape.size() != 3 || kv.shape[0] != x.shape[0])
    return operandError(op, "query " + formatShape(x.shape) +
                                " and key/value source " +
                                formatShape(kv.shape) + " do not fit");
  AttentionShape shape = describeAttentionShape(op, x.shape, kv.shape);
  if (auto error = verifyAttentionShape(shape))
    return operandError(op, llvm::toString(std::move(error)));
  if (auto error = checkLayerOperands(op, context, shape))
    return error;
  BoundOperands bound;
  if (auto error =
          bindScoreOperands(op, context, shape, op.getMask(), op.getAttnBias(),
                            op.getAlibiSlopes(), op.getSinks(), bound))
    return error;
  AttentionProblem layer;
  layer.shape = shape;
  context.flops += layer.flops();
  result.shape = {shape.batch, shape.seqLen, shape.outDim};
  if (context.shapesOnly)
    return Error::success();

  AttentionOperands &operands = bound.operands;
  auto bind = [&](Value value) {
    return bound.bind(value ? context.lookup(value) : nullptr);
  };
  operands.x = bind(op.getQuery());
  operands.kv = bind(op.getKv());
  for (auto [value, target] :
       {std::pair(op.getWQ(), &operands.wQ),
        std::pair(op.getWK(), &operands.wK),
        std::pair(op.getWV(), &operands.wV),
        std::pair(op.getWO(), &operands.wO),
        std::pair(op.getBQ(), &operands.bQ),
        std::pair(op.getBK(), &operands.bK),
        std::pair(op.getBV(), &operands.bV),
        std::pair(op.getBO(), &operands.bO),
        std::pair(op.getRopeInvFreq(), &operands.ropeInvFreq),
        std::pair(op.getQNorm(), &operands.qNorm),
        std::pair(op.getKNorm(), &operands.kNorm)})
    *target = bind(value);
  NpyArray *probabilities = context.probabilities;
  context.probabilities = nullptr;
  if (probabilities)
    *probabilities =
        NpyArray::zeros(ElementType::F32, {shape.batch, shape.numHeads,
                                           shape.seqLen, shape.kvSeqLen});
  std::vector<float> y(shape.batch * shape.seqLen * shape.outDim);
  referenceAttention(shape, operands, y.data(),
                     probabilities ? probabilities->f32() : nullptr);
  result.data.assign(y.begin(), y.end());
  return Error::success();
}

} // namespace mha::runtime::graphref
