//===- MhaDialect.td - The mha dialect ---------------------*- tablegen -*-===//

#ifndef MHA_DIALECT_TD
#define MHA_DIALECT_TD

include "mlir/IR/OpBase.td"

def Mha_Dialect : Dialect {
  let name = "mha";
  let summary = "Multi-head attention at the level a model author writes it";
  let description = [{
    The `mha` dialect describes a multi-head attention layer with the five
    steps of its definition (projection, splitting into heads, scaled
    dot-product attention, concatenating the heads, output projection) and a
    one-op form of the whole layer, `mha.attention`, which `mha-expand`
    rewrites into the five steps.

    Every op works on ranked tensors whose feature dimensions (model width,
    head dimensions) are static; batch and sequence sizes may be dynamic (`?`).
    Projections use the `X·W` layout: a weight is `[D_in, D_out]`.
    Elements are `f32` today; `f16` and `bf16` parse and verify so that the
    type system does not have to change when the lowering learns them.
  }];
  let cppNamespace = "::mlir::mha";
  let hasCanonicalizer = 0;
  // `mha.name` on function arguments (discardableAttrs below).
  let hasRegionArgAttrVerify = 1;
  // The attributes the compiler puts on ops of other dialects, declared so
  // that their names are spelled once (the generated `get...AttrHelper()`)
  // and verified by the dialect (`verifyOperationAttribute`):
  // - `mha.projection`: the linalg contraction of a projection, which
  //   `mha-tile-projections` tiles;
  // - `mha.register_block`: a tile `mha-vectorize` has cut to the size of a
  //   register block, to be vectorized;
  // - `mha.bf16_dot`: a bf16 projection on weights packed in K pairs
  //   (mha-bf16-projections), which `mha-bf16-dot` lowers to
  //   `x86vector.avx512.dot`;
  // - `mha.bf16_layer`: on an `mha.sdpa`, attention computed from bf16
  //   inputs and weights (mha-expand of a bf16 `mha.attention`), whose
  //   products may run on bf16 hi + lo parts of their f32 operands
  //   (mha-tile-attention's `amx-split`);
  // - `mha.amx_split`: a key block's `Q · Kᵀ` or `P · V` of f32 `Q` or `P`
  //   and keys or values packed in bf16 hi and lo pairs
  //   (mha.online_attention's `packed`), which `mha-amx-split` lowers to
  //   AMX tiles of the hi and lo parts;
  // - `mha.row_part`: a part of a row `mha-vectorize` split while it
  //   rewrites (set and removed within the pass; declared so that a graph
  //   printed in between still verifies);
  // - `mha.block_init`: a `linalg.fill` that a contraction's accumulators
  //   start from, which `mha-vectorize` fuses into the contraction's
  //   register blocks (set and removed within the pass, as `mha.row_part`);
  // - `mha.prepare_functions`: on a layer function, the functions that
  //   `mha-prepare-weights` split off it, in the order of the extra
  //   arguments they fill. This is the ABI between compiled code and a
  //   runtime: the JIT and the libraries of `mha-compile` read it instead of
  //   guessing names;
  // - `mha.name`, on a function argument (not an operation): the name of the
  //   argument for the tools: a file name under `mha-run --inputs DIR`, a C
  //   identifier in the headers of `mha-compile`. `verifyRegionArgAttribute`
  //   keeps it a C identifier;
  // - `mha.tiles`, an `#mha.attention_tiles` on an `mha.sdpa` (and on the
  //   `mha.sdpa_split` of its keys): its tile sizes, chosen by
  //   `mha-strategy` (or written in the graph), read by
  //   `mha-tile-attention` and the ops' `TilingInterface`;
  // - `mha.codegen`, an `#mha.codegen_sizes` on a function: the register
  //   blocks and projection tiles of its code, chosen by
  //   `mha-strategy`, read by the code generation passes;
  // - `mha.target`, an `#mha.target` on a module: the CPU it is compiled
  //   for, set by `mha-set-target`, read by `mha-strategy` alone.
  let discardableAttrs = (ins
    "::mlir::UnitAttr":$projection,
    "::mlir::UnitAttr":$register_block,
    "::mlir::UnitAttr":$bf16_dot,
    "::mlir::UnitAttr":$bf16_layer,
    "::mlir::UnitAttr":$amx_split,
    "::mlir::UnitAttr":$row_part,
    "::mlir::UnitAttr":$block_init,
    "::mlir::ArrayAttr":$prepare_functions,
    "::mlir::StringAttr":$name,
    "::mlir::mha::AttentionTilesAttr":$tiles,
    "::mlir::mha::CodegenSizesAttr":$codegen,
    "::mlir::mha::TargetAttr":$target
  );
  let hasOperationAttrVerify = 1;
  // `#mha.attention_tiles<...>`, `#mha.codegen_sizes<...>`, `#mha.target<...>`
  // (MhaAttributes.td).
  let useDefaultAttributePrinterParser = 1;
}

