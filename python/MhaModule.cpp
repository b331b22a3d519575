//===- MhaModule.cpp - mha._mha: compiled layers for Python ---------------===//
//
// The C++ half of the Python package (python/mha/__init__.py is the other):
// a Layer loads a graph the way mha-run does (runtime/GraphLoader.h), lowers
// it with the same pipeline and defaults, JIT-compiles it and calls it on
// NumPy arrays. float32 arrays in C order go to the compiled code as they
// are, and the result buffer the compiled code returns becomes the NumPy
// array that comes out: no copies on the way in or out. The attention
// weights come from a second function compiled on demand, as for mha-run
// --dump-attention.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/Pipelines.h"
#include "compiler/Registration.h"
#include "dialects/MhaDialect.h"
#include "dialects/MhaOps.h"
#include "runtime/BFloat16.h"
#include "runtime/GraphLoader.h"
#include "runtime/GraphSignature.h"
#include "runtime/JitRunner.h"
#include "runtime/MemoryLimit.h"
#include "tools/mha-gen/LayerGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <omp.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <shared_mutex>

namespace py = pybind11;
using namespace ::mha::runtime;

#ifndef MHA_LIBOMP_PATH
#error "MHA_LIBOMP_PATH: the compiled code's libomp (python/CMakeLists.txt)"
#endif

namespace {

/// The message of `error`, consumed.
std::string message(llvm::Error error) {
  return llvm::toString(std::move(error));
}

/// `what`, then the diagnostics printed since `from` (file, line, column),
/// which say what `what` only summarizes.
std::string withDiagnostics(const std::string &what, const std::string &log,
                            size_t from) {
  llvm::StringRef printed = llvm::StringRef(log).substr(from).trim();
  if (printed.empty())
    return what;
  return what + "\n" + printed.str();
}

/// The element type of the buffer the compiled code takes for `argument`:
/// f32, bf16, i1 (a mask) or i64 (a cache graph's cache_lengths).
ElementType elementTypeOf(const GraphArgument &argument) {
  mlir::Type element = argument.type.getElementType();
  if (element.isF32())
    return ElementType::F32;
  if (element.isBF16())
    return ElementType::BF16;
  if (element.isInteger(64))
    return ElementType::I64;
  return ElementType::Bool;
}

/// The element type of the NumPy arrays a caller passes for `argument`:
/// float32 for a bf16 argument too, since NumPy has no bfloat16 (the layer
/// rounds them, as mha-run does).
ElementType callerTypeOf(const GraphArgument &argument) {
  ElementType type = elementTypeOf(argument);
  return type == ElementType::BF16 ? ElementType::F32 : type;
}

/// The NumPy dtype of a buffer of an element type (uint16 holds the bits of
/// a bfloat16).
py::dtype dtypeOf(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return py::dtype::of<float>();
  case ElementType::BF16:
    return py::dtype::of<uint16_t>();
  case ElementType::I64:
    return py::dtype::of<int64_t>();
  case ElementType::Bool:
    break;
  }
  return py::dtype::of<bool>();
}

/// Refuses a bool array (C order) holding a byte other than 0 or 1, as
/// mha-run's .npy reader and the C library do: NumPy takes any non-zero
/// byte as True, the compiled code reads a mask byte's low bit, so a 2
/// would mean "masked" to it and "may attend" to the caller.
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
std::pair<uintptr_t, uintptr_t> byteBounds(const py::array &array) {
  uintptr_t first = reinterpret_cast<uintptr_t>(array.data()), last = first;
  if (array.size() == 0)
    return {first, first};
  for (py::ssize_t dim = 0; dim < array.ndim(); ++dim) {
    py::ssize_t extent = array.strides(dim) * (array.shape(dim) - 1);
    (extent < 0 ? first : last) += extent;
  }
  return {first, last + array.itemsize()};
}

/// Refuses two of `arrays` that share a byte where one of them is
/// `written` in place: the layer would read values it wrote (keys over
/// values, a cache over x). Byte ranges, not the arrays' identity: a view
/// shifted by one element overlaps too. The C library's words.
/// `name(i)` is only asked for the message.
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

