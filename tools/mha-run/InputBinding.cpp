//===- InputBinding.cpp - Give every graph argument an array --------------===//

#include "tools/mha-run/InputBinding.h"

#include "runtime/MemoryLimit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <random>

using namespace mha::runtime;
using llvm::createStringError;

namespace {
/// The size random data gets where a declared size is `?`: small enough to
/// run at once, not a multiple of the usual tile sizes.
constexpr int64_t kRandomDynamicSize = 7;

/// The shapes random data gets: the declared static sizes, and for each `?`
/// one that fits the graph's other sizes (the graph's size relations), else
/// kRandomDynamicSize.
std::vector<std::vector<int64_t>>
getRandomShapes(const GraphSignature &signature) {
  std::vector<mlir::RankedTensorType> types;
  for (const GraphArgument &argument : signature.arguments)
    types.push_back(argument.type);
  if (signature.sizeRelations)
    return signature.sizeRelations->pickShapes(types, kRandomDynamicSize);
  std::vector<std::vector<int64_t>> shapes;
  for (mlir::RankedTensorType type : types) {
    std::vector<int64_t> shape;
    for (int64_t dim : type.getShape())
      shape.push_back(mlir::ShapedType::isDynamic(dim) ? kRandomDynamicSize
                                                       : dim);
    shapes.push_back(shape);
  }
  return shapes;
}

ElementType getElementType(const GraphArgument &argument) {
  return argument.type.getElementType().isInteger(1) ? ElementType::Bool
                                                     : ElementType::F32;
}

/// Checks, before anything is allocated, that random data for `argument`
/// fits in memory next to the `usedBytes` the inputs before it take.
llvm::Error checkRandomFits(const GraphArgument &argument,
                            llvm::ArrayRef<int64_t> shape, uint64_t usedBytes) {
  ElementType type = getElementType(argument);
  std::string what =
      llvm::formatv("random input '{0}' of shape {1} {2}", argument.name,
                    formatShape(shape), getElementTypeName(type));
  std::optional<int64_t> bytes = getByteCount(shape, type);
  if (!bytes)
    return createStringError(what + ": its byte count overflows");
  if (auto error = checkMemoryLimit(*bytes, what))
    return error;
  return checkMemoryLimit(
      usedBytes + *bytes,
      llvm::formatv("the inputs up to '{0}' together", argument.name));
}

/// Random data for `argument`, scaled like a trained layer so that the
/// softmax is neither flat nor saturated: inputs in [-1, 1), weights in
/// ±1/sqrt(fan-in), biases in ±0.1; masks are 80 % true.
NpyArray randomArray(const GraphArgument &argument,
                     llvm::ArrayRef<int64_t> shape, std::mt19937_64 &engine) {
  bool isMask = getElementType(argument) == ElementType::Bool;
  NpyArray array = NpyArray::zeros(getElementType(argument), shape);
  if (isMask) {
    std::bernoulli_distribution allowed(0.8);
    for (int64_t i = 0; i < array.numElements(); ++i)
      array.bools()[i] = allowed(engine);
    return array;
  }
  double bound = 1.0;
  llvm::StringRef name = argument.name;
  if (name.starts_with("w_") && shape.size() >= 2)
    bound = 1.0 / std::sqrt(double(shape[shape.size() - 2]));
  else if (name.starts_with("b_"))
    bound = 0.1;
  std::uniform_real_distribution<float> value(-bound, bound);
  for (int64_t i = 0; i < array.numElements(); ++i)
    array.f32()[i] = value(engine);
  return array;
}
} // namespace

llvm::Expected<std::vector<std::string>>
mha::runtime::resolveInputPaths(const GraphSignature &signature,
                                const InputOptions &options) {
  // --input NAME=FILE: the name must be an argument.
  std::vector<std::string> paths(signature.arguments.size());
  for (const std::string &spec : options.files) {
    auto [name, file] = llvm::StringRef(spec).split('=');
    if (file.empty())
      return createStringError(
          llvm::formatv("--input '{0}': expected NAME=FILE.npy", spec));
    int index = signature.findArgument(name);
    if (index < 0)
      return createStringError(llvm::formatv(
          "--input {0}: the graph has no argument '{0}' (it takes: {1})", name,
          signature.listNames()));
    paths[index] = file.str();
  }
  if (options.directory.empty())
    return paths;
  for (auto [index, argument] : llvm::enumerate(signature.arguments)) {
    if (!paths[index].empty())
      continue;
    // The verifier keeps `mha.name` a C identifier; this holds for any name
    // that reaches here, so that DIR/NAME.npy is always a file in DIR.
    llvm::StringRef name = argument.name;
    if (name.empty() || name == "." || name == ".." ||
        name.find_first_of("/\\") != llvm::StringRef::npos)
      return createStringError(llvm::formatv(
          "--inputs {0}: argument name '{1}' is not a file name in the "
          "directory",
          options.directory, name));
    llvm::SmallString<256> candidate(options.directory);
    llvm::sys::path::append(candidate, name + ".npy");
    if (llvm::sys::fs::exists(candidate) || !options.random)
      paths[index] = candidate.str().str();
  }
  return paths;
}

llvm::Expected<std::vector<NpyArray>>
mha::runtime::bindInputs(const GraphSignature &signature,
                         const InputOptions &options) {
  auto paths = resolveInputPaths(signature, options);
  if (!paths)
    return paths.takeError();
  std::mt19937_64 engine(options.seed);
  std::vector<std::vector<int64_t>> randomShapes = getRandomShapes(signature);
  std::vector<NpyArray> inputs;
  uint64_t usedBytes = 0;
  for (auto [index, argument] : llvm::enumerate(signature.arguments)) {
    const std::string &path = (*paths)[index];
    if (path.empty()) {
      if (!options.random)
        return createStringError(llvm::formatv(
            "no input for argument '{0}': give --inputs DIR with {0}.npy, "
            "--input {0}=FILE.npy, or --random",
            argument.name));
      if (auto error =
              checkRandomFits(argument, randomShapes[index], usedBytes))
        return std::move(error);
      inputs.push_back(randomArray(argument, randomShapes[index], engine));
      usedBytes += inputs.back().data.size();
      continue;
    }
    auto array = readNpy(path);
    if (!array)
      return createStringError(llvm::formatv("input '{0}': {1}", argument.name,
                                             toString(array.takeError())));
    if (auto error = checkInput(argument, *array, path))
      return std::move(error);
    inputs.push_back(std::move(*array));
    usedBytes += inputs.back().data.size();
  }
  return inputs;
}
