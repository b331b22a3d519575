//===- CInterface.cpp - The C header and wrapper of a library -------------===//

#include "tools/mha-compile/CInterface.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace mlir;
using mha::runtime::GraphArgument;

namespace mha::compile {

std::string toCIdentifier(llvm::StringRef text) {
  std::string result;
  for (char c : text)
    result += llvm::isAlnum(c) ? c : '_';
  if (result.empty() || llvm::isDigit(result.front()))
    result.insert(result.begin(), '_');
  return result;
}

namespace {
/// `[?, ?, 512]` as the header documents a declared shape.
std::string describeShape(RankedTensorType type) {
  std::string text = "[";
  for (auto [index, size] : llvm::enumerate(type.getShape())) {
    if (index)
      text += ", ";
    text += ShapedType::isDynamic(size) ? "?" : std::to_string(size);
  }
  return text + "]";
}

bool isMask(const GraphArgument &argument) {
  return argument.type.getElementType().isInteger(1);
}

/// Which arguments a C function takes.
enum class Arguments { All, Weights, Activations };

bool takes(const LibraryInterface &interface, Arguments which, unsigned index) {
  return which == Arguments::All ||
         interface.isWeight[index] == (which == Arguments::Weights);
}

bool isInt64(const GraphArgument &argument) {
  return argument.type.getElementType().isInteger(64);
}

/// A bf16 key/value cache of a cache graph (mha-gen --dtype bf16
/// --kv-cache): updated in place, so the C API cannot round the caller's
/// floats into a copy of it. It takes the bf16 bits themselves
/// (`uint16_t *`), in every view; a session allocates them itself.
bool isBF16Cache(const GraphArgument &argument) {
  return argument.type.getElementType().isBF16() &&
         argument.type.getRank() == 4 &&
         (argument.name == "k_cache" || argument.name == "v_cache");
}

/// A bf16 argument that the C API takes as float32 and rounds (every bf16
/// argument but a cache).
bool isBF16(const GraphArgument &argument) {
  return argument.type.getElementType().isBF16() && !isBF16Cache(argument);
}

/// Whose view of an argument's data a C function has. Only bf16 arguments
/// differ: the caller passes float32 values (C has no bfloat16, nor has
/// NumPy), the compiled code reads the bf16 bits the wrapper rounded them
/// to, and the checks, which read no bf16 element, take either.
enum class View { Caller, Graph, Check };

/// The element type of an argument in C, as `view` sees it.
std::string elementType(const GraphArgument &argument,
                        View view = View::Caller) {
  if (isBF16Cache(argument))
    return "uint16_t";
  if (isBF16(argument))
    return view == View::Graph   ? "uint16_t"
           : view == View::Check ? "void"
                                 : "float";
  return isMask(argument) ? "uint8_t" : isInt64(argument) ? "int64_t" : "float";
}

/// The key/value cache of a cache graph (mha-gen --kv-cache): its arguments
/// by name, and the sizes a session needs. The caches are written in place,
/// so the C API takes them without `const`.
struct CacheLayout {
  unsigned x = 0, keyCache = 0, valueCache = 0, lengths = 0;
  /// x's batch if static, else `?`; D; Hkv; C; dk; dv; D_out.
  int64_t batch = ShapedType::kDynamic, modelDim = 0, kvHeads = 0, capacity = 0,
          keyDim = 0, valueDim = 0, outDim = 0;
  /// Whether the session API can be written: every activation is one of
  /// x, the caches and the lengths, and the sizes it fixes are static.
  bool session = false;
  /// The C type of the caches' elements: `float`, or `uint16_t` (bf16
  /// bits) for a bf16 layer's caches.
  std::string element = "float";
};

/// The cache of `interface`'s graph, if it is a cache graph: it has k_cache
/// and v_cache of rank 4, both float32 or both bf16, and an int64
/// cache_lengths of rank 1.
std::optional<CacheLayout> findCache(const LibraryInterface &interface) {
  const runtime::GraphSignature &signature = interface.signature;
  int x = signature.findArgument("x");
  int keys = signature.findArgument("k_cache");
  int values = signature.findArgument("v_cache");
  int lengths = signature.findArgument("cache_lengths");
  if (x < 0 || keys < 0 || values < 0 || lengths < 0)
    return std::nullopt;
  RankedTensorType xType = signature.arguments[x].type;
  RankedTensorType keyType = signature.arguments[keys].type;
  RankedTensorType valueType = signature.arguments[values].type;
  RankedTensorType lengthType = signature.arguments[lengths].type;
  if (xType.getRank() != 3 || keyType.getRank() != 4 ||
      valueType.getRank() != 4 || lengthType.getRank() != 1 ||
      !(keyType.getElementType().isF32() ||
        keyType.getElementType().isBF16()) ||
      keyType.getElementType() != valueType.getElementType() ||
      !lengthType.getElementType().isInteger(64) ||
      signature.result.getRank() != 3)
    return std::nullopt;
  CacheLayout cache;
  cache.x = x;
  cache.keyCache = keys;
  cache.valueCache = values;
  cache.lengths = lengths;
  cache.batch = xType.getDimSize(0);
  cache.modelDim = xType.getDimSize(2);
  cache.kvHeads = keyType.getDimSize(1);
  cache.capacity = keyType.getDimSize(2);
  cache.keyDim = keyType.getDimSize(3);
  cache.valueDim = valueType.getDimSize(3);
  cache.outDim = signature.result.getDimSize(2);
  if (keyType.getElementType().isBF16())
    cache.element = "uint16_t";
  cache.session = true;
  for (int64_t size : {cache.modelDim, cache.kvHeads, cache.capacity,
                       cache.keyDim, cache.valueDim, cache.outDim})
    cache.session &= !ShapedType::isDynamic(size);
  for (auto [index, argument] : llvm::enumerate(signature.arguments))
    if (!interface.isWeight[index])
      cache.session &= index == cache.x || index == cache.keyCache ||
                       index == cache.valueCache || index == cache.lengths;
  return cache;
}

/// Whether the compiled code writes argument `index` (a cache) in place.
bool isWritten(const LibraryInterface &interface, unsigned index) {
  std::optional<CacheLayout> cache = findCache(interface);
  return cache && (index == cache->keyCache || index == cache->valueCache);
}

/// `const float *x, const int64_t x_shape[3], ...` for the arguments that
/// `which` selects; "" if none.
std::string argumentParameters(const LibraryInterface &interface,
                               Arguments which, View view = View::Caller) {
  llvm::SmallVector<std::string> list;
  for (auto [index, argument] : llvm::enumerate(interface.signature.arguments))
    if (takes(interface, which, index))
      list.push_back(llvm::formatv("{3}{0} *{1}, const int64_t {1}_shape[{2}]",
                                   elementType(argument, view),
                                   toCIdentifier(argument.name),
                                   argument.type.getRank(),
                                   isWritten(interface, index) ? "" : "const ")
                         .str());
  return llvm::join(list, ", ");
}

/// The result's parameters.
std::string resultParameters(const LibraryInterface &interface) {
  return llvm::formatv("float *result, int64_t result_capacity, "
                       "int64_t result_shape[{0}]",
                       interface.signature.result.getRank())
      .str();
}

/// The parameter list of NAME_run, shared by header and definition.
std::string parameterList(const LibraryInterface &interface) {
  std::string arguments = argumentParameters(interface, Arguments::All);
  return (arguments.empty() ? "" : arguments + ", ") +
         resultParameters(interface);
}

/// `x, x_shape, handle->w_q, handle->w_q_shape, ...`: every argument, the
/// weights from `weights` (e.g. "handle->") and the others from the
/// parameters, or NULL where `activations` is false. With `rounded`, the
/// data of a bf16 argument that comes from the parameters is the local
/// `<id>_bf16` that the caller's floats were rounded into (a handle's
/// weights are rounded already).
std::string argumentValues(const LibraryInterface &interface,
                           llvm::StringRef weights, bool activations,
                           bool rounded = false) {
  llvm::SmallVector<std::string> list;
  for (auto [index, argument] :
       llvm::enumerate(interface.signature.arguments)) {
    std::string id = toCIdentifier(argument.name);
    bool fromParameters = !interface.isWeight[index] || weights.empty();
    std::string data =
        rounded && fromParameters && isBF16(argument) ? id + "_bf16" : id;
    if (interface.isWeight[index])
      list.push_back(
          llvm::formatv("{0}{1}, {0}{2}_shape", weights, data, id).str());
    else if (activations)
      list.push_back(data + ", " + id + "_shape");
    else
      list.push_back("NULL, NULL");
  }
  return llvm::join(list, ", ");
}

bool hasBF16(const LibraryInterface &interface, Arguments which) {
  for (auto [index, argument] : llvm::enumerate(interface.signature.arguments))
    if (takes(interface, which, index) && isBF16(argument))
      return true;
  return false;
}

/// `x, kv, w_q`: the names of the bf16 arguments that `which` selects.
llvm::SmallVector<std::string> bf16Names(const LibraryInterface &interface,
                                         Arguments which) {
  llvm::SmallVector<std::string> names;
  for (auto [index, argument] : llvm::enumerate(interface.signature.arguments))
    if (takes(interface, which, index) && isBF16(argument))
      names.push_back(toCIdentifier(argument.name));
  return names;
}

/// `x_shape[0]`: how the C code names one `?` size of an argument.
std::string dimName(const LibraryInterface &interface,
                    runtime::ArgumentDim dim) {
  return toCIdentifier(interface.signature.arguments[dim.argument].name) +
         "_shape[" + std::to_string(dim.dim) + "]";
}

/// The descriptor struct of one rank, as the LLVM lowering lays it out.
std::string descriptorType(llvm::StringRef name, int64_t rank) {
  return llvm::formatv("{0}_memref{1}", name, rank).str();
}
} // namespace

std::vector<std::string> roundedArguments(const LibraryInterface &interface) {
  llvm::SmallVector<std::string> names = bf16Names(interface, Arguments::All);
  return {names.begin(), names.end()};
}

/// The header's part for a cache graph: what the cache arguments mean and,
/// where it can be written, the session API. `weights` is the weights'
/// parameter list.
static void writeSessionHeader(llvm::raw_ostream &os,
                               const LibraryInterface &interface,
                               const CacheLayout &cache,
                               const std::string &weights) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  os << "/*\n * A decoding layer with a key/value cache (mha-gen --kv-cache)."
     << "\n * A call appends the keys and values of x's T new tokens to "
        "k_cache and\n"
     << " * v_cache at row cache_lengths[b] of sequence b, in place, and "
        "attends\n"
     << " * causally over the cache: query t of sequence b sees rows 0 .. "
        "cache_lengths[b] + t.\n"
     << " * It does not change cache_lengths: the caller adds T after each "
        "call.\n"
     << " * A call with cache_lengths[b] < 0 or cache_lengths[b] + T > the "
        "capacity\n"
     << " * returns " << upper
     << "_BAD_ARGUMENT before anything is "
        "written.\n */\n";
  if (!cache.session) {
    os << "/* (No session API: the graph has other per-call arguments or "
          "`?` cache sizes.) */\n\n";
    return;
  }
  os << "#define " << upper << "_CACHE_CAPACITY " << cache.capacity << "\n"
     << "#define " << upper << "_KV_HEADS " << cache.kvHeads << "\n"
     << "#define " << upper << "_KEY_DIM " << cache.keyDim << "\n"
     << "#define " << upper << "_VALUE_DIM " << cache.valueDim << "\n"
     << "#define " << upper << "_MODEL_DIM " << cache.modelDim << "\n"
     << "#define " << upper << "_OUT_DIM " << cache.outDim << "\n\n"
     << "/*\n * A decoding session: the weights checked and packed once, the "
        "caches of\n"
     << " * `batch` sequences and each sequence's length (tokens in its "
        "cache).\n"
     << " * Not thread-safe: one session serves one decoder at a time "
        "(several\n"
     << " * sessions may run at once).\n */\n"
     << "typedef struct " << n << "_session " << n << "_session;\n\n"
     << "/*\n * Makes a session for `batch` sequences, all of length 0. The "
        "weights are\n"
     << " * checked, copied and prepared as by " << n
     << "_create. With "
        "k_cache and "
        "v_cache NULL\n"
     << " * the session allocates its caches, [batch, " << upper
     << "_KV_HEADS, " << upper << "_CACHE_CAPACITY,\n * " << upper
     << "_KEY_DIM] and [..., " << upper << "_VALUE_DIM] "
     << (cache.element == "float" ? "floats" : "bf16 values (uint16_t bits)")
     << ", zeroed; otherwise it borrows\n"
     << " * the caller's (of those shapes, dense, C order), which must live "
        "until\n"
     << " * " << n
     << "_session_free and which the steps update. Returns "
        "NULL with a message\n"
     << " * in " << n
     << "_last_error() on a bad size, one cache NULL and "
        "not the other, caches\n"
     << " * that overlap in memory, or no memory.\n */\n"
     << n << "_session *" << n << "_session_create(int64_t batch, "
     << cache.element << " *k_cache, " << cache.element << " *v_cache"
     << (weights.empty() ? "" : ", " + weights) << ");\n\n"
     << "/*\n * One call of the layer on x [batch, tokens, " << upper
     << "_MODEL_DIM]: appends each\n"
     << " * sequence's tokens to its cache, writes y [batch, tokens, " << upper
     << "_OUT_DIM]\n"
     << " * (room for y_capacity floats) and adds `tokens` to every length. "
        "The\n"
     << " * first step after a create or reset is the prefill (any number "
        "of tokens);\n"
     << " * decoding is one token per step. Returns " << upper << "_OK; "
     << upper << "_CACHE_FULL when a\n"
     << " * sequence's length + tokens would pass " << upper
     << "_CACHE_CAPACITY; " << upper << "_BAD_ARGUMENT\n"
     << " * for a null pointer, tokens < 1, or x or y overlapping the caches "
        "or each\n * other; "
     << upper << "_RESULT_TOO_SMALL. On an error\n"
     << " * nothing is written and the lengths do not change; the message is "
        "in\n * "
     << n << "_last_error().\n */\n"
     << "int " << n << "_session_step(" << n
     << "_session *session, const float *x, int64_t tokens,\n"
     << "    float *y, int64_t y_capacity);\n\n"
     << "/*\n * Sets every sequence's length (`batch` values, each between 0 "
        "and the rows\n"
     << " * its cache holds: those the steps wrote since the create or the "
        "last reset,\n * or all "
     << upper << "_CACHE_CAPACITY of borrowed caches, whose owner says\n"
     << " * what they hold): the next step appends sequence b's tokens at "
        "row\n"
     << " * lengths[b] and attends to its rows 0 .. lengths[b] + t. Ragged "
        "batches:\n"
     << " * prefill all sequences with T tokens, then set lengths[b] <= T to "
        "keep\n"
     << " * the first lengths[b] (the rows after them are overwritten by "
        "later\n"
     << " * steps before any query can see them). " << upper
     << "_BAD_ARGUMENT (nothing\n * changed) for a value out of range or a "
        "null pointer.\n */\n"
     << "int " << n << "_session_set_lengths(" << n
     << "_session *session, const int64_t *lengths);\n\n"
     << "/* Copies the `batch` lengths out; " << upper
     << "_BAD_ARGUMENT for a null pointer. */\n"
     << "int " << n << "_session_lengths(const " << n
     << "_session *session, int64_t *lengths);\n\n"
     << "/* Every length back to 0: a new batch of sequences, same weights "
        "and caches\n * (the session's own caches then hold no row for "
     << n << "_session_set_lengths). */\n"
     << "void " << n << "_session_reset(" << n << "_session *session);\n\n"
     << "/* Frees the session, its weights and the caches it allocated (not "
        "borrowed\n * ones); NULL is ignored. */\n"
     << "void " << n << "_session_free(" << n << "_session *session);\n\n";
}

