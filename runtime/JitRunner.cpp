//===- JitRunner.cpp - Compile a lowered graph and call it ----------------===//

#include "runtime/JitRunner.h"

#include "dialects/MhaDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "runtime/AMXPermission.h"
#include "runtime/BufferCache.h"
#include "runtime/LLVMOptimizer.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/WithColor.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

using namespace mha::runtime;
using llvm::createStringError;

namespace {
/// A ranked memref descriptor as the LLVM lowering lays it out:
/// `{T *allocated, T *aligned, int64_t offset, int64_t sizes[rank],
/// int64_t strides[rank]}`, all 8-byte words, for any rank.
class MemRefDescriptor {
public:
  explicit MemRefDescriptor(int64_t rank) : rank(rank), words(3 + 2 * rank) {}

  /// Describes the contiguous C-order buffer of `array` (not owned).
  static MemRefDescriptor describe(const NpyArray &array) {
    return describe(array.data.data(), array.shape);
  }

  /// Describes a contiguous C-order buffer of `shape` at `data` (not
  /// owned).
  static MemRefDescriptor describe(const void *data,
                                   llvm::ArrayRef<int64_t> shape) {
    MemRefDescriptor descriptor(shape.size());
    auto *pointer = const_cast<void *>(data);
    descriptor.setPointer(0, pointer);
    descriptor.setPointer(1, pointer);
    int64_t stride = 1;
    for (int64_t i = descriptor.rank - 1; i >= 0; --i) {
      descriptor.words[3 + i] = shape[i];
      descriptor.words[3 + descriptor.rank + i] = stride;
      stride *= shape[i];
    }
    return descriptor;
  }

  void *address() { return words.data(); }
  void *allocated() const { return pointer(0); }
  void *aligned() const { return pointer(1); }
  int64_t offset() const { return words[2]; }
  int64_t size(int64_t i) const { return words[3 + i]; }
  int64_t stride(int64_t i) const { return words[3 + rank + i]; }

private:
  void setPointer(int index, void *value) {
    std::memcpy(&words[index], &value, sizeof(void *));
  }
  void *pointer(int index) const {
    void *value;
    std::memcpy(&value, &words[index], sizeof(void *));
    return value;
  }

  int64_t rank;
  std::vector<int64_t> words;
};

/// Ends the process when the compiled code cannot allocate `bytes`: it never
/// checks what malloc returns, and would crash at the first store through the
/// null pointer. Before compiling, mha-run only counts the inputs and the
/// output against the memory limit, not the intermediate buffers.
[[noreturn]] void outOfMemory(size_t bytes) {
  llvm::WithColor::error(llvm::errs(), program_invocation_short_name)
      << "the compiled code could not allocate " << bytes
      << " bytes: out of memory\n";
  llvm::errs().flush();
  // Exit code 2, bad input: too large for this machine. No exit handlers:
  // other threads may still be running compiled code.
  std::_Exit(2);
}

/// The allocation functions the compiled code calls (the pipeline lowers
/// memref.alloc and memref.dealloc to `_mlir_memref_to_llvm_alloc`,
/// `..._aligned_alloc` and `..._free`): its large buffers are reused from
/// call to call (BufferCache.h).
void *checkedMalloc(size_t bytes) {
  void *pointer = buffer_cache::allocate(bytes, /*alignment=*/0);
  if (!pointer && bytes != 0)
    outOfMemory(bytes);
  return pointer;
}

void *checkedAlignedAlloc(size_t alignment, size_t bytes) {
  void *pointer = buffer_cache::allocate(bytes, alignment);
  if (!pointer && bytes != 0)
    outOfMemory(bytes);
  return pointer;
}

void cachedFree(void *pointer) { buffer_cache::release(pointer); }

} // namespace

