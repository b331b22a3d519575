//===- AttentionPasses.td - The attention tiling pass ------*- tablegen -*-===//
//
// mha-tile-attention: mha.sdpa into fused, parallel attention. Included by compiler/Passes.td, so that
// one generated header declares every pass.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_ATTENTION_ATTENTIONPASSES_TD
#define MHA_COMPILER_ATTENTION_ATTENTIONPASSES_TD

include "mlir/Pass/PassBase.td"

def MhaTileAttention : Pass<"mha-tile-attention", "func::FuncOp"> {
  let summary = "Tile mha.sdpa into fused flash-style attention: parallel "
                "query tiles, key blocks with online softmax";
  let description = [{
    Rewrites each `mha.sdpa` (f32) into an `scf.forall` over
    (batch, head, query tile of `query_tile` rows), made by
    `scf::tileUsingSCF` through mha.sdpa's `TilingInterface` (an external
    model, compiler/attention/SdpaTilingInterface.cpp); with `causal` the
    tiles are then visited in a balanced order (0, n-1, 1, n-2, ...). Each
    tile, mha.sdpa's tiled implementation, slices its
    queries, its rows of the mask and its key/value head (query head `h`
    reads head `h / (H / Hkv)` as a view) and runs an `scf.for` over key
    blocks of `key_tile` keys that carries the running row maximum `m`, the
    running sum `l` and the unnormalized output `acc` (all f32) and updates
    them with an explicit online softmax:
    `m_new = max(m, rowmax(s))`, `corr = m == m_new ? 1 : exp(m - m_new)`,
    `p = allowed ? exp(s - m_new) : 0`, `l = l·corr + rowsum(p)`,
    `acc = acc·corr + p·V`; the tile's output is `l == 0 ? 0 : acc / l`, so
    a row that may attend no key gives exactly 0.

    The score matrix never exists: one `[query_tile, key_tile]` block of it
    per tile, in scratch tensors that the key loop carries (allocated once
    per tile). With `causal`, the key loop stops at the tile's last query
    (blocks wholly above the diagonal are never visited) and only blocks
    that cross the diagonal test key <= query. Dynamic batch and sequence
    sizes and remainder tiles are handled at run time.

    With `key_splits` P > 1 (few query tiles, e.g. decoding one token of
    one head), the keys are also split into P ranges of whole blocks, run
    in parallel, and their states are merged in a fixed order (the result
    does not depend on the thread count).

    The sizes are the op's `mha.tiles` (`mha-strategy`, which
    the pipelines run first); an op without them gets the strategy's
    choice for this machine.

    With `attention=auto`, only the `mha.sdpa` ops for which the per-shape
    rule picks the fused path are tiled (docs/pipeline.md), and with
    `attention=decomposed` none; the others are left to
    `mha-lower-to-linalg`.
  }];
  let options = [
    Option<"amxSplit", "amx-split", "bool", /*default=*/"false",
           "For mha.sdpa ops marked mha.bf16_layer whose shapes allow it "
           "(SdpaTiling::canPack), pack the keys and values in bf16 hi and "
           "lo pairs and mark Q*K^T and P*V mha.amx_split "
           "(mha-amx-split)">,
    Option<"groupQueryHeads", "group-query-heads", "bool", /*default=*/"true",
           "One query per sequence with grouped-query heads: the query "
           "heads of each key/value head as the rows of one tile "
           "(GroupedQueries.h)">,
    Option<"attention", "attention", "mlir::mha::AttentionMode",
           /*default=*/"mlir::mha::AttentionMode::Fused",
           "Which mha.sdpa ops to tile",
           [{::llvm::cl::values(
             clEnumValN(mlir::mha::AttentionMode::Fused, "fused", "all"),
             clEnumValN(mlir::mha::AttentionMode::Auto, "auto",
                        "those the per-shape rule picks"),
             clEnumValN(mlir::mha::AttentionMode::Decomposed, "decomposed",
                        "none (left to mha-lower-to-linalg)"))}]>,
  ];
  let dependentDialects = [
    "affine::AffineDialect",
    "arith::ArithDialect",
    "bufferization::BufferizationDialect",
    "linalg::LinalgDialect",
    "math::MathDialect",
    "scf::SCFDialect",
    "tensor::TensorDialect",
  ];
}

#endif // MHA_COMPILER_ATTENTION_ATTENTIONPASSES_TD
