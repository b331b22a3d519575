//===- BF16Arrays.cpp - NumPy arrays rounded to bfloat16 ------------------===//

#include "python/BF16Arrays.h"

#include "runtime/BFloat16.h"
#include "runtime/Npy.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace ::mha::runtime;

namespace mha::python {

py::array roundToBF16(const py::array &array) {
  CacheLineAllocator<uint16_t> allocator;
  size_t count = std::max<size_t>(array.size(), 1);
  uint16_t *data = allocator.allocate(count);
  py::capsule owner(data, [](void *pointer) {
    CacheLineAllocator<uint16_t>().deallocate(static_cast<uint16_t *>(pointer),
                                              0);
  });
  py::array_t<uint16_t> bits(
      std::vector<py::ssize_t>(array.shape(), array.shape() + array.ndim()),
      data, owner);
  floatsToBF16Bits(static_cast<const float *>(array.data()), data,
                   array.size());
  return bits;
}

py::object toBF16Bits(py::handle value) {
  py::module_ numpy = py::module_::import("numpy");
  // A NumPy scalar rounds as a 0-d array and comes back a scalar, as
  // NumPy's own functions do; anything else that is not float32 is
  // refused, not converted (a float64 would round twice).
  bool scalar = py::isinstance(value, numpy.attr("generic"));
  py::object array = scalar ? numpy.attr("asarray")(value)
                            : py::reinterpret_borrow<py::object>(value);
  std::string expected = "to_bf16_bits: expected float32 (a NumPy array or "
                         "scalar), got ";
  if (!py::isinstance<py::array>(array))
    throw py::value_error(expected +
                          py::str(py::type::handle_of(value).attr("__name__"))
                              .cast<std::string>() +
                          " (not a NumPy array or scalar)");
  py::dtype dtype = array.cast<py::array>().dtype();
  if (!dtype.equal(py::dtype::of<float>()))
    throw py::value_error(expected + "a " + py::str(dtype).cast<std::string>() +
                          (scalar ? " NumPy scalar" : " array"));
  // asarray, not ascontiguousarray, which makes a 0-d array 1-d.
  py::array bits = roundToBF16(
      numpy.attr("asarray")(array, py::arg("order") = "C").cast<py::array>());
  return scalar ? bits[py::tuple()] : py::object(bits);
}

} // namespace mha::python
