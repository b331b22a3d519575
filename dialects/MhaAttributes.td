//===- MhaAttributes.td - Attributes of the mha dialect ----*- tablegen -*-===//

#ifndef MHA_ATTRIBUTES_TD
#define MHA_ATTRIBUTES_TD

include "dialects/MhaDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Mha_AttentionTilesAttr : AttrDef<Mha_Dialect, "AttentionTiles"> {
  let mnemonic = "attention_tiles";
  let summary = "The tile sizes of one fused attention";
  let description = [{
    How `mha-tile-attention` cuts one `mha.sdpa`, recorded on it as
    `mha.tiles` by `mha-strategy` (as IREE records a
    `lowering_config` on the ops it tiles), so that the tiling and the
    op's `TilingInterface` read the sizes off the op rather than off pass
    options, and a graph may fix them for one attention:

    - `query_tile`: queries per parallel tile (BQ), 1 to 4096;
    - `key_tile`: keys per block of the online softmax (BK), 1 to 4096;
    - `key_splits`: key ranges run in parallel and merged (1: none), 1 to
      1024.

    ```mlir
    %o = mha.sdpa %q, %k, %v {mha.tiles = #mha.attention_tiles<query_tile = 64, key_tile = 128, key_splits = 1>} : ...
    ```
  }];
  let parameters = (ins "int64_t":$query_tile, "int64_t":$key_tile,
                        "int64_t":$key_splits);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Mha_CodegenSizesAttr : AttrDef<Mha_Dialect, "CodegenSizes"> {
  let mnemonic = "codegen_sizes";
  let summary = "The code generation sizes of one function";
  let description = [{
    The sizes the code generation passes use in one function, from the CPU
    it is compiled for, recorded on it as `mha.codegen` by
    `mha-strategy` (as IREE records a `translation_info` on a
    dispatch function), so that `mha-tile-projections`, `mha-vectorize`,
    `mha-weight-layouts` and the bf16 projection passes read them off the
    function rather than off their own options:

    - `lanes`: f32 elements of one vector register, 1 to 64;
    - `register_rows`, `register_cols`: a contraction's register block,
      1 to 64 each;
    - `register_unroll`: reduction steps per iteration of its loop, 1 to 16;
    - `max_vector_length`: the longest vector along the last loop of any
      other op, 1 to 4096;
    - `projection_rows`, `projection_cols`: the projections' parallel
      tile, 0 (the whole dimension) to 4096;

    and the sizes of single passes, each 0 where not recorded (the pass
    then needs its option set):

    - `chunk_bytes`, `chunk_rows`: `mha-batch-chunks`' `cache-bytes` and
      `min-rows`;
    - `amx_rows`, `amx_k_chunk`, `l1_bytes`: `mha-bf16-amx`'s `row-tile`
      (a multiple of 16), `k-chunk` and `l1-bytes`;
    - `bf16_lanes`: f32 lanes of `mha-bf16-dot`'s vectors, 4, 8 or 16;
    - `stack_bytes`: `mha-stack-scratch`'s `max-bytes`;
    - `outline_steps`: `mha-outline-register-blocks`' `min-steps`;
    - `query_tile`: the fused attention's query tile where no `mha.sdpa`
      carries one (an op that tiling or splitting the keys made);
    - `row_padding`: f32 elements added to each row of the padded weights
      (`mha-weight-layouts`) and transposed keys (`mha-tile-attention`);
    - `tail_keys`: keys per block of the online softmax's peeled last
      blocks, a power of two;
    - `bf16_path`: the path of the bf16 projections, `"f32"`, `"avx512"`
      (vdpbf16ps) or `"amx"`, which `mha-bf16-projections`,
      `mha-bf16-dot`, `mha-bf16-amx`, `mha-tile-attention`'s `amx-split`
      and `mha-bf16-pair-conversion` follow.

    ```mlir
    func.func @layer(...) attributes {mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 6, register_cols = 64, register_unroll = 2, max_vector_length = 256, projection_rows = 48, projection_cols = 128>}
    ```
  }];
  let parameters = (ins "int64_t":$lanes, "int64_t":$register_rows,
                        "int64_t":$register_cols, "int64_t":$register_unroll,
                        "int64_t":$max_vector_length,
                        "int64_t":$projection_rows, "int64_t":$projection_cols,
                        DefaultValuedParameter<"int64_t", "0">:$chunk_bytes,
                        DefaultValuedParameter<"int64_t", "0">:$chunk_rows,
                        DefaultValuedParameter<"int64_t", "0">:$amx_rows,
                        DefaultValuedParameter<"int64_t", "0">:$amx_k_chunk,
                        DefaultValuedParameter<"int64_t", "0">:$l1_bytes,
                        DefaultValuedParameter<"int64_t", "0">:$bf16_lanes,
                        DefaultValuedParameter<"int64_t", "0">:$stack_bytes,
                        DefaultValuedParameter<"int64_t", "0">:$outline_steps,
                        DefaultValuedParameter<"int64_t", "0">:$query_tile,
                        DefaultValuedParameter<"int64_t", "0">:$row_padding,
                        DefaultValuedParameter<"int64_t", "0">:$tail_keys,
                        StringRefParameter<"the bf16 path", [{""}]>:$bf16_path);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Mha_TargetAttr : AttrDef<Mha_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "The CPU a module is compiled for";
  let description = [{
    What the code generation needs to know of the CPU the module is
    compiled for, recorded on the module as `mha.target` by
    `mha-set-target` (the named pipelines run it first) and read by one
    pass, `mha-strategy`, which turns it into the sizes of
    `#mha.codegen_sizes` and `#mha.attention_tiles`:

    - `cpu`: LLVM's name of the CPU (`"sapphirerapids"`), or `""`;
    - `features`: the target features that change the code, LLVM's names,
      each at most once: `"avx2"`, `"fma"`, `"avx512f"`, `"avx512bf16"`,
      `"amx-tile"`, `"amx-bf16"` (`avx512bf16` needs `avx512f`, `amx-bf16`
      needs `amx-tile`);
    - `vector_bits`: the widest float vector register, 128, 256 or 512
      (512 with `avx512f` and only then);
    - `vector_registers`: 8 to 32 (32 with `avx512f`);
    - `l1_bytes`, `l2_bytes`: one core's data caches, 1 KiB to 1 GiB, the
      L2 at least the L1; `l3_bytes`: the shared cache, 0 when unknown;
    - `cores`: 0 when unknown.

    ```mlir
    module attributes {mha.target = #mha.target<cpu = "haswell", features = ["avx2", "fma"], vector_bits = 256, vector_registers = 16, l1_bytes = 32768, l2_bytes = 262144, l3_bytes = 0, cores = 0>} {...}
    ```
  }];
  let parameters = (ins StringRefParameter<"LLVM's CPU name">:$cpu,
                        "::mlir::ArrayAttr":$features,
                        "int64_t":$vector_bits, "int64_t":$vector_registers,
                        "int64_t":$l1_bytes, "int64_t":$l2_bytes,
                        "int64_t":$l3_bytes, "int64_t":$cores);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether `features` holds `name`.
    bool hasFeature(::llvm::StringRef name) const;
  }];
}

#endif // MHA_ATTRIBUTES_TD
