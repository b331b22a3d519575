//===- InputBinding.cpp - Give every graph argument an array --------------===//

#include "tools/mha-run/InputBinding.h"
#include "tools/mha-run/PagedCache.h"

#include "runtime/BFloat16.h"

#include "runtime/MemoryLimit.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <map>
#include <random>

using namespace mha::runtime;
using llvm::createStringError;

namespace {
/// The size random data gets where a declared size is `?` and `--dims` does
/// not set it: small enough to run at once, not a multiple of the usual tile
/// sizes.
constexpr int64_t kRandomDynamicSize = 7;
/// The largest size `--dims` accepts (as mha-gen's sizes).
constexpr int64_t kMaxDimSize = int64_t(1) << 31;

/// The letters that name the `?` dimensions of the arguments mha-gen writes:
/// x [B, T, D], kv [B, S, D_kv], mask [B or 1, T, S], attn_bias [B or 1,
/// H or 1, T or 1, S]. Any other `?` dimension is called NAME.INDEX
/// (`mask.0`, `attn_bias.2`, `arg3.1`): the sizes that may broadcast (1) are
/// not the letter's.
struct DimLetter {
  llvm::StringLiteral argument;
  unsigned dim;
  llvm::StringLiteral letter;
};
constexpr DimLetter kDimLetters[] = {
    {"x", 0, "B"},    {"x", 1, "T"},    {"kv", 0, "B"},       {"kv", 1, "S"},
    {"mask", 1, "T"}, {"mask", 2, "S"}, {"attn_bias", 3, "S"}};

/// The name `--dims` and the report of `--random` give dimension `dim` of
/// `argument`: a letter of kDimLetters, else NAME.INDEX.
std::string getDimName(const GraphArgument &argument, unsigned dim) {
  for (const DimLetter &letter : kDimLetters)
    if (argument.name == letter.argument && dim == letter.dim)
      return letter.letter.str();
  return llvm::formatv("{0}.{1}", argument.name, dim);
}

/// The `?` dimensions that the key of a `--dims` entry names: a letter (S is
/// also T's dimension of x when there is no kv: self-attention), or
/// NAME.INDEX.
std::vector<ArgumentDim> findDims(const GraphSignature &signature,
                                  llvm::StringRef key) {
  bool selfAttention = signature.findArgument("kv") < 0;
  std::vector<ArgumentDim> found;
  for (auto [index, argument] : llvm::enumerate(signature.arguments))
    for (auto [dim, size] : llvm::enumerate(argument.type.getShape())) {
      if (!mlir::ShapedType::isDynamic(size))
        continue;
      std::string name = getDimName(argument, dim);
      bool selfKeys = key == "S" && selfAttention && name == "T";
      if (key == name || selfKeys ||
          key == llvm::formatv("{0}.{1}", argument.name, dim).str())
        found.push_back({unsigned(index), unsigned(dim)});
    }
  return found;
}

/// The names of all `?` dimensions of the arguments, for messages.
std::string listDimNames(const GraphSignature &signature) {
  std::vector<std::string> names;
  for (const GraphArgument &argument : signature.arguments)
    for (auto [dim, size] : llvm::enumerate(argument.type.getShape()))
      if (mlir::ShapedType::isDynamic(size)) {
        std::string name = getDimName(argument, dim);
        if (!llvm::is_contained(names, name))
          names.push_back(name);
      }
  if (names.empty())
    return "none: every size is static";
  return llvm::join(names, ", ");
}

/// Parses `--dims` into (key, size) pairs.
llvm::Expected<std::vector<std::pair<std::string, int64_t>>>
parseDims(llvm::StringRef spec) {
  std::vector<std::pair<std::string, int64_t>> entries;
  llvm::SmallVector<llvm::StringRef> parts;
  spec.split(parts, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) {
    auto [key, value] = part.trim().split('=');
    int64_t size = 0;
    if (key.trim().empty() || value.trim().getAsInteger(10, size))
      return createStringError(llvm::formatv(
          "--dims '{0}': expected NAME=SIZE, e.g. --dims T=200,B=3", part));
    if (size < 1 || size > kMaxDimSize)
      return createStringError(llvm::formatv(
          "--dims {0}: the size must be between 1 and {1}, got {2}", key.trim(),
          kMaxDimSize, size));
    entries.emplace_back(key.trim().str(), size);
  }
  return entries;
}

/// The shapes random data gets: the declared static sizes, and for each `?`
/// the size `--dims` gives it, else one that fits the graph's other sizes
/// (the graph's size relations), else kRandomDynamicSize.
llvm::Expected<std::vector<std::vector<int64_t>>>
getRandomShapes(const GraphSignature &signature, llvm::StringRef dimsSpec) {
  auto entries = parseDims(dimsSpec);
  if (!entries)
    return entries.takeError();
  std::vector<mlir::RankedTensorType> types;
  for (const GraphArgument &argument : signature.arguments)
    types.push_back(argument.type);

  // The size each `?` dimension is given, and the entry that gave it.
  std::map<std::pair<unsigned, unsigned>, std::pair<std::string, int64_t>>
      given;
  std::optional<SizeRelations> relations = signature.sizeRelations;
  auto classOf = [&](ArgumentDim dim) -> std::optional<unsigned> {
    if (!relations)
      return std::nullopt;
    for (auto [index, sizeClass] : llvm::enumerate(relations->classes))
      for (ArgumentDim member : sizeClass.members)
        if (member.argument == dim.argument && member.dim == dim.dim)
          return unsigned(index);
    return std::nullopt;
  };
  for (auto &[key, size] : *entries) {
    std::vector<ArgumentDim> dims = findDims(signature, key);
    if (dims.empty())
      return createStringError(llvm::formatv(
          "--dims {0}: the graph has no `?` size called '{0}' (its `?` "
          "sizes: {1})",
          key, listDimNames(signature)));
    // A size the graph ties to others sets them all: the class.
    std::vector<ArgumentDim> all = dims;
    for (ArgumentDim dim : dims)
      if (std::optional<unsigned> index = classOf(dim)) {
        SizeRelations::SizeClass &sizeClass = relations->classes[*index];
        if (sizeClass.size && *sizeClass.size != size)
          return createStringError(
              llvm::formatv("--dims {0}={1}: the graph fixes this size to {2}",
                            key, size, *sizeClass.size));
        llvm::append_range(all, sizeClass.members);
      }
    for (ArgumentDim dim : all) {
      auto [it, inserted] =
          given.try_emplace({dim.argument, dim.dim}, key, size);
      if (!inserted && it->second.second != size)
        return createStringError(llvm::formatv(
            "--dims {0}={1} and {2}={3} name the same size (the graph makes "
            "them equal)",
            it->second.first, it->second.second, key, size));
    }
  }

  if (relations) {
    // Fix the classes given; a mask batch that is given is not overridden
    // by the batch it is broadcast against.
    for (auto [index, sizeClass] : llvm::enumerate(relations->classes)) {
      ArgumentDim first = sizeClass.members.front();
      auto it = given.find({first.argument, first.dim});
      if (it != given.end())
        sizeClass.size = it->second.second;
    }
    llvm::erase_if(
        relations->broadcasts, [&](const SizeRelations::Broadcast &broadcast) {
          ArgumentDim dim = relations->classes[broadcast.mask].members.front();
          return given.count({dim.argument, dim.dim}) > 0;
        });
    return relations->pickShapes(types, kRandomDynamicSize);
  }
  std::vector<std::vector<int64_t>> shapes;
  for (auto [index, type] : llvm::enumerate(types)) {
    std::vector<int64_t> shape;
    for (auto [dim, size] : llvm::enumerate(type.getShape())) {
      auto it = given.find({unsigned(index), unsigned(dim)});
      shape.push_back(!mlir::ShapedType::isDynamic(size) ? size
                      : it != given.end()                ? it->second.second
                                                         : kRandomDynamicSize);
    }
    shapes.push_back(shape);
  }
  return shapes;
}

ElementType getElementType(const GraphArgument &argument) {
  return getCallerElementType(argument.type.getElementType())
      .value_or(ElementType::F32);
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
/// ±1/sqrt(fan-in), biases in ±0.1; masks are 80 % true. The served models'
/// parameters get values of their kind: QK-norm weights in 1 ± 0.5, ALiBi
/// slopes in [0.01, 0.5) (BLOOM's are 2^-k), RoPE inverse frequencies
/// 10000^-u for u in [0, 1) (positive, spread over decades as
/// base^(-2i/R) is); sinks and score biases in [-1, 1).
NpyArray randomArray(const GraphArgument &argument,
                     llvm::ArrayRef<int64_t> shape, std::mt19937_64 &engine) {
  bool isMask = getElementType(argument) == ElementType::Bool;
  NpyArray array = NpyArray::zeros(getElementType(argument), shape);
  // Cache lengths: 0, an empty cache (any other number would have to fit
  // the cache's capacity); the codes of an int8 cache: 0, as empty; a
  // block table: page 0 for every entry, a page of any pool.
  if (array.elementType == ElementType::I64 ||
      array.elementType == ElementType::I8 ||
      array.elementType == ElementType::I32)
    return array;
  if (isMask) {
    std::bernoulli_distribution allowed(0.8);
    for (int64_t i = 0; i < array.numElements(); ++i)
      array.bools()[i] = allowed(engine);
    return array;
  }
  llvm::StringRef name = argument.name;
  auto fill = [&](auto &&draw) {
    for (int64_t i = 0; i < array.numElements(); ++i)
      array.f32()[i] = float(draw());
    return std::move(array);
  };
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  if (name == "q_norm" || name == "k_norm")
    return fill([&] { return 0.5 + unit(engine); });
  if (name == "alibi_slopes")
    return fill([&] { return 0.01 + 0.49 * unit(engine); });
  if (name == "rope_inv_freq")
    return fill([&] { return std::pow(10000.0, -unit(engine)); });
  double bound = 1.0;
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
                         const InputOptions &options, llvm::raw_ostream *log) {
  auto paths = resolveInputPaths(signature, options);
  if (!paths)
    return paths.takeError();
  std::mt19937_64 engine(options.seed);
  if (!options.dims.empty() && !options.random)
    return createStringError("--dims sets the `?` sizes of random inputs; "
                             "give --random too");
  auto randomShapes = getRandomShapes(signature, options.dims);
  if (!randomShapes)
    return randomShapes.takeError();
  // The sizes chosen for `?` dimensions, by name, in argument order.
  std::vector<std::pair<std::string, int64_t>> chosen;
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
      const std::vector<int64_t> &shape = (*randomShapes)[index];
      if (auto error = checkRandomFits(argument, shape, usedBytes))
        return std::move(error);
      for (auto [dim, size] : llvm::enumerate(argument.type.getShape()))
        if (mlir::ShapedType::isDynamic(size)) {
          std::pair<std::string, int64_t> entry(getDimName(argument, dim),
                                                shape[dim]);
          if (!llvm::is_contained(chosen, entry))
            chosen.push_back(entry);
        }
      inputs.push_back(randomArray(argument, shape, engine));
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
  if (log && !chosen.empty()) {
    *log << "random sizes of the `?` dimensions: ";
    llvm::interleaveComma(chosen, *log, [&](const auto &entry) {
      *log << entry.first << "=" << entry.second;
    });
    *log << " (--dims sets them)\n";
  }
  if (auto error = mha::tools::checkCallBlockTable(signature, inputs))
    return std::move(error);
  return inputs;
}

std::vector<const NpyArray *> mha::runtime::roundBF16Arguments(
    const GraphSignature &signature, std::vector<NpyArray> &inputs,
    std::vector<NpyArray> &bf16Copies, llvm::raw_ostream *log) {
  bf16Copies.clear();
  // Reserved up front: the pointers below must not move.
  bf16Copies.reserve(inputs.size());
  std::vector<const NpyArray *> callInputs;
  std::vector<std::string> rounded;
  for (auto [argument, input] : llvm::zip(signature.arguments, inputs)) {
    if (!argument.type.getElementType().isBF16()) {
      callInputs.push_back(&input);
      continue;
    }
    roundToBF16InPlace(input);
    bf16Copies.push_back(toBF16Array(input));
    callInputs.push_back(&bf16Copies.back());
    rounded.push_back(argument.name);
  }
  if (log && !rounded.empty())
    *log << "rounded the float32 inputs " << llvm::join(rounded, ", ")
         << " to bf16 (round to nearest even)\n";
  return callInputs;
}
