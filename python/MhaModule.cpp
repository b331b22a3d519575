//===- MhaModule.cpp - mha._mha: compiled layers for Python ---------------===//
//
// The C++ half of the Python package (python/mha/__init__.py is the other):
// the bindings of a Layer (python/Layer.h), a graph compiled for this CPU
// and called on NumPy arrays, and of the helpers the Python half uses.
//
//===----------------------------------------------------------------------===//

#include "python/BF16Arrays.h"
#include "python/Layer.h"
#include "python/LayerGraphText.h"
#include "python/NumPyArrays.h"
#include "python/Parallel.h"

#include "llvm/Support/FormatVariadic.h"

#include <omp.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

using namespace ::mha::python;

PYBIND11_MODULE(_mha, m) {
  m.doc() = "mha's compiler and runtime (use the package mha, not this)";
  py::class_<Layer>(m, "Layer")
      .def(py::init<const std::string &, bool, const std::string &,
                    const std::string &>(),
           py::arg("source"), py::arg("is_text"), py::arg("entry"),
           py::arg("options"))
      .def("__call__", &Layer::call)
      .def("prepare", &Layer::prepare)
      .def("attention_weights", &Layer::attentionWeights)
      .def_property_readonly("arguments", &Layer::arguments)
      .def_property_readonly("bound", &Layer::boundNames)
      .def_property_readonly("updated", &Layer::updatedNames)
      .def_property_readonly("result_shape", &Layer::resultShape)
      .def_property_readonly("entry", &Layer::entry);
  m.def("layer_graph", &layerGraph);
  // A layer split by heads across MPI ranks (python/mha/parallel.py).
  registerParallel(m);
  m.def("set_num_threads", [](int threads) {
    if (threads < 0 || threads > 1024)
      throw py::value_error(llvm::formatv(
          "threads must be between 0 and 1024 (0: all cores), got {0}",
          threads));
    if (threads > 0)
      omp_set_num_threads(threads);
    else
      omp_set_num_threads(omp_get_num_procs());
  });
  m.def("get_num_threads", [] { return omp_get_max_threads(); });
  // The runtime's rounding (runtime/BFloat16.h), which mha-run, the C API
  // and a call's bf16 arguments use: a bf16 cache's rows written by the
  // caller round as the layer's own inputs do.
  m.def("to_bf16_bits", &toBF16Bits);
  // For the Python half: mha.torch's masks and a session's borrowed caches
  // get the checks and words of a call's arguments.
  m.def("check_mask_bytes", [](py::array mask, const std::string &name) {
    py::module_ numpy = py::module_::import("numpy");
    checkBoolBytes(numpy.attr("ascontiguousarray")(mask).cast<py::array>(),
                   name);
  });
  m.def("check_disjoint", [](const std::vector<std::string> &names,
                             const std::vector<py::array> &arrays) {
    checkDisjoint([&](size_t i) { return names[i]; }, arrays,
                  std::vector<bool>(arrays.size(), true));
  });
}
