//===- DecodeHarness.h - What the KV-cache tests share ----------*- C++ -*-===//
//
// The decoding tests (KvCacheTest, KvCacheInt8Test) build a layer of
// `mha-gen --kv-cache` (LayerGraph), compile it with the whole pipeline and
// the JIT, and call it with arrays found by argument name. This is that
// plumbing, and the random inputs and the case dump (MHA_KV_DUMP_DIR) that
// the float64 NumPy checks read (test/Inputs/causal_decode_reference.py).
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TEST_UNIT_DECODEHARNESS_H
#define MHA_TEST_UNIT_DECODEHARNESS_H

#include "graphs/LayerGraph.h"
#include "runtime/GraphLoader.h"
#include "runtime/JitRunner.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace mha::testing {

/// A compiled layer and its signature.
struct CompiledLayer {
  mlir::MLIRContext context;
  runtime::LoadedGraph graph;
  std::unique_ptr<runtime::CompiledFunction> function;
};

/// The layer `options` describes, compiled with the pipeline options
/// `pipelineOptions` ("" for the defaults); null (with a test failure) when
/// a step fails.
std::unique_ptr<CompiledLayer>
compileLayer(const mha::graphs::LayerOptions &options,
             llvm::StringRef pipelineOptions);

/// Calls `layer` with, for each of its arguments, the array `input` gives
/// for the argument's name (prepared first, as the tools do). An empty
/// array (with a test failure) when the call fails.
runtime::NpyArray
callLayer(CompiledLayer &layer,
          llvm::function_ref<const runtime::NpyArray *(llvm::StringRef)> input);

/// An f32 array of `shape` drawn uniformly from [-bound, bound].
runtime::NpyArray randomArray(std::vector<int64_t> shape, double bound,
                              std::mt19937_64 &engine);

/// The projection weights of a layer (w_q, w_k, w_v, w_o scaled by
/// 1/sqrt(fan-in)), and with `bias` its biases (b_q, b_k, b_v, b_o).
std::map<std::string, runtime::NpyArray>
randomWeights(int64_t modelDim, int64_t heads, int64_t kvHeads, int64_t headDim,
              int64_t valueDim, bool bias, std::mt19937_64 &engine);

/// [B, count, D]: rows starts[b] .. starts[b] + count of each sequence's
/// tokens [B, total, D].
runtime::NpyArray tokenRows(const runtime::NpyArray &tokens,
                            llvm::ArrayRef<int64_t> starts, int64_t count);

/// Writes `arrays` to DIR/<name>/<array>.npy where MHA_KV_DUMP_DIR names
/// DIR (nothing without it).
void dumpCase(llvm::StringRef name,
              const std::map<std::string, runtime::NpyArray> &arrays);

} // namespace mha::testing

#endif // MHA_TEST_UNIT_DECODEHARNESS_H
