//===- LayerGraphText.h - mha.layer(): one layer's graph text ---*- C++ -*-===//
//
// Private to the Python module: the graph text of one layer from the
// keywords of mha.layer(...), built by graphs/LayerGraph.h as mha-gen builds
// it from its options.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_PYTHON_LAYERGRAPHTEXT_H
#define MHA_PYTHON_LAYERGRAPHTEXT_H

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

namespace mha::python {

namespace py = pybind11;

/// The graph text of one layer (graphs/LayerGraph.h, what mha-gen prints):
/// the keywords are mha-gen's options spelled with underscores, None for a
/// `?` batch or sequence length; TypeError names an unknown one.
std::string layerGraph(const py::kwargs &kwargs);

} // namespace mha::python

#endif // MHA_PYTHON_LAYERGRAPHTEXT_H
