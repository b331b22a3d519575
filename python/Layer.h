//===- Layer.h - mha._mha.Layer: a compiled graph for Python ----*- C++ -*-===//
//
// Private to the Python module (python/MhaModule.cpp binds it): a Layer
// loads a graph the way mha-run does (runtime/GraphLoader.h), lowers it with
// the same pipeline and defaults, JIT-compiles it and calls it on NumPy
// arrays. Layer.cpp holds the calls, LayerArguments.cpp the checks of their
// arrays, LayerAttentionWeights.cpp the second function that returns the
// attention weights.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_PYTHON_LAYER_H
#define MHA_PYTHON_LAYER_H

#include "compiler/Pipelines.h"
#include "runtime/GraphLoader.h"
#include "runtime/JitRunner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
// Every file of the module sees the same casters (pybind11: stl.h in some
// files and not in others breaks the one-definition rule).
#include <pybind11/stl.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

namespace mha::python {

namespace py = pybind11;

/// A graph compiled for this CPU, called with NumPy arrays.
class Layer {
public:
  /// Loads `source` (a path, or a graph's text when `isText`), checks the
  /// options (`key=value ...`, MhaPipelineOptions's syntax), lowers and
  /// JIT-compiles it.
  Layer(const std::string &source, bool isText, const std::string &entryName,
        const std::string &options);

  /// Binds the arrays of `kwargs` (the weights) for every later call and
  /// runs the prepare functions on them once. Copies them: the layer keeps
  /// what it was prepared with, whatever happens to the arrays later.
  void prepare(const py::kwargs &kwargs);

  /// Calls the layer: positional arguments in the graph's order, then
  /// keywords; what prepare bound fills the rest.
  py::array call(const py::args &args, const py::kwargs &kwargs);

  /// The attention weights [B, H, T, S] of the layer's one attention for
  /// the same arguments as a call, from a second compiled function
  /// (mha-extract-attention-weights, as `mha-run --dump-attention`),
  /// compiled at the first use.
  py::array attentionWeights(const py::args &args, const py::kwargs &kwargs);

  /// The arguments: (name, shape with None for `?`, dtype name).
  py::list arguments() const;

  /// The names of the arguments every call updates in place (a cache
  /// graph's k_cache and v_cache: GraphSignature::resultAliases).
  std::vector<std::string> updatedNames() const;

  /// The names prepare() bound.
  std::vector<std::string> boundNames() const;

  /// The result's declared shape, None for `?`.
  py::tuple resultShape() const;

  /// The name of the function the layer calls.
  std::string entry() { return graph.entry.getSymName().str(); }

private:
  /// A function of the layer, the lock its calls share (its preparing
  /// takes it alone) and whether it was prepared with the bound weights.
  struct Compiled {
    std::unique_ptr<runtime::CompiledFunction> function;
    std::shared_mutex mutex;
    std::atomic<bool> prepared{false};
  };

  // Layer.cpp: calling the compiled functions.

  /// A declared shape as a tuple, None for `?`.
  static py::tuple declaredShape(mlir::RankedTensorType type);

  /// Calls `compiled` on `buffers` with the GIL released. Its prepare
  /// functions run first, under the exclusive lock, once for the weights
  /// prepare() bound, or in every call that passes the weights itself.
  py::array
  run(Compiled &compiled,
      const std::vector<runtime::CompiledFunction::BufferRef> &buffers);

  /// The buffers the compiled code takes for `arrays`, in argument order.
  std::vector<runtime::CompiledFunction::BufferRef>
  describe(const std::vector<py::array> &arrays);

  /// The compiled code's result buffer as a NumPy array that frees it when
  /// it goes; a copy when the buffer is not the layer's to give.
  py::array wrapResult(runtime::CompiledFunction::ResultBuffer result);

  /// The name of argument `index`.
  const std::string &name(size_t index) const {
    return graph.signature.arguments[index].name;
  }

  /// The index of the argument called `key`, else TypeError.
  unsigned lookup(const std::string &key) const;

  // LayerArguments.cpp: the arrays of a call, checked.

  /// The arrays of one call: positional arguments fill, in the graph's
  /// order, those prepare() did not bind, then keywords; what prepare bound
  /// fills the rest. Each is checked (checkArray).
  std::vector<py::array> gather(const py::args &args, const py::kwargs &kwargs);

  /// `value` as an array the compiled code can take for argument `index`:
  /// float32 (bool for a mask) and the declared rank and static sizes, else
  /// ValueError with the tools' message. A C-contiguous, aligned array is
  /// passed as it is; another layout is copied into C order.
  py::array checkArray(size_t index, py::handle value, bool forceCopy);

