//===- ParallelRun.cpp - mha-run --parallel heads -------------------------===//

#include "tools/mha-run/ParallelRun.h"
#include "compiler/Passes.h"
#include "tools/mha-run/RunOptions.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <cstring>

using namespace mlir;
using namespace ::mha::runtime;
using namespace ::mha::tools;
using namespace ::mha::tools::runoptions;

namespace {
/// Folds `bytes` into `hash`. xxh3, not llvm::hash_combine: the ranks are
/// separate processes, and hash_combine's seed may differ between them.
void fold(uint64_t &hash, llvm::ArrayRef<uint8_t> bytes) {
  uint64_t pair[2] = {hash, llvm::xxh3_64bits(bytes)};
  hash = llvm::xxh3_64bits(
      llvm::ArrayRef(reinterpret_cast<const uint8_t *>(pair), sizeof(pair)));
}

template <typename T> void fold(uint64_t &hash, llvm::ArrayRef<T> values) {
  fold(hash, llvm::ArrayRef(reinterpret_cast<const uint8_t *>(values.data()),
                            values.size() * sizeof(T)));
}

uint64_t hashArray(const NpyArray &array) {
  uint64_t hash = uint64_t(array.elementType);
  fold(hash, llvm::ArrayRef(array.shape));
  fold(hash,
       llvm::ArrayRef(reinterpret_cast<const uint8_t *>(array.data.data()),
                      array.data.size()));
  return hash;
}

/// The part [offset, offset + size) of `array` along `dim`.
NpyArray sliceArray(const NpyArray &array, int64_t dim, int64_t offset,
                    int64_t size) {
  NpyArray slice;
  slice.elementType = array.elementType;
  slice.shape = array.shape;
  slice.shape[dim] = size;
  int64_t outer = 1, inner = int64_t(array.elementSize());
  for (int64_t d = 0; d < dim; ++d)
    outer *= array.shape[d];
  for (size_t d = dim + 1; d < array.shape.size(); ++d)
    inner *= array.shape[d];
  slice.data.resize(outer * size * inner);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(slice.data.data() + o * size * inner,
                array.data.data() + (o * array.shape[dim] + offset) * inner,
                size * inner);
  return slice;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// What a split run cannot do yet, refused before MPI starts.
llvm::Error checkParallelOptions(bool decoding) {
  if (parallelMode != "heads")
    return llvm::createStringError(
        "--parallel must be `heads` (the split by sequence is not done yet), "
        "got '" +
        parallelMode + "'");
  if (!dumpAttentionDir.empty())
    return llvm::createStringError(
        "--parallel does not go with --dump-attention: each rank computes "
        "the weights of its own heads only");
  if (repeat > 0 && !decoding)
    return llvm::createStringError(
        "--parallel does not time its calls (--repeat) yet, but for the "
        "decoder's (--prefill, --steps)");
  return llvm::Error::success();
}
} // namespace

llvm::Expected<std::unique_ptr<HeadParallelRun>>
HeadParallelRun::startIfAsked(llvm::ArrayRef<const char *> args,
                              bool decoding) {
  if (!parallelMode.getNumOccurrences())
    return nullptr;
  if (auto error = checkParallelOptions(decoding))
    return std::move(error);
  auto communicator = Communicator::start();
  if (!communicator)
    return communicator.takeError();
  // A rank given other options or another graph would compile another
  // layer, or none, and the all-reduce would add up unrelated arrays or
  // wait for ever: refused on every rank before anything is read.
  uint64_t hash = 0;
  for (const char *arg : args)
    fold(hash, llvm::ArrayRef(reinterpret_cast<const uint8_t *>(arg),
                              std::strlen(arg) + 1));
  std::vector<uint64_t> hashes = communicator->allGather({hash});
  std::vector<std::string> differing;
  for (size_t rank = 1; rank < hashes.size(); ++rank)
    if (hashes[rank] != hashes[0])
      differing.push_back(std::to_string(rank));
  if (!differing.empty())
    return llvm::createStringError(
        llvm::formatv("--parallel: rank{0} {1} {2} given other arguments than "
                      "rank 0; every rank must run the same command",
                      differing.size() == 1 ? "" : "s",
                      llvm::join(differing, ", "),
                      differing.size() == 1 ? "was" : "were")
            .str());
  std::string output = outputFile;
  if (size_t at = output.find("%r"); at != std::string::npos)
    outputFile = output.replace(at, 2, std::to_string(communicator->rank()));
  else if (communicator->rank() != 0)
    outputFile = "";
  return std::unique_ptr<HeadParallelRun>(
      new HeadParallelRun(std::move(*communicator)));
}

llvm::Error HeadParallelRun::split(LoadedGraph &graph,
                                   std::vector<const NpyArray *> &inputs) {
  llvm::StringRef entry = graph.entry.getSymName();
  for (const NpyArray *input : inputs)
    if (input)
      fold(inputHash, llvm::ArrayRef(hashArray(*input)));

  rankModule = graph.module->clone();
  PassManager pm(rankModule->getContext());
  pm.addPass(mlir::mha::createMhaSplitHeads(
      {communicator.rank(), communicator.size()}));
  if (failed(pm.run(*rankModule)))
    return llvm::createStringError(
        llvm::formatv("--parallel heads cannot split @{0} among {1} ranks "
                      "(see above)",
                      entry, communicator.size())
            .str());
  auto function = rankModule->lookupSymbol<func::FuncOp>(entry);
  // Reserved: the pointers into it must stay valid as it fills.
  slices.reserve(inputs.size());
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto shard = function.getArgAttrOfType<DenseI64ArrayAttr>(
        i, mlir::mha::getShardAttrName());
    if (!shard)
      continue;
    function.removeArgAttr(i, mlir::mha::getShardAttrName());
    if (!inputs[i])
      continue;
    slices.push_back(sliceArray(*inputs[i], shard[0], shard[1], shard[2]));
    inputs[i] = &slices.back();
  }
  return llvm::Error::success();
}