llvm::Expected<std::unique_ptr<CompiledFunction>>
CompiledFunction::create(mlir::ModuleOp module, llvm::StringRef entry,
                         int64_t resultRank,
                         llvm::ArrayRef<llvm::StringRef> sharedLibs) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  mlir::registerBuiltinDialectTranslation(*module.getContext());
  mlir::registerLLVMDialectTranslation(*module.getContext());
  mlir::registerOpenMPDialectTranslation(*module.getContext());

  // Compile for this CPU (AVX-512 where it has it), not a generic x86-64.
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto targetMachine = builder->createTargetMachine();
  if (!targetMachine)
    return targetMachine.takeError();

  // The options hold a reference to it: it lives until the engine is made.
  auto transformer = makeLayerOptimizer(targetMachine->get());
  mlir::ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  options.sharedLibPaths = sharedLibs;
  // Opt-in for profiling: MHA_PERF_JIT=1 makes the JIT write a jitdump
  // (jit-<pid>.dump) that `perf record -k 1` and `perf inject --jit` turn
  // into symbols for the compiled functions and their parallel regions.
  if (const char *perf = std::getenv("MHA_PERF_JIT"); perf && *perf == '1')
    options.enablePerfNotificationListener = true;
  // What each function's `mha.prepare_functions` declares, read before the
  // module is gone: the compiled code's symbols alone cannot tell.
  auto prepareTable = std::make_shared<PrepareTable>();
  module.walk([&](mlir::FunctionOpInterface function) {
    mlir::ArrayAttr listed =
        mlir::mha::MhaDialect::PrepareFunctionsAttrHelper(module.getContext())
            .getAttr(function);
    if (!listed)
      return;
    std::vector<std::string> &names = (*prepareTable)[function.getName()];
    for (auto symbol : listed.getAsRange<mlir::FlatSymbolRefAttr>())
      names.push_back(symbol.getValue().str());
  });
  // Code with AMX instructions (mha-bf16-amx's tile intrinsics) raises
  // SIGILL until Linux grants the process the tile data: ask before it can
  // run, and say why it cannot where the kernel refuses.
  bool usesAMX = false;
  module.walk([&](mlir::LLVM::CallIntrinsicOp call) {
    usesAMX |= call.getIntrin().starts_with("llvm.x86.tile") ||
               call.getIntrin().starts_with("llvm.x86.tdp");
  });
  if (usesAMX) {
    std::string refused = ::mha::runtime::requestAMXTileData();
    if (!refused.empty())
      return llvm::createStringError(
          "the compiled code uses AMX, which Linux does not let this process "
          "use (" +
          refused + "); compile with bf16-dot=off or avx512");
  }
  auto engine =
      mlir::ExecutionEngine::create(module, options, std::move(*targetMachine));
  if (!engine)
    return engine.takeError();
  // The compiled code's allocation functions; the process defines none.
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("_mlir_memref_to_llvm_alloc")] = {
        llvm::orc::ExecutorAddr::fromPtr(&checkedMalloc),
        llvm::JITSymbolFlags::Exported};
    symbols[interner("_mlir_memref_to_llvm_aligned_alloc")] = {
        llvm::orc::ExecutorAddr::fromPtr(&checkedAlignedAlloc),
        llvm::JITSymbolFlags::Exported};
    symbols[interner("_mlir_memref_to_llvm_free")] = {
        llvm::orc::ExecutorAddr::fromPtr(&cachedFree),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  return bind(std::move(*engine), std::move(prepareTable), entry, resultRank);
}

llvm::Expected<std::unique_ptr<CompiledFunction>>
CompiledFunction::sibling(llvm::StringRef entry, int64_t resultRank) const {
  return bind(engine, prepareTable, entry, resultRank);
}

llvm::Expected<std::unique_ptr<CompiledFunction>>
CompiledFunction::bind(std::shared_ptr<mlir::ExecutionEngine> engine,
                       std::shared_ptr<const PrepareTable> prepareTable,
                       llvm::StringRef entry, int64_t resultRank) {
  std::unique_ptr<CompiledFunction> function(new CompiledFunction());
  function->engine = std::move(engine);
  function->prepareTable = std::move(prepareTable);
  function->resultRank = resultRank;
  function->entry = entry.str();
  auto packed = function->engine->lookupPacked(("_mlir_ciface_" + entry).str());
  if (!packed)
    return packed.takeError();
  function->packed = *packed;
  function->unprepared = function->prepareTable->contains(entry);
  return function;
}

std::vector<CompiledFunction::BufferRef>
CompiledFunction::asBuffers(llvm::ArrayRef<const NpyArray *> inputs) {
  std::vector<BufferRef> buffers;
  for (const NpyArray *input : inputs)
    buffers.push_back({input->data.data(), input->shape, input->elementType});
  return buffers;
}

llvm::Expected<unsigned>
CompiledFunction::prepare(llvm::ArrayRef<const NpyArray *> inputs) {
  return prepareBuffers(asBuffers(inputs));
}

