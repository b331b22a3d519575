//===- Decode.cpp - mha-run as a decoder with a key/value cache -----------===//
//
// The driver of a cache graph (mha-gen --kv-cache): the graph appends the
// new tokens' keys and values to the caches at `cache_lengths` and attends
// over them; it does not move the lengths, so the driver adds the tokens of
// each call. The caches are allocated zeroed once, at the graph's capacity,
// and the compiled code updates them in place.
//
// Inputs: `x` holds T + N rows per sequence, the prefill's T and then one per
// step (the same layout as `--output`), so that the reference is the causal
// layer over those rows. With `--lengths`, sequence b keeps only the first
// l_b of the prefill's rows: the steps write their keys at l_b, l_b + 1, ...,
// over what the prefill left at l_b .. T - 1, before any query can see it.
//
// bf16 graphs (mha-gen --dtype bf16 --kv-cache C): x, the weights and the
// caches are bf16. The inputs come as float32 and are rounded to nearest even
// once; the caches are allocated in bf16 (half the bytes) and the graph
// rounds the new rows when it appends them. --check then holds the result to
// the accuracy rule of bf16 layers: its error against the
// reference of the float32 inputs is at most 1.5 times that of the reference
// computed on the bf16-rounded inputs.
//
//===----------------------------------------------------------------------===//

#include "tools/mha-run/Decode.h"

#include "dialects/MhaOps.h"
#include "runtime/BFloat16.h"
#include "runtime/Comparison.h"
#include "runtime/JitRunner.h"
#include "runtime/MemoryLimit.h"
#include "runtime/ReferenceAttention.h"
#include "tools/support/ToolSupport.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

using namespace mlir;
using namespace ::mha::runtime;

