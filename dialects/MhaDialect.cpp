//===- MhaDialect.cpp - The mha dialect -----------------------------------===//

#include "dialects/MhaDialect.h"
#include "dialects/MhaOnlineAttention.h"
#include "dialects/MhaOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::mha;

#include "dialects/MhaOpsDialect.cpp.inc"

#if LLVM_ADDRESS_SANITIZER_BUILD
// The sanitizer build instruments our code only. The storage of the
// dialect's attributes is allocated, by code instantiated here, from the
// context's BumpPtrAllocator, which libMLIR (not instrumented) allocates
// from too: our instrumented copy of the allocator poisons each new slab
// and unpoisons only what it hands out itself, so libMLIR's later
// allocations in that slab read as poisoned (a false use-after-poison in
// bufferization). Manual poisoning is off; ASan's own checks of the heap,
// the stack and globals are not affected. In this file because every tool
// that makes the attributes links it (a weak reference from the sanitizer
// runtime would not pull a file of its own out of the library).
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}
#endif

#define GET_ATTRDEF_CLASSES
#include "dialects/MhaAttributes.cpp.inc"

void MhaDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/MhaAttributes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/MhaOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/MhaOnlineAttention.cpp.inc"
      >();
}

/// Whether `name` matches [A-Za-z_][A-Za-z0-9_]*.
static bool isCIdentifier(StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

// Names become paths (`mha-run --inputs DIR` reads DIR/<name>.npy) and C
// identifiers; anything but an identifier could leave DIR ("../x") or break
// the generated C, so it is refused when the graph is read.
LogicalResult MhaDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attribute) {
  if (attribute.getName() != NameAttrHelper::getNameStr())
    return success();
  auto name = dyn_cast<StringAttr>(attribute.getValue());
  if (!name)
    return op->emitError() << "expects the mha.name of argument #" << argIndex
                           << " to be a string, got " << attribute.getValue();
  if (!isCIdentifier(name.getValue()))
    return op->emitError() << "expects the mha.name of argument #" << argIndex
                           << " to be an identifier ([A-Za-z_][A-Za-z0-9_]*), "
                              "got "
                           << name;
  return success();
}

// The attributes of `discardableAttrs` (MhaDialect.td); any other `mha.`
// attribute on an operation is a typo or a stale graph, refused here rather
// than ignored by the pass that would have looked for it.
LogicalResult MhaDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  Attribute value = attribute.getValue();
  if (name == ProjectionAttrHelper::getNameStr() ||
      name == RegisterBlockAttrHelper::getNameStr() ||
      name == Bf16DotAttrHelper::getNameStr() ||
      name == Bf16LayerAttrHelper::getNameStr() ||
      name == AmxSplitAttrHelper::getNameStr() ||
      name == RowPartAttrHelper::getNameStr() ||
      name == BlockInitAttrHelper::getNameStr()) {
    if (!isa<UnitAttr>(value))
      return op->emitError()
             << "expects " << name << " to be a unit attribute, got " << value;
    return success();
  }
  if (name == PrepareFunctionsAttrHelper::getNameStr()) {
    if (!isa<FunctionOpInterface>(op))
      return op->emitError() << "expects " << name << " on a function";
    auto functions = dyn_cast<ArrayAttr>(value);
    if (!functions ||
        !llvm::all_of(functions, llvm::IsaPred<FlatSymbolRefAttr>))
      return op->emitError()
             << "expects " << name
             << " to be an array of function symbols, got " << value;
    return success();
  }
  if (name == TilesAttrHelper::getNameStr()) {
    // An mha.sdpa_split keeps the tiles of the mha.sdpa whose keys it splits.
    if (!isa<SdpaOp, SdpaSplitOp>(op))
      return op->emitError()
             << "expects " << name << " on an mha.sdpa or mha.sdpa_split";
    if (!isa<AttentionTilesAttr>(value))
      return op->emitError() << "expects " << name
                             << " to be an #mha.attention_tiles, got " << value;
    return success();
  }
  if (name == CodegenAttrHelper::getNameStr()) {
    if (!isa<FunctionOpInterface>(op))
      return op->emitError() << "expects " << name << " on a function";
    if (!isa<CodegenSizesAttr>(value))
      return op->emitError() << "expects " << name
                             << " to be an #mha.codegen_sizes, got " << value;
    return success();
  }
  if (name == TargetAttrHelper::getNameStr()) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "expects " << name << " on a module";
    if (!isa<TargetAttr>(value))
      return op->emitError()
             << "expects " << name << " to be an #mha.target, got " << value;
    return success();
  }
  if (name == NameAttrHelper::getNameStr())
    return op->emitError() << "expects " << name
                           << " on a function argument, not an operation";
  return op->emitError() << "unknown attribute " << name
                         << " of the mha dialect (on an operation)";
}

