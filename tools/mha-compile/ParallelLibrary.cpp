//===- ParallelLibrary.cpp - A library split by heads across ranks --------===//

#include "tools/mha-compile/ParallelLibrary.h"
#include "compiler/Passes.h"
#include "tools/mha-compile/CInterfaceSupport.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace mha::compile {

namespace {
unsigned countSlices(Operation *op) {
  unsigned count = 0;
  op->walk([&](tensor::ExtractSliceOp) { ++count; });
  return count;
}

/// Rank `rank`'s shares of `function`'s arguments, read from and then
/// removed with the split's `mha.shard` attributes; `full` is the entry
/// before the split.
llvm::Expected<std::vector<ArgumentShare>> readShares(func::FuncOp function,
                                                      func::FuncOp full) {
  std::vector<ArgumentShare> shares(function.getNumArguments());
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto shard = function.getArgAttrOfType<DenseI64ArrayAttr>(
        i, mlir::mha::getShardAttrName());
    if (!shard) {
      // The output bias is rank 0's alone: the others add zeros.
      if (function.getArgument(i).use_empty() &&
          !full.getArgument(i).use_empty())
        shares[i].kind = ArgumentShare::Zeros;
      continue;
    }
    function.removeArgAttr(i, mlir::mha::getShardAttrName());
    auto type = cast<RankedTensorType>(full.getArgument(i).getType());
    if (type.isDynamicDim(shard[0]))
      return llvm::createStringError(llvm::formatv(
          "--parallel: argument {0} of @{1} is split along its dimension {2}, "
          "which is `?`; a split library needs that size in the graph",
          i, full.getSymName(), shard[0]));
    shares[i] = {ArgumentShare::Slice, shard[0], shard[1], shard[2],
                 type.getDimSize(shard[0])};
  }
  return shares;
}

/// `text` with each `@N@` (the public prefix), `@U@` (its upper case), `@S@`
/// (the inner library's prefix) and `@R@` (the ranks) replaced.
std::string expand(llvm::StringRef text, const LibraryInterface &full,
                   const LibraryInterface &share, int64_t ranks) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    if (text.substr(at).size() >= 3 && text[at] == '@' && text[at + 2] == '@') {
      char key = text[at + 1];
      std::string value = key == 'N'   ? full.name
                          : key == 'U' ? llvm::StringRef(full.name).upper()
                          : key == 'S' ? share.name
                          : key == 'R' ? std::to_string(ranks)
                                       : std::string();
      if (!value.empty()) {
        out += value;
        at += 3;
        continue;
      }
    }
    out += text[at++];
  }
  return out;
}

/// The helpers every split library has: the communicator, the messages,
/// cutting a rank's share from a full array, hashing what a rank was given,
/// and the ranks' agreement and sum.
constexpr llvm::StringLiteral kFixedPart = R"c(
static MPI_Comm @N@_comm = MPI_COMM_NULL;
static _Thread_local char @N@_error_text[512];

const char *@N@_last_error(void) { return @N@_error_text; }

void @N@_release_buffers(void) { @S@_release_buffers(); }

static int @N@_fail(int status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(@N@_error_text, sizeof @N@_error_text, format, args);
  va_end(args);
  return status;
}

int @N@_set_communicator(MPI_Comm comm) {
  @N@_error_text[0] = 0;
  int initialized = 0, size = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return @N@_fail(@U@_BAD_ARGUMENT,
                    "comm: MPI is not initialized (call MPI_Init first)");
  if (comm == MPI_COMM_NULL)
    return @N@_fail(@U@_BAD_ARGUMENT, "comm: MPI_COMM_NULL");
  MPI_Comm_size(comm, &size);
  if (size != @R@)
    return @N@_fail(@U@_BAD_ARGUMENT,
                    "comm: %d ranks, but this library splits the layer "
                    "among %d (mha-compile --ranks)",
                    size, @R@);
  MPI_Comm own;
  if (MPI_Comm_dup(comm, &own) != MPI_SUCCESS)
    return @N@_fail(@U@_BAD_ARGUMENT, "comm: MPI_Comm_dup failed");
  if (@N@_comm != MPI_COMM_NULL)
    MPI_Comm_free(&@N@_comm);
  @N@_comm = own;
  return @U@_OK;
}

