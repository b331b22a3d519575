//===- Parallel.h - mha._mha's split of a layer by heads --------*- C++ -*-===//
//
// Private to the Python module: what python/mha/parallel.py needs in C++
// to run a layer split by heads across the ranks of an MPI communicator
// (docs/distributed.md), as `mha-run --parallel heads` does: the graph of
// one rank's share (mha-split-heads), and the ranks' agreement and
// all-reduce of runtime/RankAgreement.h. The communicator comes as its
// Fortran handle (mpi4py's Comm.py2f(), or MPI_Comm_c2f of a C one), so
// that the module needs neither mpi4py's headers nor mpi4py itself.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_PYTHON_PARALLEL_H
#define MHA_PYTHON_PARALLEL_H

#include <pybind11/pybind11.h>

namespace mha::python {

/// Adds split_heads, comm_rank_size and rank_add_up to `module`.
void registerParallel(pybind11::module_ &module);

} // namespace mha::python

#endif // MHA_PYTHON_PARALLEL_H
