//===- ReferenceGraph.cpp - A graph of mha ops, evaluated op by op --------===//
//
// The walk over the entry function: arguments bound to the inputs, each op
// evaluated by runtime/ReferenceGraphOps.h in order, its result rounded to
// its element type, each buffer freed after its last use. describe walks
// with shapes only, so that every refusal comes before anything is
// compiled; compute walks again with the elements.
//
//===----------------------------------------------------------------------===//

#include "runtime/ReferenceGraph.h"
#include "runtime/BFloat16.h"
#include "runtime/GraphSignature.h"
#include "runtime/ReferenceGraphOps.h"

#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using llvm::createStringError;
using llvm::Error;

namespace mha::runtime {
using namespace graphref;

namespace {
/// One walk over the function.
class Interpreter {
public:
  Interpreter(func::FuncOp func, std::vector<const NpyArray *> inputs,
              unsigned resultIndex, bool shapesOnly)
      : func(func), inputs(std::move(inputs)), resultIndex(resultIndex) {
    context.shapesOnly = shapesOnly;
    context.lookup = [this](Value value) -> const Tensor * {
      auto it = values.find(value);
      return it == values.end() ? nullptr : &it->second;
    };
  }

  /// Evaluates every op; `result` then holds the output.
  Error run();

  OpContext context;
  Tensor result;

private:
  Error bindArguments();
  Error evaluate(Operation *op);
  /// Frees the buffers of `op`'s operands that no later op reads.
  void release(Operation *op);