/* This process's rank, or -1 with a message before a communicator. */
static int @N@_rank(void) {
  int rank = -1;
  if (@N@_comm == MPI_COMM_NULL)
    return @N@_fail(-1, "no communicator: call @N@_set_communicator first");
  MPI_Comm_rank(@N@_comm, &rank);
  return rank;
}

/* Argument `index` as this rank passes it on: the caller's array, or a
 * block of its own (a slice, or zeros) that `*owned` frees. An array whose
 * sizes are wrong otherwise goes on as it is: the share's checks say what
 * is wrong with it. */
static int @N@_cut(int rank, int index, const char *name, const void *data,
                   int dims, const int64_t *shape, size_t element,
                   const void **part, int64_t *part_shape, void **owned) {
  const int64_t *share = @N@_shares[rank][index];
  int64_t count = 1;
  *part = data;
  *owned = NULL;
  if (!data || !shape)
    return @U@_OK;
  memcpy(part_shape, shape, sizeof(int64_t) * (size_t)dims);
  if (share[0] == 0)
    return @U@_OK;
  for (int d = 0; d < dims; ++d)
    if (shape[d] < 1 || __builtin_mul_overflow(count, shape[d], &count) ||
        count > (int64_t)(SIZE_MAX / 2 / element))
      return @U@_OK;
  int dim = (int)share[1];
  if (share[0] == 1 && shape[dim] != share[4])
    return @N@_fail(@U@_BAD_ARGUMENT, "%s: dimension %d must be %lld, got %lld",
                    name, dim, (long long)share[4], (long long)shape[dim]);
  if (share[0] == 2) {
    *owned = calloc((size_t)count, element);
    *part = *owned;
    return *owned ? @U@_OK
                  : @N@_fail(@U@_BAD_ARGUMENT, "%s: out of memory", name);
  }
  int64_t outer = 1, inner = (int64_t)element, size = share[3];
  for (int d = 0; d < dim; ++d)
    outer *= shape[d];
  for (int d = dim + 1; d < dims; ++d)
    inner *= shape[d];
  char *block = malloc((size_t)(outer * size * inner));
  if (!block)
    return @N@_fail(@U@_BAD_ARGUMENT, "%s: out of memory", name);
  for (int64_t o = 0; o < outer; ++o)
    memcpy(block + o * size * inner,
           (const char *)data + (o * shape[dim] + share[2]) * inner,
           (size_t)(size * inner));
  part_shape[dim] = size;
  *part = *owned = block;
  return @U@_OK;
}

/* Folds an argument the share accepted, its sizes and elements, into
 * `hash`. */
static uint64_t @N@_hash(uint64_t hash, const void *data, int dims,
                         const int64_t *shape, size_t element) {
  int64_t count = 1;
  for (int d = 0; d < dims; ++d)
    count *= shape[d];
  hash = mha_rank_hash(hash, shape, sizeof(int64_t) * (size_t)dims);
  return mha_rank_hash(hash, data, (size_t)count * element);
}

/* Every rank says how its share went (`status`) and what it was given
 * (`hash`); when all are ready alike, they add up their outputs. Returns
 * the status of the whole call, the same on every rank but for a rank's
 * own failure, which keeps its own status and message. */
