//===- BF16Arrays.h - NumPy arrays rounded to bfloat16 ----------*- C++ -*-===//
//
// Private to the Python module: NumPy has no bfloat16, so a bf16 argument
// is passed as float32 and rounded here (runtime/BFloat16.h), and
// mha.to_bf16_bits gives a caller the bits of a bf16 cache's rows.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_PYTHON_BF16ARRAYS_H
#define MHA_PYTHON_BF16ARRAYS_H

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace mha::python {

namespace py = pybind11;

/// The bfloat16 bits (uint16) of the float32 C-order `array`'s elements,
/// rounded to nearest even (runtime/BFloat16.h): a call's bf16 arguments
/// and mha.to_bf16_bits.
/// The bits start on a cache line, as the compiled code reads them in place
/// (runtime/Npy.h, CacheLineAllocator: why).
py::array roundToBF16(const py::array &array);

/// mha.to_bf16_bits: the bits of a float32 array, or of a NumPy float32
/// scalar (as a scalar); anything else is refused, not converted (a float64
/// would round twice).
py::object toBF16Bits(py::handle value);

} // namespace mha::python

#endif // MHA_PYTHON_BF16ARRAYS_H
