//===- RunOptions.cpp - The command line of mha-run -----------------------===//

#include "tools/mha-run/RunOptions.h"

#include <algorithm>

namespace cl = llvm::cl;

namespace mha::tools::runoptions {

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
/// `--dims`: the sizes of `--random` in `?` dimensions (InputBinding.h).
cl::opt<std::string> dims(
    "dims",
    cl::desc("Sizes of the `?` dimensions for --random: the `?` dimensions of "
             "x are B and T, of kv B and S, of a mask T and S (S is T in "
             "self-attention); others are NAME.INDEX, e.g. mask.0 (default: "
             "7, or what the graph's other sizes imply)"),
    cl::value_desc("B=3,T=200,..."), cl::cat(runCategory));
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
cl::opt<int> &registerThreadsOption() {
  if (cl::Option *existing = cl::getRegisteredOptions().lookup("threads"))
    existing->removeArgument();
  static cl::opt<int> threads("threads",
                              cl::desc("OpenMP threads, at most 1024 (default "
                                       "0: all cores)"),
                              cl::init(0), cl::cat(runCategory));
  return threads;
}
cl::opt<bool> printPipeline("print-pipeline",
                            cl::desc("Print the passes the graph is lowered "
                                     "with, one per line (without --inputs, "
                                     "--input or --random: only that)"),
                            cl::cat(runCategory));
cl::opt<std::string> dumpAttentionDir(
    "dump-attention",
    cl::desc("Also compute the attention weights [B, H, T, S]: write them to "
             "DIR/attention.npy and one PNG map per head to DIR/head<h>.png "
             "(batch<b>_head<h>.png when B > 1)"),
    cl::value_desc("DIR"), cl::cat(runCategory));
cl::opt<std::string> tokens("tokens",
                            cl::desc("Label the maps of --dump-attention with "
                                     "these words, one per token"),
                            cl::value_desc("\"A dog ate ...\""),
                            cl::cat(runCategory));

/// The decoder (tools/mha-run/Decode.h), on a graph with a key/value cache.
cl::opt<int64_t> prefillTokens(
    "prefill",
    cl::desc("Decode: first one call with T tokens per sequence into the "
             "empty cache (x holds T + N rows: the prefill's, then one per "
             "step), then the --steps"),
    cl::value_desc("T"), cl::cat(runCategory));
cl::opt<int64_t> decodeSteps("steps",
                             cl::desc("Decode: after the prefill, N calls of "
                                      "one token per sequence"),
                             cl::value_desc("N"), cl::init(0),
                             cl::cat(runCategory));
cl::opt<std::string> decodeLengths(
    "lengths",
    cl::desc("Decode: sequence b keeps the first l_b of the prefill's tokens "
             "(ragged batches; default: all T)"),
    cl::value_desc("l0,l1,..."), cl::cat(runCategory));

cl::opt<std::string> parallelMode(
    "parallel",
    cl::desc("Split the layer by heads across the ranks of an MPI job "
             "(`mpirun -np N mha-run ... --parallel heads`): each rank "
             "computes its share of the heads, one all-reduce adds them up"),
    cl::value_desc("heads"), cl::cat(runCategory));

llvm::Error checkDecodeOptions(bool decoding) {
  if (!decoding)
    return llvm::Error::success();
  if (!prefillTokens.getNumOccurrences())
    return llvm::createStringError(
        "--steps and --lengths decode after a prefill; give --prefill T too");
  if (!dumpAttentionDir.empty())
    return llvm::createStringError(
        "--dump-attention runs a layer once; it does not go with --prefill");
  return llvm::Error::success();
}

double bf16ErrorFactor(const mlir::mha::MhaPipelineOptions &options) {
  return options.bf16Precision == mlir::mha::BF16Precision::Fast ? 2.0 : 1.5;
}

DecodeOptions decodeOptions() {
  DecodeOptions options;
  options.prefill = prefillTokens;
  options.steps = decodeSteps;
  options.lengths = decodeLengths;
  options.rounds = std::max(1u, unsigned(repeat));
  options.warmupRounds = repeat > 0 ? unsigned(warmup) : 0;
  options.check = checkWithReference;
  options.atol = absTolerance;
  options.rtol = relTolerance;
  options.outputFile = outputFile;
  options.expectFile = expectFile;
  return options;
}

} // namespace mha::tools::runoptions