static int @N@_add_up(int status, uint64_t hash, float *result, int dims,
                      const int64_t *result_shape) {
  mha_rank_state mine = {status == @U@_OK ? 0 : 1 + (uint64_t)status, 0, 0,
                         hash};
  if (status == @U@_OK && result) {
    int64_t count = 1;
    for (int d = 0; d < dims; ++d)
      count *= result_shape[d];
    mine.elements = (uint64_t)count;
    mine.shape_hash =
        mha_rank_hash(0, result_shape, sizeof(int64_t) * (size_t)dims);
  }
  mha_rank_disagreement found = mha_rank_agree(@N@_comm, &mine);
  if (status != @U@_OK)
    return status;
  switch (found.reason) {
  case MHA_RANKS_AGREE:
    break;
  case MHA_RANK_STOPPED:
    return @N@_fail(@U@_OTHER_RANK,
                    "rank %d failed (status %d) before the ranks added up "
                    "their outputs: see its @N@_last_error()",
                    found.rank, (int)found.code);
  case MHA_RANK_OTHER_INPUTS:
    return @N@_fail(@U@_OTHER_RANK,
                    "rank %d was given other arguments than rank 0; every "
                    "rank must pass the same full arrays",
                    found.rank);
  case MHA_RANK_OTHER_SHAPE:
    return @N@_fail(@U@_OTHER_RANK,
                    "rank %d's output has another shape than rank 0's",
                    found.rank);
  default:
    return @N@_fail(@U@_OTHER_RANK, "the ranks' exchange failed in MPI");
  }
  if (result && mha_rank_sum(@N@_comm, result, (int64_t)mine.elements) !=
                    MPI_SUCCESS)
    return @N@_fail(@U@_OTHER_RANK, "MPI_Allreduce failed");
  return @U@_OK;
}

struct @N@_handle {
  @S@_handle *share;
  /* What the weights hashed to: every call checks it with the inputs. */
  uint64_t hash;
};

void @N@_destroy(@N@_handle *handle) {
  if (!handle)
    return;
  @S@_destroy(handle->share);
  free(handle);
}
)c";

/// The arguments a function takes, and the C that cuts, hashes and frees
/// them, and passes them on.
struct ArgumentCode {
  std::string declare, cut, hash, release;
  llvm::SmallVector<std::string> parts;
};

ArgumentCode writeArguments(const LibraryInterface &full, Arguments which) {
  ArgumentCode code;
  const std::string &n = full.name;
  for (auto [index, argument] : llvm::enumerate(full.signature.arguments)) {
    if (!takes(full, which, index))
      continue;
    std::string id = toCIdentifier(argument.name);
    int64_t rank = argument.type.getRank();
    std::string element = "sizeof(" + elementType(argument) + ")";
    code.declare += llvm::formatv("  const void *{0}_part = NULL;\n  int64_t "
                                  "{0}_part_shape[{1}];\n  void *{0}_owned = "
                                  "NULL;\n",
                                  id, rank)
                        .str();
    code.cut += llvm::formatv("  if (status == 0)\n    status = {0}_cut(rank, "
                              "{1}, \"{2}\", {2}, {3}, {2}_shape, {4}, "
                              "&{2}_part, {2}_part_shape, &{2}_owned);\n",
                              n, index, id, rank, element)
                    .str();
    code.hash += llvm::formatv("    hash = {0}_hash(hash, {1}, {2}, {1}_shape, "
                               "{3});\n",
                               n, id, rank, element)
                     .str();
    code.release += "  free(" + id + "_owned);\n";
    code.parts.push_back(id + "_part, " + id + "_part_shape");
  }
  return code;
}

