//===- NumPyArrays.cpp - NumPy arrays for the compiled code ---------------===//

#include "python/NumPyArrays.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace ::mha::runtime;

namespace mha::python {

ElementType elementTypeOf(const GraphArgument &argument) {
  // readSignature refuses the others.
  return getStoredElementType(argument.type.getElementType())
      .value_or(ElementType::Bool);
}

ElementType callerTypeOf(const GraphArgument &argument) {
  ElementType type = elementTypeOf(argument);
  return type == ElementType::BF16 ? ElementType::F32 : type;
}

py::dtype dtypeOf(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return py::dtype::of<float>();
  case ElementType::BF16:
    return py::dtype::of<uint16_t>();
  case ElementType::I64:
    return py::dtype::of<int64_t>();
  case ElementType::I8:
    return py::dtype::of<int8_t>();
  case ElementType::I32:
    return py::dtype::of<int32_t>();
  case ElementType::Bool:
    break;
  }
  return py::dtype::of<bool>();
}

void checkBoolBytes(const py::array &array, const std::string &what) {
  const uint8_t *bytes = static_cast<const uint8_t *>(array.data());
  const uint8_t *end = bytes + array.size();
  const uint8_t *bad =
      std::find_if(bytes, end, [](uint8_t byte) { return byte > 1; });
  if (bad != end)
    throw py::value_error(
        llvm::formatv("{0}: bool element {1} is the byte {2} (expected 0 or 1)",
                      what, bad - bytes, unsigned(*bad)));
}

/// The bytes [first, last) that `array`'s elements span, whatever its
/// strides (NumPy's byte_bounds).
static std::pair<uintptr_t, uintptr_t> byteBounds(const py::array &array) {
  uintptr_t first = reinterpret_cast<uintptr_t>(array.data()), last = first;
  if (array.size() == 0)
    return {first, first};
  for (py::ssize_t dim = 0; dim < array.ndim(); ++dim) {
    py::ssize_t extent = array.strides(dim) * (array.shape(dim) - 1);
    (extent < 0 ? first : last) += extent;
  }
  return {first, last + array.itemsize()};
}

void checkDisjoint(llvm::function_ref<std::string(size_t)> name,
                   const std::vector<py::array> &arrays,
                   const std::vector<bool> &written) {
  for (size_t i = 0; i < arrays.size(); ++i)
    for (size_t j = i + 1; j < arrays.size(); ++j) {
      auto [firstI, lastI] = byteBounds(arrays[i]);
      auto [firstJ, lastJ] = byteBounds(arrays[j]);
      if ((written[i] || written[j]) && firstI < lastJ && firstJ < lastI)
        throw py::value_error(name(i) + " and " + name(j) +
                              " overlap in memory: an argument the call "
                              "writes must not share bytes with another");
    }
}

py::array copyToC(const py::array &array) {
  py::module_ numpy = py::module_::import("numpy");
  return numpy
      .attr("array")(array, py::arg("order") = "C", py::arg("copy") = true)
      .cast<py::array>();
}

std::vector<std::vector<int64_t>>
shapesOf(const std::vector<py::array> &arrays) {
  std::vector<std::vector<int64_t>> shapes;
  shapes.reserve(arrays.size());
  for (const py::array &array : arrays)
    shapes.emplace_back(array.shape(), array.shape() + array.ndim());
  return shapes;
}

} // namespace mha::python
