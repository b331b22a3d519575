//===- KvCacheTest.cpp - Decoding with key/value caches, end to end -------===//
//
// Builds the decoding layer of `mha-gen --kv-cache` (LayerGraph), compiles it
// with the whole pipeline and the JIT, and decodes as the KV-cache contract
// says: one prefill call of T0 tokens into empty caches (lengths 0), then N
// calls of one token each, the lengths advanced by the caller, the caches
// updated in place between calls. Every output row must equal the row of
// the plain causal layer (runtime/ReferenceAttention, computed on the whole
// sequence at once) within 1e-5. The caches start as NaN: the compiled code
// must never read the unused capacity (0 * NaN would show). Ragged batches
// start the steps at other lengths (the prefill's rows past them are
// overwritten before any query sees them).
//
//===----------------------------------------------------------------------===//

#include "DecodeHarness.h"
#include "runtime/ReferenceAttention.h"

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

/// One decoding scenario.
struct DecodeCase {
  const char *name;
  int64_t batch, prefill, steps, modelDim, heads, kvHeads, headDim, valueDim;
  bool bias, dynamic;
  /// Where each sequence's steps start (<= prefill); empty: at `prefill`.
  std::vector<int64_t> starts;
  /// Unused capacity past the last token.
  int64_t spare = 5;
  /// Pipeline options ("" for the defaults).
  const char *options = "";
};

mha::graphs::LayerOptions layerOptions(const DecodeCase &c, int64_t seq,
                                       int64_t capacity) {
  mha::graphs::LayerOptions options;
  options.batch = c.batch;
  options.seqLen = seq;
  options.modelDim = c.modelDim;
  options.numHeads = c.heads;
  options.numKvHeads = c.kvHeads;
  options.headDim = c.headDim;
  options.valueDim = c.valueDim;
  options.bias = c.bias;
  options.kvCache = capacity;
  options.dynamicBatch = options.dynamicSeq = c.dynamic;
  return options;
}

/// max(worst, |a - b|), where a NaN counts as infinitely wrong (std::max
/// would drop it).
double worse(double worst, float a, float b) {
  double error = std::fabs(double(a) - double(b));
  return std::isnan(error) ? std::numeric_limits<double>::infinity()
                           : std::max(worst, error);
}

