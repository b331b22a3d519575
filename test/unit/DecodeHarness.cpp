//===- DecodeHarness.cpp - What the KV-cache tests share ------------------===//

#include "DecodeHarness.h"

#include "compiler/Pipelines.h"
#include "compiler/Registration.h"
#include "dialects/MhaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace mha::runtime;

namespace mha::testing {

std::unique_ptr<CompiledLayer>
compileLayer(const mha::graphs::LayerOptions &options,
             llvm::StringRef pipelineOptions) {
  auto compiled = std::make_unique<CompiledLayer>();
  mlir::DialectRegistry registry;
  mlir::mha::registerMhaDialects(registry);
  compiled->context.appendDialectRegistry(registry);
  compiled->context
      .loadDialect<mlir::mha::MhaDialect, mlir::func::FuncDialect>();
  auto config = mha::graphs::resolveLayerConfig(
      options, [](llvm::StringRef name) { return name.str(); });
  EXPECT_TRUE(bool(config)) << llvm::toString(config.takeError());
  if (!config)
    return nullptr;
  // Printed and loaded again, as mha-run loads mha-gen's output.
  auto module = mha::graphs::buildLayerGraph(compiled->context, *config);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  auto loaded = loadGraphBuffer(llvm::MemoryBuffer::getMemBufferCopy(text), "",
                                compiled->context, llvm::errs());
  EXPECT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  if (!loaded)
    return nullptr;
  compiled->graph = std::move(*loaded);
  mlir::OwningOpRef<mlir::ModuleOp> lowered = compiled->graph.module->clone();
  mlir::PassManager pm(&compiled->context);
  mlir::mha::MhaPipelineOptions pipeline;
  EXPECT_TRUE(succeeded(pipeline.parseFromString(pipelineOptions)));
  mlir::mha::buildMhaToLLVMPipeline(pm, pipeline);
  EXPECT_TRUE(succeeded(pm.run(*lowered)));
  auto function = CompiledFunction::create(
      *lowered, "mha", compiled->graph.signature.result.getRank(),
      {MHA_LIBOMP_PATH});
  EXPECT_TRUE(bool(function)) << llvm::toString(function.takeError());
  if (!function)
    return nullptr;
  compiled->function = std::move(*function);
  return compiled;
}

NpyArray
callLayer(CompiledLayer &layer,
          llvm::function_ref<const NpyArray *(llvm::StringRef)> input) {
  std::vector<const NpyArray *> inputs;
  for (const GraphArgument &argument : layer.graph.signature.arguments)
    inputs.push_back(input(argument.name));
  auto prepared = layer.function->prepare(inputs);
  EXPECT_TRUE(bool(prepared)) << llvm::toString(prepared.takeError());
  auto y = layer.function->call(inputs);
  EXPECT_TRUE(bool(y)) << llvm::toString(y.takeError());
  return y ? std::move(*y) : NpyArray();
}

NpyArray randomArray(std::vector<int64_t> shape, double bound,
                     std::mt19937_64 &engine) {
  NpyArray array = NpyArray::zeros(ElementType::F32, shape);
  std::uniform_real_distribution<float> value(-bound, bound);
  for (int64_t i = 0; i < array.numElements(); ++i)
    array.f32()[i] = value(engine);
  return array;
}

std::map<std::string, NpyArray> randomWeights(int64_t modelDim, int64_t heads,
                                              int64_t kvHeads, int64_t headDim,
                                              int64_t valueDim, bool bias,
                                              std::mt19937_64 &engine) {
  int64_t D = modelDim;
  std::map<std::string, NpyArray> weights;
  weights["w_q"] =
      randomArray({D, heads * headDim}, 1.0 / std::sqrt(D), engine);
  weights["w_k"] =
      randomArray({D, kvHeads * headDim}, 1.0 / std::sqrt(D), engine);
  weights["w_v"] =
      randomArray({D, kvHeads * valueDim}, 1.0 / std::sqrt(D), engine);
  weights["w_o"] = randomArray({heads * valueDim, D},
                               1.0 / std::sqrt(heads * valueDim), engine);
  if (bias) {
    weights["b_q"] = randomArray({heads * headDim}, 0.1, engine);
    weights["b_k"] = randomArray({kvHeads * headDim}, 0.1, engine);
    weights["b_v"] = randomArray({kvHeads * valueDim}, 0.1, engine);
    weights["b_o"] = randomArray({D}, 0.1, engine);
  }
  return weights;
}

NpyArray tokenRows(const NpyArray &tokens, llvm::ArrayRef<int64_t> starts,
                   int64_t count) {
  int64_t batch = tokens.shape[0], total = tokens.shape[1], D = tokens.shape[2];
  NpyArray rows = NpyArray::zeros(ElementType::F32, {batch, count, D});
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(rows.f32() + b * count * D,
                tokens.f32() + (b * total + starts[b]) * D,
                count * D * sizeof(float));
  return rows;
}

void dumpCase(llvm::StringRef name,
              const std::map<std::string, NpyArray> &arrays) {
  const char *root = std::getenv("MHA_KV_DUMP_DIR");
  if (!root)
    return;
  llvm::SmallString<256> dir(root);
  llvm::sys::path::append(dir, name);
  ASSERT_FALSE(llvm::sys::fs::create_directories(dir));
  for (const auto &[file, array] : arrays) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, file + ".npy");
    llvm::Error error = writeNpy(path, array);
    EXPECT_FALSE(bool(error)) << llvm::toString(std::move(error));
  }
}

} // namespace mha::testing