/// The bfloat16 bits (uint16) of the float32 C-order `array`'s elements,
/// rounded to nearest even (runtime/BFloat16.h): a call's bf16 arguments
/// and mha.to_bf16_bits.
/// The bits start on a cache line, as the compiled code reads them in place
/// (runtime/Npy.h, CacheLineAllocator: why).
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

/// A graph compiled for this CPU, called with NumPy arrays.
class Layer {
public:
  /// Loads `source` (a path, or a graph's text when `isText`), checks the
  /// options (`key=value ...`, MhaPipelineOptions's syntax), lowers and
  /// JIT-compiles it.
  Layer(const std::string &source, bool isText, const std::string &entryName,
        const std::string &options)
      : diagnosticsStream(diagnostics) {
    // The options first, as mha-run does: a bad one is a usage error.
    std::string parseErrors;
    llvm::raw_string_ostream parseStream(parseErrors);
    if (failed(pipelineOptions.parseFromString(options, parseStream))) {
      // llvm::cl prints a bad value's message to stderr itself.
      std::string why = llvm::StringRef(parseErrors).trim().str();
      throw py::value_error(
          "bad pipeline options '" + options +
          "': " + (why.empty() ? "a value the option does not take" : why));
    }
    if (auto error = pipelineOptions.validate())
      throw py::value_error(message(std::move(error)));

    mlir::DialectRegistry registry;
    mlir::mha::registerMhaDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(registry);
    context->loadAllAvailableDialects();
    // An exception says where in the graph, not the whole op again.
    context->printOpOnDiagnostic(false);

    std::unique_ptr<llvm::MemoryBuffer> buffer;
    if (isText) {
      buffer = llvm::MemoryBuffer::getMemBufferCopy(source, "<graph text>");
    } else {
      auto read = readGraphFile(source);
      if (!read)
        throw py::value_error(llvm::formatv("cannot read graph '{0}': {1}",
                                            source, message(read.takeError())));
      buffer = std::move(*read);
    }
    auto loaded = loadGraphBuffer(std::move(buffer), entryName, *context,
                                  diagnosticsStream);
    if (!loaded)
      throw py::value_error(
          withDiagnostics(message(loaded.takeError()), diagnostics, 0));
    graph = std::move(*loaded);
    for (const GraphArgument &argument : graph.signature.arguments)
      argumentIndex[argument.name] = argumentIndex.size();
    updated.assign(graph.signature.arguments.size(), false);
    for (std::optional<unsigned> alias : graph.signature.resultAliases)
      if (alias)
        updated[*alias] = true;
    findCacheArguments();

    // Lower a copy with mha-run's pipeline and JIT-compile it.
    size_t logged = diagnostics.size();
    mlir::OwningOpRef<mlir::ModuleOp> lowered = graph.module->clone();
    mlir::PassManager pm(context.get());
    mlir::mha::buildMhaToLLVMPipeline(pm, pipelineOptions);
    if (failed(pm.run(*lowered)))
      throw std::runtime_error(
          withDiagnostics("lowering the graph failed", diagnostics, logged));
    llvm::StringRef libomp = MHA_LIBOMP_PATH;
    auto compiled =
        CompiledFunction::create(*lowered, graph.entry.getSymName(),
                                 graph.signature.result.getRank(), {libomp});
    if (!compiled)
      throw std::runtime_error("JIT compilation failed: " +
                               message(compiled.takeError()));
    layer.function = std::move(*compiled);
    bound.resize(graph.signature.arguments.size());
  }

