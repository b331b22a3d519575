//===- CWrapper.cpp - The generated part of a library's C wrapper ---------===//
//
// The wrapper is the fixed C of library/mha_library.c, compiled into the
// same translation unit, and what this file writes for one graph: the
// descriptor types and prototypes of the compiled code, the size checks,
// and the public functions that take the graph's arguments (NAME_run,
// NAME_create, NAME_call, NAME_destroy, NAME_session_create and
// NAME_session_step), each a few lines on top of the fixed helpers.
//
//===----------------------------------------------------------------------===//

#include "tools/mha-compile/CInterface.h"
#include "tools/mha-compile/CInterfaceSupport.h"
#include "tools/mha-compile/PagedLibrary.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace mlir;
using mha::runtime::GraphArgument;

namespace mha::compile {

namespace {
/// The fixed C, embedded at build time (EmbedLibrary.cmake) so that
/// mha-compile needs no source tree to run.
struct EmbeddedFile {
  const char *path;
  const char *text;
};
const EmbeddedFile kLibrarySources[] = {
#include "tools/mha-compile/LibrarySources.inc"
};

std::string withComma(const std::string &list) {
  return list.empty() ? list : list + ", ";
}

/// The descriptors of every argument, named `<id>_memref`.
void describeArguments(llvm::raw_ostream &os,
                       const LibraryInterface &interface) {
  const std::string &n = interface.name;
  for (const GraphArgument &argument : interface.signature.arguments) {
    std::string id = toCIdentifier(argument.name);
    int64_t rank = argument.type.getRank();
    os << "  " << descriptorType(n, rank) << " " << id << "_memref = {0};\n"
       << "  " << n << "_describe(" << id << ", " << rank << ", " << id
       << "_shape, &" << id << "_memref.allocated, " << id << "_memref.sizes, "
       << id << "_memref.strides);\n";
  }
}

/// `, &x_memref, &w_q_memref, ...`.
std::string argumentPointers(const LibraryInterface &interface) {
  std::string list;
  for (const GraphArgument &argument : interface.signature.arguments)
    list += ", &" + toCIdentifier(argument.name) + "_memref";
  return list;
}

/// Whether `pointer` is one of the arguments' own buffers, which the
/// compiled code does not own (it returns a copy, but the wrapper does not
/// rely on that to free what it frees).
std::string isArgument(const LibraryInterface &interface,
                       llvm::StringRef pointer) {
  std::string condition = "0";
  for (const GraphArgument &argument : interface.signature.arguments)
    condition += llvm::formatv(" || {0} == (const void *){1}", pointer,
                               toCIdentifier(argument.name))
                     .str();
  return condition;
}

/// The bf16 arguments that `which` selects, laid out in one block: their
/// offsets (`<id>_at`) and the block's size (`bf16bytes`). Sizes are
/// checked by then. (The locals have no `_`, so that no library name makes
/// them one of its `NAME_...` functions.)
void layOutBF16(llvm::raw_ostream &os, const LibraryInterface &interface,
                Arguments which) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  os << "  size_t bf16bytes = 0;\n  int64_t bf16count;\n";
  for (auto [index, argument] :
       llvm::enumerate(interface.signature.arguments)) {
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
}

/// Rounds the bf16 arguments that `which` selects into the block at
/// `block`, as `<id>_bf16`.
void roundBF16(llvm::raw_ostream &os, const LibraryInterface &interface,
               Arguments which, llvm::StringRef block) {
  const std::string &n = interface.name;
  for (auto [index, argument] :
       llvm::enumerate(interface.signature.arguments)) {
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
}

/// The top of the wrapper: the library's header, what the fixed part needs
/// to know of this graph, and the fixed part.
void writePrologue(llvm::raw_ostream &os, const LibraryInterface &interface,
                   llvm::StringRef headerPath) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  os << "/* Generated by mha-compile: the C interface of " << n
     << ", on top of the\n   graph's memref-descriptor interface. */\n";
  // syscall() (the AMX permission) is a GNU/BSD function, not C11's.
  // madvise (huge pages for large blocks) is a POSIX/BSD function too.
  os << (interface.usesAMX ? "#define _GNU_SOURCE\n"
                           : "#define _DEFAULT_SOURCE\n");
  os << "#include \"" << headerPath << "\"\n\n"
     << "/* The fixed part of the C interface (mha_library.h says what it "
        "needs). */\n"
     << "#define MHA_NAME(x) " << n << "_##x\n"
     << "#define MHA_UPPER(x) " << upper << "_##x\n"
     << "#define MHA_NAME_STRING \"" << n << "\"\n";
  if (interface.usesAMX)
    os << "#define MHA_LIBRARY_USES_AMX\n";
  if (hasBF16(interface, Arguments::All))
    os << "#define MHA_LIBRARY_HAS_BF16\n";
  if (hasBF16(interface, Arguments::Activations))
    os << "#define MHA_LIBRARY_BF16_SCRATCH\n";
  if (std::optional<CacheLayout> cache = findCache(interface);
      cache && cache->session) {
    os << "#define MHA_LIBRARY_SESSION_ELEMENT " << cache->element << "\n";
    if (!ShapedType::isDynamic(cache->batch))
      os << "#define MHA_LIBRARY_SESSION_BATCH " << cache->batch << "\n";
  }
  if (findPagedCache(interface))
    os << "#define MHA_LIBRARY_PAGED\n";
  os << "#include \"mha_library.c\"\n\n";
}

/// One descriptor type per rank in use (rank 1: the prepared buffers), and
/// the compiled code's functions. The graph takes the prepared buffers
/// after its own arguments; each prepare function takes the graph's own
/// arguments.
void writeDescriptors(llvm::raw_ostream &os,
                      const LibraryInterface &interface) {
  const std::string &n = interface.name;
  const auto &arguments = interface.signature.arguments;
  int64_t resultRank = interface.signature.result.getRank();
  std::string memref1 = descriptorType(n, 1);
  std::set<int64_t> ranks = {resultRank, 1};
  for (const GraphArgument &argument : arguments)
    ranks.insert(argument.type.getRank());
  for (int64_t rank : ranks)
    os << "typedef struct {\n  void *allocated;\n  void *aligned;\n"
       << "  int64_t offset;\n  int64_t sizes[" << rank << "];\n"
       << "  int64_t strides[" << rank << "];\n} " << descriptorType(n, rank)
       << ";\n\n";
  os << "void " << interface.graphSymbol << "(" << descriptorType(n, resultRank)
     << " *";
  for (const GraphArgument &argument : arguments)
    os << ", " << descriptorType(n, argument.type.getRank()) << " *";
  for (size_t i = 0; i < interface.prepareSymbols.size(); ++i)
    os << ", " << memref1 << " *";
  os << ");\n";
  for (const std::string &symbol : interface.prepareSymbols) {
    os << "void " << symbol << "(" << memref1 << " *";
    for (const GraphArgument &argument : arguments)
      os << ", " << descriptorType(n, argument.type.getRank()) << " *";
    os << ");\n";
  }
  os << "\n";
}

/// NAME_check_weights (the weights alone, for NAME_create) and NAME_check
/// (everything).
void writeCheckFunctions(llvm::raw_ostream &os,
                         const LibraryInterface &interface) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  if (!argumentParameters(interface, Arguments::Weights).empty()) {
    os << "static int " << n << "_check_weights("
       << argumentParameters(interface, Arguments::Weights, View::Check)
       << ") {\n  int64_t count;\n";
    writeChecks(os, interface, Arguments::Weights);
    os << "  return " << upper << "_OK;\n}\n\n";
  }
  // The checks take the caller's pointers and the handle's alike.
  os << "static int " << n << "_check("
     << withComma(argumentParameters(interface, Arguments::All, View::Check))
     << "const float *result, int64_t result_capacity, "
        "const int64_t *result_shape, int own_weights) {\n"
     << "  int64_t count;\n";
  writeChecks(os, interface, Arguments::All);
  os << "  if (!result || !result_shape)\n    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"result: null pointer\");\n";
  writeDisjointCheck(os, interface);
  os << "}\n\n";
}

/// The prepare functions, on the weights (the other arguments may be NULL:
/// the prepare functions read only weights), and the release of their
/// buffers.
void writePrepare(llvm::raw_ostream &os, const LibraryInterface &interface) {
  const std::string &n = interface.name;
  unsigned numPrepared = interface.prepareSymbols.size();
  if (numPrepared == 0)
    return;
  std::string graphParameters =
      argumentParameters(interface, Arguments::All, View::Graph);
  std::string memref1 = descriptorType(n, 1);
  os << "static void " << n << "_prepare(" << graphParameters << ", " << memref1
     << " prepared[" << numPrepared << "]) {\n";
  describeArguments(os, interface);
  for (unsigned i = 0; i < numPrepared; ++i)
    os << "  memset(&prepared[" << i << "], 0, sizeof prepared[" << i
       << "]);\n  " << interface.prepareSymbols[i] << "(&prepared[" << i << "]"
       << argumentPointers(interface) << ");\n";
  os << "}\n\n"
     << "static void " << n << "_release_prepared(" << graphParameters << ", "
     << memref1 << " prepared[" << numPrepared << "]) {\n"
     << "  for (int i = 0; i < " << numPrepared << "; ++i)\n"
     << "    if (!(" << isArgument(interface, "prepared[i].allocated") << "))\n"
     << "      " << n << "_release(prepared[i].allocated);\n}\n\n";
}

/// NAME_invoke: one call of the graph, the sizes checked; the result copied
/// out.
void writeInvoke(llvm::raw_ostream &os, const LibraryInterface &interface) {
  const std::string &n = interface.name;
  int64_t resultRank = interface.signature.result.getRank();
  std::string memref1 = descriptorType(n, 1);
  os << "static int " << n << "_invoke("
     << withComma(argumentParameters(interface, Arguments::All, View::Graph))
     << "const " << memref1 << " *prepared, " << resultParameters(interface)
     << ") {\n";
  describeArguments(os, interface);
  os << "  " << descriptorType(n, resultRank) << " out = {0};\n"
     << "  " << interface.graphSymbol << "(&out" << argumentPointers(interface);
  for (size_t i = 0; i < interface.prepareSymbols.size(); ++i)
    os << ", (" << memref1 << " *)&prepared[" << i << "]";
  os << ");\n  (void)prepared;\n"
     << "  int status = " << n << "_copy_result(out.aligned, out.offset, "
     << resultRank << ", out.sizes, out.strides,\n"
     << "                              result, result_capacity, "
        "result_shape);\n"
     << "  if (!(" << isArgument(interface, "out.allocated") << "))\n"
     << "    " << n << "_release(out.allocated);\n"
     << "  return status;\n}\n\n";
}

/// NAME_run: everything in one call, the bf16 arguments rounded into a
/// block of this call's.
void writeRun(llvm::raw_ostream &os, const LibraryInterface &interface) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  unsigned numPrepared = interface.prepareSymbols.size();
  bool bf16 = hasBF16(interface, Arguments::All);
  os << "int " << n << "_run(" << parameterList(interface) << ") {\n"
     << "  " << n << "_error_text[0] = 0;\n";
  if (interface.usesAMX)
    os << "  if (" << n << "_amx_ready() != 0)\n    return " << upper
       << "_NO_AMX;\n";
  os << "  int status = " << n << "_check("
     << withComma(argumentValues(interface, "", true))
     << "result, result_capacity, result_shape, 0);\n"
     << "  if (status != " << upper << "_OK)\n    return status;\n";
  if (bf16) {
    layOutBF16(os, interface, Arguments::All);
    os << "  void *bf16block = aligned_alloc(64, bf16bytes);\n"
       << "  if (!bf16block)\n    return " << n << "_fail(" << upper
       << "_BAD_ARGUMENT, \"out of memory for the %zu bytes of the bf16 "
          "arguments\", bf16bytes);\n";
    roundBF16(os, interface, Arguments::All, "bf16block");
  }
  std::string values = argumentValues(interface, "", true, true);
  if (numPrepared)
    os << "  " << descriptorType(n, 1) << " prepared[" << numPrepared << "];\n"
       << "  " << n << "_prepare(" << values << ", prepared);\n";
  os << "  status = " << n << "_invoke(" << withComma(values)
     << (numPrepared ? "prepared" : "NULL")
     << ", result, result_capacity, result_shape);\n";
  if (numPrepared)
    os << "  " << n << "_release_prepared(" << values << ", prepared);\n";
  if (bf16)
    os << "  free(bf16block);\n";
  os << "  return status;\n}\n\n";
}