std::string writeHeader(const LibraryInterface &interface) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string guard = llvm::StringRef(interface.name).upper() + "_H";
  const std::string &n = interface.name;
  os << "/* " << n << ".h: generated by mha-compile from "
     << interface.graphFile << "; do not edit. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdint.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "/* Status codes of " << n << "_call and " << n << "_run. */\n"
     << "#define " << llvm::StringRef(n).upper() << "_OK 0\n"
     << "/* A pointer is null, a size is not positive, sizes do not fit\n"
     << "   together (see below), a mask byte is not 0 or 1, or a buffer the "
        "call\n   writes (result, result_shape, a cache) overlaps another "
        "argument. */\n"
     << "#define " << llvm::StringRef(n).upper() << "_BAD_ARGUMENT 1\n"
     << "/* The result does not fit in result_capacity floats. */\n"
     << "#define " << llvm::StringRef(n).upper() << "_RESULT_TOO_SMALL 2\n"
     << (interface.usesAMX
             ? "/* The library uses AMX, which Linux does not let this "
               "process use\n   (NAME_last_error says why). */\n"
               "#define " +
                   llvm::StringRef(n).upper() + "_NO_AMX 4\n"
             : std::string())
     << (findCache(interface)
             ? "/* A session step whose tokens do not fit in the cache. */\n"
               "#define " +
                   llvm::StringRef(n).upper() + "_CACHE_FULL 3\n"
             : std::string())
     << "\n"
     << "/*\n * The arguments. Every tensor is dense and in C order "
        "(row-major);"
     << "\n * each comes with its sizes (`<name>_shape`); `?` sizes are taken"
     << " from\n * them at call time. Masks hold one byte per element: 1 = may"
     << " attend,\n * 0 = masked; any other byte is refused.\n"
     << " * No alignment beyond the element's own is needed: the compiled "
        "code\n"
     << " * loads and stores vectors at any address that is a multiple of 4"
        " bytes,\n"
     << " * and it is as fast there as at 64-byte-aligned addresses "
        "(examples/aot/\n"
     << " * time_layer.c measures both).\n *\n";
  for (auto [index, argument] : llvm::enumerate(interface.signature.arguments))
    os << " *   " << toCIdentifier(argument.name) << ": "
       << (isMask(argument)        ? "mask (uint8_t) "
           : isInt64(argument)     ? "int64 "
           : isBF16Cache(argument) ? "bf16 bits (uint16_t) "
                                   : "float32 ")
       << describeShape(argument.type)
       << (interface.isWeight[index] ? ", weight" : "")
       << (isWritten(interface, index) ? ", updated in place" : "")
       << (isBF16(argument) ? ", rounded to bf16" : "") << "\n";
  os << " *   result: float32 " << describeShape(interface.signature.result)
     << ", written to `result` (room for\n *     `result_capacity` floats);"
     << " its sizes are stored in `result_shape`.\n";
  const runtime::SizeRelations &relations = interface.sizeRelations;
  auto name = [&](runtime::ArgumentDim dim) { return dimName(interface, dim); };
  bool first = true;
  for (const runtime::SizeRelations::SizeClass &sizeClass : relations.classes) {
    if (sizeClass.size || sizeClass.members.size() < 2)
      continue;
    if (first)
      os << " *\n * Sizes that must be equal:\n";
    first = false;
    os << " *  ";
    for (runtime::ArgumentDim dim : sizeClass.members)
      os << " " << name(dim);
    os << "\n";
  }
  first = true;
  for (const runtime::SizeRelations::SizeClass &sizeClass : relations.classes) {
    if (!sizeClass.size)
      continue;
    if (first)
      os << " *\n * '?' sizes that the graph fixes:\n";
    first = false;
    os << " *  ";
    for (runtime::ArgumentDim dim : sizeClass.members)
      os << " " << name(dim);
    os << " = " << *sizeClass.size << "\n";
  }
  if (!relations.broadcasts.empty())
    os << " *\n * Mask batches that are 1 (shared by the batch) or equal to"
       << " the batch:\n";
  for (const runtime::SizeRelations::Broadcast &broadcast :
       relations.broadcasts)
    os << " *   " << name(relations.classes[broadcast.mask].members.front())
       << " is 1 or "
       << (broadcast.target
               ? name(relations.classes[*broadcast.target].members.front())
               : std::to_string(broadcast.targetSize))
       << "\n";
  if (!relations.bounds.empty())
    os << " *\n * Sizes that must be at most others (new tokens and a cache's"
       << " capacity):\n";
  std::set<std::string> writtenBounds; // the K and V caches repeat theirs
  for (const runtime::SizeRelations::AtMost &bound : relations.bounds) {
    auto side = [&](std::optional<unsigned> sizeClass, int64_t size) {
      return sizeClass ? name(relations.classes[*sizeClass].members.front())
                       : std::to_string(size);
    };
    std::string line = " *   " + side(bound.lhsClass, bound.lhsSize) +
                       " <= " + side(bound.rhsClass, bound.rhsSize) + "\n";
    if (writtenBounds.insert(line).second)
      os << line;
  }
  os << " *\n * A call with sizes that break any of these, a mask byte"
     << " other than 0 or 1,\n * or a buffer it writes (result, result_shape"
     << (findCache(interface) ? ", k_cache, v_cache" : "")
     << ") sharing a byte with\n * another argument, returns "
     << llvm::StringRef(n).upper() << "_BAD_ARGUMENT before the graph runs.\n";
  if (hasBF16(interface, Arguments::All))
    os << " *\n * The graph holds the arguments marked \"rounded to bf16\" "
          "in bfloat16. They\n"
       << " * are given as float32 (C has no bfloat16) and rounded to the "
          "nearest bf16,\n"
       << " * ties to even; NaN stays NaN, infinities stay, and values past "
          "the\n"
       << " * largest bf16 become infinities. The caller's arrays are not "
          "changed.\n"
       << " * " << n << "_create rounds the weights once, into the handle; "
       << n << "_call rounds\n"
       << " * the other bf16 arguments on every call, into buffers the "
          "handle keeps\n"
       << " * for its next calls; " << n
       << "_run rounds all of them on every call. Where the rounded copies "
          "do not fit\n"
       << " * in memory, a call returns " << llvm::StringRef(n).upper()
       << "_BAD_ARGUMENT.\n";
  std::string upper = llvm::StringRef(n).upper();
  std::string weights = argumentParameters(interface, Arguments::Weights);
  std::string activations =
      argumentParameters(interface, Arguments::Activations);
  llvm::SmallVector<std::string> weightNames;
  for (auto [index, argument] : llvm::enumerate(interface.signature.arguments))
    if (interface.isWeight[index])
      weightNames.push_back(toCIdentifier(argument.name));
  os << " *\n * The weights are the arguments that reach only the weights and"
     << " biases of\n * the layer's projections (as mha-prepare-weights "
        "decides):\n *   "
     << (weightNames.empty() ? "none" : llvm::join(weightNames, ", "))
     << ".\n * The graph packs what depends on them alone in "
     << interface.prepareSymbols.size()
     << " prepare\n * function(s); a handle runs them"
     << " once, " << n << "_run on every call.\n */\n\n";

  os << "/* Weights checked, copied and prepared once; then any number of "
        "calls. */\n"
     << "typedef struct " << n << "_handle " << n << "_handle;\n\n"
     << "/*\n * Checks the weights' sizes (those that the weights alone "
        "determine),\n"
     << " * copies the weights into the handle (64-byte aligned; the caller"
        " may\n"
     << " * free or change its arrays afterwards) and runs the prepare "
        "functions.\n"
     << " * Returns the handle, or NULL with a message in " << n
     << "_last_error().\n */\n"
     << n << "_handle *" << n << "_create("
     << (weights.empty() ? "void" : weights) << ");\n\n"
     << "/*\n * Runs the graph on the handle's weights and these arguments;"
        " every size\n"
     << " * is checked, against the weights' too, as " << n
     << "_run checks them.\n"
     << " * Returns " << upper << "_OK, or a status code with a message in "
     << n << "_last_error().\n"
     << " * One handle may serve several threads at once; each call runs on"
        " the\n * OpenMP threads (OMP_NUM_THREADS).\n */\n"
     << "int " << n << "_call(" << n << "_handle *handle, "
     << (activations.empty() ? "" : activations + ", ")
     << resultParameters(interface) << ");\n\n"
     << "/* Frees the handle and its buffers; NULL is ignored. */\n"
     << "void " << n << "_destroy(" << n << "_handle *handle);\n\n"
     << "/*\n * Runs the graph on all arguments in one call (prepares the "
        "weights on\n"
     << " * every call). Returns " << upper
     << "_OK, or a status code with a message in\n * " << n
     << "_last_error(). Thread-safe; it runs on the OpenMP threads\n"
     << " * (OMP_NUM_THREADS).\n */\n"
     << "int " << n << "_run(" << parameterList(interface) << ");\n\n"
     << "/* The message of this thread's last failed call (\"\" if none). */\n"
     << "const char *" << n << "_last_error(void);\n\n"
     << "/*\n * The compiled code's buffers of 128 KiB and more are kept when"
        " it frees\n"
     << " * them and reused by the next call (at most twice the most it has"
        " had in\n"
     << " * use at once). This frees those kept now, e.g. when the host is "
        "done.\n */\n"
     << "void " << n << "_release_buffers(void);\n\n";
  if (std::optional<CacheLayout> cache = findCache(interface))
    writeSessionHeader(os, interface, *cache, weights);
  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return text;
}

