//===- Passes.h - Passes of the mha compiler --------------------*- C++ -*-===//

#ifndef MHA_COMPILER_PASSES_H
#define MHA_COMPILER_PASSES_H

#include "dialects/MhaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace mha {

#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

/// Adds the pattern that rewrites `mha.attention` into the five-step form.
void populateExpandAttentionPatterns(RewritePatternSet &patterns);

/// Adds the patterns that lower `mha.project`, `mha.split_heads`,
/// `mha.sdpa`, `mha.concat_heads` and `mha.output_project` (f32 only) to
/// linalg, tensor, arith and math ops on tensors.
void populateMhaToLinalgPatterns(RewritePatternSet &patterns);

/// Adds the pattern that rewrites a `memref.expand_shape` with several
/// dynamic sizes in one reassociation group into
/// `memref.extract_strided_metadata` + `memref.reinterpret_cast` (LLVM 22's
/// expand-strided-metadata crashes on it, llvm/llvm-project#186830).
void populateExpandShapeMetadataPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_PASSES_H
