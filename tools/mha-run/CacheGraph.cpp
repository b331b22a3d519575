//===- CacheGraph.cpp - The arguments of a key/value cache graph ----------===//

#include "tools/mha-run/CacheGraph.h"
#include "tools/mha-run/Decode.h"

#include "dialects/MhaOps.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace ::mha::runtime;

namespace mha::tools {

static llvm::Error createError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// `x` of type `tensor<?x?x512xf32>`, for messages.
static std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// A declared shape, `?` for a dynamic size: `[?, 2, 8, 8]`.
static std::string declaredShape(RankedTensorType type) {
  std::string text = "[";
  for (auto [index, size] : llvm::enumerate(type.getShape()))
    text +=
        (index ? ", " : "") +
        (ShapedType::isDynamic(size) ? std::string("?") : std::to_string(size));
  return text + "]";
}

static std::string describe(const GraphArgument &argument) {
  return llvm::formatv("{0} of type {1}", argument.name,
                       typeText(argument.type))
      .str();
}

llvm::Expected<CacheGraph> findCacheGraph(const GraphSignature &signature,
                                          llvm::StringRef function) {
  CacheGraph graph;
  graph.x = signature.findArgument("x");
  // A paged cache's pools stand where a dense cache's caches do.
  bool paged = signature.findArgument(kKeyPoolName) >= 0 ||
               signature.findArgument(kValuePoolName) >= 0 ||
               signature.findArgument(kBlockTableName) >= 0;
  StringRef keyName = paged ? kKeyPoolName : kKeyCacheName;
  StringRef valueName = paged ? kValuePoolName : kValueCacheName;
  graph.keyCache = signature.findArgument(keyName);
  graph.valueCache = signature.findArgument(valueName);
  graph.lengths = signature.findArgument(kCacheLengthsName);
  if (paged)
    graph.blockTable = signature.findArgument(kBlockTableName);
  if (graph.keyCache < 0 && graph.valueCache < 0 && graph.lengths < 0)
    return createError(llvm::formatv(
        "--prefill and --steps drive a graph with a key/value cache "
        "(arguments k_cache, v_cache and cache_lengths, as mha-gen "
        "--kv-cache writes), but @{0} has none (it takes: {1})",
        function, signature.listNames()));
  for (auto [index, name] :
       {std::pair(graph.x, StringRef("x")), std::pair(graph.keyCache, keyName),
        std::pair(graph.valueCache, valueName),
        std::pair(graph.lengths, StringRef(kCacheLengthsName)),
        std::pair(paged ? graph.blockTable : 0, StringRef(kBlockTableName))})
    if (index < 0)
      return createError(llvm::formatv(
          "a cache graph takes x, {0}, {1}{2} and cache_lengths, but @{3} has "
          "no argument '{4}' (it takes: {5})",
          keyName, valueName, paged ? ", block_table" : "", function, name,
          signature.listNames()));
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
        !(type.getElementType().isF32() || type.getElementType().isBF16() ||
          type.getElementType().isInteger(8)))
      return createError(llvm::formatv(
          "a cache graph's {0} must be a float32, bf16 or int8 {1}, got {2}",
          cache->name, paged ? "[N, Hkv, P, d]" : "[B, Hkv, C, d]",
          describe(*cache)));
    for (int dim = 1; dim < 4; ++dim)
      if (ShapedType::isDynamic(type.getDimSize(dim)))
        return createError(llvm::formatv(
            "the driver allocates {0} once, so its key/value heads, capacity "
            "and head width must be static; dimension {1} of {2} is `?`",
            cache->name, dim, describe(*cache)));
  }
  if (keys.type.getElementType() != values.type.getElementType())
    return createError(llvm::formatv(
        "{0} and {1} must have the same element type, got {2} and {3}", keyName,
        valueName, describe(keys), describe(values)));
  if (keys.type.getDimSize(1) != values.type.getDimSize(1) ||
      keys.type.getDimSize(2) != values.type.getDimSize(2))
    return createError(llvm::formatv(
        "{0} and {1} must have the same key/value heads and {2}, got {3} "
        "and {4}",
        keyName, valueName, paged ? "page size" : "capacity", describe(keys),
        describe(values)));
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
  if (paged) {
    const GraphArgument &table = signature.arguments[graph.blockTable];
    if (table.type.getRank() != 2 ||
        !table.type.getElementType().isInteger(32) ||
        ShapedType::isDynamic(table.type.getDimSize(1)))
      return createError(llvm::formatv(
          "a paged cache graph's block_table must be an int32 [B, M] with a "
          "static M, got {0}",
          describe(table)));
    graph.pageSize = keys.type.getDimSize(2);
    graph.pagesPerSequence = table.type.getDimSize(1);
    graph.capacity = graph.pageSize * graph.pagesPerSequence;
    graph.poolPages = keys.type.getDimSize(0);
  }
  if (keys.type.getElementType().isBF16())
    graph.cacheElement = ElementType::BF16;
  if (keys.type.getElementType().isInteger(8)) {
    graph.cacheElement = ElementType::I8;
    graph.keyScales = signature.findArgument(kKeyScalesName);
    graph.valueScales = signature.findArgument(kValueScalesName);
    for (auto [index, cache] : {std::pair(graph.keyScales, &keys),
                                std::pair(graph.valueScales, &values)}) {
      StringRef name =
          index == graph.keyScales ? kKeyScalesName : kValueScalesName;
      RankedTensorType expected =
          RankedTensorType::get(cache->type.getShape().drop_back(),
                                Float32Type::get(cache->type.getContext()));
      if (index < 0 || signature.arguments[index].type != expected)
        return createError(llvm::formatv(
            "an int8 cache graph takes the scales of {0} as '{1}' of type {2}, "
            "but @{3} has {4}",
            cache->name, name, typeText(expected), function,
            index < 0 ? std::string("none")
                      : describe(signature.arguments[index])));
    }
  }
  return graph;
}

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