  /// Zeros of the smallest shape argument `index` can take next to the
  /// arrays `bound` (null where none), for the prepare functions: its `?`
  /// sizes 1, what the graph's relations fix, or the size a bound array has
  /// in the same class. A bound x with T = 5 then gets a mask of 5 queries,
  /// not one of 1 that would not fit with it.
  py::array placeholder(size_t index, const std::vector<py::object> &bound);

  /// The arguments of a cache graph as mha-gen --kv-cache writes it (x,
  /// k_cache, v_cache updated in place, an int64 cache_lengths [B]), for
  /// checkCacheLengths; -1 where the graph has no such argument.
  void findCacheArguments();

  /// Before a call of a cache graph: every sequence's new tokens fit in
  /// the cache (0 <= cache_lengths[b] and cache_lengths[b] + T <= C). The
  /// compiled code would skip a sequence that does not fit
  /// (docs/dialect.md) and return rows of an attention over nothing; a
  /// ValueError says what is wrong instead.
  void checkCacheLengths(const std::vector<py::array> &arrays);

  /// Before a call of a paged cache graph (mha-gen --paged-kv): each
  /// sequence's rows after the call fit in its block_table row, and the
  /// entries of their pages are pages of the pools, none given to two
  /// sequences (runtime::checkPagedCall). The compiled code trusts the
  /// table; a ValueError stops a write outside the pools or into another
  /// sequence's rows.
  void checkBlockTable(const std::vector<py::array> &arrays);

  /// Checks that the arguments' shapes fit together (runtime::
  /// checkShapesFitTogether, which verifies a specialized copy of the
  /// graph) and that the result fits in memory next to the inputs, as
  /// mha-run does; the last shapes that passed are remembered, so a layer
  /// called again with the same shapes is not checked again.
  void checkFitTogether(std::vector<std::vector<int64_t>> shapes);

  /// Raises MemoryError when an array of `shape` (float32) would not fit in
  /// memory (runtime/MemoryLimit.h): the compiled code cannot survive a
  /// failed allocation, which would end the interpreter.
  static void checkMemory(llvm::ArrayRef<int64_t> shape,
                          const std::string &what, uint64_t besides = 0);

  // LayerAttentionWeights.cpp: the function that returns the weights.

  /// Adds the function that returns the attention weights, once, to a copy
  /// of the graph (mha-extract-attention-weights) whose entry is dropped:
  /// weightsModule and weightsEntry. Raises ValueError for a graph the pass
  /// refuses (not exactly one attention).
  void extractWeights();

  /// Compiles the function that returns the attention weights, once, with
  /// the layer's pipeline.
  void compileWeights();

  /// The shape of the attention weights for argument shapes `shapes` that
  /// fit together: the weights function specialized to them, each mha op
  /// given the type its operands imply (checkShapesFitTogether leaves the
  /// declared, `?` type of mha.attention_weights, which it does not need).
  std::vector<int64_t>
  weightsShape(const std::vector<std::vector<int64_t>> &shapes);

  /// Whether the graph has exactly one attention, whose scores' shape
  /// weightsShape can tell.
  bool checkOneAttention();

  /// Collects what MLIR prints about the graph (parse errors, verifier
  /// messages, failed passes) for the exceptions; declared first, so it
  /// outlives the graph whose handler writes to it.
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticsStream;
  mlir::mha::MhaPipelineOptions pipelineOptions;
  std::unique_ptr<mlir::MLIRContext> context;
  runtime::LoadedGraph graph;
  std::map<std::string, unsigned> argumentIndex;
  /// The layer, and the function returning its attention weights (compiled
  /// at the first attention_weights call, from weightsModule, whose
  /// weightsEntry is its unlowered form).
  Compiled layer, weights;
  mlir::OwningOpRef<mlir::ModuleOp> weightsModule;
  mlir::func::FuncOp weightsEntry;
  /// The arrays prepare() bound (null where it bound none), copies the
  /// layer owns; whether prepare() ran.
  std::vector<py::object> bound;
  std::atomic<bool> prepared{false};
  /// The arguments every call updates in place (resultAliases).
  std::vector<bool> updated;
  /// A cache graph's arguments (findCacheArguments), -1 where absent.
  int cacheX = -1, keyCache = -1, valueCache = -1, cacheLengths = -1;
  /// A paged cache graph's pools and block table, -1 where absent.
  int keyPool = -1, blockTable = -1;
  std::mutex shapesMutex;
  std::vector<std::vector<int64_t>> acceptedShapes;
};

} // namespace mha::python

#endif // MHA_PYTHON_LAYER_H
