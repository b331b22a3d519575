//===- ReferenceVariantsTest.cpp - The reference on the served models -----===//
//
// The oracle of `mha-run --check` against the cases of
// test/vectors/model_variants (RoPE in both layouts, QK-norm, windows,
// ALiBi, soft-capping, sinks, float biases), whose y.npy a float64 NumPy
// reference wrote from the Hugging Face formulas: the compiled code is
// checked against this reference, so the reference must reproduce them.
//
//===----------------------------------------------------------------------===//

#include "runtime/Npy.h"
#include "runtime/ReferenceAttention.h"
#include "test/unit/CaseFolders.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace mha::runtime;
using llvm::StringRef;

namespace {

/// The folder of the cases.
std::string variantsDir() {
  return std::string(MHA_TEST_VECTORS_DIR) + "/model_variants";
}

/// The names of the case folders (those with a meta.json), sorted.
std::vector<std::string> listVariantCases() {
  return mha::test::listCaseFolders(variantsDir());
}

/// Reads one case, runs the reference on it and compares with y.npy.
void checkCase(const std::string &name) {
  std::string dir = variantsDir() + "/" + name;
  auto buffer = llvm::MemoryBuffer::getFile(dir + "/meta.json");
  ASSERT_TRUE(bool(buffer)) << dir << "/meta.json: cannot read";
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  ASSERT_TRUE(bool(json)) << llvm::toString(json.takeError());
  const llvm::json::Object &meta = *json->getAsObject();

  AttentionShape s;
  auto integer = [&](StringRef key) { return *meta.getInteger(key); };
  s.batch = integer("B");
  s.seqLen = integer("T");
  s.kvSeqLen = integer("S");
  s.modelDim = integer("D");
  s.kvDim = integer("D_kv");
  s.outDim = integer("D_out");
  s.numHeads = integer("H");
  s.numKvHeads = integer("Hkv");
  s.headDim = integer("dk");
  s.valueDim = integer("dv");
  s.causal = *meta.getBoolean("causal");
  s.causalBottomRight = *meta.getBoolean("causal_bottom_right");
  s.splitFirst = *meta.getBoolean("split_first");
  s.scale = *meta.getNumber("scale");
  s.window = meta.getInteger("window").value_or(0);
  s.softcap = meta.getNumber("softcap").value_or(0.0);
  std::optional<double> eps = meta.getNumber("qk_norm_eps");
  if (eps)
    s.qkNormEps = *eps;
  if (const llvm::json::Object *rope = meta.getObject("rope")) {
    s.rope = *rope->getString("layout") == "interleaved"
                 ? AttentionShape::Rope::Interleaved
                 : AttentionShape::Rope::Half;
    s.rotaryDim = *rope->getInteger("rotary_dim");
    s.ropeBase = *rope->getNumber("base");
    s.ropeScale = *rope->getNumber("scale");
    s.ropeMscale = *rope->getNumber("mscale");
  }
  ASSERT_FALSE(llvm::errorToBool(verifyAttentionShape(s)));

  std::map<std::string, NpyArray> arrays;
  for (const llvm::json::Value &file : *meta.getArray("files")) {
    std::string stem = file.getAsString()->str();
    llvm::Expected<NpyArray> array = readNpy(dir + "/" + stem + ".npy");
    ASSERT_TRUE(bool(array)) << llvm::toString(array.takeError());
    arrays[stem] = std::move(*array);
  }
  auto f32 = [&](const std::string &stem) -> const float * {
    auto it = arrays.find(stem);
    return it == arrays.end() ? nullptr : it->second.f32();
  };
  AttentionOperands ops;
  ops.x = f32("x");
  ops.kv = f32("kv");
  ops.wQ = f32("w_q");
  ops.wK = f32("w_k");
  ops.wV = f32("w_v");
  ops.wO = f32("w_o");
  ops.bQ = f32("b_q");
  ops.bK = f32("b_k");
  ops.bV = f32("b_v");
  ops.bO = f32("b_o");
  if (arrays.count("mask")) {
    ops.mask = arrays["mask"].bools();
    ops.maskBatch = arrays["mask"].shape[0];
  }
  if (arrays.count("attn_bias")) {
    const NpyArray &bias = arrays["attn_bias"];
    ASSERT_EQ(bias.shape.size(), 4u);
    ops.attnBias = bias.f32();
    for (int i = 0; i < 3; ++i)
      ops.attnBiasDims[i] = bias.shape[i];
  }
  ops.alibiSlopes = f32("alibi_slopes");
  ops.sinks = f32("sinks");
  ops.ropeInvFreq = f32("rope_inv_freq");
  ops.qNorm = f32("q_norm");
  ops.kNorm = f32("k_norm");
  // Each variant the meta names must have reached the reference.
  EXPECT_EQ(meta.getBoolean("alibi").value_or(false),
            ops.alibiSlopes != nullptr);
  EXPECT_EQ(meta.getBoolean("sinks").value_or(false), ops.sinks != nullptr);
  EXPECT_EQ(eps.has_value(), ops.qNorm && ops.kNorm);

  const NpyArray &y = arrays.at("y");
  std::vector<float> got(y.numElements());
  std::vector<float> weights(s.batch * s.numHeads * s.seqLen * s.kvSeqLen);
  referenceAttention(s, ops, got.data(), weights.data());
  double worst = 0;
  int64_t worstAt = 0;
  for (int64_t i = 0; i < y.numElements(); ++i) {
    double want = y.f32()[i];
    double excess = std::fabs(got[i] - want) - 1e-5 * (1 + std::fabs(want));
    if (!std::isfinite(got[i]) || excess > worst) {
      worst = std::isfinite(got[i]) ? excess : INFINITY;
      worstAt = i;
    }
  }
  EXPECT_LE(worst, 0.0) << name << ": element " << worstAt << " is "
                        << got[worstAt] << ", y.npy has " << y.f32()[worstAt];
  // The weights of a row sum to at most 1 (less with a sink, 0 when the row
  // attends nothing) and are never negative.
  for (int64_t row = 0; row < int64_t(weights.size()) / s.kvSeqLen; ++row) {
    double sum = 0;
    for (int64_t j = 0; j < s.kvSeqLen; ++j) {
      ASSERT_GE(weights[row * s.kvSeqLen + j], 0.0f);
      sum += weights[row * s.kvSeqLen + j];
    }
    ASSERT_LE(sum, 1.0 + 1e-5) << name << " row " << row;
  }
}

TEST(ReferenceVariantsTest, AllThirteenCasesArePresent) {
  EXPECT_EQ(listVariantCases().size(), 13u);
}

class ReferenceVariantsCase : public testing::TestWithParam<std::string> {};

TEST_P(ReferenceVariantsCase, MatchesExpectedOutput) { checkCase(GetParam()); }

INSTANTIATE_TEST_SUITE_P(ModelVariants, ReferenceVariantsCase,
                         testing::ValuesIn(listVariantCases()),
                         [](const testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

/// With sinks the weights of a row sum to exactly what the sink leaves:
/// 1 − e^sink / (Σ e^s + e^sink); with a huge sink, to almost nothing.
TEST(ReferenceVariantsTest, SinkTakesItsShareOfTheDenominator) {
  AttentionShape s;
  s.batch = 1;
  s.seqLen = s.kvSeqLen = 2;
  s.modelDim = s.kvDim = s.outDim = 1;
  s.numHeads = s.numKvHeads = 1;
  s.headDim = s.valueDim = 1;
  // Zero scores: both keys weigh e^0 = 1; a sink of log 2 weighs 2.
  s.scale = 0.0;
  float x[] = {1, 2}, w[] = {1}, sink[] = {float(std::log(2.0))};
  AttentionOperands ops;
  ops.x = x;
  ops.wQ = ops.wK = ops.wV = ops.wO = w;
  ops.sinks = sink;
  float y[2], p[4];
  referenceAttention(s, ops, y, p);
  for (float weight : p)
    EXPECT_NEAR(weight, 0.25, 1e-6);
  EXPECT_NEAR(y[0], 0.25 * 1 + 0.25 * 2, 1e-6);
}

} // namespace
