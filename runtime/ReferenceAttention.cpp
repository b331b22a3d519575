//===- ReferenceAttention.cpp - Plain C++ multi-head attention ------------===//
//
// Written for obviousness first: project, attend with a max-subtracted
// softmax per query row, project again. Everything accumulates in double, so
// the float32 kernels it checks are the only source of rounding worth
// measuring.
//
//===----------------------------------------------------------------------===//

#include "runtime/ReferenceAttention.h"
#include "runtime/BFloat16.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace mha::runtime;

/// Computes out [rows, outDim] = in [rows, inDim] · w + bias. `w` holds
/// `groups` matrices [inDim/groups, outDim/groups] one after another; group g
/// maps input columns g·inDim/groups… to output columns g·outDim/groups…, so
/// groups = 1 is the ordinary [inDim, outDim] projection and groups = H the
/// split-first per-head one. The innermost loop walks a row of w, which keeps
/// memory access sequential.
template <typename T>
static void project(const T *in, int64_t rows, int64_t inDim, const float *w,
                    const float *bias, int64_t outDim, int64_t groups,
                    double *out) {
  int64_t inSlice = inDim / groups, outSlice = outDim / groups;
  for (int64_t r = 0; r < rows; ++r) {
    const T *inRow = in + r * inDim;
    double *outRow = out + r * outDim;
    for (int64_t j = 0; j < outDim; ++j)
      outRow[j] = bias ? bias[j] : 0.0;
    for (int64_t g = 0; g < groups; ++g) {
      const float *block = w + g * inSlice * outSlice;
      double *outBlock = outRow + g * outSlice;
      for (int64_t i = 0; i < inSlice; ++i) {
        double xi = inRow[g * inSlice + i];
        const float *wRow = block + i * outSlice;
        for (int64_t j = 0; j < outSlice; ++j)
          outBlock[j] += xi * wRow[j];
      }
    }
  }
}

/// RMSNorm of each `dk`-wide head row of `rows` [n, heads, dk] in place:
/// x / sqrt(mean(x²) + eps) · weight.
static void rmsNormHeads(std::vector<double> &rows, int64_t dk,
                         const float *weight, double eps) {
  for (size_t start = 0; start < rows.size(); start += dk) {
    double *row = &rows[start];
    double sumSquares = 0.0;
    for (int64_t d = 0; d < dk; ++d)
      sumSquares += row[d] * row[d];
    double inverse = 1.0 / std::sqrt(sumSquares / double(dk) + eps);
    for (int64_t d = 0; d < dk; ++d)
      row[d] = row[d] * inverse * weight[d];
  }
}

/// Rotates the first R features of every head of `rows` [B, n, heads, dk]
/// in place, token `t` of each sequence at position `t + offset`: pair i is
/// (i, i + R/2) in the half layout, (2i, 2i + 1) interleaved, turned by
/// (p / scale) · frequency[i] with cos and sin times mscale.
static void applyRope(std::vector<double> &rows, int64_t batch, int64_t n,
                      int64_t heads, int64_t dk, int64_t offset,
                      const AttentionShape &shape, const float *invFreq) {
  const int64_t r = shape.effectiveRotaryDim(), half = r / 2;
  const bool interleaved = shape.rope == AttentionShape::Rope::Interleaved;
  std::vector<double> frequency(half);
  for (int64_t i = 0; i < half; ++i)
    frequency[i] = invFreq ? double(invFreq[i])
                           : std::pow(shape.ropeBase, -2.0 * i / double(r));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < n; ++t) {
      const double position = double(t + offset) / shape.ropeScale;
      for (int64_t h = 0; h < heads; ++h) {
        double *row = &rows[((b * n + t) * heads + h) * dk];
        for (int64_t i = 0; i < half; ++i) {
          const double angle = position * frequency[i];
          const double c = std::cos(angle) * shape.ropeMscale;
          const double s = std::sin(angle) * shape.ropeMscale;
          double &u = row[interleaved ? 2 * i : i];
          double &v = row[interleaved ? 2 * i + 1 : i + half];
          const double u0 = u, v0 = v;
          u = u0 * c - v0 * s;
          v = v0 * c + u0 * s;
        }
      }
    }
}

