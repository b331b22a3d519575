//===- AttentionProblem.h - One attention layer with its inputs -*- C++ -*-===//
//
// Connects a graph's `mha.attention` with the plain C++ reference: reads the
// sizes off the op and the bound inputs, so that `mha-run --check` can
// compute the same layer independently, and counts its FLOPs for timing.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_ATTENTIONPROBLEM_H
#define MHA_RUNTIME_ATTENTIONPROBLEM_H

#include "runtime/Npy.h"
#include "runtime/ReferenceAttention.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace mha {
namespace runtime {

/// The sizes of one attention layer and pointers into its bound inputs.
struct AttentionProblem {
  /// The sizes, read from the op and the inputs.
  AttentionShape shape;
  /// The inputs; they point into the arrays given to describeAttention.
  AttentionOperands operands;

  /// The multiply-adds of the layer, counted twice: the four projections and
  /// Q·Kᵀ and P·V over every (query, key) pair (masked ones too, so causal
  /// layers report dense-equivalent rates, as the peers do).
  double flops() const;
  /// Whether the function returns the attention's result as it is, so that
  /// the reference's output is the function's (false when the graph computes
  /// more from it, e.g. a projection after the layer).
  bool returnsLayerOutput = false;
};

/// Describes the single `mha.attention` of `func`, whose operands must be
/// function arguments, bound to `inputs` (in argument order).
llvm::Expected<AttentionProblem>
describeAttention(mlir::func::FuncOp func, const std::vector<NpyArray> &inputs);

/// Runs the reference on `problem` and returns y [B, T, D_out]; if
/// `probabilities` is given, it receives the attention weights [B, H, T, S].
NpyArray computeReference(const AttentionProblem &problem,
                          NpyArray *probabilities = nullptr);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_ATTENTIONPROBLEM_H
