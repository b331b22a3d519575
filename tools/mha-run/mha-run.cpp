//===- mha-run.cpp - Compile a graph with the mha pipeline and run it -----===//
//
// Reads a graph, binds its arguments to `.npy` files (or random data),
// lowers it with the same pipeline as `mha-opt --mha-to-llvm`, JIT-compiles
// it with MLIR's ExecutionEngine and runs it; optionally times it, writes the
// output and compares it with an expected file or with the plain C++
// reference.
//
// Exit codes: 0 success, 1 the output differs from --expect/--check,
// 2 bad input or usage, 3 the graph failed to compile.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines.h"
#include "compiler/Registration.h"
#include "dialects/MhaOps.h"
#include "runtime/AttentionProblem.h"
#include "runtime/Comparison.h"
#include "runtime/GraphLoader.h"
#include "runtime/GraphSignature.h"
#include "runtime/JitRunner.h"
#include "runtime/Npy.h"
#include "tools/mha-run/InputBinding.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <omp.h>

#include <algorithm>
#include <chrono>

using namespace mlir;
using namespace ::mha::runtime;
namespace cl = llvm::cl;

namespace {
/// The documented exit codes.
enum ExitCode { kOk = 0, kMismatch = 1, kBadInput = 2, kCompileFailed = 3 };

cl::OptionCategory runCategory("mha-run options");

cl::opt<std::string> graphFile(cl::Positional, cl::desc("<graph.mlir>"),
                               cl::Required, cl::cat(runCategory));
cl::opt<std::string> entryName("entry",
                               cl::desc("Function to run (default: the one "
                                        "public function)"),
                               cl::cat(runCategory));
cl::opt<std::string> inputsDir("inputs",
                               cl::desc("Read each argument from "
                                        "DIR/<name>.npy"),
                               cl::value_desc("DIR"), cl::cat(runCategory));
cl::list<std::string> inputFiles("input",
                                 cl::desc("Read argument NAME from FILE.npy"),
                                 cl::value_desc("NAME=FILE.npy"),
                                 cl::cat(runCategory));
cl::opt<bool> randomInputs("random",
                           cl::desc("Fill every argument not given with "
                                    "random data"),
                           cl::cat(runCategory));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of --random"), cl::init(0),
                       cl::cat(runCategory));
cl::opt<std::string> outputFile("output", cl::desc("Write the result to FILE"),
                                cl::value_desc("FILE.npy"),
                                cl::cat(runCategory));
cl::opt<std::string> expectFile("expect",
                                cl::desc("Compare the result with FILE"),
                                cl::value_desc("FILE.npy"),
                                cl::cat(runCategory));
cl::opt<double> absTolerance("atol",
                             cl::desc("Absolute tolerance of --expect/--check"),
                             cl::init(1e-4), cl::cat(runCategory));
cl::opt<double> relTolerance("rtol",
                             cl::desc("Relative tolerance of --expect/--check"),
                             cl::init(1e-4), cl::cat(runCategory));
cl::opt<bool> checkWithReference(
    "check",
    cl::desc("Compare the result with the plain C++ reference (needs a "
             "graph with one mha.attention)"),
    cl::cat(runCategory));
cl::opt<unsigned> repeat("repeat",
                         cl::desc("Run N timed calls and print the median"),
                         cl::init(0), cl::cat(runCategory));
cl::opt<unsigned> warmup("warmup", cl::desc("Untimed calls before --repeat"),
                         cl::init(1), cl::cat(runCategory));
/// `--threads N`. libLLVM already registers a hidden option called
/// "threads"; ours replaces it, so it is created in main() after the other
/// one is unregistered.
cl::opt<int> &registerThreadsOption() {
  if (cl::Option *existing = cl::getRegisteredOptions().lookup("threads"))
    existing->removeArgument();
  static cl::opt<int> threads("threads",
                              cl::desc("OpenMP threads (default: all cores)"),
                              cl::init(0), cl::cat(runCategory));
  return threads;
}
cl::opt<bool> printPipeline("print-pipeline",
                            cl::desc("Print the passes the graph is lowered "
                                     "with"),
                            cl::cat(runCategory));

void reportError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "mha-run") << message << "\n";
}