llvm::Error mha::runtime::verifyAttentionShape(const AttentionShape &shape) {
  const std::pair<const char *, int64_t> sizes[] = {
      {"batch", shape.batch},           {"seqLen", shape.seqLen},
      {"kvSeqLen", shape.kvSeqLen},     {"modelDim", shape.modelDim},
      {"kvDim", shape.kvDim},           {"numHeads", shape.numHeads},
      {"numKvHeads", shape.numKvHeads}, {"headDim", shape.headDim},
      {"valueDim", shape.valueDim},     {"outDim", shape.outDim}};
  for (auto [name, size] : sizes)
    if (size <= 0)
      return llvm::createStringError(llvm::Twine("attention ") + name +
                                     " must be positive, got " +
                                     llvm::Twine(size));
  if (shape.numHeads % shape.numKvHeads != 0)
    return llvm::createStringError("attention numHeads (" +
                                   llvm::Twine(shape.numHeads) +
                                   ") must be a multiple of numKvHeads (" +
                                   llvm::Twine(shape.numKvHeads) + ")");
  if (shape.splitFirst && shape.modelDim % shape.numHeads != 0)
    return llvm::createStringError(
        "split-first attention needs numHeads (" + llvm::Twine(shape.numHeads) +
        ") to divide modelDim (" + llvm::Twine(shape.modelDim) + ")");
  if (shape.splitFirst && shape.kvDim % shape.numKvHeads != 0)
    return llvm::createStringError("split-first attention needs numKvHeads (" +
                                   llvm::Twine(shape.numKvHeads) +
                                   ") to divide kvDim (" +
                                   llvm::Twine(shape.kvDim) + ")");
  if (!std::isfinite(shape.scale))
    return llvm::createStringError("attention scale must be finite, got " +
                                   std::to_string(shape.scale));
  if (shape.window < 0)
    return llvm::createStringError("attention window must not be negative, "
                                   "got " +
                                   llvm::Twine(shape.window));
  if (!std::isfinite(shape.softcap) || shape.softcap < 0)
    return llvm::createStringError(
        "attention softcap must be finite and not negative, got " +
        std::to_string(shape.softcap));
  if (shape.rope != AttentionShape::Rope::None) {
    int64_t r = shape.effectiveRotaryDim();
    if (r % 2 != 0 || r > shape.headDim)
      return llvm::createStringError("attention rotary dimension (" +
                                     llvm::Twine(r) +
                                     ") must be even and at most headDim (" +
                                     llvm::Twine(shape.headDim) + ")");
    if (shape.ropeScale == 0 || !std::isfinite(shape.ropeScale))
      return llvm::createStringError("attention rope scale must be finite "
                                     "and nonzero");
  }
  return llvm::Error::success();
}

/// Each row of `width` values read back as an int8 cache stores it
/// (AttentionShape::int8KeysValues), in double: written from the formula,
/// not from the compiler's code.
static void quantizeRows(std::vector<double> &rows, int64_t width) {
  for (size_t start = 0; start < rows.size(); start += width) {
    double largest = 0;
    for (int64_t i = 0; i < width; ++i)
      largest = std::max(largest, std::fabs(rows[start + i]));
    double scale = largest / 127.0;
    for (int64_t i = 0; i < width; ++i) {
      double code = scale == 0
                        ? 0.0
                        : std::clamp(std::nearbyint(rows[start + i] / scale),
                                     -127.0, 127.0);
      rows[start + i] = code * scale;
    }
  }
}

