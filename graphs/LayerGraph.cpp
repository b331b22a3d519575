//===- LayerGraph.cpp - The graph of one attention layer ------------------===//

#include "graphs/LayerGraph.h"

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
  if (c.kvCache)
    if (llvm::Error error = checkCacheLayer(c, o, optionName))
      return std::move(error);
  if (llvm::Error error = resolveHeadSizes(c, o, optionName))
    return std::move(error);
  if (llvm::Error error = resolveVariants(c, o, optionName))
    return std::move(error);
  if (llvm::Error error = checkElementCounts(c))
    return std::move(error);
  return c;
}

/// Adds `@mha(args) -> resultTypes` to `module`, each argument named by its
/// `mha.name`, and returns its body; `named` maps the names to the
/// arguments. The builder is left at the module's end.
static Block *createLayerFunction(OpBuilder &builder, ModuleOp module,
                                  Location loc,
                                  ArrayRef<std::pair<StringRef, Type>> args,
                                  TypeRange resultTypes,
                                  llvm::StringMap<Value> &named) {
  SmallVector<Type> argTypes = llvm::map_to_vector(
      args, [](const std::pair<StringRef, Type> &arg) { return arg.second; });
  builder.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(
      builder, loc, "mha", builder.getFunctionType(argTypes, resultTypes));
  Block *body = func.addEntryBlock();
  for (auto [index, arg] : llvm::enumerate(args)) {
    func.setArgAttr(index, mlir::mha::MhaDialect::NameAttrHelper::getNameStr(),
                    builder.getStringAttr(arg.first));
    named[arg.first] = body->getArgument(index);
  }
  return body;
}

/// Appends the weights and biases of the four projections, of element type
/// `data`, to `args` in the order every layer graph takes them.
static void
addWeightArguments(SmallVectorImpl<std::pair<StringRef, Type>> &args,
                   const LayerConfig &c, Type data) {
  auto add = [&](StringRef name, ArrayRef<int64_t> shape) {
    args.push_back({name, RankedTensorType::get(shape, data)});
  };
  if (c.splitFirst) {
    add("w_q", {c.numHeads, c.modelDim / c.numHeads, c.headDim});
    add("w_k", {c.numKvHeads, c.kvDim / c.numKvHeads, c.headDim});
    add("w_v", {c.numKvHeads, c.kvDim / c.numKvHeads, c.valueDim});
  } else {
    add("w_q", {c.modelDim, c.numHeads * c.headDim});
    add("w_k", {c.kvDim, c.numKvHeads * c.headDim});
    add("w_v", {c.kvDim, c.numKvHeads * c.valueDim});
  }
  add("w_o", {c.numHeads * c.valueDim, c.outDim});
  if (c.bias) {
    add("b_q", {c.numHeads * c.headDim});
    add("b_k", {c.numKvHeads * c.headDim});
    add("b_v", {c.numKvHeads * c.valueDim});
    add("b_o", {c.outDim});
  }
}

/// Appends the arguments of the variants (all f32, static but for the `?`
/// sizes of a score bias) to `args`: rope_inv_freq [R/2], q_norm and k_norm
/// [dk], alibi_slopes and sinks [H], attn_bias [B or 1, H or 1, T or 1, S].
static void
addVariantArguments(SmallVectorImpl<std::pair<StringRef, Type>> &args,
                    const LayerConfig &c, Type f32, int64_t batchSize,
                    int64_t queries, int64_t keys) {
  const LayerVariants &v = c.variants;
  auto add = [&](StringRef name, ArrayRef<int64_t> shape) {
    args.push_back({name, RankedTensorType::get(shape, f32)});
  };
  if (v.ropeInvFreq)
    add("rope_inv_freq", {v.rotaryDim / 2});
  if (v.qkNorm) {
    add("q_norm", {c.headDim});
    add("k_norm", {c.headDim});
  }
  if (v.alibi)
    add("alibi_slopes", {c.numHeads});
  if (v.sinks)
    add("sinks", {c.numHeads});
  if (v.attnBias)
    add("attn_bias",
        {v.attnBiasFull[0] ? batchSize : 1, v.attnBiasFull[1] ? c.numHeads : 1,
         v.attnBiasFull[2] ? queries : 1, keys});
}

