//===- Registration.cpp - What the mha tools register ---------------------===//

#include "compiler/Registration.h"
#include "compiler/Passes.h"
#include "compiler/Pipelines.h"
#include "compiler/attention/OnlineSoftmax.h"
#include "compiler/attention/SdpaTilingInterface.h"
#include "compiler/graph/AttentionBatchTiling.h"
#include "dialects/MhaDialect.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/TransformOps/FuncTransformOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/TransformOps/DialectExtension.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/TransformOps/SCFTransformOps.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/TransformOps/TensorTransformOps.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Transforms/Passes.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/SubsetOpInterfaceImpl.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

void mlir::mha::registerMhaDialects(DialectRegistry &registry) {
  // The dialects the pipelines lower through, mha to llvm.
  registry.insert<MhaDialect, affine::AffineDialect, amx::AMXDialect,
                  arith::ArithDialect, bufferization::BufferizationDialect,
                  cf::ControlFlowDialect, func::FuncDialect,
                  index::IndexDialect, LLVM::LLVMDialect, linalg::LinalgDialect,
                  math::MathDialect, memref::MemRefDialect, omp::OpenMPDialect,
                  scf::SCFDialect, tensor::TensorDialect, ub::UBDialect,
                  vector::VectorDialect, x86vector::X86VectorDialect>();

  // mha-tile-projections tiles linalg ops through TilingInterface,
  // mha-tile-attention mha.sdpa and mha-batch-chunks mha.attention.
  linalg::registerTilingInterfaceExternalModels(registry);
  registerSdpaTilingInterfaceExternalModels(registry);
  registerAttentionBatchTilingExternalModels(registry);
  registerOnlineAttentionTilingInterfaceExternalModels(registry);
  // Their tiles and decompositions build ops of these dialects (scratch as
  // bufferization.alloc_tensor, the online softmax as linalg, math and
  // scf): loaded with mha, as upstream's external models load what they
  // build, so that a driver that loads only its own dialects (the
  // transform interpreter) can run them.
  registry.addExtension(+[](MLIRContext *context, MhaDialect *) {
    context->loadDialect<affine::AffineDialect, arith::ArithDialect,
                         bufferization::BufferizationDialect,
                         linalg::LinalgDialect, math::MathDialect,
                         scf::SCFDialect, tensor::TensorDialect>();
  });

  // One-shot bufferization of linalg on tensors and of function boundaries.
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);

  // mha-vectorize hoists the accumulators' transfers out of reduction
  // loops as matching subset extraction/insertion pairs.
  tensor::registerSubsetOpInterfaceExternalModels(registry);
  vector::registerSubsetOpInterfaceExternalModels(registry);

  // Ownership-based buffer deallocation.
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);

  // Translation of the LLVM dialect to LLVM IR, for the JIT.
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
}

void mlir::mha::registerMhaPasses() {
  // Generic cleanups (canonicalize, cse, ...) used between our passes.
  registerTransformsPasses();
  registerMhaCompilerPasses();
  registerMhaPipelines();

  // The upstream passes of the pipelines, so each stage can be run alone.
  bufferization::registerBufferizationPasses();
  bufferization::registerBufferizationPipelines();
  registerLinalgPasses();
  memref::registerExpandReallocPass();
  memref::registerExpandStridedMetadataPass();
  registerArithToLLVMConversionPass();
  registerConvertBufferizationToMemRefPass();
  registerConvertControlFlowToLLVMPass();
  registerConvertFuncToLLVMPass();
  registerConvertIndexToLLVMPass();
  registerConvertMathToLLVMPass();
  registerConvertOpenMPToLLVMPass();
  registerConvertSCFToOpenMPPass();
  registerConvertVectorToLLVMPass();
  registerConvertVectorToSCF();
  registerUBToLLVMConversionPass();
  vector::registerLowerVectorMultiReduction();
  registerFinalizeMemRefToLLVMConversionPass();
  registerLowerAffinePass();
  registerReconcileUnrealizedCastsPass();
  registerSCFForallToParallelLoopPass();
  registerSCFToControlFlowPass();
}

void mlir::mha::registerMhaTransformDialect(DialectRegistry &registry) {
  // Scripts tile mha's ops through their interfaces (registerMhaDialects
  // attaches them) with linalg's structured transform ops, and match,
  // simplify and clean up with scf's, tensor's and func's.
  registry.insert<transform::TransformDialect>();
  linalg::registerTransformDialectExtension(registry);
  scf::registerTransformDialectExtension(registry);
  tensor::registerTransformDialectExtension(registry);
  func::registerTransformDialectExtension(registry);
  transform::registerInterpreterPass();
}
