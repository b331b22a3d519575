//===- ParallelLibrary.h - A library split by heads across ranks -*- C++
//-*-===//
//
// `mha-compile --parallel heads --ranks N` (docs/distributed.md): a library
// whose functions every rank of an MPI communicator calls with the same full
// arguments, as every rank of `mha-run --parallel heads` reads the same full
// inputs. The split (`mha-split-heads`) narrows the weights to each rank's
// slices and keeps the graph's code the same on every rank but for the
// output bias, which only rank 0's adds: so the library compiles rank 0's
// graph once, as an inner library with the prefix NAME_share, and the
// public functions cut each rank's share from the full arrays (its slices,
// and zeros for the output bias on the other ranks), call the inner ones
// and add up the ranks' outputs with one all-reduce, after the ranks agree
// that each is ready with the same arguments (runtime/RankAgreement.h).
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHACOMPILE_PARALLELLIBRARY_H
#define MHA_TOOLS_MHACOMPILE_PARALLELLIBRARY_H

#include "tools/mha-compile/CInterface.h"

#include "runtime/GraphLoader.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mha::compile {

/// How one rank's argument is cut from the caller's full array.
struct ArgumentShare {
  enum Kind { Whole, Slice, Zeros };
  Kind kind = Whole;
  /// A slice: [offset, offset + size) along `dim`, of a full `fullSize`.
  int64_t dim = 0, offset = 0, size = 0, fullSize = 0;
};

/// What the public functions of a split library need besides the inner
/// library's interface.
struct ParallelLayout {
  /// The public functions' arguments: the full graph's.
  runtime::GraphSignature fullSignature;
  runtime::SizeRelations fullRelations;
  /// shares[rank][argument].
  std::vector<std::vector<ArgumentShare>> shares;
};

/// Splits `graph`'s entry among `ranks` ranks with mha-split-heads and
/// replaces `graph`'s module, entry and signature by rank 0's. Fails (a
/// usage error) for what the split refuses, for a graph with arguments
/// updated in place (key/value caches), and for a graph whose ranks would
/// need other code than rank 0's.
llvm::Expected<ParallelLayout> splitAmongRanks(runtime::LoadedGraph &graph,
                                               int64_t ranks);

/// The C that defines the public functions (NAME_create, NAME_call,
/// NAME_run, ..., NAME_set_communicator) of `full` on top of the inner
/// library `share`, whose header is at `shareHeader`; `full`'s header is at
/// `fullHeader`. It includes runtime/RankAgreement.c, beside it.
std::string writeParallelWrapper(const LibraryInterface &full,
                                 const LibraryInterface &share,
                                 const ParallelLayout &layout,
                                 llvm::StringRef fullHeader,
                                 llvm::StringRef shareHeader);

/// The header's declarations of NAME_set_communicator and NAME_OTHER_RANK,
/// for a library of `interface.ranks` ranks.
void writeParallelDeclarations(llvm::raw_ostream &os,
                               const LibraryInterface &interface);

} // namespace mha::compile

#endif // MHA_TOOLS_MHACOMPILE_PARALLELLIBRARY_H
