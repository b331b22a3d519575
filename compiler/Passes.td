//===- Passes.td - Passes of the mha compiler ----------------*- tablegen -*-===//

#ifndef MHA_COMPILER_PASSES_TD
#define MHA_COMPILER_PASSES_TD

include "mlir/Pass/PassBase.td"

def MhaBatchChunks : Pass<"mha-batch-chunks", "func::FuncOp"> {
  let summary = "Run each mha.attention over its batch in chunks that stay "
                "in cache";
  let description = [{
    Tiles each `mha.attention` over its batch with `scf::tileUsingSCF`
    (an `scf.for`; the op's `TilingInterface` is its batch), so that the
    whole layer (projections, attention, output projection) runs on a chunk
    of sequences at a time and the intermediates between its stages stay in
    cache. A chunk is `chunk` sequences (0: the whole batch), or by default
    (-1) as many as fit their
    intermediates (the input, Q, K, V, the heads' output and the result, in
    f32) in `cache-bytes`, but at least the sequences of `min-rows` query
    rows (short sequences in small chunks would pay each chunk's fixed
    costs for little work); a static batch takes the largest divisor of it
    below that (else the smallest with `min-rows`), so every chunk has one
    static shape. A mask is sliced with the batch unless it is one row
    shared by the batch (by its type, or at run time for a `?` batch). An
    op whose whole batch fits is left as it is.
  }];
  let options = [
    Option<"chunk", "chunk", "int64_t", /*default=*/"-1",
           "Sequences per chunk; -1 picks them from cache-bytes">,
    Option<"cacheBytes", "cache-bytes", "int64_t", /*default=*/"2097152",
           "Bytes that a chunk's intermediates may take (the pipelines: "
           "one core's L2)">,
    Option<"minRows", "min-rows", "int64_t", /*default=*/"384",
           "Query rows that a chunk has at least (the pipelines: 8 row "
           "tiles of the projections)">,
  ];
  let dependentDialects = ["arith::ArithDialect", "scf::SCFDialect",
                           "tensor::TensorDialect"];
}

def MhaExpand : Pass<"mha-expand", "func::FuncOp"> {
  let summary = "Rewrite mha.attention into the five steps of the layer";
  let description = [{
    Replaces each `mha.attention` by `mha.project` (Q, K, V),
    `mha.split_heads`, `mha.sdpa`, `mha.concat_heads` and
    `mha.output_project`. In the split-first form the input is split into
    head slices before the per-head projections, so no `split_heads` follows
    them. Later passes work on the five ops, so that a graph written step by
    step and one written as a single op compile the same way. A layer on
    bf16 values computes in f32: its operands are widened (`arith.extf`)
    and the five steps are f32; a bf16 result is rounded once at the end.
  }];
  let dependentDialects = ["mha::MhaDialect", "arith::ArithDialect"];
}

def MhaLowerToLinalg : Pass<"mha-lower-to-linalg", "func::FuncOp"> {
  let summary = "Lower the five steps of the layer to linalg on tensors";
  let description = [{
    Rewrites `mha.project`, `mha.split_heads`, `mha.sdpa`,
    `mha.concat_heads` and `mha.output_project` into `linalg`, `tensor`,
    `arith` and `math` ops on tensors:

    - projections become a `linalg.matmul` over the rows of the input
      (collapsed to 2-D; batch and sequence sizes may be dynamic) into the
      bias broadcast along the rows (`linalg.broadcast`) or zeros
      (`linalg.fill`); projections that write heads (`heads(H)`, per-head
      weights) and the output projection of the heads `[B, H, T, dv]`
      become `linalg.generic` contractions whose indexing maps read and
      write the head layout in place. Each projection's contraction carries
      the `mha.projection` unit attribute, which `mha-tile-projections`
      looks for;
    - `mha.cache_append` becomes an `scf.for` over the sequences that
      inserts each one's rows at its length (`tensor.insert_slice` into the
      carried cache, in place once bufferized), skipping a sequence whose
      rows do not fit (length < 0 or length + T > C);
    - `mha.sdpa` with `positions` tests key <= position[b] + query;
    - splitting and concatenating heads become `tensor.expand_shape` /
      `tensor.collapse_shape` and a `linalg.transpose`;
    - `mha.sdpa` is decomposed into the score contraction, an explicit
      numerically safe softmax and the contraction with the values.
      Grouped-query attention reads key/value head `h floordiv (H / Hkv)`
      through the indexing maps, so keys and values are never copied per
      query head. Masked keys get exactly zero weight, and a query row
      that may attend to no key gives zeros, never NaN. The scalar bodies
      of these steps (masked maximum and exponential, causal predicate,
      normalization) and the GQA head map are those of the fused path
      (compiler/attention/AttentionMath.h), so the paths cannot disagree.

    Only `f32` is lowered: any other element type is reported as an error.
    `mha.attention` must have been expanded first (`mha-expand`); every mha
    op left is an error.
  }];
  let dependentDialects = [
    "arith::ArithDialect",
    "linalg::LinalgDialect",
    "math::MathDialect",
    "scf::SCFDialect",
    "tensor::TensorDialect",
  ];
}

