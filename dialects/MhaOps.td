//===- MhaOps.td - Operations of the mha dialect ------------*- tablegen -*-===//

#ifndef MHA_OPS_TD
#define MHA_OPS_TD

include "dialects/MhaAttributes.td"
include "dialects/MhaDialect.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// mha.project
//===----------------------------------------------------------------------===//

def Mha_ProjectOp : Mha_Op<"project", [Pure,
    AllElementTypesMatch<["input", "weight"]>,
    Mha_OptionalElementTypeMatches<"bias", "getBias", "input">,
    InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "linear projection `X·W (+ b)`, shared or one matrix per head";
  let description = [{
    Multiplies the last dimension of `input` by `weight` and adds `bias`
    (absent: no bias). Two forms, told apart by the rank of `weight`:

    - shared: `input [..., D_in] · weight [D_in, D_out] (+ bias [D_out])`
      gives `[..., D_out]`; this is how Q, K and V are computed from the
      model input in standard multi-head attention;
    - per head: `input [B, H, T, w] · weight [H, w, d] (+ bias [H·d])` gives
      `[B, H, T, d]`: head `h` projects its own slice with its own matrix
      (the "split first" variant; the bias is laid out head after head).
      The input may also be the unsplit `[B, T, H·w]`: head `h` then reads
      columns `h·w … (h+1)·w − 1` directly, which is
      `project(split_heads(input), weight)` without the split's copy.

    With `heads(H)`, the shared form writes heads: `input [B, T, D_in]`
    gives `[B, H, T, D_out / H]`, exactly
    `split_heads(project(input, weight, bias), H)`, but the projection
    stores each head's columns in place instead of transposing a copy
    (`mha-fold-head-layouts` produces this form).

    ```mlir
    %q = mha.project %x, %w_q bias(%b_q)
        : (tensor<?x8x512xf32>, tensor<512x512xf32>, tensor<512xf32>)
        -> tensor<?x8x512xf32>
    %qh = mha.project %xh, %w_q
        : (tensor<1x2x8x2xf32>, tensor<2x2x2xf32>) -> tensor<1x2x8x2xf32>
    %q8 = mha.project %x, %w_q bias(%b_q) heads(8)
        : (tensor<?x8x512xf32>, tensor<512x512xf32>, tensor<512xf32>)
        -> tensor<?x8x8x64xf32>
    ```
  }];
  let arguments = (ins Mha_FloatTensor:$input, Mha_WeightTensor:$weight,
                       Optional<Mha_BiasTensor>:$bias,
                       OptionalAttr<Mha_HeadCountAttr>:$num_heads);
  let results = (outs Mha_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `)`)? (`heads` `(` $num_heads^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    // The inferred builder with the head count as a number.
    OpBuilder<(ins "Value":$input, "Value":$weight,
                   CArg<"Value", "{}">:$bias,
                   CArg<"std::optional<int64_t>", "std::nullopt">:$numHeads),
    [{
      build($_builder, $_state, input, weight, bias,
            numHeads ? $_builder.getI64IntegerAttr(*numHeads) : nullptr);
    }]>
  ];
  let extraClassDeclaration = [{
    /// The result type the operands imply (`inferReturnTypes`), with the
    /// declared element type where the op may widen it (a bf16 layer's f32
    /// output); the operands must verify.
    RankedTensorType inferResultType();
    /// True for the per-head form (`weight` of rank 3).
    bool isPerHead() { return getWeight().getType().getRank() == 3; }
    /// True when the result is heads `[B, H, T, d]`: the per-head form, or
    /// the shared form with `heads(H)`.
    bool writesHeads() { return isPerHead() || getNumHeads().has_value(); }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// mha.split_heads
//===----------------------------------------------------------------------===//

def Mha_SplitHeadsOp : Mha_Op<"split_heads", [Pure,
    InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "`[B, T, H·d]` to `[B, H, T, d]`";
  let description = [{
    Cuts the last dimension into `num_heads` contiguous slices of width `d`
    and makes the head the second dimension: head `h` owns columns
    `h·d … (h+1)·d − 1`.

    ```mlir
    %qh = mha.split_heads %q heads(8)
        : tensor<1x128x512xf32> -> tensor<1x8x128x64xf32>
    ```
  }];
  let arguments = (ins Mha_TokensTensor:$input, Mha_HeadCountAttr:$num_heads);
  let results = (outs Mha_FloatTensor:$result);
  let assemblyFormat = [{
    $input `heads` `(` $num_heads `)` attr-dict `:` type($input) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The result type the operands imply (`inferReturnTypes`), with the
    /// declared element type where the op may widen it (a bf16 layer's f32
    /// output); the operands must verify.
    RankedTensorType inferResultType();
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// mha.rms_norm
//===----------------------------------------------------------------------===//

def Mha_RmsNormOp : Mha_Op<"rms_norm", [Pure,
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "RMSNorm over the last dimension (QK-norm of each head)";
  let description = [{
    `y[..., i] = x[..., i] / sqrt(mean_k(x[..., k]²) + eps) · weight[i]`
    over the last dimension `d` of `input [B, H, T, d]`, computed in f32:
    the QK-norm of Qwen 3, OLMo 2 and Gemma 3, applied to each head's
    queries and keys before the rotary embedding. `weight [d]` (f32) is
    multiplied as it is: Gemma's `(1 + w)` convention is the caller's
    `1 + w`.

    ```mlir
    %qn = mha.rms_norm %q, %q_norm eps(1.000000e-06)
        : (tensor<1x8x128x64xf32>, tensor<64xf32>) -> tensor<1x8x128x64xf32>
    ```
  }];
  let arguments = (ins Mha_HeadsTensor:$input, Mha_ParameterTensor:$weight,
                       F64Attr:$eps);
  let results = (outs Mha_HeadsTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `eps` `(` $eps `)` attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// mha.rope
//===----------------------------------------------------------------------===//

def Mha_RopeOp : Mha_Op<"rope", [Pure, AttrSizedOperandSegments,
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "rotary position embedding of queries or keys";
  let description = [{
    Rotates pairs of features of `input [B, H, T, d]` by an angle that
    grows with the token's position (RoFormer; Llama, Mistral, Qwen,
    Gemma, gpt-oss, GPT-J, GPT-NeoX, Phi). Token `t` of sequence `b` sits
    at position `p = t`, or `p = offsets[b] + t` with `offsets [B]` (i64,
    a key/value cache's lengths). For each of the `R/2` pairs `i`
    (`rotary_dim(R)`, even, at most `d`):

    - the frequency is `inv_freq[i]` where the operand is given (`[R/2]`,
      f32: Llama 3.1's, NTK's or YaRN's frequencies), else
      `base^(−2i / R)`;
    - the angle is `θ = (p / scale) · frequency` (`scale`: linear position
      interpolation; 1 for none);
    - with `c = cos θ · mscale`, `s = sin θ · mscale` (`mscale`: YaRN's
      attention factor; 1 for none) and `(a, b)` the pair's features,
      `a ← a · c − b · s`, `b ← b · c + a · s`.

    `layout("half")` pairs feature `i` with `i + R/2` (Hugging Face's
    `rotate_half`, GPT-NeoX); `layout("interleaved")` pairs `2i` with
    `2i + 1` (Meta's original Llama, GPT-J). Features `R … d − 1` pass
    through unchanged.

    ```mlir
    %qr = mha.rope %q offsets(%len) layout("half") rotary_dim(64)
        base(1.000000e+04) scale(1.000000e+00) mscale(1.000000e+00)
        : (tensor<1x8x128x64xf32>, tensor<1xi64>) -> tensor<1x8x128x64xf32>
    ```
  }];
  let arguments = (ins Mha_HeadsTensor:$input,
                       Optional<Mha_LengthsTensor>:$offsets,
                       Optional<Mha_ParameterTensor>:$inv_freq,
                       StrAttr:$layout,
                       ConfinedAttr<I64Attr, [IntPositive]>:$rotary_dim,
                       F64Attr:$base, F64Attr:$scale, F64Attr:$mscale);
  let results = (outs Mha_HeadsTensor:$result);
  let assemblyFormat = [{
    $input (`offsets` `(` $offsets^ `)`)? (`inv_freq` `(` $inv_freq^ `)`)?
    `layout` `(` $layout `)` `rotary_dim` `(` $rotary_dim `)`
    `base` `(` $base `)` `scale` `(` $scale `)` `mscale` `(` $mscale `)`
    attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// True for the interleaved layout (`2i` with `2i + 1`).
    bool isInterleaved() { return getLayout() == "interleaved"; }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// mha.concat_heads
//===----------------------------------------------------------------------===//

def Mha_ConcatHeadsOp : Mha_Op<"concat_heads", [Pure,
    InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "`[B, H, T, d]` to `[B, T, H·d]`";
  let description = [{
    The inverse of `mha.split_heads`: puts the heads side by side in head
    order along the last dimension.

    ```mlir
    %c = mha.concat_heads %o : tensor<1x8x128x64xf32> -> tensor<1x128x512xf32>
    ```
  }];
  let arguments = (ins Mha_HeadsTensor:$input);
  let results = (outs Mha_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The result type the operands imply (`inferReturnTypes`), with the
    /// declared element type where the op may widen it (a bf16 layer's f32
    /// output); the operands must verify.
    RankedTensorType inferResultType();
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// mha.output_project
//===----------------------------------------------------------------------===//

def Mha_OutputProjectOp : Mha_Op<"output_project", [Pure,
    AllElementTypesMatch<["input", "weight"]>,
    Mha_OptionalElementTypeMatches<"bias", "getBias", "input">,
    InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "the heads times `W_O` (+ b): the layer's output";
  let description = [{
    Multiplies the attention output by the output matrix
    `weight [H·dv, D_out]` and adds `bias [D_out]` (absent: no bias). The
    input is either

    - the concatenated heads `[B, T, H·dv]`, as written by the textbook, or
    - the heads themselves `[B, H, T, dv]`: the contraction runs over head
      and value dimension at once, so no `[B, T, H·dv]` copy is made.
      Canonicalization rewrites `output_project(concat_heads(x))` into this
      form.

    The result is `[B, T, D_out]`.

    ```mlir
    %y = mha.output_project %o, %w_o bias(%b_o)
        : (tensor<1x8x128x64xf32>, tensor<512x512xf32>, tensor<512xf32>)
        -> tensor<1x128x512xf32>
    ```
  }];
  let arguments = (ins Mha_FloatTensor:$input, Mha_WeightTensor:$weight,
                       Optional<Mha_BiasTensor>:$bias);
  let results = (outs Mha_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `)`)? attr-dict
    `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The result type the operands imply (`inferReturnTypes`), with the
    /// declared element type where the op may widen it (a bf16 layer's f32
    /// output); the operands must verify.
    RankedTensorType inferResultType();
    /// True when the input is the heads `[B, H, T, dv]` (rank 4).
    bool readsHeads() { return getInput().getType().getRank() == 4; }
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// mha.cache_append
//===----------------------------------------------------------------------===//

def Mha_CacheAppendOp : Mha_Op<"cache_append", [
    Pure, DestinationStyleOpInterface, AllTypesMatch<["cache", "result"]>,
    AllElementTypesMatch<["update", "cache"]>]> {
  let summary = "append new keys or values to a cache at per-sequence "
                "offsets";
  let description = [{
    Writes the `T` new rows of each sequence into the cache after the rows it
    already holds: `result[b, g, lengths[b] + t, :] = update[b, g, t, :]`
    for every `t < T`; every other row is the cache's.

    - `update [B, Hkv, T, d]`, `cache [B, Hkv, C, d]` (capacity `C`),
      `lengths [B]` (`i64`, the rows sequence `b` already has); the result
      has the cache's type. `T ≤ C` where both are static.
    - The op is destination-style with the cache as its init: bufferized,
      the rows are written into the cache's buffer in place, so a function
      that returns the result of an append to its argument updates the
      caller's cache and copies nothing.
    - The lengths are not updated: whoever calls the graph adds `T` after
      each call. A sequence with `lengths[b] < 0` or `lengths[b] + T > C`
      has no room: its rows are not written (the cache of that sequence is
      left as it is), so a wrong length never writes outside the cache.

    ```mlir
    %kc = mha.cache_append %k into %k_cache at %len
        : tensor<4x8x1x64xf32> into tensor<4x8x4096x64xf32> at tensor<4xi64>
    ```
  }];
  let arguments = (ins Mha_HeadsTensor:$update, Mha_HeadsTensor:$cache,
                       Mha_LengthsTensor:$lengths);
  let results = (outs Mha_HeadsTensor:$result);
  let assemblyFormat = [{
    $update `into` $cache `at` $lengths attr-dict
    `:` type($update) `into` type($cache) `at` type($lengths)
  }];
  let extraClassDeclaration = [{
    /// The cache is the destination (DestinationStyleOpInterface).
    MutableOperandRange getDpsInitsMutable() { return getCacheMutable(); }
  }];
  let hasVerifier = 1;
}

include "dialects/MhaQuantizedCache.td"
include "dialects/MhaPagedCache.td"
include "dialects/MhaAttentionOps.td"

#endif // MHA_OPS_TD
