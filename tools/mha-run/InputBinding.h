//===- InputBinding.h - Give every graph argument an array ------*- C++ -*-===//

#ifndef MHA_TOOLS_MHARUN_INPUTBINDING_H
#define MHA_TOOLS_MHARUN_INPUTBINDING_H

#include "runtime/GraphSignature.h"
#include "runtime/Npy.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mha {
namespace runtime {

/// Where mha-run takes the inputs from, in order of precedence.
struct InputOptions {
  /// `--inputs DIR`: argument NAME from DIR/NAME.npy, if that file exists.
  std::string directory;
  /// `--input NAME=FILE.npy`, any number; these win over the directory.
  std::vector<std::string> files;
  /// `--random`: fill every argument that has no file.
  bool random = false;
  /// `--seed`: the seed of the random data.
  uint64_t seed = 0;
  /// `--dims B=3,T=200`: the sizes random data gets in `?` dimensions. The
  /// `?` dimensions of x are B and T, of kv B and S, of a mask T and S (in
  /// self-attention S is T); any `?` dimension is also NAME.INDEX (`x.1`,
  /// `mask.0`). A size the graph ties to others sets them too.
  std::string dims;
};

/// Returns the file each argument of `signature` is read from: the
/// `--input` file, else DIR/NAME.npy of `--inputs DIR` (if it exists or
/// there is no `--random`), else "" for random data. An unknown NAME in
/// `--input`, or an argument name that would leave DIR (a path separator,
/// `.` or `..`; the dialect's verifier already refuses such names), is an
/// error. Nothing is read.
llvm::Expected<std::vector<std::string>>
resolveInputPaths(const GraphSignature &signature, const InputOptions &options);

/// Returns one array per argument of `signature`, read from the files
/// resolveInputPaths names, each checked against the
/// argument's type. An unknown NAME in `--input`, a missing input, an
/// unreadable file or a mis-shaped array is an error naming the argument and
/// the file; so is random data that would not fit in memory
/// (runtime/MemoryLimit.h), refused before it is allocated.
/// When random data fills a `?` dimension, the sizes chosen are printed to
/// `log`, e.g. "random sizes of the `?` dimensions: B=7, T=7"; an unknown
/// name in `--dims`, or sizes that contradict the graph, are errors.
llvm::Expected<std::vector<NpyArray>>
bindInputs(const GraphSignature &signature, const InputOptions &options,
           llvm::raw_ostream *log = nullptr);

/// The arrays to call the compiled function with, for the float32 `inputs`
/// of bindInputs: a bf16 argument's array is rounded to nearest even in
/// place (so that the reference of --check sees the values the graph
/// computes with) and its bfloat16 copy is stored in `bf16Copies`, which
/// must outlive the result; every other argument is passed as it is. The
/// names of the rounded arguments are printed to `log`, e.g. "rounded the
/// float32 inputs x, w_q to bf16 (round to nearest even)".
std::vector<const NpyArray *>
roundBF16Arguments(const GraphSignature &signature,
                   std::vector<NpyArray> &inputs,
                   std::vector<NpyArray> &bf16Copies,
                   llvm::raw_ostream *log = nullptr);

} // namespace runtime
} // namespace mha

#endif // MHA_TOOLS_MHARUN_INPUTBINDING_H
