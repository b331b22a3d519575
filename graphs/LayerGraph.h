//===- LayerGraph.h - The graph of one attention layer ----------*- C++ -*-===//
//
// What mha-gen writes and `mha.layer(...)` of the Python package builds: a
// module with one public function `@mha` around one `mha.attention`, its
// arguments named like the reference cases (x kv mask w_q ... b_o). One
// implementation for both, so that a layer from Python is the graph mha-gen
// would print for the same options.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_GRAPHS_LAYERGRAPH_H
#define MHA_GRAPHS_LAYERGRAPH_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mha {
namespace graphs {

/// The element type of a decoding layer's key/value caches: f32, bf16 (a
/// bf16 layer's), or int8 codes with an f32 scale per sequence, key/value
/// head and token (mha.cache_append_quantized).
enum class CacheElement { F32, BF16, Int8 };

/// The options of a layer as given: a size left empty takes its default,
/// which may derive from another (S from T, dk from D/H, ...).
struct LayerOptions {
  std::optional<int64_t> batch, seqLen, kvSeqLen, modelDim, kvDim, numHeads,
      numKvHeads, headDim, valueDim, outDim;
  bool cross = false, causal = false, mask = false, maskBroadcast = false,
       bias = true, splitFirst = false;
  /// Causal, aligned bottom-right (query i sees keys j <= i + S - T);
  /// implies `causal`.
  bool causalBottomRight = false;
  /// `?` batch, query length, key length (mha-gen's --dynamic sets all).
  bool dynamicBatch = false, dynamicSeq = false, dynamicKvSeq = false;
  /// A decoding layer with key/value caches of this capacity (mha-gen's
  /// --kv-cache): causal self-attention of T new tokens per call.
  std::optional<int64_t> kvCache;
  /// With `kvCache`, caches kept in pages of this many rows (mha-gen's
  /// --paged-kv): pools k_pool and v_pool and a block_table.
  std::optional<int64_t> pagedKv;
  /// The caches' element type as given (mha-gen's --cache-dtype): "f32",
  /// "bf16" or "int8"; empty for the layer's own (bf16 with `bf16`).
  std::string cacheDtype;
  /// bf16 inputs, weights and biases (mha-gen's --dtype bf16); the output
  /// stays f32.
  bool bf16 = false;
  /// The served models' variants: the clauses of mha.attention (see
  /// LayerVariants).
  std::optional<double> scale, softcap, ropeBase, ropeScale, ropeMscale,
      qkNormEps;
  std::optional<int64_t> window, rotaryDim;
  /// "half" or "interleaved"; empty for no RoPE.
  std::string rope;
  /// Arguments rope_inv_freq [R/2], q_norm and k_norm [dk], alibi_slopes and
  /// sinks [H].
  bool ropeInvFreq = false, qkNorm = false, alibi = false, sinks = false;
  /// The shape of the argument attn_bias, e.g. "B,H,T,S" or "B,1,1,S"
  /// (each entry its dimension's letter or 1); empty for none.
  std::string attnBias;
};

/// The served models' options of a layer, checked (LayerConfig::variants).
struct LayerVariants {
  std::optional<double> scale, softcap;
  std::optional<int64_t> window;
  /// "half", "interleaved" or empty; the rest of RoPE is read only with it.
  std::string rope;
  int64_t rotaryDim = 0;
  std::optional<double> ropeBase, ropeScale, ropeMscale, qkNormEps;
  bool ropeInvFreq = false, qkNorm = false, alibi = false, sinks = false;
  /// Whether attn_bias is present, and whether its batch, head and query
  /// dimensions are full (else 1, broadcast).
  bool attnBias = false;
  bool attnBiasFull[3] = {false, false, false};
};

/// Every size of the layer, with the defaults filled in.
struct LayerConfig {
  int64_t batch, seqLen, kvSeqLen, modelDim, kvDim, numHeads, numKvHeads,
      headDim, valueDim, outDim;
  bool cross, causal, causalBottomRight, mask, maskBroadcast, bias, splitFirst;
  bool dynamicBatch, dynamicSeq, dynamicKvSeq;
  /// The caches' capacity C; 0 for a layer without caches.
  int64_t kvCache;
  /// The rows of a page of a paged cache; 0 for dense caches.
  int64_t pagedKv = 0;
  /// The caches' element type.
  CacheElement cacheElement = CacheElement::F32;
  /// bf16 inputs, weights and biases, f32 output.
  bool bf16 = false;
  /// QK-norm, RoPE and the score steps.
  LayerVariants variants;
};

/// Fills in the defaults (batch 1, T 128, D 512, H 8, S = T, D_kv = D,
/// Hkv = H, dk = D/H, dv = dk, D_out = D) and checks every size: positive,
/// at most 2^31, heads dividing what they must, element counts that fit in
/// 64 bits. `optionName` spells an option in messages ("heads" -> "--heads"
/// for mha-gen, "heads" for Python), names given with dashes (`d-model`).
llvm::Expected<LayerConfig>
resolveLayerConfig(const LayerOptions &options,
                   llvm::function_ref<std::string(llvm::StringRef)> optionName);

/// Builds `func.func @mha(...)` around one `mha.attention` for `config`.
/// With `bf16`, every argument but the mask is bf16 and the result f32 (the
/// one mix of element types the dialect accepts).
/// With `kvCache`, builds the decoding layer instead: the five steps with
/// `mha.cache_append` of the new keys and values into the arguments
/// `k_cache [B, Hkv, C, dk]` and `v_cache [B, Hkv, C, dv]` at
/// `cache_lengths [B]` (i64), and `mha.sdpa ... causal positions(...)`;
/// it returns `y` and the two updated caches (in that order). With int8
/// caches, `k_cache` and `v_cache` are i8 codes, each followed by its
/// scales (`k_scales`, `v_scales` [B, Hkv, C], f32), appended by
/// `mha.cache_append_quantized` and read through `mha.dequantize`; the
/// function returns `y`, then the codes and scales in argument order; there the
/// QK-norm and RoPE are `mha.rms_norm` and `mha.rope ... offsets(lengths)` of
/// the new queries and keys before the append, and the score steps are
/// clauses of the `mha.sdpa` (a score bias is refused by resolveLayerConfig:
/// its key size would be the capacity).
/// The variants' arguments follow the weights and biases, in the order
/// rope_inv_freq, q_norm, k_norm, alibi_slopes, sinks, attn_bias (f32 in a
/// bf16 graph too).
/// `context` must have the mha and func dialects loaded.
mlir::OwningOpRef<mlir::ModuleOp> buildLayerGraph(mlir::MLIRContext &context,
                                                  const LayerConfig &config);

} // namespace graphs
} // namespace mha

#endif // MHA_GRAPHS_LAYERGRAPH_H