/// NAME_create, NAME_call and NAME_run: each cuts this rank's share of its
/// arguments, calls the inner library's function and adds up.
void writeFunctions(llvm::raw_ostream &os, const LibraryInterface &full,
                    const LibraryInterface &share) {
  const std::string &n = full.name, &s = share.name;
  std::string upper = llvm::StringRef(n).upper();
  int64_t resultRank = full.signature.result.getRank();
  std::string start = "  " + n + "_error_text[0] = 0;\n  int rank = " + n +
                      "_rank();\n  if (rank < 0)\n";
  std::string shareFailed = "    if (status != 0)\n      " + n +
                            "_fail(status, \"%s\", " + s + "_last_error());\n";

  ArgumentCode weights = writeArguments(full, Arguments::Weights);
  std::string weightParameters = argumentParameters(full, Arguments::Weights);
  os << n << "_handle *" << n << "_create("
     << (weightParameters.empty() ? "void" : weightParameters) << ") {\n"
     << start << "    return NULL;\n"
     << weights.declare << "  int status = 0;\n  uint64_t hash = 0;\n"
     << weights.cut << "  " << n << "_handle *handle = NULL;\n"
     << "  if (status == 0) {\n    handle = calloc(1, sizeof *handle);\n"
     << "    if (handle)\n      handle->share = " << s << "_create("
     << llvm::join(weights.parts, ", ") << ");\n"
     << "    if (!handle || !handle->share)\n      status = " << n << "_fail("
     << upper << "_BAD_ARGUMENT, \"%s\", handle ? " << s
     << "_last_error() : \"out of memory\");\n  }\n"
     << "  if (status == 0) {\n"
     << weights.hash << "    handle->hash = hash;\n  }\n"
     << weights.release << "  if (" << n
     << "_add_up(status, hash, NULL, 0, NULL) != 0) {\n    " << n
     << "_destroy(handle);\n    return NULL;\n  }\n  return handle;\n}\n\n";

  ArgumentCode activations = writeArguments(full, Arguments::Activations);
  os << "int " << n << "_call(" << n << "_handle *handle, "
     << (activations.parts.empty()
             ? ""
             : argumentParameters(full, Arguments::Activations) + ", ")
     << resultParameters(full) << ") {\n"
     << start << "    return " << upper << "_BAD_ARGUMENT;\n"
     << activations.declare << "  int status = 0;\n"
     << "  if (!handle)\n    status = " << n << "_fail(" << upper
     << "_BAD_ARGUMENT, \"handle: null pointer\");\n"
     << "  uint64_t hash = handle ? handle->hash : 0;\n"
     << activations.cut << "  if (status == 0) {\n    status = " << s
     << "_call(handle->share, ";
  for (const std::string &part : activations.parts)
    os << part << ", ";
  os << "result, result_capacity, result_shape);\n"
     << shareFailed << "  }\n  if (status == 0) {\n"
     << activations.hash << "  }\n"
     << activations.release << "  return " << n << "_add_up(status, hash, "
     << "result, " << resultRank << ", result_shape);\n}\n\n";

  ArgumentCode all = writeArguments(full, Arguments::All);
  os << "int " << n << "_run(" << parameterList(full) << ") {\n"
     << start << "    return " << upper << "_BAD_ARGUMENT;\n"
     << all.declare << "  int status = 0;\n  uint64_t hash = 0;\n"
     << all.cut << "  if (status == 0) {\n    status = " << s << "_run(";
  for (const std::string &part : all.parts)
    os << part << ", ";
  os << "result, result_capacity, result_shape);\n"
     << shareFailed << "  }\n  if (status == 0) {\n"
     << all.hash << "  }\n"
     << all.release << "  return " << n << "_add_up(status, hash, "
     << "result, " << resultRank << ", result_shape);\n}\n";
}
} // namespace

llvm::Expected<ParallelLayout>
splitAmongRanks(::mha::runtime::LoadedGraph &graph, int64_t ranks) {
  llvm::StringRef entry = graph.entry.getSymName();
  if (llvm::any_of(graph.signature.resultAliases,
                   [](std::optional<unsigned> alias) { return alias; }))
    return llvm::createStringError(llvm::formatv(
        "--parallel: @{0} updates arguments in place (key/value caches), "
        "which a split library does not take yet; mha-run --parallel heads "
        "runs such decoders",
        entry));
  ParallelLayout layout;
  layout.fullSignature = graph.signature;
  auto relations = runtime::deriveSizeRelations(graph.entry, graph.signature);
  if (!relations)
    return relations.takeError();
  layout.fullRelations = std::move(*relations);
  unsigned fullSlices = countSlices(graph.entry);

  OwningOpRef<ModuleOp> rankZero;
  std::string rankOneText;
  for (int64_t rank = 0; rank < ranks; ++rank) {
    OwningOpRef<ModuleOp> module = graph.module->clone();
    PassManager pm(module->getContext());
    pm.addPass(mlir::mha::createMhaSplitHeads({rank, ranks}));
    if (failed(pm.run(*module)))
      return llvm::createStringError(
          llvm::formatv("--parallel heads cannot split @{0} among {1} ranks "
                        "(see above)",
                        entry, ranks)
              .str());
    auto function = module->lookupSymbol<func::FuncOp>(entry);
    auto shares = readShares(function, graph.entry);
    if (!shares)
      return shares.takeError();
    // Every rank runs rank 0's code on its own slices: a weight sliced
    // inside the graph would need other code on each rank.
    if (countSlices(function) != fullSlices)
      return llvm::createStringError(llvm::formatv(
          "--parallel: the split of @{0} slices a weight inside the graph; a "
          "split library needs every weight as an argument of its own",
          entry));
    layout.shares.push_back(std::move(*shares));
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    if (rank == 1)
      rankOneText = text;
    else if (rank > 1 && text != rankOneText)
      return llvm::createStringError(llvm::formatv(
          "--parallel: rank {0}'s graph of @{1} is not rank 1's; a split "
          "library runs one graph on every rank",
          rank, entry));
    if (rank == 0)
      rankZero = std::move(module);
  }
  graph.module = std::move(rankZero);
  graph.entry = graph.module->lookupSymbol<func::FuncOp>(entry);
  auto signature = runtime::readSignature(graph.entry);
  if (!signature)
    return signature.takeError();
  graph.signature = std::move(*signature);
  return layout;
}

