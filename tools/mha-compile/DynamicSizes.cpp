//===- DynamicSizes.cpp - Which `?` sizes of a graph must agree -----------===//

#include "tools/mha-compile/DynamicSizes.h"

#include "llvm/ADT/EquivalenceClasses.h"

using namespace mlir;

namespace mha::compile {

namespace {
/// Trial sizes: every `?` gets `kBase`, the ones under test `kOther`; both
/// differ from 1 so that no broadcast rule can hide a mismatch.
constexpr int64_t kBase = 3;
constexpr int64_t kOther = 5;

/// The argument shapes with every `?` set to kBase, except `changed`.
std::vector<std::vector<int64_t>>
trialShapes(const runtime::GraphSignature &signature,
            llvm::ArrayRef<DynamicDim> changed) {
  std::vector<std::vector<int64_t>> shapes;
  for (const runtime::GraphArgument &argument : signature.arguments) {
    std::vector<int64_t> shape(argument.type.getShape());
    for (int64_t &size : shape)
      if (ShapedType::isDynamic(size))
        size = kBase;
    shapes.push_back(shape);
  }
  for (DynamicDim dim : changed)
    shapes[dim.argument][dim.dim] = kOther;
  return shapes;
}

bool fits(func::FuncOp func, const runtime::GraphSignature &signature,
          llvm::ArrayRef<DynamicDim> changed) {
  llvm::Error error =
      runtime::checkShapesFitTogether(func, trialShapes(signature, changed));
  bool ok = !error;
  llvm::consumeError(std::move(error));
  return ok;
}
} // namespace

llvm::Expected<SizeClasses>
findSizeClasses(func::FuncOp func, const runtime::GraphSignature &signature) {
  std::vector<DynamicDim> dims;
  for (auto [index, argument] : llvm::enumerate(signature.arguments))
    for (auto [dim, size] : llvm::enumerate(argument.type.getShape()))
      if (ShapedType::isDynamic(size))
        dims.push_back({unsigned(index), unsigned(dim)});
  if (!fits(func, signature, {}))
    return llvm::createStringError(
        "the graph does not verify with all its '?' sizes equal");

  // A size that cannot change alone is tied to others; find to which by
  // changing pairs. Graphs have a handful of `?` sizes, so O(n^2) trials of
  // a cheap verification are fine.
  llvm::EquivalenceClasses<unsigned> classes;
  for (unsigned i = 0; i < dims.size(); ++i)
    classes.insert(i);
  for (unsigned i = 0; i < dims.size(); ++i) {
    if (fits(func, signature, {dims[i]}))
      continue;
    for (unsigned j = i + 1; j < dims.size(); ++j)
      if (fits(func, signature, {dims[i], dims[j]}))
        classes.unionSets(i, j);
  }
  SizeClasses result;
  for (auto it = classes.begin(); it != classes.end(); ++it) {
    if (!(*it)->isLeader())
      continue;
    std::vector<DynamicDim> members;
    for (auto member = classes.member_begin(**it);
         member != classes.member_end(); ++member)
      members.push_back(dims[*member]);
    result.push_back(members);
  }
  return result;
}

} // namespace mha::compile