/// The handle: the weights (copies, or bf16 roundings), 64-byte aligned in
/// one block, the prepared buffers and the free scratch blocks.
void writeHandle(llvm::raw_ostream &os, const LibraryInterface &interface) {
  const std::string &n = interface.name;
  unsigned numPrepared = interface.prepareSymbols.size();
  os << "struct " << n << "_handle {\n  void *block;\n";
  for (auto [index, argument] : llvm::enumerate(interface.signature.arguments))
    if (interface.isWeight[index])
      os << "  const " << elementType(argument, View::Graph) << " *"
         << toCIdentifier(argument.name) << ";\n  int64_t "
         << toCIdentifier(argument.name) << "_shape[" << argument.type.getRank()
         << "];\n";
  if (numPrepared)
    os << "  " << descriptorType(n, 1) << " prepared[" << numPrepared << "];\n";
  if (hasBF16(interface, Arguments::Activations))
    os << "  pthread_mutex_t scratch_lock;\n  " << n
       << "_scratch *scratch; /* the free ones */\n";
  os << "};\n\n";
}

/// NAME_create: checks the weights, copies them (the bf16 ones rounded,
/// once: calls reuse the roundings) and runs the prepare functions.
void writeCreate(llvm::raw_ostream &os, const LibraryInterface &interface) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  std::string weightParameters =
      argumentParameters(interface, Arguments::Weights);
  os << n << "_handle *" << n << "_create("
     << (weightParameters.empty() ? "void" : weightParameters) << ") {\n"
     << "  " << n << "_error_text[0] = 0;\n";
  if (interface.usesAMX)
    os << "  if (" << n << "_amx_ready() != 0)\n    return NULL;\n";
  llvm::SmallVector<const GraphArgument *> weights;
  for (auto [index, argument] : llvm::enumerate(interface.signature.arguments))
    if (interface.isWeight[index])
      weights.push_back(&argument);
  llvm::SmallVector<std::string> values;
  for (const GraphArgument *weight : weights)
    values.push_back(toCIdentifier(weight->name) + ", " +
                     toCIdentifier(weight->name) + "_shape");
  if (!weights.empty())
    os << "  if (" << n << "_check_weights(" << llvm::join(values, ", ")
       << ") != " << upper << "_OK)\n    return NULL;\n";
  os << "  size_t bytes = 0, offset[" << std::max<size_t>(weights.size(), 1)
     << "] = {0};\n  int64_t count;\n";
  for (auto [i, weight] : llvm::enumerate(weights))
    os << "  " << n << "_count(" << weight->type.getRank() << ", "
       << toCIdentifier(weight->name) << "_shape, &count);\n"
       << "  offset[" << i << "] = bytes;\n"
       << "  if (__builtin_mul_overflow((size_t)count, sizeof("
       << elementType(*weight, View::Graph) << "), &count) ||\n"
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
  if (hasBF16(interface, Arguments::Activations))
    os << "  pthread_mutex_init(&handle->scratch_lock, NULL);\n";
  for (auto [i, weight] : llvm::enumerate(weights)) {
    std::string id = toCIdentifier(weight->name);
    std::string type = elementType(*weight, View::Graph);
    os << "  " << n << "_count(" << weight->type.getRank() << ", " << id
       << "_shape, &count);\n";
    if (isBF16(*weight))
      os << "  " << n << "_round_bf16(" << id
         << ", (uint16_t *)((char *)block + offset[" << i << "]), count);\n";
    else
      os << "  memcpy((char *)block + offset[" << i << "], " << id
         << ", (size_t)count * sizeof(" << type << "));\n";
    os << "  handle->" << id << " = (const " << type
       << " *)((char *)block + offset[" << i << "]);\n"
       << "  memcpy(handle->" << id << "_shape, " << id
       << "_shape, sizeof handle->" << id << "_shape);\n";
  }
  if (!interface.prepareSymbols.empty())
    os << "  " << n << "_prepare("
       << argumentValues(interface, "handle->", false)
       << ", handle->prepared);\n";
  os << "  return handle;\n}\n\n";
}