llvm::Expected<NpyArray>
CompiledFunction::call(llvm::ArrayRef<const NpyArray *> inputs) {
  auto result = callBuffers(asBuffers(inputs));
  if (!result)
    return result.takeError();
  NpyArray output = NpyArray::zeros(ElementType::F32, result->shape);
  float *out = output.f32();
  int64_t count = output.numElements();
  // The function boundary has the identity layout, so the result is one
  // row-major block: one memcpy, not a strided walk per element (which
  // `--repeat` would time as part of every call).
  bool rowMajor = true;
  for (int64_t i = resultRank - 1, stride = 1; i >= 0; --i) {
    rowMajor &= result->shape[i] == 1 || result->strides[i] == stride;
    stride *= result->shape[i];
  }
  if (rowMajor && count > 0)
    std::memcpy(out, result->data, count * sizeof(float));
  // Otherwise copy out element by element along the strides it chose.
  std::vector<int64_t> index(resultRank, 0);
  for (int64_t linear = 0; !rowMajor && linear < count; ++linear) {
    int64_t position = 0;
    for (int64_t i = 0; i < resultRank; ++i)
      position += index[i] * result->strides[i];
    out[linear] = result->data[position];
    for (int64_t i = resultRank - 1; i >= 0; --i) {
      if (++index[i] < result->shape[i])
        break;
      index[i] = 0;
    }
  }
  // The caller owns a buffer the function allocated, not an input; the next
  // call will allocate the same.
  if (result->owned)
    releaseResult(result->allocated);
  return output;
}

llvm::Error CompiledFunction::callDiscardingResult(
    llvm::ArrayRef<const NpyArray *> inputs) {
  auto result = callBuffers(asBuffers(inputs));
  if (!result)
    return result.takeError();
  if (result->owned)
    releaseResult(result->allocated);
  return llvm::Error::success();
}

// Caller-owned buffers in, the compiled code's result buffer out, no copies
// (the Python package's path, python/; prepare and call above go through
// them too).

llvm::Expected<unsigned>
CompiledFunction::prepareBuffers(llvm::ArrayRef<BufferRef> inputs) {
  prepared.clear();
  auto listed = prepareTable->find(entry);
  if (listed == prepareTable->end())
    return 0;
  for (const std::string &name : listed->second) {
    auto function = bind(engine, prepareTable, name, /*resultRank=*/1);
    if (!function)
      return function.takeError();
    auto result = (*function)->callBuffers(inputs);
    if (!result)
      return result.takeError();
    // A flat buffer of its own (prepare functions return fresh buffers);
    // copied once into the NpyArray that every later call passes.
    NpyArray packed = NpyArray::zeros(ElementType::F32, result->shape);
    int64_t size = result->shape.empty() ? 1 : result->shape[0];
    const float *base = result->data;
    for (int64_t i = 0; i < size; ++i)
      packed.f32()[i] =
          base[i * (result->strides.empty() ? 1 : result->strides[0])];
    if (result->owned)
      releaseResult(result->allocated);
    prepared.push_back(std::move(packed));
  }
  unprepared = false;
  return listed->second.size();
}

llvm::Expected<CompiledFunction::ResultBuffer>
CompiledFunction::callBuffers(llvm::ArrayRef<BufferRef> inputs) {
  if (unprepared)
    return createStringError(llvm::formatv(
        "@{0} takes prepared weights: call prepare() first", entry));
  MemRefDescriptor result(resultRank);
  std::vector<MemRefDescriptor> arguments;
  arguments.reserve(inputs.size() + prepared.size());
  for (const BufferRef &input : inputs)
    arguments.push_back(MemRefDescriptor::describe(input.data, input.shape));
  for (const NpyArray &input : prepared)
    arguments.push_back(MemRefDescriptor::describe(input));
  std::vector<void *> pointers;
  pointers.push_back(result.address());
  for (MemRefDescriptor &argument : arguments)
    pointers.push_back(argument.address());
  std::vector<void *> packedArgs;
  for (void *&pointer : pointers)
    packedArgs.push_back(&pointer);
  packed(packedArgs.data());

  ResultBuffer output;
  output.allocated = result.allocated();
  output.data = static_cast<const float *>(result.aligned()) + result.offset();
  for (int64_t i = 0; i < resultRank; ++i) {
    output.shape.push_back(result.size(i));
    output.strides.push_back(result.stride(i));
  }
  // A result inside an input is not the caller's to free.
  auto *allocated = static_cast<const char *>(output.allocated);
  for (const BufferRef &input : inputs) {
    auto *begin = static_cast<const char *>(input.data);
    std::optional<int64_t> bytes = getByteCount(input.shape, input.elementType);
    if (bytes && allocated >= begin && allocated < begin + *bytes)
      output.owned = false;
  }
  // The sizes come from compiled code; a wrong one must not become a huge
  // or negative array.
  if (!getByteCount(output.shape, ElementType::F32)) {
    if (output.owned)
      releaseResult(output.allocated);
    return createStringError(
        llvm::formatv("the compiled function returned the invalid shape {0}",
                      formatShape(output.shape)));
  }
  return output;
}

void CompiledFunction::releaseResult(void *allocated) {
  buffer_cache::release(allocated);
}
