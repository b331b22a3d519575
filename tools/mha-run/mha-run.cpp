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

#include "compiler/Passes.h"
#include "compiler/Pipelines.h"
#include "compiler/Registration.h"
#include "dialects/MhaOps.h"
#include "runtime/AMXPermission.h"
#include "runtime/AttentionProblem.h"
#include "runtime/Comparison.h"
#include "runtime/GraphLoader.h"
#include "runtime/GraphSignature.h"
#include "runtime/JitRunner.h"
#include "runtime/MemoryLimit.h"
#include "runtime/Npy.h"
#include "tools/mha-run/AttentionDump.h"
#include "tools/mha-run/Decode.h"
#include "tools/mha-run/InputBinding.h"
#include "tools/mha-run/ParallelRun.h"
#include "tools/mha-run/PipelinePrinting.h"
#include "tools/mha-run/RunOptions.h"
#include "tools/support/PipelineOptions.h"
#include "tools/support/ToolSupport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
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
using namespace ::mha::tools;
using namespace ::mha::tools::runoptions;
namespace cl = llvm::cl;

namespace {

void reportError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "mha-run") << message << "\n";
}

/// Reports `error` and returns `code`.
int fail(llvm::Error error, ExitCode code) {
  reportError(llvm::toString(std::move(error)));
  return code;
}

/// Refuses, before compiling, a graph whose output would not fit in memory
/// next to its inputs (e.g. a small x and w_o that make a huge y).
/// Intermediate buffers are not counted: their size depends on the lowering.
llvm::Error checkOutputFits(RankedTensorType resultType,
                            const std::vector<NpyArray> &inputs) {
  if (!resultType || !resultType.hasStaticShape())
    return llvm::Error::success();
  std::optional<int64_t> outputBytes =
      getByteCount(resultType.getShape(), ElementType::F32);
  std::string what = llvm::formatv("the output of shape {0} float32",
                                   formatShape(resultType.getShape()));
  if (!outputBytes)
    return llvm::createStringError(what + ": its byte count overflows");
  if (auto error = checkMemoryLimit(*outputBytes, what))
    return error;
  uint64_t total = *outputBytes;
  for (const NpyArray &input : inputs)
    total += input.data.size();
  return checkMemoryLimit(total, "the inputs and the output together");
}

/// Refuses an output file (--output, the files of --dump-attention) that is
/// one of the files read: the graph, --expect, the inputs at `inputPaths`.
llvm::Error
checkOutputsDoNotOverwriteInputs(const GraphSignature &signature,
                                 const std::vector<std::string> &inputPaths) {
  std::vector<ToolFile> reads;
  if (graphFile != "-")
    reads.push_back({"the graph", graphFile});
  if (!expectFile.empty())
    reads.push_back({"--expect", expectFile});
  for (auto [argument, path] : llvm::zip(signature.arguments, inputPaths))
    if (!path.empty())
      reads.push_back({"input '" + argument.name + "'", path});
  std::vector<ToolFile> writes;
  if (!outputFile.empty())
    writes.push_back({"--output", outputFile});
  if (!dumpAttentionDir.empty())
    for (std::string &path : listDumpTargets(dumpAttentionDir))
      writes.push_back({"--dump-attention", std::move(path)});
  return checkNoOverwrite(reads, writes);
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}
} // namespace

/// A run of mha-run, step by step. Each step returns kContinue, or the exit
/// code to stop with (after it reported why).
class Run {
public:
  static constexpr int kContinue = -1;

  Run(cl::opt<int> &threads,
      const mlir::mha::MhaPipelineOptions &pipelineOptions,
      llvm::ArrayRef<const char *> args)
      : threads(threads), pipelineOptions(pipelineOptions), args(args) {}

