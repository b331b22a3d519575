//===- Decode.h - mha-run as a decoder with a key/value cache ---*- C++ -*-===//
//
// `mha-run --prefill T --steps N` on a graph that mha-gen wrote with
// `--kv-cache C`: one call with T tokens, then N calls of one token each,
// keeping the caches between calls, as a decoder serving B sequences would.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHARUN_DECODE_H
#define MHA_TOOLS_MHARUN_DECODE_H

#include "runtime/GraphLoader.h"
#include "tools/mha-run/InputBinding.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mha {
namespace tools {

class HeadParallelRun;

/// The names a cache graph gives its cache arguments (docs/tools.md, the
/// contract of mha-gen --kv-cache).
constexpr llvm::StringLiteral kKeyCacheName = "k_cache";
constexpr llvm::StringLiteral kValueCacheName = "v_cache";
/// The scales of int8 caches (mha-gen --cache-dtype int8).
constexpr llvm::StringLiteral kKeyScalesName = "k_scales";
constexpr llvm::StringLiteral kValueScalesName = "v_scales";
constexpr llvm::StringLiteral kCacheLengthsName = "cache_lengths";
/// The pools and block table of a paged cache (mha-gen --paged-kv).
constexpr llvm::StringLiteral kKeyPoolName = "k_pool";
constexpr llvm::StringLiteral kValuePoolName = "v_pool";
constexpr llvm::StringLiteral kBlockTableName = "block_table";

/// What `--prefill`, `--steps`, `--lengths` and the options they share with
/// a plain run ask for.
struct DecodeOptions {
  /// T: the tokens of the first call, for every sequence (at least 1).
  int64_t prefill = 0;
  /// N: the one-token calls after it.
  int64_t steps = 0;
  /// `--lengths l0,l1,...`: sequence b keeps the first l_b of the prefill's
  /// tokens (0 <= l_b <= T); empty: all T.
  std::string lengths;
  /// Timed rounds (prefill and steps, the lengths reset each time) and the
  /// untimed rounds before them.
  unsigned rounds = 1;
  unsigned warmupRounds = 0;
  /// `--check`: compare with the reference of the causal layer over each
  /// sequence's tokens.
  bool check = false;
  double atol = 1e-4, rtol = 1e-4;
  /// A bf16 layer's bound, in times the error of storing the inputs in
  /// bf16 (bf16ErrorFactor).
  double bf16ErrorFactor = 1.5;
  /// `--output`: the outputs [B, T + N, D_out], the prefill's rows and then
  /// one row per step; `--expect` compares that array.
  std::string outputFile;
  std::string expectFile;
};

/// Whether `signature` is a cache graph's: it has an argument named
/// k_cache, v_cache or cache_lengths.
bool hasKeyValueCache(const runtime::GraphSignature &signature);

/// Binds the inputs (x holds T + N rows per sequence: the prefill's, then
/// one per step), checks every call against the graph and the cache's
/// capacity, lowers the graph with `pm`, and runs the prefill and the steps,
/// printing their times to `os`; with `options.check`, compares every
/// output row with runtime/ReferenceAttention. Errors are reported with
/// `report`. Returns the exit code (tools/support/ToolSupport.h).
///
/// With `parallel` (mha-run --parallel heads), this rank runs its share of
/// the heads, with the caches of its key/value heads only, and each call's
/// partial output is added up across the ranks before it is used; the
/// times include the additions, and the time they spent in MPI is printed.
int runDecoder(runtime::LoadedGraph &graph, mlir::PassManager &pm,
               const runtime::InputOptions &inputOptions,
               const DecodeOptions &options, llvm::raw_ostream &os,
               llvm::function_ref<void(const llvm::Twine &)> report,
               HeadParallelRun *parallel = nullptr);

} // namespace tools
} // namespace mha

#endif // MHA_TOOLS_MHARUN_DECODE_H
