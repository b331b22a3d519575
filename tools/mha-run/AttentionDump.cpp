//===- AttentionDump.cpp - Write attention weights as files ---------------===//

#include "tools/mha-run/AttentionDump.h"
#include "compiler/strategy/AttentionPath.h"
#include "dialects/MhaOps.h"
#include "runtime/AttentionProblem.h"
#include "tools/support/Heatmap.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace mha::runtime;
using llvm::createStringError;

llvm::Error mha::runtime::checkOneAttention(mlir::func::FuncOp function) {
  int64_t count = 0;
  function.walk([&](mlir::Operation *op) {
    count += mlir::isa<mlir::mha::AttentionOp, mlir::mha::SdpaOp>(op);
  });
  if (count == 1)
    return llvm::Error::success();
  return createStringError(
      llvm::formatv("--dump-attention needs exactly one attention "
                    "(mha.attention or mha.sdpa) in @{0}, found {1}",
                    function.getSymName(), count));
}

std::vector<std::string> mha::runtime::splitTokens(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> words;
  llvm::SplitString(text, words);
  return std::vector<std::string>(words.begin(), words.end());
}

std::string mha::runtime::heatmapFileName(int64_t batch, int64_t head,
                                          int64_t batchSize) {
  if (batchSize == 1)
    return llvm::formatv("head{0}.png", head);
  return llvm::formatv("batch{0}_head{1}.png", batch, head);
}

/// Whether `name` is a name heatmapFileName gives.
static bool isHeatmapFileName(llvm::StringRef name) {
  auto consumeNumber = [&] {
    size_t digits = std::min(name.find_first_not_of("0123456789"), name.size());
    if (digits == 0)
      return false;
    name = name.drop_front(digits);
    return true;
  };
  if (!name.consume_back(".png"))
    return false;
  if (name.consume_front("batch") &&
      !(consumeNumber() && name.consume_front("_")))
    return false;
  return name.consume_front("head") && consumeNumber() && name.empty();
}

std::vector<std::string>
mha::runtime::listDumpTargets(llvm::StringRef directory) {
  llvm::SmallString<256> npyPath(directory);
  llvm::sys::path::append(npyPath, "attention.npy");
  std::vector<std::string> targets = {npyPath.str().str()};
  std::error_code error;
  for (llvm::sys::fs::directory_iterator entry(directory, error), end;
       !error && entry != end; entry.increment(error))
    if (isHeatmapFileName(llvm::sys::path::filename(entry->path())))
      targets.push_back(entry->path());
  return targets;
}

/// Checks, before anything is written, that `tokens` can label the map.
static llvm::Error checkTokens(const std::vector<std::string> &tokens,
                               int64_t queries, int64_t keys) {
  if (tokens.empty())
    return llvm::Error::success();
  if (queries != keys)
    return createStringError(llvm::formatv(
        "--tokens labels queries and keys alike, but there are {0} queries "
        "and {1} keys (cross-attention); leave --tokens out",
        queries, keys));
  if (int64_t(tokens.size()) != queries)
    return createStringError(
        llvm::formatv("--tokens has {0} words, but the sequence has {1} "
                      "tokens (T = S = {1})",
                      tokens.size(), queries));
  return llvm::Error::success();
}

llvm::Error
mha::runtime::checkTokensFit(mlir::func::FuncOp function,
                             const std::vector<NpyArray> &inputs,
                             const std::vector<std::string> &tokens) {
  if (tokens.empty())
    return llvm::Error::success();
  std::optional<mlir::mha::AttentionShape> shape;
  function.walk([&](mlir::Operation *op) {
    if (auto found = mlir::mha::getAttentionShape(op))
      shape = found;
  });
  if (!shape)
    return llvm::Error::success();
  int64_t queries = shape->queries, keys = shape->keys;
  if (mlir::ShapedType::isDynamic(queries) ||
      mlir::ShapedType::isDynamic(keys)) {
    // `?` sizes: an mha.attention's come from the inputs.
    auto problem = describeAttention(function, inputs);
    if (!problem) {
      llvm::consumeError(problem.takeError());
      return llvm::Error::success();
    }
    queries = problem->shape.seqLen;
    keys = problem->shape.kvSeqLen;
  }
  return checkTokens(tokens, queries, keys);
}

llvm::Error mha::runtime::dumpAttention(const NpyArray &weights,
                                        llvm::StringRef directory,
                                        llvm::StringRef graph,
                                        const std::vector<std::string> &tokens,
                                        llvm::raw_ostream &log) {
  if (weights.shape.size() != 4)
    return createStringError("attention weights must be [B, H, T, S], got " +
                             formatShape(weights.shape));
  int64_t batchSize = weights.shape[0], heads = weights.shape[1];
  int64_t queries = weights.shape[2], keys = weights.shape[3];
  if (auto error = checkTokens(tokens, queries, keys))
    return error;
  if (std::error_code error = llvm::sys::fs::create_directories(directory))
    return createStringError(
        llvm::formatv("cannot create '{0}': {1}", directory, error.message()));

  auto pathOf = [&](llvm::StringRef name) {
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, name);
    return path.str().str();
  };
  std::string npyPath = pathOf("attention.npy");
  if (auto error = writeNpy(npyPath, weights))
    return error;

  HeatmapLabels labels;
  labels.rows = tokens;
  labels.columns = tokens;
  std::vector<std::string> pictures;
  for (int64_t b = 0; b < batchSize; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      labels.title = llvm::formatv("{0}: head {1} of {2}", graph, h, heads);
      if (batchSize > 1)
        labels.title += llvm::formatv(", batch element {0}", b).str();
      pictures.push_back(pathOf(heatmapFileName(b, h, batchSize)));
      const float *map = weights.f32() + (b * heads + h) * queries * keys;
      if (auto error =
              writeHeatmapPng(pictures.back(), map, queries, keys, labels))
        return error;
    }
  }
  log << "attention weights " << formatShape(weights.shape) << ": " << npyPath
      << ", " << pictures.size() << (pictures.size() == 1 ? " map " : " maps ")
      << pictures.front();
  if (pictures.size() > 1)
    log << " ... " << pictures.back();
  log << "\n";
  // Said in words too: a red cell is easy to miss in a large map.
  if (int64_t nonFinite = countNonFinite(weights.f32(), weights.numElements()))
    log << llvm::formatv("attention weights: {0} of {1} are NaN or infinite "
                         "(drawn in red)\n",
                         nonFinite, weights.numElements());
  return llvm::Error::success();
}
