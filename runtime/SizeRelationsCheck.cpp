//===- SizeRelationsCheck.cpp - Sizes checked and picked by the relations -===//
//
// What the size relations of a graph's `?` arguments (derived in
// SizeRelations.cpp from the verifiers' rules) do with concrete sizes: check
// a call's shapes against them, each failure naming the arguments'
// dimensions involved, and pick shapes that satisfy them (the random inputs
// of `mha-run --random` and of the tests).
//
//===----------------------------------------------------------------------===//

#include "runtime/GraphSignature.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using llvm::createStringError;

namespace mha::runtime {

llvm::Error SizeRelations::check(llvm::ArrayRef<std::vector<int64_t>> shapes,
                                 llvm::ArrayRef<std::string> names) const {
  auto sizeOf = [&](ArgumentDim dim) { return shapes[dim.argument][dim.dim]; };
  auto name = [&](ArgumentDim dim) {
    return llvm::formatv("{0}[{1}]", names[dim.argument], dim.dim).str();
  };
  for (const SizeClass &sizeClass : classes) {
    ArgumentDim first = sizeClass.members.front();
    for (ArgumentDim dim : sizeClass.members) {
      if (sizeClass.size && sizeOf(dim) != *sizeClass.size)
        return createStringError(llvm::formatv("{0} must be {1}, got {2}",
                                               name(dim), *sizeClass.size,
                                               sizeOf(dim)));
      if (sizeOf(dim) != sizeOf(first))
        return createStringError(llvm::formatv("{0} ({1}) must equal {2} ({3})",
                                               name(dim), sizeOf(dim),
                                               name(first), sizeOf(first)));
    }
  }
  for (const Broadcast &broadcast : broadcasts) {
    ArgumentDim mask = classes[broadcast.mask].members.front();
    int64_t target = broadcast.targetSize;
    std::string targetName = std::to_string(target);
    if (broadcast.target) {
      ArgumentDim dim = classes[*broadcast.target].members.front();
      target = sizeOf(dim);
      targetName = name(dim);
    }
    if (sizeOf(mask) != 1 && sizeOf(mask) != target)
      return createStringError(
          llvm::formatv("{0} ({1}) must be 1 or equal {2} ({3})", name(mask),
                        sizeOf(mask), targetName, target));
  }
  for (const AtMost &bound : bounds) {
    auto side = [&](std::optional<unsigned> sizeClass, int64_t size) {
      if (!sizeClass)
        return std::pair(size, std::to_string(size));
      ArgumentDim dim = classes[*sizeClass].members.front();
      return std::pair(sizeOf(dim), name(dim));
    };
    auto [lhs, lhsName] = side(bound.lhsClass, bound.lhsSize);
    auto [rhs, rhsName] = side(bound.rhsClass, bound.rhsSize);
    if (lhs > rhs)
      return createStringError(llvm::formatv(
          "{0} ({1}) must be at most {2} ({3})", lhsName, lhs, rhsName, rhs));
  }
  return llvm::Error::success();
}

std::vector<std::vector<int64_t>>
SizeRelations::pickShapes(llvm::ArrayRef<RankedTensorType> types,
                          int64_t freeSize) const {
  std::vector<int64_t> sizes;
  for (const SizeClass &sizeClass : classes)
    sizes.push_back(sizeClass.size.value_or(freeSize));
  // A broadcast mask batch takes the size it is broadcast against, or 1 when
  // two broadcasts want different ones.
  std::vector<std::optional<int64_t>> wanted(classes.size());
  for (const Broadcast &broadcast : broadcasts) {
    int64_t target =
        broadcast.target ? sizes[*broadcast.target] : broadcast.targetSize;
    std::optional<int64_t> &size = wanted[broadcast.mask];
    size = !size || *size == target ? target : 1;
  }
  for (auto [index, size] : llvm::enumerate(wanted))
    if (size)
      sizes[index] = *size;
  // A size that must be at most another: lower it to that one, or raise
  // that one when it is the free one.
  for (const AtMost &bound : bounds) {
    int64_t rhs = bound.rhsClass ? sizes[*bound.rhsClass] : bound.rhsSize;
    int64_t lhs = bound.lhsClass ? sizes[*bound.lhsClass] : bound.lhsSize;
    if (lhs <= rhs)
      continue;
    if (bound.lhsClass && !classes[*bound.lhsClass].size)
      sizes[*bound.lhsClass] = rhs;
    else if (bound.rhsClass && !classes[*bound.rhsClass].size)
      sizes[*bound.rhsClass] = lhs;
  }

  std::vector<std::vector<int64_t>> shapes;
  for (RankedTensorType type : types)
    shapes.emplace_back(type.getShape());
  for (auto [index, sizeClass] : llvm::enumerate(classes))
    for (ArgumentDim dim : sizeClass.members)
      shapes[dim.argument][dim.dim] = sizes[index];
  return shapes;
}

} // namespace mha::runtime
