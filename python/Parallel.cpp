//===- Parallel.cpp - mha._mha's split of a layer by heads ----------------===//

#include "python/Parallel.h"
#include "python/ErrorMessages.h"

#include "compiler/Passes.h"
#include "compiler/Registration.h"
#include "runtime/GraphLoader.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#ifdef MHA_HAVE_MPI
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include "runtime/RankAgreement.h"
#endif

#include <tuple>
#include <vector>

namespace py = pybind11;

namespace mha::python {

namespace {
/// One argument of a rank's graph that the split narrowed: its name, the
/// part [offset, offset + size) along `dim` of the full array, and the full
/// size along `dim` (-1 for `?`).
using Share = std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>;

/// The text of rank `rank`'s graph among `ranks` (mha-split-heads) of the
/// graph `text`, without the split's marks, and the arguments it narrowed.
std::tuple<std::string, std::vector<Share>>
splitHeads(const std::string &text, const std::string &entryName, int64_t rank,
           int64_t ranks) {
  mlir::DialectRegistry registry;
  mlir::mha::registerMhaDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticsStream(diagnostics);
  auto graph = runtime::loadGraphBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "<graph text>"), entryName,
      context, diagnosticsStream);
  if (!graph)
    throw py::value_error(
        withDiagnostics(message(graph.takeError()), diagnostics, 0));
  for (std::optional<unsigned> alias : graph->signature.resultAliases)
    if (alias)
      throw py::value_error(
          "comm: a layer that updates arguments in place (key/value caches) "
          "is not split in Python yet; mha-run --parallel heads runs such "
          "decoders");
  mlir::PassManager pm(&context);
  pm.addPass(mlir::mha::createMhaSplitHeads({rank, ranks}));
  size_t logged = diagnostics.size();
  if (failed(pm.run(*graph->module)))
    throw py::value_error(withDiagnostics(
        llvm::formatv("comm: cannot split @{0} by heads among {1} ranks",
                      graph->entry.getSymName(), ranks),
        diagnostics, logged));
  std::vector<Share> shares;
  mlir::func::FuncOp function = graph->entry;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto shard = function.getArgAttrOfType<mlir::DenseI64ArrayAttr>(
        i, mlir::mha::getShardAttrName());
    if (!shard)
      continue;
    const runtime::GraphArgument &full = graph->signature.arguments[i];
    int64_t fullSize = full.type.getDimSize(shard[0]);
    shares.emplace_back(full.name, shard[0], shard[1], shard[2],
                        mlir::ShapedType::isDynamic(fullSize) ? -1 : fullSize);
    function.removeArgAttr(i, mlir::mha::getShardAttrName());
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  graph->module->print(os);
  return {out, shares};
}

#ifdef MHA_HAVE_MPI
/// The communicator of Fortran handle `handle`, once MPI has started.
MPI_Comm communicator(int64_t handle) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    throw py::value_error(
        "comm: MPI is not initialized (import mpi4py.MPI, or call MPI_Init, "
        "first)");
  MPI_Comm comm = MPI_Comm_f2c(MPI_Fint(handle));
  if (comm == MPI_COMM_NULL)
    throw py::value_error("comm: MPI_COMM_NULL");
  return comm;
}
#else
[[noreturn]] void noMPI() {
  throw py::value_error("comm: this mha was built without MPI (CMake found "
                        "none: install libopenmpi-dev, e.g. with `make "
                        "deps`, and configure again)");
}
#endif
} // namespace

void registerParallel(py::module_ &m) {
  m.def("split_heads", &splitHeads, py::arg("text"), py::arg("entry"),
        py::arg("rank"), py::arg("ranks"));
  m.def("comm_rank_size", [](int64_t handle) {
#ifdef MHA_HAVE_MPI
    MPI_Comm comm = communicator(handle);
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    return std::make_tuple(rank, size);
#else
    noMPI();
#endif
  });
  // Every rank says whether it is ready (state 0) or stopped (1 + code) and
  // what it was given; when all agree, `result` (float32, C order, ready
  // ranks only) becomes the sum over the ranks. Returns (reason, rank,
  // code) of runtime/RankAgreement.h's mha_rank_disagreement.
  m.def("rank_add_up", [](int64_t handle, uint64_t state, uint64_t inputHash,
                          std::optional<py::array_t<float>> result) {
#ifdef MHA_HAVE_MPI
    MPI_Comm comm = communicator(handle);
    mha_rank_state mine = {state, 0, 0, inputHash};
    float *values = nullptr;
    if (result) {
      if (!(result->flags() & py::array::c_style) || !result->writeable())
        throw py::value_error("rank_add_up: a writable C-order result");
      values = result->mutable_data();
      mine.elements = uint64_t(result->size());
      std::vector<int64_t> shape(result->shape(),
                                 result->shape() + result->ndim());
      mine.shape_hash =
          mha_rank_hash(0, shape.data(), shape.size() * sizeof(int64_t));
    }
    mha_rank_disagreement found;
    {
      py::gil_scoped_release release;
      found = mha_rank_agree(comm, &mine);
      if (found.reason == MHA_RANKS_AGREE && values &&
          mha_rank_sum(comm, values, int64_t(mine.elements)) != MPI_SUCCESS)
        found.reason = MHA_RANK_MPI_FAILED;
    }
    return std::make_tuple(int(found.reason), found.rank, found.code);
#else
    noMPI();
#endif
  });
}

} // namespace mha::python
