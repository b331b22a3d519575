//===- ReferenceAttentionTest.cpp - Tests of the reference attention ------===//
//
// The oracle is checked against every case under test/vectors (outputs of an
// independent float64 NumPy reference) and against a few tiny cases whose
// answer can be worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "runtime/ReferenceAttention.h"
#include "runtime/Npy.h"
#include "test/unit/CaseFolders.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

using namespace mha::runtime;
using llvm::StringRef;

namespace {

//===----------------------------------------------------------------------===//
// The reference cases
//===----------------------------------------------------------------------===//

/// Returns the names of the case folders (those with a meta.json), sorted.
std::vector<std::string> listCases() {
  return mha::test::listCaseFolders(MHA_TEST_VECTORS_DIR);
}

/// One case folder: its configuration and arrays.
struct VectorCase {
  AttentionShape shape;
  bool hasBias = false, hasMask = false, isCross = false;
  double atol = 0, rtol = 0;
  /// The arrays by file stem ("x", "w_q", "y", ...).
  std::map<std::string, NpyArray> arrays;

  /// Returns the float data of array `name`, or nullptr if it is absent.
  const float *f32(const std::string &name) const {
    auto it = arrays.find(name);
    return it == arrays.end() ? nullptr : it->second.f32();
  }
};

/// Loads the case folder `dir` into `result`, checking that every array has
/// the shape the conventions in test/vectors/README.md give it. Reports
/// problems as fatal test failures.
void loadCase(const std::string &dir, VectorCase &result) {
  auto buffer = llvm::MemoryBuffer::getFile(dir + "/meta.json");
  ASSERT_TRUE(bool(buffer)) << dir << "/meta.json: cannot read";
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  ASSERT_TRUE(bool(json)) << llvm::toString(json.takeError());
  const llvm::json::Object *meta = json->getAsObject();
  ASSERT_NE(meta, nullptr) << "meta.json is not an object";

  std::vector<std::string> missing;
  auto getInt = [&](StringRef key) {
    std::optional<int64_t> value = meta->getInteger(key);
    if (!value)
      missing.push_back(key.str());
    return value.value_or(1);
  };
  auto getBool = [&](StringRef key) {
    std::optional<bool> value = meta->getBoolean(key);
    if (!value)
      missing.push_back(key.str());
    return value.value_or(false);
  };
  AttentionShape &s = result.shape;
  s.batch = getInt("B");
  s.seqLen = getInt("T");
  s.kvSeqLen = getInt("S");
  s.modelDim = getInt("D");
  s.kvDim = getInt("D_kv");
  s.outDim = getInt("D_out");
  s.numHeads = getInt("H");
  s.numKvHeads = getInt("Hkv");
  s.headDim = getInt("dk");
  s.valueDim = getInt("dv");
  s.causal = getBool("causal");
  // Absent from the cases written before the bottom-right alignment.
  s.causalBottomRight = meta->getBoolean("causal_bottom_right").value_or(false);
  s.splitFirst = getBool("split_first");
  result.hasBias = getBool("bias");
  result.hasMask = getBool("mask");
  result.isCross = getBool("cross");
  std::optional<double> scale = meta->getNumber("scale");
  const llvm::json::Object *tolerance = meta->getObject("tolerance");
  std::optional<double> atol, rtol;
  if (tolerance) {
    atol = tolerance->getNumber("atol");
    rtol = tolerance->getNumber("rtol");
  }
  ASSERT_TRUE(missing.empty()) << "meta.json lacks " << missing.front();
  ASSERT_TRUE(scale && atol && rtol) << "meta.json lacks scale or tolerance";
  s.scale = *scale;
  result.atol = *atol;
  result.rtol = *rtol;
  ASSERT_FALSE(llvm::errorToBool(verifyAttentionShape(s)));

  // The shape each file must have; optional files are absent from the map
  // when the meta says the case does not use them.
  int64_t h = s.numHeads, hkv = s.numKvHeads, dk = s.headDim, dv = s.valueDim;
  std::map<std::string, std::vector<int64_t>> expected = {
      {"x", {s.batch, s.seqLen, s.modelDim}},
      {"w_o", {h * dv, s.outDim}},
      {"y", {s.batch, s.seqLen, s.outDim}}};
  if (s.splitFirst) {
    expected["w_q"] = {h, s.modelDim / h, dk};
    expected["w_k"] = {hkv, s.kvDim / hkv, dk};
    expected["w_v"] = {hkv, s.kvDim / hkv, dv};
  } else {
    expected["w_q"] = {s.modelDim, h * dk};
    expected["w_k"] = {s.kvDim, hkv * dk};
    expected["w_v"] = {s.kvDim, hkv * dv};
  }
  if (result.hasBias) {
    expected["b_q"] = {h * dk};
    expected["b_k"] = {hkv * dk};
    expected["b_v"] = {hkv * dv};
    expected["b_o"] = {s.outDim};
  }
  if (result.isCross)
    expected["kv"] = {s.batch, s.kvSeqLen, s.kvDim};

  for (const auto &[name, shape] : expected) {
    llvm::Expected<NpyArray> array = readNpy(dir + "/" + name + ".npy");
    ASSERT_TRUE(bool(array)) << llvm::toString(array.takeError());
    ASSERT_EQ(array->elementType, ElementType::F32) << name;
    ASSERT_EQ(array->shape, shape)
        << name << " has shape " << formatShape(array->shape);
    result.arrays[name] = std::move(*array);
  }
  if (result.hasMask) {
    llvm::Expected<NpyArray> mask = readNpy(dir + "/mask.npy");
    ASSERT_TRUE(bool(mask)) << llvm::toString(mask.takeError());
    ASSERT_EQ(mask->elementType, ElementType::Bool);
    ASSERT_EQ(mask->shape.size(), 3u);
    ASSERT_TRUE(mask->shape[0] == 1 || mask->shape[0] == s.batch);
    ASSERT_EQ(mask->shape[1], s.seqLen);
    ASSERT_EQ(mask->shape[2], s.kvSeqLen);
    result.arrays["mask"] = std::move(*mask);
  }
}

/// Runs the reference on a loaded case.
std::vector<float> runCase(const VectorCase &c) {
  AttentionOperands ops;
  ops.x = c.f32("x");
  ops.kv = c.f32("kv");
  ops.wQ = c.f32("w_q");
  ops.wK = c.f32("w_k");
  ops.wV = c.f32("w_v");
  ops.wO = c.f32("w_o");
  ops.bQ = c.f32("b_q");
  ops.bK = c.f32("b_k");
  ops.bV = c.f32("b_v");
  ops.bO = c.f32("b_o");
  auto mask = c.arrays.find("mask");
  if (mask != c.arrays.end()) {
    ops.mask = mask->second.bools();
    ops.maskBatch = mask->second.shape[0];
  }
  const NpyArray &y = c.arrays.at("y");
  std::vector<float> got(y.numElements());
  referenceAttention(c.shape, ops, got.data());
  return got;
}

/// Returns the (batch, query) rows in which the mask and causality leave no
/// key to attend.
std::vector<std::pair<int64_t, int64_t>> findEmptyRows(const VectorCase &c) {
  std::vector<std::pair<int64_t, int64_t>> rows;
  auto mask = c.arrays.find("mask");
  const AttentionShape &s = c.shape;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t t = 0; t < s.seqLen; ++t) {
      bool any = false;
      for (int64_t k = 0; k < s.kvSeqLen; ++k) {
        bool maskAllows = true;
        if (mask != c.arrays.end()) {
          int64_t mb = mask->second.shape[0] == 1 ? 0 : b;
          maskAllows =
              mask->second.bools()[(mb * s.seqLen + t) * s.kvSeqLen + k];
        }
        int64_t lastKey = s.causalBottomRight ? t + s.kvSeqLen - s.seqLen : t;
        any |= maskAllows && (!s.causal || k <= lastKey);
      }
      if (!any)
        rows.push_back({b, t});
    }
  }
  return rows;
}

