//===- GraphSignature.cpp - The arguments a graph function takes ----------===//

#include "runtime/GraphSignature.h"

#include "dialects/InferredTypes.h"
#include "dialects/MhaOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using llvm::createStringError;

namespace mha::runtime {

int GraphSignature::findArgument(llvm::StringRef name) const {
  for (auto [index, argument] : llvm::enumerate(arguments))
    if (argument.name == name)
      return static_cast<int>(index);
  return -1;
}

std::string GraphSignature::listNames() const {
  return llvm::join(llvm::map_range(arguments,
                                    [](const GraphArgument &argument) {
                                      return argument.name;
                                    }),
                    ", ");
}

std::optional<ElementType> getStoredElementType(Type type) {
  if (type.isF32())
    return ElementType::F32;
  if (type.isBF16())
    return ElementType::BF16;
  if (type.isInteger(1))
    return ElementType::Bool;
  if (type.isInteger(64))
    return ElementType::I64;
  if (type.isInteger(8))
    return ElementType::I8;
  if (type.isInteger(32))
    return ElementType::I32;
  return std::nullopt;
}

std::optional<ElementType> getCallerElementType(Type type) {
  std::optional<ElementType> stored = getStoredElementType(type);
  return stored == ElementType::BF16 ? ElementType::F32 : stored;
}

/// The argument `value` is, updated in place: the argument itself, or the
/// result of a chain of `mha.cache_append` (or of the codes or scales of
/// `mha.cache_append_quantized`, or of `mha.paged_cache_append` or its int8
/// form) whose destination is it.
static std::optional<unsigned> aliasedArgument(func::FuncOp func, Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (auto append = dyn_cast<mlir::mha::CacheAppendOp>(op))
      value = append.getCache();
    else if (auto quantized = dyn_cast<mlir::mha::CacheAppendQuantizedOp>(op))
      value = quantized.getDpsInits()[cast<OpResult>(value).getResultNumber()];
    else if (auto paged = dyn_cast<mlir::mha::PagedCacheAppendOp>(op))
      value = paged.getPool();
    else if (auto quantized =
                 dyn_cast<mlir::mha::PagedCacheAppendQuantizedOp>(op))
      value = quantized.getDpsInits()[cast<OpResult>(value).getResultNumber()];
    else
      break;
  }
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument || argument.getOwner() != &func.getBody().front())
    return std::nullopt;
  return argument.getArgNumber();
}

llvm::Expected<GraphSignature> readSignature(func::FuncOp func) {
  GraphSignature signature;
  FunctionType type = func.getFunctionType();
  for (auto [index, argType] : llvm::enumerate(type.getInputs())) {
    GraphArgument argument;
    auto name = func.getArgAttrOfType<StringAttr>(
        index, mlir::mha::MhaDialect::NameAttrHelper::getNameStr());
    argument.name = name ? name.str() : llvm::formatv("arg{0}", index).str();
    argument.type = dyn_cast<RankedTensorType>(argType);
    if (!argument.type || !getCallerElementType(argument.type.getElementType()))
      return createStringError(
          llvm::formatv("argument '{0}' of @{1} has type {2}; mha-run passes "
                        "ranked tensors of f32 or bf16 (or i1 for masks, i64 "
                        "for cache lengths, i8 for int8 caches, i32 for block "
                        "tables)",
                        argument.name, func.getSymName(), argType));
    // An input of a `?` size must be at least 1 long (checkInput); a size
    // written as 0 is no better, and the lowering does not handle it.
    if (llvm::is_contained(argument.type.getShape(), 0))
      return createStringError(
          llvm::formatv("argument '{0}' of @{1} has type {2}; mha-run passes "
                        "tensors without sizes of 0",
                        argument.name, func.getSymName(), argType));
    if (signature.findArgument(argument.name) >= 0)
      return createStringError(
          llvm::formatv("two arguments of @{0} are named '{1}'",
                        func.getSymName(), argument.name));
    signature.arguments.push_back(std::move(argument));
  }
  // Every result but one is an argument updated in place (a key/value
  // cache); the one left is the output.
  auto ret =
      func.getBody().empty()
          ? func::ReturnOp()
          : dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
  std::optional<unsigned> output;
  for (unsigned index = 0; index < type.getNumResults(); ++index) {
    std::optional<unsigned> alias;
    if (ret && type.getNumResults() > 1)
      alias = aliasedArgument(func, ret.getOperand(index));
    // (Its type is the argument's: mha.cache_append's result has its
    // cache's type, and func.return's operands the declared results'.)
    signature.resultAliases.push_back(alias);
    if (alias)
      continue;
    if (output)
      return createStringError(llvm::formatv(
          "@{0} returns {1} values that are not arguments updated in place "
          "(results {2} and {3}); mha-run runs functions with one result",
          func.getSymName(), type.getNumResults(), *output, index));
    output = index;
  }
  if (!output)
    return createStringError(llvm::formatv(
        "@{0} returns {1} values and none is the output (each is an "
        "argument updated in place); mha-run runs functions with one result",
        func.getSymName(), type.getNumResults()));
  signature.resultIndex = *output;
  signature.result = dyn_cast<RankedTensorType>(type.getResult(*output));
  if (!signature.result || !signature.result.getElementType().isF32())
    return createStringError(
        llvm::formatv("@{0} returns {1}; mha-run runs functions that return "
                      "a ranked f32 tensor",
                      func.getSymName(), type.getResult(*output)));
  // A graph whose relations cannot be derived still runs with data given;
  // only `--random` sizes and mha-compile need them.
  if (auto relations = deriveSizeRelations(func, signature))
    signature.sizeRelations = std::move(*relations);
  else
    llvm::consumeError(relations.takeError());
  return signature;
}

