//===- ShapeChecker.h - The shape diagnostics of the mha ops ----*- C++ -*-===//
//
// The verifiers of every mha op (MhaOps.cpp, MhaOnlineAttention.cpp) say
// what they expected and what they found in the same words: these are
// those words, written once.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_DIALECTS_SHAPECHECKER_H
#define MHA_DIALECTS_SHAPECHECKER_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/MathExtras.h"

#include <string>

namespace mlir {
namespace mha {

/// Prints one dimension as the IR does: `?` for a dynamic size.
inline std::string dimToString(int64_t dim) {
  return ShapedType::isDynamic(dim) ? "?" : std::to_string(dim);
}

/// Two sizes agree unless both are known and differ: `?` matches anything,
/// because dynamic batch and sequence sizes are only known at run time.
inline bool dimsAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// The ranked tensor type of `value` (every mha operand has one).
inline RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Emits the diagnostics of one op. Each check names the operand, what was
/// expected and what was found, so that a user can fix the graph without
/// reading the verifier.
class ShapeChecker {
public:
  explicit ShapeChecker(Operation *op) : op(op) {}

  /// `value` has rank `rank`; `layout` spells the expected dimensions.
  LogicalResult rank(Value value, StringRef name, int64_t rank,
                     StringRef layout) {
    int64_t found = tensorType(value).getRank();
    if (found == rank)
      return success();
    return op->emitOpError() << "expects " << name << " to have rank " << rank
                             << " (" << layout << "), got rank " << found;
  }

  /// An operand, its name, the rank it must have and the layout that rank
  /// spells, for `ranks`.
  struct RankedOperand {
    Value value;
    StringRef name;
    int64_t rank;
    StringRef layout;
  };

  /// Each of `operands` that is present (an optional one may be null) has
  /// its rank.
  LogicalResult ranks(ArrayRef<RankedOperand> operands) {
    for (const RankedOperand &operand : operands)
      if (operand.value && failed(rank(operand.value, operand.name,
                                       operand.rank, operand.layout)))
        return failure();
    return success();
  }

  /// Dimension `index` of `value`, named `dimName`, is a static size.
  LogicalResult isStatic(Value value, StringRef name, int64_t index,
                         StringRef dimName) {
    if (!tensorType(value).isDynamicDim(index))
      return success();
    return op->emitOpError() << "expects a static " << dimName << " (dimension "
                             << index << " of " << name << "), got ?";
  }

  /// `what` has size `expected` (when both sizes are known).
  LogicalResult dim(StringRef what, int64_t expected, int64_t found) {
    if (dimsAgree(expected, found))
      return success();
    return op->emitOpError()
           << "expects " << what << " to be " << dimToString(expected)
           << ", got " << dimToString(found);
  }

  /// Sets `product` to `a * b`, the static size `what`. Sizes from a graph
  /// file can be anything; a product past 64 bits is no tensor size (and
  /// signed overflow in C++).
  LogicalResult multiply(StringRef what, int64_t a, int64_t b,
                         int64_t &product) {
    if (!llvm::MulOverflow(a, b, product))
      return success();
    return op->emitOpError() << "expects " << what << " (" << a << " * " << b
                             << ") to fit in 64 bits";
  }

  /// A head count read off a shape is at least 1 (those that are
  /// attributes are `Mha_HeadCountAttr`).
  LogicalResult positive(StringRef name, int64_t value) {
    if (value > 0)
      return success();
    return op->emitOpError()
           << "expects " << name << " to be positive, got " << value;
  }

  /// `divisor` divides `width`, the size of `what`.
  LogicalResult divides(StringRef divisorName, int64_t divisor, StringRef what,
                        int64_t width) {
    if (width % divisor == 0)
      return success();
    return op->emitOpError() << "expects " << divisorName << " (" << divisor
                             << ") to divide " << what << " (" << width << ")";
  }

  /// A bias (static and of rank 1, by its ODS type) has `columns`
  /// elements.
  LogicalResult bias(Value bias, StringRef name, int64_t columns) {
    if (!bias)
      return success();
    return dim(Twine(name + " size").str(), columns,
               tensorType(bias).getDimSize(0));
  }

private:
  Operation *op;
};

} // namespace mha
} // namespace mlir

#endif // MHA_DIALECTS_SHAPECHECKER_H
