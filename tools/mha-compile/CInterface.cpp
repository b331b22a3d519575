//===- CInterface.cpp - The C header and wrapper of a library -------------===//

#include "tools/mha-compile/CInterface.h"
#include "tools/mha-compile/CInterfaceSupport.h"
#include "tools/mha-compile/PagedLibrary.h"
#include "tools/mha-compile/ParallelLibrary.h"

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

static void writeArgumentDocs(llvm::raw_ostream &os,
                              const LibraryInterface &interface);
static void writeWeightDocs(llvm::raw_ostream &os,
                            const LibraryInterface &interface);
static void writeHandleDeclarations(llvm::raw_ostream &os,
                                    const LibraryInterface &interface);

std::string writeHeader(const LibraryInterface &interface) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string guard = llvm::StringRef(interface.name).upper() + "_H";
  const std::string &n = interface.name;
  os << "/* " << n << ".h: generated by mha-compile from "
     << interface.graphFile << "; do not edit. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdint.h>\n"
     << (interface.ranks ? "#include <mpi.h>\n\n" : "\n")
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
  writeArgumentDocs(os, interface);
  writeWeightDocs(os, interface);
  writeHandleDeclarations(os, interface);
  if (std::optional<CacheLayout> cache = findCache(interface))
    writeSessionHeader(os, interface, *cache,
                       argumentParameters(interface, Arguments::Weights));
  if (std::optional<PagedLayout> paged = findPagedCache(interface))
    writePagedHeader(os, interface, *paged);
  if (interface.ranks)
    writeParallelDeclarations(os, interface);
  os << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return text;
}

/// The header's list of the arguments and the relations between their
/// sizes that a call must keep.
static void writeArgumentDocs(llvm::raw_ostream &os,
                              const LibraryInterface &interface) {
  const std::string &n = interface.name;
  for (auto [index, argument] : llvm::enumerate(interface.signature.arguments))
    os << " *   " << toCIdentifier(argument.name) << ": "
       << describeElementType(argument) << " " << describeShape(argument.type)
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
}

/// The header's words on the bf16 arguments and on the weights.
static void writeWeightDocs(llvm::raw_ostream &os,
                            const LibraryInterface &interface) {
  const std::string &n = interface.name;
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
}

/// The header's declarations of the handle API, NAME_run and the functions
/// every library has.
static void writeHandleDeclarations(llvm::raw_ostream &os,
                                    const LibraryInterface &interface) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  std::string weights = argumentParameters(interface, Arguments::Weights);
  std::string activations =
      argumentParameters(interface, Arguments::Activations);
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
}

} // namespace mha::compile
