//===- Pipelines.cpp - The named pipelines of the mha compiler ------------===//
//
// Each pipeline extends the one before it, so `mha-opt --mha-to-loops` shows
// the IR that `mha-to-llvm` lowers further, and each stage also accepts the
// output of an earlier one (the passes that have nothing to do are no-ops).
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines.h"
#include "compiler/OptionRanges.h"
#include "compiler/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::mha;

MhaTileAttentionOptions MhaPipelineOptions::getTileAttentionOptions() const {
  MhaTileAttentionOptions tile;
  tile.attention = attention;
  // Where the function's recorded bf16 path is AMX (mha-tile-attention
  // reads it).
  tile.amxSplit = bf16AmxAttention;
  tile.groupQueryHeads = groupQueryHeads;
  return tile;
}

MhaTileProjectionsOptions
MhaPipelineOptions::getTileProjectionsOptions() const {
  MhaTileProjectionsOptions tile;
  tile.rowTile = projectionRowTile;
  tile.colTile = projectionColTile;
  return tile;
}

MhaStrategyOptions MhaPipelineOptions::getStrategyOptions() const {
  // What is not set here (0; -1 for the projection tiles) the strategy
  // takes from the module's target.
  MhaStrategyOptions sizes;
  sizes.queryTile = queryTile;
  sizes.keyTile = keyTile;
  sizes.keySplits = keySplits;
  sizes.registerRows = registerRows;
  sizes.registerCols = registerCols;
  sizes.registerUnroll = registerUnroll;
  sizes.projectionRowTile =
      projectionRowTile.hasValue() ? int64_t(projectionRowTile) : -1;
  sizes.projectionColTile =
      projectionColTile.hasValue() ? int64_t(projectionColTile) : -1;
  // The bf16 dot paths read prepared weights in registers: without them
  // the bf16 projections compute in f32.
  sizes.bf16Dot = prepareWeights && vectorize ? bf16Dot : BF16DotMode::Off;
  return sizes;
}

llvm::Error MhaPipelineOptions::validate(llvm::StringRef prefix) const {
  if (auto error = checkOptionRange((prefix + "batch-chunk").str(), batchChunk,
                                    -1, int64_t(1) << 20))
    return error;
  if (auto error =
          checkAttentionTileRequest({queryTile, keyTile, keySplits}, prefix))
    return error;
  if (auto error = checkTileProjectionsOptions(getTileProjectionsOptions(),
                                               (prefix + "projection-").str()))
    return error;
  if (auto error = checkRegisterBlockOptions(registerRows, registerCols,
                                             registerUnroll, prefix))
    return error;
  if (!llvm::is_contained({"static", "dynamic", "guided", "runtime"},
                          ompSchedule.getValue()))
    return llvm::createStringError(
        "%somp-schedule must be static, dynamic, guided or runtime, got '%s'",
        prefix.str().c_str(), ompSchedule.getValue().c_str());
  return llvm::Error::success();
}

/// The rest of `mha-to-linalg`: attention tiled, everything lowered to
/// linalg, projections tiled.
static void buildTilingAndLinalgPipeline(OpPassManager &pm,
                                         const MhaPipelineOptions &options) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  // The attention that takes the fused path is tiled before the rest is
  // lowered; mha-lower-to-linalg decomposes the mha.sdpa ops left.
  // Its tile sizes are each mha.sdpa's mha.tiles (mha-strategy).
  if (options.attention != AttentionMode::Decomposed)
    funcPm.addPass(createMhaTileAttention(options.getTileAttentionOptions()));
  funcPm.addPass(createMhaLowerToLinalg());
  // The widenings and roundings of mha-widen-bf16 (arith on tensors).
  funcPm.addPass(createConvertElementwiseToLinalgPass());
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
  // Prepared projection weights are stored in the layout the register
  // blocks read best (a prepare function and its layer change together).
  // The output projection's weight in panels of one parallel tile's columns
  // (mha.codegen).
  if (options.prepareWeights)
    pm.addPass(createMhaWeightLayouts());
  // The projections' contractions become parallel tiles (scf.forall), of
  // the sizes in mha.codegen.
  if (!options.projectionRowTile.hasValue() ||
      !options.projectionColTile.hasValue() || options.projectionRowTile > 0 ||
      options.projectionColTile > 0) {
    OpPassManager &tilePm = pm.nest<func::FuncOp>();
    tilePm.addPass(createMhaTileProjections());
    tilePm.addPass(createCanonicalizerPass());
    tilePm.addPass(createCSEPass());
  }
}

