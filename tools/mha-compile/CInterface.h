//===- CInterface.h - The C header and wrapper of a library -----*- C++ -*-===//
//
// A compiled graph exports `_mlir_ciface_<graph>`, which takes MLIR memref
// descriptors. Users get plain C functions instead: data pointers and
// shapes in, the result written into their buffer, every size checked first
// and a status code out. mha-compile writes their declarations (the header)
// and definitions (C, compiled into the library). The wrapper checks what
// mha-run checks before it runs a graph: the static sizes, the relations
// between the `?` sizes (runtime::deriveSizeRelations) and that mask bytes
// are 0 or 1, so that no call the graph does not fit reaches compiled code.
//
// Like mha-run, a library prepares the weights once: `NAME_create` takes
// the weights, runs the graph's prepare functions (mha-prepare-weights) and
// keeps their buffers in a handle; `NAME_call` takes the other arguments.
// `NAME_run` takes everything in one call. The wrapper also defines the
// compiled code's allocation functions (`_mlir_memref_to_llvm_alloc`, ...):
// a small cache that keeps large buffers between calls, as the JIT's
// runtime/BufferCache does.
//
// The part of the wrapper that is the same for every graph is plain C,
// library/mha_library.c; mha-compile embeds it at build time and writes it
// beside the generated part, which includes it.
//
// C has no bfloat16 type: a bf16 argument is taken as float32 and rounded
// to nearest even by the wrapper, the weights once by `NAME_create`, the
// other arguments on every call into scratch blocks the handle keeps.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHACOMPILE_CINTERFACE_H
#define MHA_TOOLS_MHACOMPILE_CINTERFACE_H

#include "runtime/GraphSignature.h"

#include <string>
#include <vector>

namespace mha {
namespace compile {

/// Everything the C interface of one library depends on.
struct LibraryInterface {
  /// The C prefix of every exported name (`NAME_run`, `NAME_last_error`).
  std::string name;
  /// The graph file, quoted in the header's comment.
  std::string graphFile;
  /// The C-interface function of the compiled graph.
  std::string graphSymbol;
  /// The graph's arguments and result.
  runtime::GraphSignature signature;
  /// What the `?` sizes must be.
  runtime::SizeRelations sizeRelations;
  /// For each argument, whether it is a weight (mlir::mha::getWeightArguments):
  /// `NAME_create` takes the weights, `NAME_call` the other arguments.
  std::vector<bool> isWeight;
  /// The C-interface symbols of the graph's prepare functions, as its
  /// `mha.prepare_functions` lists them; the graph takes their results as
  /// extra rank-1 arguments after its own, in this order.
  std::vector<std::string> prepareSymbols;
  /// Whether the compiled graph has AMX instructions (mha-bf16-amx): the
  /// wrapper then asks Linux for the tile data before the graph can run.
  bool usesAMX = false;
  /// The MPI ranks among which a library split by heads divides the layer
  /// (mha-compile --parallel heads --ranks N, ParallelLibrary.h); 0 for a
  /// library of one process.
  int64_t ranks = 0;
};

/// Returns the text of the header declaring the C API (`NAME_create`,
/// `NAME_call`, `NAME_destroy`, `NAME_run`, ...) and its status codes.
std::string writeHeader(const LibraryInterface &interface);

/// Returns the C source that defines the C API on top of the graph's
/// C-interface functions; it includes the header at `headerPath` and the
/// fixed part of the C API, `mha_library.c`, which must lie beside it
/// (librarySources).
std::string writeWrapper(const LibraryInterface &interface,
                         llvm::StringRef headerPath);

/// The fixed C that every wrapper includes (library/mha_library.c and what
/// it includes), as paths relative to the wrapper's folder and their text.
std::vector<std::pair<std::string, std::string>> librarySources();

/// The arguments whose float32 values the C API rounds to bf16 (the graph's
/// bf16 arguments), by their C names, in argument order.
std::vector<std::string> roundedArguments(const LibraryInterface &interface);

/// Turns `text` into a C identifier (letters, digits, `_`; no leading digit).
std::string toCIdentifier(llvm::StringRef text);

} // namespace compile
} // namespace mha

#endif // MHA_TOOLS_MHACOMPILE_CINTERFACE_H