/// NAME_call, on a handle's weights, and NAME_destroy.
void writeCallAndDestroy(llvm::raw_ostream &os,
                         const LibraryInterface &interface) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  bool bf16Activations = hasBF16(interface, Arguments::Activations);
  bool prepared = !interface.prepareSymbols.empty();
  os << "int " << n << "_call(" << n << "_handle *handle, "
     << withComma(argumentParameters(interface, Arguments::Activations))
     << resultParameters(interface) << ") {\n"
     << "  " << n << "_error_text[0] = 0;\n"
     << "  if (!handle)\n    return " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"handle: null pointer\");\n"
     << "  int status = " << n << "_check("
     << withComma(argumentValues(interface, "handle->", true))
     << "result, result_capacity, result_shape, 1);\n"
     << "  if (status != " << upper << "_OK)\n    return status;\n";
  if (bf16Activations) {
    layOutBF16(os, interface, Arguments::Activations);
    os << "  " << n << "_scratch *scratch = " << n
       << "_take_scratch(&handle->scratch_lock, &handle->scratch, "
          "bf16bytes);\n"
       << "  if (!scratch)\n    return " << n << "_fail(" << upper
       << "_BAD_ARGUMENT, \"out of memory for the %zu bytes of the bf16 "
          "arguments\", bf16bytes);\n";
    roundBF16(os, interface, Arguments::Activations, "scratch->data");
  }
  os << "  status = " << n << "_invoke("
     << withComma(argumentValues(interface, "handle->", true, true))
     << (prepared ? "handle->prepared" : "NULL")
     << ", result, result_capacity, result_shape);\n";
  if (bf16Activations)
    os << "  " << n
       << "_give_scratch(&handle->scratch_lock, &handle->scratch, scratch);\n";
  os << "  return status;\n}\n\n";

  os << "void " << n << "_destroy(" << n << "_handle *handle) {\n"
     << "  if (!handle)\n    return;\n";
  if (prepared)
    os << "  " << n << "_release_prepared("
       << argumentValues(interface, "handle->", false)
       << ", handle->prepared);\n";
  if (bf16Activations)
    os << "  " << n
       << "_free_scratch(&handle->scratch_lock, handle->scratch);\n";
  os << "  free(handle->block);\n  free(handle);\n}\n";
}