  /// Binds the arrays of `kwargs` (the weights) for every later call and
  /// runs the prepare functions on them once. Copies them: the layer keeps
  /// what it was prepared with, whatever happens to the arrays later.
  void prepare(const py::kwargs &kwargs) {
    std::vector<py::object> given(bound.size());
    for (auto [key, value] : kwargs) {
      unsigned index = lookup(py::cast<std::string>(key));
      // A copy of a cache would be updated instead of the caller's.
      if (updated[index])
        throw py::type_error(
            "argument '" + name(index) +
            "' is updated in place by every call: pass it to each call (or "
            "use layer.session()), not to prepare()");
      given[index] = py::reinterpret_borrow<py::object>(value);
    }
    std::vector<py::object> snapshot(bound.size());
    for (size_t i = 0; i < given.size(); ++i)
      if (given[i])
        snapshot[i] = checkArray(i, given[i], /*forceCopy=*/true);
    // Prepare functions read only the weights; the activations they are
    // also passed (x, kv, mask) get zeros of the smallest fitting shape.
    std::vector<py::array> arrays;
    for (size_t i = 0; i < snapshot.size(); ++i)
      arrays.push_back(snapshot[i]
                           ? py::reinterpret_borrow<py::array>(snapshot[i])
                           : placeholder(i, snapshot));
    checkFitTogether(shapesOf(arrays));
    std::vector<CompiledFunction::BufferRef> buffers = describe(arrays);
    llvm::Expected<unsigned> count = 0u;
    {
      // The GIL first, then the lock: a call holding the lock needs the
      // GIL back only after it let the lock go.
      py::gil_scoped_release release;
      std::unique_lock<std::shared_mutex> lock(layer.mutex);
      count = layer.function->prepareBuffers(buffers);
      // The weights function, if compiled, prepares with these weights
      // when it is next called.
      if (weights.function) {
        std::unique_lock<std::shared_mutex> weightsLock(weights.mutex);
        weights.prepared = false;
      }
    }
    if (!count)
      throw std::runtime_error(message(count.takeError()));
    bound = std::move(snapshot);
    layer.prepared = true;
    prepared = true;
  }

  /// Calls the layer: positional arguments in the graph's order, then
  /// keywords; what prepare bound fills the rest.
  py::array call(const py::args &args, const py::kwargs &kwargs) {
    std::vector<py::array> arrays = gather(args, kwargs);
    checkFitTogether(shapesOf(arrays));
    checkCacheLengths(arrays);
    return run(layer, describe(arrays));
  }

  /// The attention weights [B, H, T, S] of the layer's one attention for
  /// the same arguments as a call, from a second compiled function
  /// (mha-extract-attention-weights, as `mha-run --dump-attention`),
  /// compiled at the first use.
  py::array attentionWeights(const py::args &args, const py::kwargs &kwargs) {
    std::vector<py::array> arrays = gather(args, kwargs);
    std::vector<std::vector<int64_t>> shapes = shapesOf(arrays);
    checkFitTogether(shapes);
    checkCacheLengths(arrays);
    compileWeights();
    std::vector<int64_t> shape = weightsShape(shapes);
    checkMemory(shape, "the attention weights of shape " + formatShape(shape) +
                           " float32");
    return run(weights, describe(arrays));
  }

  /// The arguments: (name, shape with None for `?`, dtype name).
  py::list arguments() const {
    py::list list;
    for (const GraphArgument &argument : graph.signature.arguments)
      list.append(
          py::make_tuple(argument.name, declaredShape(argument.type),
                         getElementTypeName(elementTypeOf(argument)).str()));
    return list;
  }

  /// The names of the arguments every call updates in place (a cache
  /// graph's k_cache and v_cache: GraphSignature::resultAliases).
  std::vector<std::string> updatedNames() const {
    std::vector<std::string> names;
    for (size_t i = 0; i < updated.size(); ++i)
      if (updated[i])
        names.push_back(name(i));
    return names;
  }

  /// The names prepare() bound.
  std::vector<std::string> boundNames() const {
    std::vector<std::string> names;
    for (size_t i = 0; i < bound.size(); ++i)
      if (bound[i])
        names.push_back(name(i));
    return names;
  }

  py::tuple resultShape() const {
    return declaredShape(graph.signature.result);
  }

  std::string entry() { return graph.entry.getSymName().str(); }

private:
  static py::tuple declaredShape(mlir::RankedTensorType type) {
    py::list shape;
    for (int64_t size : type.getShape())
      shape.append(mlir::ShapedType::isDynamic(size)
                       ? py::object(py::none())
                       : py::object(py::int_(size)));
    return py::tuple(shape);
  }

