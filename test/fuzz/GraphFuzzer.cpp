//===- GraphFuzzer.cpp - libFuzzer target: graphs through the compiler ----===//
//
// Any bytes as a graph file: parsed and verified as mha-run and mha-opt do,
// checked as mha-run, mha-compile and the Python package check a graph they
// load (runtime/GraphChecks.h: the calls, which may recurse, and the result,
// which may fold to an argument; the signature), each function with a body
// as the entry, and what verifies is lowered with the mha-to-llvm pipeline
// (not the JIT).
// Parse, verifier and pass errors are expected and discarded; a crash, an
// ASan or UBSan report, or a hang is a bug. Only our code (the dialect and
// the passes) is instrumented, so coverage guides the fuzzer through it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines.h"
#include "compiler/Registration.h"
#include "runtime/GraphChecks.h"
#include "runtime/GraphSignature.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>

using namespace mlir;

namespace {
/// A context lives for many inputs (creating one loads every dialect), but
/// not for all of them: it keeps every type and attribute it ever saw.
constexpr int kInputsPerContext = 2000;

std::unique_ptr<MLIRContext> createContext() {
  DialectRegistry registry;
  mlir::mha::registerMhaDialects(registry);
  auto context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  // Errors are the expected outcome for most inputs; printing them would
  // only slow the fuzzer down.
  context->getDiagEngine().registerHandler(
      [](Diagnostic &) { return success(); });
  return context;
}

/// What loadGraph refuses, for `entry`; the errors are expected.
void checkAsEntry(func::FuncOp entry) {
  // The output check follows calls: only where they end.
  if (llvm::Error error = ::mha::runtime::checkCalls(entry)) {
    llvm::consumeError(std::move(error));
    return;
  }
  auto signature = ::mha::runtime::readSignature(entry);
  if (!signature) {
    llvm::consumeError(signature.takeError());
    return;
  }
  llvm::consumeError(::mha::runtime::checkOutputIsComputed(entry, *signature));
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static std::unique_ptr<MLIRContext> context;
  static int inputs = 0;
  if (!context || ++inputs % kInputsPerContext == 0)
    context = createContext();

  // A std::string ends in '\0' as the files mha-run reads do (the lexer
  // relies on it).
  std::string text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(context.get()));
  if (!module)
    return 0;
  for (auto function : module->getOps<func::FuncOp>())
    if (!function.isExternal())
      checkAsEntry(function);
  PassManager pm(context.get());
  mlir::mha::buildMhaToLLVMPipeline(pm);
  (void)pm.run(*module);
  return 0;
}
