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

#endif // MHA_COMPILER_PASSES_TD