class VectorCaseTest : public testing::TestWithParam<std::string> {};

TEST_P(VectorCaseTest, MatchesExpectedOutput) {
  VectorCase c;
  ASSERT_NO_FATAL_FAILURE(
      loadCase(std::string(MHA_TEST_VECTORS_DIR "/") + GetParam(), c));
  std::vector<float> got = runCase(c);
  const NpyArray &y = c.arrays.at("y");
  const float *want = y.f32();

  double maxAbsError = 0;
  int64_t mismatches = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double error = std::fabs(double(got[i]) - double(want[i]));
    maxAbsError = std::max(maxAbsError, error);
    // Written so that a NaN fails the check.
    if (!(error <= c.atol + c.rtol * std::fabs(double(want[i])))) {
      if (++mismatches <= 5)
        ADD_FAILURE() << "element " << i << " of y " << formatShape(y.shape)
                      << ": got " << got[i] << ", want " << want[i];
    }
  }
  EXPECT_EQ(mismatches, 0) << "elements outside atol " << c.atol << " + rtol "
                           << c.rtol << " · |want|";
  RecordProperty("max_abs_error", std::to_string(maxAbsError));
  std::printf("[ max err  ] %s: %.3g (atol %g, rtol %g)\n", GetParam().c_str(),
              maxAbsError, c.atol, c.rtol);

  // Rows with nothing to attend must be exactly b_o: zero attention output,
  // not a NaN nor a uniform average over masked keys.
  const float *bO = c.f32("b_o");
  for (auto [b, t] : findEmptyRows(c))
    for (int64_t o = 0; o < c.shape.outDim; ++o)
      EXPECT_EQ(got[(b * c.shape.seqLen + t) * c.shape.outDim + o],
                bO ? bO[o] : 0.0f)
          << "empty row (" << b << ", " << t << ") column " << o;
}

