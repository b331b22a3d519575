//===- Passes.td - Passes of the mha compiler ----------------*- tablegen -*-===//
//
// Every pass of the compiler, declared in the folder of the stage it belongs
// to, in the order of the pipeline's stages (docs/pipeline.md).
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_PASSES_TD
#define MHA_COMPILER_PASSES_TD

include "compiler/strategy/StrategyPasses.td"
include "compiler/graph/GraphPasses.td"
include "compiler/lowering/LoweringPasses.td"
include "compiler/attention/AttentionPasses.td"
include "compiler/codegen/CodegenPasses.td"
include "compiler/workarounds/WorkaroundPasses.td"

#endif // MHA_COMPILER_PASSES_TD