/// Where the capacity comes from: `k_cache [?, 2, 16, 8]`, or `block_table
/// [?, 3] of pages of 16 rows` for a paged cache.
static std::string describeCapacity(const GraphSignature &signature,
                                    const CacheGraph &graph) {
  if (!graph.isPaged())
    return "k_cache " + declaredShape(signature.arguments[graph.keyCache].type);
  return llvm::formatv(
             "block_table {0} of pages of {1} rows",
             declaredShape(signature.arguments[graph.blockTable].type),
             graph.pageSize)
      .str();
}

llvm::Error checkCallsFit(func::FuncOp entry, const GraphSignature &signature,
                          const CacheGraph &graph, int64_t prefill,
                          int64_t steps, bool lengthsGiven) {
  int64_t capacity = graph.capacity;
  // A static token count serves one kind of call only.
  if (!ShapedType::isDynamic(graph.declaredTokens) &&
      (graph.declaredTokens != prefill || (steps > 0 && prefill != 1)))
    return createError(llvm::formatv(
        "@{0} takes {1} token(s) per call (x {2}); --prefill {3} --steps {4} "
        "needs calls of {3} and of 1 token: write the graph with a `?` "
        "token count (mha-gen --dynamic --kv-cache C)",
        entry.getSymName(), graph.declaredTokens,
        typeText(signature.arguments[graph.x].type), prefill, steps));
  // The prefill's capacity first: it needs no input. The steps' is checked
  // per sequence once the lengths are known.
  if (prefill > capacity)
    return createError(llvm::formatv(
        "--prefill {0} does not fit in the cache: its capacity is {1} tokens "
        "({2})",
        prefill, capacity, describeCapacity(signature, graph)));

  // The steps too, where no input is needed (and before x of T + N rows is
  // made): without --lengths every sequence holds T tokens after the
  // prefill, and none can take more steps than the capacity.
  if (steps > capacity)
    return createError(llvm::formatv("--steps {0} is more than the cache's "
                                     "capacity of {1} tokens",
                                     steps, capacity));
  if (!lengthsGiven && steps > capacity - prefill)
    return pastCapacityError(signature, graph, steps, 0, prefill, prefill);
  return llvm::Error::success();
}

llvm::Error pastCapacityError(const GraphSignature &signature,
                              const CacheGraph &graph, int64_t steps,
                              int64_t sequence, int64_t length,
                              int64_t longest) {
  int64_t capacity = graph.capacity;
  return createError(llvm::formatv(
      "--steps {0}: sequence {1} would reach {2} + {0} = {3} tokens, past "
      "the cache's capacity of {4} ({5}); at most {6} steps fit",
      steps, sequence, length, length + steps, capacity,
      describeCapacity(signature, graph), capacity - longest));
}