/// Base class of every op of the dialect.
class Mha_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mha_Dialect, mnemonic, traits>;

/// The element types of activations and weights.
defvar Mha_Floats = [F16, BF16, F32];

/// Activations: ranked tensors of a floating-point type, whose rank the
/// op's verifier checks (it names the layout it expects).
def Mha_FloatTensor : RankedTensorOf<Mha_Floats>;

/// Weights: every dimension static (they are packed at compile time).
def Mha_WeightTensor : StaticShapeTensorOf<Mha_Floats>;

/// Biases: `[D_out]`, static.
def Mha_BiasTensor : RankedTensorOf<Mha_Floats,
    [HasStaticShapePred, HasAnyRankOfPred<[1]>],
    "statically shaped 1-D tensor (a bias [D_out])">;

/// Token rows `[B, T, D]`: a layer's inputs, a projection before the split
/// into heads.
def Mha_TokensTensor : RankedTensorOf<Mha_Floats, [HasAnyRankOfPred<[3]>],
    "3D tensor [B, T, D]">;

/// Heads `[B, H, T, d]`: the operands of attention, and the rows and the
/// caches of a key/value cache (`[B, Hkv, C, d]`).
def Mha_HeadsTensor : RankedTensorOf<Mha_Floats, [HasAnyRankOfPred<[4]>],
    "4D tensor [B, H, T, d]">;

/// Attention masks `[B or 1, T, S]`: `true` where a query may attend to a
/// key.
def Mha_MaskTensor : RankedTensorOf<[I1], [HasAnyRankOfPred<[3]>],
    "3D tensor [B or 1, T, S]">;

/// Per-sequence token counts of a key/value cache (`[B]`).
def Mha_LengthsTensor : RankedTensorOf<[I64], [HasAnyRankOfPred<[1]>],
    "1D tensor [B]">;

/// Per-head or per-feature parameters of the attention variants, in f32
/// whatever the layer's element type: ALiBi slopes and sinks `[H]`, QK-norm
/// weights `[dk]`, rotary frequencies `[R/2]`.
def Mha_ParameterTensor : RankedTensorOf<[F32],
    [HasStaticShapePred, HasAnyRankOfPred<[1]>],
    "statically shaped 1-D f32 tensor (one parameter per head or feature)">;

/// Additive score biases `[B or 1, H or 1, T or 1, S]` (f32): a float
/// attention mask, T5's relative bias, a padding mask of large negatives.
def Mha_ScoreBiasTensor : RankedTensorOf<[F32], [HasAnyRankOfPred<[4]>],
    "4D f32 tensor [B or 1, H or 1, T or 1, S]">;

/// A head count: at least 1.
def Mha_HeadCountAttr : ConfinedAttr<I64Attr, [IntPositive]>;

/// A sliding window: the keys a query sees, its own included; at least 1.
def Mha_WindowAttr : ConfinedAttr<I64Attr, [IntPositive]>;

/// `AllElementTypesMatch` for an optional operand (read with its getter, in
/// the op's generated verifier):
/// the element type of `optional`, where present, is that of `like`. ODS's
/// own constraint reads the type of every operand it names, which an absent
/// one has not.
class Mha_OptionalElementTypeMatches<string optional, string getter,
                                     string like>
    : PredOpTrait<optional # " (where present) has the element type of " #
                      like,
                  CPred<"!this->" # getter # "() || "
                        "::mlir::getElementTypeOrSelf(this->" # getter #
                        "()) == ::mlir::getElementTypeOrSelf($" # like #
                        ")">>;

#endif // MHA_DIALECT_TD