  /// The whole run: the steps in order; a rank of a split run ends with
  /// the others (ParallelRun.h).
  int operator()() {
    int code = kContinue;
    for (int (Run::*step)() :
         {&Run::checkOptions, &Run::loadGraph, &Run::buildPipeline,
          &Run::decodeIfAsked, &Run::bindInputs, &Run::describeReference,
          &Run::splitForRank, &Run::compile, &Run::callAndTime,
          &Run::reduceAcrossRanks, &Run::writeOutputs})
      if (code = (this->*step)(); code != kContinue)
        break;
    if (code == kContinue)
      code = compareResults();
    return parallel ? parallel->finish(code) : code;
  }

private:
  /// The options' values and combinations, before anything is read.
  int checkOptions() {
    // libomp aborts the process when it cannot start the threads it is
    // asked for; far more threads than cores never help. 0, the default,
    // leaves the count to libomp (all cores, or OMP_NUM_THREADS).
    constexpr int kMaxThreads = 1024;
    if (threads < 0 || threads > kMaxThreads)
      return reportError(llvm::formatv("--threads must be between 0 and {0} "
                                       "(0: all cores), got {1}",
                                       kMaxThreads, int(threads))),
             kBadInput;
    // A timing needs tens of calls; a cap turns a mistyped count (an extra
    // digit group) into an error instead of a run that never ends.
    constexpr unsigned kMaxCalls = 100000;
    for (auto [name, calls] : {std::pair("--repeat", unsigned(repeat)),
                               std::pair("--warmup", unsigned(warmup))})
      if (calls > kMaxCalls)
        return reportError(llvm::formatv("{0} must be at most {1}, got {2}",
                                         name, kMaxCalls, calls)),
               kBadInput;
    // `!(x >= 0)` also catches NaN, which would make every comparison fail.
    for (auto [name, tolerance] : {std::pair("--atol", double(absTolerance)),
                                   std::pair("--rtol", double(relTolerance))})
      if (!(tolerance >= 0))
        return reportError(llvm::formatv("{0} must be a non-negative number, "
                                         "got {1}",
                                         name, tolerance)),
               kBadInput;
    // The compiler's options, checked before anything is compiled.
    if (auto error = pipelineOptions.validate("--"))
      return fail(std::move(error), kBadInput);
    // The JIT compiles for this CPU: code with vdpbf16ps, or AMX tiles,
    // could not run where it lacks them.
    if (pipelineOptions.bf16Dot == mlir::mha::BF16DotMode::Avx512 &&
        !mlir::mha::TargetDescription::host().avx512bf16)
      return reportError("--bf16-dot=avx512 (or on) needs a CPU with "
                         "AVX512_BF16; this one has none"),
             kBadInput;
    if (pipelineOptions.bf16Dot == mlir::mha::BF16DotMode::Amx &&
        !::mha::runtime::processMayUseAMX(
            mlir::mha::TargetDescription::host().amxBF16))
      return reportError("--bf16-dot=amx needs a CPU with AMX-BF16 and a "
                         "kernel that lets this process use the AMX tile "
                         "data; this one has not: " +
                         (::mha::runtime::requestAMXTileData().empty()
                              ? std::string("no AMX-BF16 in the CPU")
                              : ::mha::runtime::requestAMXTileData())),
             kBadInput;
    if (threads > 0)
      omp_set_num_threads(threads);
    if (!tokens.empty() && dumpAttentionDir.empty())
      return reportError("--tokens labels the maps of --dump-attention; give "
                         "--dump-attention DIR too"),
             kBadInput;
    decoding = prefillTokens.getNumOccurrences() ||
               decodeSteps.getNumOccurrences() ||
               decodeLengths.getNumOccurrences();
    if (auto error = checkDecodeOptions(decoding))
      return fail(std::move(error), kBadInput);
    auto started = HeadParallelRun::startIfAsked(args, decoding);
    if (!started)
      return fail(started.takeError(), kBadInput);
    parallel = std::move(*started);
    return kContinue;
  }

