//===- ReferenceGraphOps.h - The mha ops of ReferenceGraph ------*- C++ -*-===//
//
// What runtime/ReferenceGraph.cpp evaluates each mha op with: one function
// per op, written from its description in dialects/MhaOps.td. Each works
// out the result's shape from its operands' (and refuses operands that do
// not fit), and computes its elements unless only the shapes are asked.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_REFERENCEGRAPHOPS_H
#define MHA_RUNTIME_REFERENCEGRAPHOPS_H

#include "runtime/Npy.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace mha {
namespace runtime {
namespace graphref {

/// One SSA value: its shape and, once computed, its elements in double
/// (C order). The i1 and i64 values (masks, lengths) are arguments and
/// stay in their input array.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
  /// The input array of an i1 or i64 argument; null otherwise.
  const NpyArray *array = nullptr;

  int64_t numElements() const;
  /// The elements as floats (the f32 parameters of the attention ops).
  std::vector<float> toFloats() const;
};

/// What one op's evaluation reads and adds to.
struct OpContext {
  /// The tensor of an operand (null for an absent optional one).
  std::function<const Tensor *(mlir::Value)> lookup;
  /// Only the shapes: no element is computed.
  bool shapesOnly = true;
  /// The multiply-adds counted twice (ReferenceGraph::flops).
  double flops = 0;
  /// Where the first mha.sdpa or mha.attention writes its weights
  /// [B, H, T, S], if asked; null once written (or never asked).
  NpyArray *probabilities = nullptr;
};

/// Evaluates `op`, one of the mha ops ReferenceGraph::describe lists,
/// into `result`; the error says why its operands do not fit.
llvm::Error evaluateOp(mlir::Operation *op, OpContext &context, Tensor &result);

/// The attention ops (runtime/ReferenceGraphAttention.cpp).
llvm::Error evaluateSdpa(mlir::Operation *op, OpContext &context,
                         Tensor &result);
llvm::Error evaluateAttentionLayer(mlir::Operation *op, OpContext &context,
                                   Tensor &result);

/// [B, T, H·d] (token-major) to [B, H, T, d] (`toHeads`), or back.
void moveHeads(const std::vector<double> &from, std::vector<double> &to,
               int64_t b, int64_t t, int64_t h, int64_t d, bool toHeads);

/// An error about `op`'s operands: "the reference check cannot evaluate
/// OP (PLACE): MESSAGE".
llvm::Error operandError(mlir::Operation *op, const llvm::Twine &message);

/// Where `op` is in the graph's text, `FILE:LINE:COL`.
std::string placeOf(mlir::Operation *op);

} // namespace graphref
} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_REFERENCEGRAPHOPS_H
