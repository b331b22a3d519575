//===- PipelinePrinting.h - What mha-run says about lowering ----*- C++ -*-===//
//
// Private to mha-run: the lines it prints about how a graph is lowered, the
// path each attention takes and, with --print-pipeline, the passes.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHARUN_PIPELINEPRINTING_H
#define MHA_TOOLS_MHARUN_PIPELINEPRINTING_H

#include "compiler/strategy/AttentionPath.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mha {
namespace tools {

/// Prints the path each attention of `function` takes and why, e.g.
/// `attention path: fused (auto: S = 2048 >= 64)`.
void printAttentionPaths(mlir::func::FuncOp function,
                         mlir::mha::AttentionMode mode);

/// Prints a textual pass pipeline one pass per line, nested pipelines
/// indented, e.g. `builtin.module(` / `  func.func(` / `    mha-expand,`.
/// Joining the lines gives the pipeline back.
void printPipelineByLine(llvm::StringRef pipeline, llvm::raw_ostream &os);

} // namespace tools
} // namespace mha

#endif // MHA_TOOLS_MHARUN_PIPELINEPRINTING_H
