//===- ReferenceAttention.h - Plain C++ multi-head attention ----*- C++ -*-===//
//
// The independent oracle that `mha-run --check` compares compiled kernels
// with: plain loops, double accumulation, nothing shared with the compiler.
// The semantics are those of test/vectors/README.md.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_REFERENCEATTENTION_H
#define MHA_RUNTIME_REFERENCEATTENTION_H

#include "llvm/Support/Error.h"

#include <cmath>
#include <cstdint>

namespace mha {
namespace runtime {

/// The sizes and flags of one multi-head attention.
struct AttentionShape {
  /// B: the number of independent sequences.
  int64_t batch = 1;
  /// T: the number of queries (rows of x).
  int64_t seqLen = 1;
  /// S: the number of keys and values (rows of kv; T when kv is x).
  int64_t kvSeqLen = 1;
  /// D: the width of x.
  int64_t modelDim = 1;
  /// D_kv: the width of kv (D when kv is x).
  int64_t kvDim = 1;
  /// H: the number of query heads.
  int64_t numHeads = 1;
  /// Hkv: the number of key/value heads; it divides H (H / Hkv query heads
  /// share each one).
  int64_t numKvHeads = 1;
  /// dk: the width of one head's queries and keys.
  int64_t headDim = 1;
  /// dv: the width of one head's values.
  int64_t valueDim = 1;
  /// D_out: the width of the output y.
  int64_t outDim = 1;
  /// Whether query i may only attend keys j <= i (top-left aligned), or
  /// j <= i + (S - T) with `causalBottomRight`.
  bool causal = false;
  /// Where the causal diagonal lies: bottom-right aligned, the last query
  /// sees every key (queries i < T - S see none when S < T). Only read when
  /// `causal` is set.
  bool causalBottomRight = false;
  /// Whether head h projects only its own slice of x (width D / H) and of kv
  /// (width D_kv / Hkv) with its own matrix, rather than all of x.
  bool splitFirst = false;
  /// The factor applied to Q·Kᵀ, usually 1 / sqrt(headDim).
  double scale = 1.0;

  // The served models' variants (mha.attention's optional clauses). Query i
  // sits at position p_i = i, or i + (S - T) with `causalBottomRight`; key j
  // at position j.

  /// Sliding window W (0: none): query i sees key j only when p_i - W < j.
  int64_t window = 0;
  /// Logit soft-capping c (0: none): s <- c · tanh(s / c), after the scale.
  double softcap = 0.0;
  /// How RoPE pairs the features: none, (i, i + R/2), or (2i, 2i + 1).
  enum class Rope { None, Half, Interleaved };
  Rope rope = Rope::None;
  /// R: the features rotated, the first R of each head (0: all dk).
  int64_t rotaryDim = 0;
  /// The frequency base when no inverse frequencies are given.
  double ropeBase = 10000.0;
  /// Linear position interpolation: angle = (p / ropeScale) · frequency.
  double ropeScale = 1.0;
  /// YaRN's attention factor: cos and sin are multiplied by it.
  double ropeMscale = 1.0;
  /// The epsilon of the QK-norm (read when the operands have q_norm).
  double qkNormEps = 1e-6;
  /// Keys and values read from int8 caches: each row of a key/value head
  /// (after QK-norm and RoPE) is quantized and read back as an int8 cache
  /// stores it, scale = max|x| / 127, code = round-half-even(x / scale)
  /// clamped to [-127, 127] (0 for a row of zeros), x' = code · scale.
  bool int8KeysValues = false;
  /// Whether each key and value row (after QK-norm and RoPE) is read back
  /// as a bf16 cache stores it: rounded to bf16, to nearest even.
  bool bf16KeysValues = false;

