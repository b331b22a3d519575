//===- CWrapperChecks.cpp - The wrapper's checks of a call ----------------===//
//
// What the generated wrapper checks before a call reaches the compiled code:
// null pointers, positive sizes, the static sizes, the relations between
// `?` sizes, mask bytes, a cache's lengths and overlapping buffers. The
// messages are in the words of runtime::SizeRelations::check, so that the
// library and mha-run refuse the same calls.
//
//===----------------------------------------------------------------------===//

#include "tools/mha-compile/CInterfaceSupport.h"
#include "tools/mha-compile/PagedLibrary.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace mlir;

namespace mha::compile {

/// Null pointers, positive sizes and the static sizes of the arguments that
/// `which` selects.
static void writeArgumentChecks(llvm::raw_ostream &os,
                                const LibraryInterface &interface,
                                Arguments which) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  const auto &arguments = interface.signature.arguments;
  for (auto [index, argument] : llvm::enumerate(arguments)) {
    if (!takes(interface, which, index))
      continue;
    std::string id = toCIdentifier(argument.name);
    int64_t rank = argument.type.getRank();
    os << "  if (!" << id << " || !" << id << "_shape)\n    return " << n
       << "_fail(" << upper << "_BAD_ARGUMENT, \"" << id
       << ": null pointer\");\n"
       << "  if (!" << n << "_count(" << rank << ", " << id
       << "_shape, &count))\n    return " << n << "_fail(" << upper
       << "_BAD_ARGUMENT, \"" << id
       << ": sizes must be positive and their product fit in int64_t\");\n";
    for (auto [dim, size] : llvm::enumerate(argument.type.getShape()))
      if (!ShapedType::isDynamic(size))
        os << "  if (" << id << "_shape[" << dim << "] != " << size
           << ")\n    return " << n << "_fail(" << upper << "_BAD_ARGUMENT, \""
           << id << ": dimension " << dim << " must be " << size
           << ", got %lld\", (long long)" << id << "_shape[" << dim << "]);\n";
  }
}

/// The relations between `?` sizes, as far as the arguments that `which`
/// selects have them.
static void writeRelationChecks(llvm::raw_ostream &os,
                                const LibraryInterface &interface,
                                Arguments which) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  const runtime::SizeRelations &relations = interface.sizeRelations;
  auto name = [&](runtime::ArgumentDim dim) { return dimName(interface, dim); };
  auto known = [&](runtime::ArgumentDim dim) {
    return takes(interface, which, dim.argument);
  };
  // The first member of a class that these arguments have.
  auto firstKnown = [&](const runtime::SizeRelations::SizeClass &sizeClass)
      -> std::optional<runtime::ArgumentDim> {
    for (runtime::ArgumentDim dim : sizeClass.members)
      if (known(dim))
        return dim;
    return std::nullopt;
  };
  auto fail = [&](llvm::StringRef condition, llvm::StringRef format,
                  llvm::StringRef values) {
    os << "  if (" << condition << ")\n    return " << n << "_fail(" << upper
       << "_BAD_ARGUMENT, \"" << format << "\", " << values << ");\n";
  };
  for (const runtime::SizeRelations::SizeClass &sizeClass : relations.classes) {
    std::optional<runtime::ArgumentDim> firstDim = firstKnown(sizeClass);
    if (!firstDim)
      continue;
    std::string first = name(*firstDim);
    for (runtime::ArgumentDim dim : sizeClass.members) {
      if (!known(dim))
        continue;
      std::string size = name(dim);
      if (sizeClass.size)
        fail(size + " != " + std::to_string(*sizeClass.size),
             size + " must be " + std::to_string(*sizeClass.size) +
                 ", got %lld",
             "(long long)" + size);
      else if (size != first)
        fail(size + " != " + first,
             size + " (%lld) must equal " + first + " (%lld)",
             "(long long)" + size + ", (long long)" + first);
    }
  }
  for (const runtime::SizeRelations::Broadcast &broadcast :
       relations.broadcasts) {
    std::optional<runtime::ArgumentDim> maskDim =
        firstKnown(relations.classes[broadcast.mask]);
    std::optional<runtime::ArgumentDim> targetDim;
    if (broadcast.target) {
      targetDim = firstKnown(relations.classes[*broadcast.target]);
      if (!targetDim)
        continue;
    }
    if (!maskDim)
      continue;
    std::string mask = name(*maskDim);
    std::string target =
        targetDim ? name(*targetDim) : std::to_string(broadcast.targetSize);
    fail(mask + " != 1 && " + mask + " != " + target,
         mask + " (%lld) must be 1 or equal " + target + " (%lld)",
         "(long long)" + mask + ", (long long)" + target);
  }
  // Sizes that must be at most others (a cache_append's new tokens and its
  // cache's capacity), as far as these arguments have them.
  std::set<std::string> checkedBounds; // the K and V caches repeat theirs
  for (const runtime::SizeRelations::AtMost &bound : relations.bounds) {
    auto side = [&](std::optional<unsigned> sizeClass,
                    int64_t size) -> std::optional<std::string> {
      if (!sizeClass)
        return std::to_string(size);
      std::optional<runtime::ArgumentDim> dim =
          firstKnown(relations.classes[*sizeClass]);
      if (!dim)
        return std::nullopt;
      return name(*dim);
    };
    std::optional<std::string> lhs = side(bound.lhsClass, bound.lhsSize);
    std::optional<std::string> rhs = side(bound.rhsClass, bound.rhsSize);
    if (lhs && rhs && (bound.lhsClass || bound.rhsClass) &&
        checkedBounds.insert(*lhs + " <= " + *rhs).second)
      fail(*lhs + " > " + *rhs,
           *lhs + " (%lld) must be at most " + *rhs + " (%lld)",
           "(long long)" + *lhs + ", (long long)" + *rhs);
  }
}

