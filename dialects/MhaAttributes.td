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
    `mha.tiles` by `mha-attention-strategy` (as IREE records a
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

#endif // MHA_ATTRIBUTES_TD
