//===- LoweringPasses.td - The lowering to linalg ----------*- tablegen -*-===//
//
// The lowering of the mha ops to linalg. Included by compiler/Passes.td, so that
// one generated header declares every pass.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_LOWERING_LOWERINGPASSES_TD
#define MHA_COMPILER_LOWERING_LOWERINGPASSES_TD

include "mlir/Pass/PassBase.td"

def MhaLowerToLinalg : Pass<"mha-lower-to-linalg", "func::FuncOp"> {
  let summary = "Lower the five steps of the layer to linalg on tensors";
  let description = [{
    Rewrites `mha.project`, `mha.split_heads`, `mha.sdpa`,
    `mha.concat_heads` and `mha.output_project` into `linalg`, `tensor`,
    `arith` and `math` ops on tensors:

    - projections become a `linalg.matmul` over the rows of the input
      (collapsed to 2-D; batch and sequence sizes may be dynamic) into the
      bias broadcast along the rows (`linalg.broadcast`) or zeros
      (`linalg.fill`); projections that write heads (`heads(H)`, per-head
      weights) and the output projection of the heads `[B, H, T, dv]`
      become `linalg.generic` contractions whose indexing maps read and
      write the head layout in place. Each projection's contraction carries
      the `mha.projection` unit attribute, which `mha-tile-projections`
      looks for;
    - `mha.cache_append` becomes an `scf.for` over the sequences that
      inserts each one's rows at its length (`tensor.insert_slice` into the
      carried cache, in place once bufferized), skipping a sequence whose
      rows do not fit (length < 0 or length + T > C);
    - `mha.sdpa` with `positions` tests key <= position[b] + query;
    - splitting and concatenating heads become `tensor.expand_shape` /
      `tensor.collapse_shape` and a `linalg.transpose`;
    - `mha.sdpa` is decomposed into the score contraction, an explicit
      numerically safe softmax and the contraction with the values.
      Grouped-query attention reads key/value head `h floordiv (H / Hkv)`
      through the indexing maps, so keys and values are never copied per
      query head. Masked keys get exactly zero weight, and a query row
      that may attend to no key gives zeros, never NaN. The scalar bodies
      of these steps (masked maximum and exponential, causal predicate,
      normalization) and the GQA head map are those of the fused path
      (compiler/utils/AttentionMath.h), so the paths cannot disagree.

    Only `f32` is lowered: any other element type is reported as an error.
    `mha.attention` must have been expanded first (`mha-expand`); every mha
    op left is an error.
  }];
  let dependentDialects = [
    "arith::ArithDialect",
    "linalg::LinalgDialect",
    "math::MathDialect",
    "scf::SCFDialect",
    "tensor::TensorDialect",
  ];
}

#endif // MHA_COMPILER_LOWERING_LOWERINGPASSES_TD
