//===- AttentionDump.h - Write attention weights as files -------*- C++ -*-===//
//
// What `mha-run --dump-attention DIR [--tokens "..."]` writes: the weights
// of every head as one .npy file and one PNG heatmap per head (and batch
// element), labelled with positions or with the words of the sentence.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_TOOLS_MHARUN_ATTENTIONDUMP_H
#define MHA_TOOLS_MHARUN_ATTENTIONDUMP_H

#include "runtime/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mha {
namespace runtime {

/// Checks, before compiling, that `function` has exactly one attention
/// (`mha.attention` or `mha.sdpa`) whose weights can be drawn.
llvm::Error checkOneAttention(mlir::func::FuncOp function);

/// Checks, before compiling, that `tokens` (if any) can label the maps of
/// `function`'s attention with these `inputs`: T == S and one word per
/// token. Sizes it cannot tell before the run (the `?` sizes of an
/// `mha.sdpa`) are checked by dumpAttention instead.
llvm::Error checkTokensFit(mlir::func::FuncOp function,
                           const std::vector<NpyArray> &inputs,
                           const std::vector<std::string> &tokens);

/// The words of `--tokens`, split at white space.
std::vector<std::string> splitTokens(llvm::StringRef text);

/// The file name of the map of batch element `batch` and head `head`:
/// `head<h>.png` when the batch has one element, else
/// `batch<b>_head<h>.png`.
std::string heatmapFileName(int64_t batch, int64_t head, int64_t batchSize);

/// Returns the paths dumpAttention may write in `directory`: attention.npy
/// and every file there already named like a map (head<h>.png,
/// batch<b>_head<h>.png), whatever B and H the run will have. mha-run checks
/// them against the files it reads before it compiles.
std::vector<std::string> listDumpTargets(llvm::StringRef directory);

/// Writes `weights` [B, H, T, S] to `directory` (created if missing) as
/// `attention.npy` and one heatmap per batch element and head, titled
/// `<graph>: head h of H`. `tokens` label the rows and the columns: there
/// must be none, or T of them and T == S. Prints the files written to `log`.
llvm::Error dumpAttention(const NpyArray &weights, llvm::StringRef directory,
                          llvm::StringRef graph,
                          const std::vector<std::string> &tokens,
                          llvm::raw_ostream &log);

} // namespace runtime
} // namespace mha

#endif // MHA_TOOLS_MHARUN_ATTENTIONDUMP_H
