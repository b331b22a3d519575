//===- ReferenceGraph.h - A graph of mha ops, evaluated op by op -*- C++
//-*-===//
//
// The reference of `mha-run --check` for graphs that are not one
// mha.attention: a small interpreter that walks the entry function in
// order, keeps a double buffer per SSA value and evaluates each mha op with
// plain loops written from its description in dialects/MhaOps.td
// (mha.sdpa, mha.attention_weights and mha.attention through the attention
// core of runtime/ReferenceAttention.h). Each result is rounded to its
// declared element type (f32, bf16), as the compiled code stores it.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_REFERENCEGRAPH_H
#define MHA_RUNTIME_REFERENCEGRAPH_H

#include "runtime/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace mha {
namespace runtime {

/// A function of mha ops with its bound inputs, ready to evaluate.
class ReferenceGraph {
public:
  /// Checks that every op of `func` (one block) has a reference and works
  /// out the shape of every value from `inputs` (in argument order, f32
  /// arrays for the float arguments). The ops: mha.project,
  /// mha.split_heads, mha.rms_norm, mha.rope, mha.sdpa,
  /// mha.attention_weights, mha.concat_heads, mha.output_project,
  /// mha.cache_append and mha.attention (none with a score_mod region),
  /// arith.extf and arith.truncf of tensors, and func.return. The error names
  /// the first op that has none, and where it is. `func` and `inputs` must
  /// outlive the result; the inputs of arguments updated in place (key/value
  /// caches) are copied now, as the compiled code will write into them.
  static llvm::Expected<ReferenceGraph>
  describe(mlir::func::FuncOp func, const std::vector<NpyArray> &inputs);

  /// Evaluates the function and returns its result (the one that is not an
  /// argument updated in place) as float32. If `probabilities` is given, it
  /// receives the attention weights [B, H, T, S] of the graph's first
  /// mha.sdpa or mha.attention.
  NpyArray compute(NpyArray *probabilities = nullptr) const;

  /// The multiply-adds of the projections and attentions, counted twice,
  /// as AttentionProblem::flops counts those of a layer (every (query, key)
  /// pair, save the keys past a `positions` sequence's last).
  double flops() const { return flopCount; }

private:
  ReferenceGraph(mlir::func::FuncOp func, const std::vector<NpyArray> &inputs,
                 unsigned resultIndex)
      : func(func), inputs(&inputs), resultIndex(resultIndex) {}
  /// The array of each argument: its input, or the copy made by describe.
  std::vector<const NpyArray *> arguments() const;

  mlir::func::FuncOp func;
  const std::vector<NpyArray> *inputs;
  /// The arguments updated in place, by index, as they were given.
  std::vector<std::pair<unsigned, NpyArray>> updatedArguments;
  /// The function's result that is the output.
  unsigned resultIndex;
  double flopCount = 0;
};

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_REFERENCEGRAPH_H