  /// Parses and verifies the graph; the diagnostics name the file, line
  /// and column.
  int loadGraph() {
    mlir::mha::registerMhaDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    context->loadAllAvailableDialects();
    auto loaded = ::mha::runtime::loadGraph(graphFile, entryName, *context);
    if (!loaded)
      return fail(loaded.takeError(), kBadInput);
    graph = std::move(*loaded);
    return kContinue;
  }

  /// The pipeline, built before the inputs are bound: --print-pipeline
  /// alone needs no inputs, and stops here.
  int buildPipeline() {
    pm = std::make_unique<PassManager>(context.get());
    if (failed(applyPassManagerCLOptions(*pm)))
      return reportError("bad pass manager options"), kBadInput;
    // The weights get a function of their own, so the layer keeps its path.
    weightsEntry =
        mlir::mha::getAttentionWeightsFunctionName(graph.entry.getSymName());
    if (!dumpAttentionDir.empty()) {
      if (auto error = checkOneAttention(graph.entry))
        return fail(std::move(error), kBadInput);
      pm->addPass(mlir::mha::createMhaExtractAttentionWeights(
          {graph.entry.getSymName().str()}));
    }
    mlir::mha::buildMhaToLLVMPipeline(*pm, pipelineOptions);
    llvm::raw_string_ostream pipelineStream(pipelineText);
    pm->printAsTextualPipeline(pipelineStream);
    if (printPipeline && inputsDir.empty() && inputFiles.empty() &&
        !randomInputs) {
      printAttentionPaths(graph.entry, pipelineOptions.attention);
      printPipelineByLine(pipelineText, llvm::outs());
      return kOk;
    }
    inputOptions = {inputsDir, inputFiles, randomInputs, seed, dims};
    return kContinue;
  }

  /// --prefill/--steps hand the run to the decoder (tools/mha-run/Decode.h).
  int decodeIfAsked() {
    if (!decoding)
      return kContinue;
    // Nothing written may be something read (the inputs are .npy files
    // that a decoder's output, [B, T + N, D_out], cannot be mistaken for).
    std::vector<ToolFile> reads = {{"the graph", graphFile}};
    if (!expectFile.empty())
      reads.push_back({"--expect", expectFile});
    if (!outputFile.empty())
      if (auto error = checkNoOverwrite(reads, {{"--output", outputFile}}))
        return fail(std::move(error), kBadInput);
    DecodeOptions options = decodeOptions();
    options.bf16ErrorFactor = bf16ErrorFactor(pipelineOptions);
    return runDecoder(graph, *pm, inputOptions, options, llvm::outs(),
                      reportError, parallel.get());
  }

  /// Binds every argument to an array and checks that they fit together,
  /// before anything is compiled.
  int bindInputs() {
    const GraphSignature &signature = graph.signature;
    // Nothing written may be something read: `--expect F --output F` would
    // compare the result with itself.
    auto inputPaths = resolveInputPaths(signature, inputOptions);
    if (!inputPaths)
      return fail(inputPaths.takeError(), kBadInput);
    if (auto error = checkOutputsDoNotOverwriteInputs(signature, *inputPaths))
      return fail(std::move(error), kBadInput);

    auto bound =
        ::mha::runtime::bindInputs(signature, inputOptions, &llvm::outs());
    if (!bound)
      return fail(bound.takeError(), kBadInput);
    inputs = std::move(*bound);
    for (const NpyArray &input : inputs)
      inputPointers.push_back(&input);
    RankedTensorType resultType;
    if (auto error =
            checkInputsFitTogether(graph.entry, inputPointers, &resultType))
      return fail(std::move(error), kBadInput);
    if (auto error = checkOutputFits(resultType, inputs))
      return fail(std::move(error), kBadInput);

    // --tokens must match the sequence: checked now, not after compiling.
    if (auto error = checkTokensFit(graph.entry, inputs, splitTokens(tokens)))
      return fail(std::move(error), kBadInput);

    // bf16 arguments come as float32 and are rounded to nearest even; the
    // reference sees the rounded values, the compiled code their bf16
    // copies. With bf16-precision=fast, --check also needs the reference
    // of the values as given (the rule of checkStorageError).
    if (checkWithReference &&
        pipelineOptions.bf16Precision == mlir::mha::BF16Precision::Fast &&
        llvm::any_of(signature.arguments, [](const GraphArgument &argument) {
          return argument.type.getElementType().isBF16();
        }))
      givenInputs = inputs;
    inputPointers =
        roundBF16Arguments(signature, inputs, bf16Copies, &llvm::outs());
    return kContinue;
  }