/// Fails with `expects <name> between <min> and <max>, got <value>`.
static LogicalResult checkSize(function_ref<InFlightDiagnostic()> emitError,
                               StringRef name, int64_t value, int64_t min,
                               int64_t max) {
  if (value >= min && value <= max)
    return success();
  return emitError() << "expects " << name << " between " << min << " and "
                     << max << ", got " << value;
}

// The bounds of the options that set them (compiler/OptionRanges.h): a
// [query_tile, key_tile] block of f32 scores per thread, and one partial
// output per key range, stay bounded, and no size computed from them
// overflows.
LogicalResult
AttentionTilesAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           int64_t queryTile, int64_t keyTile,
                           int64_t keySplits) {
  if (failed(checkSize(emitError, "query_tile", queryTile, 1,
                       kMaxAttentionTile)) ||
      failed(checkSize(emitError, "key_tile", keyTile, 1, kMaxAttentionTile)))
    return failure();
  return checkSize(emitError, "key_splits", keySplits, 1,
                   kMaxAttentionKeySplits);
}

/// Fails unless `value` is 0 (not recorded) or in [min, max].
static LogicalResult checkRecorded(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef name, int64_t value, int64_t min,
                                   int64_t max) {
  if (value == 0)
    return success();
  return checkSize(emitError, name, value, min, max);
}

// The ranges of the pipeline options that set them (compiler/Pipelines.h);
// the single passes' sizes are 0 where the record has none.
LogicalResult CodegenSizesAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t lanes,
    int64_t registerRows, int64_t registerCols, int64_t registerUnroll,
    int64_t maxVectorLength, int64_t projectionRows, int64_t projectionCols,
    int64_t chunkBytes, int64_t chunkRows, int64_t amxRows, int64_t amxKChunk,
    int64_t l1Bytes, int64_t bf16Lanes, int64_t stackBytes,
    int64_t outlineSteps, int64_t queryTile, int64_t rowPadding,
    int64_t tailKeys, StringRef bf16Path) {
  constexpr int64_t kGiB = int64_t(1) << 30;
  if (failed(checkRecorded(emitError, "chunk_bytes", chunkBytes, 1, kGiB)) ||
      failed(checkRecorded(emitError, "chunk_rows", chunkRows, 1,
                           int64_t(1) << 20)) ||
      failed(checkRecorded(emitError, "amx_rows", amxRows, 16,
                           kMaxAttentionTile)) ||
      failed(checkRecorded(emitError, "amx_k_chunk", amxKChunk, 1, 64)) ||
      failed(checkRecorded(emitError, "l1_bytes", l1Bytes, 1024, kGiB)) ||
      failed(checkRecorded(emitError, "stack_bytes", stackBytes, 1, kGiB)) ||
      failed(checkRecorded(emitError, "outline_steps", outlineSteps, 1,
                           int64_t(1) << 20)) ||
      failed(checkRecorded(emitError, "query_tile", queryTile, 1,
                           kMaxAttentionTile)) ||
      failed(checkRecorded(emitError, "row_padding", rowPadding, 1,
                           kMaxRegisterBlock)) ||
      failed(checkRecorded(emitError, "tail_keys", tailKeys, 1,
                           kMaxAttentionTile)))
    return failure();
  if (!llvm::isPowerOf2_64(tailKeys) && tailKeys != 0)
    return emitError() << "expects tail_keys to be a power of two, got "
                       << tailKeys;
  if (!llvm::is_contained({"", "f32", "avx512", "amx"}, bf16Path))
    return emitError() << "expects bf16_path to be \"f32\", \"avx512\" or "
                          "\"amx\", got \""
                       << bf16Path << "\"";
  if (amxRows % 16 != 0)
    return emitError() << "expects amx_rows to be a multiple of 16, got "
                       << amxRows;
  if (!llvm::is_contained({0, 4, 8, 16}, bf16Lanes))
    return emitError() << "expects bf16_lanes to be 4, 8 or 16, got "
                       << bf16Lanes;
  return success(
      succeeded(checkSize(emitError, "lanes", lanes, 1, kMaxRegisterBlock)) &&
      succeeded(checkSize(emitError, "register_rows", registerRows, 1,
                          kMaxRegisterBlock)) &&
      succeeded(checkSize(emitError, "register_cols", registerCols, 1,
                          kMaxRegisterBlock)) &&
      succeeded(checkSize(emitError, "register_unroll", registerUnroll, 1,
                          kMaxRegisterUnroll)) &&
      succeeded(checkSize(emitError, "max_vector_length", maxVectorLength, 1,
                          kMaxAttentionTile)) &&
      succeeded(checkSize(emitError, "projection_rows", projectionRows, 0,
                          kMaxAttentionTile)) &&
      succeeded(checkSize(emitError, "projection_cols", projectionCols, 0,
                          kMaxAttentionTile)));
}

