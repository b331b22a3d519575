//===- Passes.td - Passes of the mha compiler ----------------*- tablegen -*-===//

#ifndef MHA_COMPILER_PASSES_TD
#define MHA_COMPILER_PASSES_TD

include "mlir/Pass/PassBase.td"

def MhaExpand : Pass<"mha-expand", "func::FuncOp"> {
  let summary = "Rewrite mha.attention into the five steps of the layer";
  let description = [{
    Replaces each `mha.attention` by `mha.project` (Q, K, V),
    `mha.split_heads`, `mha.sdpa`, `mha.concat_heads` and
    `mha.output_project`. In the split-first form the input is split into
    head slices before the per-head projections, so no `split_heads` follows
    them. Later passes work on the five ops, so that a graph written step by
    step and one written as a single op compile the same way.
  }];
  let dependentDialects = ["mha::MhaDialect"];
}

def MhaLowerToLinalg : Pass<"mha-lower-to-linalg", "func::FuncOp"> {
  let summary = "Lower the five steps of the layer to linalg on tensors";
  let description = [{
    Rewrites `mha.project`, `mha.split_heads`, `mha.sdpa`,
    `mha.concat_heads` and `mha.output_project` into `linalg`, `tensor`,
    `arith` and `math` ops on tensors:

    - projections become a `linalg.matmul` over the rows of the input
      (collapsed to 2-D; batch and sequence sizes may be dynamic) into the
      bias broadcast along the rows (`linalg.broadcast`) or zeros
      (`linalg.fill`); per-head projections and the output projection of
      the heads `[B, H, T, dv]` become `linalg.generic` contractions;
    - splitting and concatenating heads become `tensor.expand_shape` /
      `tensor.collapse_shape` and a `linalg.transpose`;
    - `mha.sdpa` is decomposed into the score contraction, an explicit
      numerically safe softmax and the contraction with the values.
      Grouped-query attention reads key/value head `h floordiv (H / Hkv)`
      through the indexing maps, so keys and values are never copied per
      query head. Masked keys get exactly zero weight, and a query row
      that may attend to no key gives zeros, never NaN.

    Only `f32` is lowered: any other element type is reported as an error.
    `mha.attention` must have been expanded first (`mha-expand`); every mha
    op left is an error.
  }];
  let dependentDialects = [
    "arith::ArithDialect",
    "linalg::LinalgDialect",
    "math::MathDialect",
    "tensor::TensorDialect",
  ];
}

def MhaEmitCInterface : Pass<"mha-emit-c-interface", "func::FuncOp"> {
  let summary = "Ask for a C-callable wrapper of every public function";
  let description = [{
    Sets `llvm.emit_c_interface` on every public function with a body, so
    that `convert-func-to-llvm` also emits `_mlir_ciface_<name>`: a wrapper
    that takes each memref as a pointer to its descriptor and returns a
    memref result through a first, out pointer argument. This is the entry
    point that the runtime calls. It also removes the `mha.name` argument
    attributes, which only bind inputs and which the LLVM translation does not
    know.
  }];
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

#endif // MHA_COMPILER_PASSES_TD