std::string writeParallelWrapper(const LibraryInterface &full,
                                 const LibraryInterface &share,
                                 const ParallelLayout &layout,
                                 llvm::StringRef fullHeader,
                                 llvm::StringRef shareHeader) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const std::string &n = full.name;
  int64_t ranks = layout.shares.size();
  os << "/* Generated by mha-compile: " << n << " split by heads among "
     << ranks << " MPI ranks,\n   on top of " << share.name
     << ", the graph of rank 0's share. */\n"
     << "#define _DEFAULT_SOURCE\n#include \"" << fullHeader << "\"\n"
     << "#include \"" << shareHeader << "\"\n"
     << "#include \"runtime/RankAgreement.c\"\n\n"
     << "#include <stdarg.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
     << "#include <string.h>\n\n"
     << "/* {kind (0 whole, 1 slice, 2 zeros), dim, offset, size, full size} "
        "of each\n   argument on each rank. */\n"
     << "static const int64_t " << n << "_shares[" << ranks << "]["
     << std::max<size_t>(full.signature.arguments.size(), 1) << "][5] = {\n";
  for (const std::vector<ArgumentShare> &rank : layout.shares) {
    os << "  {";
    for (const ArgumentShare &argument : rank)
      os << llvm::formatv("{{{0}, {1}, {2}, {3}, {4}}, ", int(argument.kind),
                          argument.dim, argument.offset, argument.size,
                          argument.fullSize);
    os << "},\n";
  }
  os << "};\n" << expand(kFixedPart, full, share, ranks) << "\n";
  writeFunctions(os, full, share);
  return text;
}

void writeParallelDeclarations(llvm::raw_ostream &os,
                               const LibraryInterface &interface) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  os << "/*\n * Split by heads among " << interface.ranks
     << " MPI ranks (mha-compile --parallel heads\n"
     << " * --ranks " << interface.ranks
     << "): every rank of a communicator of that size calls each\n"
     << " * function above with the same full arrays, in the same order: "
        "they are\n"
     << " * collective, one at a time (a handle serves one thread). Each "
        "rank\n"
     << " * computes its share of the heads from its slices of the "
        "arrays, and\n"
     << " * one MPI_Allreduce adds up the ranks' outputs (the output bias "
        "once):\n"
     << " * every rank gets the whole result. A rank that fails, or that "
        "was\n"
     << " * given other arrays than rank 0, makes every rank return an "
        "error.\n */\n"
     << "#define " << upper << "_RANKS " << interface.ranks << "\n"
     << "/* Another rank failed, or was given other arguments than rank 0: "
        "nothing\n   was added up ("
     << n << "_last_error names the rank). */\n"
     << "#define " << upper << "_OTHER_RANK 6\n"
     << "/* Sets the communicator of the split, on every rank, before the "
        "first\n   create or run (collective: the library works on a "
        "duplicate of comm).\n   Returns "
     << upper << "_OK, or " << upper
     << "_BAD_ARGUMENT when MPI is not initialized or comm\n   does not have "
     << interface.ranks << " ranks. */\n"
     << "int " << n << "_set_communicator(MPI_Comm comm);\n\n";
}

} // namespace mha::compile
