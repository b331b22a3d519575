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
  // `mha.name` on a function argument names the argument for the tools: a
  // file name under `mha-run --inputs DIR`, a C identifier in the headers of
  // `mha-compile`. The verifier keeps it a C identifier.
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
  // - `mha.prepare_functions`: on a layer function, the functions that
  //   `mha-prepare-weights` split off it, in the order of the extra
  //   arguments they fill. This is the ABI between compiled code and a
  //   runtime: the JIT and the libraries of `mha-compile` read it instead of
  //   guessing names.
  let discardableAttrs = (ins
    "::mlir::UnitAttr":$projection,
    "::mlir::UnitAttr":$register_block,
    "::mlir::UnitAttr":$bf16_dot,
    "::mlir::ArrayAttr":$prepare_functions
  );
  let hasOperationAttrVerify = 1;
}

/// Base class of every op of the dialect.
class Mha_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mha_Dialect, mnemonic, traits>;

/// Activations and weights: ranked tensors of a floating-point type.
def Mha_FloatTensor : RankedTensorOf<[F16, BF16, F32]>;

/// Attention masks: `true` where a query may attend to a key.
def Mha_MaskTensor : RankedTensorOf<[I1]>;

/// Per-sequence token counts of a key/value cache (`[B]`).
def Mha_LengthsTensor : RankedTensorOf<[I64]>;

#endif // MHA_DIALECT_TD
