//===- NumPyArrays.h - NumPy arrays for the compiled code -------*- C++ -*-===//
//
// Private to the Python module: the checks and conversions between the NumPy
// arrays a caller passes and the buffers the compiled code takes, in the
// words of mha-run and the C library.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_PYTHON_NUMPYARRAYS_H
#define MHA_PYTHON_NUMPYARRAYS_H

#include "runtime/GraphSignature.h"
#include "runtime/Npy.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mha::python {

namespace py = pybind11;

/// The element type of the buffer the compiled code takes for `argument`:
/// f32, bf16, i1 (a mask) or i64 (a cache graph's cache_lengths).
runtime::ElementType elementTypeOf(const runtime::GraphArgument &argument);

/// The element type of the NumPy arrays a caller passes for `argument`:
/// float32 for a bf16 argument too, since NumPy has no bfloat16 (the layer
/// rounds them, as mha-run does).
runtime::ElementType callerTypeOf(const runtime::GraphArgument &argument);

/// The NumPy dtype of a buffer of an element type (uint16 holds the bits of
/// a bfloat16).
py::dtype dtypeOf(runtime::ElementType type);

/// Refuses a bool array (C order) holding a byte other than 0 or 1, as
/// mha-run's .npy reader and the C library do: NumPy takes any non-zero
/// byte as True, the compiled code reads a mask byte's low bit, so a 2
/// would mean "masked" to it and "may attend" to the caller.
void checkBoolBytes(const py::array &array, const std::string &what);

/// Refuses two of `arrays` that share a byte where one of them is
/// `written` in place: the layer would read values it wrote (keys over
/// values, a cache over x). Byte ranges, not the arrays' identity: a view
/// shifted by one element overlaps too. The C library's words.
/// `name(i)` is only asked for the message.
void checkDisjoint(llvm::function_ref<std::string(size_t)> name,
                   const std::vector<py::array> &arrays,
                   const std::vector<bool> &written);

/// A C-order copy of `array`.
py::array copyToC(const py::array &array);

/// The shapes of `arrays`.
std::vector<std::vector<int64_t>>
shapesOf(const std::vector<py::array> &arrays);

} // namespace mha::python

#endif // MHA_PYTHON_NUMPYARRAYS_H