INSTANTIATE_TEST_SUITE_P(Vectors, VectorCaseTest,
                         testing::ValuesIn(listCases()),
                         [](const testing::TestParamInfo<std::string> &info) {
                           std::string name = info.param;
                           for (char &ch : name)
                             if (!llvm::isAlnum(ch))
                               ch = '_';
                           return name;
                         });

TEST(VectorCasesTest, FindsTheCases) {
  std::vector<std::string> cases = listCases();
  for (const char *name : {"seed003_split", "masked_row", "gqa", "causal"})
    EXPECT_NE(std::find(cases.begin(), cases.end(), name), cases.end())
        << name << " not found under " MHA_TEST_VECTORS_DIR;
}

TEST(VectorCasesTest, MaskedRowCaseHasAnEmptyRow) {
  VectorCase c;
  ASSERT_NO_FATAL_FAILURE(loadCase(MHA_TEST_VECTORS_DIR "/masked_row", c));
  EXPECT_FALSE(findEmptyRows(c).empty());
}

//===----------------------------------------------------------------------===//
// Tiny cases worked out by hand
//===----------------------------------------------------------------------===//

/// A one-head attention with every width 1 over `kv` (S rows): q = x·wq,
/// k = kv, v = kv, y = attention output + bO.
std::vector<float> runScalarAttention(std::vector<float> x,
                                      std::vector<float> kv, float wq,
                                      double scale, bool causal,
                                      const uint8_t *mask = nullptr,
                                      int64_t batch = 1, int64_t maskBatch = 1,
                                      bool causalBottomRight = false) {
  AttentionShape s;
  s.batch = batch;
  s.seqLen = static_cast<int64_t>(x.size()) / batch;
  s.kvSeqLen = static_cast<int64_t>(kv.size()) / batch;
  s.causal = causal;
  s.causalBottomRight = causalBottomRight;
  s.scale = scale;
  const float one = 1.0f, bO = 0.5f;
  AttentionOperands ops;
  ops.x = x.data();
  ops.kv = kv.data();
  ops.wQ = &wq;
  ops.wK = &one;
  ops.wV = &one;
  ops.wO = &one;
  ops.bO = &bO;
  ops.mask = mask;
  ops.maskBatch = maskBatch;
  std::vector<float> y(x.size());
  referenceAttention(s, ops, y.data());
  return y;
}

TEST(ReferenceAttentionTest, SingleKeyGivesItsValue) {
  // x [1, 1, 2]: v = x·wV + bV = 1·2 + 2·(-1) + 0.5 = 0.5; y = 0.5·3 + 1.
  const float x[] = {1, 2}, wQ[] = {0.5f, 0.25f}, wK[] = {1, 1};
  const float wV[] = {2, -1}, bV[] = {0.5f}, wO[] = {3}, bO[] = {1};
  AttentionShape s;
  s.modelDim = s.kvDim = 2;
  AttentionOperands ops;
  ops.x = x;
  ops.wQ = wQ;
  ops.wK = wK;
  ops.wV = wV;
  ops.bV = bV;
  ops.wO = wO;
  ops.bO = bO;
  float y = 0;
  referenceAttention(s, ops, &y);
  EXPECT_FLOAT_EQ(y, 2.5f);
}

TEST(ReferenceAttentionTest, SoftmaxUsesScale) {
  // Scores 0 and ln 3 give weights 1/4 and 3/4 on values 0 and 1.
  std::vector<float> y =
      runScalarAttention({1}, {0, 1}, 1, std::log(3.0), /*causal=*/false);
  EXPECT_NEAR(y[0], 0.75 + 0.5, 1e-6);
}

TEST(ReferenceAttentionTest, CausalIsTopLeftAligned) {
  // T = 2 queries over S = 3 keys with equal scores (wq = 0): query 0 sees
  // key 0 only, query 1 keys 0 and 1; key 2 is never seen.
  std::vector<float> y =
      runScalarAttention({1, 1}, {10, 20, 30}, 0, 1.0, /*causal=*/true);
  EXPECT_FLOAT_EQ(y[0], 10.5f);
  EXPECT_FLOAT_EQ(y[1], 15.5f);
}

