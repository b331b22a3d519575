//===- MhaOnlineAttention.td - The online-softmax state ops --*- tablegen -*-===//
//
// The ops of the dialect that only the compiler makes, the states of the
// online softmax: kept apart from MhaOps.td so that the graph ops' users do
// not depend on them.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_ONLINE_ATTENTION_TD
#define MHA_ONLINE_ATTENTION_TD

include "dialects/MhaDialect.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// mha.online_attention
//===----------------------------------------------------------------------===//

def Mha_OnlineAttentionOp : Mha_Op<"online_attention", [Pure,
    AttrSizedOperandSegments, DestinationStyleOpInterface]> {
  let summary = "the online-softmax update of one query tile by a range of "
                "keys";
  let description = [{
    The running state of flash attention for the `tq` queries of one head,
    updated by the keys `[key_start, key_start + n)`: with the scores
    `s = Q · Kᵀ · scale · log2(e)` (only where the mask and, with `causal`,
    `key ≤ query + causal_offset` allow; base 2, so that
    `2^(s − max) = e^(Q · Kᵀ · scale − max · ln 2)`),

    - `max = max(max_in, rowmax(s))`,
    - `sum = sum_in · 2^(max_in − max) + rowsum(2^(s − max))`,
    - `acc = acc_in · 2^(max_in − max) + 2^(s − max) · V`,

    and the attention of the tile is `acc / sum` once every key is in (see
    `docs/pipeline.md`). It is what `mha-tile-attention` makes of one query
    tile of `mha.sdpa`, the destination-style form that IREE's LinalgExt
    calls `online_attention`: the keys are a reduction whose tiles update
    the same state, so tiling them (`TilingInterface`) makes the key loop,
    and each tile decomposes into linalg ops on tensors.

    - `query [tq, dk]` (f32), `key [n, dk]` and `value [n, dv]` (f32, or
      bf16 read from a cache and widened per block, or the i8 codes of an
      int8 cache, each with its `key_scales` or `value_scales [n]` (f32,
      one per key), dequantized per block: `code · scale`); `keys_t [dk, n]` (f32),
      where given, are the same keys transposed once for every tile of a
      head; `mask [tq, n]` (`i1`, `true` = may attend).
    - With `packed`, `keys_t` and `value` hold the keys and values as AMX's
      B operands of Q·Kᵀ and P·V, in bf16 hi and lo parts
      (`hi = bf16(x)`, `lo = bf16(x - hi)`): row `2i` of `keys_t` holds at
      column `j` the pair `(hi(K[j, 2i]), hi(K[j, 2i+1]))` as the bits of
      one f32, row `2i + 1` the pair of their lo parts; row `2i` of `value`
      holds at column `n` the pair `(hi(V[2i, n]), hi(V[2i+1, n]))`, row
      `2i + 1` their lo parts. Both products are then those of the hi and
      lo parts of their f32 operands, less `lo · lo`: about 16 bits of
      each (`mha-amx-split`).
    - `query_start` and `key_start` are the positions of the first query and
      the first key in the sequence, which causality compares; query `i`
      sees key `j` when `key_start + j ≤ query_start + i + causal_offset`
      (0 when absent). Without `causal`, `window` or `slope` they are not
      read. With `shared_position`, every row is one query at
      `query_start + causal_offset` (a decoding step's query heads of one
      key/value head as the rows: GroupedQueries.h), so that `p_i` and
      causality do not depend on `i`.
    - The score steps, on the query at position
      `p_i = query_start + i + causal_offset` and the key at
      `key_start + j`: with a `score_mod` region, each score becomes
      `score_mod(s · scale, x..., p_i, key_start + j)` with `x` the score's
      elements of the `score_inputs` (`[tq or 1, n]` f32 each, sliced with
      the keys: the tile's rows of a bias), and the state's exponentials
      are those of the modified scores (base 2 of `(s' − max) · log2(e)`,
      and `max` their maximum). The region is where `mha-tile-attention`
      puts mha.sdpa's softcap, ALiBi, bias and `score_mod` steps, and may
      read values defined above it (the head's ALiBi slope). `window(%w)`
      (index) lets key `j` be seen only when `p_i − w < key_start + j`,
      in every block. A row whose allowed scores are all −inf keeps
      `max = −inf` and weighs nothing.
    - `outs`: `max [tq]`, `sum [tq]`, `acc [tq, dv]`, all f32, the state
      before and (the first three results) after the keys.
    - `scratch`: the per-block buffers `scores [BQ, BK]`, `keys [dk, BK]`
      (`[BK, dk]` for one query without `keys_t`), `new_max [BQ]`,
      `correction [BQ]` and, with bf16 or i8 keys or values, `widened
      [BK, max(dk, dv)]` (a bf16 block widened to f32: the keys where
      several queries read them transposed, then the values), at least as
      large as one block; their results hold nothing of use. They are
      destinations so that the key loop carries them and bufferization
      allocates them once per tile, not once per key block.

    ```mlir
    %r:7 = mha.online_attention ins(%q, %k, %v) query_start(%i)
        key_start(%c0) scale(1.250000e-01)
        outs(%max, %sum, %acc) scratch(%s, %kt, %nm, %corr)
        : (tensor<64x64xf32>, tensor<512x64xf32>, tensor<512x64xf32>, index,
           index, tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>,
           tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
           tensor<64xf32>)
        -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>,
            tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>,
            tensor<64xf32>)
    ```
  }];
  let arguments = (ins
      RankedTensorOf<[F32]>:$query, RankedTensorOf<[F32, BF16, I8]>:$key,
      RankedTensorOf<[F32, BF16, I8]>:$value,
      Optional<RankedTensorOf<[F32]>>:$keys_t,
      Optional<RankedTensorOf<[I1]>>:$mask, Index:$query_start,
      Index:$key_start, Optional<Index>:$causal_offset,
      Variadic<RankedTensorOf<[F32]>>:$score_inputs,
      Optional<Index>:$window, F64Attr:$scale, UnitAttr:$causal, UnitAttr:$packed,
      UnitAttr:$shared_position,
      Optional<RankedTensorOf<[F32]>>:$key_scales,
      Optional<RankedTensorOf<[F32]>>:$value_scales, RankedTensorOf<[F32]>:$max,
      RankedTensorOf<[F32]>:$sum, RankedTensorOf<[F32]>:$acc,
      RankedTensorOf<[F32]>:$scores, RankedTensorOf<[F32]>:$keys_scratch,
      RankedTensorOf<[F32]>:$new_max, RankedTensorOf<[F32]>:$correction,
      Optional<RankedTensorOf<[F32]>>:$widened_scratch);
  let results = (outs Variadic<RankedTensorOf<[F32]>>:$results);
  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `)`
    (`keys_t` `(` $keys_t^ `)`)? (`mask` `(` $mask^ `)`)?
    `query_start` `(` $query_start `)` `key_start` `(` $key_start `)`
    (`causal_offset` `(` $causal_offset^ `)`)? `scale` `(` $scale `)`
    (`score_inputs` `(` $score_inputs^ `)`)? (`window` `(` $window^ `)`)?
    (`causal` $causal^)? (`packed` $packed^)?
    (`shared_position` $shared_position^)?
    (`key_scales` `(` $key_scales^ `)`)?
    (`value_scales` `(` $value_scales^ `)`)?
    `outs` `(` $max `,` $sum `,` $acc `)`
    `scratch` `(` $scores `,` $keys_scratch `,` $new_max `,` $correction
    (`,` $widened_scratch^)? `)`
    (`score_mod` $score_mod^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let regions = (region VariadicRegion<MaxSizedRegion<1>>:$score_mod);
  let extraClassDeclaration = [{
    /// max, sum, acc and the scratch are the destinations
    /// (DestinationStyleOpInterface), in this order.
    MutableOperandRange getDpsInitsMutable();
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// mha.sdpa_split
//===----------------------------------------------------------------------===//

def Mha_SdpaSplitOp : Mha_Op<"sdpa_split", [Pure, AttrSizedOperandSegments,
    DestinationStyleOpInterface]> {
  let summary = "the online-softmax state of every query of mha.sdpa over "
                "one of its key splits";
  let description = [{
    What one key split of `mha.sdpa` computes when its keys are split into
    `splits` ranges (`mha-tile-attention`'s `key-splits`, for few query
    tiles): for every batch element `b`, head `h` and query `t`, the
    unnormalized state of the online softmax (see `mha.online_attention`)
    over the keys of split `split`,

    - `max[b, h, t]`: the largest allowed score (−inf where none is),
    - `sum[b, h, t]`: `Σ 2^(s − max)` over the allowed keys,
    - `acc[b, h, t, :]`: `Σ 2^(s − max) · V[key, :]`,

    where the scores `s = Q · Kᵀ · scale · log2(e)` are those `mha.sdpa`
    computes, in base 2 as `mha.online_attention` has them, with the same
    operands and flags (`mask`, `causal`, `causal_bottom_right`,
    `positions` and the score steps `softcap`, `alibi`, `bias`, `window`,
    `score_mod`;
    with any of the first three the states are over the modified scores,
    scale 1; a sink joins the merge, not the splits), and query head `h`
    reads key/value head `h / (H / Hkv)`. The merge of the splits' states, in split order, is
    `mha.sdpa`'s result.

    Split `p` takes whole blocks of `key_block` keys: `[p · chunk,
    min(E, (p + 1) · chunk))` with `chunk = ⌈⌈E / key_block⌉ / splits⌉ ·
    key_block`, where `E` is the number of keys (`S`), or with `positions`
    the keys that sequence `b` may see, `clamp(positions[b] + T, 0, S)`.

    - `query [B, H, T, dk]` (f32), `key [B, Hkv, S, dk]` and
      `value [B, Hkv, S, dv]` (f32, or bf16 read from a cache and widened
      per key block, or the i8 codes of an int8 cache with their
      `key_scales` or `value_scales [B, Hkv, S]`, dequantized per key
      block), `mask [B or 1, T, S]` (`i1`, `true` = may attend),
      `positions [B]` (`i64`);
    - `outs`: `acc [B, H, T, dv]`, `max [B, H, T]`, `sum [B, H, T]`, all
      f32, overwritten (the results).

    It implements `TilingInterface` over `(b, h, t)`: a tile of one batch
    element and one head runs the key blocks of its split for its queries,
    `mha.online_attention` tiled over the keys.

    ```mlir
    %r:3 = mha.sdpa_split %q, %k, %v split(%p) splits(4) key_block(64)
        scale(1.250000e-01) causal causal_bottom_right
        outs(%acc, %max, %sum)
        : (tensor<1x8x1x64xf32>, tensor<1x8x4096x64xf32>,
           tensor<1x8x4096x64xf32>, index, tensor<1x8x1x64xf32>,
           tensor<1x8x1xf32>, tensor<1x8x1xf32>)
        -> (tensor<1x8x1x64xf32>, tensor<1x8x1xf32>, tensor<1x8x1xf32>)
    ```
  }];
  let arguments = (ins
      RankedTensorOf<[F32]>:$query, RankedTensorOf<[F32, BF16, I8]>:$key,
      RankedTensorOf<[F32, BF16, I8]>:$value,
      Optional<RankedTensorOf<[I1]>>:$mask,
      Optional<RankedTensorOf<[I64]>>:$positions,
      Optional<RankedTensorOf<[F32]>>:$attn_bias,
      Optional<RankedTensorOf<[F32]>>:$alibi_slopes,
      Optional<RankedTensorOf<[F32]>>:$key_scales,
      Optional<RankedTensorOf<[F32]>>:$value_scales, Index:$split,
      ConfinedAttr<I64Attr, [IntMinValue<2>]>:$splits,
      ConfinedAttr<I64Attr, [IntMinValue<1>]>:$key_block, F64Attr:$scale,
      OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$window,
      OptionalAttr<F32Attr>:$softcap,
      UnitAttr:$causal, UnitAttr:$causal_bottom_right,
      RankedTensorOf<[F32]>:$acc, RankedTensorOf<[F32]>:$max,
      RankedTensorOf<[F32]>:$sum);
  let results = (outs RankedTensorOf<[F32]>:$acc_result,
                      RankedTensorOf<[F32]>:$max_result,
                      RankedTensorOf<[F32]>:$sum_result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `)`)?
    (`positions` `(` $positions^ `)`)?
    `split` `(` $split `)` `splits` `(` $splits `)`
    `key_block` `(` $key_block `)` `scale` `(` $scale `)`
    (`softcap` `(` $softcap^ `)`)? (`alibi` `(` $alibi_slopes^ `)`)?
    (`bias` `(` $attn_bias^ `)`)? (`window` `(` $window^ `)`)?
    (`causal` $causal^)? (`causal_bottom_right` $causal_bottom_right^)?
    (`key_scales` `(` $key_scales^ `)`)?
    (`value_scales` `(` $value_scales^ `)`)?
    `outs` `(` $acc `,` $max `,` $sum `)`
    (`score_mod` $score_mod^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let regions = (region VariadicRegion<MaxSizedRegion<1>>:$score_mod);
  let extraClassDeclaration = [{
    /// acc, max and sum are the destinations (DestinationStyleOpInterface).
    MutableOperandRange getDpsInitsMutable();
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

#endif // MHA_ONLINE_ATTENTION_TD
