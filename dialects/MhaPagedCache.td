//===- MhaPagedCache.td - Key/value caches in pages ----------*- tablegen -*-===//
//
// Key/value caches kept in a pool of fixed-size pages that a block table
// hands out to the sequences (as vLLM's paged attention): the append that
// writes new rows through the table and the view that reads a sequence's
// rows back in order. Included by MhaOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_PAGED_CACHE_TD
#define MHA_PAGED_CACHE_TD

/// A pool of pages, `[N, Hkv, P, d]`: N pages of P rows per key/value head
/// (floats, or an int8 cache's codes).
def Mha_PoolTensor : RankedTensorOf<[F16, BF16, F32, I8],
    [HasAnyRankOfPred<[4]>], "4D tensor [N, Hkv, P, d]">;

/// An int8 cache's pool of scales, `[N, Hkv, P]`: one per row of a page.
def Mha_ScalesPoolTensor : RankedTensorOf<[F32], [HasAnyRankOfPred<[3]>],
    "3D tensor [N, Hkv, P]">;

/// What mha.paged_view reads and makes: rows of d elements (rank 4) or one
/// scale per row (rank 3).
def Mha_PagedRowsTensor : RankedTensorOf<[F16, BF16, F32, I8],
    [HasAnyRankOfPred<[3, 4]>], "3D or 4D tensor">;

/// The pages of each sequence in order, `[B, M]`.
def Mha_BlockTableTensor : RankedTensorOf<[I32], [HasAnyRankOfPred<[2]>],
    "2D tensor [B, M]">;

//===----------------------------------------------------------------------===//
// mha.paged_cache_append
//===----------------------------------------------------------------------===//

