//===- CInterfaceSupport.cpp - What the header and wrapper share ----------===//

#include "tools/mha-compile/CInterfaceSupport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using mha::runtime::GraphArgument;

namespace mha::compile {

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

bool takes(const LibraryInterface &interface, Arguments which, unsigned index) {
  return which == Arguments::All ||
         interface.isWeight[index] == (which == Arguments::Weights);
}

bool isInt64(const GraphArgument &argument) {
  return argument.type.getElementType().isInteger(64);
}

/// A bf16 key/value cache of a cache graph (mha-gen --dtype bf16
/// --kv-cache), or a paged cache's pool (--paged-kv): updated in place, so
/// the C API cannot round the caller's floats into a copy of it. It takes
/// the bf16 bits themselves (`uint16_t *`), in every view; a session
/// allocates them itself.
bool isBF16Cache(const GraphArgument &argument) {
  return argument.type.getElementType().isBF16() &&
         argument.type.getRank() == 4 &&
         (argument.name == "k_cache" || argument.name == "v_cache" ||
          argument.name == "k_pool" || argument.name == "v_pool");
}

/// A bf16 argument that the C API takes as float32 and rounds (every bf16
/// argument but a cache).
bool isBF16(const GraphArgument &argument) {
  return argument.type.getElementType().isBF16() && !isBF16Cache(argument);
}

/// The element type of an argument in C, as `view` sees it.
std::string elementType(const GraphArgument &argument, View view) {
  if (isBF16Cache(argument))
    return "uint16_t";
  if (isBF16(argument))
    return view == View::Graph   ? "uint16_t"
           : view == View::Check ? "void"
                                 : "float";
  mlir::Type element = argument.type.getElementType();
  return isMask(argument)        ? "uint8_t"
         : isInt64(argument)     ? "int64_t"
         : element.isInteger(32) ? "int32_t"
         : element.isInteger(8)  ? "int8_t"
                                 : "float";
}

/// How the header names an argument's element type.
std::string describeElementType(const GraphArgument &argument) {
  mlir::Type element = argument.type.getElementType();
  if (isMask(argument))
    return "mask (uint8_t)";
  if (isInt64(argument))
    return "int64";
  if (element.isInteger(32))
    return "int32 (int32_t)";
  if (element.isInteger(8))
    return "int8 (int8_t)";
  if (isBF16Cache(argument))
    return "bf16 bits (uint16_t)";
  return "float32";
}

/// The cache of `interface`'s graph, if it is a cache graph: it has k_cache
/// and v_cache of rank 4, both float32, both bf16 or both int8 (whose
/// scales are per-call arguments too, so no session API), and an int64
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
      !(keyType.getElementType().isF32() || keyType.getElementType().isBF16() ||
        keyType.getElementType().isInteger(8)) ||
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
  if (keyType.getElementType().isInteger(8))
    cache.element = "int8_t";
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

/// Whether the compiled code writes argument `index` in place: a cache, or
/// the codes or scales of an int8 cache (the signature's result aliases).
bool isWritten(const LibraryInterface &interface, unsigned index) {
  return llvm::is_contained(interface.signature.resultAliases,
                            std::optional<unsigned>(index));
}

/// `const float *x, const int64_t x_shape[3], ...` for the arguments that
/// `which` selects; "" if none.
std::string argumentParameters(const LibraryInterface &interface,
                               Arguments which, View view) {
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
                           bool rounded) {
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

} // namespace mha::compile
