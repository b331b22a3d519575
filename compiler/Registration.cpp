//===- Registration.cpp - What the mha tools register ---------------------===//

#include "compiler/Registration.h"
#include "compiler/Passes.h"
#include "dialects/MhaDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::mha::registerMhaDialects(DialectRegistry &registry) {
  registry.insert<MhaDialect, func::FuncDialect>();
}

void mlir::mha::registerMhaPasses() {
  // Generic cleanups (canonicalize, cse, ...) used between our passes.
  registerTransformsPasses();
  registerMhaCompilerPasses();
}