/// Writes the size checks of the arguments that `which` selects: null
/// pointers, positive sizes, the static sizes, the relations between `?`
/// sizes as far as those arguments have them, and mask bytes. The messages
/// are in the words of runtime::SizeRelations::check, so that the library
/// and mha-run refuse the same calls.
static void writeChecks(llvm::raw_ostream &os,
                        const LibraryInterface &interface, Arguments which) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  const auto &arguments = interface.signature.arguments;
  for (auto [index, argument] : llvm::enumerate(arguments)) {
    if (!takes(interface, which, index))
      continue;
    std::string id = toCIdentifier(argument.name);
    int64_t rank = argument.type.getRank();
    os << "  if (!" << id << " || !" << id << "_shape)\n    return " << n
       << "_fail(" << upper << "_BAD_ARGUMENT, \"" << id
       << ": null pointer\");\n"
       << "  if (!" << n << "_count(" << rank << ", " << id
       << "_shape, &count))\n    return " << n << "_fail(" << upper
       << "_BAD_ARGUMENT, \"" << id
       << ": sizes must be positive and their product fit in int64_t\");\n";
    for (auto [dim, size] : llvm::enumerate(argument.type.getShape()))
      if (!ShapedType::isDynamic(size))
        os << "  if (" << id << "_shape[" << dim << "] != " << size
           << ")\n    return " << n << "_fail(" << upper << "_BAD_ARGUMENT, \""
           << id << ": dimension " << dim << " must be " << size
           << ", got %lld\", (long long)" << id << "_shape[" << dim << "]);\n";
  }
  const runtime::SizeRelations &relations = interface.sizeRelations;
  auto name = [&](runtime::ArgumentDim dim) { return dimName(interface, dim); };
  auto known = [&](runtime::ArgumentDim dim) {
    return takes(interface, which, dim.argument);
  };
  // The first member of a class that these arguments have.
  auto firstKnown = [&](const runtime::SizeRelations::SizeClass &sizeClass)
      -> std::optional<runtime::ArgumentDim> {
    for (runtime::ArgumentDim dim : sizeClass.members)
      if (known(dim))
        return dim;
    return std::nullopt;
  };
  auto fail = [&](llvm::StringRef condition, llvm::StringRef format,
                  llvm::StringRef values) {
    os << "  if (" << condition << ")\n    return " << n << "_fail(" << upper
       << "_BAD_ARGUMENT, \"" << format << "\", " << values << ");\n";
  };
  for (const runtime::SizeRelations::SizeClass &sizeClass : relations.classes) {
    std::optional<runtime::ArgumentDim> firstDim = firstKnown(sizeClass);
    if (!firstDim)
      continue;
    std::string first = name(*firstDim);
    for (runtime::ArgumentDim dim : sizeClass.members) {
      if (!known(dim))
        continue;
      std::string size = name(dim);
      if (sizeClass.size)
        fail(size + " != " + std::to_string(*sizeClass.size),
             size + " must be " + std::to_string(*sizeClass.size) +
                 ", got %lld",
             "(long long)" + size);
      else if (size != first)
        fail(size + " != " + first,
             size + " (%lld) must equal " + first + " (%lld)",
             "(long long)" + size + ", (long long)" + first);
    }
  }
  for (const runtime::SizeRelations::Broadcast &broadcast :
       relations.broadcasts) {
    std::optional<runtime::ArgumentDim> maskDim =
        firstKnown(relations.classes[broadcast.mask]);
    std::optional<runtime::ArgumentDim> targetDim;
    if (broadcast.target) {
      targetDim = firstKnown(relations.classes[*broadcast.target]);
      if (!targetDim)
        continue;
    }
    if (!maskDim)
      continue;
    std::string mask = name(*maskDim);
    std::string target =
        targetDim ? name(*targetDim) : std::to_string(broadcast.targetSize);
    fail(mask + " != 1 && " + mask + " != " + target,
         mask + " (%lld) must be 1 or equal " + target + " (%lld)",
         "(long long)" + mask + ", (long long)" + target);
  }
  // Sizes that must be at most others (a cache_append's new tokens and its
  // cache's capacity), as far as these arguments have them.
  std::set<std::string> checkedBounds; // the K and V caches repeat theirs
  for (const runtime::SizeRelations::AtMost &bound : relations.bounds) {
    auto side = [&](std::optional<unsigned> sizeClass,
                    int64_t size) -> std::optional<std::string> {
      if (!sizeClass)
        return std::to_string(size);
      std::optional<runtime::ArgumentDim> dim =
          firstKnown(relations.classes[*sizeClass]);
      if (!dim)
        return std::nullopt;
      return name(*dim);
    };
    std::optional<std::string> lhs = side(bound.lhsClass, bound.lhsSize);
    std::optional<std::string> rhs = side(bound.rhsClass, bound.rhsSize);
    if (lhs && rhs && (bound.lhsClass || bound.rhsClass) &&
        checkedBounds.insert(*lhs + " <= " + *rhs).second)
      fail(*lhs + " > " + *rhs,
           *lhs + " (%lld) must be at most " + *rhs + " (%lld)",
           "(long long)" + *lhs + ", (long long)" + *rhs);
  }
  // A mask byte is read by its low bit; refuse the bytes that would mean
  // something other than what the caller wrote. Sizes are checked by now.
  for (auto [index, argument] : llvm::enumerate(arguments)) {
    if (!isMask(argument) || !takes(interface, which, index))
      continue;
    std::string id = toCIdentifier(argument.name);
    os << "  " << n << "_count(" << argument.type.getRank() << ", " << id
       << "_shape, &count);\n"
       << "  for (int64_t i = 0; i < count; ++i)\n"
       << "    if (" << id << "[i] > 1)\n"
       << "      return " << n << "_fail(" << upper << "_BAD_ARGUMENT, \"" << id
       << ": bool element %lld is the byte %d (expected 0 or 1)\", "
       << "(long long)i, (int)" << id << "[i]);\n";
  }
  // A cache graph's lengths: the new tokens must fit after each sequence's
  // own, or the compiled code would write past the cache.
  // A `?` capacity is the cache argument's own size.
  std::optional<CacheLayout> cache = findCache(interface);
  if (cache && takes(interface, which, cache->x) &&
      takes(interface, which, cache->lengths) &&
      takes(interface, which, cache->keyCache)) {
    std::string x = toCIdentifier(arguments[cache->x].name);
    std::string lengths = toCIdentifier(arguments[cache->lengths].name);
    std::string capacity =
        ShapedType::isDynamic(cache->capacity)
            ? "(long long)" + toCIdentifier(arguments[cache->keyCache].name) +
                  "_shape[2]"
            : std::to_string(cache->capacity);
    os << "  if (" << x << "_shape[1] > " << capacity << ")\n    return " << n
       << "_fail(" << upper << "_BAD_ARGUMENT, \"" << x
       << ": %lld new tokens do not fit in the cache's capacity of %lld\", "
       << "(long long)" << x << "_shape[1], (long long)" << capacity << ");\n"
       << "  for (int64_t b = 0; b < " << lengths << "_shape[0]; ++b)\n"
       << "    if (" << lengths << "[b] < 0 || " << lengths << "[b] > "
       << capacity << " - " << x << "_shape[1])\n"
       << "      return " << n << "_fail(" << upper << "_BAD_ARGUMENT, \""
       << lengths << ": sequence %lld holds %lld tokens; with %lld new ones "
       << "it must be between 0 and %lld (the capacity %lld minus the new "
          "tokens)\", (long long)b, (long long)"
       << lengths << "[b], (long long)" << x << "_shape[1], (long long)("
       << capacity << " - " << x << "_shape[1]), (long long)" << capacity
       << ");\n";
  }
}