Communicator::Disagreement
HeadParallelRun::exchangeStates(uint64_t state, const NpyArray *result) {
  uint64_t shapeHash = 0;
  if (result)
    fold(shapeHash, llvm::ArrayRef(result->shape));
  return communicator.agree(state, result ? uint64_t(result->numElements()) : 0,
                            shapeHash, inputHash);
}

llvm::Error HeadParallelRun::reduce(NpyArray &result) {
  auto start = std::chrono::steady_clock::now();
  Communicator::Disagreement found = exchangeStates(0, &result);
  lastTimes.checkMs = millisecondsSince(start);
  switch (found.reason) {
  case Communicator::Disagreement::None:
    break;
  case Communicator::Disagreement::Stopped:
    stopSeen = true;
    return llvm::createStringError(llvm::formatv(
        "--parallel: rank {0} stopped (exit code {1}) before the ranks "
        "added up their outputs; see its messages",
        found.rank, found.code));
  case Communicator::Disagreement::OtherInputs:
    return llvm::createStringError(llvm::formatv(
        "--parallel: rank {0} read other inputs than rank 0; every rank "
        "must be given the same arrays",
        found.rank));
  case Communicator::Disagreement::OtherShape:
    return llvm::createStringError(llvm::formatv(
        "--parallel: rank {0}'s output has another shape than rank 0's",
        found.rank));
  case Communicator::Disagreement::MPIFailed:
    return llvm::createStringError(
        "--parallel: the ranks' exchange before the all-reduce failed in MPI");
  }
  start = std::chrono::steady_clock::now();
  communicator.sumInPlace(result.f32(), result.numElements());
  lastTimes.sumMs = millisecondsSince(start);
  return llvm::Error::success();
}

int HeadParallelRun::finish(int code) {
  // Every rank exchanges its state once more, unless an exchange already
  // told it that a rank stopped (that rank's last exchange is this one).
  if (!stopSeen)
    exchangeStates(1 + uint64_t(code), nullptr);
  communicator.finish();
  return code;
}
