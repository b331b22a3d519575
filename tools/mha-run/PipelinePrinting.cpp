//===- PipelinePrinting.cpp - What mha-run says about lowering ------------===//

#include "tools/mha-run/PipelinePrinting.h"

#include "compiler/Pipelines.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace mha::tools {

void printAttentionPaths(func::FuncOp function, mlir::mha::AttentionMode mode) {
  function.walk([&](Operation *op) {
    std::optional<mlir::mha::AttentionShape> shape =
        mlir::mha::getAttentionShape(op);
    if (!shape)
      return;
    mlir::mha::AttentionPathChoice choice =
        mlir::mha::chooseAttentionPath(*shape, mode);
    llvm::outs() << "attention path: "
                 << (choice.fused ? "fused" : "decomposed") << " ("
                 << choice.reason << ")\n";
  });
}

void printPipelineByLine(llvm::StringRef pipeline, llvm::raw_ostream &os) {
  int depth = 0;  // nesting of `(`
  int braces = 0; // inside a pass's `{options}`, where `,` does not split
  std::string line;
  auto flush = [&](int indent) {
    if (!llvm::StringRef(line).trim().empty())
      os.indent(2 * indent) << llvm::StringRef(line).trim() << "\n";
    line.clear();
  };
  for (char c : pipeline) {
    if (braces > 0 || c == '{') {
      braces += (c == '{') - (c == '}');
      line += c;
    } else if (c == '(') {
      line += c;
      flush(depth++);
    } else if (c == ')') {
      flush(depth--);
      line += c;
    } else if (c == ',') {
      line += c;
      flush(depth);
    } else {
      line += c;
    }
  }
  flush(depth);
}

} // namespace mha::tools
