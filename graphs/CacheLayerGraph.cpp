//===- CacheLayerGraph.cpp - The decoding layer of one attention layer ----===//
//
// buildLayerGraph with a key/value cache: the steps of the layer written
// out, the new keys and values appended to caches of f32, bf16 or int8
// codes with a scale per row (or to pools of pages through a block table),
// and causal attention from the positions.
//
//===----------------------------------------------------------------------===//

#include "graphs/LayerGraphParts.h"

#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace mha::graphs {

/// Appends the caches' arguments to `args`: k_cache and v_cache, or a paged
/// cache's pools k_pool and v_pool (each followed by its scales when int8)
/// and its block_table; then cache_lengths. The caches' types are
/// appended to `resultTypes` (the function returns them after y).
static void addCacheArguments(OpBuilder &builder,
                              SmallVectorImpl<std::pair<StringRef, Type>> &args,
                              const LayerConfig &c, int64_t batchSize,
                              Type cacheData,
                              SmallVectorImpl<Type> &resultTypes) {
  size_t firstCache = args.size();
  // Paged: M pages of P rows per sequence, out of a pool of B * M pages
  // (`?` with a `?` batch) that the block table hands out.
  bool paged = c.pagedKv != 0, int8 = c.cacheElement == CacheElement::Int8;
  int64_t pagesPerSequence = paged ? llvm::divideCeil(c.kvCache, c.pagedKv) : 0;
  Type f32 = builder.getF32Type();
  auto add = [&](StringRef name, ArrayRef<int64_t> shape, Type element) {
    args.push_back({name, RankedTensorType::get(shape, element)});
  };
  int64_t poolPages = ShapedType::isDynamic(batchSize)
                          ? ShapedType::kDynamic
                          : batchSize * pagesPerSequence;
  if (paged) {
    add("k_pool", {poolPages, c.numKvHeads, c.pagedKv, c.headDim}, cacheData);
    if (int8)
      add("k_scales", {poolPages, c.numKvHeads, c.pagedKv}, f32);
    add("v_pool", {poolPages, c.numKvHeads, c.pagedKv, c.valueDim}, cacheData);
    if (int8)
      add("v_scales", {poolPages, c.numKvHeads, c.pagedKv}, f32);
  } else {
    add("k_cache", {batchSize, c.numKvHeads, c.kvCache, c.headDim}, cacheData);
    if (int8)
      add("k_scales", {batchSize, c.numKvHeads, c.kvCache}, f32);
    add("v_cache", {batchSize, c.numKvHeads, c.kvCache, c.valueDim}, cacheData);
    if (int8)
      add("v_scales", {batchSize, c.numKvHeads, c.kvCache}, f32);
  }
  for (size_t i = firstCache; i < args.size(); ++i)
    resultTypes.push_back(args[i].second);
  if (paged)
    add("block_table", {batchSize, pagesPerSequence}, builder.getI32Type());
  add("cache_lengths", {batchSize}, builder.getI64Type());
}

/// `value` widened to f32 (`arith.extf`, exact) where it is bf16.
static Value widenBF16(OpBuilder &builder, Location loc, Value value) {
  if (!value ||
      !cast<RankedTensorType>(value.getType()).getElementType().isBF16())
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  return arith::ExtFOp::create(builder, loc, type.clone(builder.getF32Type()),
                               value);
}

