//===- ReferenceAttention.cpp - Plain C++ multi-head attention ------------===//
//
// Written for obviousness first: project, attend with a max-subtracted
// softmax per query row, project again. Everything accumulates in double, so
// the float32 kernels it checks are the only source of rounding worth
// measuring.
//
//===----------------------------------------------------------------------===//

#include "runtime/ReferenceAttention.h"

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
  return llvm::Error::success();
}

void mha::runtime::referenceAttention(const AttentionShape &shape,
                                      const AttentionOperands &operands,
                                      float *y, float *probabilities) {
  assert(!llvm::errorToBool(verifyAttentionShape(shape)) && "invalid shape");
  assert((!operands.mask || operands.maskBatch == 1 ||
          operands.maskBatch == shape.batch) &&
         "mask batch must be 1 or the batch size");
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

  // The heads' outputs, concatenated per row: [B, T, H·dv]. Rows that may
  // attend no key keep their zeros.
  std::vector<double> heads(b * t * h * dv, 0.0);
  if (probabilities)
    std::fill(probabilities, probabilities + b * h * t * s, 0.0f);
  std::vector<double> scores(s);
  std::vector<bool> allowed(s);
  for (int64_t bi = 0; bi < b; ++bi) {
    const uint8_t *mask =
        operands.mask
            ? operands.mask + (operands.maskBatch == 1 ? 0 : bi) * t * s
            : nullptr;
    for (int64_t hi = 0; hi < h; ++hi) {
      const int64_t kvHead = hi / (h / hkv);
      for (int64_t ti = 0; ti < t; ++ti) {
        const double *qRow = &q[((bi * t + ti) * h + hi) * dk];
        // The last key this query may see under `causal`: ti, or
        // ti + (S - T) bottom-right aligned (below 0: none).
        const int64_t lastKey =
            shape.causalBottomRight ? ti + (s - t) : ti;
        double maxScore = -std::numeric_limits<double>::infinity();
        bool any = false;
        for (int64_t si = 0; si < s; ++si) {
          allowed[si] =
              (!shape.causal || si <= lastKey) &&
              (!mask || mask[ti * s + si] != 0);
          if (!allowed[si])
            continue;
          const double *kRow = &k[((bi * s + si) * hkv + kvHead) * dk];
          double dot = 0.0;
          for (int64_t d = 0; d < dk; ++d)
            dot += qRow[d] * kRow[d];
          scores[si] = dot * shape.scale;
          maxScore = std::max(maxScore, scores[si]);
          any = true;
        }
        if (!any)
          continue;
        // Subtracting the row maximum keeps exp() finite for large logits.
        double sum = 0.0;
        for (int64_t si = 0; si < s; ++si)
          if (allowed[si])
            sum += (scores[si] = std::exp(scores[si] - maxScore));
        double *out = &heads[((bi * t + ti) * h + hi) * dv];
        for (int64_t si = 0; si < s; ++si) {
          if (!allowed[si])
            continue;
          const double p = scores[si] / sum;
          if (probabilities)
            probabilities[((bi * h + hi) * t + ti) * s + si] = float(p);
          const double *vRow = &v[((bi * s + si) * hkv + kvHead) * dv];
          for (int64_t d = 0; d < dv; ++d)
            out[d] += p * vRow[d];
        }
      }
    }
  }

  std::vector<double> out(b * t * shape.outDim);
  project(heads.data(), b * t, h * dv, operands.wO, operands.bO, shape.outDim,
          /*groups=*/1, out.data());
  for (size_t i = 0; i < out.size(); ++i)
    y[i] = static_cast<float>(out[i]);
}
