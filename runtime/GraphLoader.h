//===- GraphLoader.h - Read a graph file and find its entry -----*- C++ -*-===//
//
// What mha-run and mha-compile do first: parse and verify a graph file, with
// diagnostics that name the file, line and column, and pick the function to
// run or compile.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_GRAPHLOADER_H
#define MHA_RUNTIME_GRAPHLOADER_H

#include "runtime/GraphSignature.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>

namespace mha {
namespace runtime {

/// A parsed, verified graph and the function to run.
struct LoadedGraph {
  /// Owns the file's text; diagnostics about the graph point into it.
  std::unique_ptr<llvm::SourceMgr> sourceMgr;
  /// Prints diagnostics with file, line and column for as long as the graph
  /// lives (parsing, verification, and the passes run on it later).
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> diagnostics;
  /// The graph.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// The entry function.
  mlir::func::FuncOp entry;
  /// The entry function's arguments and result.
  GraphSignature signature;
};

/// Reads `path` (`-` for stdin) into `context`, verifies it and finds the
/// function `entryName`, or the one public function when `entryName` is
/// empty. Parse and verifier diagnostics are printed as they happen; the
/// returned error says what failed in one line.
llvm::Expected<LoadedGraph> loadGraph(llvm::StringRef path,
                                      llvm::StringRef entryName,
                                      mlir::MLIRContext &context);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_GRAPHLOADER_H