  /// The reference (--check) and the GFLOP count (--repeat) need the graph
  /// before lowering: described now.
  int describeReference() {
    if (!checkWithReference && repeat == 0)
      return kContinue;
    auto described = describeGraphReference(graph.entry, inputs);
    if (described)
      problem = std::move(*described);
    else if (checkWithReference)
      return fail(described.takeError(), kBadInput);
    else
      llvm::consumeError(described.takeError());
    // The reference computes the layer alone: what a graph computes from
    // the layer's output afterwards would be compared with the layer's.
    if (checkWithReference && !problem->returnsLayerOutput)
      return reportError(llvm::formatv(
                 "--check compares @{0}'s result with the reference of its "
                 "mha.attention, but @{0} does not return that op's result as "
                 "it is; use --expect with a result computed elsewhere",
                 graph.entry.getSymName())),
             kBadInput;
    return kContinue;
  }

  /// --parallel: this rank's graph and its slices of the weights.
  int splitForRank() {
    if (auto error = parallel ? parallel->split(graph, inputPointers)
                              : llvm::Error::success())
      return fail(std::move(error), kBadInput);
    return kContinue;
  }

  /// Lowers a copy with the named pipeline, JIT-compiles it and prepares
  /// the packed weights once: every call reuses them.
  int compile() {
    auto compileStart = std::chrono::steady_clock::now();
    OwningOpRef<ModuleOp> lowered =
        (parallel ? parallel->module() : *graph.module).clone();
    // --mlir-timing: the passes and the JIT, printed once compiled.
    DefaultTimingManager timingManager;
    applyDefaultTimingManagerCLOptions(timingManager);
    TimingScope timing = timingManager.getRootScope();
    pm->enableTiming(timing);
    printAttentionPaths(graph.entry, pipelineOptions.attention);
    if (printPipeline)
      printPipelineByLine(pipelineText, llvm::outs());
    if (failed(pm->run(*lowered)))
      return reportError("lowering " + graphFile + " failed (see above)"),
             kCompileFailed;
    TimingScope jitTiming = timing.nest("JIT compilation");
    auto created = CompiledFunction::create(*lowered, graph.entry.getSymName(),
                                            graph.signature.result.getRank());
    if (!created)
      return fail(created.takeError(), kCompileFailed);
    function = std::move(*created);
    jitTiming.stop();
    timing.stop();
    timingManager.print();
    // Printed already: not again when the manager goes.
    timingManager.setEnabled(false);
    compileMs = millisecondsSince(compileStart);

    auto prepareStart = std::chrono::steady_clock::now();
    auto prepared = function->prepare(inputPointers);
    if (!prepared)
      return fail(prepared.takeError(), kCompileFailed);
    numPrepared = *prepared;
    prepareMs = millisecondsSince(prepareStart);
    return kContinue;
  }

