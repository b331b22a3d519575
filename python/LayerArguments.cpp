//===- LayerArguments.cpp - The arrays of a call of a Layer ---------------===//

#include "python/BF16Arrays.h"
#include "python/ErrorMessages.h"
#include "python/Layer.h"
#include "python/NumPyArrays.h"

#include "runtime/BlockTableCheck.h"
#include "runtime/GraphSignature.h"
#include "runtime/MemoryLimit.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace ::mha::runtime;

namespace mha::python {

std::vector<py::array> Layer::gather(const py::args &args,
                                     const py::kwargs &kwargs) {
  size_t count = bound.size();
  std::vector<py::handle> given(count);
  size_t next = 0;
  for (py::handle arg : args) {
    while (next < count && bound[next])
      ++next;
    if (next == count)
      throw py::type_error(llvm::formatv(
          "the layer takes {0} arguments ({1}), {2} bound by prepare(); "
          "got {3} positional",
          count, graph.signature.listNames(), boundNames().size(),
          args.size()));
    given[next++] = arg;
  }
  for (auto [key, value] : kwargs) {
    unsigned index = lookup(py::cast<std::string>(key));
    if (given[index])
      throw py::type_error("argument '" + name(index) + "' given twice");
    given[index] = value;
  }
  std::vector<py::array> arrays(count);
  for (size_t i = 0; i < count; ++i) {
    if (given[i]) {
      if (bound[i])
        throw py::type_error("argument '" + name(i) +
                             "' was bound by prepare(); call prepare() "
                             "again to change it");
      arrays[i] = checkArray(i, given[i], /*forceCopy=*/false);
    } else if (bound[i]) {
      arrays[i] = py::reinterpret_borrow<py::array>(bound[i]);
    } else {
      throw py::type_error("missing argument '" + name(i) +
                           "' (the layer takes " + graph.signature.listNames() +
                           ")");
    }
  }
  if (llvm::is_contained(updated, true))
    checkDisjoint([&](size_t i) { return name(i); }, arrays, updated);
  return arrays;
}

py::array Layer::checkArray(size_t index, py::handle value, bool forceCopy) {
  const GraphArgument &argument = graph.signature.arguments[index];
  if (!py::isinstance<py::array>(value))
    throw py::type_error(llvm::formatv(
        "input '{0}': expected a NumPy array, got {1}", argument.name,
        py::str(py::type::handle_of(value).attr("__name__"))
            .cast<std::string>()));
  auto array = py::reinterpret_borrow<py::array>(value);
  NpyArray header;
  // A bf16 cache is updated in place, so it cannot be a rounded copy of
  // a float32 array: it is passed as its bfloat16 bits (uint16), as the
  // C API's uint16_t caches are.
  bool bf16Cache =
      updated[index] && elementTypeOf(argument) == ElementType::BF16;
  header.elementType = callerTypeOf(argument);
  py::dtype expected =
      dtypeOf(bf16Cache ? ElementType::BF16 : header.elementType);
  if (bf16Cache && !array.dtype().equal(expected))
    throw py::value_error(llvm::formatv(
        "input '{0}' (NumPy array): a bf16 cache is updated in place, so "
        "it takes the bfloat16 bits as a uint16 array (mha.to_bf16_bits "
        "rounds float32 to them); found {1}",
        argument.name, py::str(array.dtype()).cast<std::string>()));
  // Another dtype is refused, not converted: a float64 array is a
  // mistake to report, not a copy to hide.
  if (!array.dtype().equal(expected))
    throw py::value_error(llvm::formatv(
        "input '{0}' (NumPy array): expected dtype {1}, found {2}",
        argument.name, getElementTypeName(header.elementType),
        py::str(array.dtype()).cast<std::string>()));
  header.shape.assign(array.shape(), array.shape() + array.ndim());
  if (auto error = checkInput(argument, header, "NumPy array"))
    throw py::value_error(message(std::move(error)));
  bool direct = (array.flags() & py::array::c_style) &&
                (array.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_);
  // Any other bf16 argument takes a copy rounded to nearest even.
  if (elementTypeOf(argument) == ElementType::BF16 && !bf16Cache)
    return roundToBF16(direct ? array : copyToC(array));
  // The compiled code writes a cache through its buffer: a copy would
  // take the update, and the caller's array would not.
  if (updated[index]) {
    const char *why =
        !(array.flags() & py::array::c_style) ? "not C-contiguous"
        : !(array.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_)
            ? "not aligned"
        : !array.writeable() ? "not writable"
                             : nullptr;
    if (why)
      throw py::value_error(llvm::formatv(
          "input '{0}' (NumPy array): the layer updates it in place, so "
          "it must be a writable, C-contiguous, aligned {1} array; "
          "this one is {2}",
          argument.name, bf16Cache ? "uint16 (bf16 bits)" : "float32", why));
    return array;
  }
  py::array passed = forceCopy || !direct ? copyToC(array) : array;
  if (header.elementType == ElementType::Bool)
    checkBoolBytes(passed, "input '" + argument.name + "' (NumPy array)");
  return passed;
}

py::array Layer::placeholder(size_t index,
                             const std::vector<py::object> &bound) {
  const GraphArgument &argument = graph.signature.arguments[index];
  std::vector<int64_t> shape;
  if (const auto &relations = graph.signature.sizeRelations) {
    std::vector<mlir::RankedTensorType> types;
    for (const GraphArgument &a : graph.signature.arguments)
      types.push_back(a.type);
    shape = relations->pickShapes(types, 1)[index];
    for (const SizeRelations::SizeClass &sizeClass : relations->classes) {
      std::optional<int64_t> size;
      for (ArgumentDim dim : sizeClass.members)
        if (bound[dim.argument])
          size = py::reinterpret_borrow<py::array>(bound[dim.argument])
                     .shape(dim.dim);
      for (ArgumentDim dim : sizeClass.members)
        if (size && dim.argument == index)
          shape[dim.dim] = *size;
    }
  } else {
    for (int64_t size : argument.type.getShape())
      shape.push_back(mlir::ShapedType::isDynamic(size) ? 1 : size);
  }
  py::module_ numpy = py::module_::import("numpy");
  return numpy
      .attr("zeros")(py::tuple(py::cast(shape)),
                     dtypeOf(elementTypeOf(argument)))
      .cast<py::array>();
}

void Layer::findCacheArguments() {
  const GraphSignature &signature = graph.signature;
  auto find = [&](llvm::StringRef name, unsigned rank) {
    int index = signature.findArgument(name);
    if (index >= 0 && signature.arguments[index].type.getRank() != rank)
      return -1;
    return index;
  };
  cacheX = find("x", 3);
  keyCache = find("k_cache", 4);
  valueCache = find("v_cache", 4);
  cacheLengths = find("cache_lengths", 1);
  if (cacheLengths >= 0 &&
      elementTypeOf(signature.arguments[cacheLengths]) != ElementType::I64)
    cacheLengths = -1;
  keyPool = find("k_pool", 4);
  blockTable = find("block_table", 2);
  if (blockTable >= 0 &&
      elementTypeOf(signature.arguments[blockTable]) != ElementType::I32)
    blockTable = -1;
}

void Layer::checkBlockTable(const std::vector<py::array> &arrays) {
  if (cacheX < 0 || keyPool < 0 || blockTable < 0 || cacheLengths < 0)
    return;
  const py::array &table = arrays[blockTable], &pool = arrays[keyPool];
  // The pools' page counts are sizes of their own: an entry must be a page
  // of every pool the call writes (the keys', the values', any scales').
  int64_t poolPages = pool.shape(0);
  for (size_t i = 0; i < arrays.size(); ++i)
    if (updated[i])
      poolPages = std::min<int64_t>(poolPages, arrays[i].shape(0));
  PagedCall call;
  call.table = static_cast<const int32_t *>(table.data());
  call.batch = table.shape(0);
  call.perSequence = table.shape(1);
  call.poolPages = poolPages;
  call.pageSize = pool.shape(2);
  call.lengths = static_cast<const int64_t *>(arrays[cacheLengths].data());
  call.newRows = arrays[cacheX].shape(1);
  if (auto error = checkPagedCall(call))
    throw py::value_error(message(std::move(error)));
}

void Layer::checkCacheLengths(const std::vector<py::array> &arrays) {
  if (cacheX < 0 || keyCache < 0 || cacheLengths < 0)
    return;
  const py::array &x = arrays[cacheX];
  const py::array &keys = arrays[keyCache];
  int64_t capacity = keys.shape(2), tokens = x.shape(1);
  const py::array &lengths = arrays[cacheLengths];
  const int64_t *length = static_cast<const int64_t *>(lengths.data());
  for (int64_t b = 0; b < lengths.shape(0); ++b) {
    if (length[b] < 0 || length[b] > capacity)
      throw py::value_error(llvm::formatv(
          "cache_lengths: sequence {0} holds {1} tokens; a length must be "
          "between 0 and the cache's capacity of {2} tokens (k_cache {3})",
          b, length[b], capacity, formatShape(shapesOf({keys})[0])));
    if (tokens > capacity - length[b])
      throw py::value_error(llvm::formatv(
          "cache_lengths: sequence {0} would reach {1} + {2} = {3} tokens, "
          "past the cache's capacity of {4} (k_cache {5}); at most {6} new "
          "token(s) fit",
          b, length[b], tokens, length[b] + tokens, capacity,
          formatShape(shapesOf({keys})[0]), capacity - length[b]));
  }
}

void Layer::checkFitTogether(std::vector<std::vector<int64_t>> shapes) {
  {
    std::lock_guard<std::mutex> lock(shapesMutex);
    if (shapes == acceptedShapes)
      return;
  }
  size_t logged = diagnostics.size();
  mlir::RankedTensorType resultType;
  if (auto error = checkShapesFitTogether(graph.entry, shapes, &resultType))
    throw py::value_error(
        withDiagnostics(message(std::move(error)), diagnostics, logged));
  if (resultType && resultType.hasStaticShape()) {
    uint64_t inputBytes = 0;
    for (size_t i = 0; i < shapes.size(); ++i)
      inputBytes +=
          getByteCount(shapes[i], elementTypeOf(graph.signature.arguments[i]))
              .value_or(0);
    std::string what = "the output of shape " +
                       formatShape(resultType.getShape()) + " float32";
    checkMemory(resultType.getShape(), what);
    checkMemory(resultType.getShape(), what, inputBytes);
  }
  // The decomposed path holds every score [B, H, T, S] at once (the
  // fused one a tile of them; `auto` decomposes only T*S < 16).
  if (pipelineOptions.attention == mlir::mha::AttentionMode::Decomposed &&
      checkOneAttention()) {
    std::vector<int64_t> scores = weightsShape(shapes);
    checkMemory(scores, "the attention scores of shape " + formatShape(scores) +
                            " float32 (attention=decomposed)");
  }
  std::lock_guard<std::mutex> lock(shapesMutex);
  acceptedShapes = std::move(shapes);
}

void Layer::checkMemory(llvm::ArrayRef<int64_t> shape, const std::string &what,
                        uint64_t besides) {
  std::optional<int64_t> bytes = getByteCount(shape, ElementType::F32);
  llvm::Error error =
      !bytes ? llvm::createStringError(what + ": its byte count overflows")
             : checkMemoryLimit(*bytes + besides,
                                besides ? what + " and the inputs together"
                                        : what);
  if (error) {
    PyErr_SetString(PyExc_MemoryError, message(std::move(error)).c_str());
    throw py::error_already_set();
  }
}

} // namespace mha::python