/// The decoding of `c`, checked row by row against the reference.
void decode(const DecodeCase &c) {
  SCOPED_TRACE(c.name);
  std::vector<int64_t> starts = c.starts;
  if (starts.empty())
    starts.assign(c.batch, c.prefill);
  int64_t longest = 0;
  for (int64_t start : starts)
    longest = std::max(longest, start);
  int64_t capacity = std::max(c.prefill, longest + c.steps) + c.spare;
  int64_t total = std::max(c.prefill, longest + c.steps);

  std::unique_ptr<CompiledLayer> prefill =
      compileLayer(layerOptions(c, c.prefill, capacity), c.options);
  std::unique_ptr<CompiledLayer> stepOwned;
  if (!c.dynamic)
    stepOwned = compileLayer(layerOptions(c, 1, capacity), c.options);
  ASSERT_TRUE(prefill && (c.dynamic || stepOwned));
  CompiledLayer &step = c.dynamic ? *prefill : *stepOwned;
  const GraphSignature &signature = prefill->graph.signature;
  ASSERT_EQ(signature.resultAliases.size(), 3u);
  EXPECT_EQ(signature.resultIndex, 0u);

  std::mt19937_64 engine(7);
  int64_t D = c.modelDim, H = c.heads, Hkv = c.kvHeads, dk = c.headDim,
          dv = c.valueDim;
  // Every token of every sequence, [B, total, D].
  NpyArray tokens = randomArray({c.batch, total, D}, 1.0, engine);
  std::map<std::string, NpyArray> weights =
      randomWeights(D, H, Hkv, dk, dv, c.bias, engine);
  // The caches start as NaN: the unused capacity must never be read.
  float nan = std::numeric_limits<float>::quiet_NaN();
  NpyArray kCache =
      NpyArray::zeros(ElementType::F32, {c.batch, Hkv, capacity, dk});
  NpyArray vCache =
      NpyArray::zeros(ElementType::F32, {c.batch, Hkv, capacity, dv});
  std::fill_n(kCache.f32(), kCache.numElements(), nan);
  std::fill_n(vCache.f32(), vCache.numElements(), nan);
  NpyArray lengths = NpyArray::zeros(ElementType::I64, {c.batch});

  // The reference: each sequence's causal layer over its own tokens.
  AttentionShape shape;
  shape.batch = 1;
  shape.modelDim = shape.kvDim = shape.outDim = D;
  shape.numHeads = H;
  shape.numKvHeads = Hkv;
  shape.headDim = dk;
  shape.valueDim = dv;
  shape.causal = true;
  shape.scale = 1.0 / std::sqrt(double(dk));
  auto reference = [&](int64_t b, int64_t length) {
    shape.seqLen = shape.kvSeqLen = length;
    AttentionOperands operands;
    operands.x = tokens.f32() + b * total * D;
    operands.wQ = weights["w_q"].f32();
    operands.wK = weights["w_k"].f32();
    operands.wV = weights["w_v"].f32();
    operands.wO = weights["w_o"].f32();
    if (c.bias) {
      operands.bQ = weights["b_q"].f32();
      operands.bK = weights["b_k"].f32();
      operands.bV = weights["b_v"].f32();
      operands.bO = weights["b_o"].f32();
    }
    std::vector<float> y(length * D);
    referenceAttention(shape, operands, y.data());
    return y;
  };

  auto call = [&](CompiledLayer &compiled, const NpyArray &x) {
    return callLayer(compiled, [&](llvm::StringRef name) -> const NpyArray * {
      if (name == "x")
        return &x;
      if (name == "k_cache")
        return &kCache;
      if (name == "v_cache")
        return &vCache;
      if (name == "cache_lengths")
        return &lengths;
      return &weights.at(name.str());
    });
  };

  double worst = 0;
  // The prefill: T0 tokens into empty caches.
  NpyArray y0 = call(
      *prefill, tokenRows(tokens, std::vector<int64_t>(c.batch, 0), c.prefill));
  ASSERT_EQ(y0.shape, (std::vector<int64_t>{c.batch, c.prefill, D}));
  for (int64_t b = 0; b < c.batch; ++b) {
    std::vector<float> expected = reference(b, c.prefill);
    for (int64_t i = 0; i < c.prefill * D; ++i)
      worst = worse(worst, y0.f32()[b * c.prefill * D + i], expected[i]);
  }
  EXPECT_LE(worst, 1e-5) << "prefill";
  // Every step's output, [N, B, D], for the NumPy check of
  // test/integration/kv-cache.test.
  NpyArray stepOutputs =
      NpyArray::zeros(ElementType::F32, {c.steps, c.batch, D});

  // The steps: sequence b continues from starts[b].
  for (int64_t b = 0; b < c.batch; ++b)
    lengths.i64()[b] = starts[b];
  std::vector<std::vector<float>> expected;
  for (int64_t b = 0; b < c.batch; ++b)
    expected.push_back(reference(b, starts[b] + c.steps));
  for (int64_t n = 0; n < c.steps; ++n) {
    std::vector<int64_t> rows(starts);
    for (int64_t &row : rows)
      row += n;
    NpyArray y = call(step, tokenRows(tokens, rows, 1));
    ASSERT_EQ(y.shape, (std::vector<int64_t>{c.batch, 1, D}));
    std::memcpy(stepOutputs.f32() + n * c.batch * D, y.f32(),
                c.batch * D * sizeof(float));
    double stepWorst = 0;
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t i = 0; i < D; ++i)
        stepWorst = worse(stepWorst, y.f32()[b * D + i],
                          expected[b][(starts[b] + n) * D + i]);
    EXPECT_LE(stepWorst, 1e-5) << "step " << n;
    for (int64_t b = 0; b < c.batch; ++b)
      lengths.i64()[b] += 1;
  }

  // With MHA_KV_DUMP_DIR set, the case's tokens, weights, starts and
  // outputs go to DIR/<name>/ for test/integration/kv_cache_check.py, an
  // independent float64 NumPy check of the same rows.
  std::map<std::string, NpyArray> arrays = weights;
  arrays["tokens"] = tokens;
  arrays["starts"] = NpyArray::zeros(ElementType::I64, {c.batch});
  std::copy(starts.begin(), starts.end(), arrays["starts"].i64());
  arrays["prefill"] = y0;
  arrays["steps"] = stepOutputs;
  arrays["sizes"] = NpyArray::zeros(ElementType::I64, {3});
  arrays["sizes"].i64()[0] = H;
  arrays["sizes"].i64()[1] = Hkv;
  arrays["sizes"].i64()[2] = c.prefill;
  dumpCase(c.name, arrays);

  // A call whose rows do not fit (a length past C - T, a negative one)
  // writes nothing: the caches stay as they were.
  AlignedBytes kBefore = kCache.data, vBefore = vCache.data;
  for (int64_t b = 0; b < c.batch; ++b)
    lengths.i64()[b] = b % 2 ? -1 : capacity;
  NpyArray x = randomArray({c.batch, 1, D}, 1.0, engine);
  call(step, x);
  EXPECT_TRUE(kCache.data == kBefore);
  EXPECT_TRUE(vCache.data == vBefore);
}

class KvCacheTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }
};

TEST_F(KvCacheTest, MultiHead) {
  decode({"multi-head", 2, 5, 4, 32, 4, 4, 8, 8, true, false, {}});
}

TEST_F(KvCacheTest, DynamicGqaValueDimNoBiasRagged) {
  decode({"gqa", 3, 6, 5, 32, 4, 2, 8, 4, false, true, {6, 2, 0}});
}

// One sequence of one head: the keys are split across the threads
// (flash-decoding), over several key blocks and a tail.
TEST_F(KvCacheTest, SplitKeysLongContext) {
  decode({"split-keys", 1, 300, 3, 16, 1, 1, 16, 16, true, false, {}});
}

// Ragged starts in a static graph with a context of several key blocks.
TEST_F(KvCacheTest, RaggedLongContext) {
  decode({"ragged", 2, 200, 3, 32, 2, 1, 16, 8, true, false, {200, 61}});
}

// The decomposed path (the whole score matrix) computes the same rows.
TEST_F(KvCacheTest, Decomposed) {
  decode({"decomposed",
          2,
          7,
          3,
          16,
          2,
          2,
          8,
          8,
          true,
          false,
          {7, 3},
          4,
          "attention=decomposed"});
}

} // namespace
