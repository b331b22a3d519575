//===- CInterface.h - The C header and wrapper of a library -----*- C++ -*-===//
//
// A compiled graph exports `_mlir_ciface_<graph>`, which takes MLIR memref
// descriptors. Users get a plain C function instead: data pointers and
// shapes in, the result written into their buffer, every size checked first
// and a status code out. mha-compile writes its declaration (the header) and
// its definition (C, compiled into the library). The wrapper checks what
// mha-run checks before it runs a graph: the static sizes, the relations
// between the `?` sizes (runtime::deriveSizeRelations) and that mask bytes
// are 0 or 1, so that no call the graph does not fit reaches compiled code.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHACOMPILE_CINTERFACE_H
#define MHA_TOOLS_MHACOMPILE_CINTERFACE_H

#include "runtime/GraphSignature.h"

#include <string>

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
};

/// Returns the text of the header declaring `NAME_run` and its status codes.
std::string writeHeader(const LibraryInterface &interface);

/// Returns the C source that defines `NAME_run` on top of the graph's
/// C-interface function; it includes the header at `headerPath`.
std::string writeWrapper(const LibraryInterface &interface,
                         llvm::StringRef headerPath);

/// Turns `text` into a C identifier (letters, digits, `_`; no leading digit).
std::string toCIdentifier(llvm::StringRef text);

} // namespace compile
} // namespace mha

#endif // MHA_TOOLS_MHACOMPILE_CINTERFACE_H