/// The wrapper's overlap test. A buffer the compiled code writes (a cache
/// as it runs, the result after) that shares bytes with another argument
/// makes it read values it wrote, or hands the caller a clobbered input:
/// refused as a whole byte range, not as equal pointers, since a view
/// shifted by one element overlaps too.
static void writeDisjointHelpers(llvm::raw_ostream &os,
                                 const LibraryInterface &interface) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  os << "/* The bytes of `count` elements of `size` bytes; SIZE_MAX where "
        "that overflows. */\n"
     << "static size_t " << n << "_bytes(int64_t count, size_t size) {\n"
     << "  size_t bytes;\n"
     << "  return count < 1 ? 0 : __builtin_mul_overflow((size_t)count, "
        "size, &bytes) ? SIZE_MAX : bytes;\n}\n\n"
     // Distances, not ends: an end past the address space cannot wrap.
     << "static int " << n
     << "_overlap(const void *a, size_t a_bytes, const void *b, size_t "
        "b_bytes) {\n"
     << "  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;\n"
     << "  return a_bytes && b_bytes && (x >= y ? x - y < b_bytes : y - x < "
        "a_bytes);\n}\n\n"
     << "/* Refuses the first two of `count` buffers that share a byte where "
        "one of them\n   is written. */\n"
     << "static int " << n
     << "_check_disjoint(int count, const void *const *at, const size_t "
        "*bytes,\n"
     << "                          const char *written, const char *const "
        "*names) {\n"
     << "  for (int i = 0; i < count; ++i)\n"
     << "    for (int j = i + 1; j < count; ++j)\n"
     << "      if ((written[i] || written[j]) && " << n
     << "_overlap(at[i], bytes[i], at[j], bytes[j]))\n"
     << "        return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"%s and %s overlap in memory: an argument the call "
        "writes must not share bytes with another\", names[i], names[j]);\n"
     << "  return " << upper << "_OK;\n}\n\n";
}

/// The end of NAME_check: every argument's bytes (their sizes are checked
/// by now), the result's room and its shape, through NAME_check_disjoint.
/// With `own_weights` (NAME_call) the weights are the handle's copies,
/// which no caller's buffer can share, and whose bf16 ones are half the
/// bytes of the caller's floats: they count as none.
static void writeDisjointCheck(llvm::raw_ostream &os,
                               const LibraryInterface &interface) {
  const std::string &n = interface.name;
  const auto &arguments = interface.signature.arguments;
  size_t count = arguments.size() + 2;
  llvm::SmallVector<std::string> at, written, names;
  os << "  size_t bytes[" << count << "];\n  (void)own_weights;\n";
  for (auto [index, argument] : llvm::enumerate(arguments)) {
    std::string id = toCIdentifier(argument.name);
    at.push_back(id);
    written.push_back(isWritten(interface, index) ? "1" : "0");
    names.push_back("\"" + id + "\"");
    os << "  " << n << "_count(" << argument.type.getRank() << ", " << id
       << "_shape, &count);\n"
       << "  bytes[" << index
       << "] = " << (interface.isWeight[index] ? "own_weights ? 0 : " : "") << n
       << "_bytes(count, sizeof(" << elementType(argument) << "));\n";
  }
  at.append({"result", "result_shape"});
  written.append({"1", "1"});
  names.append({"\"result\"", "\"result_shape\""});
  os << "  bytes[" << count - 2 << "] = " << n
     << "_bytes(result_capacity, sizeof(float));\n"
     << "  bytes[" << count - 1
     << "] = " << interface.signature.result.getRank()
     << " * sizeof(int64_t);\n"
     << "  const void *at[" << count << "] = {" << llvm::join(at, ", ")
     << "};\n"
     << "  static const char written[" << count << "] = {"
     << llvm::join(written, ", ") << "};\n"
     << "  static const char *const names[" << count << "] = {"
     << llvm::join(names, ", ") << "};\n"
     << "  return " << n << "_check_disjoint(" << count
     << ", at, bytes, written, names);\n";
}

