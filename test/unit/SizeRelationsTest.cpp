//===- SizeRelationsTest.cpp - Derived size relations vs the verifiers ----===//
//
// mha-compile's libraries check the relations that runtime::
// deriveSizeRelations reads off the mha ops, while mha-run verifies a copy of
// the graph specialized to the input shapes (checkShapesFitTogether). The two
// are written separately, so this differential test holds them together: on
// every graph of test/aot/Inputs/graphs and test/unit/Inputs/graphs and many
// argument shapes, both accept exactly the same ones.
//
//===----------------------------------------------------------------------===//

#include "runtime/GraphLoader.h"
#include "runtime/GraphSignature.h"

#include "dialects/MhaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

using namespace mha::runtime;

namespace {
/// Every `?` dimension of the arguments, in argument order.
std::vector<ArgumentDim> dynamicDims(const GraphSignature &signature) {
  std::vector<ArgumentDim> dims;
  for (auto [index, argument] : llvm::enumerate(signature.arguments))
    for (auto [dim, size] : llvm::enumerate(argument.type.getShape()))
      if (mlir::ShapedType::isDynamic(size))
        dims.push_back({unsigned(index), unsigned(dim)});
  return dims;
}

std::string describe(llvm::ArrayRef<std::vector<int64_t>> shapes,
                     const GraphSignature &signature) {
  std::string text;
  for (auto [argument, shape] : llvm::zip(signature.arguments, shapes))
    text += argument.name + formatShape(shape) + " ";
  return text;
}

/// Graphs to compare on: those of the ahead-of-time tests, and those only
/// this test needs (a KV-cache layer with `?` batch, length and capacity,
/// whose T <= C is a bound, not an equality); the folders are passed in by
/// CMake.
std::vector<std::string> graphFiles() {
  std::vector<std::string> files;
  for (const char *folder : {MHA_AOT_GRAPHS_DIR, MHA_UNIT_GRAPHS_DIR}) {
    std::error_code error;
    for (llvm::sys::fs::directory_iterator it(folder, error), end;
         it != end && !error; it.increment(error))
      if (llvm::sys::path::extension(it->path()) == ".mlir")
        files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(SizeRelationsTest, AcceptExactlyWhatTheVerifiersAccept) {
  std::vector<std::string> files = graphFiles();
  ASSERT_GE(files.size(), 8u) << "graphs in " << MHA_AOT_GRAPHS_DIR;
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, mlir::mha::MhaDialect>();
  for (const std::string &file : files) {
    SCOPED_TRACE(file);
    auto graph = loadGraph(file, "", context);
    ASSERT_TRUE(bool(graph)) << llvm::toString(graph.takeError());
    const GraphSignature &signature = graph->signature;
    ASSERT_TRUE(signature.sizeRelations.has_value());
    const SizeRelations &relations = *signature.sizeRelations;
    std::vector<std::string> names;
    std::vector<mlir::RankedTensorType> types;
    for (const GraphArgument &argument : signature.arguments) {
      names.push_back(argument.name);
      types.push_back(argument.type);
    }
    std::vector<ArgumentDim> dims = dynamicDims(signature);
    ASSERT_FALSE(dims.empty());

    // Candidate sizes: small ones, and the graph's static sizes, which `?`
    // sizes may be tied to.
    std::set<int64_t> candidateSet = {1, 2, 3};
    for (mlir::RankedTensorType type : types)
      for (int64_t size : type.getShape())
        if (!mlir::ShapedType::isDynamic(size) && size <= 8)
          candidateSet.insert(size);
    std::vector<int64_t> candidates(candidateSet.begin(), candidateSet.end());

    // All combinations where there are few, else random ones and shapes
    // one or two sizes away from a fitting one.
    std::vector<std::vector<int64_t>> valid =
        relations.pickShapes(types, /*freeSize=*/3);
    std::vector<std::vector<std::vector<int64_t>>> trials = {valid};
    double combinations = std::pow(candidates.size(), dims.size());
    std::mt19937_64 engine(42);
    auto pick = [&] { return candidates[engine() % candidates.size()]; };
    if (combinations <= 2048) {
      for (int64_t code = 0; code < int64_t(combinations); ++code) {
        auto shapes = valid;
        int64_t rest = code;
        for (ArgumentDim dim : dims) {
          shapes[dim.argument][dim.dim] = candidates[rest % candidates.size()];
          rest /= candidates.size();
        }
        trials.push_back(shapes);
      }
    } else {
      for (int i = 0; i < 2048; ++i) {
        auto shapes = valid;
        if (i % 2) {
          for (ArgumentDim dim : dims)
            shapes[dim.argument][dim.dim] = pick();
        } else {
          for (int changes = 1 + i % 3 / 2; changes > 0; --changes) {
            ArgumentDim dim = dims[engine() % dims.size()];
            shapes[dim.argument][dim.dim] = pick();
          }
        }
        trials.push_back(shapes);
      }
    }

    int accepted = 0, refused = 0;
    for (const auto &shapes : trials) {
      llvm::Error verified = checkShapesFitTogether(graph->entry, shapes);
      llvm::Error derived = relations.check(shapes, names);
      bool verifierAccepts = !verified, relationsAccept = !derived;
      std::string why = verified ? llvm::toString(std::move(verified))
                                 : llvm::toString(std::move(derived));
      ASSERT_EQ(verifierAccepts, relationsAccept)
          << describe(shapes, signature) << ": " << why;
      ++(verifierAccepts ? accepted : refused);
    }
    // Both outcomes occur, so that the comparison says something.
    EXPECT_GT(accepted, 1);
    EXPECT_GT(refused, 1);
  }
}

/// x [2, 3, 4] with kv [?, ?, 4]: kv's batch is fixed to 2 by x, a mask
/// batch is 1 or 2.
TEST(SizeRelationsTest, StaticQueryFixesTheKeyBatch) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, mlir::mha::MhaDialect>();
  llvm::SmallString<256> file(MHA_AOT_GRAPHS_DIR);
  llvm::sys::path::append(file, "static-x-cross-mask.mlir");
  auto graph = loadGraph(file, "", context);
  ASSERT_TRUE(bool(graph)) << llvm::toString(graph.takeError());
  const SizeRelations &relations = *graph->signature.sizeRelations;
  std::vector<std::string> names = {"x", "kv", "mask"};
  for (int i = 3; i < 11; ++i)
    names.push_back("w" + std::to_string(i));
  auto shapes = [](int64_t kvBatch, int64_t maskBatch) {
    std::vector<std::vector<int64_t>> result = {
        {2, 3, 4}, {kvBatch, 5, 4}, {maskBatch, 3, 5}};
    for (int i = 0; i < 4; ++i)
      result.push_back({4, 4});
    for (int i = 0; i < 4; ++i)
      result.push_back({4});
    return result;
  };
  EXPECT_FALSE(bool(relations.check(shapes(2, 2), names)));
  EXPECT_FALSE(bool(relations.check(shapes(2, 1), names)));
  llvm::Error wrongKv = relations.check(shapes(3, 2), names);
  EXPECT_EQ(llvm::toString(std::move(wrongKv)), "kv[0] must be 2, got 3");
  llvm::Error wrongMask = relations.check(shapes(2, 3), names);
  EXPECT_EQ(llvm::toString(std::move(wrongMask)),
            "mask[0] (3) must be 1 or equal 2 (2)");
}
/// A KV-cache layer with `?` batch, new tokens and capacity: the batch is
/// shared by x, the caches and the lengths, both caches have one capacity,
/// and the new tokens must fit in it (T <= C, a bound); pickShapes picks
/// shapes that fit.
TEST(SizeRelationsTest, CacheCapacityBoundsTheNewTokens) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, mlir::mha::MhaDialect>();
  llvm::SmallString<256> file(MHA_UNIT_GRAPHS_DIR);
  llvm::sys::path::append(file, "kv-cache-dynamic.mlir");
  auto graph = loadGraph(file, "", context);
  ASSERT_TRUE(bool(graph)) << llvm::toString(graph.takeError());
  const GraphSignature &signature = graph->signature;
  EXPECT_EQ(signature.resultIndex, 0u);
  ASSERT_EQ(signature.resultAliases.size(), 3u);
  EXPECT_EQ(signature.resultAliases[1], std::optional<unsigned>(5));
  EXPECT_EQ(signature.resultAliases[2], std::optional<unsigned>(6));
  ASSERT_TRUE(signature.sizeRelations.has_value());
  const SizeRelations &relations = *signature.sizeRelations;
  std::vector<std::string> names;
  for (const GraphArgument &argument : signature.arguments)
    names.push_back(argument.name);
  auto shapes = [](int64_t batch, int64_t tokens, int64_t kCapacity,
                   int64_t vCapacity, int64_t lengths) {
    return std::vector<std::vector<int64_t>>{
        {batch, tokens, 8}, {8, 8},  {8, 4},   {8, 2},
        {4, 8},             {batch, 2, kCapacity, 2},
        {batch, 2, vCapacity, 1},    {lengths}};
  };
  EXPECT_FALSE(bool(relations.check(shapes(2, 3, 3, 3, 2), names)));
  EXPECT_FALSE(bool(checkShapesFitTogether(graph->entry, shapes(2, 3, 3, 3, 2))));
  llvm::Error over = relations.check(shapes(2, 4, 3, 3, 2), names);
  EXPECT_EQ(llvm::toString(std::move(over)),
            "x[1] (4) must be at most k_cache[2] (3)");
  EXPECT_TRUE(bool(checkShapesFitTogether(graph->entry, shapes(2, 4, 3, 3, 2))));
  llvm::Error capacities = relations.check(shapes(2, 1, 3, 4, 2), names);
  EXPECT_EQ(llvm::toString(std::move(capacities)),
            "v_cache[2] (4) must equal k_cache[2] (3)");
  llvm::Error lengths = relations.check(shapes(2, 1, 3, 3, 3), names);
  EXPECT_EQ(llvm::toString(std::move(lengths)),
            "cache_lengths[0] (3) must equal x[0] (2)");
  std::vector<mlir::RankedTensorType> types;
  for (const GraphArgument &argument : signature.arguments)
    types.push_back(argument.type);
  EXPECT_FALSE(bool(relations.check(relations.pickShapes(types, 5), names)));
}
} // namespace
