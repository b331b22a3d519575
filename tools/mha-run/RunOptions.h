//===- RunOptions.h - The command line of mha-run ---------------*- C++ -*-===//
//
// Private to mha-run: its options (tools/mha-run/RunOptions.cpp declares
// them, with their help texts), and what is derived from them alone.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHARUN_RUNOPTIONS_H
#define MHA_TOOLS_MHARUN_RUNOPTIONS_H

#include "compiler/Pipelines.h"
#include "tools/mha-run/Decode.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mha {
namespace tools {
namespace runoptions {

/// The category `--help` lists mha-run's own options under.
extern llvm::cl::OptionCategory runCategory;

/// The graph file and its function to run.
extern llvm::cl::opt<std::string> graphFile, entryName;
/// Where the arguments come from: `--inputs DIR`, `--input NAME=FILE.npy`,
/// `--random` with `--seed` and `--dims`.
extern llvm::cl::opt<std::string> inputsDir;
extern llvm::cl::list<std::string> inputFiles;
extern llvm::cl::opt<bool> randomInputs;
extern llvm::cl::opt<uint64_t> seed;
/// `--dims`: the sizes of `--random` in `?` dimensions (InputBinding.h).
extern llvm::cl::opt<std::string> dims;
/// `--output`, `--expect` and their tolerances, `--check`.
extern llvm::cl::opt<std::string> outputFile, expectFile;
extern llvm::cl::opt<double> absTolerance, relTolerance;
extern llvm::cl::opt<bool> checkWithReference;
/// `--repeat` timed calls after `--warmup` untimed ones.
extern llvm::cl::opt<unsigned> repeat, warmup;
/// `--print-pipeline`, `--dump-attention DIR` and its `--tokens`.
extern llvm::cl::opt<bool> printPipeline;
extern llvm::cl::opt<std::string> dumpAttentionDir, tokens;
/// The decoder (tools/mha-run/Decode.h), on a graph with a key/value cache:
/// `--prefill`, `--steps`, `--lengths`.
extern llvm::cl::opt<int64_t> prefillTokens, decodeSteps;
extern llvm::cl::opt<std::string> decodeLengths;
/// `--parallel heads`: the layer split by heads across the ranks of an MPI
/// job (tools/mha-run/ParallelRun.h).
extern llvm::cl::opt<std::string> parallelMode;

/// `--threads N`. libLLVM already registers a hidden option called
/// "threads"; ours replaces it, so it is created in main() after the other
/// one is unregistered.
llvm::cl::opt<int> &registerThreadsOption();

/// The options that cannot go with decoding, or that decoding needs.
llvm::Error checkDecodeOptions(bool decoding);

/// The decoder's options: --repeat rounds of a prefill and the steps (at
/// least one), after --warmup untimed ones when --repeat is given.
DecodeOptions decodeOptions();

/// The bound of a bf16 layer's error, in times the error that storing its
/// inputs in bf16 alone causes: 1.5 with `bf16-precision=accurate`, 2 with
/// `fast`, which also rounds Q, K, P, V and the output projection's input
/// (PyTorch's bf16 layer is at 1.7 to 2.3 times on test/bf16's wide cases).
double bf16ErrorFactor(const mlir::mha::MhaPipelineOptions &options);

} // namespace runoptions
} // namespace tools
} // namespace mha

#endif // MHA_TOOLS_MHARUN_RUNOPTIONS_H
