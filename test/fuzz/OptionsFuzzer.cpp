//===- OptionsFuzzer.cpp - libFuzzer target: the pipeline's options -------===//
//
// Any bytes as the options of the named pipelines, as in `mha-opt
// --mha-to-loops="<bytes>"`: parsed as MhaPipelineOptions, validated, and
// when valid, the registered `mha-to-loops` must accept them too and the
// pipeline runs on a few tiny layers (cross-attention with a mask and
// grouped heads, causal self-attention, decoding one token), so each input
// is fast. Options that do not parse or are out of range are expected and
// discarded; a crash, an assertion, an ASan or UBSan report, a hang, or a
// pipeline that refuses options `validate` accepted is a bug.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines.h"
#include "compiler/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <memory>
#include <string>

using namespace mlir;

namespace {
/// The layers every valid set of options compiles: few tokens, so each run
/// is fast, but every path of the tiling (query tiles with remainders, key
/// splits, causal blocks, masks, grouped-query heads) has something to do.
constexpr const char *kGraph = R"mlir(
func.func @cross(%x: tensor<2x3x8xf32>, %kv: tensor<2x5x6xf32>, %mask: tensor<1x3x5xi1>, %wq: tensor<8x8xf32>, %wk: tensor<6x4xf32>, %wv: tensor<6x4xf32>, %wo: tensor<8x8xf32>) -> tensor<2x3x8xf32> {
  %y = mha.attention %x kv(%kv) mask(%mask) weights(%wq, %wk, %wv, %wo) heads(4) kv_heads(2) : (tensor<2x3x8xf32>, tensor<2x5x6xf32>, tensor<1x3x5xi1>, tensor<8x8xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<8x8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}
func.func @causal(%x: tensor<1x7x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<1x7x4xf32> {
  %y = mha.attention %x weights(%w, %w, %w, %w) bias_q(%b) bias_k(%b) bias_v(%b) bias_o(%b) heads(2) causal : (tensor<1x7x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x7x4xf32>
  return %y : tensor<1x7x4xf32>
}
func.func @decode(%q: tensor<1x1x1x4xf32>, %k: tensor<1x1x9x4xf32>, %v: tensor<1x1x9x4xf32>) -> tensor<1x1x1x4xf32> {
  %o = mha.sdpa %q, %k, %v : (tensor<1x1x1x4xf32>, tensor<1x1x9x4xf32>, tensor<1x1x9x4xf32>) -> tensor<1x1x1x4xf32>
  return %o : tensor<1x1x1x4xf32>
}
)mlir";

/// A context lives for many inputs (creating one loads every dialect), but
/// not for all of them: it keeps every type and attribute it ever saw.
constexpr int kInputsPerContext = 500;

struct State {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> graph;
};

State createState() {
  DialectRegistry registry;
  mlir::mha::registerMhaDialects(registry);
  State state;
  state.context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  state.context->loadAllAvailableDialects();
  // A pass may refuse a layer (that is not this target's business); its
  // errors would only slow the fuzzer down.
  state.context->getDiagEngine().registerHandler(
      [](Diagnostic &) { return success(); });
  state.graph = parseSourceString<ModuleOp>(kGraph, state.context.get());
  if (!state.graph) {
    llvm::errs() << "mha-fuzz-options: the embedded graph does not parse\n";
    std::abort();
  }
  return state;
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  mlir::mha::registerMhaPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static State state;
  static int inputs = 0;
  if (!state.context || ++inputs % kInputsPerContext == 0) {
    // The old graph goes before the old context that owns its types.
    state.graph = nullptr;
    state = createState();
  }

  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::mha::MhaPipelineOptions options;
  if (failed(options.parseFromString(text, llvm::nulls())))
    return 0;
  if (llvm::Error error = options.validate()) {
    llvm::consumeError(std::move(error));
    return 0;
  }

  // mha-opt's way in, `--mha-to-loops="<text>"`, must agree.
  const PassPipelineInfo *registered = PassPipelineInfo::lookup("mha-to-loops");
  OpPassManager parsed("builtin.module");
  if (!registered ||
      failed(registered->addToPipeline(parsed, text, [&](const Twine &message) {
        llvm::errs() << "mha-fuzz-options: mha-to-loops refuses options "
                        "that validate: "
                     << message << "\n";
        return failure();
      }))) {
    llvm::errs() << "mha-fuzz-options: '" << text << "'\n";
    std::abort();
  }

  OwningOpRef<ModuleOp> module = state.graph->clone();
  PassManager pm(state.context.get());
  mlir::mha::buildMhaToLoopsPipeline(pm, options);
  (void)pm.run(*module);
  return 0;
}
