//===- Communicator.h - The MPI calls of mha-run --parallel -----*- C++ -*-===//
//
// The few MPI calls a split run makes, behind an interface that builds
// without MPI (CMake's MHA_HAVE_MPI): there, starting fails with a message
// that says so, and nothing else is ever called.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHARUN_COMMUNICATOR_H
#define MHA_TOOLS_MHARUN_COMMUNICATOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mha {
namespace tools {

/// MPI_COMM_WORLD, between MPI_Init and MPI_Finalize.
class Communicator {
public:
  /// Starts MPI. Fails, without starting it, when this mha-run was built
  /// without MPI or when no MPI launcher (mpirun, mpiexec, srun) started the
  /// process: MPI would then run it alone, as a world of one rank.
  static llvm::Expected<Communicator> start();

  Communicator(Communicator &&other) noexcept;
  Communicator &operator=(Communicator &&) = delete;
  /// Ends MPI if finish() was not called (an error path).
  ~Communicator();

  int rank() const { return rankIndex; }
  int size() const { return worldSize; }

  /// Every rank's `words`, rank by rank (MPI_Allgather); each rank must give
  /// as many.
  std::vector<uint64_t> allGather(llvm::ArrayRef<uint64_t> words) const;

  /// The first rank, in rank order, that stopped or differs from rank 0
  /// (runtime/RankAgreement.h's mha_rank_agree): every rank gets the same.
  struct Disagreement {
    enum Reason { None, Stopped, OtherInputs, OtherShape, MPIFailed };
    Reason reason = None;
    int rank = -1;
    /// The exit code of a rank that stopped.
    uint64_t code = 0;
  };

  /// Exchanges this rank's state (0 ready, 1 + code stopped), its output's
  /// elements and shape hash and its inputs' hash with every rank.
  Disagreement agree(uint64_t state, uint64_t elements, uint64_t shapeHash,
                     uint64_t inputHash) const;

  /// Replaces `values` on every rank by their sum over the ranks
  /// (MPI_Allreduce, MPI_SUM); each rank must give as many.
  void sumInPlace(float *values, int64_t count) const;

  /// MPI_Finalize: every rank calls it once, last.
  void finish();

private:
  Communicator(int rank, int size) : rankIndex(rank), worldSize(size) {}

  int rankIndex = 0, worldSize = 1;
  bool active = true;
};

} // namespace tools
} // namespace mha

#endif // MHA_TOOLS_MHARUN_COMMUNICATOR_H
