//===- CacheGraph.h - The arguments of a key/value cache graph --*- C++ -*-===//
//
// Private to mha-run's decoder (tools/mha-run/Decode.cpp): where a graph that
// mha-gen wrote with `--kv-cache C` takes x, the caches and their lengths,
// what the driver checks about them, and the layer its reference computes.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHARUN_CACHEGRAPH_H
#define MHA_TOOLS_MHARUN_CACHEGRAPH_H

#include "runtime/GraphSignature.h"
#include "runtime/Npy.h"
#include "runtime/ReferenceAttention.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mha {
namespace tools {

/// The arguments of a cache graph and the sizes of its caches.
struct CacheGraph {
  int x = -1, keyCache = -1, valueCache = -1, lengths = -1;
  /// The scales of int8 caches (k_scales, v_scales [B, Hkv, C]); -1 for
  /// f32 and bf16 caches.
  int keyScales = -1, valueScales = -1;
  /// Hkv, C, dk and dv, from the declared cache types.
  int64_t kvHeads = 0, capacity = 0, keyDim = 0, valueDim = 0;
  /// x's declared token dimension: `?` (dynamic) or the tokens of every
  /// call.
  int64_t declaredTokens = mlir::ShapedType::kDynamic;
  /// The caches' elements: float32, bf16 (a bf16 layer's) or int8 (codes
  /// with their scales).
  runtime::ElementType cacheElement = runtime::ElementType::F32;
  /// A paged cache's (mha-gen --paged-kv): `keyCache` and `valueCache` are
  /// then the pools k_pool and v_pool [N, Hkv, P, d], `blockTable` the
  /// table [B, M] (i32); the capacity is M * P. -1 and 0 for dense caches;
  /// `poolPages` is N as declared (`?` where the graph leaves it).
  int blockTable = -1;
  int64_t pageSize = 0, pagesPerSequence = 0;
  int64_t poolPages = mlir::ShapedType::kDynamic;
  bool isPaged() const { return blockTable >= 0; }
};

/// Finds x, the caches and the lengths, and checks the types that the
/// driver relies on: caches [B, Hkv, C, d] with static Hkv, C and d, lengths
/// [B] of int64.
llvm::Expected<CacheGraph>
findCacheGraph(const runtime::GraphSignature &signature,
               llvm::StringRef function);

/// Parses `--lengths l0,l1,...`: B numbers, each between 0 and T
/// (`prefill`); empty text: every sequence keeps all T.
llvm::Expected<std::vector<int64_t>>
parseLengths(llvm::StringRef text, int64_t batch, int64_t prefill);

/// Checks what needs no input: that x's declared token count serves a
/// prefill of `prefill` tokens and steps of one, and that the prefill and
/// `steps` steps fit in the cache (every sequence holding `prefill` tokens
/// after the prefill when `lengthsGiven` is false).
llvm::Error checkCallsFit(mlir::func::FuncOp entry,
                          const runtime::GraphSignature &signature,
                          const CacheGraph &graph, int64_t prefill,
                          int64_t steps, bool lengthsGiven);

/// The error for `steps` steps that take sequence `sequence`, holding
/// `length` tokens, past the cache's capacity, when the longest sequence
/// holds `longest`.
llvm::Error pastCapacityError(const runtime::GraphSignature &signature,
                              const CacheGraph &graph, int64_t steps,
                              int64_t sequence, int64_t length,
                              int64_t longest);

/// The signature the user binds inputs to: without the caches and the
/// lengths (the driver's own), and with x of `rows` rows. The size relations
/// follow the arguments that remain.
runtime::GraphSignature
bindingSignature(const runtime::GraphSignature &signature,
                 const CacheGraph &graph, int64_t rows);

/// The sizes and scale of the layer, for the reference: H, dk and the
/// scale from the graph's one mha.sdpa, the rest from the weights, which
/// must be the shared projections mha-gen writes. The variants too: QK-norm
/// and RoPE from the mha.rms_norm and mha.rope of the queries and keys (the
/// same on both, RoPE at cache_lengths[b] + t), the window and the softcap
/// from the sdpa; their parameters must be the arguments mha-gen names
/// (q_norm, k_norm, rope_inv_freq, alibi_slopes, sinks), which the check
/// reads. What the reference cannot follow (a mask or a score bias in the
/// sdpa, RoPE on the queries only, ...) is an error.
llvm::Expected<runtime::AttentionShape>
describeLayer(mlir::func::FuncOp entry,
              const runtime::GraphSignature &signature, const CacheGraph &graph,
              int64_t modelDim);

} // namespace tools
} // namespace mha

#endif // MHA_TOOLS_MHARUN_CACHEGRAPH_H