bool TargetAttr::hasFeature(StringRef name) const {
  return llvm::any_of(getFeatures(), [&](Attribute feature) {
    return cast<StringAttr>(feature).getValue() == name;
  });
}

// What mha-strategy reads must be consistent, or its sizes would be for a
// CPU that does not exist (32 zmm registers of 256 bits).
LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef cpu, ArrayAttr features,
                                 int64_t vectorBits, int64_t vectorRegisters,
                                 int64_t l1Bytes, int64_t l2Bytes,
                                 int64_t l3Bytes, int64_t cores) {
  static constexpr StringLiteral kFeatures[] = {
      "avx2", "fma", "avx512f", "avx512bf16", "amx-tile", "amx-bf16"};
  llvm::SmallDenseSet<StringRef> seen;
  for (Attribute feature : features) {
    auto name = dyn_cast<StringAttr>(feature);
    if (!name)
      return emitError() << "expects the features to be strings, got "
                         << feature;
    if (!llvm::is_contained(kFeatures, name.getValue()))
      return emitError() << "unknown feature " << name << " (known: "
                         << llvm::join(std::begin(kFeatures),
                                       std::end(kFeatures), ", ")
                         << ")";
    if (!seen.insert(name.getValue()).second)
      return emitError() << "expects each feature once, got " << name
                         << " twice";
  }
  bool avx512 = seen.contains("avx512f");
  if (seen.contains("avx512bf16") && !avx512)
    return emitError() << "expects avx512f with avx512bf16";
  if (seen.contains("amx-bf16") && !seen.contains("amx-tile"))
    return emitError() << "expects amx-tile with amx-bf16";
  if (!llvm::is_contained({128, 256, 512}, vectorBits))
    return emitError() << "expects vector_bits to be 128, 256 or 512, got "
                       << vectorBits;
  if (avx512 != (vectorBits == 512))
    return emitError() << "expects vector_bits = 512 exactly with avx512f, "
                          "got "
                       << vectorBits;
  if (failed(checkSize(emitError, "vector_registers", vectorRegisters, 8, 32)))
    return failure();
  if (avx512 && vectorRegisters != 32)
    return emitError() << "expects 32 vector_registers with avx512f, got "
                       << vectorRegisters;
  constexpr int64_t kGiB = int64_t(1) << 30;
  if (failed(checkSize(emitError, "l1_bytes", l1Bytes, 1024, kGiB)) ||
      failed(checkSize(emitError, "l2_bytes", l2Bytes, l1Bytes, kGiB)) ||
      failed(checkSize(emitError, "l3_bytes", l3Bytes, 0, 64 * kGiB)) ||
      failed(checkSize(emitError, "cores", cores, 0, 1 << 16)))
    return failure();
  return success();
}