def MhaFoldHeadLayouts : Pass<"mha-fold-head-layouts", "func::FuncOp"> {
  let summary = "Fold split_heads and concat_heads into the projections";
  let description = [{
    Removes the copies that change between the token layout `[B, T, H·d]`
    and the head layout `[B, H, T, d]`, by letting the neighbouring
    projection read or write the other layout in place:

    - `split_heads(project(x, w, b), H)` becomes
      `project(x, w, b) heads(H)` when the split is the projection's only
      user: the projection writes heads `[B, H, T, d]` directly;
    - a per-head `project(split_heads(x), w)` (split first) becomes
      `project(x, w)`, which reads head `h`'s columns of `x` in place;
    - `output_project(concat_heads(o))` becomes `output_project(o)` (the
      canonicalization pattern of `mha.output_project`), which contracts
      over head and value dimension at once.

    After `mha-lower-to-linalg`, a layer folded this way has no
    `linalg.transpose`. A projection whose `[B, T, D_out]` result has other
    users keeps its split, and heads concatenated for anything but an
    output projection keep their concat.
  }];
  let dependentDialects = ["arith::ArithDialect", "mha::MhaDialect",
                           "tensor::TensorDialect"];
}

def MhaFuseProjections : Pass<"mha-fuse-projections", "func::FuncOp"> {
  let summary = "Pack the projections that read the same input into one";
  let description = [{
    Replaces the `mha.project` ops that read the same input (Q, K and V in
    self-attention; K and V in cross-attention) with one projection by the
    weights placed side by side, followed by `tensor.extract_slice` of each
    original result, so that the input is read once and one larger
    contraction runs instead of several small ones.

    Projections are packed when they have the same form: shared weights
    without `heads` (packed along the output columns), shared weights
    writing heads of the same head dimension (packed along the heads: the
    slices are whole heads), or per-head weights (packed along each head's
    output columns; the biases are interleaved head by head). Missing
    biases in a group where some projection has one are zeros. Every
    weight and bias of the group must be defined before the first
    projection of the group.

    Each output element is the same sum in the same order as before
    (the contraction over the input width is not reordered), so results
    are bitwise identical.

    The packed weight is a `tensor.concat` of the original weights. When
    those are function arguments, as in every graph mha-gen writes, the
    concatenation runs on every call, unless `mha-prepare-weights` moves it
    into a function that a runtime calls once (mha-run does).
  }];
  let dependentDialects = ["arith::ArithDialect", "tensor::TensorDialect"];
}