/// The session API of a cache graph (writeSessionHeader documents it), on
/// top of NAME_create and NAME_call, which check every size and length.
static void writeSession(llvm::raw_ostream &os,
                         const LibraryInterface &interface,
                         const CacheLayout &cache) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  const auto &arguments = interface.signature.arguments;
  llvm::SmallVector<std::string> weightNames, weightValues;
  for (auto [index, argument] : llvm::enumerate(arguments))
    if (interface.isWeight[index]) {
      std::string id = toCIdentifier(argument.name);
      weightValues.push_back(id + ", " + id + "_shape");
    }
  std::string weightParameters =
      argumentParameters(interface, Arguments::Weights);
  // NAME_call's activations, in argument order, from the session.
  llvm::SmallVector<std::string> callValues;
  for (auto [index, argument] : llvm::enumerate(arguments)) {
    if (interface.isWeight[index])
      continue;
    if (index == cache.x)
      callValues.push_back("x, x_shape");
    else if (index == cache.keyCache)
      callValues.push_back("session->k_cache, session->k_shape");
    else if (index == cache.valueCache)
      callValues.push_back("session->v_cache, session->v_shape");
    else
      callValues.push_back("session->lengths, lengths_shape");
  }
  std::string capacity = upper + "_CACHE_CAPACITY";
  os << "\nstruct " << n << "_session {\n  " << n << "_handle *handle;\n"
     << "  int64_t batch;\n  " << cache.element << " *k_cache, *v_cache;\n"
     << "  int owns_caches;\n  int64_t *lengths;\n"
     << "  int64_t *written; /* rows each sequence's cache holds */\n"
     << "  int64_t k_shape[4], v_shape[4];\n};\n\n";

  os << n << "_session *" << n << "_session_create(int64_t batch, "
     << cache.element << " *k_cache, " << cache.element << " *v_cache"
     << (weightParameters.empty() ? "" : ", " + weightParameters) << ") {\n"
     << "  " << n << "_error_text[0] = 0;\n"
     << "  if (batch < 1)\n    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"batch must be at least 1, got %lld\", (long "
        "long)batch), NULL;\n";
  if (!ShapedType::isDynamic(cache.batch))
    os << "  if (batch != " << cache.batch << ")\n    return " << n << "_fail("
       << upper << "_BAD_ARGUMENT, \"batch must be " << cache.batch
       << ", got %lld\", (long long)batch), NULL;\n";
  os << "  if (!k_cache != !v_cache)\n    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"give both caches or neither (NULL: the session "
        "allocates them)\"), NULL;\n"
     << "  int64_t k_shape[4] = {batch, " << upper << "_KV_HEADS, " << capacity
     << ", " << upper << "_KEY_DIM};\n"
     << "  int64_t v_shape[4] = {batch, " << upper << "_KV_HEADS, " << capacity
     << ", " << upper << "_VALUE_DIM};\n"
     << "  int64_t k_count, v_count;\n  size_t k_bytes, v_bytes;\n"
     << "  if (!" << n << "_count(4, k_shape, &k_count) || !" << n
     << "_count(4, v_shape, &v_count) ||\n"
     << "      __builtin_mul_overflow((size_t)k_count, sizeof(" << cache.element
     << "), &k_bytes) ||\n"
     << "      __builtin_mul_overflow((size_t)v_count, sizeof(" << cache.element
     << "), &v_bytes))\n"
     << "    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"the caches of %lld sequences do not fit in "
        "memory\", (long long)batch), NULL;\n"
     << "  if (k_cache) {\n"
     << "    const void *at[2] = {k_cache, v_cache};\n"
     << "    size_t bytes[2] = {k_bytes, v_bytes};\n"
     << "    static const char written[2] = {1, 1};\n"
     << "    static const char *const names[2] = {\"k_cache\", \"v_cache\"};\n"
     << "    if (" << n
     << "_check_disjoint(2, at, bytes, written, names) != " << upper
     << "_OK)\n      return NULL;\n  }\n"
     << "  " << n << "_session *session = calloc(1, sizeof *session);\n"
     << "  if (!session)\n    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"out of memory for the session\"), NULL;\n"
     << "  session->batch = batch;\n"
     << "  memcpy(session->k_shape, k_shape, sizeof k_shape);\n"
     << "  memcpy(session->v_shape, v_shape, sizeof v_shape);\n"
     << "  session->lengths = calloc((size_t)batch, sizeof(int64_t));\n"
     // Borrowed caches hold what their owner says: any row may be kept.
     << "  session->written = calloc((size_t)batch, sizeof(int64_t));\n"
     << "  for (int64_t b = 0; k_cache && session->written && b < batch; "
        "++b)\n"
     << "    session->written[b] = " << capacity << ";\n"
     << "  session->handle = " << n << "_create("
     << llvm::join(weightValues, ", ") << ");\n"
     << "  if (k_cache) {\n"
     << "    session->k_cache = k_cache;\n    session->v_cache = v_cache;\n"
     << "  } else {\n    session->owns_caches = 1;\n"
     // Rounded up to the alignment, as aligned_alloc requires.
     << "    session->k_cache = aligned_alloc(64, (k_bytes + 63) / 64 * 64);\n"
     << "    session->v_cache = aligned_alloc(64, (v_bytes + 63) / 64 * 64);\n"
     << "    if (session->k_cache && session->v_cache) {\n"
     << "      memset(session->k_cache, 0, k_bytes);\n"
     << "      memset(session->v_cache, 0, v_bytes);\n    }\n  }\n"
     << "  if (!session->handle || !session->lengths || !session->written "
        "||\n      !session->k_cache || !session->v_cache) {\n"
     // NAME_create's own message stays when it is the one that failed.
     << "    if (session->handle)\n      " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"out of memory for the caches (%zu + %zu bytes)\", "
        "k_bytes, v_bytes);\n"
     << "    " << n << "_session_free(session);\n    return NULL;\n  }\n"
     << "  return session;\n}\n\n";

  os << "int " << n << "_session_step(" << n
     << "_session *session, const float *x, int64_t tokens,\n"
     << "    float *y, int64_t y_capacity) {\n"
     << "  " << n << "_error_text[0] = 0;\n"
     << "  if (!session)\n    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"session: null pointer\");\n"
     << "  if (!x || !y)\n    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"%s: null pointer\", x ? \"y\" : \"x\");\n"
     << "  if (tokens < 1)\n    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"tokens must be at least 1, got %lld\", (long "
        "long)tokens);\n"
     << "  for (int64_t b = 0; b < session->batch; ++b)\n"
     << "    if (tokens > " << capacity << " - session->lengths[b])\n"
     << "      return " << n << "_fail(" << upper
     << "_CACHE_FULL, \"sequence %lld holds %lld tokens; %lld more do not "
        "fit in the cache's capacity of %lld\",\n"
     << "                 (long long)b, (long long)session->lengths[b], (long "
        "long)tokens, (long long)"
     << capacity << ");\n"
     // y's room before the graph runs: the graph appends to the caches in
     // place, and a refused step must leave them as they were.
     << "  if (y_capacity < session->batch * tokens * " << upper
     << "_OUT_DIM)\n"
     << "    return " << n << "_fail(" << upper
     << "_RESULT_TOO_SMALL, \"result: needs %lld floats, room for %lld\",\n"
     << "                 (long long)(session->batch * tokens * " << upper
     << "_OUT_DIM), (long long)y_capacity);\n"
     << "  int64_t x_shape[3] = {session->batch, tokens, " << upper
     << "_MODEL_DIM};\n"
     << "  int64_t lengths_shape[1] = {session->batch};\n"
     << "  int64_t y_shape[3];\n"
     << "  int status = " << n << "_call(session->handle, "
     << llvm::join(callValues, ", ") << ", y, y_capacity, y_shape);\n"
     << "  if (status != " << upper << "_OK)\n    return status;\n"
     << "  for (int64_t b = 0; b < session->batch; ++b) {\n"
     << "    session->lengths[b] += tokens;\n"
     << "    if (session->written[b] < session->lengths[b])\n"
     << "      session->written[b] = session->lengths[b];\n  }\n"
     << "  return " << upper << "_OK;\n}\n\n";

  os << "int " << n << "_session_set_lengths(" << n
     << "_session *session, const int64_t *lengths) {\n"
     << "  " << n << "_error_text[0] = 0;\n"
     << "  if (!session || !lengths)\n    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"%s: null pointer\", session ? \"lengths\" : "
        "\"session\");\n"
     << "  for (int64_t b = 0; b < session->batch; ++b)\n"
     << "    if (lengths[b] < 0 || lengths[b] > session->written[b])\n"
     << "      return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"lengths: sequence %lld would hold %lld tokens; a "
        "length must be between 0 and the %lld tokens its cache holds\",\n"
     << "                 (long long)b, (long long)lengths[b], (long "
        "long)session->written[b]);\n"
     << "  memcpy(session->lengths, lengths, (size_t)session->batch * "
        "sizeof(int64_t));\n"
     << "  return " << upper << "_OK;\n}\n\n";

  os << "int " << n << "_session_lengths(const " << n
     << "_session *session, int64_t *lengths) {\n"
     << "  " << n << "_error_text[0] = 0;\n"
     << "  if (!session || !lengths)\n    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"%s: null pointer\", session ? \"lengths\" : "
        "\"session\");\n"
     << "  memcpy(lengths, session->lengths, (size_t)session->batch * "
        "sizeof(int64_t));\n"
     << "  return " << upper << "_OK;\n}\n\n";

  os << "void " << n << "_session_reset(" << n << "_session *session) {\n"
     << "  if (!session)\n    return;\n"
     << "  memset(session->lengths, 0, (size_t)session->batch * "
        "sizeof(int64_t));\n"
     << "  if (session->owns_caches)\n"
     << "    memset(session->written, 0, (size_t)session->batch * "
        "sizeof(int64_t));\n}\n\n";

  os << "void " << n << "_session_free(" << n << "_session *session) {\n"
     << "  if (!session)\n    return;\n"
     << "  " << n << "_destroy(session->handle);\n"
     << "  if (session->owns_caches) {\n    free(session->k_cache);\n"
     << "    free(session->v_cache);\n  }\n"
     << "  free(session->lengths);\n  free(session->written);\n"
     << "  free(session);\n}\n";
}