void mha::runtime::referenceAttention(const AttentionShape &shape,
                                      const AttentionOperands &operands,
                                      float *y, float *probabilities) {
  assert(!llvm::errorToBool(verifyAttentionShape(shape)) && "invalid shape");
  const int64_t b = shape.batch, t = shape.seqLen, s = shape.kvSeqLen;
  const int64_t h = shape.numHeads, hkv = shape.numKvHeads;
  const int64_t dk = shape.headDim, dv = shape.valueDim;
  const float *kv = operands.kv ? operands.kv : operands.x;
  // Split-first gives each head its own slice of the input and its own matrix.
  const int64_t qGroups = shape.splitFirst ? h : 1;
  const int64_t kvGroups = shape.splitFirst ? hkv : 1;

  std::vector<double> q(b * t * h * dk), k(b * s * hkv * dk),
      v(b * s * hkv * dv);
  project(operands.x, b * t, shape.modelDim, operands.wQ, operands.bQ, h * dk,
          qGroups, q.data());
  project(kv, b * s, shape.kvDim, operands.wK, operands.bK, hkv * dk, kvGroups,
          k.data());
  project(kv, b * s, shape.kvDim, operands.wV, operands.bV, hkv * dv, kvGroups,
          v.data());

  // QK-norm, then RoPE, on each head's queries and keys.
  if (operands.qNorm && operands.kNorm) {
    rmsNormHeads(q, dk, operands.qNorm, shape.qkNormEps);
    rmsNormHeads(k, dk, operands.kNorm, shape.qkNormEps);
  }
  // Query i sits at position i, or i + (S - T) bottom-right aligned.
  const int64_t queryOffset =
      shape.causal && shape.causalBottomRight ? s - t : 0;
  if (shape.rope != AttentionShape::Rope::None) {
    applyRope(q, b, t, h, dk, queryOffset, shape, operands.ropeInvFreq);
    applyRope(k, b, s, hkv, dk, /*offset=*/0, shape, operands.ropeInvFreq);
  }

  if (shape.int8KeysValues) {
    quantizeRows(k, dk);
    quantizeRows(v, dv);
  }
  if (shape.bf16KeysValues)
    for (std::vector<double> *rows : {&k, &v})
      for (double &element : *rows)
        element = roundToBF16(static_cast<float>(element));

  // The heads' outputs, concatenated per row: [B, T, H·dv].
  std::vector<double> heads(b * t * h * dv);
  referenceHeadAttention(shape, operands, q.data(), k.data(), v.data(),
                         heads.data(), probabilities);

  std::vector<double> out(b * t * shape.outDim);
  project(heads.data(), b * t, h * dv, operands.wO, operands.bO, shape.outDim,
          /*groups=*/1, out.data());
  for (size_t i = 0; i < out.size(); ++i)
    y[i] = static_cast<float>(out[i]);
}

namespace {
/// One query row of one head: its scores through the steps, its softmax
/// and its weighted values.
struct AttentionRow {
  const AttentionShape &shape;
  const AttentionOperands &operands;
  /// The row's scores, then its weights; the keys it attends; whether any
  /// key is left (a NaN score is one: NaN inputs propagate).
  std::vector<double> scores;
  std::vector<bool> allowed;
  bool any = false;

  AttentionRow(const AttentionShape &shape, const AttentionOperands &operands)
      : shape(shape), operands(operands), scores(shape.kvSeqLen),
        allowed(shape.kvSeqLen) {}

  /// Query `ti` of head `hi` of sequence `bi`, at `position`, with its
  /// query `qRow` and the keys `k` of its key/value head: fills `scores`
  /// `allowed` and `any`, and returns the largest score.
  double score(int64_t bi, int64_t hi, int64_t ti, int64_t position,
               const double *qRow, const double *k, int64_t kvHead);
  /// Turns the scores into weights (the sink in the denominator), writes
  /// them to `probabilities` [S] and adds the weighted values `v` of the
  /// row's key/value head to `out` [dv], where given.
  void attend(double maxScore, int64_t hi, const double *v, int64_t kvHead,
              double *out, float *probabilities);
};
} // namespace

