//===- GraphLoader.cpp - Read a graph file and find its entry -------------===//

#include "runtime/GraphLoader.h"

#include "runtime/GraphChecks.h"

#include "mlir/Parser/Parser.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

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

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readGraphFile(llvm::StringRef path, uint64_t limit) {
  llvm::sys::fs::file_t file = llvm::sys::fs::getStdinHandle();
  bool isStdin = path == "-";
  if (!isStdin) {
    auto opened = llvm::sys::fs::openNativeFileForRead(path);
    if (!opened)
      return opened.takeError();
    file = *opened;
  }
  llvm::scope_exit closeFile([&] {
    if (!isStdin)
      llvm::sys::fs::closeFile(file);
  });

  // MLIR bytecode (magic "ML\xEFR") is binary; text never holds a NUL, so
  // the first one ends the read of a device such as /dev/zero.
  constexpr llvm::StringLiteral kBytecodeMagic("ML\xEFR");
  std::string text;
  size_t checked = 0;
  auto checkText = [&]() -> llvm::Error {
    llvm::StringRef bytes(text);
    if (bytes.starts_with(kBytecodeMagic))
      return llvm::Error::success();
    size_t nul = bytes.find('\0', checked);
    checked = bytes.size();
    if (nul == llvm::StringRef::npos)
      return llvm::Error::success();
    return llvm::createStringError(llvm::formatv(
        "not text: byte {0} is NUL (expected MLIR text or bytecode)", nul));
  };
  constexpr size_t kChunk = 64 << 10;
  while (true) {
    size_t start = text.size();
    // One byte beyond the limit tells a file of exactly `limit` bytes from
    // a longer one.
    size_t want = std::min<uint64_t>(kChunk, limit + 1 - start);
    text.resize(start + want);
    auto got = llvm::sys::fs::readNativeFile(
        file, llvm::MutableArrayRef(text.data() + start, want));
    if (!got)
      return got.takeError();
    text.resize(start + *got);
    if (*got == 0)
      break;
    if (text.size() > limit)
      return llvm::createStringError(llvm::formatv(
          "larger than the {0} bytes a graph file may take", limit));
    // Until the magic could be there, a NUL may still start bytecode.
    if (text.size() >= kBytecodeMagic.size())
      if (llvm::Error error = checkText())
        return std::move(error);
  }
  if (llvm::Error error = checkText())
    return std::move(error);
  return llvm::MemoryBuffer::getMemBufferCopy(text, path);
}

llvm::Expected<LoadedGraph> loadGraph(llvm::StringRef path,
                                      llvm::StringRef entryName,
                                      MLIRContext &context) {
  auto buffer = readGraphFile(path);
  if (!buffer)
    return llvm::createStringError(
        llvm::formatv("cannot read graph '{0}': {1}", path,
                      llvm::toString(buffer.takeError())));
  // The buffer is named by the path, which the diagnostics then show.
  return loadGraphBuffer(std::move(*buffer), entryName, context, llvm::errs());
}

llvm::Expected<LoadedGraph>
loadGraphBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                llvm::StringRef entryName, MLIRContext &context,
                llvm::raw_ostream &diagnosticsStream) {
  std::string name = buffer->getBufferIdentifier().str();
  LoadedGraph graph;
  graph.sourceMgr = std::make_unique<llvm::SourceMgr>();
  graph.sourceMgr->AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  graph.diagnostics = std::make_unique<SourceMgrDiagnosticHandler>(
      *graph.sourceMgr, &context, diagnosticsStream);
  graph.module = parseSourceFile<ModuleOp>(*graph.sourceMgr, &context);
  if (!graph.module)
    return llvm::createStringError("cannot load graph " + name);
  auto entry = findEntry(*graph.module, name, entryName);
  if (!entry)
    return entry.takeError();
  graph.entry = *entry;
  // Before the signature: its size relations walk the ops, and the output
  // check follows calls, which must end.
  if (llvm::Error error = checkCalls(graph.entry))
    return std::move(error);
  auto signature = readSignature(graph.entry);
  if (!signature)
    return signature.takeError();
  graph.signature = std::move(*signature);
  if (llvm::Error error = checkOutputIsComputed(graph.entry, graph.signature))
    return std::move(error);
  return graph;
}

} // namespace mha::runtime
