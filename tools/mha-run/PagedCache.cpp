//===- PagedCache.cpp - The block table of a paged cache graph ------------===//

#include "tools/mha-run/PagedCache.h"
#include "tools/mha-run/Decode.h"

#include "runtime/BlockTableCheck.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <numeric>
#include <random>

using namespace ::mha::runtime;

namespace mha::tools {

static llvm::Error createError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::vector<int64_t> getCacheShape(const CacheGraph &graph, int64_t batch,
                                   bool key) {
  int64_t width = key ? graph.keyDim : graph.valueDim;
  if (!graph.isPaged())
    return {batch, graph.kvHeads, graph.capacity, width};
  int64_t pages = mlir::ShapedType::isDynamic(graph.poolPages)
                      ? batch * graph.pagesPerSequence
                      : graph.poolPages;
  return {pages, graph.kvHeads, graph.pageSize, width};
}

std::string takeBlockTablePath(const CacheGraph &graph,
                               runtime::InputOptions &options) {
  if (!graph.isPaged())
    return "";
  std::string prefix = (kBlockTableName + "=").str();
  std::string path;
  // The last --input of the table wins, as bindInputs' do.
  llvm::erase_if(options.files, [&](const std::string &file) {
    if (!llvm::StringRef(file).starts_with(prefix))
      return false;
    path = file.substr(prefix.size());
    return true;
  });
  if (!path.empty() || options.directory.empty())
    return path;
  llvm::SmallString<128> inDirectory(options.directory);
  llvm::sys::path::append(inDirectory, kBlockTableName + ".npy");
  return llvm::sys::fs::exists(inDirectory) ? inDirectory.str().str() : "";
}

llvm::Expected<NpyArray> makeBlockTable(const CacheGraph &graph, int64_t batch,
                                        int64_t poolPages,
                                        const std::string &path,
                                        uint64_t seed) {
  int64_t perSequence = graph.pagesPerSequence;
  std::vector<int64_t> shape = {batch, perSequence};
  if (!path.empty()) {
    auto table = readNpy(path);
    if (!table)
      return table.takeError();
    if (table->elementType != ElementType::I32 || table->shape != shape)
      return createError(llvm::formatv(
          "block_table from '{0}' must be an int32 array of shape {1}, got {2} "
          "of shape {3}",
          path, formatShape(shape), getElementTypeName(table->elementType),
          formatShape(table->shape)));
    return std::move(*table);
  }
  if (poolPages < batch * perSequence)
    return createError(llvm::formatv(
        "the pools hold {0} pages, but {1} sequences of {2} pages need {3}: "
        "give a block_table (--input block_table=FILE.npy)",
        poolPages, batch, perSequence, batch * perSequence));
  std::vector<int32_t> pages(poolPages);
  std::iota(pages.begin(), pages.end(), 0);
  std::mt19937_64 engine(seed);
  std::shuffle(pages.begin(), pages.end(), engine);
  NpyArray table = NpyArray::zeros(ElementType::I32, shape);
  std::copy_n(pages.begin(), batch * perSequence, table.i32());
  return table;
}

llvm::Error checkBlockTable(const CacheGraph &graph, const NpyArray &table,
                            int64_t poolPages, llvm::ArrayRef<int64_t> lengths,
                            int64_t prefill, int64_t steps) {
  // The whole run as one call: the rows each sequence reaches.
  std::vector<int64_t> rows;
  for (int64_t length : lengths)
    rows.push_back(std::max(prefill, length + steps));
  runtime::PagedCall call;
  call.table = table.i32();
  call.batch = int64_t(rows.size());
  call.perSequence = table.shape[1];
  call.poolPages = poolPages;
  call.pageSize = graph.pageSize;
  call.lengths = rows.data();
  call.when = "by the end of the run";
  return runtime::checkPagedCall(call);
}

llvm::Error checkCallBlockTable(const GraphSignature &signature,
                                llvm::ArrayRef<NpyArray> inputs) {
  int table = signature.findArgument(kBlockTableName);
  int pool = signature.findArgument(kKeyPoolName);
  int lengths = signature.findArgument(kCacheLengthsName);
  int x = signature.findArgument("x");
  if (table < 0 || pool < 0 || lengths < 0 || x < 0)
    return llvm::Error::success();
  const NpyArray &t = inputs[table], &p = inputs[pool], &l = inputs[lengths];
  const NpyArray &tokens = inputs[x];
  if (t.elementType != ElementType::I32 || t.shape.size() != 2 ||
      p.shape.size() != 4 || l.elementType != ElementType::I64 ||
      l.shape.size() != 1 || tokens.shape.size() != 3 ||
      l.shape[0] != t.shape[0])
    return llvm::Error::success();
  runtime::PagedCall call;
  call.table = t.i32();
  call.batch = t.shape[0];
  call.perSequence = t.shape[1];
  call.poolPages = p.shape[0];
  call.pageSize = p.shape[2];
  call.lengths = l.i64();
  call.newRows = tokens.shape[1];
  return runtime::checkPagedCall(call);
}

} // namespace mha::tools
