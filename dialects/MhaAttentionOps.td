//===- MhaAttentionOps.td - The attention ops of mha --------*- tablegen -*-===//
//
// mha.sdpa, mha.attention_weights and mha.attention, with their clauses and
// their score_mod region, and mha.yield that ends it. Included by
// MhaOps.td: one dialect, one generated file.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_ATTENTION_OPS_TD
#define MHA_ATTENTION_OPS_TD

include "dialects/MhaAttributes.td"
include "dialects/MhaDialect.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// mha.sdpa
//===----------------------------------------------------------------------===

def Mha_SdpaOp : Mha_Op<"sdpa", [Pure, AttrSizedOperandSegments,
    AllElementTypesMatch<["query", "key", "value"]>,
    InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "scaled dot-product attention of every head";
  let description = [{
    For each batch element `b` and query head `h`:
    `softmax(Q[b, h] · K[b, g]ᵀ · scale) · V[b, g]`, where `g = h / (H / Hkv)`
    is the key/value head that query head `h` reads (grouped-query attention
    when `Hkv < H`; multi-head when equal).

    - `query [B, H, T, dk]`, `key [B, Hkv, S, dk]`, `value [B, Hkv, S, dv]`;
      the result is `[B, H, T, dv]`. `H` must be a multiple of `Hkv`.
    - `scale` defaults to `1/√dk`.
    - `causal`: query `i` may attend key `j` only when `j ≤ i`, top-left
      aligned also when `S ≠ T` (PyTorch's `is_causal`).
    - `causal(bottom_right)`: query `i` may attend key `j` only when
      `j ≤ i + (S − T)`, so that the last query sees every key: the rule of
      decoding with a key/value cache and of FlashAttention-2. With `S < T`
      queries `i < T − S` see no key (zeros, by the rule below); with
      `S = T` the two alignments agree. Stored as the unit attributes
      `causal` and `causal_bottom_right`: a graph without the second reads as
      before.
    - `mask [B or 1, T, S]` (`i1`, `true` = may attend), combined with
      `causal` by "and"; a leading 1 broadcasts over the batch.
    - `causal positions(%len)` (`len : tensor<Bxi64>`, top-left `causal`
      only): decoding with a key/value cache of capacity `S`
      (`mha.cache_append`). Query `i` of sequence `b` sits at position
      `len[b] + i` and may attend key `j` only when `j ≤ len[b] + i`; keys
      past `len[b] + T − 1` are never read, so the unused capacity of the
      cache costs nothing. Each sequence has its own length (ragged
      batches).
    - A query row that may attend to no key gives zeros, never NaN.

    The score steps of the served models, each optional, applied in this
    order to the score `s = Q[b, h, i] · K[b, g, j]` of query `i` (at
    position `p_i`: `i`, `i + S − T` bottom-right, `positions[b] + i`) and
    key `j`:

    1. `s ← s · scale`;
    2. `softcap(c)`: `s ← c · tanh(s / c)` (Gemma 2);
    3. `alibi(%slopes)` (`[H]`): `s ← s + slopes[h] · (j − p_i)` (BLOOM);
    4. `bias(%b)` (`[B or 1, H or 1, T or 1, S]`, f32, −inf allowed):
       `s ← s + b[b, h, i, j]`, each dimension of 1 broadcast (a float
       attention mask, T5's relative bias, a padding mask);
    5. `score_mod`: a region that receives the score with its indices,
       `^bb0(%s: f32, %b: index, %h: index, %p: index, %j: index)` (the
       batch element, the query head, the query's position `p_i` and the
       key), and yields the new score with `mha.yield` (FlexAttention's
       `score_mod`): any variant the clauses do not name, in a few lines of
       IR. Its ops must have no side effects; it may read values defined
       above it (a table through `tensor.extract`), and −inf removes a key;
    6. `mask`, `causal` and `window(W)` (with `causal`: key `j` is seen
       only when `p_i − W < j`, W keys including the query's own): keys
       that fail any of them are not attended;
    7. `sinks(%s)` (`[H]`): a logit per head that joins each row's softmax
       denominator and weighs no value,
       `p_j = e^(s_j) / (Σ_k e^(s_k) + e^(s[h]))` (gpt-oss).

    A row with no finite score after step 6 gives zeros, sinks or not.
    Every path computes the same steps: the fused one applies them (the
    region cloned into each key block) to one block of scores at a time,
    and skips the key blocks that `causal` and `window` rule out; the
    decomposed one to the whole score matrix.

    ```mlir
    %o = mha.sdpa %q, %k, %v mask(%m) causal scale(0.125)
        : (tensor<2x8x16x64xf32>, tensor<2x2x16x64xf32>,
           tensor<2x2x16x64xf32>, tensor<1x16x16xi1>) -> tensor<2x8x16x64xf32>
    %d = mha.sdpa %q1, %kc, %vc causal(bottom_right)
        : (tensor<1x8x1x64xf32>, tensor<1x8x300x64xf32>,
           tensor<1x8x300x64xf32>) -> tensor<1x8x1x64xf32>
    %c = mha.sdpa %q1, %kc, %vc causal positions(%len)
        : (tensor<4x8x1x64xf32>, tensor<4x8x4096x64xf32>,
           tensor<4x8x4096x64xf32>, tensor<4xi64>) -> tensor<4x8x1x64xf32>
    // A learned bias per head and distance back to the key (distances past
    // 31 share the last entry), read from a table defined above the op.
    %r = mha.sdpa %q, %k, %v causal score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %p: index, %j: index):
      %back = arith.subi %p, %j : index
      %c31 = arith.constant 31 : index
      %bucket = arith.minui %back, %c31 : index
      %bias = tensor.extract %table[%h, %bucket] : tensor<8x32xf32>
      %t = arith.addf %s, %bias : f32
      mha.yield %t : f32
    } : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>,
         tensor<2x8x16x64xf32>) -> tensor<2x8x16x64xf32>
    ```
  }];
  let arguments = (ins Mha_HeadsTensor:$query, Mha_HeadsTensor:$key,
                       Mha_HeadsTensor:$value, Optional<Mha_MaskTensor>:$mask,
                       Optional<Mha_LengthsTensor>:$positions,
                       Optional<Mha_ScoreBiasTensor>:$attn_bias,
                       Optional<Mha_ParameterTensor>:$alibi_slopes,
                       Optional<Mha_ParameterTensor>:$sinks,
                       UnitAttr:$causal, UnitAttr:$causal_bottom_right,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<Mha_WindowAttr>:$window,
                       OptionalAttr<F32Attr>:$softcap);
  let results = (outs Mha_FloatTensor:$result);
  let regions = (region VariadicRegion<MaxSizedRegion<1>>:$score_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    custom<AttentionClauses>($mask, $causal, $causal_bottom_right, $positions,
                             $scale, $attn_bias, $alibi_slopes, $sinks,
                             $window, $softcap)
    (`score_mod` $score_mod^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    // The inferred builder with the causal flags as booleans; the score
    // steps as `steps` has them (none by default).
    OpBuilder<(ins "Value":$query, "Value":$key, "Value":$value,
                   "Value":$mask, "bool":$causal, "bool":$causalBottomRight,
                   "FloatAttr":$scale, CArg<"Value", "{}">:$positions,
                   CArg<"const ScoreSteps &", "ScoreSteps()">:$steps),
    [{
      build($_builder, $_state, query, key, value, mask, positions,
            steps.attnBias, steps.alibiSlopes, steps.sinks,
            causal ? $_builder.getUnitAttr() : nullptr,
            causalBottomRight ? $_builder.getUnitAttr() : nullptr, scale,
            steps.window, steps.softcap, steps.scoreMod ? 1 : 0);
      if (steps.scoreMod)
        steps.cloneScoreModInto(*$_state.regions.front());
    }]>
  ];
  let extraClassDeclaration = [{
    /// The result type the operands imply (`inferReturnTypes`), with the
    /// declared element type where the op may widen it (a bf16 layer's f32
    /// output); the operands must verify.
    RankedTensorType inferResultType();
    /// The scale applied to the scores: `scale` if set, else `1/√dk`.
    double getEffectiveScale();
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// mha.attention_weights
//===----------------------------------------------------------------------===//

def Mha_AttentionWeightsOp
    : Mha_Op<"attention_weights", [Pure, AttrSizedOperandSegments,
          AllElementTypesMatch<["query", "key"]>,
          InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "the softmax probabilities of `mha.sdpa`, for inspection";
  let description = [{
    The attention weights `softmax(Q[b, h] · K[b, g]ᵀ · scale)` that
    `mha.sdpa` with the same `query`, `key`, `mask`, `causal` (either
    alignment, or `positions`) and `scale` multiplies its values by: `query [B, H, T, dk]`, `key [B, Hkv, S, dk]`
    give `[B, H, T, S]`, row `t` of head `h` being the distribution of query
    `t` over the keys. Keys that may not be attended get exactly 0, and a
    query row that may attend to no key is all 0 (it sums to 0, not 1).

    This op is not part of a layer: `mha-extract-attention-weights` builds a
    function around it so that `mha-run --dump-attention` can show the maps
    without slowing down the layer itself.

    ```mlir
    %p = mha.attention_weights %q, %k mask(%m) causal
        : (tensor<1x4x9x16xf32>, tensor<1x4x9x16xf32>, tensor<1x9x9xi1>)
        -> tensor<1x4x9x9xf32>
    ```
  }];
  let arguments = (ins Mha_HeadsTensor:$query, Mha_HeadsTensor:$key,
                       Optional<Mha_MaskTensor>:$mask,
                       Optional<Mha_LengthsTensor>:$positions,
                       Optional<Mha_ScoreBiasTensor>:$attn_bias,
                       Optional<Mha_ParameterTensor>:$alibi_slopes,
                       Optional<Mha_ParameterTensor>:$sinks,
                       UnitAttr:$causal, UnitAttr:$causal_bottom_right,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<Mha_WindowAttr>:$window,
                       OptionalAttr<F32Attr>:$softcap);
  let results = (outs Mha_FloatTensor:$result);
  let regions = (region VariadicRegion<MaxSizedRegion<1>>:$score_mod);
  let assemblyFormat = [{
    $query `,` $key
    custom<AttentionClauses>($mask, $causal, $causal_bottom_right, $positions,
                             $scale, $attn_bias, $alibi_slopes, $sinks,
                             $window, $softcap)
    (`score_mod` $score_mod^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    // The weights of `sdpa`: its query, key, mask, causal (and alignment),
    // positions, scale and score steps.
    OpBuilder<(ins "SdpaOp":$sdpa), [{
      build($_builder, $_state, sdpa.getQuery(), sdpa.getKey(),
            sdpa.getMask(), sdpa.getPositions(), sdpa.getAttnBias(),
            sdpa.getAlibiSlopes(), sdpa.getSinks(), sdpa.getCausalAttr(),
            sdpa.getCausalBottomRightAttr(), sdpa.getScaleAttr(),
            sdpa.getWindowAttr(), sdpa.getSoftcapAttr(),
            sdpa->getNumRegions());
      if (Region *scoreMod = getScoreModRegion(sdpa))
        ScoreSteps::of(sdpa).cloneScoreModInto(*$_state.regions.front());
    }]>
  ];
  let extraClassDeclaration = [{
    /// The result type the operands imply (`inferReturnTypes`), with the
    /// declared element type where the op may widen it (a bf16 layer's f32
    /// output); the operands must verify.
    RankedTensorType inferResultType();
    /// The scale applied to the scores: `scale` if set, else `1/√dk`.
    double getEffectiveScale();
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// mha.attention
//===----------------------------------------------------------------------===//

def Mha_AttentionOp : Mha_Op<"attention", [Pure, AttrSizedOperandSegments,
    AllElementTypesMatch<["query", "w_q", "w_k", "w_v", "w_o"]>,
    Mha_OptionalElementTypeMatches<"kv", "getKv", "query">,
    Mha_OptionalElementTypeMatches<"b_q", "getBQ", "query">,
    Mha_OptionalElementTypeMatches<"b_k", "getBK", "query">,
    Mha_OptionalElementTypeMatches<"b_v", "getBV", "query">,
    Mha_OptionalElementTypeMatches<"b_o", "getBO", "query">,
    InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "a whole multi-head attention layer in one op";
  let description = [{
    `y = concat_h(sdpa(Q_h, K_g, V_g)) · w_o + b_o` with
    `Q = query · w_q + b_q`, `K = kv · w_k + b_k`, `V = kv · w_v + b_v`.

    - `query [B, T, D]`; `kv [B, S, D_kv]` for cross-attention (absent:
      self-attention, `kv` is `query`).
    - `w_q [D, H·dk]`, `w_k [D_kv, Hkv·dk]`, `w_v [D_kv, Hkv·dv]`,
      `w_o [H·dv, D_out]`; each bias `[columns of its weight]` is optional.
    - `heads(H)`, `kv_heads(Hkv)` (default `H`; `H` a multiple of `Hkv`),
      `causal`, `causal(bottom_right)`, `mask`, `scale`: as in `mha.sdpa`
      (`S` is the length of `kv`).
    - Split first: when `w_q`, `w_k`, `w_v` have rank 3 (`[H, D/H, dk]`,
      `[Hkv, D_kv/Hkv, dk]`, `[Hkv, D_kv/Hkv, dv]`), the input is cut into
      head slices first and head `h` projects its own slice.

    - The score steps `bias(%b)` (`[B or 1, H or 1, T or 1, S]`),
      `alibi(%slopes)`, `sinks(%s)` (`[H]`), `window(W)` and `softcap(c)`:
      as in `mha.sdpa`.
    - `q_norm(%wq) k_norm(%wk)` (`[dk]`, both or neither) with
      `qk_norm_eps(e)` (default 1e-6): `mha.rms_norm` of each head's Q and
      K after their projections (and biases).
    - `rope("half")` or `rope("interleaved")` with `rotary_dim(R)`
      (default dk), `rope_base(θ)` (default 10000), `rope_scale(s)`,
      `rope_mscale(m)` (default 1) and `rope_inv_freq(%f)` (`[R/2]`):
      `mha.rope` of Q and K at positions `0 … T − 1` (self-attention only),
      after the QK-norm.

    The result is `[B, T, D_out]`. `mha-expand` rewrites the op into
    `mha.project`, `mha.split_heads`, (`mha.rms_norm`, `mha.rope`,)
    `mha.sdpa`, `mha.concat_heads` and `mha.output_project`.

    ```mlir
    %y = mha.attention %x weights(%w_q, %w_k, %w_v, %w_o)
        bias_q(%b_q) bias_k(%b_k) bias_v(%b_v) bias_o(%b_o) heads(8) causal
        : (tensor<1x128x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>,
           tensor<512x512xf32>, tensor<512x512xf32>, tensor<512xf32>,
           tensor<512xf32>, tensor<512xf32>, tensor<512xf32>)
        -> tensor<1x128x512xf32>
    ```
  }];
  let arguments = (ins Mha_TokensTensor:$query,
                       Optional<Mha_TokensTensor>:$kv,
                       Optional<Mha_MaskTensor>:$mask,
                       Mha_WeightTensor:$w_q, Mha_WeightTensor:$w_k,
                       Mha_WeightTensor:$w_v, Mha_WeightTensor:$w_o,
                       Optional<Mha_BiasTensor>:$b_q,
                       Optional<Mha_BiasTensor>:$b_k,
                       Optional<Mha_BiasTensor>:$b_v,
                       Optional<Mha_BiasTensor>:$b_o,
                       Optional<Mha_ScoreBiasTensor>:$attn_bias,
                       Optional<Mha_ParameterTensor>:$alibi_slopes,
                       Optional<Mha_ParameterTensor>:$sinks,
                       Optional<Mha_ParameterTensor>:$rope_inv_freq,
                       Optional<Mha_ParameterTensor>:$q_norm,
                       Optional<Mha_ParameterTensor>:$k_norm,
                       Mha_HeadCountAttr:$num_heads,
                       OptionalAttr<Mha_HeadCountAttr>:$num_kv_heads,
                       UnitAttr:$causal, UnitAttr:$causal_bottom_right,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<Mha_WindowAttr>:$window,
                       OptionalAttr<F32Attr>:$softcap,
                       OptionalAttr<StrAttr>:$rope,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$rotary_dim,
                       OptionalAttr<F64Attr>:$rope_base,
                       OptionalAttr<F64Attr>:$rope_scale,
                       OptionalAttr<F64Attr>:$rope_mscale,
                       OptionalAttr<F64Attr>:$qk_norm_eps);
  let results = (outs Mha_FloatTensor:$result);
  let regions = (region VariadicRegion<MaxSizedRegion<1>>:$score_mod);
  let assemblyFormat = [{
    $query (`kv` `(` $kv^ `)`)? (`mask` `(` $mask^ `)`)?
    `weights` `(` $w_q `,` $w_k `,` $w_v `,` $w_o `)`
    (`bias_q` `(` $b_q^ `)`)? (`bias_k` `(` $b_k^ `)`)?
    (`bias_v` `(` $b_v^ `)`)? (`bias_o` `(` $b_o^ `)`)?
    `heads` `(` $num_heads `)` (`kv_heads` `(` $num_kv_heads^ `)`)?
    custom<CausalAndScale>($causal, $causal_bottom_right, $scale, $attn_bias,
                           $alibi_slopes, $sinks, $window, $softcap)
    (`q_norm` `(` $q_norm^ `)`)? (`k_norm` `(` $k_norm^ `)`)?
    (`qk_norm_eps` `(` $qk_norm_eps^ `)`)?
    (`rope` `(` $rope^ `)`)? (`rotary_dim` `(` $rotary_dim^ `)`)?
    (`rope_base` `(` $rope_base^ `)`)? (`rope_scale` `(` $rope_scale^ `)`)?
    (`rope_mscale` `(` $rope_mscale^ `)`)?
    (`rope_inv_freq` `(` $rope_inv_freq^ `)`)?
    (`score_mod` $score_mod^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The result type the operands imply (`inferReturnTypes`), with the
    /// declared element type where the op may widen it (a bf16 layer's f32
    /// output); the operands must verify.
    RankedTensorType inferResultType();
    /// The number of key/value heads: `kv_heads` if set, else `heads`.
    int64_t getEffectiveNumKvHeads() {
      return getNumKvHeads().value_or(getNumHeads());
    }
    /// True when the inputs are cut into head slices before projecting.
    bool isSplitFirst() { return getWQ().getType().getRank() == 3; }
    /// The tensor keys and values are computed from (`query` if no `kv`).
    Value getKeyValueSource() { return getKv() ? getKv() : getQuery(); }
    /// The rotary dimension: `rotary_dim` if set, else dk (`headDim`).
    int64_t getEffectiveRotaryDim(int64_t headDim) {
      return getRotaryDim().value_or(headDim);
    }
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// mha.yield
//===----------------------------------------------------------------------===//

def Mha_YieldOp : Mha_Op<"yield", [Pure, ReturnLike, Terminator]> {
  let summary = "the value a score-modification region yields";
  let description = [{
    Ends the `score_mod` region of an attention op with its one result, the
    modified score (f32). The op that holds the region checks the count and
    the type.

    ```mlir
    mha.yield %r : f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // MHA_ATTENTION_OPS_TD