void mlir::mha::buildMhaToLinalgPipeline(OpPassManager &pm,
                                         const MhaPipelineOptions &options) {
  // The target first, where the module has none, and the sizes for it on
  // each function (mha.codegen): mha-batch-chunks reads its cache bytes
  // and rows there.
  MhaSetTargetOptions target;
  target.cpu = options.cpu;
  target.amx = options.targetMayUseAMX;
  pm.addPass(createMhaSetTarget(target));
  pm.addPass(createMhaStrategy(options.getStrategyOptions()));
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  // The whole layer per chunk of sequences, before it is expanded, so that
  // every pass below sees the chunk's shapes.
  if (options.batchChunk != 0) {
    MhaBatchChunksOptions chunks;
    chunks.chunk = options.batchChunk;
    funcPm.addPass(createMhaBatchChunks(chunks));
  }
  funcPm.addPass(createMhaExpand());
  funcPm.addPass(createCanonicalizerPass());
  // Projections write and read the head layout in place and those of one
  // input are packed into one, before attention sees their results.
  if (options.foldHeadLayouts)
    funcPm.addPass(createMhaFoldHeadLayouts());
  if (options.fuseProjections)
    funcPm.addPass(createMhaFuseProjections());
  // bf16 ops become f32 ops on widened operands, before the weights are
  // prepared: the widened weights are then computed once, not per call.
  funcPm.addPass(createMhaWidenBF16());
  funcPm.addPass(createCSEPass());
  // Out of a chunk loop, what the weights alone give (widened, packed):
  // mha-prepare-weights looks for it in the function's own block.
  funcPm.addPass(createLoopInvariantCodeMotionPass());
  // What the weights alone determine is computed once, by functions of its
  // own; the passes below lower those functions too.
  if (options.prepareWeights)
    pm.addPass(createMhaPrepareWeights());
  // The strategy step again, for what exists now: the prepare functions'
  // mha.codegen and each attention's mha.tiles, for the passes below to
  // read (the layer's mha.codegen is kept).
  pm.addPass(createMhaStrategy(options.getStrategyOptions()));
  // bf16 projections whose weights were just prepared read them packed in
  // K pairs, for the bf16 dot products (lowered by mha-bf16-dot below), in
  // the functions whose recorded bf16 path is not f32 (mha-strategy).
  // On AMX, in panels of 16 columns: one B tile per KiB; and the output
  // projection too, its f32 input split in bf16 hi + lo (2^-17 relative:
  // rounding it to bf16 alone would break the accuracy bound).
  if (options.prepareWeights) {
    MhaBF16ProjectionsOptions projections;
    bool fast = options.bf16Precision == BF16Precision::Fast;
    projections.splitF32 = options.bf16SplitOutput && !fast;
    projections.roundF32 = options.bf16SplitOutput && fast;
    pm.addPass(createMhaBF16Projections(projections));
  }
  buildTilingAndLinalgPipeline(pm, options);
}