/// Formats a declared shape with `?` for dynamic sizes.
static std::string formatDeclaredShape(RankedTensorType type) {
  std::string text = "[";
  for (auto [index, dim] : llvm::enumerate(type.getShape())) {
    if (index)
      text += ", ";
    text += ShapedType::isDynamic(dim) ? "?" : std::to_string(dim);
  }
  return text + "]";
}

llvm::Error checkInput(const GraphArgument &argument, const NpyArray &array,
                       llvm::StringRef source) {
  ElementType expected = *getCallerElementType(argument.type.getElementType());
  if (array.elementType != expected)
    return createStringError(
        llvm::formatv("input '{0}' ({1}): expected dtype {2}, found {3}",
                      argument.name, source, getElementTypeName(expected),
                      getElementTypeName(array.elementType)));
  bool fits =
      static_cast<int64_t>(array.shape.size()) == argument.type.getRank();
  for (size_t i = 0; fits && i < array.shape.size(); ++i) {
    int64_t declared = argument.type.getDimSize(i);
    fits = ShapedType::isDynamic(declared) ? array.shape[i] > 0
                                           : declared == array.shape[i];
  }
  if (!fits)
    return createStringError(llvm::formatv(
        "input '{0}' ({1}): expected shape {2}, found {3}", argument.name,
        source, formatDeclaredShape(argument.type), formatShape(array.shape)));
  return llvm::Error::success();
}

/// A score bias's `?` batch or query dimension is the full size: only a
/// dimension declared 1 broadcasts (verifyScoreSteps; the compiled code
/// reads a `?` one as full). The verifier of the specialized copy sees a
/// bound 1 as a static 1 and would let it broadcast, so this checks the
/// declared type of the argument (as SizeRelations does, which the C
/// library's checks come from). Emits the error on `op`.
static LogicalResult checkScoreBiasSizes(Operation &op, FunctionType declared) {
  Value bias, query;
  unsigned queryDim = 2;
  if (auto attention = dyn_cast<mlir::mha::AttentionOp>(op)) {
    bias = attention.getAttnBias();
    query = attention.getQuery();
    queryDim = 1;
  } else if (auto sdpa = dyn_cast<mlir::mha::SdpaOp>(op)) {
    bias = sdpa.getAttnBias();
    query = sdpa.getQuery();
  } else if (auto weights = dyn_cast<mlir::mha::AttentionWeightsOp>(op)) {
    bias = weights.getAttnBias();
    query = weights.getQuery();
  }
  auto argument = dyn_cast_or_null<BlockArgument>(bias);
  if (!argument || argument.getArgNumber() >= declared.getNumInputs())
    return success();
  auto declaredType =
      dyn_cast<RankedTensorType>(declared.getInput(argument.getArgNumber()));
  auto boundType = dyn_cast<RankedTensorType>(bias.getType());
  auto queryType = dyn_cast<RankedTensorType>(query.getType());
  if (!declaredType || !boundType || !queryType ||
      declaredType.getRank() != 4 || boundType.getRank() != 4)
    return success();
  auto func = cast<func::FuncOp>(argument.getOwner()->getParentOp());
  auto name = func.getArgAttrOfType<StringAttr>(
      argument.getArgNumber(),
      mlir::mha::MhaDialect::NameAttrHelper::getNameStr());
  std::string argumentName =
      name ? name.str()
           : llvm::formatv("arg{0}", argument.getArgNumber()).str();
  for (auto [dim, fullDim, what] : {std::tuple(0u, 0u, "batch size"),
                                    std::tuple(2u, queryDim, "query length")}) {
    int64_t bound = boundType.getDimSize(dim);
    int64_t full = queryType.getDimSize(fullDim);
    if (!ShapedType::isDynamic(declaredType.getDimSize(dim)) || bound != 1 ||
        ShapedType::isDynamic(full) || full == 1)
      continue;
    return emitError(op.getLoc())
           << argumentName << "[" << dim << "] (1) must equal the " << what
           << " (" << full << "): a `?` dimension of a score bias is its "
           << "full size, only a dimension declared 1 broadcasts";
  }
  return success();
}

