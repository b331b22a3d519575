//===- GraphSignature.h - The arguments a graph function takes --*- C++ -*-===//
//
// mha-run binds `.npy` files to the arguments of a graph's entry function by
// name. The name of an argument is its `mha.name` attribute (mha-gen writes
// one on every argument), else `arg<N>`.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_GRAPHSIGNATURE_H
#define MHA_RUNTIME_GRAPHSIGNATURE_H

#include "runtime/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mha {
namespace runtime {

/// The argument attribute that names a graph argument.
constexpr llvm::StringLiteral kArgNameAttr = "mha.name";

/// One argument of the entry function.
struct GraphArgument {
  /// The name inputs are bound by (`x`, `w_q`, ...).
  std::string name;
  /// Its declared type; `?` dimensions take their size from the input.
  mlir::RankedTensorType type;
};

/// The entry function's arguments and result.
struct GraphSignature {
  /// The arguments in call order.
  std::vector<GraphArgument> arguments;
  /// The type of the single result.
  mlir::RankedTensorType result;

  /// Returns the index of the argument called `name`, or -1.
  int findArgument(llvm::StringRef name) const;
  /// Returns the argument names, comma-separated, for messages.
  std::string listNames() const;
};

/// Reads the signature of `func`: ranked f32 or i1 tensors without sizes of
/// 0 in, one ranked f32 tensor out; anything else is an error naming the
/// argument.
llvm::Expected<GraphSignature> readSignature(mlir::func::FuncOp func);

/// Checks that `array` can be passed as `argument`: same element type, same
/// rank, equal static sizes. `source` names where the array came from.
llvm::Error checkInput(const GraphArgument &argument, const NpyArray &array,
                       llvm::StringRef source);

/// Checks that the inputs fit together as the graph needs (a `?` batch is the
/// same size in every input, a mask matches the sequence lengths, ...) by
/// verifying a copy of `func` specialized to the input shapes. On failure the
/// error carries the verifier's messages. On success `resultType`, if given,
/// is set to the type the returned value has for these shapes (`?` sizes
/// resolved where the mha ops determine them).
llvm::Error
checkInputsFitTogether(mlir::func::FuncOp func,
                       llvm::ArrayRef<const NpyArray *> inputs,
                       mlir::RankedTensorType *resultType = nullptr);

/// The same check on shapes alone (one per argument, in order), for callers
/// that have no data yet (e.g. to work out which `?` sizes must agree).
llvm::Error
checkShapesFitTogether(mlir::func::FuncOp func,
                       llvm::ArrayRef<std::vector<int64_t>> shapes,
                       mlir::RankedTensorType *resultType = nullptr);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_GRAPHSIGNATURE_H
