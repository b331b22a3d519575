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

#include <optional>
#include <string>
#include <vector>

namespace mha {
namespace runtime {

/// One argument of the entry function.
struct GraphArgument {
  /// The name inputs are bound by (`x`, `w_q`, ...).
  std::string name;
  /// Its declared type; `?` dimensions take their size from the input.
  mlir::RankedTensorType type;
};

/// The element type the compiled code holds values of `type` in: F32,
/// BF16, Bool (i1 masks), I64, I8 or I32; nullopt for a type the runtime
/// cannot pass.
std::optional<ElementType> getStoredElementType(mlir::Type type);

/// The element type a caller gives values of `type` in (an .npy file, a
/// NumPy or C array): the stored one, but float32 for bf16, which the
/// runtime rounds (runtime/BFloat16.h): NumPy has no bfloat16.
std::optional<ElementType> getCallerElementType(mlir::Type type);

/// One `?` dimension of one argument.
struct ArgumentDim {
  /// The argument's index.
  unsigned argument;
  /// The dimension's index in that argument.
  unsigned dim;
};

/// What the verifiers of a graph's mha ops imply about the `?` sizes of its
/// arguments: every set of argument shapes that satisfies these (with the
/// declared static sizes and sizes of at least 1) is one that
/// checkShapesFitTogether accepts, and no other. mha-compile turns them into
/// the C checks of a library, and `mha-run --random` picks sizes that satisfy
/// them.
struct SizeRelations {
  /// `?` sizes that must be equal; with `size`, all of them must be that
  /// number (a static size elsewhere in the graph fixes it).
  struct SizeClass {
    /// In argument order; never empty.
    std::vector<ArgumentDim> members;
    std::optional<int64_t> size;
  };
  /// A mask's `?` batch (`classes[mask]`, which has no fixed size) is 1, or
  /// equal to the batch it is broadcast against: `classes[*target]`, or
  /// `targetSize` when that is fixed.
  struct Broadcast {
    unsigned mask;
    std::optional<unsigned> target;
    int64_t targetSize = 0;
  };
  /// One size is at most another (the new tokens of `mha.cache_append`
  /// fit in its cache: T <= C): each side is a class (`lhsClass`,
  /// `rhsClass`) or, when that is empty, a number (`lhsSize`, `rhsSize`).
  struct AtMost {
    std::optional<unsigned> lhsClass, rhsClass;
    int64_t lhsSize = 0, rhsSize = 0;
  };
  /// Every `?` size of the arguments is in exactly one class.
  std::vector<SizeClass> classes;
  std::vector<Broadcast> broadcasts;
  std::vector<AtMost> bounds;

  /// Checks `shapes` (one per argument, each of the declared rank and with
  /// the declared static sizes) against the relations; the error names the
  /// first size that breaks one.
  llvm::Error check(llvm::ArrayRef<std::vector<int64_t>> shapes,
                    llvm::ArrayRef<std::string> names) const;
  /// Returns argument shapes that satisfy the relations: the declared static
  /// sizes, and for each class its fixed size, else `freeSize`, and for a
  /// broadcast mask batch the batch it is broadcast against; a class that
  /// must be at most another size is lowered to it (or the other raised,
  /// when only that one is free).
  std::vector<std::vector<int64_t>>
  pickShapes(llvm::ArrayRef<mlir::RankedTensorType> types,
             int64_t freeSize) const;
};

/// The entry function's arguments and result.
struct GraphSignature {
  /// The arguments in call order.
  std::vector<GraphArgument> arguments;
  /// The type of the one result that is not an argument updated in place
  /// (`y`, the layer's output).
  mlir::RankedTensorType result;
  /// The index of that result among the function's results.
  unsigned resultIndex = 0;
  /// For each result of the function, the argument it is, updated in place
  /// (a key/value cache: the value of a chain of `mha.cache_append` whose
  /// destination is that argument, or the argument itself), or nothing for
  /// `result`. The compiled function returns `result` only
  /// (mha-drop-argument-results): a caller passes the buffers of these
  /// arguments and finds them updated.
  std::vector<std::optional<unsigned>> resultAliases;
  /// What the `?` sizes of the arguments must be (deriveSizeRelations), if
  /// they could be derived.
  std::optional<SizeRelations> sizeRelations;

  /// Returns the index of the argument called `name`, or -1.
  int findArgument(llvm::StringRef name) const;
  /// Returns the argument names, comma-separated, for messages.
  std::string listNames() const;
  /// True when some result is an argument updated in place (a graph that
  /// appends to key/value caches).
  bool hasUpdatedArguments() const { return resultAliases.size() > 1; }
};

/// Reads the signature of `func` (which verifies): ranked f32, i1 or i64
/// tensors without sizes of 0 in; out, one ranked f32 tensor and any number
/// of arguments updated in place (see `resultAliases`); anything else is an
/// error naming the argument or result. Derives the size relations where it
/// can.
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

/// Derives the relations between the `?` argument sizes of `func` from its
/// mha ops (the same rules as their verifiers, which
/// test/unit/SizeRelationsTest.cpp checks against checkShapesFitTogether).
/// Fails when an op other than the mha ops sees a `?` size, or when no sizes
/// fit (a `?` size fixed to two different numbers).
llvm::Expected<SizeRelations>
deriveSizeRelations(mlir::func::FuncOp func, const GraphSignature &signature);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_GRAPHSIGNATURE_H
