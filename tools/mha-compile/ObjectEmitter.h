//===- ObjectEmitter.h - LLVM dialect to a relocatable object ---*- C++ -*-===//

#ifndef MHA_TOOLS_MHACOMPILE_OBJECTEMITTER_H
#define MHA_TOOLS_MHACOMPILE_OBJECTEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mha {
namespace compile {

/// Translates `module` (LLVM dialect) to LLVM IR, optimizes it at -O3 for
/// `cpu` ("native" for this machine's CPU and features, or an LLVM CPU name
/// such as "x86-64-v3") and writes position-independent object code to
/// `path`. Every function but those in `exported` gets hidden visibility, so
/// that two libraries do not clash on internal names.
/// Whether `cpu` (as emitObjectFile takes it: "native" or an LLVM CPU name)
/// has the target feature `feature` (LLVM's name, e.g. "avx512bf16").
llvm::Expected<bool> cpuHasFeature(llvm::StringRef cpu,
                                   llvm::StringRef feature);

llvm::Error emitObjectFile(mlir::ModuleOp module, llvm::StringRef cpu,
                           llvm::ArrayRef<std::string> exported,
                           llvm::StringRef path);

} // namespace compile
} // namespace mha

#endif // MHA_TOOLS_MHACOMPILE_OBJECTEMITTER_H