  /// The rotary dimension in effect: rotaryDim, or dk when 0.
  int64_t effectiveRotaryDim() const {
    return rotaryDim > 0 ? rotaryDim : headDim;
  }
};

/// Reads the clauses that mha.attention, mha.sdpa and mha.attention_weights
/// share into `shape`: causal and its alignment, the scale (1/√dk when
/// absent, so `shape.headDim` must be set), the window and the softcap.
template <typename OpTy>
void readAttentionClauses(OpTy op, AttentionShape &shape) {
  shape.causal = op.getCausal();
  shape.causalBottomRight = op.getCausal() && op.getCausalBottomRight();
  shape.scale = op.getScale() ? op.getScale()->convertToDouble()
                              : 1.0 / std::sqrt(double(shape.headDim));
  shape.window = op.getWindow().value_or(0);
  shape.softcap = op.getSoftcap() ? op.getSoftcap()->convertToDouble() : 0.0;
}

/// The tensors of one multi-head attention: C-order float32 (mask: one byte
/// per element, nonzero = may attend). An absent (nullptr) operand means:
/// kv = x, a bias of zero, a mask of all true.
struct AttentionOperands {
  /// [B, T, D].
  const float *x = nullptr;
  /// [B, S, D_kv], or nullptr for self-attention.
  const float *kv = nullptr;
  /// [D, H·dk]; with splitFirst [H, D/H, dk].
  const float *wQ = nullptr;
  /// [D_kv, Hkv·dk]; with splitFirst [Hkv, D_kv/Hkv, dk].
  const float *wK = nullptr;
  /// [D_kv, Hkv·dv]; with splitFirst [Hkv, D_kv/Hkv, dv].
  const float *wV = nullptr;
  /// [H·dv, D_out].
  const float *wO = nullptr;
  /// [H·dk] or nullptr.
  const float *bQ = nullptr;
  /// [Hkv·dk] or nullptr.
  const float *bK = nullptr;
  /// [Hkv·dv] or nullptr.
  const float *bV = nullptr;
  /// [D_out] or nullptr.
  const float *bO = nullptr;
  /// [maskBatch, T, S] or nullptr.
  const uint8_t *mask = nullptr;
  /// The mask's leading dimension: 1 (one mask for every batch element) or B.
  int64_t maskBatch = 1;
  /// The additive score bias [B or 1, H or 1, T or 1, S] (−inf allowed: a
  /// key not attended), or nullptr; `attnBiasDims` holds its first three
  /// sizes, each 1 (broadcast) or the full size.
  const float *attnBias = nullptr;
  int64_t attnBiasDims[3] = {1, 1, 1};
  /// ALiBi slopes [H]: s <- s + slopes[h] · (j - p_i); or nullptr.
  const float *alibiSlopes = nullptr;
  /// Attention sinks [H]: a logit per head in every row's softmax
  /// denominator that weighs no value; or nullptr.
  const float *sinks = nullptr;
  /// RoPE's inverse frequencies [R/2], or nullptr for base^(−2i/R).
  const float *ropeInvFreq = nullptr;
  /// QK-norm weights [dk] (both or neither): RMSNorm of each head's Q and K
  /// before RoPE.
  const float *qNorm = nullptr;
  const float *kNorm = nullptr;
  /// mha.sdpa's `positions` [B]: query i of sequence b sits at position
  /// positions[b] + i (top-left `causal`); or nullptr. mha.attention has
  /// none.
  const int64_t *positions = nullptr;
};

/// Checks that the sizes in `shape` are positive and divide as the heads
/// need; the message names the sizes involved.
llvm::Error verifyAttentionShape(const AttentionShape &shape);

/// Computes y [B, T, D_out] of the attention that `shape` describes. `shape`
/// must pass verifyAttentionShape. Each score goes through the steps of
/// mha.sdpa in its order: scale, softcap, ALiBi, bias, then mask, causal and
/// window; the softmax has the sink in its denominator. A query row with no
/// finite score left gets a zero attention output, so its y is b_o. If
/// `probabilities` is given, it receives the softmax weights [B, H, T, S]:
/// 0 for keys that are not attended, a row of 0 where none is (with sinks a
/// row sums to less than 1).
void referenceAttention(const AttentionShape &shape,
                        const AttentionOperands &operands, float *y,
                        float *probabilities = nullptr);

/// The attention of heads already projected, in double and token-major:
/// q [B, T, H, dk], k [B, S, Hkv, dk] and v [B, S, Hkv, dv] give
/// heads [B, T, H, dv], each score through the steps referenceAttention
/// applies. It reads the attention sizes and steps of `shape` (batch,
/// seqLen, kvSeqLen, numHeads, numKvHeads, headDim, valueDim, scale,
/// softcap, causal and its alignment, window) and the score operands of
/// `operands` (mask, attnBias, alibiSlopes, sinks, positions); the
/// projections' sizes and operands are not read. `v` and `heads` may both be
/// nullptr (only the probabilities); `probabilities` as in
/// referenceAttention.
void referenceHeadAttention(const AttentionShape &shape,
                            const AttentionOperands &operands, const double *q,
                            const double *k, const double *v, double *heads,
                            float *probabilities = nullptr);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_REFERENCEATTENTION_H
