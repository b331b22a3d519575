//===- MhaQuantizedCache.td - 8-bit key/value caches --------*- tablegen -*-===//
//
// Key/value caches of int8 codes with one f32 scale per sequence, key/value
// head and token: the append that quantizes new rows into them and the op
// that reads them back as f32. Included by MhaOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_QUANTIZED_CACHE_TD
#define MHA_QUANTIZED_CACHE_TD

/// The codes of an int8 cache, `[B, Hkv, C, d]`.
def Mha_CodesTensor : RankedTensorOf<[I8], [HasAnyRankOfPred<[4]>],
    "4D tensor [B, Hkv, C, d]">;

/// The scales of an int8 cache, one per row: `[B, Hkv, C]`.
def Mha_ScalesTensor : RankedTensorOf<[F32], [HasAnyRankOfPred<[3]>],
    "3D tensor [B, Hkv, C]">;

/// New f32 rows `[B, Hkv, T, d]` to quantize.
def Mha_F32HeadsTensor : RankedTensorOf<[F32], [HasAnyRankOfPred<[4]>],
    "4D tensor [B, Hkv, T, d]">;

//===----------------------------------------------------------------------===//
// mha.cache_append_quantized
//===----------------------------------------------------------------------===//

def Mha_CacheAppendQuantizedOp : Mha_Op<"cache_append_quantized", [
    Pure, DestinationStyleOpInterface,
    AllTypesMatch<["codes", "result_codes"]>,
    AllTypesMatch<["scales", "result_scales"]>]> {
  let summary = "quantize new keys or values to int8 and append them to a "
                "cache at per-sequence offsets";
  let description = [{
    `mha.cache_append` for a cache of int8 codes with one f32 scale per row
    (symmetric, per token and key/value head, as llama.cpp's q8_0 and
    OpenVINO's u8 caches): each new row `x = update[b, g, t, :]` is stored
    at row `r = lengths[b] + t` as

    - `scales[b, g, r] = max_i |x_i| / 127` (0 for a row of zeros),
    - `codes[b, g, r, i] = clamp(round(x_i / scale), -127, 127)`, rounded to
      the nearest integer, ties to even (0 where the scale is 0),

    so that `codes · scale` is `x` within `scale / 2` per element. Every
    other row of both is left as it is.

    - `update [B, Hkv, T, d]` (f32), `codes [B, Hkv, C, d]` (i8), `scales
      [B, Hkv, C]` (f32), `lengths [B]` (i64). The results have the types of
      `codes` and `scales`. `T ≤ C` where both are static.
    - Destination-style with `codes` and `scales` as its inits: bufferized,
      both are written in place.
    - A sequence with `lengths[b] < 0` or `lengths[b] + T > C` has no room:
      neither its codes nor its scales are written (as `mha.cache_append`).

    ```mlir
    %kc, %ks = mha.cache_append_quantized %k into %k_codes, %k_scales at %len
        : tensor<4x8x1x64xf32> into tensor<4x8x4096x64xi8>,
          tensor<4x8x4096xf32> at tensor<4xi64>
    ```
  }];
  let arguments = (ins Mha_F32HeadsTensor:$update, Mha_CodesTensor:$codes,
                       Mha_ScalesTensor:$scales, Mha_LengthsTensor:$lengths);
  let results = (outs Mha_CodesTensor:$result_codes,
                      Mha_ScalesTensor:$result_scales);
  let assemblyFormat = [{
    $update `into` $codes `,` $scales `at` $lengths attr-dict
    `:` type($update) `into` type($codes) `,` type($scales) `at`
    type($lengths)
  }];
  let extraClassDeclaration = [{
    /// The codes and the scales are the destinations
    /// (DestinationStyleOpInterface).
    MutableOperandRange getDpsInitsMutable() {
      return MutableOperandRange(getOperation(), 1, 2);
    }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// mha.dequantize
//===----------------------------------------------------------------------===//

def Mha_DequantizeOp : Mha_Op<"dequantize", [Pure,
    InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "the f32 rows of an int8 cache";
  let description = [{
    `result[b, g, r, i] = codes[b, g, r, i] · scales[b, g, r]`: the keys or
    values that an int8 cache (`mha.cache_append_quantized`) stands for, as
    `mha.sdpa` reads them. The fused attention never makes this tensor: it
    reads the codes and scales of one key block at a time and dequantizes
    them into its widened scratch.

    - `codes [B, Hkv, C, d]` (i8), `scales [B, Hkv, C]` (f32), result
      `[B, Hkv, C, d]` (f32).

    ```mlir
    %k = mha.dequantize %kc, %ks : tensor<4x8x4096x64xi8>,
        tensor<4x8x4096xf32> -> tensor<4x8x4096x64xf32>
    ```
  }];
  let arguments = (ins Mha_CodesTensor:$codes, Mha_ScalesTensor:$scales);
  let results = (outs Mha_F32HeadsTensor:$result);
  let assemblyFormat = [{
    $codes `,` $scales attr-dict `:` type($codes) `,` type($scales) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

#endif // MHA_QUANTIZED_CACHE_TD