double AttentionRow::score(int64_t bi, int64_t hi, int64_t ti, int64_t position,
                           const double *qRow, const double *k,
                           int64_t kvHead) {
  const int64_t t = shape.seqLen, s = shape.kvSeqLen;
  const int64_t hkv = shape.numKvHeads, dk = shape.headDim;
  const double inf = std::numeric_limits<double>::infinity();
  const uint8_t *mask =
      operands.mask ? operands.mask + (operands.maskBatch == 1 ? 0 : bi) * t * s
                    : nullptr;
  const float *biasRow = nullptr;
  if (operands.attnBias) {
    const int64_t *dims = operands.attnBiasDims;
    biasRow = operands.attnBias +
              (((dims[0] == 1 ? 0 : bi) * dims[1] + (dims[1] == 1 ? 0 : hi)) *
                   dims[2] +
               (dims[2] == 1 ? 0 : ti)) *
                  s;
  }
  double maxScore = -inf;
  any = false;
  for (int64_t si = 0; si < s; ++si) {
    // The last key `causal` lets this query see is its own position
    // (below 0: none); the window keeps the W keys up to it.
    allowed[si] = (!shape.causal || si <= position) &&
                  (!shape.window || si > position - shape.window) &&
                  (!mask || mask[ti * s + si] != 0);
    if (!allowed[si])
      continue;
    const double *kRow = &k[((bi * s + si) * hkv + kvHead) * dk];
    double dot = 0.0;
    for (int64_t d = 0; d < dk; ++d)
      dot += qRow[d] * kRow[d];
    double score = dot * shape.scale;
    if (shape.softcap > 0)
      score = shape.softcap * std::tanh(score / shape.softcap);
    if (operands.alibiSlopes)
      score += double(operands.alibiSlopes[hi]) * double(si - position);
    if (biasRow)
      score += double(biasRow[si]);
    // A bias of −inf takes the key out like the mask does (a NaN
    // score stays in: NaN inputs propagate, as in the compiled code).
    if (score == -inf) {
      allowed[si] = false;
      continue;
    }
    scores[si] = score;
    maxScore = std::max(maxScore, score);
    any = true;
  }
  return maxScore;
}

void AttentionRow::attend(double maxScore, int64_t hi, const double *v,
                          int64_t kvHead, double *out, float *probabilities) {
  const int64_t s = shape.kvSeqLen, hkv = shape.numKvHeads;
  const int64_t dv = shape.valueDim;
  const double inf = std::numeric_limits<double>::infinity();
  const double sink = operands.sinks ? operands.sinks[hi] : -inf;
  maxScore = std::max(maxScore, sink);
  // Subtracting the row maximum keeps exp() finite for large logits.
  double sum = operands.sinks ? std::exp(sink - maxScore) : 0.0;
  for (int64_t si = 0; si < s; ++si)
    if (allowed[si])
      sum += (scores[si] = std::exp(scores[si] - maxScore));
  for (int64_t si = 0; si < s; ++si) {
    if (!allowed[si])
      continue;
    const double p = scores[si] / sum;
    if (probabilities)
      probabilities[si] = float(p);
    if (!out)
      continue;
    const double *vRow = &v[(si * hkv + kvHead) * dv];
    for (int64_t d = 0; d < dv; ++d)
      out[d] += p * vRow[d];
  }
}

void mha::runtime::referenceHeadAttention(const AttentionShape &shape,
                                          const AttentionOperands &operands,
                                          const double *q, const double *k,
                                          const double *v, double *heads,
                                          float *probabilities) {
  assert((!operands.mask || operands.maskBatch == 1 ||
          operands.maskBatch == shape.batch) &&
         "mask batch must be 1 or the batch size");
  const int64_t b = shape.batch, t = shape.seqLen, s = shape.kvSeqLen;
  const int64_t h = shape.numHeads, hkv = shape.numKvHeads;
  const int64_t dk = shape.headDim, dv = shape.valueDim;
  // Rows that may attend no key keep their zeros.
  if (heads)
    std::fill(heads, heads + b * t * h * dv, 0.0);
  if (probabilities)
    std::fill(probabilities, probabilities + b * h * t * s, 0.0f);
  // Query i sits at position i, i + (S - T) bottom-right aligned, or
  // positions[b] + i.
  const int64_t queryOffset =
      shape.causal && shape.causalBottomRight ? s - t : 0;
  AttentionRow row(shape, operands);
  for (int64_t bi = 0; bi < b; ++bi) {
    const int64_t offset =
        operands.positions ? operands.positions[bi] : queryOffset;
    for (int64_t hi = 0; hi < h; ++hi) {
      const int64_t kvHead = hi / (h / hkv);
      for (int64_t ti = 0; ti < t; ++ti) {
        double maxScore =
            row.score(bi, hi, ti, ti + offset,
                      &q[((bi * t + ti) * h + hi) * dk], k, kvHead);
        // A row with no finite score attends to nothing, sink or not.
        if (!row.any)
          continue;
        row.attend(maxScore, hi, v ? v + bi * s * hkv * dv : nullptr, kvHead,
                   heads ? &heads[((bi * t + ti) * h + hi) * dv] : nullptr,
                   probabilities ? probabilities + ((bi * h + hi) * t + ti) * s
                                 : nullptr);
      }
    }
  }
}