def Mha_PagedCacheAppendOp : Mha_Op<"paged_cache_append", [
    Pure, DestinationStyleOpInterface, AllTypesMatch<["pool", "result"]>,
    AllElementTypesMatch<["update", "pool"]>]> {
  let summary = "append new keys or values to a paged cache through its "
                "block table";
  let description = [{
    `mha.cache_append` for a cache kept in pages: row `r = lengths[b] + t`
    of sequence `b` lives in page `table[b, r / P]` at row `r mod P`, so

    `result[table[b, r / P], g, r mod P, :] = update[b, g, t, :]`

    for every `t < T`; every other row of the pool is the pool's.

    - `update [B, Hkv, T, d]`, `pool [N, Hkv, P, d]` (N pages of P rows,
      `P` static, a multiple of 16 from 16 to 128), `table [B, M]` (`i32`,
      the pages of each sequence in order: it holds at most `M · P` rows),
      `lengths [B]` (`i64`). The result has the pool's type.
    - Destination-style with the pool as its init: bufferized, the rows are
      written into the pool's buffer in place.
    - Nothing is written out of bounds: a sequence with `lengths[b] < 0` or
      `lengths[b] + T > M · P` has no room and is not written (as
      `mha.cache_append`), and a row whose table entry is outside `[0, N)`
      is not written. The tools check the tables before a call and refuse
      such a table with an error.

    ```mlir
    %kp = mha.paged_cache_append %k into %k_pool through %table at %len
        : tensor<4x8x1x64xf32> into tensor<256x8x16x64xf32>
          through tensor<4x64xi32> at tensor<4xi64>
    ```
  }];
  let arguments = (ins Mha_HeadsTensor:$update, Mha_PoolTensor:$pool,
                       Mha_BlockTableTensor:$table,
                       Mha_LengthsTensor:$lengths);
  let results = (outs Mha_PoolTensor:$result);
  let assemblyFormat = [{
    $update `into` $pool `through` $table `at` $lengths attr-dict
    `:` type($update) `into` type($pool) `through` type($table) `at`
    type($lengths)
  }];
  let extraClassDeclaration = [{
    /// The pool is the destination (DestinationStyleOpInterface).
    MutableOperandRange getDpsInitsMutable() { return getPoolMutable(); }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// mha.paged_cache_append_quantized
//===----------------------------------------------------------------------===//

def Mha_PagedCacheAppendQuantizedOp : Mha_Op<"paged_cache_append_quantized", [
    Pure, DestinationStyleOpInterface,
    AllTypesMatch<["codes", "result_codes"]>,
    AllTypesMatch<["scales", "result_scales"]>]> {
  let summary = "quantize new keys or values to int8 and append them to a "
                "paged cache through its block table";
  let description = [{
    `mha.cache_append_quantized` for a cache kept in pages, addressed as
    `mha.paged_cache_append` addresses its pool: each new row
    `x = update[b, g, t, :]`, at row `r = lengths[b] + t` of sequence `b`,
    goes to page `n = table[b, r / P]` at row `i = r mod P` as

    - `scales[n, g, i] = max_j |x_j| / 127` (0 for a row of zeros),
    - `codes[n, g, i, j] = clamp(round(x_j / scale), -127, 127)`, to the
      nearest integer, ties to even (0 where the scale is 0).

    Every other row of both pools is left as it is.

    - `update [B, Hkv, T, d]` (f32), `codes [N, Hkv, P, d]` (i8, `P` static,
      a multiple of 16 from 16 to 128), `scales [N, Hkv, P]` (f32),
      `table [B, M]` (`i32`), `lengths [B]` (`i64`). The results have the
      types of `codes` and `scales`.
    - Destination-style with `codes` and `scales` as its inits: bufferized,
      both pools are written in place.
    - Nothing is written out of bounds, as with `mha.paged_cache_append`: a
      sequence with `lengths[b] < 0` or `lengths[b] + T > M · P` has no room
      and is not written, nor is a row whose table entry is outside
      `[0, N)`.

    ```mlir
    %kc, %ks = mha.paged_cache_append_quantized %k into %k_pool, %k_scales
        through %table at %len
        : tensor<4x8x1x64xf32> into tensor<256x8x16x64xi8>,
          tensor<256x8x16xf32> through tensor<4x64xi32> at tensor<4xi64>
    ```
  }];
  let arguments = (ins Mha_F32HeadsTensor:$update, Mha_PoolTensor:$codes,
                       Mha_ScalesPoolTensor:$scales,
                       Mha_BlockTableTensor:$table,
                       Mha_LengthsTensor:$lengths);
  let results = (outs Mha_PoolTensor:$result_codes,
                      Mha_ScalesPoolTensor:$result_scales);
  let assemblyFormat = [{
    $update `into` $codes `,` $scales `through` $table `at` $lengths attr-dict
    `:` type($update) `into` type($codes) `,` type($scales) `through`
    type($table) `at` type($lengths)
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
// mha.paged_view
//===----------------------------------------------------------------------===//

def Mha_PagedViewOp : Mha_Op<"paged_view", [Pure,
    AllElementTypesMatch<["pool", "result"]>]> {
  let summary = "the rows of each sequence of a paged cache, in order";
  let description = [{
    `result[b, g, j, :] = pool[table[b, j / P], g, j mod P, :]`: the dense
    cache `[B, Hkv, M · P, d]` that a paged one stands for, as `mha.sdpa`
    reads it (with `positions`, only the rows below each sequence's end);
    of an int8 cache, both its codes and its scales (a pool `[N, Hkv, P]`,
    one scale per row, viewed as `[B, Hkv, M · P]`), which `mha.dequantize`
    then reads.
    A row whose table entry is outside `[0, N)` reads as zeros, so no
    table reads outside the pool.

    Its plain lowering gathers the rows into a new tensor; the fused
    attention does not make it: it reads each key block from its page.

    - `pool [N, Hkv, P, d]` or `[N, Hkv, P]` (`P` static, a multiple of 16
      from 16 to 128), `table [B, M]` (`i32`), result `[B, Hkv, M · P, d]`
      or `[B, Hkv, M · P]` of the pool's element type.

    ```mlir
    %k = mha.paged_view %kp through %table
        : tensor<256x8x16x64xf32> through tensor<4x64xi32>
          -> tensor<4x8x1024x64xf32>
    ```
  }];
  let arguments = (ins Mha_PagedRowsTensor:$pool,
                       Mha_BlockTableTensor:$table);
  let results = (outs Mha_PagedRowsTensor:$result);
  let assemblyFormat = [{
    $pool `through` $table attr-dict `:` type($pool) `through` type($table)
    `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// P, the rows of one page.
    int64_t getPageSize() { return getPool().getType().getDimSize(2); }
  }];
  let hasVerifier = 1;
}

#endif // MHA_PAGED_CACHE_TD