std::string writeWrapper(const LibraryInterface &interface,
                         llvm::StringRef headerPath) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  const auto &arguments = interface.signature.arguments;
  int64_t resultRank = interface.signature.result.getRank();
  unsigned numPrepared = interface.prepareSymbols.size();
  // The checks take the caller's pointers and the handle's alike; the
  // functions that reach the compiled code take the graph's elements.
  std::string checkParameters =
      argumentParameters(interface, Arguments::All, View::Check);
  std::string graphParameters =
      argumentParameters(interface, Arguments::All, View::Graph);
  std::string weightParameters =
      argumentParameters(interface, Arguments::Weights);
  std::string weightCheckParameters =
      argumentParameters(interface, Arguments::Weights, View::Check);
  std::string activationParameters =
      argumentParameters(interface, Arguments::Activations);
  std::string memref1 = descriptorType(n, 1);
  auto withComma = [](const std::string &list) {
    return list.empty() ? list : list + ", ";
  };

  os << "/* Generated by mha-compile: the C interface of " << n
     << ", on top of the\n   graph's memref-descriptor interface. */\n";
  // syscall() (the AMX permission) is a GNU/BSD function, not C11's.
  // madvise (huge pages for large blocks) is a POSIX/BSD function too.
  os << (interface.usesAMX ? "#define _GNU_SOURCE\n"
                           : "#define _DEFAULT_SOURCE\n");
  os << "#include \"" << headerPath << "\"\n\n"
     << "#include <malloc.h>\n#include <pthread.h>\n#include <stdarg.h>\n"
     << "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
     << "#include <sys/mman.h>\n";
  if (interface.usesAMX)
    os << "#include <errno.h>\n#include <sys/syscall.h>\n#include <unistd.h>\n";
  os << "\n";

  // One descriptor type per rank in use (rank 1: the prepared buffers).
  std::set<int64_t> ranks = {resultRank, 1};
  for (const GraphArgument &argument : arguments)
    ranks.insert(argument.type.getRank());
  for (int64_t rank : ranks)
    os << "typedef struct {\n  void *allocated;\n  void *aligned;\n"
       << "  int64_t offset;\n  int64_t sizes[" << rank << "];\n"
       << "  int64_t strides[" << rank << "];\n} " << descriptorType(n, rank)
       << ";\n\n";

  // The graph takes the prepared buffers after its own arguments; each
  // prepare function takes the graph's own arguments.
  os << "void " << interface.graphSymbol << "(" << descriptorType(n, resultRank)
     << " *";
  for (const GraphArgument &argument : arguments)
    os << ", " << descriptorType(n, argument.type.getRank()) << " *";
  for (unsigned i = 0; i < numPrepared; ++i)
    os << ", " << memref1 << " *";
  os << ");\n";
  for (unsigned i = 0; i < numPrepared; ++i) {
    os << "void " << interface.prepareSymbols[i] << "(" << memref1 << " *";
    for (const GraphArgument &argument : arguments)
      os << ", " << descriptorType(n, argument.type.getRank()) << " *";
    os << ");\n";
  }
  os << "\n";

  os << "static _Thread_local char " << n << "_error_text[512];\n\n"
     << "const char *" << n << "_last_error(void) { return " << n
     << "_error_text; }\n\n"
     << "static int " << n << "_fail(int status, const char *format, ...) {\n"
     << "  va_list args;\n  va_start(args, format);\n  vsnprintf(" << n
     << "_error_text, sizeof " << n << "_error_text, format, args);\n"
     << "  va_end(args);\n  return status;\n}\n\n";
  // AMX code raises SIGILL until Linux grants the process the tile data
  // (ARCH_REQ_XCOMP_PERM): asked once, before the graph first runs.
  if (interface.usesAMX)
    os << "static pthread_once_t " << n << "_amx_once = PTHREAD_ONCE_INIT;\n"
       << "static int " << n << "_amx_errno;\n\n"
       << "static void " << n << "_request_amx(void) {\n"
       << "  /* ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA */\n"
       << "  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0)\n"
       << "    " << n << "_amx_errno = errno ? errno : EINVAL;\n}\n\n"
       << "static int " << n << "_amx_ready(void) {\n"
       << "  pthread_once(&" << n << "_amx_once, " << n << "_request_amx);\n"
       << "  if (" << n << "_amx_errno)\n"
       << "    return " << n << "_fail(" << llvm::StringRef(n).upper()
       << "_NO_AMX, \"this library uses AMX, which Linux does not let this "
          "process use (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) "
          "failed: %s)\", strerror("
       << n << "_amx_errno));\n"
       << "  return 0;\n}\n\n";
  // Element count with overflow checks: sizes come from the caller.
  os << "static int " << n
     << "_count(int rank, const int64_t *shape, int64_t *count) {\n"
     << "  *count = 1;\n  for (int i = 0; i < rank; ++i)\n"
     << "    if (shape[i] < 1 || __builtin_mul_overflow(*count, shape[i], "
        "count))\n"
     << "      return 0;\n  return 1;\n}\n\n"
     // A null shape (an argument the prepare functions do not read) leaves
     // the descriptor zero.
     << "static void " << n
     << "_describe(const void *data, int rank, const int64_t *shape,\n"
     << "                          void **pointers, int64_t *sizes, int64_t "
        "*strides) {\n"
     << "  pointers[0] = pointers[1] = (void *)data;\n"
     << "  int64_t stride = 1;\n  for (int i = rank - 1; shape && i >= 0; "
        "--i) {\n"
     << "    sizes[i] = shape[i];\n    strides[i] = stride;\n"
     << "    stride *= shape[i];\n  }\n}\n\n";

  // float32 to bf16, emitted here rather than linked from mha's runtime:
  // the library stays one object with libomp and libc as its only
  // dependencies, and the C is the bit arithmetic of runtime/BFloat16.h.
  // No AVX512_BF16 conversion (vcvtneps2bf16): it flushes subnormal
  // inputs to zero, which mha-run and the Python package do not.
  if (hasBF16(interface, Arguments::All))
    os << "/* The bits of the bfloat16 nearest to each float (ties to even), "
          "as\n   runtime/BFloat16.h rounds: NaN stays NaN (quiet, sign "
          "kept); a carry into\n   the exponent rounds up, to infinity past "
          "the largest bf16. */\n"
       << "static void " << n
       << "_round_bf16(const float *from, uint16_t *to, int64_t count) {\n"
       << "  for (int64_t i = 0; i < count; ++i) {\n"
       << "    uint32_t bits;\n    memcpy(&bits, &from[i], sizeof bits);\n"
       << "    uint32_t nearest = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> "
          "16;\n"
       << "    uint32_t nan = (bits >> 16) | 0x0040u;\n"
       << "    to[i] = (uint16_t)((bits & 0x7fffffffu) > 0x7f800000u ? nan : "
          "nearest);\n"
       << "  }\n}\n\n"
       // 64-byte aligned pieces of one block, as the handle's weights.
       << "/* Adds the room of `count` bf16 values, rounded up to 64 bytes, "
          "to *bytes;\n   0 if that overflows. */\n"
       << "static int " << n
       << "_add_bf16_room(int64_t count, size_t *bytes) {\n"
       << "  size_t room;\n"
       << "  return !__builtin_mul_overflow((size_t)count, sizeof(uint16_t), "
          "&room) &&\n"
       << "         room <= SIZE_MAX - 63 &&\n"
       << "         !__builtin_add_overflow(*bytes, (room + 63) / 64 * 64, "
          "bytes);\n}\n\n";

  // The compiled code's allocation functions: a cache of large blocks, as
  // runtime/BufferCache keeps them for the JIT. Without it, glibc maps
  // every block of 128 KiB or more afresh on each call and the kernel
  // zeroes each page of it at its first touch. Hidden, so that two
  // libraries in one process keep their own.
  os << "/* Blocks of at least this many bytes are kept for reuse (glibc's "
        "default\n   mmap threshold); smaller ones reuse the heap anyway. */\n"
     << "#define " << upper
     << "_MIN_CACHED ((size_t)128 << 10)\n"
     // As runtime/BufferCache.cpp's: why there.
     << "/* Blocks of at least this many bytes start on a 2 MiB huge page "
        "and ask\n   for transparent huge pages: fewer TLB misses where "
        "attention reads\n   Kᵀ's rows far apart. */\n"
     << "#define " << upper << "_HUGE_PAGE ((size_t)2 << 20)\n"
     << "#define " << upper << "_SLOTS 256\n"
     << "typedef struct {\n  void *pointer;\n  size_t bytes, alignment;\n"
     << "  unsigned long long released; /* when it was kept: the oldest go "
        "first */\n} "
     << n << "_block;\n"
     << "static pthread_mutex_t " << n << "_lock = PTHREAD_MUTEX_INITIALIZER;\n"
     << "static " << n << "_block " << n << "_live[" << upper << "_SLOTS], "
     << n << "_kept[" << upper << "_SLOTS];\n"
     << "static size_t " << n << "_live_bytes, " << n << "_peak_bytes, " << n
     << "_kept_bytes;\n"
     << "static unsigned long long " << n
     << "_releases;\n\n"
     // Frees the least recently kept block; returns its slot, or -1.
     << "static int " << n << "_evict_oldest(void) {\n"
     << "  int oldest = -1;\n"
     << "  for (int i = 0; i < " << upper << "_SLOTS; ++i)\n"
     << "    if (" << n << "_kept[i].pointer && (oldest < 0 || " << n
     << "_kept[i].released < " << n << "_kept[oldest].released))\n"
     << "      oldest = i;\n"
     << "  if (oldest >= 0) {\n"
     << "    free(" << n << "_kept[oldest].pointer);\n"
     << "    " << n << "_kept[oldest].pointer = NULL;\n"
     << "    " << n << "_kept_bytes -= " << n << "_kept[oldest].bytes;\n"
     << "  }\n  return oldest;\n}\n\n"
     << "static void *" << n << "_allocate(size_t bytes, size_t alignment) {\n"
     << "  void *pointer = NULL;\n"
     << "  if (bytes >= " << upper << "_MIN_CACHED) {\n"
     << "    pthread_mutex_lock(&" << n << "_lock);\n"
     << "    for (int i = 0; i < " << upper << "_SLOTS; ++i)\n"
     << "      if (" << n << "_kept[i].pointer && " << n
     << "_kept[i].bytes == bytes &&\n"
     << "          " << n << "_kept[i].alignment == alignment) {\n"
     << "        pointer = " << n << "_kept[i].pointer;\n"
     << "        " << n << "_kept[i].pointer = NULL;\n"
     << "        " << n << "_kept_bytes -= bytes;\n        break;\n      }\n"
     << "    pthread_mutex_unlock(&" << n << "_lock);\n  }\n"
     << "  if (!pointer && bytes >= " << upper << "_HUGE_PAGE) {\n"
     << "    size_t huge = alignment > " << upper
     << "_HUGE_PAGE ? alignment : " << upper << "_HUGE_PAGE;\n"
     << "    pointer = aligned_alloc(huge, (bytes + huge - 1) / huge * huge);\n"
     << "#ifdef MADV_HUGEPAGE\n"
     << "    if (pointer)\n"
     << "      madvise(pointer, bytes, MADV_HUGEPAGE);\n"
     << "#endif\n  }\n"
     << "  if (!pointer)\n"
     << "    pointer = alignment ? aligned_alloc(alignment, (bytes + alignment "
        "- 1) / alignment * alignment)\n"
     << "                        : malloc(bytes);\n"
     // The compiled code does not check what it gets; a null pointer would
     // be a crash at its first store instead of a message.
     << "  if (!pointer && bytes) {\n"
     << "    fprintf(stderr, \"" << n
     << ": error: the compiled code could not allocate %zu bytes: out of "
        "memory\\n\", bytes);\n"
     << "    abort();\n  }\n"
     << "  if (bytes >= " << upper << "_MIN_CACHED) {\n"
     << "    pthread_mutex_lock(&" << n
     << "_lock);\n"
     // A block without a free slot is not kept when freed; still correct.
     << "    for (int i = 0; i < " << upper << "_SLOTS; ++i)\n"
     << "      if (!" << n << "_live[i].pointer) {\n"
     << "        " << n << "_live[i] = (" << n
     << "_block){pointer, bytes, alignment};\n"
     << "        " << n << "_live_bytes += bytes;\n"
     << "        if (" << n << "_live_bytes > " << n << "_peak_bytes)\n"
     << "          " << n << "_peak_bytes = " << n << "_live_bytes;\n"
     << "        break;\n      }\n"
     << "    pthread_mutex_unlock(&" << n << "_lock);\n  }\n"
     << "  return pointer;\n}\n\n"
     << "static void " << n << "_release(void *pointer) {\n"
     << "  if (!pointer)\n    return;\n"
     // No lock for the many small blocks: one with less room than the
     // smallest kept size was never kept.
     << "  if (malloc_usable_size(pointer) >= " << upper << "_MIN_CACHED) {\n"
     << "    pthread_mutex_lock(&" << n << "_lock);\n"
     << "    for (int i = 0; i < " << upper << "_SLOTS; ++i) {\n"
     << "      if (" << n << "_live[i].pointer != pointer)\n        continue;\n"
     << "      " << n << "_block block = " << n << "_live[i];\n"
     << "      " << n << "_live[i].pointer = NULL;\n"
     << "      " << n
     << "_live_bytes -= block.bytes;\n"
     // Twice the peak: a call's blocks need not all be live at once. Where
     // the kept blocks would exceed it, the least recently kept go (those of
     // one-off work, such as the prepared weights'), so that the cache
     // holds what the latest calls use.
     << "      while (" << n << "_kept_bytes + block.bytes > 2 * " << n
     << "_peak_bytes && " << n << "_evict_oldest() >= 0)\n"
     << "        ;\n"
     << "      int slot = -1;\n"
     << "      for (int j = 0; j < " << upper << "_SLOTS && slot < 0; ++j)\n"
     << "        if (!" << n << "_kept[j].pointer)\n"
     << "          slot = j;\n"
     << "      if (slot < 0)\n"
     << "        slot = " << n << "_evict_oldest();\n"
     << "      block.released = ++" << n << "_releases;\n"
     << "      " << n << "_kept[slot] = block;\n"
     << "      " << n << "_kept_bytes += block.bytes;\n"
     << "      pthread_mutex_unlock(&" << n << "_lock);\n"
     << "      return;\n    }\n"
     << "    pthread_mutex_unlock(&" << n << "_lock);\n  }\n"
     << "  free(pointer);\n}\n\n"
     << "void " << n << "_release_buffers(void) {\n"
     << "  pthread_mutex_lock(&" << n << "_lock);\n"
     << "  for (int i = 0; i < " << upper << "_SLOTS; ++i) {\n"
     << "    free(" << n << "_kept[i].pointer);\n"
     << "    " << n << "_kept[i].pointer = NULL;\n  }\n"
     << "  " << n << "_kept_bytes = 0;\n"
     << "  " << n << "_peak_bytes = " << n << "_live_bytes;\n"
     << "  pthread_mutex_unlock(&" << n << "_lock);\n}\n\n"
     << "__attribute__((visibility(\"hidden\"))) void "
        "*_mlir_memref_to_llvm_alloc(size_t bytes) {\n"
     << "  return " << n << "_allocate(bytes, 0);\n}\n"
     << "__attribute__((visibility(\"hidden\"))) void "
        "*_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) "
        "{\n"
     << "  return " << n << "_allocate(bytes, alignment);\n}\n"
     << "__attribute__((visibility(\"hidden\"))) void "
        "_mlir_memref_to_llvm_free(void *pointer) {\n"
     << "  " << n << "_release(pointer);\n}\n\n";

  // Checks: of the weights alone (NAME_create), and of everything.
  if (!weightParameters.empty()) {
    os << "static int " << n << "_check_weights(" << weightCheckParameters
       << ") {\n  int64_t count;\n";
    writeChecks(os, interface, Arguments::Weights);
    os << "  return " << upper << "_OK;\n}\n\n";
  }
  writeDisjointHelpers(os, interface);
  os << "static int " << n << "_check(" << withComma(checkParameters)
     << "const float *result, int64_t result_capacity, "
        "const int64_t *result_shape, int own_weights) {\n"
     << "  int64_t count;\n";
  writeChecks(os, interface, Arguments::All);
  os << "  if (!result || !result_shape)\n    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"result: null pointer\");\n";
  writeDisjointCheck(os, interface);
  os << "}\n\n";

  // The descriptors of every argument, named `<id>_memref`.
  auto describeArguments = [&]() {
    for (const GraphArgument &argument : arguments) {
      std::string id = toCIdentifier(argument.name);
      int64_t rank = argument.type.getRank();
      os << "  " << descriptorType(n, rank) << " " << id << "_memref = {0};\n"
         << "  " << n << "_describe(" << id << ", " << rank << ", " << id
         << "_shape, &" << id << "_memref.allocated, " << id
         << "_memref.sizes, " << id << "_memref.strides);\n";
    }
  };
  auto argumentPointers = [&]() {
    std::string list;
    for (const GraphArgument &argument : arguments)
      list += ", &" + toCIdentifier(argument.name) + "_memref";
    return list;
  };
  // Whether `pointer` is one of the arguments' own buffers, which the
  // compiled code does not own (it returns a copy, but the wrapper does not
  // rely on that to free what it frees).
  auto isArgument = [&](llvm::StringRef pointer) {
    std::string condition = "0";
    for (const GraphArgument &argument : arguments)
      condition += llvm::formatv(" || {0} == (const void *){1}", pointer,
                                 toCIdentifier(argument.name))
                       .str();
    return condition;
  };

  // The prepare functions, on the weights (the other arguments may be
  // NULL: the prepare functions read only weights).
  if (numPrepared > 0) {
    os << "static void " << n << "_prepare(" << graphParameters << ", "
       << memref1 << " prepared[" << numPrepared << "]) {\n";
    describeArguments();
    for (unsigned i = 0; i < numPrepared; ++i)
      os << "  memset(&prepared[" << i << "], 0, sizeof prepared[" << i
         << "]);\n  " << interface.prepareSymbols[i] << "(&prepared[" << i
         << "]" << argumentPointers() << ");\n";
    os << "}\n\n"
       << "static void " << n << "_release_prepared(" << graphParameters << ", "
       << memref1 << " prepared[" << numPrepared << "]) {\n"
       << "  for (int i = 0; i < " << numPrepared << "; ++i)\n"
       << "    if (!(" << isArgument("prepared[i].allocated") << "))\n"
       << "      " << n << "_release(prepared[i].allocated);\n}\n\n";
  }

  // One call of the graph, the sizes checked; the result copied out.
  os << "static int " << n << "_invoke(" << withComma(graphParameters)
     << "const " << memref1 << " *prepared, " << resultParameters(interface)
     << ") {\n";
  describeArguments();
  os << "  " << descriptorType(n, resultRank) << " out = {0};\n"
     << "  " << interface.graphSymbol << "(&out" << argumentPointers();
  for (unsigned i = 0; i < numPrepared; ++i)
    os << ", (" << memref1 << " *)&prepared[" << i << "]";
  os << ");\n  (void)prepared;\n\n";
  // The function boundary has the identity layout, so the result is one
  // row-major block: one memcpy. A strided walk per element cost as much
  // as a small layer. The walk stays for a layout the graph might choose.
  os << "  int64_t count;\n  int status = " << upper << "_OK;\n"
     << "  if (!" << n << "_count(" << resultRank
     << ", out.sizes, &count) || count > result_capacity) {\n"
     << "    status = " << n << "_fail(" << upper
     << "_RESULT_TOO_SMALL, \"result: needs %lld floats, room for %lld\",\n"
     << "                    (long long)count, (long long)result_capacity);\n"
     << "  } else {\n"
     << "    const float *base = (const float *)out.aligned + out.offset;\n"
     << "    int contiguous = 1;\n"
     << "    for (int64_t i = " << resultRank - 1
     << ", stride = 1; i >= 0; stride *= out.sizes[i], --i)\n"
     << "      contiguous &= out.sizes[i] == 1 || out.strides[i] == stride;\n"
     << "    if (contiguous) {\n"
     << "      memcpy(result, base, (size_t)count * sizeof(float));\n"
     << "    } else {\n"
     << "      int64_t index[" << resultRank << "] = {0};\n"
     << "      for (int64_t linear = 0; linear < count; ++linear) {\n"
     << "        int64_t position = 0;\n"
     << "        for (int i = 0; i < " << resultRank << "; ++i)\n"
     << "          position += index[i] * out.strides[i];\n"
     << "        result[linear] = base[position];\n"
     << "        for (int i = " << resultRank - 1 << "; i >= 0; --i) {\n"
     << "          if (++index[i] < out.sizes[i])\n            break;\n"
     << "          index[i] = 0;\n        }\n      }\n    }\n"
     << "    for (int i = 0; i < " << resultRank << "; ++i)\n"
     << "      result_shape[i] = out.sizes[i];\n  }\n"
     << "  if (!(" << isArgument("out.allocated") << "))\n"
     << "    " << n << "_release(out.allocated);\n"
     << "  return status;\n}\n\n";

  // The bf16 arguments that `which` selects, rounded into one block:
  // `layOutBF16` writes their offsets (`<id>_at`) and the block's size
  // (`bf16bytes`), `roundBF16` the rounding into the block at `block` as
  // `<id>_bf16`. Sizes are checked by then. (The locals have no `_`, so
  // that no library name makes them one of its `NAME_...` functions.)
  auto layOutBF16 = [&](Arguments which) {
    os << "  size_t bf16bytes = 0;\n  int64_t bf16count;\n";
    for (auto [index, argument] : llvm::enumerate(arguments)) {
      if (!takes(interface, which, index) || !isBF16(argument))
        continue;
      std::string id = toCIdentifier(argument.name);
      os << "  " << n << "_count(" << argument.type.getRank() << ", " << id
         << "_shape, &bf16count);\n"
         << "  size_t " << id << "_at = bf16bytes;\n"
         << "  if (!" << n << "_add_bf16_room(bf16count, &bf16bytes))\n"
         << "    return " << n << "_fail(" << upper << "_BAD_ARGUMENT, \"" << id
         << ": its bf16 copy does not fit in memory\");\n";
    }
  };
  auto roundBF16 = [&](Arguments which, llvm::StringRef block) {
    for (auto [index, argument] : llvm::enumerate(arguments)) {
      if (!takes(interface, which, index) || !isBF16(argument))
        continue;
      std::string id = toCIdentifier(argument.name);
      os << "  uint16_t *" << id << "_bf16 = (uint16_t *)((char *)" << block
         << " + " << id << "_at);\n"
         << "  " << n << "_count(" << argument.type.getRank() << ", " << id
         << "_shape, &bf16count);\n"
         << "  " << n << "_round_bf16(" << id << ", " << id
         << "_bf16, bf16count);\n";
    }
  };
  bool bf16 = hasBF16(interface, Arguments::All);
  bool bf16Activations = hasBF16(interface, Arguments::Activations);

  // NAME_run: everything in one call, the bf16 arguments rounded into a
  // block of this call's.
  std::string preparedArray = numPrepared ? "prepared" : "NULL";
  os << "int " << n << "_run(" << parameterList(interface) << ") {\n"
     << "  " << n << "_error_text[0] = 0;\n"
     << (interface.usesAMX ? "  if (" + n + "_amx_ready() != 0)\n    return " +
                                 upper + "_NO_AMX;\n"
                           : std::string())
     << "  int status = " << n << "_check("
     << withComma(argumentValues(interface, "", true))
     << "result, result_capacity, result_shape, 0);\n"
     << "  if (status != " << upper << "_OK)\n    return status;\n";
  if (bf16) {
    layOutBF16(Arguments::All);
    os << "  void *bf16block = aligned_alloc(64, bf16bytes);\n"
       << "  if (!bf16block)\n    return " << n << "_fail(" << upper
       << "_BAD_ARGUMENT, \"out of memory for the %zu bytes of the bf16 "
          "arguments\", bf16bytes);\n";
    roundBF16(Arguments::All, "bf16block");
  }
  std::string runValues = argumentValues(interface, "", true, true);
  if (numPrepared) {
    os << "  " << memref1 << " prepared[" << numPrepared << "];\n"
       << "  " << n << "_prepare(" << runValues << ", prepared);\n";
  }
  os << "  status = " << n << "_invoke(" << withComma(runValues)
     << preparedArray << ", result, result_capacity, result_shape);\n";
  if (numPrepared)
    os << "  " << n << "_release_prepared(" << runValues << ", prepared);\n";
  if (bf16)
    os << "  free(bf16block);\n";
  os << "  return status;\n}\n\n";

  // The per-call bf16 arguments of a handle's calls are rounded into
  // scratch blocks the handle keeps: a call takes one (a free one, or a new
  // one when every block is in use by another thread), grows it only if it
  // is too small, and gives it back. So calls of one size allocate nothing
  // after the first, and one handle still serves several threads at once.
  if (bf16Activations)
    os << "typedef struct " << n << "_scratch {\n  void *data;\n"
       << "  size_t bytes;\n  struct " << n << "_scratch *next;\n} " << n
       << "_scratch;\n\n";

  // The handle: the weights (copies, or bf16 roundings), 64-byte aligned in
  // one block, and the prepared buffers.
  os << "struct " << n << "_handle {\n  void *block;\n";
  for (auto [index, argument] : llvm::enumerate(arguments))
    if (interface.isWeight[index])
      os << "  const " << elementType(argument, View::Graph) << " *"
         << toCIdentifier(argument.name) << ";\n  int64_t "
         << toCIdentifier(argument.name) << "_shape[" << argument.type.getRank()
         << "];\n";
  if (numPrepared)
    os << "  " << memref1 << " prepared[" << numPrepared << "];\n";
  if (bf16Activations)
    os << "  pthread_mutex_t scratch_lock;\n  " << n
       << "_scratch *scratch; /* the free ones */\n";
  os << "};\n\n";

  if (bf16Activations)
    os << "/* A scratch block of at least `bytes` bytes (a multiple of 64), "
          "or NULL if out\n   of memory. */\n"
       << "static " << n << "_scratch *" << n << "_take_scratch(" << n
       << "_handle *handle, size_t bytes) {\n"
       << "  pthread_mutex_lock(&handle->scratch_lock);\n"
       << "  " << n << "_scratch *scratch = handle->scratch;\n"
       << "  if (scratch)\n    handle->scratch = scratch->next;\n"
       << "  pthread_mutex_unlock(&handle->scratch_lock);\n"
       << "  if (!scratch && !(scratch = calloc(1, sizeof *scratch)))\n"
       << "    return NULL;\n"
       << "  if (scratch->bytes < bytes) {\n"
       << "    free(scratch->data);\n"
       << "    scratch->data = aligned_alloc(64, bytes);\n"
       << "    scratch->bytes = scratch->data ? bytes : 0;\n"
       << "    if (!scratch->data) {\n      free(scratch);\n"
       << "      return NULL;\n    }\n  }\n"
       << "  return scratch;\n}\n\n"
       << "static void " << n << "_give_scratch(" << n << "_handle *handle, "
       << n << "_scratch *scratch) {\n"
       << "  pthread_mutex_lock(&handle->scratch_lock);\n"
       << "  scratch->next = handle->scratch;\n"
       << "  handle->scratch = scratch;\n"
       << "  pthread_mutex_unlock(&handle->scratch_lock);\n}\n\n";

  os << n << "_handle *" << n << "_create("
     << (weightParameters.empty() ? "void" : weightParameters) << ") {\n"
     << "  " << n << "_error_text[0] = 0;\n";
  if (interface.usesAMX)
    os << "  if (" << n << "_amx_ready() != 0)\n    return NULL;\n";
  llvm::SmallVector<std::string> weightNames;
  llvm::SmallVector<std::string> weightTypes;
  llvm::SmallVector<int64_t> weightRanks;
  llvm::SmallVector<bool> weightRounded;
  for (auto [index, argument] : llvm::enumerate(arguments))
    if (interface.isWeight[index]) {
      weightNames.push_back(toCIdentifier(argument.name));
      weightTypes.push_back(elementType(argument, View::Graph));
      weightRanks.push_back(argument.type.getRank());
      weightRounded.push_back(isBF16(argument));
    }
  if (!weightNames.empty()) {
    os << "  if (" << n << "_check_weights(";
    llvm::SmallVector<std::string> values;
    for (const std::string &id : weightNames)
      values.push_back(id + ", " + id + "_shape");
    os << llvm::join(values, ", ") << ") != " << upper
       << "_OK)\n    return NULL;\n";
  }
  os << "  size_t bytes = 0, offset[" << std::max<size_t>(weightNames.size(), 1)
     << "] = {0};\n  int64_t count;\n";
  for (auto [i, id] : llvm::enumerate(weightNames))
    os << "  " << n << "_count(" << weightRanks[i] << ", " << id
       << "_shape, &count);\n"
       << "  offset[" << i << "] = bytes;\n"
       << "  if (__builtin_mul_overflow((size_t)count, sizeof("
       << weightTypes[i] << "), &count) ||\n"
       << "      __builtin_add_overflow(bytes, ((size_t)count + 63) / 64 * 64, "
          "&bytes))\n"
       << "    return " << n << "_fail(" << upper
       << "_BAD_ARGUMENT, \"the weights do not fit in memory\"), NULL;\n";
  os << "  " << n << "_handle *handle = calloc(1, sizeof *handle);\n"
     << "  void *block = bytes ? aligned_alloc(64, bytes) : NULL;\n"
     << "  if (!handle || (bytes && !block)) {\n"
     << "    free(handle);\n    free(block);\n"
     << "    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"out of memory for the %zu bytes of the weights\", "
        "bytes), NULL;\n  }\n"
     << "  handle->block = block;\n";
  if (bf16Activations)
    os << "  pthread_mutex_init(&handle->scratch_lock, NULL);\n";
  // The bf16 weights are rounded here, once: calls reuse the roundings.
  for (auto [i, id] : llvm::enumerate(weightNames)) {
    os << "  " << n << "_count(" << weightRanks[i] << ", " << id
       << "_shape, &count);\n";
    if (weightRounded[i])
      os << "  " << n << "_round_bf16(" << id
         << ", (uint16_t *)((char *)block + offset[" << i << "]), count);\n";
    else
      os << "  memcpy((char *)block + offset[" << i << "], " << id
         << ", (size_t)count * sizeof(" << weightTypes[i] << "));\n";
    os << "  handle->" << id << " = (const " << weightTypes[i]
       << " *)((char *)block + offset[" << i << "]);\n"
       << "  memcpy(handle->" << id << "_shape, " << id
       << "_shape, sizeof handle->" << id << "_shape);\n";
  }
  if (numPrepared)
    os << "  " << n << "_prepare("
       << argumentValues(interface, "handle->", false)
       << ", handle->prepared);\n";
  os << "  return handle;\n}\n\n";

  std::string callValues = argumentValues(interface, "handle->", true, true);
  os << "int " << n << "_call(" << n << "_handle *handle, "
     << withComma(activationParameters) << resultParameters(interface)
     << ") {\n"
     << "  " << n << "_error_text[0] = 0;\n"
     << "  if (!handle)\n    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"handle: null pointer\");\n"
     << "  int status = " << n << "_check("
     << withComma(argumentValues(interface, "handle->", true))
     << "result, result_capacity, result_shape, 1);\n"
     << "  if (status != " << upper << "_OK)\n    return status;\n";
  if (bf16Activations) {
    layOutBF16(Arguments::Activations);
    os << "  " << n << "_scratch *scratch = " << n
       << "_take_scratch(handle, bf16bytes);\n"
       << "  if (!scratch)\n    return " << n << "_fail(" << upper
       << "_BAD_ARGUMENT, \"out of memory for the %zu bytes of the bf16 "
          "arguments\", bf16bytes);\n";
    roundBF16(Arguments::Activations, "scratch->data");
  }
  os << "  status = " << n << "_invoke(" << withComma(callValues)
     << (numPrepared ? "handle->prepared" : "NULL")
     << ", result, result_capacity, result_shape);\n";
  if (bf16Activations)
    os << "  " << n << "_give_scratch(handle, scratch);\n";
  os << "  return status;\n}\n\n";

  os << "void " << n << "_destroy(" << n << "_handle *handle) {\n"
     << "  if (!handle)\n    return;\n";
  if (numPrepared)
    os << "  " << n << "_release_prepared("
       << argumentValues(interface, "handle->", false)
       << ", handle->prepared);\n";
  if (bf16Activations)
    os << "  while (handle->scratch) {\n"
       << "    " << n << "_scratch *next = handle->scratch->next;\n"
       << "    free(handle->scratch->data);\n"
       << "    free(handle->scratch);\n"
       << "    handle->scratch = next;\n  }\n"
       << "  pthread_mutex_destroy(&handle->scratch_lock);\n";
  os << "  free(handle->block);\n  free(handle);\n}\n";
  if (std::optional<CacheLayout> cache = findCache(interface);
      cache && cache->session)
    writeSession(os, interface, *cache);
  return text;
}

} // namespace mha::compile