  /// The arrays of one call: positional arguments fill, in the graph's
  /// order, those prepare() did not bind, then keywords; what prepare bound
  /// fills the rest. Each is checked (checkArray).
  std::vector<py::array> gather(const py::args &args,
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
                             "' (the layer takes " +
                             graph.signature.listNames() + ")");
      }
    }
    if (llvm::is_contained(updated, true))
      checkDisjoint([&](size_t i) { return name(i); }, arrays, updated);
    return arrays;
  }

  static std::vector<std::vector<int64_t>>
  shapesOf(const std::vector<py::array> &arrays) {
    std::vector<std::vector<int64_t>> shapes;
    shapes.reserve(arrays.size());
    for (const py::array &array : arrays)
      shapes.emplace_back(array.shape(), array.shape() + array.ndim());
    return shapes;
  }

  /// A function of the layer, the lock its calls share (its preparing
  /// takes it alone) and whether it was prepared with the bound weights.
  struct Compiled {
    std::unique_ptr<CompiledFunction> function;
    std::shared_mutex mutex;
    std::atomic<bool> prepared{false};
  };

  /// Calls `compiled` on `buffers` with the GIL released. Its prepare
  /// functions run first, under the exclusive lock, once for the weights
  /// prepare() bound, or in every call that passes the weights itself.
  py::array run(Compiled &compiled,
                const std::vector<CompiledFunction::BufferRef> &buffers) {
    llvm::Expected<CompiledFunction::ResultBuffer> result =
        CompiledFunction::ResultBuffer();
    {
      // The GIL first, then the lock (see prepare).
      py::gil_scoped_release release;
      std::shared_lock<std::shared_mutex> shared(compiled.mutex,
                                                 std::defer_lock);
      std::unique_lock<std::shared_mutex> exclusive(compiled.mutex,
                                                    std::defer_lock);
      if (!pipelineOptions.prepareWeights || (prepared && compiled.prepared)) {
        shared.lock();
      } else {
        exclusive.lock();
        if (!prepared || !compiled.prepared) {
          bool once = prepared;
          if (auto count = compiled.function->prepareBuffers(buffers); !count)
            result = count.takeError();
          else if (once)
            compiled.prepared = true;
        }
      }
      if (result)
        result = compiled.function->callBuffers(buffers);
    }
    if (!result)
      throw std::runtime_error(message(result.takeError()));
    return wrapResult(std::move(*result));
  }

  /// Raises MemoryError when an array of `shape` (float32) would not fit in
  /// memory (runtime/MemoryLimit.h): the compiled code cannot survive a
  /// failed allocation, which would end the interpreter.
  static void checkMemory(llvm::ArrayRef<int64_t> shape,
                          const std::string &what, uint64_t besides = 0) {
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

  /// Adds the function that returns the attention weights, once, to a copy
  /// of the graph (mha-extract-attention-weights) whose entry is dropped:
  /// weightsModule and weightsEntry. Raises ValueError for a graph the pass
  /// refuses (not exactly one attention).
  void extractWeights() {
    if (weightsModule)
      return;
    size_t logged = diagnostics.size();
    std::string entryName = graph.entry.getSymName().str();
    mlir::OwningOpRef<mlir::ModuleOp> extracted = graph.module->clone();
    mlir::PassManager extract(context.get());
    extract.addPass(mlir::mha::createMhaExtractAttentionWeights({entryName}));
    if (failed(extract.run(*extracted)))
      throw py::value_error(withDiagnostics(
          "cannot compute the attention weights of @" + entryName, diagnostics,
          logged));
    // Only the weights are compiled from it; the layer is compiled already.
    if (auto layerFunction =
            extracted->lookupSymbol<mlir::func::FuncOp>(entryName))
      layerFunction.erase();
    weightsEntry = extracted->lookupSymbol<mlir::func::FuncOp>(
        mlir::mha::getAttentionWeightsFunctionName(entryName));
    weightsModule = std::move(extracted);
  }

  /// Compiles the function that returns the attention weights, once, with
  /// the layer's pipeline.
  void compileWeights() {
    if (weights.function)
      return;
    extractWeights();
    size_t logged = diagnostics.size();
    mlir::OwningOpRef<mlir::ModuleOp> lowered = weightsModule->clone();
    mlir::PassManager pm(context.get());
    mlir::mha::buildMhaToLLVMPipeline(pm, pipelineOptions);
    if (failed(pm.run(*lowered)))
      throw std::runtime_error(withDiagnostics(
          "lowering the attention weights failed", diagnostics, logged));
    llvm::StringRef libomp = MHA_LIBOMP_PATH;
    auto compiled = CompiledFunction::create(
        *lowered, weightsEntry.getSymName(), /*rank=*/4, {libomp});
    if (!compiled)
      throw std::runtime_error("JIT compilation failed: " +
                               message(compiled.takeError()));
    weights.function = std::move(*compiled);
  }

  /// The shape of the attention weights for argument shapes `shapes` that
  /// fit together: the weights function specialized to them, each mha op
  /// given the type its operands imply (checkShapesFitTogether leaves the
  /// declared, `?` type of mha.attention_weights, which it does not need).
  std::vector<int64_t>
  weightsShape(const std::vector<std::vector<int64_t>> &shapes) {
    mlir::OwningOpRef<mlir::func::FuncOp> copy = weightsEntry.clone();
    mlir::Block &body = copy->getBody().front();
    for (auto [argument, shape] : llvm::zip(body.getArguments(), shapes))
      argument.setType(
          mlir::cast<mlir::RankedTensorType>(argument.getType()).clone(shape));
    mlir::Value result;
    for (mlir::Operation &op : body) {
      if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
        result = ret.getOperand(0);
        break;
      }
      mlir::RankedTensorType refined =
          llvm::TypeSwitch<mlir::Operation *, mlir::RankedTensorType>(&op)
              .Case<mlir::mha::ProjectOp, mlir::mha::SplitHeadsOp,
                    mlir::mha::SdpaOp, mlir::mha::ConcatHeadsOp,
                    mlir::mha::OutputProjectOp, mlir::mha::AttentionOp,
                    mlir::mha::AttentionWeightsOp>(
                  [](auto op) { return op.inferResultType(); })
              .Default([](mlir::Operation *op) {
                // An elementwise op (a bf16 layer's arith.extf of its
                // inputs) has its operand's shape.
                if (op->hasTrait<mlir::OpTrait::Elementwise>() &&
                    op->getNumOperands() == 1 && op->getNumResults() == 1)
                  if (auto from = mlir::dyn_cast<mlir::RankedTensorType>(
                          op->getOperand(0).getType()))
                    return from.clone(
                        mlir::getElementTypeOrSelf(op->getResult(0).getType()));
                return mlir::RankedTensorType();
              });
      if (refined)
        op.getResult(0).setType(refined);
    }
    auto type = mlir::cast<mlir::RankedTensorType>(result.getType());
    if (!type.hasStaticShape())
      throw std::runtime_error("the attention weights have no static shape "
                               "for these inputs");
    return type.getShape().vec();
  }

  /// The arguments of a cache graph as mha-gen --kv-cache writes it (x,
  /// k_cache, v_cache updated in place, an int64 cache_lengths [B]), for
  /// checkCacheLengths; -1 where the graph has no such argument.
  void findCacheArguments() {
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
  }

  /// Before a call of a cache graph: every sequence's new tokens fit in
  /// the cache (0 <= cache_lengths[b] and cache_lengths[b] + T <= C). The
  /// compiled code would skip a sequence that does not fit
  /// (docs/dialect.md) and return rows of an attention over nothing; a
  /// ValueError says what is wrong instead.
  void checkCacheLengths(const std::vector<py::array> &arrays) {
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

  const std::string &name(size_t index) const {
    return graph.signature.arguments[index].name;
  }

  unsigned lookup(const std::string &key) const {
    auto found = argumentIndex.find(key);
    if (found == argumentIndex.end())
      throw py::type_error("the layer has no argument '" + key +
                           "' (it takes " + graph.signature.listNames() + ")");
    return found->second;
  }

  /// `value` as an array the compiled code can take for argument `index`:
  /// float32 (bool for a mask) and the declared rank and static sizes, else
  /// ValueError with the tools' message. A C-contiguous, aligned array is
  /// passed as it is; another layout is copied into C order.
  py::array checkArray(size_t index, py::handle value, bool forceCopy) {
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

  /// A C-order copy of `array`.
  static py::array copyToC(const py::array &array) {
    py::module_ numpy = py::module_::import("numpy");
    return numpy
        .attr("array")(array, py::arg("order") = "C", py::arg("copy") = true)
        .cast<py::array>();
  }

  /// Zeros of the smallest shape argument `index` can take next to the
  /// arrays `bound` (null where none), for the prepare functions: its `?`
  /// sizes 1, what the graph's relations fix, or the size a bound array has
  /// in the same class. A bound x with T = 5 then gets a mask of 5 queries,
  /// not one of 1 that would not fit with it.
  py::array placeholder(size_t index, const std::vector<py::object> &bound) {
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

  /// Whether the graph has exactly one attention, whose scores' shape
  /// weightsShape can tell.
  bool checkOneAttention() {
    int count = 0;
    graph.entry.walk([&](mlir::Operation *op) {
      count += mlir::isa<mlir::mha::AttentionOp, mlir::mha::SdpaOp>(op);
    });
    if (count != 1)
      return false;
    extractWeights();
    return true;
  }

  /// Checks that the arguments' shapes fit together (runtime::
  /// checkShapesFitTogether, which verifies a specialized copy of the
  /// graph) and that the result fits in memory next to the inputs, as
  /// mha-run does; the last shapes that passed are remembered, so a layer
  /// called again with the same shapes is not checked again.
  void checkFitTogether(std::vector<std::vector<int64_t>> shapes) {
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
      checkMemory(scores, "the attention scores of shape " +
                              formatShape(scores) +
                              " float32 (attention=decomposed)");
    }
    std::lock_guard<std::mutex> lock(shapesMutex);
    acceptedShapes = std::move(shapes);
  }

  std::vector<CompiledFunction::BufferRef>
  describe(const std::vector<py::array> &arrays) {
    std::vector<CompiledFunction::BufferRef> buffers;
    for (size_t i = 0; i < arrays.size(); ++i) {
      const py::array &array = arrays[i];
      static_assert(sizeof(py::ssize_t) == sizeof(int64_t));
      buffers.push_back(
          {array.data(),
           llvm::ArrayRef<int64_t>(
               reinterpret_cast<const int64_t *>(array.shape()), array.ndim()),
           elementTypeOf(graph.signature.arguments[i])});
    }
    return buffers;
  }

  /// The compiled code's result buffer as a NumPy array that frees it when
  /// it goes; a copy when the buffer is not the layer's to give.
  py::array wrapResult(CompiledFunction::ResultBuffer result) {
    std::vector<py::ssize_t> strides;
    for (int64_t stride : result.strides)
      strides.push_back(stride * sizeof(float));
    std::vector<py::ssize_t> shape(result.shape.begin(), result.shape.end());
    if (!result.owned)
      return copyToC(py::array_t<float>(shape, strides, result.data));
    py::capsule owner(result.allocated, [](void *allocated) {
      CompiledFunction::releaseResult(allocated);
    });
    return py::array_t<float>(shape, strides, result.data, owner);
  }

  /// Collects what MLIR prints about the graph (parse errors, verifier
  /// messages, failed passes) for the exceptions; declared first, so it
  /// outlives the graph whose handler writes to it.
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticsStream;
  mlir::mha::MhaPipelineOptions pipelineOptions;
  std::unique_ptr<mlir::MLIRContext> context;
  LoadedGraph graph;
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
  std::mutex shapesMutex;
  std::vector<std::vector<int64_t>> acceptedShapes;
};

/// The graph text of one layer (LayerGraph.h, what mha-gen prints).
std::string layerGraph(const py::kwargs &kwargs) {
  ::mha::tools::LayerOptions o;
  auto size = [&](const char *key, std::optional<int64_t> &field) {
    if (kwargs.contains(key) && !kwargs[key].is_none())
      field = kwargs[key].cast<int64_t>();
  };
  auto flag = [&](const char *key, bool &field) {
    if (kwargs.contains(key))
      field = kwargs[key].cast<bool>();
  };
  static const char *known[] = {"batch",
                                "seq",
                                "kv_seq",
                                "d_model",
                                "kv_dim",
                                "heads",
                                "kv_heads",
                                "head_dim",
                                "value_dim",
                                "out_dim",
                                "cross",
                                "causal",
                                "mask",
                                "mask_broadcast",
                                "bias",
                                "split_first",
                                "causal_bottom_right",
                                "kv_cache",
                                "dtype"};
  for (auto [key, value] : kwargs) {
    std::string name = py::cast<std::string>(key);
    if (llvm::find(known, name) == std::end(known))
      throw py::type_error("mha.layer() has no option '" + name + "'");
  }
  size("batch", o.batch);
  size("seq", o.seqLen);
  size("kv_seq", o.kvSeqLen);
  size("d_model", o.modelDim);
  size("kv_dim", o.kvDim);
  size("heads", o.numHeads);
  size("kv_heads", o.numKvHeads);
  size("head_dim", o.headDim);
  size("value_dim", o.valueDim);
  size("out_dim", o.outDim);
  size("kv_cache", o.kvCache);
  flag("cross", o.cross);
  flag("causal", o.causal);
  flag("causal_bottom_right", o.causalBottomRight);
  flag("mask", o.mask);
  flag("mask_broadcast", o.maskBroadcast);
  flag("bias", o.bias);
  flag("split_first", o.splitFirst);
  // mha-gen's --dtype: "bf16" (or "bfloat16") for bf16 inputs, weights
  // and biases, computed in float32.
  if (kwargs.contains("dtype")) {
    std::string dtype = py::str(kwargs["dtype"]).cast<std::string>();
    if (dtype != "f32" && dtype != "float32" && dtype != "bf16" &&
        dtype != "bfloat16")
      throw py::value_error("dtype must be 'f32' or 'bf16', got '" + dtype +
                            "'");
    o.bf16 = dtype == "bf16" || dtype == "bfloat16";
  }
  // None is `?`: batch and seq default to it here.
  o.dynamicBatch = !kwargs.contains("batch") || kwargs["batch"].is_none();
  o.dynamicSeq = !kwargs.contains("seq") || kwargs["seq"].is_none();
  o.dynamicKvSeq = !kwargs.contains("kv_seq") || kwargs["kv_seq"].is_none();
  auto config = ::mha::tools::resolveLayerConfig(o, [](llvm::StringRef name) {
    std::string spelled = name.str();
    std::replace(spelled.begin(), spelled.end(), '-', '_');
    return spelled;
  });
  if (!config)
    throw py::value_error(message(config.takeError()));
  mlir::MLIRContext context;
  context.loadDialect<mlir::mha::MhaDialect, mlir::func::FuncDialect>();
  std::string log;
  llvm::raw_string_ostream logStream(log);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      ::mha::tools::buildLayerGraph(context, *config);
  if (failed(mlir::verify(*module)))
    throw py::value_error("the generated graph does not verify");
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  os << "\n";
  return text;
}

} // namespace

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
  m.def("to_bf16_bits", [](py::handle value) -> py::object {
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
      throw py::value_error(expected + "a " +
                            py::str(dtype).cast<std::string>() +
                            (scalar ? " NumPy scalar" : " array"));
    // asarray, not ascontiguousarray, which makes a 0-d array 1-d.
    py::array bits = roundToBF16(
        numpy.attr("asarray")(array, py::arg("order") = "C").cast<py::array>());
    return scalar ? bits[py::tuple()] : py::object(bits);
  });
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