  /// Calls the layer once, or --warmup untimed calls and --repeat timed
  /// ones, and prints their median.
  int callAndTime() {
    auto called = function->call(inputPointers);
    if (!called)
      return fail(called.takeError(), kCompileFailed);
    result = std::move(*called);
    if (repeat == 0)
      return kContinue;
    // The timed calls keep no result (callDiscardingResult: the first
    // call's is the one --output and --check use).
    for (unsigned i = 0; i < warmup; ++i)
      if (auto error = function->callDiscardingResult(inputPointers))
        return fail(std::move(error), kCompileFailed);
    std::vector<double> times;
    for (unsigned i = 0; i < repeat; ++i) {
      auto start = std::chrono::steady_clock::now();
      if (auto error = function->callDiscardingResult(inputPointers))
        return fail(std::move(error), kCompileFailed);
      times.push_back(millisecondsSince(start));
    }
    std::sort(times.begin(), times.end());
    double median = times[times.size() / 2];
    if (times.size() % 2 == 0)
      median = (times[times.size() / 2 - 1] + median) / 2;
    llvm::outs() << llvm::formatv("compile {0:F1} ms\n", compileMs);
    if (numPrepared > 0)
      llvm::outs() << llvm::formatv("prepared {0} packed weight buffers once "
                                    "in {1:F1} ms\n",
                                    numPrepared, prepareMs);
    llvm::outs() << llvm::formatv(
        "median {0:F3} ms, min {1:F3} ms over {2} "
        "run{5} ({3} thread{4})",
        median, times.front(), times.size(), omp_get_max_threads(),
        omp_get_max_threads() == 1 ? "" : "s", times.size() == 1 ? "" : "s");
    if (problem)
      llvm::outs() << llvm::formatv(", {0:F1} GFLOP/s",
                                    problem->flops() / (median * 1e6));
    llvm::outs() << "\n";
    return kContinue;
  }

  /// --parallel: the ranks' partial outputs added up, on every rank.
  int reduceAcrossRanks() {
    if (auto error =
            parallel ? parallel->reduce(result) : llvm::Error::success())
      return fail(std::move(error), kBadInput);
    return kContinue;
  }

  /// --output, and --dump-attention: a second call, of the function the
  /// extraction added.
  int writeOutputs() {
    if (!outputFile.empty()) {
      if (auto error = writeNpy(outputFile, result))
        return fail(std::move(error), kBadInput);
      llvm::outs() << "wrote the output " << formatShape(result.shape) << " to "
                   << outputFile << "\n";
    }
    if (dumpAttentionDir.empty())
      return kContinue;
    auto weightsFunction = function->sibling(weightsEntry, /*rank=*/4);
    if (!weightsFunction)
      return fail(weightsFunction.takeError(), kCompileFailed);
    if (auto count = (*weightsFunction)->prepare(inputPointers); !count)
      return fail(count.takeError(), kCompileFailed);
    auto computed = (*weightsFunction)->call(inputPointers);
    if (!computed)
      return fail(computed.takeError(), kCompileFailed);
    weights = std::move(*computed);
    if (auto error =
            dumpAttention(*weights, dumpAttentionDir, graph.entry.getSymName(),
                          splitTokens(tokens), llvm::outs()))
      return fail(std::move(error), kBadInput);
    return kContinue;
  }

  /// Prints one comparison; false when an element is out of tolerance.
  static bool printComparison(const llvm::Twine &what,
                              const Comparison &comparison) {
    llvm::outs() << what << ": " << comparison.summary() << "\n";
    return comparison.passed;
  }

  /// --expect and --check: kOk, or kMismatch when an element differs.
  int compareResults() {
    int status = kOk;
    if (!expectFile.empty()) {
      auto expected = readNpy(expectFile);
      if (!expected)
        return fail(expected.takeError(), kBadInput);
      auto comparison =
          compareArrays(result, *expected, absTolerance, relTolerance);
      if (!comparison)
        return reportError(
                   llvm::formatv("--expect {0}: {1}", expectFile,
                                 llvm::toString(comparison.takeError()))),
               kBadInput;
      if (!printComparison("expect " + expectFile, *comparison))
        status = kMismatch;
    }
    if (!checkWithReference)
      return status;
    NpyArray referenceWeights;
    NpyArray reference =
        computeReference(*problem, weights ? &referenceWeights : nullptr);
    if (weights) {
      auto comparison =
          compareArrays(*weights, referenceWeights, absTolerance, relTolerance);
      if (!comparison)
        return fail(comparison.takeError(), kBadInput);
      if (!printComparison("check the attention weights against the C++ "
                           "reference",
                           *comparison))
        status = kMismatch;
    }
    if (!givenInputs.empty())
      return checkFastBF16(reference) ? status : kMismatch;
    auto comparison =
        compareArrays(result, reference, absTolerance, relTolerance);
    if (!comparison)
      return fail(comparison.takeError(), kBadInput);
    if (!printComparison("check against the C++ reference", *comparison))
      status = kMismatch;
    return status;
  }

