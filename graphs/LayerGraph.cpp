//===- LayerGraph.cpp - The graph of one attention layer ------------------===//

#include "graphs/LayerGraph.h"
#include "graphs/LayerGraphParts.h"

#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>
#include <cstdio>

using namespace mlir;

namespace mha::graphs {

/// The product of `sizes`, or nullopt when it does not fit in int64.
static std::optional<int64_t> checkedProduct(ArrayRef<int64_t> sizes) {
  std::optional<int64_t> product = 1;
  for (int64_t size : sizes)
    if (product)
      product = llvm::checkedMul<int64_t>(*product, size);
  return product;
}

/// The error of a size or combination the options cannot have.
static llvm::Error usageError(const Twine &message) {
  return llvm::createStringError(message.str());
}

/// Checks every size given, those whose default derives from another too:
/// an explicit 0 is as wrong as -1. (The derived defaults are checked with
/// the products.)
static llvm::Error
checkGivenSizes(const LayerOptions &o,
                llvm::function_ref<std::string(llvm::StringRef)> optionName) {
  // Sizes far beyond any real layer only make absurd types; 2^31 keeps every
  // product of two sizes (heads times head dimension) inside int64.
  constexpr int64_t maxSize = int64_t(1) << 31;
  std::pair<const std::optional<int64_t> *, StringRef> sizes[] = {
      {&o.batch, "batch"},         {&o.seqLen, "seq"},
      {&o.kvSeqLen, "kv-seq"},     {&o.modelDim, "d-model"},
      {&o.kvDim, "kv-dim"},        {&o.numHeads, "heads"},
      {&o.numKvHeads, "kv-heads"}, {&o.headDim, "head-dim"},
      {&o.valueDim, "value-dim"},  {&o.outDim, "out-dim"},
      {&o.kvCache, "kv-cache"}};
  for (auto [option, name] : sizes) {
    if (!*option)
      continue; // its default, or one derived from sizes checked here
    int64_t value = **option;
    if (value <= 0)
      return usageError(optionName(name) + " must be positive, got " +
                        Twine(value));
    if (value > maxSize)
      return usageError(optionName(name) + " must be at most 2^31, got " +
                        Twine(value));
  }
  return llvm::Error::success();
}

/// The options with the defaults filled in, but for the head sizes
/// (resolveHeadSizes).
static LayerConfig applyDefaults(const LayerOptions &o) {
  LayerConfig c;
  c.batch = o.batch.value_or(1);
  c.seqLen = o.seqLen.value_or(128);
  c.modelDim = o.modelDim.value_or(512);
  c.numHeads = o.numHeads.value_or(8);
  c.cross = o.cross || o.kvSeqLen || o.kvDim;
  c.kvSeqLen = o.kvSeqLen.value_or(c.seqLen);
  c.kvDim = o.kvDim.value_or(c.modelDim);
  c.numKvHeads = o.numKvHeads.value_or(c.numHeads);
  c.outDim = o.outDim.value_or(c.modelDim);
  // Bottom-right only says where the diagonal lies; with S = T both
  // alignments are the same rule, and the graph still says which was asked.
  c.causal = o.causal || o.causalBottomRight;
  c.causalBottomRight = o.causalBottomRight;
  c.mask = o.mask || o.maskBroadcast;
  c.maskBroadcast = o.maskBroadcast;
  c.bias = o.bias;
  c.splitFirst = o.splitFirst;
  c.dynamicBatch = o.dynamicBatch;
  c.dynamicSeq = o.dynamicSeq;
  // Self-attention's keys are its queries.
  c.dynamicKvSeq = c.cross ? o.dynamicKvSeq : o.dynamicSeq;
  c.kvCache = o.kvCache.value_or(0);
  c.bf16 = o.bf16;
  c.cacheElement = c.bf16 ? CacheElement::BF16 : CacheElement::F32;
  return c;
}

/// A decoding layer is causal self-attention from the tokens' positions in
/// the caches: no second input, no mask, no other alignment; its keys and
/// values are projected from each new token alone (split-first would read
/// other columns of it, which is fine, but the layer has not been built
/// that way). Makes `c` causal.
static llvm::Error
checkCacheLayer(LayerConfig &c, const LayerOptions &o,
                llvm::function_ref<std::string(llvm::StringRef)> optionName) {
  if (!o.cacheDtype.empty()) {
    if (o.cacheDtype == "f32")
      c.cacheElement = CacheElement::F32;
    else if (o.cacheDtype == "bf16")
      c.cacheElement = CacheElement::BF16;
    else if (o.cacheDtype == "int8")
      c.cacheElement = CacheElement::Int8;
    else
      return usageError(optionName("cache-dtype") +
                        " must be f32, bf16 or int8, got '" + o.cacheDtype +
                        "'");
    // bf16 caches are a bf16 layer's, f32 ones an f32 layer's; int8 codes
    // quantize the f32 rows of an f32 layer.
    CacheElement own = c.bf16 ? CacheElement::BF16 : CacheElement::F32;
    if (c.cacheElement != own &&
        !(c.cacheElement == CacheElement::Int8 && !c.bf16))
      return usageError(
          optionName("cache-dtype") + " " + o.cacheDtype + " needs " +
          optionName("dtype") + " " +
          (c.cacheElement == CacheElement::BF16 ? "bf16" : "f32"));
  }
  std::pair<bool, StringRef> refused[] = {
      {c.cross, o.kvSeqLen ? "kv-seq"
                : o.kvDim  ? "kv-dim"
                           : "cross"},
      {c.mask, o.maskBroadcast ? "mask-broadcast" : "mask"},
      {c.causalBottomRight, "causal-bottom-right"},
      {c.splitFirst, "split-first"}};
  for (auto [given, name] : refused)
    if (given)
      return usageError(optionName("kv-cache") + " cannot be combined with " +
                        optionName(name) +
                        " (a decoding layer is causal self-attention from "
                        "the cache positions)");
  c.causal = true;
  if (!c.dynamicSeq && c.seqLen > c.kvCache)
    return usageError(optionName("seq") + " (" + Twine(c.seqLen) +
                      ") must be at most " + optionName("kv-cache") + " (" +
                      Twine(c.kvCache) +
                      "): the new tokens must fit in the cache");
  return llvm::Error::success();
}

/// A paged cache (--paged-kv P) holds a decoding layer's caches in pages of
/// P rows, P a multiple of 16 from 16 to 128 (mha.paged_cache_append's
/// rule), of any cache element type.
static llvm::Error
checkPagedCache(LayerConfig &c, const LayerOptions &o,
                llvm::function_ref<std::string(llvm::StringRef)> optionName) {
  if (!o.pagedKv)
    return llvm::Error::success();
  if (!c.kvCache)
    return usageError(optionName("paged-kv") + " needs " +
                      optionName("kv-cache") +
                      " (the capacity of each sequence)");
  int64_t page = *o.pagedKv;
  if (page < 16 || page > 128 || page % 16 != 0)
    return usageError(optionName("paged-kv") +
                      " must be a multiple of 16 from 16 to 128, got " +
                      Twine(page));
  c.pagedKv = page;
  return llvm::Error::success();
}

/// Checks that the head counts divide what they must, and fills in the head
/// dimensions dk and dv.
static llvm::Error
resolveHeadSizes(LayerConfig &c, const LayerOptions &o,
                 llvm::function_ref<std::string(llvm::StringRef)> optionName) {
  if (c.numHeads % c.numKvHeads != 0)
    return usageError(optionName("heads") + " (" + Twine(c.numHeads) +
                      ") must be a multiple of " + optionName("kv-heads") +
                      " (" + Twine(c.numKvHeads) + ")");
  bool needsSlices = c.splitFirst;
  if ((!o.headDim || needsSlices) && c.modelDim % c.numHeads != 0)
    return usageError(optionName("heads") + " (" + Twine(c.numHeads) +
                      ") must divide " + optionName("d-model") + " (" +
                      Twine(c.modelDim) + ")");
  if (needsSlices && c.kvDim % c.numKvHeads != 0)
    return usageError(optionName("kv-heads") + " (" + Twine(c.numKvHeads) +
                      ") must divide the key/value width (" + Twine(c.kvDim) +
                      ")");
  c.headDim = o.headDim.value_or(c.modelDim / c.numHeads);
  c.valueDim = o.valueDim.value_or(c.headDim);
  return llvm::Error::success();
}

/// Checks the served models' options (QK-norm, RoPE, the score steps) of the
/// layer `c` whose sizes are resolved, and stores them in `c.variants`.
static llvm::Error
resolveVariants(LayerConfig &c, const LayerOptions &o,
                llvm::function_ref<std::string(llvm::StringRef)> optionName) {
  LayerVariants &v = c.variants;
  auto finite = [](double value) { return std::isfinite(value); };
  auto numberError = [&](StringRef name, const Twine &rule, double value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", value);
    return usageError(optionName(name) + " must be " + rule + ", got " + text);
  };
  if (o.scale && !finite(*o.scale))
    return numberError("scale", "finite", *o.scale);
  v.scale = o.scale;
  if (o.softcap && !(finite(*o.softcap) && *o.softcap > 0))
    return numberError("softcap", "positive and finite", *o.softcap);
  v.softcap = o.softcap;
  if (o.window) {
    if (*o.window <= 0)
      return usageError(optionName("window") + " must be positive, got " +
                        Twine(*o.window));
    if (!c.causal)
      return usageError(optionName("window") + " needs " +
                        optionName("causal") +
                        " (the window keeps the W keys up to each query's "
                        "own position)");
  }
  v.window = o.window;

  // RoPE and what only RoPE reads.
  std::pair<bool, StringRef> ropeOnly[] = {
      {o.rotaryDim.has_value(), "rotary-dim"},
      {o.ropeBase.has_value(), "rope-base"},
      {o.ropeScale.has_value(), "rope-scale"},
      {o.ropeMscale.has_value(), "rope-mscale"},
      {o.ropeInvFreq, "rope-inv-freq"}};
  if (o.rope.empty()) {
    for (auto [given, name] : ropeOnly)
      if (given)
        return usageError(optionName(name) + " needs " + optionName("rope"));
  } else {
    if (o.rope != "half" && o.rope != "interleaved")
      return usageError(optionName("rope") +
                        " must be half or interleaved, got '" + o.rope + "'");
    if (c.cross)
      return usageError(optionName("rope") + " cannot be combined with " +
                        optionName(o.kvSeqLen ? "kv-seq"
                                   : o.kvDim  ? "kv-dim"
                                              : "cross") +
                        " (the rotary embedding places queries and keys at "
                        "the positions of one sequence: self-attention only)");
    int64_t r = o.rotaryDim.value_or(c.headDim);
    if (o.rotaryDim && (r <= 0 || r % 2 != 0 || r > c.headDim))
      return usageError(optionName("rotary-dim") +
                        " must be even, positive and at most the head "
                        "dimension dk (" +
                        Twine(c.headDim) + "), got " + Twine(r));
    if (!o.rotaryDim && r % 2 != 0)
      return usageError(optionName("rope") +
                        " rotates pairs of features, but the head dimension "
                        "dk (" +
                        Twine(r) + ") is odd: give an even " +
                        optionName("rotary-dim"));
    if (o.ropeBase && !(finite(*o.ropeBase) && *o.ropeBase > 0))
      return numberError("rope-base", "positive and finite", *o.ropeBase);
    if (o.ropeScale && !(finite(*o.ropeScale) && *o.ropeScale > 0))
      return numberError("rope-scale", "positive and finite", *o.ropeScale);
    if (o.ropeMscale && !finite(*o.ropeMscale))
      return numberError("rope-mscale", "finite", *o.ropeMscale);
    v.rope = o.rope;
    v.rotaryDim = r;
    v.ropeBase = o.ropeBase;
    v.ropeScale = o.ropeScale;
    v.ropeMscale = o.ropeMscale;
    v.ropeInvFreq = o.ropeInvFreq;
  }

  if (o.qkNormEps && !o.qkNorm)
    return usageError(optionName("qk-norm-eps") + " needs " +
                      optionName("qk-norm"));
  if (o.qkNormEps && !(finite(*o.qkNormEps) && *o.qkNormEps >= 0))
    return numberError("qk-norm-eps", "finite and not negative", *o.qkNormEps);
  v.qkNorm = o.qkNorm;
  v.qkNormEps = o.qkNormEps;
  v.alibi = o.alibi;
  v.sinks = o.sinks;

  if (!o.attnBias.empty()) {
    if (c.kvCache)
      return usageError(optionName("attn-bias") + " cannot be combined with " +
                        optionName("kv-cache") +
                        " (its key size would be the cache capacity)");
    SmallVector<StringRef> entries;
    StringRef(o.attnBias).split(entries, ',');
    const char letters[] = {'B', 'H', 'T', 'S'};
    bool valid = entries.size() == 4;
    for (auto [index, entry] : llvm::enumerate(entries)) {
      if (!valid)
        break;
      StringRef e = entry.trim();
      bool full = e.size() == 1 && e[0] == letters[index];
      valid = full || (e == "1" && index < 3);
      if (index < 3)
        v.attnBiasFull[index] = full;
    }
    if (!valid)
      return usageError(
          optionName("attn-bias") + " '" + o.attnBias +
          "': expected four comma-separated entries, each its dimension's "
          "letter B, H, T, S or 1 (broadcast), the last S: e.g. B,H,T,S, "
          "1,H,T,S or B,1,1,S");
    v.attnBias = true;
  }
  return llvm::Error::success();
}

/// Each argument and the result must have a number of elements that fits in
/// int64 (their shapes are products of the sizes), or no tool could even
/// count them.
static llvm::Error checkElementCounts(const LayerConfig &c) {
  int64_t keys = c.kvSeqLen;
  SmallVector<std::pair<StringRef, SmallVector<int64_t>>> shapes = {
      {"x", {c.batch, c.seqLen, c.modelDim}},
      {"w_q", {c.modelDim, c.numHeads, c.headDim}},
      {"w_k", {c.kvDim, c.numKvHeads, c.headDim}},
      {"w_v", {c.kvDim, c.numKvHeads, c.valueDim}},
      {"w_o", {c.numHeads, c.valueDim, c.outDim}},
      {"the result", {c.batch, c.seqLen, c.outDim}}};
  if (c.cross)
    shapes.push_back({"kv", {c.batch, keys, c.kvDim}});
  if (c.mask)
    shapes.push_back({"mask", {c.maskBroadcast ? 1 : c.batch, c.seqLen, keys}});
  if (c.variants.attnBias)
    shapes.push_back({"attn_bias",
                      {c.variants.attnBiasFull[0] ? c.batch : 1,
                       c.variants.attnBiasFull[1] ? c.numHeads : 1,
                       c.variants.attnBiasFull[2] ? c.seqLen : 1, keys}});
  if (c.kvCache) {
    shapes.push_back(
        {"k_cache", {c.batch, c.numKvHeads, c.kvCache, c.headDim}});
    shapes.push_back(
        {"v_cache", {c.batch, c.numKvHeads, c.kvCache, c.valueDim}});
  }
  for (const auto &[name, shape] : shapes)
    if (!checkedProduct(shape))
      return usageError(
          Twine(name) + " would have " +
          llvm::join(llvm::map_range(
                         shape, [](int64_t size) { return Twine(size).str(); }),
                     " x ") +
          " elements, more than fit in 64 bits");
  return llvm::Error::success();
}

llvm::Expected<LayerConfig> resolveLayerConfig(
    const LayerOptions &o,
    llvm::function_ref<std::string(llvm::StringRef)> optionName) {
  if (llvm::Error error = checkGivenSizes(o, optionName))
    return std::move(error);
  LayerConfig c = applyDefaults(o);
  if (!o.cacheDtype.empty() && !c.kvCache)
    return usageError(optionName("cache-dtype") + " needs " +
                      optionName("kv-cache") +
                      " (it is the element type of the key/value caches)");
  if (c.kvCache)
    if (llvm::Error error = checkCacheLayer(c, o, optionName))
      return std::move(error);
  if (llvm::Error error = checkPagedCache(c, o, optionName))
    return std::move(error);
  if (llvm::Error error = resolveHeadSizes(c, o, optionName))
    return std::move(error);
  if (llvm::Error error = resolveVariants(c, o, optionName))
    return std::move(error);
  if (llvm::Error error = checkElementCounts(c))
    return std::move(error);
  return c;
}

OwningOpRef<ModuleOp> buildLayerGraph(MLIRContext &context,
                                      const LayerConfig &c) {
  if (c.kvCache)
    return buildCacheLayerGraph(context, c);
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  Type f32 = builder.getF32Type();
  int64_t batchSize = c.dynamicBatch ? ShapedType::kDynamic : c.batch;
  int64_t queries = c.dynamicSeq ? ShapedType::kDynamic : c.seqLen;
  int64_t keys = c.dynamicKvSeq ? ShapedType::kDynamic : c.kvSeqLen;
  // The element type of the data arguments; the result is f32 either way.
  Type data = c.bf16 ? Type(builder.getBF16Type()) : f32;

  SmallVector<std::pair<StringRef, Type>> args;
  auto add = [&](StringRef name, ArrayRef<int64_t> shape, Type element) {
    args.push_back({name, RankedTensorType::get(shape, element)});
  };
  add("x", {batchSize, queries, c.modelDim}, data);
  if (c.cross)
    add("kv", {batchSize, keys, c.kvDim}, data);
  if (c.mask)
    add("mask", {c.maskBroadcast ? 1 : batchSize, queries, keys},
        builder.getI1Type());
  addWeightArguments(args, c, data);
  addVariantArguments(args, c, f32, batchSize, queries, keys);

  auto resultType = RankedTensorType::get({batchSize, queries, c.outDim}, f32);
  llvm::StringMap<Value> named;
  Block *body = createLayerFunction(builder, *module, loc, args,
                                    TypeRange(resultType), named);
  auto lookup = [&](StringRef name) { return named.lookup(name); };

  builder.setInsertionPointToEnd(body);
  IntegerAttr kvHeads = c.numKvHeads != c.numHeads
                            ? builder.getI64IntegerAttr(c.numKvHeads)
                            : IntegerAttr();
  const LayerVariants &variants = c.variants;
  VariantAttrs attrs(builder, c);
  // The QK-norm's epsilon is printed whenever there is a QK-norm.
  FloatAttr qkNormEps =
      variants.qkNorm
          ? builder.getF64FloatAttr(variants.qkNormEps.value_or(1e-6))
          : FloatAttr();
  Value y = mlir::mha::AttentionOp::create(
      builder, loc, resultType, lookup("x"), lookup("kv"), lookup("mask"),
      lookup("w_q"), lookup("w_k"), lookup("w_v"), lookup("w_o"), lookup("b_q"),
      lookup("b_k"), lookup("b_v"), lookup("b_o"), lookup("attn_bias"),
      lookup("alibi_slopes"), lookup("sinks"), lookup("rope_inv_freq"),
      lookup("q_norm"), lookup("k_norm"), builder.getI64IntegerAttr(c.numHeads),
      kvHeads, c.causal ? builder.getUnitAttr() : UnitAttr(),
      c.causalBottomRight ? builder.getUnitAttr() : UnitAttr(), attrs.scale,
      attrs.window, attrs.softcap, attrs.rope, attrs.rotaryDim, attrs.ropeBase,
      attrs.ropeScale, attrs.ropeMscale, qkNormEps, /*score_modCount=*/0);
  func::ReturnOp::create(builder, loc, y);
  return module;
}

} // namespace mha::graphs
