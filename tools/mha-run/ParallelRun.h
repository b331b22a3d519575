//===- ParallelRun.h - mha-run --parallel heads -----------------*- C++ -*-===//
//
// Private to mha-run: a layer split by heads across the ranks of an MPI job
// (docs/distributed.md). Every rank reads the same full inputs, compiles the
// graph that `mha-split-heads` makes for its rank, calls it on its slices of
// the weights, and the ranks add up their partial outputs with one
// all-reduce.
//
// Every rank makes the same collective calls in the same order whatever
// happens, so that a rank that fails never leaves the others waiting: one
// all-gather of the command lines when MPI starts; before each all-reduce
// (one per call of the layer: the decoder makes several), one all-gather of
// each rank's state (stopped with an exit code, or ready to add up its
// output), and the all-reduce only when every rank is ready; at the end one
// more exchange of states, which a rank that stops early makes in place of
// its next all-reduce's; then MPI_Finalize.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHARUN_PARALLELRUN_H
#define MHA_TOOLS_MHARUN_PARALLELRUN_H

#include "runtime/GraphLoader.h"
#include "runtime/Npy.h"
#include "tools/mha-run/Communicator.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace mha {
namespace tools {

class HeadParallelRun {
public:
  /// Nothing without `--parallel`. Else checks its value and the options
  /// it cannot go with yet (--dump-attention, --repeat but for the
  /// decoder's rounds), starts
  /// MPI and checks that every rank was given the same command line
  /// (`args`, without the program). Only rank 0 writes `--output`, unless
  /// its name has `%r`, which each rank replaces by its index.
  static llvm::Expected<std::unique_ptr<HeadParallelRun>>
  startIfAsked(llvm::ArrayRef<const char *> args, bool decoding);

  /// The module this rank compiles: set by split().
  mlir::ModuleOp module() const { return *rankModule; }

  /// Makes this rank's graph (`mha-split-heads` on a copy of `graph`) and
  /// replaces each of `inputs` (one per argument of `graph`'s entry, full
  /// size) that the split narrowed by its slice, which lives as long as
  /// this object. A null input is one the caller makes at the rank's size
  /// (the decoder's caches): neither sliced nor compared between ranks.
  llvm::Error split(runtime::LoadedGraph &graph,
                    std::vector<const runtime::NpyArray *> &inputs);

  /// Replaces `result`, this rank's partial output, by the sum over the
  /// ranks, once every rank has one of the same shape from the same inputs;
  /// else an error that names the rank that differs or stopped.
  llvm::Error reduce(runtime::NpyArray &result);

  /// The milliseconds the last reduce() spent in MPI: the exchange of
  /// states that checks the ranks agree, and the all-reduce.
  struct ReduceTimes {
    double checkMs = 0, sumMs = 0;
  };
  ReduceTimes lastReduceTimes() const { return lastTimes; }

  int ranks() const { return communicator.size(); }

  /// Ends the run with exit code `code`: takes part in the exchange of
  /// states if reduce() did not (this rank stopped early), then ends MPI.
  int finish(int code);

private:
  explicit HeadParallelRun(Communicator communicator)
      : communicator(std::move(communicator)) {}

  /// Exchanges {state, output elements, output shape hash, input hash}
  /// with every rank: state 0 is ready, 1 + code stopped with `code`.
  /// Returns the first rank that stopped or differs from rank 0.
  Communicator::Disagreement exchangeStates(uint64_t state,
                                            const runtime::NpyArray *result);

  Communicator communicator;
  mlir::OwningOpRef<mlir::ModuleOp> rankModule;
  /// The slices this rank's arguments are given.
  std::vector<runtime::NpyArray> slices;
  /// A hash of the full inputs, which every rank must agree on.
  uint64_t inputHash = 0;
  /// An exchange of states said that a rank stopped.
  bool stopSeen = false;
  ReduceTimes lastTimes;
};

} // namespace tools
} // namespace mha

#endif // MHA_TOOLS_MHARUN_PARALLELRUN_H
