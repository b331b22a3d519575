//===- KvCacheInt8Test.cpp - Decoding with int8 key/value caches ----------===//
//
// Builds the decoding layer of `mha-gen --kv-cache C --cache-dtype int8`
// (LayerGraph), compiles it with the whole pipeline and the JIT, and decodes
// as KvCacheTest does: a prefill into empty caches, then one-token steps,
// the caches of codes and scales updated in place. The rows are checked in
// float64 by test/kv-cache-int8/Inputs/int8_cache_check.py (MHA_KV_DUMP_DIR),
// which quantizes the keys and values itself; here only what needs no
// reference: the scales start as NaN, so a read of the unused capacity
// shows, and a call without room writes neither codes nor scales.
//
//===----------------------------------------------------------------------===//

#include "DecodeHarness.h"

#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>

using namespace mha::runtime;
using namespace mha::testing;

namespace {

/// One decoding scenario with int8 caches.
struct Int8Case {
  const char *name;
  int64_t batch, prefill, steps, modelDim, heads, kvHeads, headDim, valueDim;
  /// Where each sequence's steps start (<= prefill); empty: at `prefill`.
  std::vector<int64_t> starts;
  /// Pipeline options ("" for the defaults).
  const char *options = "";
};

mha::graphs::LayerOptions layerOptions(const Int8Case &c, int64_t capacity) {
  mha::graphs::LayerOptions options;
  options.batch = c.batch;
  options.modelDim = c.modelDim;
  options.numHeads = c.heads;
  options.numKvHeads = c.kvHeads;
  options.headDim = c.headDim;
  options.valueDim = c.valueDim;
  options.kvCache = capacity;
  options.cacheDtype = "int8";
  options.dynamicBatch = options.dynamicSeq = true;
  return options;
}

void decode(const Int8Case &c) {
  SCOPED_TRACE(c.name);
  std::vector<int64_t> starts = c.starts;
  if (starts.empty())
    starts.assign(c.batch, c.prefill);
  int64_t longest = 0;
  for (int64_t start : starts)
    longest = std::max(longest, start);
  int64_t total = std::max(c.prefill, longest + c.steps);
  // The longest sequence ends exactly at the capacity.
  int64_t capacity = total;

  std::unique_ptr<CompiledLayer> compiled =
      compileLayer(layerOptions(c, capacity), c.options);
  ASSERT_TRUE(compiled);
  const GraphSignature &signature = compiled->graph.signature;
  ASSERT_EQ(signature.resultAliases.size(), 5u);
  EXPECT_EQ(signature.resultIndex, 0u);

  std::mt19937_64 engine(11);
  int64_t D = c.modelDim, H = c.heads, Hkv = c.kvHeads, dk = c.headDim,
          dv = c.valueDim;
  NpyArray tokens = randomArray({c.batch, total, D}, 1.0, engine);
  std::map<std::string, NpyArray> arrays =
      randomWeights(D, H, Hkv, dk, dv, /*bias=*/true, engine);
  arrays["tokens"] = tokens;
  // Codes of 0 and scales of NaN: the unused capacity must never be read.
  float nan = std::numeric_limits<float>::quiet_NaN();
  arrays["k_cache"] =
      NpyArray::zeros(ElementType::I8, {c.batch, Hkv, capacity, dk});
  arrays["v_cache"] =
      NpyArray::zeros(ElementType::I8, {c.batch, Hkv, capacity, dv});
  for (const char *scales : {"k_scales", "v_scales"}) {
    arrays[scales] =
        NpyArray::zeros(ElementType::F32, {c.batch, Hkv, capacity});
    std::fill_n(arrays[scales].f32(), arrays[scales].numElements(), nan);
  }
  arrays["cache_lengths"] = NpyArray::zeros(ElementType::I64, {c.batch});
  NpyArray &lengths = arrays["cache_lengths"];

  auto call = [&](const NpyArray &x) {
    return callLayer(*compiled, [&](llvm::StringRef name) {
      return name == "x" ? &x : &arrays.at(name.str());
    });
  };

  arrays["prefill"] =
      call(tokenRows(tokens, std::vector<int64_t>(c.batch, 0), c.prefill));
  ASSERT_EQ(arrays["prefill"].shape,
            (std::vector<int64_t>{c.batch, c.prefill, D}));

  NpyArray steps = NpyArray::zeros(ElementType::F32, {c.steps, c.batch, D});
  for (int64_t b = 0; b < c.batch; ++b)
    lengths.i64()[b] = starts[b];
  for (int64_t n = 0; n < c.steps; ++n) {
    std::vector<int64_t> rows(starts);
    for (int64_t &row : rows)
      row += n;
    NpyArray y = call(tokenRows(tokens, rows, 1));
    ASSERT_EQ(y.shape, (std::vector<int64_t>{c.batch, 1, D}));
    std::memcpy(steps.f32() + n * c.batch * D, y.f32(),
                c.batch * D * sizeof(float));
    for (int64_t b = 0; b < c.batch; ++b)
      lengths.i64()[b] += 1;
  }
  arrays["steps"] = std::move(steps);
  for (const char *output : {"prefill", "steps"})
    for (int64_t i = 0; i < arrays[output].numElements(); ++i)
      ASSERT_TRUE(std::isfinite(arrays[output].f32()[i]))
          << output << " element " << i;

  NpyArray startArray = NpyArray::zeros(ElementType::I64, {c.batch});
  NpyArray sizes = NpyArray::zeros(ElementType::I64, {3});
  for (int64_t b = 0; b < c.batch; ++b)
    startArray.i64()[b] = starts[b];
  sizes.i64()[0] = H;
  sizes.i64()[1] = Hkv;
  sizes.i64()[2] = c.prefill;
  arrays["starts"] = std::move(startArray);
  arrays["sizes"] = std::move(sizes);
  // What the steps left: sequence b holds starts[b] + N tokens.
  arrays["lengths"] = lengths;
  dumpCase(c.name, arrays);

  // A call without room (the longest sequence at the capacity, a length
  // past it, a negative one) writes neither codes nor scales.
  std::map<std::string, AlignedBytes> before;
  for (const char *cache : {"k_cache", "k_scales", "v_cache", "v_scales"})
    before[cache] = arrays[cache].data;
  for (int64_t b = 0; b < c.batch; ++b)
    lengths.i64()[b] = b % 3 == 0 ? capacity : b % 3 == 1 ? -1 : capacity + 4;
  call(randomArray({c.batch, 1, D}, 1.0, engine));
  for (const auto &[cache, bytes] : before)
    EXPECT_TRUE(arrays[cache].data == bytes) << cache << " was written";
}

class KvCacheInt8Test : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }
};

// Several heads on the fused path, a ragged batch.
TEST_F(KvCacheInt8Test, Fused) {
  decode({"fused", 2, 9, 5, 32, 4, 4, 8, 8, {9, 3}});
}

// Grouped-query heads with dk != dv over several key blocks.
TEST_F(KvCacheInt8Test, GroupedQueries) {
  decode({"gqa", 3, 70, 4, 32, 4, 2, 8, 4, {70, 40, 0}});
}

// One sequence of one head: the steps split the keys across the threads
// (flash-decoding), over several key blocks and a tail.
TEST_F(KvCacheInt8Test, SplitKeys) {
  decode({"split-keys", 1, 300, 3, 16, 1, 1, 16, 16, {}});
}

// The decomposed path (the whole score matrix).
TEST_F(KvCacheInt8Test, Decomposed) {
  decode(
      {"decomposed", 2, 7, 3, 16, 2, 2, 8, 8, {7, 2}, "attention=decomposed"});
}

} // namespace