  func::FuncOp func;
  std::vector<const NpyArray *> inputs;
  unsigned resultIndex;
  llvm::DenseMap<Value, Tensor> values;
  /// The uses of each value not evaluated yet.
  llvm::DenseMap<Value, unsigned> usesLeft;
};
} // namespace

/// "the reference check has no reference for WHAT (PLACE)...", `why` after
/// a colon where given.
static Error noReference(const llvm::Twine &what, Operation *op,
                         llvm::StringRef why = "") {
  return createStringError(llvm::formatv(
      "the reference check has no reference for {0} ({1}){2}{3}; use "
      "--expect with a result computed elsewhere",
      what.str(), placeOf(op), why.empty() ? "" : ": ", why));
}

/// Whether `op` is one of the ops the walk evaluates: the mha ops, and the
/// element type conversions of tensors that mha-expand writes around a
/// bf16 layer (arith.extf; arith.truncf to nearest even).
static bool hasReference(Operation *op) {
  if (auto truncate = dyn_cast<arith::TruncFOp>(op))
    if (std::optional<arith::RoundingMode> mode = truncate.getRoundingmode())
      if (*mode != arith::RoundingMode::to_nearest_even)
        return false;
  if (isa<arith::ExtFOp, arith::TruncFOp>(op))
    return isa<RankedTensorType>(op->getResult(0).getType());
  return isa<func::ReturnOp, mlir::mha::ProjectOp, mlir::mha::SplitHeadsOp,
             mlir::mha::RmsNormOp, mlir::mha::RopeOp, mlir::mha::SdpaOp,
             mlir::mha::AttentionWeightsOp, mlir::mha::ConcatHeadsOp,
             mlir::mha::OutputProjectOp, mlir::mha::CacheAppendOp,
             mlir::mha::AttentionOp>(op);
}

/// The op the refusal of `body` names: its first op without a reference
/// that computes something, rather than a tensor.empty or a constant that
/// only feeds one (a linalg.generic's init); null when every op has one.
static Operation *firstWithoutReference(Block &body) {
  Operation *first = nullptr;
  for (Operation &op : body) {
    if (hasReference(&op))
      continue;
    if (!isa<tensor::EmptyOp, arith::ConstantOp>(op))
      return &op;
    if (!first)
      first = &op;
  }
  return first;
}

/// Rounds each element of `tensor` to `elementType`, as the compiled code
/// stores it (f32 and bf16 to nearest even; other float types through
/// APFloat).
static void roundTo(Tensor &tensor, Type elementType) {
  if (elementType.isF32()) {
    for (double &value : tensor.data)
      value = float(value);
  } else if (elementType.isBF16()) {
    for (double &value : tensor.data)
      value = roundToBF16(float(value));
  } else if (auto type = dyn_cast<FloatType>(elementType)) {
    for (double &value : tensor.data) {
      llvm::APFloat rounded{float(value)};
      bool losesInfo;
      rounded.convert(type.getFloatSemantics(),
                      llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      value = rounded.convertToDouble();
    }
  }
}

Error Interpreter::bindArguments() {
  Block &body = func.getBody().front();
  if (inputs.size() != body.getNumArguments())
    return createStringError(llvm::formatv(
        "the reference check got {0} inputs for the {1} arguments of @{2}",
        inputs.size(), body.getNumArguments(), func.getSymName()));
  for (auto [argument, array] : llvm::zip(body.getArguments(), inputs)) {
    const NpyArray &input = *array;
    Tensor &tensor = values[argument];
    tensor.shape = input.shape;
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (type && isa<FloatType>(type.getElementType()) &&
        input.elementType == ElementType::F32) {
      if (!context.shapesOnly)
        tensor.data.assign(input.f32(), input.f32() + input.numElements());
    } else if (input.elementType == ElementType::Bool ||
               input.elementType == ElementType::I64) {
      tensor.array = &input;
    } else {
      return createStringError(llvm::formatv(
          "the reference check cannot bind argument {0} of @{1} ({2}) to a "
          "{3} array",
          argument.getArgNumber(), func.getSymName(), argument.getType(),
          getElementTypeName(input.elementType)));
    }
  }
  return Error::success();
}

Error Interpreter::evaluate(Operation *op) {
  if (isa<func::ReturnOp>(op)) {
    if (resultIndex >= op->getNumOperands())
      return noReference("a function without its result", op);
    result = values[op->getOperand(resultIndex)];
    return Error::success();
  }
  if (mlir::mha::getScoreModRegion(op))
    return noReference(
        "the score_mod region of " + op->getName().getStringRef(), op);
  Tensor tensor;
  if (isa<arith::ExtFOp, arith::TruncFOp>(op))
    // The values as they are; the rounding below narrows them.
    tensor = values[op->getOperand(0)];
  else if (auto error = evaluateOp(op, context, tensor))
    return error;
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  bool fits = type.getRank() == int64_t(tensor.shape.size());
  for (auto [declared, computed] : llvm::zip(type.getShape(), tensor.shape))
    fits &= ShapedType::isDynamic(declared) || declared == computed;
  if (!fits)
    return operandError(op, "its result would be " + formatShape(tensor.shape) +
                                ", not " + formatShape(type.getShape()));
  if (!context.shapesOnly)
    roundTo(tensor, type.getElementType());
  values[op->getResult(0)] = std::move(tensor);
  return Error::success();
}

void Interpreter::release(Operation *op) {
  if (context.shapesOnly)
    return;
  for (Value operand : op->getOperands())
    if (--usesLeft[operand] == 0)
      values[operand].data = {};
}

Error Interpreter::run() {
  if (!func.getBody().hasOneBlock())
    return createStringError(llvm::formatv(
        "the reference check evaluates @{0} op by op in one block, but it has "
        "{1} blocks; use --expect with a result computed elsewhere",
        func.getSymName(), func.getBody().getBlocks().size()));
  if (auto error = bindArguments())
    return error;
  Block &body = func.getBody().front();
  if (Operation *op = firstWithoutReference(body))
    return noReference(op->getName().getStringRef(), op,
                       "it evaluates the mha ops");
  for (Operation &op : body)
    for (Value operand : op.getOperands())
      ++usesLeft[operand];
  for (Operation &op : body) {
    if (auto error = evaluate(&op))
      return error;
    release(&op);
  }
  return Error::success();
}

llvm::Expected<ReferenceGraph>
ReferenceGraph::describe(func::FuncOp func,
                         const std::vector<NpyArray> &inputs) {
  auto signature = readSignature(func);
  if (!signature)
    return signature.takeError();
  ReferenceGraph graph(func, inputs, signature->resultIndex);
  Interpreter walk(func, graph.arguments(), graph.resultIndex,
                   /*shapesOnly=*/true);
  if (auto error = walk.run())
    return std::move(error);
  graph.flopCount = walk.context.flops;
  for (std::optional<unsigned> argument : signature->resultAliases)
    if (argument && *argument < inputs.size())
      graph.updatedArguments.emplace_back(*argument, inputs[*argument]);
  return graph;
}

std::vector<const NpyArray *> ReferenceGraph::arguments() const {
  std::vector<const NpyArray *> arrays;
  for (const NpyArray &input : *inputs)
    arrays.push_back(&input);
  for (const auto &[index, copy] : updatedArguments)
    arrays[index] = &copy;
  return arrays;
}

NpyArray ReferenceGraph::compute(NpyArray *probabilities) const {
  Interpreter walk(func, arguments(), resultIndex, /*shapesOnly=*/false);
  walk.context.probabilities = probabilities;
  // describe walked the same ops on the same shapes.
  llvm::cantFail(walk.run());
  NpyArray y = NpyArray::zeros(ElementType::F32, walk.result.shape);
  std::copy(walk.result.data.begin(), walk.result.data.end(), y.f32());
  return y;
}

} // namespace mha::runtime