  /// --check of a bf16 layer with bf16-precision=fast, which rounds what
  /// the reference keeps in f32: the rule of checkStorageError against the
  /// reference of the inputs as given and `rounded`, that of the rounded
  /// inputs.
  bool checkFastBF16(const NpyArray &rounded) {
    auto described = describeGraphReference(graph.entry, givenInputs);
    if (!described) {
      llvm::consumeError(described.takeError());
      return false;
    }
    NpyArray exact = computeReference(*described, nullptr);
    double factor = bf16ErrorFactor(pipelineOptions);
    StorageErrorCheck check =
        checkStorageError(result.f32(), exact.f32(), rounded.f32(),
                          result.numElements(), factor, absTolerance);
    llvm::outs() << "check against the C++ reference: " << check.summary(factor)
                 << "\n";
    return check.passed;
  }

  cl::opt<int> &threads;
  const mlir::mha::MhaPipelineOptions &pipelineOptions;
  /// The command line without the program, which the ranks compare.
  llvm::ArrayRef<const char *> args;
  bool decoding = false;
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
  LoadedGraph graph;
  /// --parallel; its graph lives in `context`, so it goes first.
  std::unique_ptr<HeadParallelRun> parallel;
  std::unique_ptr<PassManager> pm;
  std::string pipelineText;
  std::string weightsEntry;
  InputOptions inputOptions;
  std::vector<NpyArray> inputs;
  std::vector<const NpyArray *> inputPointers;
  std::vector<NpyArray> bf16Copies;
  /// The inputs as given, before the bf16 ones were rounded (--check with
  /// bf16-precision=fast); empty otherwise.
  std::vector<NpyArray> givenInputs;
  std::optional<AttentionProblem> problem;
  std::unique_ptr<CompiledFunction> function;
  double compileMs = 0, prepareMs = 0;
  unsigned numPrepared = 0;
  NpyArray result;
  std::optional<NpyArray> weights;
};

/// Everything but the check of stdout, which main does on every path.
static int run(int argc, char **argv) {
  ::mha::tools::hideLLVMOptions({&runCategory});
  // Passes first: --mlir-print-ir-after=PASS only knows the passes
  // registered when the pass manager's options are created.
  mlir::mha::registerMhaPasses();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  cl::opt<int> &threads = registerThreadsOption();
  // The compiler's options (--attention, --query-tile, ...), declared once
  // in compiler/Pipelines.h, with the defaults of a runtime that prepares
  // the weights.
  mlir::mha::MhaPipelineOptions &pipelineOptions =
      registerPipelineOptions(runCategory);
  if (!parseCommandLine(
          argc, argv,
          "mha-run: compile a multi-head attention graph and run it\n"))
    return kBadInput;
  // The JIT runs the code in this process: `bf16-dot=auto` takes AMX only
  // where Linux lets this process use the tile data.
  pipelineOptions.targetMayUseAMX = ::mha::runtime::processMayUseAMX(
      mlir::mha::TargetDescription::host().amxBF16);
  return Run(threads, pipelineOptions,
             llvm::ArrayRef<const char *>(argv, argc).drop_front())();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  return finishStdout("mha-run", run(argc, argv));
}
