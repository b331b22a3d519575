//===- JitRunner.h - Compile a lowered graph and call it --------*- C++ -*-===//
//
// Wraps MLIR's ExecutionEngine (ORC JIT) for graphs lowered to the LLVM
// dialect with `llvm.emit_c_interface`: the tensors are passed as memref
// descriptors and the result comes back in a descriptor whose buffer the
// compiled code allocated with malloc.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_JITRUNNER_H
#define MHA_RUNTIME_JITRUNNER_H

#include "runtime/Npy.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mha {
namespace runtime {

/// One function of a lowered module, compiled for the host CPU.
class CompiledFunction {
public:
  /// JIT-compiles `module` (LLVM dialect) at -O3 for the host CPU and looks up
  /// `entry`, which returns a tensor of rank `resultRank`. `sharedLibs` are
  /// loaded for symbol resolution (e.g. libomp).
  static llvm::Expected<std::unique_ptr<CompiledFunction>>
  create(mlir::ModuleOp module, llvm::StringRef entry, int64_t resultRank,
         llvm::ArrayRef<llvm::StringRef> sharedLibs = {});

  /// Another function of the same compiled module, `entry`, which returns a
  /// tensor of rank `resultRank`: the module is not compiled again.
  llvm::Expected<std::unique_ptr<CompiledFunction>>
  sibling(llvm::StringRef entry, int64_t resultRank) const;

  /// Calls the prepare functions that `mha-prepare-weights` split off (those
  /// the entry's `mha.prepare_functions` attribute lists, each returning a
  /// flat float32 buffer) once on `inputs`, and keeps their results: every
  /// later `call` passes them after its own inputs, which must hold the same
  /// weights. Returns how many there were (0 for a graph compiled without
  /// that pass). A function that has any must be prepared before it is
  /// called.
  llvm::Expected<unsigned> prepare(llvm::ArrayRef<const NpyArray *> inputs);

  /// Calls the function on `inputs` (in argument order) and returns its
  /// result as a float32 array. The arguments that the graph updates in
  /// place (GraphSignature::resultAliases: the key/value caches of a graph
  /// with `mha.cache_append`) are written through their buffers, so the
  /// caller's arrays hold the updated caches afterwards; the compiled
  /// function returns only the output (mha-drop-argument-results). If the
  /// compiled code cannot allocate a buffer, the process prints `error: ... out
  /// of memory` and exits with code 2 (the code itself cannot handle a failed
  /// malloc).
  llvm::Expected<NpyArray> call(llvm::ArrayRef<const NpyArray *> inputs);

  /// A dense C-order buffer that the caller owns, e.g. a NumPy array's:
  /// `callBuffers` passes it to the compiled code as it is, without a copy.
  /// Its element type and shape must be what the function takes (checked by
  /// the caller, as for `call`).
  struct BufferRef {
    const void *data;
    llvm::ArrayRef<int64_t> shape;
    ElementType elementType = ElementType::F32;
  };
  /// The result of `callBuffers`: the buffer the compiled code returned, not
  /// copied. The caller owns `allocated` and gives it back with
  /// `releaseResult` when `owned` (false: the result lies inside an input,
  /// which the caller must copy out before the input goes).
  struct ResultBuffer {
    void *allocated = nullptr;
    const float *data = nullptr;
    std::vector<int64_t> shape;
    /// In elements.
    std::vector<int64_t> strides;
    bool owned = true;
  };

  /// `prepare` on caller-owned buffers (for the Python package; separate
  /// from `prepare` so that mha-run's path does not change).
  llvm::Expected<unsigned> prepareBuffers(llvm::ArrayRef<BufferRef> inputs);

  /// `call` on caller-owned buffers, returning the compiled code's own
  /// result buffer instead of a copy (for the Python package, whose arrays
  /// go in and come out without copies). Thread-safe as `call` is: the
  /// compiled code allocates with the thread-safe buffer cache. The
  /// out-of-memory exit of `call` applies.
  llvm::Expected<ResultBuffer> callBuffers(llvm::ArrayRef<BufferRef> inputs);

  /// Gives back the buffer of a ResultBuffer that `owned` it.
  static void releaseResult(void *allocated);

  /// `call` without its result: the compiled code's result buffer is given
  /// back as it comes, without the copy into a new array that `call` makes
  /// (mha-run times this: the call as the Python package or a server makes
  /// it, which keep the buffer; the copy, its zero fill and the fresh pages
  /// of a new array are not the layer's work, docs/performance.md).
  llvm::Error callDiscardingResult(llvm::ArrayRef<const NpyArray *> inputs);

private:
  CompiledFunction() = default;

  /// `inputs` as the buffers they hold, for prepareBuffers and callBuffers.
  static std::vector<BufferRef>
  asBuffers(llvm::ArrayRef<const NpyArray *> inputs);

  /// For each function of the compiled module that has prepare functions,
  /// their names in argument order (its `mha.prepare_functions`).
  using PrepareTable = llvm::StringMap<std::vector<std::string>>;

  /// The function `entry` of `engine`.
  static llvm::Expected<std::unique_ptr<CompiledFunction>>
  bind(std::shared_ptr<mlir::ExecutionEngine> engine,
       std::shared_ptr<const PrepareTable> prepareTable, llvm::StringRef entry,
       int64_t resultRank);

  /// Shared by the functions of one module, which live as long as it does.
  std::shared_ptr<mlir::ExecutionEngine> engine;
  std::shared_ptr<const PrepareTable> prepareTable;
  std::string entry;
  void (*packed)(void **) = nullptr;
  int64_t resultRank = 0;
  /// The prepare functions' results once `prepare` ran, passed after the
  /// inputs of every call; `unprepared` while it has not.
  std::vector<NpyArray> prepared;
  bool unprepared = false;
};

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_JITRUNNER_H
