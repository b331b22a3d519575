//===- Pipelines.cpp - The named pipelines of the mha compiler ------------===//
//
// Each pipeline extends the one before it, so `mha-opt --mha-to-loops` shows
// the IR that `mha-to-llvm` lowers further, and each stage also accepts the
// output of an earlier one (the passes that have nothing to do are no-ops).
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines.h"
#include "compiler/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::mha::buildMhaToLinalgPipeline(OpPassManager &pm) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  funcPm.addPass(createMhaExpand());
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createMhaLowerToLinalg());
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
}

void mlir::mha::buildMhaToLoopsPipeline(OpPassManager &pm) {
  buildMhaToLinalgPipeline(pm);

  // Function arguments and results become memrefs with the identity layout:
  // the C interface passes plain contiguous descriptors.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());

  // Frees every temporary buffer. A returned buffer is never freed: the
  // ownership-based deallocation gives public functions' results to the
  // caller (cloning one the function does not own), who frees it.
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::mha::buildMhaToLLVMPipeline(OpPassManager &pm) {
  buildMhaToLoopsPipeline(pm);

  pm.addNestedPass<func::FuncOp>(createMhaEmitCInterface());
  // Reshapes of buffers become descriptor arithmetic (affine.apply), which
  // lower-affine turns into arith together with the GQA head maps.
  pm.addNestedPass<func::FuncOp>(createMhaExpandShapeMetadata());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::mha::registerMhaPipelines() {
  PassPipelineRegistration<>(
      "mha-to-linalg",
      "Expand mha.attention and lower the mha ops to linalg on tensors",
      buildMhaToLinalgPipeline);
  PassPipelineRegistration<>(
      "mha-to-loops",
      "mha-to-linalg, then bufferize, deallocate and lower linalg to loops",
      buildMhaToLoopsPipeline);
  PassPipelineRegistration<>(
      "mha-to-llvm",
      "The whole compiler: mha-to-loops, then down to the LLVM dialect with "
      "C-callable wrappers (what mha-run executes)",
      buildMhaToLLVMPipeline);
}
