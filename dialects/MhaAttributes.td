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
      tile, 0 (the whole dimension) to 4096.

    ```mlir
    func.func @layer(...) attributes {mha.codegen = #mha.codegen_sizes<lanes = 16, register_rows = 6, register_cols = 64, register_unroll = 2, max_vector_length = 256, projection_rows = 48, projection_cols = 128>}
    ```
  }];
  let parameters = (ins "int64_t":$lanes, "int64_t":$register_rows,
                        "int64_t":$register_cols, "int64_t":$register_unroll,
                        "int64_t":$max_vector_length,
                        "int64_t":$projection_rows, "int64_t":$projection_cols);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // MHA_ATTRIBUTES_TD