/// `mha-to-loops` but for mha-drop-codegen-sizes, which runs after the
/// last pass that reads the records.
static void buildLoopsPipeline(OpPassManager &pm,
                               const MhaPipelineOptions &options) {
  buildMhaToLinalgPipeline(pm, options);

  // Static tiles become register-blocked vector code while they are still
  // tensors, where the accumulators' reads and writes can be hoisted out of
  // the reduction loops as values.
  if (options.vectorize) {
    pm.addPass(createMhaMaskBytes());
    OpPassManager &funcPm = pm.nest<func::FuncOp>();
    // The bf16 projections become AMX tiles or vdpbf16ps register blocks
    // first, so that mha-vectorize sees only the f32 ops. Their tiles and
    // the register blocks are the function's mha.codegen.
    // Each acts on the functions whose recorded bf16 path is its own.
    funcPm.addPass(createMhaBF16Amx());
    funcPm.addPass(createMhaBF16Dot());
    funcPm.addPass(createMhaVectorize());
    funcPm.addPass(createMhaHoistAccumulators());
    funcPm.addPass(createMhaUnrollReductions());
    funcPm.addPass(createCanonicalizerPass());
    funcPm.addPass(createCSEPass());
  }

  // Function arguments and results become memrefs with the identity layout:
  // the C interface passes plain contiguous descriptors.
  // A chunk of the batch (mha-batch-chunks) is written into its part of
  // the result: the tensor.empty that its last op fills becomes that slice
  // of the loop's result, so the chunk is not written elsewhere and copied.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(createMhaOrderConstantGlobals(
      MhaOrderConstantGlobalsOptions{bufferize.bufferAlignment}));
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // A tile written back to the scratch it was sliced from bufferizes to a
  // copy between two identical subviews: CSE makes them one value and the
  // canonicalizer drops the self-copy.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // A returned buffer that is always an argument's (a key/value cache that
  // mha.cache_append updated in place) is no result: the caller has it
  // already. Without this, the deallocation below would hand the caller a
  // clone of the cache on every call. Both run after the canonicalizer,
  // which makes the loop that appends to the cache return the argument
  // itself (it only writes into it); upstream's pass handles private
  // functions, ours the public entry points (whose ABI the runtime knows:
  // GraphSignature's aliased results).
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  pm.addNestedPass<func::FuncOp>(createMhaDropArgumentResults());

  // Frees every temporary buffer. A returned buffer is never freed: the
  // ownership-based deallocation gives public functions' results to the
  // caller (cloning one the function does not own), who frees it.
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());

  // Attention's products in bf16 layers on AMX, written in place (where
  // mha-tile-attention marked them: the AMX path).
  if (options.vectorize) {
    MhaAmxSplitOptions amxSplit;
    amxSplit.fast = options.bf16Precision == BF16Precision::Fast;
    pm.addNestedPass<func::FuncOp>(createMhaAmxSplit(amxSplit));
  }
  pm.addNestedPass<func::FuncOp>(createMhaLowerStridedCopies());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Tile loops become scf.parallel; everything inside them stays scf.for,
  // so only the outer tile loop runs in parallel and no reduction crosses
  // threads.
  pm.addPass(createForallToParallelLoopPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // The tiles' small scratch buffers (attention's running maximum and sum,
  // a block of scores) on the stack instead of a malloc and a free per tile.
  pm.addNestedPass<func::FuncOp>(createMhaStackScratch());
  // exp as a polynomial on vectors (softmax's), on buffers: the AVX-512
  // form calls an LLVM intrinsic that bufferization would refuse.
  if (options.vectorize)
    pm.addNestedPass<func::FuncOp>(createMhaApproximateExp());
  // The bf16 paths' roundings to bf16 (their hi + lo splits), two
  // registers per instruction, in the functions whose recorded bf16 path
  // is not f32: both paths need AVX512_BF16, which has it.
  if (options.prepareWeights && options.vectorize)
    pm.addNestedPass<func::FuncOp>(createMhaBF16PairConversion());
}

void mlir::mha::buildMhaToLoopsPipeline(OpPassManager &pm,
                                        const MhaPipelineOptions &options) {
  buildLoopsPipeline(pm, options);
  // Every pass that reads mha.codegen has run; upstream tools that read
  // what follows do not know the attributes.
  pm.addPass(createMhaDropCodegenSizes());
}

