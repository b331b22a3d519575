//===- mha-opt.cpp - mlir-opt with the mha dialect and passes -------------===//
//
// MlirOptMain does the work. This driver only parses the command line itself
// and tells the failures apart, so that mha-opt exits like the other mha
// tools (tools/support/ToolSupport.h) where MlirOptMain exits with 1 for
// everything: 2 for a bad command line or input (unreadable, does not parse
// or verify), 3 when a pass fails, 1 when -verify-diagnostics finds other
// diagnostics than the expected ones.
//
//===----------------------------------------------------------------------===//

#include "compiler/Registration.h"
#include "runtime/GraphLoader.h"
#include "tools/support/ToolSupport.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace ::mha::tools;
namespace cl = llvm::cl;

namespace {
/// Notes that a pass failed: it reported failure, or left IR that does not
/// verify. Parse and verifier errors on the input happen before any pass.
struct RecordPassFailure : PassInstrumentation {
  explicit RecordPassFailure(bool &passFailed) : passFailed(passFailed) {}
  void runAfterPassFailed(Pass *, Operation *) override { passFailed = true; }
  bool &passFailed;
};

void reportError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "mha-opt") << message << "\n";
}
} // namespace

/// Everything but the check of stdout, which main does on every path.
static int run(int argc, char **argv) {
  // mlir-opt's options, registered below, stay in --help.
  ::mha::tools::hideLLVMOptions({});
  DialectRegistry registry;
  mlir::mha::registerMhaDialects(registry);
  mlir::mha::registerMhaPasses();
  // Transform scripts drive the ops' interfaces in test/transforms.
  mlir::mha::registerMhaTransformDialect(registry);

  // What mlir::registerAndParseCLIOptions does, with our error handling.
  static cl::opt<std::string> inputFilename(
      cl::Positional, cl::desc("<input file>"), cl::init("-"));
  static cl::opt<std::string> outputFilename("o", cl::desc("Output filename"),
                                             cl::value_desc("filename"),
                                             cl::init("-"));
  std::string helpHeader = registerCLIOptions(
      "mha optimizer driver: the mha dialect, its passes and pipelines",
      registry);
  if (!parseCommandLine(argc, argv, helpHeader))
    return kBadInput;

  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleaveComma(registry.getDialectNames(), llvm::outs());
    llvm::outs() << "\n";
    return kOk;
  }
  if (config.shouldListPasses()) {
    printRegisteredPasses();
    return kOk;
  }
  bool passFailed = false;
  config.setPassPipelineSetupFn([base = config, &passFailed](PassManager &pm) {
    if (failed(base.setupPassPipeline(pm)))
      return failure();
    pm.addInstrumentation(std::make_unique<RecordPassFailure>(passFailed));
    return success();
  });

  std::string errorMessage;
  // Read with a bound, not openInputFile's read of the whole stream: a
  // device such as /dev/zero would grow the buffer until allocation fails.
  auto input = ::mha::runtime::readGraphFile(inputFilename);
  if (!input)
    return reportError("cannot open input file '" + inputFilename +
                       "': " + llvm::toString(input.takeError())),
           kBadInput;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output)
    return reportError(errorMessage), kBadInput;

  LogicalResult result =
      MlirOptMain(output->os(), std::move(*input), registry, config);
  // A failed write (a full disk, /dev/full) is bad output, whatever else
  // happened; LLVM would report it as a fatal "IO failure" with code 1.
  if (!finishOutput(output->os(), "mha-opt", outputFilename))
    return kBadInput;
  if (failed(result)) {
    if (config.shouldVerifyDiagnostics())
      return kMismatch;
    if (passFailed)
      return reportError("a pass failed on " + inputFilename + " (see above)"),
             kCompileFailed;
    return reportError("cannot process " + inputFilename +
                       ": it does not parse or verify, or the pass options "
                       "are invalid (see above)"),
           kBadInput;
  }
  output->keep();
  return kOk;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  return finishStdout("mha-opt", run(argc, argv));
}