/// Reports `error` and returns `code`.
int fail(llvm::Error error, ExitCode code) {
  reportError(llvm::toString(std::move(error)));
  return code;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::mha::registerMhaPasses();
  cl::opt<int> &threads = registerThreadsOption();
  cl::ParseCommandLineOptions(
      argc, argv, "mha-run: compile a multi-head attention graph and run it\n");

  if (threads < 0)
    return reportError("--threads must be positive"), kBadInput;
  if (threads > 0)
    omp_set_num_threads(threads);

  DialectRegistry registry;
  mlir::mha::registerMhaDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  // Parse and verify; the diagnostics name the file, line and column.
  auto graph = loadGraph(graphFile, entryName, context);
  if (!graph)
    return fail(graph.takeError(), kBadInput);
  ModuleOp module = *graph->module;
  func::FuncOp entry = graph->entry;
  const GraphSignature &signature = graph->signature;

  // Bind every argument to an array, then check that they fit together.
  InputOptions inputOptions{inputsDir, inputFiles, randomInputs, seed};
  auto inputs = bindInputs(signature, inputOptions);
  if (!inputs)
    return fail(inputs.takeError(), kBadInput);
  std::vector<const NpyArray *> inputPointers;
  for (const NpyArray &input : *inputs)
    inputPointers.push_back(&input);
  if (auto error = checkInputsFitTogether(entry, inputPointers))
    return fail(std::move(error), kBadInput);

  // The reference needs the graph before lowering; describe it now.
  std::optional<AttentionProblem> problem;
  if (checkWithReference || repeat > 0) {
    auto described = describeAttention(entry, *inputs);
    if (described)
      problem = std::move(*described);
    else if (checkWithReference)
      return fail(described.takeError(), kBadInput);
    else
      llvm::consumeError(described.takeError());
  }

  // Lower a copy with the named pipeline and JIT-compile it.
  auto compileStart = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> lowered = module.clone();
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return reportError("bad pass manager options"), kBadInput;
  mlir::mha::buildMhaToLLVMPipeline(pm);
  if (printPipeline) {
    pm.printAsTextualPipeline(llvm::outs());
    llvm::outs() << "\n";
  }
  if (failed(pm.run(*lowered)))
    return reportError("lowering " + graphFile + " failed (see above)"),
           kCompileFailed;
  auto function = CompiledFunction::create(*lowered, entry.getSymName(),
                                           signature.result.getRank());
  if (!function)
    return fail(function.takeError(), kCompileFailed);
  double compileMs = millisecondsSince(compileStart);

  // Run: once, or warm-up calls and timed calls.
  llvm::Expected<NpyArray> result = (*function)->call(inputPointers);
  if (!result)
    return fail(result.takeError(), kCompileFailed);
  if (repeat > 0) {
    for (unsigned i = 0; i < warmup; ++i)
      llvm::cantFail((*function)->call(inputPointers));
    std::vector<double> times;
    for (unsigned i = 0; i < repeat; ++i) {
      auto start = std::chrono::steady_clock::now();
      llvm::cantFail((*function)->call(inputPointers));
      times.push_back(millisecondsSince(start));
    }
    std::sort(times.begin(), times.end());
    double median = times[times.size() / 2];
    if (times.size() % 2 == 0)
      median = (times[times.size() / 2 - 1] + median) / 2;
    llvm::outs() << llvm::formatv("compile {0:F1} ms\n", compileMs);
    llvm::outs() << llvm::formatv("median {0:F3} ms, min {1:F3} ms over {2} "
                                  "runs ({3} threads)",
                                  median, times.front(), times.size(),
                                  omp_get_max_threads());
    if (problem)
      llvm::outs() << llvm::formatv(", {0:F1} GFLOP/s",
                                    problem->flops() / (median * 1e6));
    llvm::outs() << "\n";
  }

  if (!outputFile.empty())
    if (auto error = writeNpy(outputFile, *result))
      return fail(std::move(error), kBadInput);

  int status = kOk;
  if (!expectFile.empty()) {
    auto expected = readNpy(expectFile);
    if (!expected)
      return fail(expected.takeError(), kBadInput);
    auto comparison =
        compareArrays(*result, *expected, absTolerance, relTolerance);
    if (!comparison)
      return fail(comparison.takeError(), kBadInput);
    llvm::outs() << "expect " << expectFile << ": " << comparison->summary()
                 << "\n";
    if (!comparison->passed)
      status = kMismatch;
  }
  if (checkWithReference) {
    NpyArray reference = computeReference(*problem);
    auto comparison =
        compareArrays(*result, reference, absTolerance, relTolerance);
    if (!comparison)
      return fail(comparison.takeError(), kBadInput);
    llvm::outs() << "check against the C++ reference: " << comparison->summary()
                 << "\n";
    if (!comparison->passed)
      status = kMismatch;
  }
  return status;
}
