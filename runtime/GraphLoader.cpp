//===- GraphLoader.cpp - Read a graph file and find its entry -------------===//

#include "runtime/GraphLoader.h"

#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

namespace mha::runtime {

/// The function to run: `entryName`, else the one public function.
static llvm::Expected<func::FuncOp>
findEntry(ModuleOp module, llvm::StringRef path, llvm::StringRef entryName) {
  if (!entryName.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(entryName);
    if (!func || func.isExternal())
      return llvm::createStringError(
          llvm::formatv("no function @{0} in {1}", entryName, path));
    return func;
  }
  SmallVector<func::FuncOp> candidates;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      candidates.push_back(func);
  if (candidates.size() != 1)
    return llvm::createStringError(
        llvm::formatv("{0} has {1} public functions; name the one to run "
                      "with --entry",
                      path, candidates.size()));
  return candidates.front();
}

llvm::Expected<LoadedGraph> loadGraph(llvm::StringRef path,
                                      llvm::StringRef entryName,
                                      MLIRContext &context) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (std::error_code error = buffer.getError())
    return llvm::createStringError(
        llvm::formatv("cannot read graph '{0}': {1}", path, error.message()));
  LoadedGraph graph;
  graph.sourceMgr = std::make_unique<llvm::SourceMgr>();
  graph.sourceMgr->AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  graph.diagnostics =
      std::make_unique<SourceMgrDiagnosticHandler>(*graph.sourceMgr, &context);
  graph.module = parseSourceFile<ModuleOp>(*graph.sourceMgr, &context);
  if (!graph.module)
    return llvm::createStringError("cannot load graph " + path);
  auto entry = findEntry(*graph.module, path, entryName);
  if (!entry)
    return entry.takeError();
  graph.entry = *entry;
  auto signature = readSignature(graph.entry);
  if (!signature)
    return signature.takeError();
  graph.signature = std::move(*signature);
  return graph;
}

} // namespace mha::runtime
