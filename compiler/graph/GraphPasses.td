//===- GraphPasses.td - The graph passes -------------------*- tablegen -*-===//
//
// The rewrites of the mha ops before they are lowered. Included by compiler/Passes.td, so that
// one generated header declares every pass.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_GRAPH_GRAPHPASSES_TD
#define MHA_COMPILER_GRAPH_GRAPHPASSES_TD

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
    Option<"cacheBytes", "cache-bytes", "int64_t", /*default=*/"0",
           "Bytes that a chunk's intermediates may take (0: the function's "
           "mha.codegen chunk_bytes, one core's L2)">,
    Option<"minRows", "min-rows", "int64_t", /*default=*/"0",
           "Query rows that a chunk has at least (0: the function's "
           "mha.codegen chunk_rows, 8 row tiles of the projections)">,
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

    A layer written as its steps around an `mha.sdpa` (as a graph with a
    key/value cache is) splits the same way: the split follows each of the
    sdpa's operands back to its projection (through `mha.split_heads`,
    `mha.rms_norm`, `mha.rope`, `mha.cache_append` and casts), narrowing
    the projection, the head count of the split and the heads of the cache,
    and keeps the rows of the `mha.output_project` after it.

    A weight or cache that is an argument used by the layer alone becomes an
    argument of the rank's shape with `mha.shard = array<i64: dim, offset,
    size>` (the part of the full argument the rank is given); any other is
    sliced in the graph (`tensor.extract_slice`). Refused with an error:
    heads that do not divide among the ranks, shares that would cut a group
    of query heads sharing a key/value head, split-first layers, a layer
    whose result feeds other ops, steps the split cannot follow, and other
    mha ops.
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

#endif // MHA_COMPILER_GRAPH_GRAPHPASSES_TD
