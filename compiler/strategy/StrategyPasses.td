//===- StrategyPasses.td - The target and the strategy --*- tablegen -*-===//
//
// The target a module is compiled for (mha-set-target), the sizes derived
// from it (mha-strategy) and their removal once read
// (mha-drop-codegen-sizes). Included by compiler/Passes.td, so that one
// generated header declares every pass.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_STRATEGY_STRATEGYPASSES_TD
#define MHA_COMPILER_STRATEGY_STRATEGYPASSES_TD

include "mlir/Pass/PassBase.td"

def MhaStrategy : Pass<"mha-strategy", "ModuleOp"> {
  let summary = "Record the tile and register-block sizes for the target "
                "(mha.codegen on each function, mha.tiles on each mha.sdpa)";
  let description = [{
    The strategy step, as IREE's lowering-strategy selection sets a
    `translation_info` on each dispatch function and a `lowering_config` on
    its root ops. From the rule in `compiler/strategy/Strategy.h`
    (docs/pipeline.md, "Sizes from the target") for the module's
    `mha.target` (`mha-set-target`; a module without one gets the sizes of
    the default description, an AVX-512 core with 48 KiB of L1 and 2 MiB
    of L2, never those of the machine it runs on), each option that is set
    taking the place of its size, it records:

    - on each function with a body that has none, `mha.codegen`, an
      `#mha.codegen_sizes`: the register block and the projections'
      parallel tile, which `mha-tile-projections`, `mha-weight-layouts`,
      `mha-bf16-dot`, `mha-bf16-amx`, `mha-vectorize` and
      `mha-unroll-reductions` read, and the sizes of `mha-batch-chunks`,
      `mha-bf16-amx`, `mha-bf16-dot`, `mha-stack-scratch` and
      `mha-outline-register-blocks` (their own options, where set,
      override the record; where neither is there they fail, but
      `mha-outline-register-blocks`, which takes 256);
    - on the same record, `bf16_path`: the path of the bf16 projections
      that `bf16-dot` asks for, where `auto` is the target's (AMX where it
      has AMX-BF16, vdpbf16ps where it runs it at the FMA's rate, AMD's
      Zen 4 and later, else f32), which the bf16 passes follow;
    - on each `mha.sdpa` that has none, `mha.tiles`, an
      `#mha.attention_tiles<query_tile, key_tile, key_splits>`, which
      `mha-tile-attention` and the op's `TilingInterface` read
      (compiler/strategy/AttentionStrategy.h): the query tile and key
      block (with `causal` and one key range, the key block cut down to a
      divisor of the query tile, so that every causal block is whole), and
      `key-splits` key ranges where B·H·⌈T/BQ⌉ (static) is smaller, bounded
      by the number of key blocks, else 1 (top-left causal attention, whose
      queries see only their own prefix, is never split).

    The named pipelines run it first (for mha-batch-chunks) and again once
    the attention is expanded and the prepare functions exist. Sizes already recorded
    (written in a graph, for one function or one attention) are kept.
  }];
  let options = [
    Option<"queryTile", "query-tile", "int64_t", /*default=*/"0",
           "Queries per parallel tile of the fused attention (BQ; 0: the "
           "target's)">,
    Option<"keyTile", "key-tile", "int64_t", /*default=*/"0",
           "Keys per block of the online softmax (BK; 0: the target's)">,
    Option<"keySplits", "key-splits", "int64_t",
           /*default=*/"mlir::mha::kDefaultKeySplits",
           "Key ranges run in parallel when there are fewer query tiles "
           "(1: never)">,
    Option<"lanes", "lanes", "int64_t", /*default=*/"0",
           "f32 elements of one vector register (0: the target's)">,
    Option<"registerRows", "register-rows", "int64_t", /*default=*/"0",
           "Rows of a contraction's register block (0: the target's)">,
    Option<"registerCols", "register-cols", "int64_t", /*default=*/"0",
           "Columns of a contraction's register block (0: the target's)">,
    Option<"registerUnroll", "register-unroll", "int64_t", /*default=*/"0",
           "Reduction steps per iteration of a register block's loop (0: "
           "the target's)">,
    Option<"maxVectorLength", "max-vector-length", "int64_t",
           /*default=*/"0",
           "Longest vector along the last loop of a non-contraction op (0: "
           "the target's)">,
    Option<"projectionRowTile", "projection-row-tile", "int64_t",
           /*default=*/"-1",
           "Rows per parallel tile of the projections (-1: the target's; 0: "
           "all)">,
    Option<"projectionColTile", "projection-col-tile", "int64_t",
           /*default=*/"-1",
           "Columns per parallel tile of the projections (-1: the target's; "
           "0: all)">,
    Option<"bf16Dot", "bf16-dot", "mlir::mha::BF16DotMode",
           /*default=*/"mlir::mha::BF16DotMode::Auto",
           "The path of the bf16 projections",
           [{::llvm::cl::values(
             clEnumValN(mlir::mha::BF16DotMode::Auto, "auto",
                        "the target's: AMX where it has AMX-BF16, vdpbf16ps "
                        "on AMD Zen 4 and later, else f32"),
             clEnumValN(mlir::mha::BF16DotMode::Amx, "amx", "AMX tiles"),
             clEnumValN(mlir::mha::BF16DotMode::Avx512, "avx512",
                        "vdpbf16ps register blocks"),
             clEnumValN(mlir::mha::BF16DotMode::Off, "off",
                        "f32 on widened values"))}]>,
  ];
  let dependentDialects = ["mha::MhaDialect"];
}

def MhaSetTarget : Pass<"mha-set-target", "ModuleOp"> {
  let summary = "Record the CPU the module is compiled for (mha.target)";
  let description = [{
    Sets `mha.target`, an `#mha.target` (its features, vector registers,
    caches and cores), on a module that has none: the CPU LLVM calls
    `cpu` (`haswell`, `znver4`, `sapphirerapids`: its features from LLVM's
    x86 target parser, the caches of its family, which LLVM does not know),
    or by default this machine's (its features, and the caches and cores
    it reports). A module that has one keeps it. The named pipelines run
    it first; `mha-strategy` is the one pass that reads the target.
  }];
  let options = [
    Option<"cpu", "cpu", "std::string", /*default=*/"\"host\"",
           "LLVM's name of the CPU, or host (this machine's)">,
    Option<"amx", "amx", "bool", /*default=*/"true",
           "Keep the CPU's AMX features (false where the process that runs "
           "the code may not use the AMX tile data)">,
  ];
  let dependentDialects = ["mha::MhaDialect"];
}

def MhaDropCodegenSizes : Pass<"mha-drop-codegen-sizes", "ModuleOp"> {
  let summary = "Remove the mha.codegen and mha.target records once the "
                "code is generated";
  let description = [{
    Removes `mha.codegen` from every function and `mha.target` from the
    module. The named pipelines run it once the last pass that reads the
    record has run (the end of `mha-to-loops`; in `mha-to-llvm`, after
    `mha-outline-register-blocks`): their output is read by upstream tools
    (`mlir-runner`, `mlir-translate`) that do not know the mha dialect's
    attributes.
  }];
}

#endif // MHA_COMPILER_STRATEGY_STRATEGYPASSES_TD
