//===- Communicator.cpp - The MPI calls of mha-run --parallel -------------===//

#include "tools/mha-run/Communicator.h"

#include <cstdlib>

#ifdef MHA_HAVE_MPI
// The C API only: Open MPI's deprecated C++ bindings would need their own
// library at link time.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include "runtime/RankAgreement.h"
#endif

using namespace mha::tools;

Communicator::Communicator(Communicator &&other) noexcept
    : rankIndex(other.rankIndex), worldSize(other.worldSize),
      active(other.active) {
  other.active = false;
}

Communicator::~Communicator() { finish(); }

#ifdef MHA_HAVE_MPI

namespace {
/// True when an MPI launcher started this process: the variables that Open
/// MPI's mpirun, PMIx (srun, prterun) and MPICH's Hydra set in every rank.
bool startedByLauncher() {
  for (const char *name :
       {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(name))
      return true;
  return false;
}
} // namespace

llvm::Expected<Communicator> Communicator::start() {
  // Without a launcher MPI_Init makes a world of this process alone (a
  // "singleton"): a run meant to be split would quietly run unsplit.
  if (!startedByLauncher())
    return llvm::createStringError(
        "--parallel runs as the ranks of an MPI job: start it as `mpirun -np "
        "N mha-run ... --parallel heads` (no MPI launcher started this "
        "process)");
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(nullptr, nullptr) != MPI_SUCCESS)
    return llvm::createStringError("MPI_Init failed");
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return Communicator(rank, size);
}

std::vector<uint64_t>
Communicator::allGather(llvm::ArrayRef<uint64_t> words) const {
  std::vector<uint64_t> all(words.size() * worldSize);
  MPI_Allgather(words.data(), int(words.size()), MPI_UINT64_T, all.data(),
                int(words.size()), MPI_UINT64_T, MPI_COMM_WORLD);
  return all;
}

Communicator::Disagreement Communicator::agree(uint64_t state,
                                               uint64_t elements,
                                               uint64_t shapeHash,
                                               uint64_t inputHash) const {
  mha_rank_state mine = {state, elements, shapeHash, inputHash};
  mha_rank_disagreement found = mha_rank_agree(MPI_COMM_WORLD, &mine);
  return {Disagreement::Reason(found.reason), found.rank, found.code};
}

void Communicator::sumInPlace(float *values, int64_t count) const {
  mha_rank_sum(MPI_COMM_WORLD, values, count);
}

void Communicator::finish() {
  if (!active)
    return;
  active = false;
  MPI_Finalize();
}

#else // !MHA_HAVE_MPI

llvm::Expected<Communicator> Communicator::start() {
  return llvm::createStringError(
      "--parallel needs MPI, and this mha-run was built without it (CMake "
      "found no MPI: install libopenmpi-dev, e.g. with `make deps`, and "
      "configure again)");
}

std::vector<uint64_t>
Communicator::allGather(llvm::ArrayRef<uint64_t> words) const {
  return words.vec();
}

Communicator::Disagreement Communicator::agree(uint64_t state, uint64_t,
                                               uint64_t, uint64_t) const {
  if (state == 0)
    return {};
  return {Disagreement::Stopped, 0, state - 1};
}

void Communicator::sumInPlace(float *, int64_t) const {}

void Communicator::finish() { active = false; }

#endif // MHA_HAVE_MPI