/// The attributes of the variants, for mha.attention and the decoding
/// layer's ops; an option not given stays null (the op's default).
struct VariantAttrs {
  FloatAttr scale, softcap, ropeBase, ropeScale, ropeMscale, qkNormEps;
  IntegerAttr window, rotaryDim;
  StringAttr rope;

  VariantAttrs(OpBuilder &builder, const LayerConfig &c) {
    const LayerVariants &v = c.variants;
    auto f32 = [&](std::optional<double> value) {
      return value ? builder.getF32FloatAttr(*value) : FloatAttr();
    };
    auto f64 = [&](std::optional<double> value) {
      return value ? builder.getF64FloatAttr(*value) : FloatAttr();
    };
    scale = f32(v.scale);
    softcap = f32(v.softcap);
    window = v.window ? builder.getI64IntegerAttr(*v.window) : IntegerAttr();
    if (v.rope.empty())
      return;
    rope = builder.getStringAttr(v.rope);
    // The rotary dimension is printed only where it is not dk.
    if (v.rotaryDim != c.headDim)
      rotaryDim = builder.getI64IntegerAttr(v.rotaryDim);
    ropeBase = f64(v.ropeBase);
    ropeScale = f64(v.ropeScale);
    ropeMscale = f64(v.ropeMscale);
  }
};