/// QK-norm, then RoPE at each new token's position in its sequence
/// (lengths[b] + t), of the new queries `q` and keys `k`, before the keys
/// are stored: the cache holds rotated keys, as the served models' caches
/// do.
static void applyQkNormAndRope(OpBuilder &builder, Location loc,
                               const LayerConfig &c,
                               llvm::function_ref<Value(StringRef)> lookup,
                               Value lengths, Value &q, Value &k) {
  const LayerVariants &variants = c.variants;
  VariantAttrs attrs(builder, c);
  if (variants.qkNorm) {
    FloatAttr eps = builder.getF64FloatAttr(variants.qkNormEps.value_or(1e-6));
    q = mlir::mha::RmsNormOp::create(builder, loc, q, lookup("q_norm"), eps);
    k = mlir::mha::RmsNormOp::create(builder, loc, k, lookup("k_norm"), eps);
  }
  if (variants.rope.empty())
    return;
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

/// Appends the new rows `rows` [B, Hkv, T, d] (f32) to the cache argument
/// `cacheName` (its scales `scalesName` when int8): rounded to bf16, or
/// quantized, into a dense cache or through the block table into a pool.
/// Pushes the updated caches onto `caches` (the function's results) and
/// returns what attention reads, [B, Hkv, C, d] in f32 (widened,
/// dequantized, or a paged cache's view).
static Value appendToCache(OpBuilder &builder, Location loc,
                           const LayerConfig &c, int64_t batchSize,
                           llvm::function_ref<Value(StringRef)> lookup,
                           Value lengths, Value rows, StringRef cacheName,
                           StringRef scalesName,
                           SmallVectorImpl<Value> &caches) {
  Type f32 = builder.getF32Type();
  bool int8 = c.cacheElement == CacheElement::Int8, paged = c.pagedKv != 0;
  int64_t pagesPerSequence = paged ? llvm::divideCeil(c.kvCache, c.pagedKv) : 0;
  Value dest = lookup(cacheName);
  // A sequence's rows of a paged cache's `pool`, [B, Hkv, M * P(, d)],
  // read through the table.
  auto view = [&](Value pool) -> Value {
    auto poolType = cast<RankedTensorType>(pool.getType());
    SmallVector<int64_t> shape = {batchSize, poolType.getDimSize(1),
                                  pagesPerSequence * c.pagedKv};
    if (poolType.getRank() == 4)
      shape.push_back(poolType.getDimSize(3));
    return mlir::mha::PagedViewOp::create(builder, loc, poolType.clone(shape),
                                          pool, lookup("block_table"));
  };
  if (int8 && paged) {
    Value scales = lookup(scalesName);
    auto quantized = mlir::mha::PagedCacheAppendQuantizedOp::create(
        builder, loc, dest.getType(), scales.getType(), rows, dest, scales,
        lookup("block_table"), lengths);
    caches.append({quantized.getResultCodes(), quantized.getResultScales()});
    Value codes = view(quantized.getResultCodes());
    return mlir::mha::DequantizeOp::create(
        builder, loc, cast<RankedTensorType>(codes.getType()).clone(f32), codes,
        view(quantized.getResultScales()));
  }
  if (int8) {
    Value scales = lookup(scalesName);
    auto quantized = mlir::mha::CacheAppendQuantizedOp::create(
        builder, loc, dest.getType(), scales.getType(), rows, dest, scales,
        lengths);
    caches.append({quantized.getResultCodes(), quantized.getResultScales()});
    auto codesType = cast<RankedTensorType>(dest.getType());
    return mlir::mha::DequantizeOp::create(builder, loc, codesType.clone(f32),
                                           quantized.getResultCodes(),
                                           quantized.getResultScales());
  }
  auto cacheType = cast<RankedTensorType>(dest.getType());
  auto rowsType = cast<RankedTensorType>(rows.getType());
  if (rowsType.getElementType() != cacheType.getElementType())
    rows = arith::TruncFOp::create(
        builder, loc, rowsType.clone(cacheType.getElementType()), rows);
  if (paged) {
    // The pool after the append, and each sequence's rows read through the
    // table: [B, Hkv, M * P, d].
    Value appended = mlir::mha::PagedCacheAppendOp::create(
        builder, loc, cacheType, rows, dest, lookup("block_table"), lengths);
    caches.push_back(appended);
    return widenBF16(builder, loc, view(appended));
  }
  Value appended = mlir::mha::CacheAppendOp::create(builder, loc, cacheType,
                                                    rows, dest, lengths);
  caches.push_back(appended);
  return widenBF16(builder, loc, appended);
}

OwningOpRef<ModuleOp> buildCacheLayerGraph(MLIRContext &context,
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
  // the output stays f32. int8: codes and a scale per row (a quarter of the
  // bytes, and 4 per row).
  Type data = c.bf16 ? Type(builder.getBF16Type()) : f32;
  bool int8 = c.cacheElement == CacheElement::Int8;
  Type cacheData = int8 ? Type(builder.getI8Type()) : data;
  add("x", {batchSize, queries, c.modelDim}, data);
  addWeightArguments(args, c, data);
  bool paged = c.pagedKv != 0;
  int64_t pagesPerSequence = paged ? llvm::divideCeil(c.kvCache, c.pagedKv) : 0;
  // y, and the caches the call updates in place.
  auto resultType = RankedTensorType::get({batchSize, queries, c.outDim}, f32);
  SmallVector<Type> resultTypes = {resultType};
  addCacheArguments(builder, args, c, batchSize, cacheData, resultTypes);
  addVariantArguments(args, c, f32, batchSize, queries,
                      paged ? pagesPerSequence * c.pagedKv : c.kvCache);

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
  auto widen = [&](Value value) { return widenBF16(builder, loc, value); };
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
  applyQkNormAndRope(builder, loc, c, lookup, lengths, q, k);
  VariantAttrs attrs(builder, c);
  // The caches after the appends, in the order of the results, and the
  // keys and values attention reads from them.
  SmallVector<Value> caches;
  auto append = [&](Value rows, StringRef cache, StringRef scales) {
    return appendToCache(builder, loc, c, batchSize, lookup, lengths, rows,
                         cache, scales, caches);
  };
  Value kc = append(k, paged ? "k_pool" : "k_cache", "k_scales");
  Value vc = append(v, paged ? "v_pool" : "v_cache", "v_scales");
  Value o = mlir::mha::SdpaOp::create(
      builder, loc, q, kc, vc,
      /*mask=*/{},
      /*causal=*/true,
      /*causalBottomRight=*/false, attrs.scale, lengths,
      mlir::mha::ScoreSteps{/*attnBias=*/{}, lookup("alibi_slopes"),
                            lookup("sinks"), attrs.window, attrs.softcap});
  Value concat = mlir::mha::ConcatHeadsOp::create(builder, loc, o);
  Value y = mlir::mha::OutputProjectOp::create(
      builder, loc, resultType, concat, lookupWide("w_o"), lookupWide("b_o"));
  SmallVector<Value> results = {y};
  results.append(caches);
  func::ReturnOp::create(builder, loc, results);
  return module;
}

} // namespace mha::graphs