/// Mask bytes, and a cache graph's lengths.
static void writeContentChecks(llvm::raw_ostream &os,
                               const LibraryInterface &interface,
                               Arguments which) {
  const std::string &n = interface.name;
  std::string upper = llvm::StringRef(n).upper();
  const auto &arguments = interface.signature.arguments;
  // A mask byte is read by its low bit; refuse the bytes that would mean
  // something other than what the caller wrote. Sizes are checked by now.
  for (auto [index, argument] : llvm::enumerate(arguments)) {
    if (!isMask(argument) || !takes(interface, which, index))
      continue;
    std::string id = toCIdentifier(argument.name);
    os << "  " << n << "_count(" << argument.type.getRank() << ", " << id
       << "_shape, &count);\n"
       << "  for (int64_t i = 0; i < count; ++i)\n"
       << "    if (" << id << "[i] > 1)\n"
       << "      return " << n << "_fail(" << upper << "_BAD_ARGUMENT, \"" << id
       << ": bool element %lld is the byte %d (expected 0 or 1)\", "
       << "(long long)i, (int)" << id << "[i]);\n";
  }
  // A cache graph's lengths: the new tokens must fit after each sequence's
  // own, or the compiled code would write past the cache.
  // A `?` capacity is the cache argument's own size.
  std::optional<CacheLayout> cache = findCache(interface);
  if (cache && takes(interface, which, cache->x) &&
      takes(interface, which, cache->lengths) &&
      takes(interface, which, cache->keyCache)) {
    std::string x = toCIdentifier(arguments[cache->x].name);
    std::string lengths = toCIdentifier(arguments[cache->lengths].name);
    std::string capacity =
        ShapedType::isDynamic(cache->capacity)
            ? "(long long)" + toCIdentifier(arguments[cache->keyCache].name) +
                  "_shape[2]"
            : std::to_string(cache->capacity);
    os << "  if (" << x << "_shape[1] > " << capacity << ")\n    return " << n
       << "_fail(" << upper << "_BAD_ARGUMENT, \"" << x
       << ": %lld new tokens do not fit in the cache's capacity of %lld\", "
       << "(long long)" << x << "_shape[1], (long long)" << capacity << ");\n"
       << "  for (int64_t b = 0; b < " << lengths << "_shape[0]; ++b)\n"
       << "    if (" << lengths << "[b] < 0 || " << lengths << "[b] > "
       << capacity << " - " << x << "_shape[1])\n"
       << "      return " << n << "_fail(" << upper << "_BAD_ARGUMENT, \""
       << lengths << ": sequence %lld holds %lld tokens; with %lld new ones "
       << "it must be between 0 and %lld (the capacity %lld minus the new "
          "tokens)\", (long long)b, (long long)"
       << lengths << "[b], (long long)" << x << "_shape[1], (long long)("
       << capacity << " - " << x << "_shape[1]), (long long)" << capacity
       << ");\n";
  }
}

void writeChecks(llvm::raw_ostream &os, const LibraryInterface &interface,
                 Arguments which) {
  writeArgumentChecks(os, interface, which);
  writeRelationChecks(os, interface, which);
  writeContentChecks(os, interface, which);
  writePagedChecks(os, interface, which);
}

/// The end of NAME_check: every argument's bytes (their sizes are checked
/// by now), the result's room and its shape, through NAME_check_disjoint.
/// With `own_weights` (NAME_call) the weights are the handle's copies,
/// which no caller's buffer can share, and whose bf16 ones are half the
/// bytes of the caller's floats: they count as none.
void writeDisjointCheck(llvm::raw_ostream &os,
                        const LibraryInterface &interface) {
  const std::string &n = interface.name;
  const auto &arguments = interface.signature.arguments;
  size_t count = arguments.size() + 2;
  llvm::SmallVector<std::string> at, written, names;
  os << "  size_t bytes[" << count << "];\n  (void)own_weights;\n";
  for (auto [index, argument] : llvm::enumerate(arguments)) {
    std::string id = toCIdentifier(argument.name);
    at.push_back(id);
    written.push_back(isWritten(interface, index) ? "1" : "0");
    names.push_back("\"" + id + "\"");
    os << "  " << n << "_count(" << argument.type.getRank() << ", " << id
       << "_shape, &count);\n"
       << "  bytes[" << index
       << "] = " << (interface.isWeight[index] ? "own_weights ? 0 : " : "") << n
       << "_bytes(count, sizeof(" << elementType(argument) << "));\n";
  }
  at.append({"result", "result_shape"});
  written.append({"1", "1"});
  names.append({"\"result\"", "\"result_shape\""});
  os << "  bytes[" << count - 2 << "] = " << n
     << "_bytes(result_capacity, sizeof(float));\n"
     << "  bytes[" << count - 1
     << "] = " << interface.signature.result.getRank()
     << " * sizeof(int64_t);\n"
     << "  const void *at[" << count << "] = {" << llvm::join(at, ", ")
     << "};\n"
     << "  static const char written[" << count << "] = {"
     << llvm::join(written, ", ") << "};\n"
     << "  static const char *const names[" << count << "] = {"
     << llvm::join(names, ", ") << "};\n"
     << "  return " << n << "_check_disjoint(" << count
     << ", at, bytes, written, names);\n";
}

} // namespace mha::compile
