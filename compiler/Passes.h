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

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"

} // namespace mha
} // namespace mlir

#endif // MHA_COMPILER_PASSES_H