/// The decoding layer of `buildLayerGraph` (`c.kvCache` set; the key/value
/// width is the model width and the weights are not split first).
static OwningOpRef<ModuleOp> buildCacheLayerGraph(MLIRContext &context,
                                                  const LayerConfig &c) {
  context.getOrLoadDialect<arith::ArithDialect>();
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  Type f32 = builder.getF32Type();
  int64_t batchSize = c.dynamicBatch ? ShapedType::kDynamic : c.batch;
  int64_t queries = c.dynamicSeq ? ShapedType::kDynamic : c.seqLen;

  SmallVector<std::pair<StringRef, Type>> args;
  auto add = [&](StringRef name, ArrayRef<int64_t> shape, Type element) {
    args.push_back({name, RankedTensorType::get(shape, element)});
  };
  // bf16: the tokens, weights, biases and the caches (half their bytes);
  // the output stays f32.
  Type data = c.bf16 ? Type(builder.getBF16Type()) : f32;
  add("x", {batchSize, queries, c.modelDim}, data);
  addWeightArguments(args, c, data);
  add("k_cache", {batchSize, c.numKvHeads, c.kvCache, c.headDim}, data);
  add("v_cache", {batchSize, c.numKvHeads, c.kvCache, c.valueDim}, data);
  add("cache_lengths", {batchSize}, builder.getI64Type());
  // y, and the caches the call updates in place.
  Type kCacheType = args[args.size() - 3].second;
  Type vCacheType = args[args.size() - 2].second;
  addVariantArguments(args, c, f32, batchSize, queries, c.kvCache);

  auto resultType = RankedTensorType::get({batchSize, queries, c.outDim}, f32);
  SmallVector<Type> resultTypes = {resultType, kCacheType, vCacheType};
  llvm::StringMap<Value> named;
  Block *body =
      createLayerFunction(builder, *module, loc, args, resultTypes, named);
  auto lookup = [&](StringRef name) { return named.lookup(name); };

  // The five steps as mha-expand writes them, with the caches between the
  // projections and the attention. In bf16 the steps run in f32 on widened
  // operands (`arith.extf`, exact) and only the new keys and values are
  // rounded (`arith.truncf`, to nearest even), to be stored in the caches,
  // which attention reads widened: the layout whose error stays within the
  // bf16 bound (docs/dialect.md, "Element types"). bf16 mha ops would round
  // Q and the heads' output too.
  builder.setInsertionPointToEnd(body);
  auto widen = [&](Value value) -> Value {
    if (!value ||
        !cast<RankedTensorType>(value.getType()).getElementType().isBF16())
      return value;
    auto type = cast<RankedTensorType>(value.getType());
    return arith::ExtFOp::create(builder, loc, type.clone(f32), value);
  };
  auto lookupWide = [&](StringRef name) { return widen(lookup(name)); };
  Value x = lookupWide("x");
  auto heads = [&](StringRef weight, StringRef bias, int64_t numHeads) {
    Value projected = mlir::mha::ProjectOp::create(
        builder, loc, x, lookupWide(weight), lookupWide(bias));
    return mlir::mha::SplitHeadsOp::create(builder, loc, projected, numHeads)
        .getResult();
  };
  Value q = heads("w_q", "b_q", c.numHeads);
  Value k = heads("w_k", "b_k", c.numKvHeads);
  Value v = heads("w_v", "b_v", c.numKvHeads);
  Value lengths = lookup("cache_lengths");
  // QK-norm, then RoPE at each new token's position in its sequence
  // (cache_lengths[b] + t), before the keys are stored: the cache holds
  // rotated keys, as the served models' caches do.
  const LayerVariants &variants = c.variants;
  VariantAttrs attrs(builder, c);
  if (variants.qkNorm) {
    FloatAttr eps = builder.getF64FloatAttr(variants.qkNormEps.value_or(1e-6));
    q = mlir::mha::RmsNormOp::create(builder, loc, q, lookup("q_norm"), eps);
    k = mlir::mha::RmsNormOp::create(builder, loc, k, lookup("k_norm"), eps);
  }
  if (!variants.rope.empty()) {
    auto rotate = [&](Value rows) -> Value {
      return mlir::mha::RopeOp::create(
          builder, loc, rows, lengths, lookup("rope_inv_freq"), attrs.rope,
          builder.getI64IntegerAttr(variants.rotaryDim),
          builder.getF64FloatAttr(variants.ropeBase.value_or(10000.0)),
          builder.getF64FloatAttr(variants.ropeScale.value_or(1.0)),
          builder.getF64FloatAttr(variants.ropeMscale.value_or(1.0)));
    };
    q = rotate(q);
    k = rotate(k);
  }
  auto append = [&](Value rows, StringRef cache) {
    Value dest = lookup(cache);
    auto cacheType = cast<RankedTensorType>(dest.getType());
    auto rowsType = cast<RankedTensorType>(rows.getType());
    if (rowsType.getElementType() != cacheType.getElementType())
      rows = arith::TruncFOp::create(
          builder, loc, rowsType.clone(cacheType.getElementType()), rows);
    return mlir::mha::CacheAppendOp::create(builder, loc, cacheType, rows, dest,
                                            lengths)
        .getResult();
  };
  Value kc = append(k, "k_cache");
  Value vc = append(v, "v_cache");
  Value o = mlir::mha::SdpaOp::create(
      builder, loc, q, widen(kc), widen(vc),
      /*mask=*/{},
      /*causal=*/true,
      /*causalBottomRight=*/false, attrs.scale, lengths,
      mlir::mha::ScoreSteps{/*attnBias=*/{}, lookup("alibi_slopes"),
                            lookup("sinks"), attrs.window, attrs.softcap});
  Value concat = mlir::mha::ConcatHeadsOp::create(builder, loc, o);
  Value y = mlir::mha::OutputProjectOp::create(
      builder, loc, resultType, concat, lookupWide("w_o"), lookupWide("b_o"));
  func::ReturnOp::create(builder, loc, ValueRange{y, kc, vc});
  return module;
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