namespace mha::tools {

bool hasKeyValueCache(const GraphSignature &signature) {
  return signature.findArgument(kKeyCacheName) >= 0 ||
         signature.findArgument(kValueCacheName) >= 0 ||
         signature.findArgument(kCacheLengthsName) >= 0;
}

namespace {

llvm::Error createError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The arguments of a cache graph and the sizes of its caches.
struct CacheGraph {
  int x = -1, keyCache = -1, valueCache = -1, lengths = -1;
  /// Hkv, C, dk and dv, from the declared cache types.
  int64_t kvHeads = 0, capacity = 0, keyDim = 0, valueDim = 0;
  /// x's declared token dimension: `?` (dynamic) or the tokens of every
  /// call.
  int64_t declaredTokens = ShapedType::kDynamic;
  /// The caches' elements: float32, or bf16 (a bf16 layer's).
  ElementType cacheElement = ElementType::F32;
};

/// `x` of type `tensor<?x?x512xf32>`, for messages.
std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// A declared shape, `?` for a dynamic size: `[?, 2, 8, 8]`.
std::string declaredShape(RankedTensorType type) {
  std::string text = "[";
  for (auto [index, size] : llvm::enumerate(type.getShape()))
    text +=
        (index ? ", " : "") +
        (ShapedType::isDynamic(size) ? std::string("?") : std::to_string(size));
  return text + "]";
}

std::string describe(const GraphArgument &argument) {
  return llvm::formatv("{0} of type {1}", argument.name,
                       typeText(argument.type))
      .str();
}

/// Finds x, the caches and the lengths, and checks the types that the
/// driver relies on: caches [B, Hkv, C, d] with static Hkv, C and d, lengths
/// [B] of int64.
llvm::Expected<CacheGraph> findCacheGraph(const GraphSignature &signature,
                                          llvm::StringRef function) {
  CacheGraph graph;
  graph.x = signature.findArgument("x");
  graph.keyCache = signature.findArgument(kKeyCacheName);
  graph.valueCache = signature.findArgument(kValueCacheName);
  graph.lengths = signature.findArgument(kCacheLengthsName);
  if (graph.keyCache < 0 && graph.valueCache < 0 && graph.lengths < 0)
    return createError(llvm::formatv(
        "--prefill and --steps drive a graph with a key/value cache "
        "(arguments k_cache, v_cache and cache_lengths, as mha-gen "
        "--kv-cache writes), but @{0} has none (it takes: {1})",
        function, signature.listNames()));
  for (auto [index, name] :
       {std::pair(graph.x, "x"), std::pair(graph.keyCache, "k_cache"),
        std::pair(graph.valueCache, "v_cache"),
        std::pair(graph.lengths, "cache_lengths")})
    if (index < 0)
      return createError(llvm::formatv(
          "a cache graph takes x, k_cache, v_cache and cache_lengths, but "
          "@{0} has no argument '{1}' (it takes: {2})",
          function, name, signature.listNames()));
  const GraphArgument &x = signature.arguments[graph.x];
  const GraphArgument &keys = signature.arguments[graph.keyCache];
  const GraphArgument &values = signature.arguments[graph.valueCache];
  const GraphArgument &lengths = signature.arguments[graph.lengths];
  if (x.type.getRank() != 3 || ShapedType::isDynamic(x.type.getDimSize(2)))
    return createError(llvm::formatv(
        "a cache graph's x must be [B, T, D] with a static D, got {0}",
        describe(x)));
  for (const GraphArgument *cache : {&keys, &values}) {
    RankedTensorType type = cache->type;
    if (type.getRank() != 4 ||
        !(type.getElementType().isF32() || type.getElementType().isBF16()))
      return createError(llvm::formatv(
          "a cache graph's {0} must be a float32 or bf16 [B, Hkv, C, d], got "
          "{1}",
          cache->name, describe(*cache)));
    for (int dim = 1; dim < 4; ++dim)
      if (ShapedType::isDynamic(type.getDimSize(dim)))
        return createError(llvm::formatv(
            "the driver allocates {0} once, so its key/value heads, capacity "
            "and head width must be static; dimension {1} of {2} is `?`",
            cache->name, dim, describe(*cache)));
  }
  if (keys.type.getElementType() != values.type.getElementType())
    return createError(llvm::formatv(
        "k_cache and v_cache must have the same element type, got {0} and {1}",
        describe(keys), describe(values)));
  if (keys.type.getDimSize(1) != values.type.getDimSize(1) ||
      keys.type.getDimSize(2) != values.type.getDimSize(2))
    return createError(llvm::formatv(
        "k_cache and v_cache must have the same key/value heads and "
        "capacity, got {0} and {1}",
        describe(keys), describe(values)));
  if (lengths.type.getRank() != 1 ||
      !lengths.type.getElementType().isInteger(64))
    return createError(llvm::formatv(
        "a cache graph's cache_lengths must be an int64 [B], got {0}",
        describe(lengths)));
  graph.kvHeads = keys.type.getDimSize(1);
  graph.capacity = keys.type.getDimSize(2);
  graph.keyDim = keys.type.getDimSize(3);
  graph.valueDim = values.type.getDimSize(3);
  graph.declaredTokens = x.type.getDimSize(1);
  if (keys.type.getElementType().isBF16())
    graph.cacheElement = ElementType::BF16;
  return graph;
}

/// The signature the user binds inputs to: without the caches and the
/// lengths (the driver's own), and with x of T + N rows. The size relations
/// follow the arguments that remain.
GraphSignature bindingSignature(const GraphSignature &signature,
                                const CacheGraph &graph, int64_t rows) {
  GraphSignature binding;
  binding.result = signature.result;
  std::vector<int> newIndex(signature.arguments.size(), -1);
  for (auto [index, argument] : llvm::enumerate(signature.arguments)) {
    if (int(index) == graph.keyCache || int(index) == graph.valueCache ||
        int(index) == graph.lengths)
      continue;
    newIndex[index] = binding.arguments.size();
    binding.arguments.push_back(argument);
    if (int(index) == graph.x) {
      llvm::SmallVector<int64_t> shape(argument.type.getShape());
      shape[1] = rows;
      binding.arguments.back().type =
          RankedTensorType::get(shape, argument.type.getElementType());
    }
  }
  if (!signature.sizeRelations)
    return binding;
  SizeRelations relations;
  std::vector<int> newClass(signature.sizeRelations->classes.size(), -1);
  for (auto [index, sizeClass] :
       llvm::enumerate(signature.sizeRelations->classes)) {
    SizeRelations::SizeClass kept{{}, sizeClass.size};
    for (ArgumentDim dim : sizeClass.members)
      if (newIndex[dim.argument] >= 0 &&
          !(int(dim.argument) == graph.x && dim.dim == 1))
        kept.members.push_back({unsigned(newIndex[dim.argument]), dim.dim});
    if (kept.members.empty())
      continue;
    newClass[index] = relations.classes.size();
    relations.classes.push_back(std::move(kept));
  }
  // A bound whose class went (the cache's T <= C) is the driver's to check.
  for (SizeRelations::AtMost bound : signature.sizeRelations->bounds) {
    if ((bound.lhsClass && newClass[*bound.lhsClass] < 0) ||
        (bound.rhsClass && newClass[*bound.rhsClass] < 0))
      continue;
    if (bound.lhsClass)
      bound.lhsClass = newClass[*bound.lhsClass];
    if (bound.rhsClass)
      bound.rhsClass = newClass[*bound.rhsClass];
    relations.bounds.push_back(bound);
  }
  for (SizeRelations::Broadcast broadcast :
       signature.sizeRelations->broadcasts) {
    if (newClass[broadcast.mask] < 0 ||
        (broadcast.target && newClass[*broadcast.target] < 0))
      continue;
    broadcast.mask = newClass[broadcast.mask];
    if (broadcast.target)
      broadcast.target = newClass[*broadcast.target];
    relations.broadcasts.push_back(broadcast);
  }
  binding.sizeRelations = std::move(relations);
  return binding;
}

/// Parses `--lengths l0,l1,...`: B numbers, each between 0 and T.
llvm::Expected<std::vector<int64_t>>
parseLengths(llvm::StringRef text, int64_t batch, int64_t prefill) {
  if (text.empty())
    return std::vector<int64_t>(batch, prefill);
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',');
  std::vector<int64_t> lengths;
  for (llvm::StringRef part : parts) {
    int64_t length;
    if (part.trim().getAsInteger(10, length))
      return createError(llvm::formatv(
          "--lengths '{0}': expected comma-separated integers, one per "
          "sequence, e.g. --lengths 16,9",
          text));
    lengths.push_back(length);
  }
  if (int64_t(lengths.size()) != batch)
    return createError(llvm::formatv(
        "--lengths gives {0} lengths for a batch of {1} sequences; give one "
        "per sequence",
        lengths.size(), batch));
  for (auto [b, length] : llvm::enumerate(lengths))
    if (length < 0 || length > prefill)
      return createError(llvm::formatv(
          "--lengths: sequence {0} keeps {1} of the prefill's tokens; a "
          "length must be between 0 and --prefill {2}",
          b, length, prefill));
  return lengths;
}

/// The sizes and scale of the layer, for the reference: H, dk and the
/// scale from the graph's one mha.sdpa, the rest from the weights, which
/// must be the shared projections mha-gen writes.
llvm::Expected<AttentionShape> describeLayer(func::FuncOp entry,
                                             const GraphSignature &signature,
                                             const CacheGraph &graph,
                                             int64_t modelDim) {
  llvm::SmallVector<mlir::mha::SdpaOp> sdpas;
  entry.walk([&](mlir::mha::SdpaOp op) { sdpas.push_back(op); });
  if (sdpas.size() != 1)
    return createError(llvm::formatv(
        "--check compares a decoder with the reference of one attention "
        "layer, but @{0} has {1} mha.sdpa ops",
        entry.getSymName(), sdpas.size()));
  auto query = cast<RankedTensorType>(sdpas.front().getQuery().getType());
  AttentionShape shape;
  shape.numHeads = query.getDimSize(1);
  shape.numKvHeads = graph.kvHeads;
  shape.headDim = graph.keyDim;
  shape.valueDim = graph.valueDim;
  shape.modelDim = shape.kvDim = modelDim;
  shape.causal = true;
  shape.scale = sdpas.front().getEffectiveScale();
  int output = signature.findArgument("w_o");
  if (ShapedType::isDynamic(shape.numHeads) || output < 0)
    return createError("--check of a decoder needs static heads and a w_o");
  shape.outDim = signature.arguments[output].type.getShape().back();
  // The weights the reference reads, as it lays them out.
  struct Expected {
    const char *name;
    llvm::SmallVector<int64_t> shape;
  };
  int64_t h = shape.numHeads, g = shape.numKvHeads;
  for (const Expected &weight :
       {Expected{"w_q", {modelDim, h * shape.headDim}},
        Expected{"w_k", {modelDim, g * shape.headDim}},
        Expected{"w_v", {modelDim, g * shape.valueDim}},
        Expected{"w_o", {h * shape.valueDim, shape.outDim}}}) {
    int index = signature.findArgument(weight.name);
    if (index < 0 || signature.arguments[index].type.getShape() !=
                         llvm::ArrayRef<int64_t>(weight.shape))
      return createError(llvm::formatv(
          "--check of a decoder needs the shared projections mha-gen writes: "
          "{0} of shape {1}{2}",
          weight.name, formatShape(weight.shape),
          index < 0 ? ", but the graph has none"
                    : ", got " + describe(signature.arguments[index])));
  }
  if (auto error = verifyAttentionShape(shape))
    return std::move(error);
  return shape;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// Rows [begin, end) of every sequence of `x` [B, R, D], as [B, end - begin,
/// D].
NpyArray sliceRows(const NpyArray &x, int64_t begin, int64_t end) {
  int64_t batch = x.shape[0], rows = x.shape[1], width = x.shape[2];
  NpyArray slice =
      NpyArray::zeros(ElementType::F32, {batch, end - begin, width});
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(slice.f32() + b * (end - begin) * width,
                x.f32() + (b * rows + begin) * width,
                (end - begin) * width * sizeof(float));
  return slice;
}

/// Copies `from` [B, t, W] into rows [row, row + t) of `to` [B, R, W].
void storeRows(const NpyArray &from, NpyArray &to, int64_t row) {
  int64_t batch = to.shape[0], rows = to.shape[1], width = to.shape[2];
  int64_t count = from.shape[1];
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(to.f32() + (b * rows + row) * width,
                from.f32() + b * count * width, count * width * sizeof(float));
}

} // namespace

int runDecoder(LoadedGraph &loaded, PassManager &pm,
               const InputOptions &inputOptions, const DecodeOptions &options,
               llvm::raw_ostream &os,
               llvm::function_ref<void(const llvm::Twine &)> report) {
  auto fail = [&](llvm::Error error, ExitCode code) {
    report(llvm::toString(std::move(error)));
    return code;
  };
  auto failWith = [&](const llvm::Twine &message) {
    report(message);
    return kBadInput;
  };
  func::FuncOp entry = loaded.entry;
  const GraphSignature &signature = loaded.signature;
  int64_t prefill = options.prefill, steps = options.steps;
  if (prefill < 1)
    return failWith(llvm::formatv(
        "--prefill must be at least 1, got {0}: a decoder starts with one "
        "call of T >= 1 tokens into the empty cache (a prefill of 0 tokens "
        "is no call; for sequences that start empty, use --lengths 0,...)",
        prefill));
  if (steps < 0)
    return failWith(
        llvm::formatv("--steps must be at least 0, got {0}", steps));
  auto found = findCacheGraph(signature, entry.getSymName());
  if (!found)
    return fail(found.takeError(), kBadInput);
  const CacheGraph &graph = *found;
  int64_t capacity = graph.capacity;
  // A static token count serves one kind of call only.
  if (!ShapedType::isDynamic(graph.declaredTokens) &&
      (graph.declaredTokens != prefill || (steps > 0 && prefill != 1)))
    return failWith(llvm::formatv(
        "@{0} takes {1} token(s) per call (x {2}); --prefill {3} --steps {4} "
        "needs calls of {3} and of 1 token: write the graph with a `?` "
        "token count (mha-gen --dynamic --kv-cache C)",
        entry.getSymName(), graph.declaredTokens,
        typeText(signature.arguments[graph.x].type), prefill, steps));
  // The prefill's capacity first: it needs no input. The steps' is checked
  // per sequence once the lengths are known.
  if (prefill > capacity)
    return failWith(llvm::formatv(
        "--prefill {0} does not fit in the cache: its capacity is {1} tokens "
        "(k_cache {2})",
        prefill, capacity,
        declaredShape(signature.arguments[graph.keyCache].type)));

  // The steps too, where no input is needed (and before x of T + N rows is
  // made): without --lengths every sequence holds T tokens after the
  // prefill, and none can take more steps than the capacity.
  auto pastCapacity = [&](int64_t sequence, int64_t length, int64_t longest) {
    return failWith(llvm::formatv(
        "--steps {0}: sequence {1} would reach {2} + {0} = {3} tokens, past "
        "the cache's capacity of {4} (k_cache {5}); at most {6} steps fit",
        steps, sequence, length, length + steps, capacity,
        declaredShape(signature.arguments[graph.keyCache].type),
        capacity - longest));
  };
  if (steps > capacity)
    return failWith(llvm::formatv("--steps {0} is more than the cache's "
                                  "capacity of {1} tokens",
                                  steps, capacity));
  if (options.lengths.empty() && steps > capacity - prefill)
    return pastCapacity(0, prefill, prefill);

  // The inputs, x with the prefill's rows and the steps'.
  GraphSignature binding = bindingSignature(signature, graph, prefill + steps);
  auto bound = bindInputs(binding, inputOptions, &os);
  if (!bound)
    return fail(bound.takeError(), kBadInput);
  // bf16 arguments come as float32 and are rounded to nearest even: in
  // place, so that the reference sees the values the graph computes with,
  // and into bf16 copies, which the calls read. The float32 values as given
  // are kept for the accuracy rule of --check.
  std::vector<NpyArray> givenInputs;
  if (options.check && graph.cacheElement == ElementType::BF16)
    givenInputs = *bound;
  std::vector<NpyArray> bf16Copies;
  std::vector<const NpyArray *> callInputs =
      roundBF16Arguments(binding, *bound, bf16Copies, &os);
  const NpyArray &x = (*bound)[binding.findArgument("x")];
  bool bf16Tokens = signature.arguments[graph.x].type.getElementType().isBF16();
  int64_t batch = x.shape[0];
  auto lengths = parseLengths(options.lengths, batch, prefill);
  if (!lengths)
    return fail(lengths.takeError(), kBadInput);
  int64_t longest = *std::max_element(lengths->begin(), lengths->end());
  for (auto [b, length] : llvm::enumerate(*lengths))
    if (length + steps > capacity)
      return pastCapacity(b, length, longest);

  // The decoder's own arrays: the caches, zeroed once, and the lengths.
  std::vector<int64_t> keyShape = {batch, graph.kvHeads, capacity,
                                   graph.keyDim};
  std::vector<int64_t> valueShape = {batch, graph.kvHeads, capacity,
                                     graph.valueDim};
  uint64_t cacheBytes = 0;
  for (const std::vector<int64_t> *shape : {&keyShape, &valueShape}) {
    std::optional<int64_t> bytes = getByteCount(*shape, graph.cacheElement);
    if (!bytes)
      return failWith(llvm::formatv("the cache of shape {0}: its byte count "
                                    "overflows",
                                    formatShape(*shape)));
    cacheBytes += *bytes;
  }
  if (auto error = checkMemoryLimit(
          cacheBytes,
          llvm::formatv("the caches k_cache {0} and v_cache {1}",
                        formatShape(keyShape), formatShape(valueShape))
              .str()))
    return fail(std::move(error), kBadInput);
  NpyArray keyCache = NpyArray::zeros(graph.cacheElement, keyShape);
  NpyArray valueCache = NpyArray::zeros(graph.cacheElement, valueShape);
  NpyArray cacheLengths = NpyArray::zeros(ElementType::I64, {batch});
  int64_t *lengthData = cacheLengths.i64();

  // Every argument of a call: the bound ones, the caches, the lengths, and
  // x of the call's tokens.
  std::vector<NpyArray> stepInputs;
  // The rows of each call, in bf16 where x is (exact: x is rounded).
  auto tokensOf = [&](int64_t begin, int64_t end) {
    NpyArray rows = sliceRows(x, begin, end);
    return bf16Tokens ? toBF16Array(rows) : rows;
  };
  NpyArray prefillInput = tokensOf(0, prefill);
  for (int64_t step = 0; step < steps; ++step)
    stepInputs.push_back(tokensOf(prefill + step, prefill + step + 1));
  auto arguments = [&](const NpyArray &tokens) {
    std::vector<const NpyArray *> list;
    for (auto [index, argument] : llvm::enumerate(signature.arguments)) {
      if (int(index) == graph.x)
        list.push_back(&tokens);
      else if (int(index) == graph.keyCache)
        list.push_back(&keyCache);
      else if (int(index) == graph.valueCache)
        list.push_back(&valueCache);
      else if (int(index) == graph.lengths)
        list.push_back(&cacheLengths);
      else
        list.push_back(callInputs[binding.findArgument(argument.name)]);
    }
    return list;
  };
  // Both kinds of call must fit the graph, checked by its verifiers before
  // anything is compiled.
  if (auto error = checkInputsFitTogether(entry, arguments(prefillInput)))
    return fail(std::move(error), kBadInput);
  if (steps > 0)
    if (auto error = checkInputsFitTogether(entry, arguments(stepInputs[0])))
      return fail(std::move(error), kBadInput);

  // The reference's sizes, before the long part.
  std::optional<AttentionShape> layer;
  if (options.check) {
    auto described = describeLayer(entry, signature, graph, x.shape[2]);
    if (!described)
      return fail(described.takeError(), kBadInput);
    layer = *described;
  }

  // Lower and compile; pack the weights once.
  OwningOpRef<ModuleOp> lowered = loaded.module->clone();
  if (failed(pm.run(*lowered))) {
    report("lowering the cache graph failed (see above)");
    return kCompileFailed;
  }
  auto function = CompiledFunction::create(*lowered, entry.getSymName(),
                                           signature.result.getRank());
  if (!function)
    return fail(function.takeError(), kCompileFailed);
  if (auto prepared = (*function)->prepare(arguments(prefillInput)); !prepared)
    return fail(prepared.takeError(), kCompileFailed);

  // Rounds of a prefill and the steps; the last round's outputs are kept.
  // The result's width is static (the weights fix it); checkInputsFitTogether
  // gives no type for a function of several results.
  int64_t outDim = signature.result.getShape().back();
  NpyArray outputs =
      NpyArray::zeros(ElementType::F32, {batch, prefill + steps, outDim});
  std::vector<double> prefillTimes, stepTimes;
  unsigned totalRounds = options.warmupRounds + options.rounds;
  for (unsigned round = 0; round < totalRounds; ++round) {
    bool timed = round >= options.warmupRounds;
    bool last = round + 1 == totalRounds;
    std::fill(lengthData, lengthData + batch, 0);
    auto start = std::chrono::steady_clock::now();
    auto y = (*function)->call(arguments(prefillInput));
    if (!y)
      return fail(y.takeError(), kCompileFailed);
    if (timed)
      prefillTimes.push_back(millisecondsSince(start));
    if (last)
      storeRows(*y, outputs, 0);
    std::copy(lengths->begin(), lengths->end(), lengthData);
    for (int64_t step = 0; step < steps; ++step) {
      start = std::chrono::steady_clock::now();
      y = (*function)->call(arguments(stepInputs[step]));
      if (!y)
        return fail(y.takeError(), kCompileFailed);
      if (timed)
        stepTimes.push_back(millisecondsSince(start));
      if (last)
        storeRows(*y, outputs, prefill + step);
      for (int64_t b = 0; b < batch; ++b)
        ++lengthData[b];
    }
  }

  os << llvm::formatv("decode: batch {0}, prefill {1} tokens, {2} step{4} of "
                      "1 token, cache capacity {3}",
                      batch, prefill, steps, capacity, steps == 1 ? "" : "s");
  if (graph.cacheElement == ElementType::BF16)
    os << llvm::formatv(", bf16 caches ({0} bytes)", cacheBytes);
  if (!options.lengths.empty())
    os << ", lengths after the prefill " << options.lengths;
  os << llvm::formatv(" ({0} thread{1})\n", omp_get_max_threads(),
                      omp_get_max_threads() == 1 ? "" : "s");
  double prefillMs = median(prefillTimes);
  os << llvm::formatv("prefill: median {0:F3} ms over {1} run(s), {2:F0} "
                      "tokens/s\n",
                      prefillMs, prefillTimes.size(),
                      batch * prefill / (prefillMs * 1e-3));
  if (steps > 0) {
    double stepMs = median(stepTimes);
    os << llvm::formatv("step: median {0:F3} ms, min {1:F3} ms over {2} "
                        "steps, {3:F0} tokens/s\n",
                        stepMs,
                        *std::min_element(stepTimes.begin(), stepTimes.end()),
                        stepTimes.size(), batch / (stepMs * 1e-3));
  }

  if (!options.outputFile.empty()) {
    if (auto error = writeNpy(options.outputFile, outputs))
      return fail(std::move(error), kBadInput);
    os << "wrote the outputs " << formatShape(outputs.shape) << " to "
       << options.outputFile << "\n";
  }
  int status = kOk;
  if (!options.expectFile.empty()) {
    auto expected = readNpy(options.expectFile);
    if (!expected)
      return fail(expected.takeError(), kBadInput);
    auto comparison =
        compareArrays(outputs, *expected, options.atol, options.rtol);
    if (!comparison)
      return failWith(llvm::formatv("--expect {0}: {1}", options.expectFile,
                                    llvm::toString(comparison.takeError())));
    os << "expect " << options.expectFile << ": " << comparison->summary()
       << "\n";
    if (!comparison->passed)
      status = kMismatch;
  }
  if (!layer)
    return status;

  // The reference: per sequence, the causal layer over the tokens it kept
  // of the prefill and its steps; compared with those rows only (a ragged
  // sequence's prefill rows past its length belong to no sequence).
  int64_t width = x.shape[2];
  int64_t validRows = 0;
  for (int64_t length : *lengths)
    validRows += length + steps;
  NpyArray got = NpyArray::zeros(ElementType::F32, {validRows, outDim});
  // The reference of every kept row, from `inputs` (the binding's arrays).
  auto referenceRows = [&](const std::vector<NpyArray> &inputs) {
    NpyArray want = NpyArray::zeros(ElementType::F32, {validRows, outDim});
    auto weight = [&](const char *name) -> const float * {
      int index = binding.findArgument(name);
      return index < 0 ? nullptr : inputs[index].f32();
    };
    const NpyArray &tokensGiven = inputs[binding.findArgument("x")];
    AttentionOperands operands;
    operands.wQ = weight("w_q");
    operands.wK = weight("w_k");
    operands.wV = weight("w_v");
    operands.wO = weight("w_o");
    operands.bQ = weight("b_q");
    operands.bK = weight("b_k");
    operands.bV = weight("b_v");
    operands.bO = weight("b_o");
    int64_t row = 0;
    for (int64_t b = 0; b < batch; ++b) {
      int64_t kept = (*lengths)[b], total = kept + steps;
      if (total == 0)
        continue;
      std::vector<float> tokens(total * width);
      const float *sequence = tokensGiven.f32() + b * x.shape[1] * width;
      std::copy(sequence, sequence + kept * width, tokens.begin());
      std::copy(sequence + prefill * width,
                sequence + (prefill + steps) * width,
                tokens.begin() + kept * width);
      AttentionShape shape = *layer;
      shape.batch = 1;
      shape.seqLen = shape.kvSeqLen = total;
      operands.x = tokens.data();
      referenceAttention(shape, operands, want.f32() + row * outDim);
      row += total;
    }
    return want;
  };
  int64_t row = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t kept = (*lengths)[b], total = kept + steps;
    const float *ours = outputs.f32() + b * (prefill + steps) * outDim;
    std::copy(ours, ours + kept * outDim, got.f32() + row * outDim);
    std::copy(ours + prefill * outDim, ours + (prefill + steps) * outDim,
              got.f32() + (row + kept) * outDim);
    row += total;
  }
  os << llvm::formatv("check {0} rows (the prefill's kept rows and every "
                      "step's) against the C++ reference of the causal "
                      "layer over each sequence: ",
                      validRows);
  if (graph.cacheElement == ElementType::BF16) {
    // The accuracy rule of bf16 layers: the error against the reference of
    // the float32 inputs as given is at most 1.5 times the error of that
    // reference computed on the bf16-rounded inputs (what storing them in
    // bf16 alone costs), or --atol where that is smaller; never NaN.
    NpyArray exact = referenceRows(givenInputs);
    NpyArray rounded = referenceRows(*bound);
    double ourError = 0, storageError = 0;
    bool nan = false;
    for (int64_t i = 0, e = validRows * outDim; i < e; ++i) {
      nan |= std::isnan(got.f32()[i]);
      ourError = std::max(
          ourError, std::fabs(double(got.f32()[i]) - double(exact.f32()[i])));
      storageError = std::max(storageError, std::fabs(double(rounded.f32()[i]) -
                                                      double(exact.f32()[i])));
    }
    double bound = std::max(1.5 * storageError, options.atol);
    bool passed = !nan && ourError <= bound;
    os << llvm::formatv("bf16 max abs error {0:e}, of the reference on the "
                        "bf16-rounded inputs {1:e}, bound {2:e} (1.5x, or "
                        "--atol): {3}\n",
                        ourError, storageError, bound,
                        nan ? "NaN" : (passed ? "ok" : "MISMATCH"));
    if (!passed)
      status = kMismatch;
    return status;
  }
  NpyArray want = referenceRows(*bound);
  auto comparison = compareArrays(got, want, options.atol, options.rtol);
  if (!comparison)
    return fail(comparison.takeError(), kBadInput);
  os << comparison->summary() << "\n";
  if (!comparison->passed)
    status = kMismatch;
  return status;
}

} // namespace mha::tools
