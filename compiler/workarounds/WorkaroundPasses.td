//===- WorkaroundPasses.td - Passes for LLVM 22's gaps -----*- tablegen -*-===//
//
// The passes that make up for what LLVM 22 lacks; each pass's source file
// says, on its "Retired by:" line, which upstream change lets it go.
// Included by compiler/Passes.td, so that one generated header declares
// every pass.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_WORKAROUNDS_WORKAROUNDPASSES_TD
#define MHA_COMPILER_WORKAROUNDS_WORKAROUNDPASSES_TD

include "mlir/Pass/PassBase.td"

def MhaLowerStridedCopies : Pass<"mha-lower-strided-copies", "func::FuncOp"> {
  let summary = "Rewrite copies between strided buffers into linalg.copy";
  let description = [{
    `finalize-memref-to-llvm` lowers a `memref.copy` whose source or target
    is not contiguous to a call of `memrefCopy` from MLIR's C runner
    utilities, which neither the JIT of `mha-run` nor the libraries of
    `mha-compile` link. This pass rewrites those copies (bufferization
    makes them for strided tiles and for the `tensor.concat` of the packed
    weights) into `linalg.copy`, which
    `convert-linalg-to-loops` lowers to loops. Contiguous copies stay
    `memref.copy` (a memcpy).
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def MhaDropArgumentResults
    : Pass<"mha-drop-argument-results", "func::FuncOp"> {
  let summary = "Drop the results that are argument buffers, also of public "
                "functions";
  let description = [{
    Removes each result of a function (public ones included) whose returned
    value is one of the function's memref arguments (through `memref.cast`)
    of the same type: after one-shot bufferization, the key/value caches that
    `mha.cache_append` updated in place. The caller passed those buffers and
    sees them updated; returning them would only make the deallocation
    pipeline clone them for the caller. Upstream's
    `drop-equivalent-buffer-results` does the same for private functions
    only. Callers of the function in the module are not updated: run it on
    entry points.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def MhaOutlineRegisterBlocks : Pass<"mha-outline-register-blocks",
                                    "ModuleOp"> {
  let summary = "Each register block's reduction loop in a function of its "
                "own";
  let description = [{
    In each function that takes or returns a buffer with a `?` size, moves
    every outermost `scf.for` whose results are vectors and whose body runs
    at least `min-steps` `vector.contract` ops per call (256 by default; a
    register block's whole reduction after `mha-vectorize`, `mha-hoist-accumulators` and
    `mha-unroll-reductions`: the projections', not attention's short
    blocks), with the `vector.transfer_read` that starts its accumulators
    and the `vector.transfer_write` of its results (where nothing between
    them and the loop writes memory), into a private function
    `<function>_register_block<n>` with internal linkage that LLVM never
    inlines (`passthrough = ["noinline"]`), called where the loop was; the constants it uses are cloned into it. LLVM then
    compiles each loop with only its own operands live, so that a layer
    with `?` sizes gets the same loop code as a static one, whose loops stay
    inline. Run on buffers, before `convert-scf-to-openmp`.
  }];
  let options = [
    Option<"minSteps", "min-steps", "int64_t", /*default=*/"0",
           "Contraction steps per call at least (0: the function's "
           "mha.codegen outline_steps, else 256)">,
  ];
  let dependentDialects = ["func::FuncDialect", "LLVM::LLVMDialect"];
}

def MhaExpandShapeMetadata : Pass<"mha-expand-shape-metadata", "func::FuncOp"> {
  let summary = "Rewrite memref.expand_shape with several dynamic sizes in a "
                "group into descriptor arithmetic";
  let description = [{
    Replaces each `memref.expand_shape` that has more than one dynamic size
    in one reassociation group (rows `[B·T, D]` back to `[B, T, D]` with
    dynamic batch and sequence) by `memref.extract_strided_metadata` of the
    source and a `memref.reinterpret_cast` whose sizes come from
    `output_shape`. LLVM 22's `expand-strided-metadata` crashes on such ops
    (llvm/llvm-project#186830, fixed in LLVM 23); run this pass before it.
    Other expand_shape ops are left to `expand-strided-metadata`.
  }];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

def MhaOrderConstantGlobals : Pass<"mha-order-constant-globals", "ModuleOp"> {
  let summary = "Make the globals of tensor constants in the module's order";
  let description = [{
    Before `one-shot-bufferize`: makes the `memref.global` of each tensor
    `arith.constant`, in the order of the module's functions and their ops,
    as bufferization would (`bufferization::getGlobalFor`, with the same
    alignment), so that bufferization reuses them instead of making them in
    the order of its DenseMap of functions, which changes from run to run.
  }];
  let options = [
    Option<"alignment", "alignment", "uint64_t", /*default=*/"64",
           "The globals' alignment: one-shot-bufferize's buffer-alignment">,
  ];
  let dependentDialects = ["memref::MemRefDialect"];
}

def MhaLowerScalarTransfers
    : Pass<"mha-lower-scalar-transfers", "func::FuncOp"> {
  let summary = "Rewrite vector transfers of one element as memref loads and "
                "stores";
  let description = [{
    A vector read that broadcasts one element (a row's maximum along a block
    of keys) is turned by LLVM 22's `convert-vector-to-llvm` into a 0-d
    `vector.transfer_read`, which it lowers only from a memref whose last
    dimension has unit stride; from a one-element strided view
    (`memref<1xf32, strided<[2]>>`) it leaves a
    `builtin.unrealized_conversion_cast` and translation fails. This pass
    reads such an element with `memref.load` and broadcasts it, and applies
    upstream's `populateScalarVectorTransferLoweringPatterns` (which no
    upstream pass runs) to other one-element transfers. Run it after
    `convert-vector-to-scf`.
  }];
  let dependentDialects = ["memref::MemRefDialect",
                           "vector::VectorDialect"];
}

def MhaBF16PairConversion
    : Pass<"mha-bf16-pair-conversion", "func::FuncOp"> {
  let summary = "Round f32 vectors to bf16 two registers at a time "
                "(VCVTNE2PS2BF16)";
  let description = [{
    Rewrites every `arith.truncf` of an f32 vector to bf16 whose length is
    a multiple of 32, with the default rounding (nearest even), into one
    call of `llvm.x86.avx512bf16.cvtne2ps2bf16.512` per 32 lanes: two
    registers of f32 into one of bf16. LLVM 22 lowers such a truncation to
    a VCVTNEPS2BF16 per 16 lanes and a VINSERTF64X4 per pair. The bf16
    paths' hi + lo splits are made of these (attention's P per key block
    on the AMX path). Only for targets with AVX512_BF16: the pipeline runs
    it on the bf16 dot-product paths, which need it.

    Run on buffers, after bufferization: the `llvm.call_intrinsic` it
    emits has no declared memory effects, which one-shot bufferization
    refuses.
  }];
  let dependentDialects = ["LLVM::LLVMDialect", "vector::VectorDialect",
                           "arith::ArithDialect"];
}

def MhaNoNaNRowMax : Pass<"mha-no-nan-row-max", "func::FuncOp"> {
  let summary = "Let the row maxima of softmax be reduced without NaN checks";
  let description = [{
    Sets the `nnan` fast-math flag on every `vector.reduction <maxnumf>`:
    in what mha lowers, the row maxima that softmax subtracts before exp
    (the attention math writes them as `arith.maxnumf`, other maxima as
    `arith.maximumf`). LLVM then reduces each vector in a shuffle tree of
    `vmaxps` instead of a chain of NaN-checked scalar steps. No result
    changes: a NaN score makes exp(score - max), and with it its row, NaN
    whatever the maximum is. Run it after `lower-vector-multi-reduction`.
  }];
  let dependentDialects = ["vector::VectorDialect"];
}

def MhaOmpSchedule : Pass<"mha-omp-schedule", "func::FuncOp"> {
  let summary = "Set the schedule of the OpenMP worksharing loops";
  let description = [{
    Sets `schedule_kind` on every `omp.wsloop` that convert-scf-to-openmp
    made (it gives them the default, static, which is also the pipeline's
    default). With `dynamic` or `guided`, the threads take iterations as they
    come free, so a thread that starts late (woken from sleep by a call's
    first parallel region) or shares its core with another process does
    not hold up the loop; `runtime` leaves the choice to `OMP_SCHEDULE`.
    Each iteration computes its own tile in its own order, so the results
    do not depend on the schedule or the thread count.
  }];
  let options = [
    Option<"schedule", "schedule", "std::string", /*default=*/"\"static\"",
           "static, dynamic, guided or runtime (OMP_SCHEDULE)">,
  ];
  let dependentDialects = ["omp::OpenMPDialect"];
}

#endif // MHA_COMPILER_WORKAROUNDS_WORKAROUNDPASSES_TD