GraphSignature bindingSignature(const GraphSignature &signature,
                                const CacheGraph &graph, int64_t rows) {
  GraphSignature binding;
  binding.result = signature.result;
  std::vector<int> newIndex(signature.arguments.size(), -1);
  for (auto [index, argument] : llvm::enumerate(signature.arguments)) {
    if (int(index) == graph.keyCache || int(index) == graph.valueCache ||
        int(index) == graph.keyScales || int(index) == graph.valueScales ||
        int(index) == graph.lengths || int(index) == graph.blockTable)
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

/// The QK-norm and RoPE ops that feed one operand of the layer's mha.sdpa,
/// walking back through the cache append and a bf16 layer's conversions.
struct HeadSteps {
  mlir::mha::RmsNormOp norm;
  mlir::mha::RopeOp rope;
  /// Whether something other than one norm followed by one rope is there.
  bool unexpected = false;
};

static HeadSteps findHeadSteps(Value value) {
  HeadSteps steps;
  while (Operation *op = value.getDefiningOp()) {
    if (auto append = dyn_cast<mlir::mha::CacheAppendOp>(op)) {
      value = append.getUpdate();
    } else if (auto quantized =
                   dyn_cast<mlir::mha::CacheAppendQuantizedOp>(op)) {
      value = quantized.getUpdate();
    } else if (auto dequantize = dyn_cast<mlir::mha::DequantizeOp>(op)) {
      value = dequantize.getCodes();
    } else if (auto paged = dyn_cast<mlir::mha::PagedCacheAppendOp>(op)) {
      value = paged.getUpdate();
    } else if (auto quantized =
                   dyn_cast<mlir::mha::PagedCacheAppendQuantizedOp>(op)) {
      value = quantized.getUpdate();
    } else if (auto view = dyn_cast<mlir::mha::PagedViewOp>(op)) {
      value = view.getPool();
    } else if (op->hasTrait<OpTrait::Elementwise>() &&
               op->getNumOperands() == 1) {
      value = op->getOperand(0);
    } else if (auto rope = dyn_cast<mlir::mha::RopeOp>(op)) {
      // The reference rotates once, after the norm.
      steps.unexpected |= steps.rope || steps.norm;
      steps.rope = rope;
      value = rope.getInput();
    } else if (auto norm = dyn_cast<mlir::mha::RmsNormOp>(op)) {
      steps.unexpected |= bool(steps.norm);
      steps.norm = norm;
      value = norm.getInput();
    } else {
      break;
    }
  }
  return steps;
}

/// The arguments the decoder's check reads the variants' parameters from
/// (by name, as it finds the weights; tools/mha-run/DecodeCheck.cpp).
static constexpr llvm::StringLiteral kParameterNames[] = {
    "q_norm", "k_norm", "rope_inv_freq", "alibi_slopes", "sinks"};

/// Checks that `value` is the argument the decoder's check reads as `name`,
/// and adds `name` to `used`.
static llvm::Error
checkParameter(func::FuncOp entry, const GraphSignature &signature, Value value,
               llvm::StringRef name, llvm::StringRef what,
               llvm::SmallVectorImpl<llvm::StringRef> &used) {
  auto argument = dyn_cast<BlockArgument>(value);
  int index = signature.findArgument(name);
  if (argument && argument.getOwner() == &entry.getBody().front() &&
      int(argument.getArgNumber()) == index) {
    used.push_back(name);
    return llvm::Error::success();
  }
  return createError(llvm::formatv(
      "--check of a decoder reads {0} from the argument '{1}', as mha-gen "
      "writes it, but @{2} takes it from {3}",
      what, name, entry.getSymName(),
      argument && argument.getOwner() == &entry.getBody().front() &&
              argument.getArgNumber() < signature.arguments.size()
          ? "the argument '" +
                signature.arguments[argument.getArgNumber()].name + "'"
          : std::string("a value computed in the graph")));
}

/// Reads QK-norm and RoPE off the ops that feed the sdpa's queries and keys
/// into `shape`; both must have the same ones, as the reference applies
/// them to both, and RoPE must place token t at cache_lengths[b] + t (so
/// that a sequence's tokens sit at 0, 1, ... over its prefill and steps, the
/// positions the reference gives them).
static llvm::Error
describeHeadSteps(func::FuncOp entry, const GraphSignature &signature,
                  mlir::mha::SdpaOp sdpa, AttentionShape &shape,
                  llvm::SmallVectorImpl<llvm::StringRef> &used) {
  HeadSteps query = findHeadSteps(sdpa.getQuery());
  HeadSteps key = findHeadSteps(sdpa.getKey());
  HeadSteps value = findHeadSteps(sdpa.getValue());
  auto refuse = [&](llvm::StringRef why) {
    return createError(llvm::formatv(
        "--check of a decoder cannot compare @{0} with the reference: {1}",
        entry.getSymName(), why));
  };
  if (query.unexpected || key.unexpected)
    return refuse("the reference applies at most one mha.rms_norm and then "
                  "one mha.rope to the queries and to the keys");
  if (value.norm || value.rope)
    return refuse("the reference applies no mha.rms_norm or mha.rope to the "
                  "values");
  if (bool(query.norm) != bool(key.norm))
    return refuse("the reference applies QK-norm (mha.rms_norm) to both the "
                  "queries and the keys or to neither");
  if (query.norm) {
    if (query.norm.getEps() != key.norm.getEps())
      return refuse("the queries' and the keys' mha.rms_norm have different "
                    "eps");
    shape.qkNormEps = query.norm.getEps().convertToDouble();
    if (auto error =
            checkParameter(entry, signature, query.norm.getWeight(), "q_norm",
                           "the queries' norm weights", used))
      return error;
    if (auto error = checkParameter(entry, signature, key.norm.getWeight(),
                                    "k_norm", "the keys' norm weights", used))
      return error;
  }
  if (bool(query.rope) != bool(key.rope))
    return refuse("the reference applies RoPE (mha.rope) to both the queries "
                  "and the keys or to neither");
  if (!query.rope)
    return llvm::Error::success();
  mlir::mha::RopeOp q = query.rope, k = key.rope;
  if (q.getLayout() != k.getLayout() || q.getRotaryDim() != k.getRotaryDim() ||
      q.getBase() != k.getBase() || q.getScale() != k.getScale() ||
      q.getMscale() != k.getMscale() || q.getInvFreq() != k.getInvFreq())
    return refuse("the queries' and the keys' mha.rope differ");
  for (mlir::mha::RopeOp rope : {q, k})
    if (auto error =
            checkParameter(entry, signature, rope.getOffsets(),
                           kCacheLengthsName, "RoPE's position offsets", used))
      return error;
  if (Value invFreq = q.getInvFreq())
    if (auto error = checkParameter(entry, signature, invFreq, "rope_inv_freq",
                                    "RoPE's inverse frequencies", used))
      return error;
  shape.rope = q.isInterleaved() ? AttentionShape::Rope::Interleaved
                                 : AttentionShape::Rope::Half;
  shape.rotaryDim = q.getRotaryDim();
  shape.ropeBase = q.getBase().convertToDouble();
  shape.ropeScale = q.getScale().convertToDouble();
  shape.ropeMscale = q.getMscale().convertToDouble();
  return llvm::Error::success();
}

/// Reads the score steps of the sdpa into `shape`: the window and the
/// softcap, and checks that ALiBi's slopes and the sinks are the arguments
/// the check reads. A mask or a score bias, which mha-gen does not write
/// for a cache graph, has no meaning the reference could follow over the
/// prefill and the steps: it is refused.
static llvm::Error
describeScoreSteps(func::FuncOp entry, const GraphSignature &signature,
                   mlir::mha::SdpaOp sdpa, AttentionShape &shape,
                   llvm::SmallVectorImpl<llvm::StringRef> &used) {
  if (sdpa.getMask() || sdpa.getAttnBias())
    return createError(llvm::formatv(
        "--check of a decoder cannot compare @{0} with the reference: its "
        "mha.sdpa takes a {1}, whose rows the reference has no way to follow "
        "over the prefill and the steps",
        entry.getSymName(), sdpa.getMask() ? "mask" : "score bias"));
  shape.window = sdpa.getWindow().value_or(0);
  shape.softcap =
      sdpa.getSoftcap() ? sdpa.getSoftcap()->convertToDouble() : 0.0;
  if (Value slopes = sdpa.getAlibiSlopes())
    if (auto error = checkParameter(entry, signature, slopes, "alibi_slopes",
                                    "ALiBi's slopes", used))
      return error;
  if (Value sinks = sdpa.getSinks())
    if (auto error =
            checkParameter(entry, signature, sinks, "sinks", "the sinks", used))
      return error;
  return llvm::Error::success();
}

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
  if (mlir::mha::getScoreModRegion(sdpas.front()))
    return createError("--check of a decoder has no reference for a "
                       "score_mod region; use --expect with a result "
                       "computed elsewhere");
  auto query = cast<RankedTensorType>(sdpas.front().getQuery().getType());
  AttentionShape shape;
  shape.numHeads = query.getDimSize(1);
  shape.numKvHeads = graph.kvHeads;
  shape.headDim = graph.keyDim;
  shape.valueDim = graph.valueDim;
  shape.modelDim = shape.kvDim = modelDim;
  shape.causal = true;
  shape.scale = sdpas.front().getEffectiveScale();
  shape.int8KeysValues = graph.cacheElement == ElementType::I8;
  shape.bf16KeysValues = graph.cacheElement == ElementType::BF16;
  llvm::SmallVector<llvm::StringRef> used;
  if (auto error =
          describeHeadSteps(entry, signature, sdpas.front(), shape, used))
    return std::move(error);
  if (auto error =
          describeScoreSteps(entry, signature, sdpas.front(), shape, used))
    return std::move(error);
  // The check reads a parameter wherever its name is bound: one that feeds
  // something else would be applied where the graph does not apply it.
  for (llvm::StringRef name : kParameterNames)
    if (signature.findArgument(name) >= 0 && !llvm::is_contained(used, name))
      return createError(llvm::formatv(
          "--check of a decoder reads the argument '{0}' as mha-gen writes "
          "it, but in @{1} it is not what the layer's {2} takes",
          name, entry.getSymName(),
          name == "q_norm" || name == "k_norm" ? "mha.rms_norm"
          : name == "rope_inv_freq"            ? "mha.rope"
                                               : "mha.sdpa"));
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

} // namespace mha::tools
