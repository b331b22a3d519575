//===- CodegenPasses.td - The code generation passes -------*- tablegen -*-===//
//
// Code generation: the tiles, vectors, AMX and the C interface. Included
// by compiler/Passes.td, so that one generated header declares every pass.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_CODEGEN_CODEGENPASSES_TD
#define MHA_COMPILER_CODEGEN_CODEGENPASSES_TD

include "mlir/Pass/PassBase.td"

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
    Option<"lanes", "lanes", "int64_t", /*default=*/"0",
           "f32 lanes of a vector: 4, 8 or 16 (0: mha.codegen's "
           "bf16_lanes)">,
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
    Option<"rowTile", "row-tile", "int64_t", /*default=*/"0",
           "Rows (tokens) of the result per parallel tile (a multiple of "
           "16); 4 times as many (at most the tokens, in blocks of 32) "
           "where a column block's weight panel fits in L1 (l1-bytes) (0: "
           "mha.codegen's amx_rows)">,
    Option<"colTile", "col-tile", "int64_t", /*default=*/"128",
           "Columns of the result per parallel tile at most (a multiple of "
           "32 that divides the columns, per head)">,
    Option<"kChunk", "k-chunk", "int64_t", /*default=*/"0",
           "Steps of 32 k unrolled between two round trips of the "
           "accumulators through memory (0: mha.codegen's amx_k_chunk)">,
    Option<"l1Bytes", "l1-bytes", "int64_t", /*default=*/"0",
           "L1 data cache of one core: a column block's weight panel "
           "(K by 32 columns of bf16) within two thirds of it stays there "
           "for the tile's row blocks, which then take 4 times row-tile "
           "rows (0: mha.codegen's l1_bytes, the target's)">,
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
      by `row-padding` floats (the layer's `mha.codegen` row_padding, one
      vector): consecutive rows fall into different sets.

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
    Option<"rowPadding", "row-padding", "int64_t", /*default=*/"0",
           "Floats added to each padded row (0: the layer's mha.codegen "
           "row_padding)">,
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
    `compiler/strategy/Strategy.h`); the options below are the fallback for
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
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"0",
           "Most bytes of scratch per parallel loop put on the stack (0: "
           "the function's mha.codegen stack_bytes)">,
  ];
  let dependentDialects = ["memref::MemRefDialect"];
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

#endif // MHA_COMPILER_CODEGEN_CODEGENPASSES_TD