// The same equal scores, bottom-right aligned: query i sees keys
// j <= i + (S - T), worked out by hand (y = mean of the seen values + 0.5).
TEST(ReferenceAttentionTest, CausalBottomRightWithMoreKeys) {
  // S - T = 1: query 0 sees keys 0 and 1, query 1 all three.
  std::vector<float> y =
      runScalarAttention({1, 1}, {10, 20, 30}, 0, 1.0, /*causal=*/true, nullptr,
                         1, 1, /*causalBottomRight=*/true);
  EXPECT_FLOAT_EQ(y[0], 15.5f);
  EXPECT_FLOAT_EQ(y[1], 20.5f);
}

TEST(ReferenceAttentionTest, CausalBottomRightWithFewerKeys) {
  // S - T = -1: query 0 sees no key (zero attention output, y = b_o),
  // query 1 key 0, query 2 keys 0 and 1.
  std::vector<float> y =
      runScalarAttention({1, 1, 1}, {10, 20}, 0, 1.0, /*causal=*/true, nullptr,
                         1, 1, /*causalBottomRight=*/true);
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_FLOAT_EQ(y[1], 10.5f);
  EXPECT_FLOAT_EQ(y[2], 15.5f);
}

TEST(ReferenceAttentionTest, CausalBottomRightDecodeSeesEveryKey) {
  // T = 1: the one query is the last and sees every key; top-left it would
  // see key 0 only.
  std::vector<float> bottomRight =
      runScalarAttention({1}, {10, 20, 30, 40}, 0, 1.0, /*causal=*/true,
                         nullptr, 1, 1, /*causalBottomRight=*/true);
  std::vector<float> topLeft =
      runScalarAttention({1}, {10, 20, 30, 40}, 0, 1.0, /*causal=*/true);
  EXPECT_FLOAT_EQ(bottomRight[0], 25.5f);
  EXPECT_FLOAT_EQ(topLeft[0], 10.5f);
}

TEST(ReferenceAttentionTest, CausalAlignmentsAgreeWhenSEqualsT) {
  std::vector<float> bottomRight =
      runScalarAttention({1, 2, 3}, {10, 20, 30}, 0.1f, 1.0, /*causal=*/true,
                         nullptr, 1, 1, /*causalBottomRight=*/true);
  std::vector<float> topLeft =
      runScalarAttention({1, 2, 3}, {10, 20, 30}, 0.1f, 1.0, /*causal=*/true);
  EXPECT_EQ(bottomRight, topLeft);
}

TEST(ReferenceAttentionTest, FullyMaskedRowGivesBias) {
  const uint8_t mask[] = {0, 0, 1, 0};
  std::vector<float> y =
      runScalarAttention({1, 1}, {10, 20}, 1, 1.0, /*causal=*/false, mask);
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_FLOAT_EQ(y[1], 10.5f);
}

TEST(ReferenceAttentionTest, MaskBroadcastsOverBatch) {
  // One mask [1, 1, 2] for two batch elements that hide key 1 from both.
  const uint8_t mask[] = {1, 0};
  std::vector<float> y = runScalarAttention({1, 1}, {10, 20, 30, 40}, 1, 1.0,
                                            false, mask, /*batch=*/2);
  EXPECT_FLOAT_EQ(y[0], 10.5f);
  EXPECT_FLOAT_EQ(y[1], 30.5f);
  // The same mask given per batch element hides key 0 from the second.
  const uint8_t perBatch[] = {1, 0, 0, 1};
  y = runScalarAttention({1, 1}, {10, 20, 30, 40}, 1, 1.0, false, perBatch,
                         /*batch=*/2, /*maskBatch=*/2);
  EXPECT_FLOAT_EQ(y[0], 10.5f);
  EXPECT_FLOAT_EQ(y[1], 40.5f);
}

TEST(ReferenceAttentionTest, LargeLogitsStayFinite) {
  // exp(1e4) overflows a double; subtracting the row maximum must avoid it.
  std::vector<float> y =
      runScalarAttention({1}, {1e4f, 0}, 1, 1.0, /*causal=*/false);
  EXPECT_FLOAT_EQ(y[0], 1e4f + 0.5f);
}

TEST(ReferenceAttentionTest, VerifyRejectsBadShapes) {
  AttentionShape s;
  s.numHeads = 3;
  s.numKvHeads = 2;
  EXPECT_EQ(llvm::toString(verifyAttentionShape(s)),
            "attention numHeads (3) must be a multiple of numKvHeads (2)");
  s = AttentionShape();
  s.splitFirst = true;
  s.numHeads = s.numKvHeads = 2;
  s.modelDim = 3;
  s.kvDim = 4;
  EXPECT_EQ(llvm::toString(verifyAttentionShape(s)),
            "split-first attention needs numHeads (2) to divide modelDim (3)");
  s = AttentionShape();
  s.valueDim = 0;
  EXPECT_EQ(llvm::toString(verifyAttentionShape(s)),
            "attention valueDim must be positive, got 0");
  EXPECT_FALSE(llvm::errorToBool(verifyAttentionShape(AttentionShape())));
}

} // namespace