/// Gives `op`'s results the types its (now more precise) operands imply, as
/// the op itself states them: a destination-style op's results have its
/// inits' types; an elementwise op (the arith.extf and arith.truncf of a
/// bf16 cache graph) has its operand's shape; an op with
/// InferTypeOpInterface (every mha op that makes a new tensor) has the
/// shapes it infers, where they agree with the declared ones (else the
/// verifier reports the mismatch), and keeps its declared element types (a
/// bf16 layer may declare its output f32).
static void refineResultTypes(Operation &op) {
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
    for (OpResult result : op.getResults())
      result.setType(dps.getTiedOpOperand(result)->get().getType());
    return;
  }
  if (op.hasTrait<OpTrait::Elementwise>() && op.getNumOperands() == 1 &&
      op.getNumResults() == 1) {
    if (auto from = dyn_cast<RankedTensorType>(op.getOperand(0).getType()))
      op.getResult(0).setType(
          from.clone(getElementTypeOrSelf(op.getResult(0).getType())));
    return;
  }
  auto inferring = dyn_cast<InferTypeOpInterface>(op);
  if (!inferring)
    return;
  SmallVector<Type> inferred;
  if (failed(inferring.inferReturnTypes(
          op.getContext(), std::nullopt, op.getOperands(),
          op.getRawDictionaryAttrs(), op.getPropertiesStorage(),
          op.getRegions(), inferred)) ||
      !mlir::mha::compatibleResults(inferred, op.getResultTypes(),
                                    /*widensBF16=*/true))
    return;
  for (auto [result, type] : llvm::zip(op.getResults(), inferred))
    if (auto shaped = dyn_cast<RankedTensorType>(type))
      result.setType(shaped.clone(getElementTypeOrSelf(result.getType())));
}

/// Gives every op its refined result types (refineResultTypes), in program
/// order, and verifies it, so that the next op's verifier sees real sizes.
/// `declared` is the function's type before its arguments were specialized.
static LogicalResult propagateShapes(func::FuncOp func, FunctionType declared) {
  for (Operation &op : func.getBody().front()) {
    // The return keeps the declared (dynamic) result type on purpose.
    if (isa<func::ReturnOp>(op))
      continue;
    refineResultTypes(op);
    if (failed(verify(&op)) || failed(checkScoreBiasSizes(op, declared)))
      return failure();
  }
  return success();
}

llvm::Error checkInputsFitTogether(func::FuncOp func,
                                   llvm::ArrayRef<const NpyArray *> inputs,
                                   RankedTensorType *resultType) {
  std::vector<std::vector<int64_t>> shapes;
  for (const NpyArray *input : inputs)
    shapes.push_back(input->shape);
  return checkShapesFitTogether(func, shapes, resultType);
}

llvm::Error checkShapesFitTogether(func::FuncOp func,
                                   llvm::ArrayRef<std::vector<int64_t>> shapes,
                                   RankedTensorType *resultType) {
  MLIRContext *context = func.getContext();
  std::string messages;
  ScopedDiagnosticHandler collect(context, [&](Diagnostic &diagnostic) {
    if (!messages.empty())
      messages += "; ";
    messages += diagnostic.str();
    return success();
  });
  OwningOpRef<func::FuncOp> copy = func.clone();
  Block &body = copy->getBody().front();
  for (auto [argument, shape] : llvm::zip(body.getArguments(), shapes)) {
    auto declared = cast<RankedTensorType>(argument.getType());
    argument.setType(declared.clone(shape));
  }
  if (failed(propagateShapes(*copy, func.getFunctionType())))
    return createStringError("the inputs do not fit together: " + messages);
  // The output is the one result that is not an argument updated in place.
  if (resultType && body.mightHaveTerminator())
    if (auto ret = dyn_cast<func::ReturnOp>(body.getTerminator())) {
      SmallVector<Value> outputs;
      for (Value value : ret.getOperands())
        if (ret.getNumOperands() == 1 || !aliasedArgument(*copy, value))
          outputs.push_back(value);
      if (outputs.size() == 1)
        *resultType = dyn_cast<RankedTensorType>(outputs.front().getType());
    }
  return llvm::Error::success();
}

} // namespace mha::runtime