/// NAME_session_create and NAME_session_step of a cache graph, which pass
/// the weights and the graph's arguments on; the rest of the session API
/// is fixed (library/mha_session.c).
void writeSession(llvm::raw_ostream &os, const LibraryInterface &interface,
                  const CacheLayout &cache) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  const auto &arguments = interface.signature.arguments;
  llvm::SmallVector<std::string> weightValues, callValues;
  for (auto [index, argument] : llvm::enumerate(arguments)) {
    std::string id = toCIdentifier(argument.name);
    if (interface.isWeight[index])
      weightValues.push_back(id + ", " + id + "_shape");
    else if (index == cache.x)
      callValues.push_back("x, x_shape");
    else if (index == cache.keyCache)
      callValues.push_back("session->k_cache, session->k_shape");
    else if (index == cache.valueCache)
      callValues.push_back("session->v_cache, session->v_shape");
    else
      callValues.push_back("session->lengths, lengths_shape");
  }
  std::string weightParameters =
      argumentParameters(interface, Arguments::Weights);
  os << "\n"
     << n << "_session *" << n << "_session_create(int64_t batch, "
     << cache.element << " *k_cache, " << cache.element << " *v_cache"
     << (weightParameters.empty() ? "" : ", " + weightParameters) << ") {\n"
     << "  " << n << "_session *session = " << n
     << "_session_open(batch, k_cache, v_cache);\n"
     << "  if (!session)\n    return NULL;\n"
     << "  session->handle = " << n << "_create("
     << llvm::join(weightValues, ", ") << ");\n"
     << "  return " << n
     << "_session_finish(session, k_cache, v_cache);\n}\n\n";

  os << "int " << n << "_session_step(" << n
     << "_session *session, const float *x, int64_t tokens,\n"
     << "    float *y, int64_t y_capacity) {\n"
     << "  int status = " << n
     << "_session_check_step(session, x, tokens, y, y_capacity);\n"
     << "  if (status != " << upper << "_OK)\n    return status;\n"
     << "  int64_t x_shape[3] = {session->batch, tokens, " << upper
     << "_MODEL_DIM};\n"
     << "  int64_t lengths_shape[1] = {session->batch};\n"
     << "  int64_t y_shape[3];\n"
     << "  status = " << n << "_call(session->handle, "
     << llvm::join(callValues, ", ") << ", y, y_capacity, y_shape);\n"
     << "  if (status != " << upper << "_OK)\n    return status;\n"
     << "  " << n << "_session_advance(session, tokens);\n"
     << "  return " << upper << "_OK;\n}\n";
}
} // namespace

std::string writeWrapper(const LibraryInterface &interface,
                         llvm::StringRef headerPath) {
  std::string text;
  llvm::raw_string_ostream os(text);
  writePrologue(os, interface, headerPath);
  writeDescriptors(os, interface);
  writeCheckFunctions(os, interface);
  writePrepare(os, interface);
  writeInvoke(os, interface);
  writeRun(os, interface);
  writeHandle(os, interface);
  writeCreate(os, interface);
  writeCallAndDestroy(os, interface);
  if (std::optional<CacheLayout> cache = findCache(interface);
      cache && cache->session)
    writeSession(os, interface, *cache);
  return text;
}

std::vector<std::pair<std::string, std::string>> librarySources() {
  std::vector<std::pair<std::string, std::string>> files;
  for (const EmbeddedFile &file : kLibrarySources)
    files.emplace_back(file.path, file.text);
  return files;
}

} // namespace mha::compile
