//===- Pipelines.h - The named pipelines of the mha compiler ----*- C++ -*-===//

#ifndef MHA_COMPILER_PIPELINES_H
#define MHA_COMPILER_PIPELINES_H

namespace mlir {
class OpPassManager;

namespace mha {

/// `mha-to-linalg`: expands `mha.attention`, canonicalizes, lowers the mha
/// ops to linalg on tensors and cleans up. Runs on a module.
void buildMhaToLinalgPipeline(OpPassManager &pm);

/// `mha-to-loops`: `mha-to-linalg`, then bufferization with identity layouts
/// at function boundaries, buffer deallocation (a returned buffer is owned by
/// the caller) and linalg to scf loops. Runs on a module.
void buildMhaToLoopsPipeline(OpPassManager &pm);

/// `mha-to-llvm`: the whole compiler, `mha-to-loops` then down to the LLVM
/// dialect, with a `_mlir_ciface_<name>` wrapper for every public function.
/// This is what the runtime executes. Runs on a module.
void buildMhaToLLVMPipeline(OpPassManager &pm);

/// Registers `mha-to-linalg`, `mha-to-loops` and `mha-to-llvm` so that
/// `mha-opt --<name>` prints the IR of each stage.
void registerMhaPipelines();

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_PIPELINES_H