void mlir::mha::buildMhaToLLVMPipeline(OpPassManager &pm,
                                       const MhaPipelineOptions &options) {
  buildLoopsPipeline(pm, options);

  // Register blocks' loops compiled apart from the layer's other values.
  if (options.vectorize && options.outlineRegisterBlocks)
    pm.addPass(createMhaOutlineRegisterBlocks());
  pm.addPass(createMhaDropCodegenSizes());
  pm.addNestedPass<func::FuncOp>(createMhaEmitCInterface());
  // Vector transfers of 2-D blocks become unrolled rows of 1-D loads and
  // stores while the memrefs are still memrefs.
  pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  // What that leaves of one-element broadcasting reads, which
  // vector-to-llvm cannot lower from strided views.
  pm.addNestedPass<func::FuncOp>(createMhaLowerScalarTransfers());
  // Row reductions (max and sum of softmax) become horizontal
  // vector.reduction ops.
  pm.addNestedPass<func::FuncOp>(vector::createLowerVectorMultiReductionPass(
      vector::VectorMultiReductionLowering::InnerReduction));
  pm.addNestedPass<func::FuncOp>(createMhaNoNaNRowMax());
  // Reshapes of buffers become descriptor arithmetic (affine.apply), which
  // lower-affine turns into arith together with the GQA head maps.
  pm.addNestedPass<func::FuncOp>(createMhaExpandShapeMetadata());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // scf.parallel -> omp.parallel + omp.wsloop (the body
  // in a memref.alloca_scope); libomp runs it with the process's thread
  // count. The alloca scope must hold one block, so memref ops (the scope
  // included) are lowered before scf.for becomes branches.
  pm.addPass(createConvertSCFToOpenMPPass());
  pm.addNestedPass<func::FuncOp>(
      createMhaOmpSchedule(MhaOmpScheduleOptions{options.ompSchedule}));
  // Buffers come from `_mlir_memref_to_llvm_alloc`, `..._aligned_alloc` and
  // `..._free`, not from malloc: the runtime that runs the code provides
  // them (the JIT from runtime/BufferCache, a library of mha-compile from a
  // cache in its wrapper), so each keeps the large buffers between calls
  // without interposing the C library's functions.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createSCFToControlFlowPass());
  // Contractions become broadcast-FMAs (outer products); the row
  // reductions of softmax may be reassociated into vector trees.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.vectorContractLowering =
      vector::VectorContractLowering::OuterProduct;
  vectorToLLVM.vectorTransposeLowering =
      vector::VectorTransposeLowering::Shuffle16x16;
  vectorToLLVM.reassociateFPReductions = true;
  // x86vector.avx512.dot (mha-bf16-dot) and the amx ops (mha-bf16-amx) to
  // their LLVM intrinsics.
  vectorToLLVM.x86Vector = true;
  vectorToLLVM.amx = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::mha::buildMhaToLLVMPipeline(OpPassManager &pm) {
  buildMhaToLLVMPipeline(pm, MhaPipelineOptions());
}

/// Registers pipeline `name` built by `build`. PassPipelineRegistration
/// would do it, but its builder cannot fail: this one refuses options out
/// of range while the pipeline is parsed, so `mha-opt
/// --mha-to-llvm="key-splits=0"` is a bad command line (exit code 2) and
/// never reaches a pass.
static void registerMhaPipeline(llvm::StringRef name,
                                llvm::StringRef description,
                                void (*build)(OpPassManager &,
                                              const MhaPipelineOptions &)) {
  registerPassPipeline(
      name, description,
      [name = name.str(),
       build](OpPassManager &pm, llvm::StringRef text,
              llvm::function_ref<LogicalResult(const llvm::Twine &)> onError) {
        MhaPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        if (llvm::Error error = options.validate())
          return onError(name + ": " + llvm::toString(std::move(error)));
        build(pm, options);
        return success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)>
             printHelp) { printHelp(MhaPipelineOptions()); });
}

void mlir::mha::registerMhaPipelines() {
  registerMhaPipeline(
      "mha-to-linalg",
      "Expand mha.attention and lower the mha ops to linalg on tensors",
      buildMhaToLinalgPipeline);
  registerMhaPipeline(
      "mha-to-loops",
      "mha-to-linalg, then bufferize, deallocate and lower linalg to loops",
      buildMhaToLoopsPipeline);
  registerMhaPipeline(
      "mha-to-llvm",
      "The whole compiler: mha-to-loops, then down to the LLVM dialect with "
      "C-callable wrappers (what mha-run executes)",
      [](OpPassManager &pm, const MhaPipelineOptions &options) {
        buildMhaToLLVMPipeline(pm, options);
      });
}