def MhaWidenBF16 : Pass<"mha-widen-bf16", "func::FuncOp"> {
  let summary = "Compute the mha ops on bf16 values in f32";
  let description = [{
    Rewrites each `mha.project`, `mha.split_heads`, `mha.sdpa`,
    `mha.attention_weights`, `mha.concat_heads` and `mha.output_project`
    with bf16 operands into the same op on f32 operands (`arith.extf`,
    exact), followed by `arith.truncf` (round to nearest even) where its
    result is bf16; an f32 result (a bf16 layer's output) is left as
    computed. So contractions accumulate in f32 and softmax runs in f32,
    and the values the graph stores in bf16 are rounded once each. The
    widened weights depend on the weights alone: mha-prepare-weights, after
    this pass, computes them once. `mha.cache_append` is left as it is
    (bf16 caches are not lowered).
  }];
  let dependentDialects = ["arith::ArithDialect"];
}

def MhaPrepareWeights : Pass<"mha-prepare-weights", "ModuleOp"> {
  let summary = "Compute what depends only on the weights once, in functions "
                "of its own";
  let description = [{
    A weight is a function argument that reaches only weight and bias
    operands of mha ops (through ops outside the mha dialect). Each value
    that pure ops compute from weights and constants alone, and that the
    rest of the function reads (typically the `tensor.concat` of
    `mha-fuse-projections`), is moved into a new public function
    `@<name>_prepare<i>` with the same arguments, which returns it
    flattened to a 1-D f32 tensor. `@<name>` gets that tensor as a new last
    argument (named `<name>_prepare<i>`) and reshapes it back; the ops that
    only computed it are erased. `@<name>` records the prepare functions,
    in the order of its new arguments, in its `mha.prepare_functions`
    attribute: what a runtime reads to know what to call. Views (`expand_shape`, `extract_slice`, ...)
    stay in place, since they cost nothing.

    A runtime calls the prepare functions once after compiling and passes
    their results to every call, so the weights are packed once per
    compiled graph, not per call. Values with a dynamic shape or another
    element type stay where they are.
  }];
  let dependentDialects = ["func::FuncDialect", "tensor::TensorDialect"];
}

def MhaBF16Projections : Pass<"mha-bf16-projections", "ModuleOp"> {
  let summary = "bf16 projections on weights packed in K pairs, for the bf16 "
                "dot-product instructions";
  let description = [{
    Runs after `mha-prepare-weights`. Each `mha.project` (shared weights,
    with or without `heads(H)`) whose input is a bf16 tensor widened to f32
    and whose weight is a prepared buffer of widened bf16 values (an
    `arith.extf`, or mha-fuse-projections' concatenation of them) becomes
    a `linalg.generic` marked `mha.bf16_dot` that reads the input's bf16
    values in pairs `(2kk, 2kk+1)` and the weight packed in K pairs: the
    prepare function returns `[K/2, N]` f32 elements whose bits are the
    bf16 pair `(w[2kk, n], w[2kk+1, n])`, the first in the low half (the
    layout of AVX512_BF16's `vdpbf16ps`). The generic's body unpacks its
    pair member, multiplies in f32 and sums in f32: correct as it stands,
    and `mha-bf16-dot` lowers it to `x86vector.avx512.dot`.

    Projections whose columns (per head, for `heads(H)`) are not a multiple
    of 16, an odd K, per-head weights and f32 inputs (the output
    projection reads attention's f32 output) are left as they are.

    With `split-f32` (the AMX path), the output projection `a·W (+ b)`
    (prepared bf16 weights, f32 input: attention's output) becomes the
    same generic on `[hi | lo]` (`[B, T, 2K]` bf16, hi = bf16(a), lo =
    bf16(a - hi), both rounded to nearest (hi's ties away from zero, on
    its bits: `buildBF16Part`); heads `[B, H, T, dv]` are
    transposed to `[B, T, H·dv]` first) and the weight packed twice along
    K (`[W; W]`, prepared once): hi·W + lo·W, whose input error (a
    relative 2^-17) is far below bf16 storage's, at twice the products.
    With `round-f32` instead (the AMX path with `bf16-precision=fast`), the
    same generic on hi alone (`[B, T, K]`) and the weight packed once: the
    input rounded to bf16, at the products of a bf16 input.

    With `panels` (the AMX path), the prepare function returns the pairs
    in panels of 16 columns, `[N/16, K/2, 16]`: each AMX B tile (16 k
    pairs by 16 columns) is 1 KiB in one piece, not 16 rows N·4 bytes
    apart, which for N·4 a multiple of 4 KiB fall into one L1 set. The
    layer reads them through a `linalg.transpose` back to `[K/2, N]`, so
    the generic means the same; `mha-bf16-amx` reads the panels directly
    and the transpose goes with the generic.
  }];
  let options = [
    Option<"panels", "panels", "bool", /*default=*/"false",
           "Pack the weights in panels of 16 columns (AMX B tiles)">,
    Option<"splitF32", "split-f32", "bool", /*default=*/"false",
           "The output projection on the bf16 generic too, its f32 input "
           "split in two bf16 terms (hi + lo) and its weight packed twice "
           "along K">,
    Option<"roundF32", "round-f32", "bool", /*default=*/"false",
           "The output projection on the bf16 generic too, its f32 input "
           "rounded to bf16 (split-f32 takes precedence)">,
  ];
  let dependentDialects = [
    "arith::ArithDialect",
    "linalg::LinalgDialect",
    "scf::SCFDialect",
    "tensor::TensorDialect",
  ];
}

def MhaBF16Dot : Pass<"mha-bf16-dot", "func::FuncOp"> {
  let summary = "Lower the mha.bf16_dot projections to x86vector.avx512.dot "
                "register blocks";
  let description = [{
    Rewrites each `linalg.generic` marked `mha.bf16_dot` (from
    `mha-bf16-projections`) into an `scf.forall` over (column tile, row
    tile, batch) of register blocks: `rows` rows by 32 columns (16 where
    the columns per head are an odd number of 16-lane vectors), 2·`rows`
    `vector<16xf32>` accumulators that start at the bias, and per pair of
    k two loads of packed weights and one broadcast bf16 pair per row,
    multiplied and accumulated by `x86vector.avx512.dot` (`vdpbf16ps`).
    Vector code on tensors; convert-vector-to-llvm with
    `enable-x86vector` lowers the dot to `llvm.x86.avx512bf16.dpbf16ps.512`,
    which needs a target with AVX512_BF16.
  }];
  let options = [
    Option<"rowTile", "row-tile", "int64_t", /*default=*/"32",
           "Rows (tokens) of the result per parallel tile">,
    Option<"colTile", "col-tile", "int64_t", /*default=*/"128",
           "Columns of the result per parallel tile at most (a multiple of "
           "32 that divides the columns, per head)">,
    Option<"rows", "rows", "int64_t", /*default=*/"8",
           "Rows of a register block (2 accumulators each)">,
  ];
  let dependentDialects = [
    "arith::ArithDialect",
    "scf::SCFDialect",
    "tensor::TensorDialect",
    "vector::VectorDialect",
    "x86vector::X86VectorDialect",
  ];
}

def MhaBF16Amx : Pass<"mha-bf16-amx", "func::FuncOp"> {
  let summary = "Lower the mha.bf16_dot projections to AMX tiles";
  let description = [{
    Rewrites each `linalg.generic` marked `mha.bf16_dot` (from
    `mha-bf16-projections`) into an `scf.forall` over (column tile, row
    tile, batch) of AMX blocks: 32 rows by 32 columns (2 A tiles
    `!amx.tile<16x32xbf16>` of the input, 2 B tiles of the packed weight,
    whose K-pair packing is AMX's B layout, 4 accumulators
    `!amx.tile<16x16xf32>` that start at the bias), `amx.tile_mulf`
    (TDPBF16PS) per 32 k. Rows that 16 does not divide go through a
    zero-padded 16-row copy. Runs on tensors, before bufferization: the
    operands are read through read-only `bufferization.to_buffer`s and each
    tile is accumulated in a stack scratch that is inserted into the
    result (compiler/codegen/BF16Amx.cpp says why). convert-vector-to-llvm
    with `enable-amx` lowers the ops; the target needs amx-tile and
    amx-bf16, and the process the kernel's permission for the tile data.
  }];
  let options = [
    Option<"rowTile", "row-tile", "int64_t", /*default=*/"64",
           "Rows (tokens) of the result per parallel tile (a multiple of "
           "16); 4 times as many (at most the tokens, in blocks of 32) "
           "where a column block's weight panel fits in L1 (l1-bytes)">,
    Option<"colTile", "col-tile", "int64_t", /*default=*/"128",
           "Columns of the result per parallel tile at most (a multiple of "
           "32 that divides the columns, per head)">,
    Option<"kChunk", "k-chunk", "int64_t", /*default=*/"16",
           "Steps of 32 k unrolled between two round trips of the "
           "accumulators through memory">,
    Option<"l1Bytes", "l1-bytes", "int64_t", /*default=*/"49152",
           "L1 data cache of one core: a column block's weight panel "
           "(K by 32 columns of bf16) within two thirds of it stays there "
           "for the tile's row blocks, which then take 4 times row-tile "
           "rows (the pipeline passes its target's)">,
  ];
  let dependentDialects = [
    "amx::AMXDialect",
    "arith::ArithDialect",
    "bufferization::BufferizationDialect",
    "linalg::LinalgDialect",
    "memref::MemRefDialect",
    "scf::SCFDialect",
    "tensor::TensorDialect",
  ];
}

def MhaAmxSplit : Pass<"mha-amx-split", "func::FuncOp"> {
  let summary = "Lower attention's mha.amx_split products to AMX tiles";
  let description = [{
    Rewrites each `linalg.generic` marked `mha.amx_split` (a key block's
    `Q · Kᵀ` or `P · V` over keys or values packed in bf16 hi and lo pairs,
    from `mha-tile-attention` with `amx-split`), on buffers, into AMX
    blocks of 16 rows by 32 columns (16 where the columns are an odd
    number of 16): `hi(A)·hi(B) + lo(A)·hi(B) + hi(A)·lo(B)`, three
    TDPBF16PS per 32 of the reduction, about 16 bits of each operand. The
    f32 operand's hi and lo parts are made into a stack scratch
    `[M, 2·K]` bf16 by a generic tiled into rows (`scf::tileUsingSCF`) and
    vectorized (`linalg::vectorize`): once per query tile for Q (where
    nothing in the key loop writes it), per key block for P. The blocks are
    the product's generic tiled by `scf::tileUsingSCF`. Runs after
    bufferization: the results are written in place into the scores
    scratch and the accumulator. Generics whose shapes are not static
    whole tiles are left to convert-linalg-to-loops
    (`SdpaTiling::canPack` keeps mha-tile-attention from making one).

    With `fast`, A is rounded to bf16 (its hi part) and each step is one
    TDPBF16PS, `hi(A)·hi(B)`: a third of the tile work, at the error of
    rounding Q, K, P and V to bf16 (the pipeline's `bf16-precision=fast`).
  }];
  let options = [
    Option<"fast", "fast", "bool", /*default=*/"false",
           "Round A and B to bf16: one TDPBF16PS per step instead of three">,
  ];
  let dependentDialects = [
    "affine::AffineDialect",
    "amx::AMXDialect",
    "arith::ArithDialect",
    "linalg::LinalgDialect",
    "memref::MemRefDialect",
    "scf::SCFDialect",
    "vector::VectorDialect",
  ];
}

def MhaWeightLayouts : Pass<"mha-weight-layouts", "ModuleOp"> {
  let summary = "Store projection weights in the layout that their register "
                "blocks read best";
  let description = [{
    Runs on linalg, after `mha-prepare-weights` and `mha-lower-to-linalg`,
    on functions with `mha.prepare_functions`. A projection's register
    block reads one row of its weight panel per reduction step; when the
    weight's rows are a multiple of 1 KiB apart (the packed Q|K|V weight
    of d_model 512: 6 KiB), the panel's rows fall into a few cache sets
    and evict each other, and past 2 KiB the hardware prefetchers stop
    following them. A weight read only as the weight operand of
    projection contractions (`mha.projection`), through views of one type,
    is stored

    - `[H, D, d]` instead of `[D, H, d]` when read by heads with the
      reduction outermost: each head's panel is contiguous;
    - when read `[..., N]` along N after the reductions and `4 * N` is a
      multiple of 1024 (the output projection's weight): in panels of
      `panel-columns` columns, `[N/P, ..., P]`, where P divides N; the
      contraction is packed along its columns (`linalg::pack`,
      `linalg::packTranspose`), its result computed as `[..., N/P, P]`, a
      view of the same buffer, so that each parallel tile reads one
      contiguous panel. Otherwise (P = 0 or not a divisor) with rows padded
      by 16 floats: consecutive rows fall into consecutive sets.

    A weight that a prepare function computes is stored so by that
    function (the layer's argument grows by the padding); a weight
    argument that the layer reads as it is gets a new prepare function,
    `@<name>_prepare<i>`, appended to `mha.prepare_functions` with its
    buffer as a new last argument. The contractions read the new layout
    through their indexing maps and views: no copy per call.
  }];
  let options = [
    Option<"panelColumns", "panel-columns", "int64_t", /*default=*/"0",
           "Columns per panel of a weight read along its columns, where the "
           "layer has no mha.codegen (whose projection_cols it is otherwise; "
           "0: padded rows instead)">,
  ];
  let dependentDialects = [
    "arith::ArithDialect",
    "linalg::LinalgDialect",
    "tensor::TensorDialect",
  ];
}

def MhaTileProjections : Pass<"mha-tile-projections", "func::FuncOp"> {
  let summary = "Tile the projections' contractions into parallel scf.forall "
                "loops";
  let description = [{
    Tiles every linalg op that carries the `mha.projection` unit attribute
    (set by `mha-lower-to-linalg` on the contraction of each `mha.project`
    and `mha.output_project`) with `scf::tileUsingSCF` into an
    `scf.forall` over its parallel output dimensions, so that the tiles
    run on different threads once the forall is converted to OpenMP:

    - the last two dimensions of the result (rows and columns) are tiled by
      `row-tile` and `col-tile` (0: not tiled); where the last but one
      indexes the weight (the panels of a result `[B, T, N/P, P]`,
      `mha-weight-layouts`), the rows are the dimension before it;
    - every other result dimension (batch, head, panel) is tiled by 1;
    - reduction dimensions are never tiled: each output element is summed
      by one thread, in the same order, so the results are bitwise
      identical for any thread count.

    The tile sizes are the function's `mha.codegen` (`projection_rows`,
    `projection_cols`; `mha-strategy`), else the options.

    The tile of a `linalg.matmul` is a `linalg.matmul`. The tile of a
    contraction that writes heads `[1, 1, rows, d]` has its unit dimensions
    dropped and becomes a `linalg.matmul` of one head's rows; the tile of
    the output projection of the heads becomes a
    `linalg.batch_reduce_matmul` over the heads. The producer of each
    accumulator (bias broadcast or zero fill) is fused into the loop, so
    it is also computed per tile, in parallel.
  }];
  let options = [
    Option<"rowTile", "row-tile", "int64_t", /*default=*/"32",
           "Rows (tokens) of the result per tile; 0 leaves them untiled">,
    Option<"colTile", "col-tile", "int64_t", /*default=*/"128",
           "Columns of the result per tile; 0 leaves them untiled">,
  ];
  let dependentDialects = [
    "affine::AffineDialect",
    "linalg::LinalgDialect",
    "scf::SCFDialect",
    "tensor::TensorDialect",
  ];
}

def MhaMaskBytes : Pass<"mha-mask-bytes", "ModuleOp"> {
  let summary = "Read boolean mask arguments as bytes, so that the ops "
                "reading them vectorize";
  let description = [{
    A boolean mask argument (`tensor<... x i1>`) holds one byte per element,
    but vectors of `i1` are bit-packed: the vectorizer leaves ops that read
    `i1` tensors scalar. This pass gives each such argument of a function
    that is not called in the module `i8` elements (the same bytes, so the
    function's ABI is unchanged), and its `tensor.extract_slice`s too; each
    `linalg.generic` that reads it compares the byte with 0 at the start of
    its body. An argument with any other reader stays `i1`.

    ```mlir
    // before
    %m = tensor.extract_slice %mask[...] : tensor<4x100xi1> to tensor<?x100xi1>
    linalg.generic ins(%s, %m : ...) { ^bb0(%v: f32, %ok: i1, ...): ... }
    // after
    %m = tensor.extract_slice %mask[...] : tensor<4x100xi8> to tensor<?x100xi8>
    linalg.generic ins(%s, %m : ...) {
    ^bb0(%v: f32, %byte: i8, ...):
      %ok = arith.cmpi ne, %byte, %c0_i8 : i8
      ...
    }
    ```
  }];
  let dependentDialects = ["arith::ArithDialect"];
}

def MhaVectorize : Pass<"mha-vectorize", "func::FuncOp"> {
  let summary = "Tile the linalg ops to register blocks and vectorize them";
  let description = [{
    Turns the statically shaped linalg ops on tensors (the tiles that the
    attention and projection tiling passes leave) into vector code:

    - a contraction (matmul, batch_reduce_matmul, the QK^T and PV generics)
      is tiled with `scf.for` to blocks of `rows` x `cols` results and a
      reduction step of 1 and vectorized to `vector.contract`, whose
      accumulator `mha-hoist-accumulators` then keeps in registers through
      the reduction loop (and `mha-unroll-reductions` unrolls), and which
      later lowers to `rows` broadcast-FMAs per step
      (`convert-vector-to-llvm{vector-contract-lowering=outerproduct}`);
    - every other linalg op (elementwise, row reductions, fill, copy,
      broadcast, transpose) is tiled by 1 in all dimensions but the last,
      which becomes one vector of at most `max-vector-length` elements
      (a `math.exp` in it an exp of the vector, which `mha-approximate-exp`
      later makes a polynomial).

    Tile sizes are the largest divisors of each loop's extent within these
    limits, so every block is static and no masks are needed. A contraction
    with a `?` row count runs whole blocks of `rows` rows, then its rest in
    blocks of rows/2, rows/4, ... and 1 row, each static.

    The sizes are the function's `mha.codegen` (`mha-strategy`,
    which the named pipelines run with the target rule's sizes,
    `compiler/codegen/Strategy.h`); the options below are the fallback for
    a function without it.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", /*default=*/"8",
           "Rows of a contraction's register block">,
    Option<"cols", "cols", "int64_t", /*default=*/"32",
           "Columns of a contraction's register block (2 zmm registers)">,
    Option<"maxVectorLength", "max-vector-length", "int64_t",
           /*default=*/"256",
           "Longest vector along the last loop of a non-contraction op">,
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "f32 elements of one vector register (16 with AVX-512): blocks "
           "along lanes fill whole registers, masked where the extent is "
           "no multiple">,
  ];
  let dependentDialects = [
    "arith::ArithDialect",
    "linalg::LinalgDialect",
    "math::MathDialect",
    "scf::SCFDialect",
    "tensor::TensorDialect",
    "vector::VectorDialect",
  ];
}

def MhaHoistAccumulators : Pass<"mha-hoist-accumulators", "func::FuncOp"> {
  let summary = "Keep register blocks' accumulators in registers through "
                "their reduction loops";
  let description = [{
    The second step of the register blocks, after `mha-vectorize`: in each
    `scf.for` (innermost first), the loop-invariant code and the
    loop-invariant subsets (upstream's `moveLoopInvariantCode` and
    `hoistLoopInvariantSubsets`) move out of the loop. A contraction's
    accumulator block, read and written at the same place of the output in
    every reduction step, is then read once before the loop, carried as a
    vector value and written once after it. A read of a whole block that
    does not depend on the loop (a projection's bias, broadcast to a
    block's rows) stays in it: moved out, it would hold a block of
    registers through the loop.
  }];
}

def MhaUnrollReductions : Pass<"mha-unroll-reductions", "func::FuncOp"> {
  let summary = "Several reduction steps per iteration of a register "
                "block's loop";
  let description = [{
    The third step of the register blocks, after `mha-hoist-accumulators`:
    each reduction loop of a register block (innermost, contracting,
    carrying its accumulators as vectors) is unrolled by `unroll`
    (upstream's `loopUnrollByFactor`): the steps of one iteration in their
    original order, so that every sum keeps its order, and the rest of a
    trip count that `unroll` does not divide in a loop of its own. The
    count is the function's `mha.codegen` (`register_unroll`,
    `mha-strategy`), else the option.
  }];
  let options = [
    Option<"unroll", "unroll", "int64_t", /*default=*/"2",
           "Reduction steps per iteration of a register block's loop">,
  ];
  let dependentDialects = ["scf::SCFDialect"];
}

def MhaLowerStridedCopies : Pass<"mha-lower-strided-copies", "func::FuncOp"> {
  let summary = "Rewrite copies between strided buffers into linalg.copy";
  let description = [{
    `finalize-memref-to-llvm` lowers a `memref.copy` whose source or target
    is not contiguous to a call of `memrefCopy` from MLIR's C runner
    utilities, which neither the JIT of `mha-run` nor the libraries of
    `mha-compile` link. This pass rewrites those copies (bufferization
    makes them for strided tiles and for the `tensor.concat` of the packed
    weights) into `linalg.copy`, which
    `convert-linalg-to-loops` lowers to loops. Contiguous copies stay
    `memref.copy` (a memcpy).
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def MhaDropArgumentResults
    : Pass<"mha-drop-argument-results", "func::FuncOp"> {
  let summary = "Drop the results that are argument buffers, also of public "
                "functions";
  let description = [{
    Removes each result of a function (public ones included) whose returned
    value is one of the function's memref arguments (through `memref.cast`)
    of the same type: after one-shot bufferization, the key/value caches that
    `mha.cache_append` updated in place. The caller passed those buffers and
    sees them updated; returning them would only make the deallocation
    pipeline clone them for the caller. Upstream's
    `drop-equivalent-buffer-results` does the same for private functions
    only. Callers of the function in the module are not updated: run it on
    entry points.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def MhaStackScratch : Pass<"mha-stack-scratch", "func::FuncOp"> {
  let summary = "Put the small scratch buffers of parallel tiles on the stack";
  let description = [{
    Rewrites each `memref.alloc` of static shape inside an `scf.parallel`
    whose one `memref.dealloc` is in its own block (a buffer that lives
    within one iteration: a tile's scratch) into a `memref.alloca` at the
    start of the loop's body, and drops the deallocation. Run after the
    deallocation pipeline and before `convert-scf-to-openmp`, which puts
    each iteration in a `memref.alloca_scope`, so that every iteration gives
    its stack back. At most `max-bytes`
    per parallel loop move (the OpenMP threads' stacks are a few MiB); larger
    or `?`-sized buffers stay on the heap.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"131072",
           "Most bytes of scratch per parallel loop put on the stack">,
  ];
  let dependentDialects = ["memref::MemRefDialect"];
}

def MhaOutlineRegisterBlocks : Pass<"mha-outline-register-blocks",
                                    "ModuleOp"> {
  let summary = "Each register block's reduction loop in a function of its "
                "own";
  let description = [{
    In each function that takes or returns a buffer with a `?` size, moves
    every outermost `scf.for` whose results are vectors and whose body runs
    at least 256 `vector.contract` ops per call (a register block's whole
    reduction after `mha-vectorize`, `mha-hoist-accumulators` and
    `mha-unroll-reductions`: the projections', not attention's short
    blocks), with the `vector.transfer_read` that starts its accumulators
    and the `vector.transfer_write` of its results (where nothing between
    them and the loop writes memory), into a private function
    `<function>_register_block<n>` with internal linkage that LLVM never
    inlines (`passthrough = ["noinline"]`), called where the loop was; the constants it uses are cloned into it. LLVM then
    compiles each loop with only its own operands live, so that a layer
    with `?` sizes gets the same loop code as a static one, whose loops stay
    inline. Run on buffers, before `convert-scf-to-openmp`.
  }];
  let dependentDialects = ["func::FuncDialect", "LLVM::LLVMDialect"];
}

def MhaEmitCInterface : Pass<"mha-emit-c-interface", "func::FuncOp"> {
  let summary = "Ask for a C-callable wrapper of every public function";
  let description = [{
    Sets `llvm.emit_c_interface` on every public function with a body, so
    that `convert-func-to-llvm` also emits `_mlir_ciface_<name>`: a wrapper
    that takes each memref as a pointer to its descriptor and returns a
    memref result through a first, out pointer argument. This is the entry
    point that the runtime calls. It also removes the `mha.name` argument
    attributes, which only bind inputs and which the LLVM translation does not
    know.
  }];
}

def MhaExpandShapeMetadata : Pass<"mha-expand-shape-metadata", "func::FuncOp"> {
  let summary = "Rewrite memref.expand_shape with several dynamic sizes in a "
                "group into descriptor arithmetic";
  let description = [{
    Replaces each `memref.expand_shape` that has more than one dynamic size
    in one reassociation group (rows `[B·T, D]` back to `[B, T, D]` with
    dynamic batch and sequence) by `memref.extract_strided_metadata` of the
    source and a `memref.reinterpret_cast` whose sizes come from
    `output_shape`. LLVM 22's `expand-strided-metadata` crashes on such ops
    (llvm/llvm-project#186830, fixed in LLVM 23); run this pass before it.
    Other expand_shape ops are left to `expand-strided-metadata`.
  }];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

def MhaLowerScalarTransfers
    : Pass<"mha-lower-scalar-transfers", "func::FuncOp"> {
  let summary = "Rewrite vector transfers of one element as memref loads and "
                "stores";
  let description = [{
    A vector read that broadcasts one element (a row's maximum along a block
    of keys) is turned by LLVM 22's `convert-vector-to-llvm` into a 0-d
    `vector.transfer_read`, which it lowers only from a memref whose last
    dimension has unit stride; from a one-element strided view
    (`memref<1xf32, strided<[2]>>`) it leaves a
    `builtin.unrealized_conversion_cast` and translation fails. This pass
    reads such an element with `memref.load` and broadcasts it, and applies
    upstream's `populateScalarVectorTransferLoweringPatterns` (which no
    upstream pass runs) to other one-element transfers. Run it after
    `convert-vector-to-scf`.
  }];
  let dependentDialects = ["memref::MemRefDialect",
                           "vector::VectorDialect"];
}

def MhaStrategy : Pass<"mha-strategy", "ModuleOp"> {
  let summary = "Record the tile and register-block sizes for the target "
                "(mha.codegen on each function, mha.tiles on each mha.sdpa)";
  let description = [{
    The strategy step, as IREE's lowering-strategy selection sets a
    `translation_info` on each dispatch function and a `lowering_config` on
    its root ops. From the rule in `compiler/codegen/Strategy.h`
    (docs/pipeline.md, "Sizes from the target") for this machine's CPU,
    each option that is set taking the place of its size, it records:

    - on each function with a body that has none, `mha.codegen`, an
      `#mha.codegen_sizes`: the register block and the projections'
      parallel tile, which `mha-tile-projections`, `mha-weight-layouts`,
      `mha-bf16-dot`, `mha-bf16-amx`, `mha-vectorize` and
      `mha-unroll-reductions` read (their own options are the fallback for
      a function without it);
    - on each `mha.sdpa` that has none, `mha.tiles`, an
      `#mha.attention_tiles<query_tile, key_tile, key_splits>`, which
      `mha-tile-attention` and the op's `TilingInterface` read
      (compiler/attention/AttentionStrategy.h): the query tile and key
      block (with `causal` and one key range, the key block cut down to a
      divisor of the query tile, so that every causal block is whole), and
      `key-splits` key ranges where B·H·⌈T/BQ⌉ (static) is smaller, bounded
      by the number of key blocks, else 1 (top-left causal attention, whose
      queries see only their own prefix, is never split).

    The named pipelines run it once the prepare functions exist, with the
    sizes for their target (`mha-compile --cpu`). Sizes already recorded
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
  ];
  let dependentDialects = ["mha::MhaDialect"];
}

def MhaDropCodegenSizes : Pass<"mha-drop-codegen-sizes", "ModuleOp"> {
  let summary = "Remove the mha.codegen records once the code is generated";
  let description = [{
    Removes `mha.codegen` from every function. The named pipelines run it
    at the end of `mha-to-loops`, after the last pass that reads the
    record: their output is read by upstream tools (`mlir-runner`,
    `mlir-translate`) that do not know the mha dialect's attributes.
  }];
}

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

def MhaExtractAttentionWeights
    : Pass<"mha-extract-attention-weights", "ModuleOp"> {
  let summary = "Add a function that returns the attention weights of a "
                "layer";
  let description = [{
    For the public function `function` (default: every public function with
    a body), adds a public function `@<name>_attention_weights` with the same
    arguments that returns the attention weights `[B, H, T, S]` of its one
    attention instead of its result. The clone is expanded (`mha-expand`),
    its `mha.sdpa` becomes an `mha.attention_weights` of the same query, key,
    mask, `causal` and `scale`, whose result the clone returns, and the ops
    that no longer contribute (value and output projections) are erased.

    The original function is left as it is, so the layer keeps its fast
    path; `mha-run --dump-attention` runs this pass before the pipeline and
    calls the second function only to draw the maps. A function with no
    attention or with more than one is an error, as is a name that is taken.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The function whose weights to extract (default: every public "
           "function)">,
  ];
  let dependentDialects = ["mha::MhaDialect", "arith::ArithDialect"];
}

def MhaBF16PairConversion
    : Pass<"mha-bf16-pair-conversion", "func::FuncOp"> {
  let summary = "Round f32 vectors to bf16 two registers at a time "
                "(VCVTNE2PS2BF16)";
  let description = [{
    Rewrites every `arith.truncf` of an f32 vector to bf16 whose length is
    a multiple of 32, with the default rounding (nearest even), into one
    call of `llvm.x86.avx512bf16.cvtne2ps2bf16.512` per 32 lanes: two
    registers of f32 into one of bf16. LLVM 22 lowers such a truncation to
    a VCVTNEPS2BF16 per 16 lanes and a VINSERTF64X4 per pair. The bf16
    paths' hi + lo splits are made of these (attention's P per key block
    on the AMX path). Only for targets with AVX512_BF16: the pipeline runs
    it on the bf16 dot-product paths, which need it.

    Run on buffers, after bufferization: the `llvm.call_intrinsic` it
    emits has no declared memory effects, which one-shot bufferization
    refuses.
  }];
  let dependentDialects = ["LLVM::LLVMDialect", "vector::VectorDialect",
                           "arith::ArithDialect"];
}

def MhaApproximateExp : Pass<"mha-approximate-exp", "func::FuncOp"> {
  let summary = "Replace math.exp and math.exp2 by polynomials that stay in vectors";
  let description = [{
    Rewrites every f32 `math.exp` and `math.exp2` (LLVM would make a vector
    of them one libm call per element). On a target with AVX-512 (the
    function's `mha.codegen` has 16 lanes, or the `lanes` option without
    it), an exp2 of a vector is `p(r) · 2^n` with `n = roundeven(x)`,
    `r = x - n` and `p` a degree-6 polynomial, the scaling one `VSCALEFPS`
    per register (its x86 intrinsic; it takes n as a float and saturates
    to 0 and +inf itself), so only the argument is clamped (to [-152, 129],
    NaN kept): about 12 instructions per register. An exp is the same with
    `n = roundeven(x · log2 e)` and `r = x - n · ln 2` (two FMAs, Cody and
    Waite): about 16. Upstream's approximation
    (`populateMathPolynomialApproximationPatterns`, about 21) builds 2^n
    from its bits and has no exp2: it stays for scalars and for targets
    without AVX-512, an exp2 there being `exp(x · ln 2)`. Softmax takes one
    exp2 per score (`compiler/codegen/ExpApproximation.h`). An f32
    `math.tanh` (the score steps' softcap) becomes upstream's rational
    approximation for the same reason.

    Run on buffers, after bufferization: the `llvm.call_intrinsic` it
    emits has no declared memory effects, which one-shot bufferization
    refuses.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "f32 elements of one vector register, for a function without "
           "mha.codegen: 16 (AVX-512) takes the VSCALEFPS form">,
  ];
  let dependentDialects = ["LLVM::LLVMDialect", "math::MathDialect",
                           "vector::VectorDialect", "arith::ArithDialect"];
}

def MhaNoNaNRowMax : Pass<"mha-no-nan-row-max", "func::FuncOp"> {
  let summary = "Let the row maxima of softmax be reduced without NaN checks";
  let description = [{
    Sets the `nnan` fast-math flag on every `vector.reduction <maxnumf>`:
    in what mha lowers, the row maxima that softmax subtracts before exp
    (the attention math writes them as `arith.maxnumf`, other maxima as
    `arith.maximumf`). LLVM then reduces each vector in a shuffle tree of
    `vmaxps` instead of a chain of NaN-checked scalar steps. No result
    changes: a NaN score makes exp(score - max), and with it its row, NaN
    whatever the maximum is. Run it after `lower-vector-multi-reduction`.
  }];
  let dependentDialects = ["vector::VectorDialect"];
}

def MhaOmpSchedule : Pass<"mha-omp-schedule", "func::FuncOp"> {
  let summary = "Set the schedule of the OpenMP worksharing loops";
  let description = [{
    Sets `schedule_kind` on every `omp.wsloop` that convert-scf-to-openmp
    made (it gives them the default, static, which is also the pipeline's
    default). With `dynamic` or `guided`, the threads take iterations as they
    come free, so a thread that starts late (woken from sleep by a call's
    first parallel region) or shares its core with another process does
    not hold up the loop; `runtime` leaves the choice to `OMP_SCHEDULE`.
    Each iteration computes its own tile in its own order, so the results
    do not depend on the schedule or the thread count.
  }];
  let options = [
    Option<"schedule", "schedule", "std::string", /*default=*/"\"static\"",
           "static, dynamic, guided or runtime (OMP_SCHEDULE)">,
  ];
  let dependentDialects = ["omp::OpenMPDialect"];
}

def MhaSplitHeads : Pass<"mha-split-heads", "ModuleOp"> {
  let summary = "Keep one rank's share of the heads of each mha.attention";
  let description = [{
    Megatron-style head parallelism (docs/distributed.md): rank `rank` of
    `ranks` keeps the query heads `[rank·H/ranks, (rank+1)·H/ranks)` of each
    `mha.attention`, the key/value heads they read (a key/value head is
    replicated on every rank whose query heads read it when there are fewer
    than ranks), the columns of `w_q`, `w_k`, `w_v` and their biases that
    project those heads, the rows of `w_o` they multiply, and their entries
    of `alibi_slopes`, `sinks` and a per-head `attn_bias`. The output bias
    stays on rank 0 only, so the ranks' results add up to the layer's: the
    caller sums them (`mha-run --parallel heads`, one MPI all-reduce).

    A weight that is an argument used by the layer alone becomes an
    argument of the rank's shape with `mha.shard = array<i64: dim, offset,
    size>` (the part of the full argument the rank is given); any other is
    sliced in the graph (`tensor.extract_slice`). Refused with an error:
    heads that do not divide among the ranks, shares that would cut a group
    of query heads sharing a key/value head, split-first layers, a layer
    whose result feeds other ops, and other mha ops (graphs written step by
    step or with a key/value cache).
  }];
  let options = [
    Option<"rank", "rank", "int64_t", /*default=*/"0",
           "This rank, from 0 to ranks - 1">,
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "The number of ranks the heads are split among">,
  ];
  let dependentDialects = ["arith::ArithDialect", "mha::MhaDialect",
                           "tensor::TensorDialect"];
}

#endif // MHA_COMPILER_PASSES_TD
