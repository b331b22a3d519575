//===- Layer.cpp - mha._mha.Layer: a compiled graph for Python ------------===//
//
// float32 arrays in C order go to the compiled code as they are, and the
// result buffer the compiled code returns becomes the NumPy array that comes
// out: no copies on the way in or out.
//
//===----------------------------------------------------------------------===//

#include "python/Layer.h"
#include "python/ErrorMessages.h"
#include "python/NumPyArrays.h"

#include "compiler/Registration.h"
#include "dialects/MhaDialect.h"
#include "runtime/AMXPermission.h"
#include "runtime/GraphSignature.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#ifndef MHA_LIBOMP_PATH
#error "MHA_LIBOMP_PATH: the compiled code's libomp (python/CMakeLists.txt)"
#endif

using namespace ::mha::runtime;

namespace mha::python {

Layer::Layer(const std::string &source, bool isText,
             const std::string &entryName, const std::string &options)
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
  // The compiled code runs in this process: `bf16-dot=auto` takes AMX only
  // where Linux lets this process use the tile data.
  pipelineOptions.targetMayUseAMX =
      processMayUseAMX(mlir::mha::TargetDescription::host().amxBF16);

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

void Layer::prepare(const py::kwargs &kwargs) {
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

py::array Layer::call(const py::args &args, const py::kwargs &kwargs) {
  std::vector<py::array> arrays = gather(args, kwargs);
  checkFitTogether(shapesOf(arrays));
  checkCacheLengths(arrays);
  checkBlockTable(arrays);
  return run(layer, describe(arrays));
}

py::array Layer::attentionWeights(const py::args &args,
                                  const py::kwargs &kwargs) {
  std::vector<py::array> arrays = gather(args, kwargs);
  std::vector<std::vector<int64_t>> shapes = shapesOf(arrays);
  checkFitTogether(shapes);
  checkCacheLengths(arrays);
  checkBlockTable(arrays);
  compileWeights();
  std::vector<int64_t> shape = weightsShape(shapes);
  checkMemory(shape, "the attention weights of shape " + formatShape(shape) +
                         " float32");
  return run(weights, describe(arrays));
}

py::list Layer::arguments() const {
  py::list list;
  for (const GraphArgument &argument : graph.signature.arguments)
    list.append(
        py::make_tuple(argument.name, declaredShape(argument.type),
                       getElementTypeName(elementTypeOf(argument)).str()));
  return list;
}

std::vector<std::string> Layer::updatedNames() const {
  std::vector<std::string> names;
  for (size_t i = 0; i < updated.size(); ++i)
    if (updated[i])
      names.push_back(name(i));
  return names;
}

std::vector<std::string> Layer::boundNames() const {
  std::vector<std::string> names;
  for (size_t i = 0; i < bound.size(); ++i)
    if (bound[i])
      names.push_back(name(i));
  return names;
}

py::tuple Layer::resultShape() const {
  return declaredShape(graph.signature.result);
}

py::tuple Layer::declaredShape(mlir::RankedTensorType type) {
  py::list shape;
  for (int64_t size : type.getShape())
    shape.append(mlir::ShapedType::isDynamic(size)
                     ? py::object(py::none())
                     : py::object(py::int_(size)));
  return py::tuple(shape);
}

py::array Layer::run(Compiled &compiled,
                     const std::vector<CompiledFunction::BufferRef> &buffers) {
  llvm::Expected<CompiledFunction::ResultBuffer> result =
      CompiledFunction::ResultBuffer();
  {
    // The GIL first, then the lock (see prepare).
    py::gil_scoped_release release;
    std::shared_lock<std::shared_mutex> shared(compiled.mutex, std::defer_lock);
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

std::vector<CompiledFunction::BufferRef>
Layer::describe(const std::vector<py::array> &arrays) {
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

py::array Layer::wrapResult(CompiledFunction::ResultBuffer result) {
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

unsigned Layer::lookup(const std::string &key) const {
  auto found = argumentIndex.find(key);
  if (found == argumentIndex.end())
    throw py::type_error("the layer has no argument '" + key + "' (it takes " +
                         graph.signature.listNames() + ")");
  return found->second;
}

} // namespace mha::python
