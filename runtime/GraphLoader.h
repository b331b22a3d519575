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
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
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

/// The largest graph file readGraphFile reads: far more than any graph mha
/// writes (they hold no weights), and bounded, so that an endless stream is
/// an error rather than an allocation that grows until it fails.
constexpr uint64_t kMaxGraphFileSize = uint64_t(256) << 20;

/// Reads the graph file at `path` (`-` for stdin) piece by piece, so that a
/// pipe or a device is read only as far as it needs to be: a file larger
/// than `limit`, or one with a NUL byte that is not MLIR bytecode, is an
/// error as soon as that part is read. The error says only what is wrong
/// ("Is a directory", "not text: ..."); the caller names the file.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readGraphFile(llvm::StringRef path, uint64_t limit = kMaxGraphFileSize);

/// Reads `path` (`-` for stdin) with readGraphFile into `context`, verifies it
/// and finds the function `entryName`, or the one public function when
/// `entryName` is empty. Parse and verifier diagnostics are printed as they
/// happen; the returned error says what failed in one line.
llvm::Expected<LoadedGraph> loadGraph(llvm::StringRef path,
                                      llvm::StringRef entryName,
                                      mlir::MLIRContext &context);

/// loadGraph for a graph already in memory (the Python package takes a
/// graph's text): parses `buffer`, whose identifier names it in messages,
/// and prints the parse, verifier and later diagnostics (the passes run on
/// the graph) to `diagnosticsStream`, which must outlive the graph.
llvm::Expected<LoadedGraph>
loadGraphBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                llvm::StringRef entryName, mlir::MLIRContext &context,
                llvm::raw_ostream &diagnosticsStream);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_GRAPHLOADER_H
