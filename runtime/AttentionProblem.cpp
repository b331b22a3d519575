//===- AttentionProblem.cpp - One attention layer with its inputs ---------===//

#include "runtime/AttentionProblem.h"

#include "dialects/MhaOps.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using llvm::createStringError;

namespace mha::runtime {

double AttentionProblem::flops() const {
  if (graph)
    return graph->flops();
  const AttentionShape &s = shape;
  double queries = double(s.batch) * s.seqLen;
  double keys = double(s.batch) * s.kvSeqLen;
  // Split first: each head only reads its slice of the input.
  double qIn = s.splitFirst ? double(s.modelDim) / s.numHeads : s.modelDim;
  double kvIn = s.splitFirst ? double(s.kvDim) / s.numKvHeads : s.kvDim;
  double projections = queries * qIn * s.numHeads * s.headDim +
                       keys * kvIn * s.numKvHeads * (s.headDim + s.valueDim) +
                       queries * s.numHeads * s.valueDim * s.outDim;
  double attention =
      queries * s.kvSeqLen * s.numHeads * double(s.headDim + s.valueDim);
  return 2 * (projections + attention);
}

AttentionShape describeAttentionShape(mlir::mha::AttentionOp op,
                                      ArrayRef<int64_t> query,
                                      ArrayRef<int64_t> keyValueSource) {
  AttentionShape shape;
  shape.batch = query[0];
  shape.seqLen = query[1];
  shape.modelDim = query[2];
  shape.kvSeqLen = keyValueSource[1];
  shape.kvDim = keyValueSource[2];
  shape.numHeads = op.getNumHeads();
  shape.numKvHeads = op.getEffectiveNumKvHeads();
  shape.splitFirst = op.isSplitFirst();
  ArrayRef<int64_t> wq = op.getWQ().getType().getShape();
  ArrayRef<int64_t> wv = op.getWV().getType().getShape();
  shape.headDim = shape.splitFirst ? wq[2] : wq[1] / shape.numHeads;
  shape.valueDim = shape.splitFirst ? wv[2] : wv[1] / shape.numKvHeads;
  shape.outDim = op.getWO().getType().getDimSize(1);
  readAttentionClauses(op, shape);
  if (std::optional<StringRef> rope = op.getRope())
    shape.rope = *rope == "interleaved" ? AttentionShape::Rope::Interleaved
                                        : AttentionShape::Rope::Half;
  shape.rotaryDim = op.getEffectiveRotaryDim(shape.headDim);
  shape.ropeBase =
      op.getRopeBase().value_or(llvm::APFloat(10000.0)).convertToDouble();
  shape.ropeScale =
      op.getRopeScale().value_or(llvm::APFloat(1.0)).convertToDouble();
  shape.ropeMscale =
      op.getRopeMscale().value_or(llvm::APFloat(1.0)).convertToDouble();
  shape.qkNormEps =
      op.getQkNormEps().value_or(llvm::APFloat(1e-6)).convertToDouble();
  return shape;
}

llvm::Expected<AttentionProblem>
describeAttention(func::FuncOp func, const std::vector<NpyArray> &inputs) {
  SmallVector<mlir::mha::AttentionOp> ops(
      func.getOps<mlir::mha::AttentionOp>());
  if (ops.size() != 1)
    return createStringError(llvm::formatv(
        "the reference check needs a graph with one mha.attention in @{0}, "
        "found {1}",
        func.getSymName(), ops.size()));
  mlir::mha::AttentionOp op = ops.front();
  // The reference implements the named steps; a region is IR it cannot
  // run, and a reference without it would report a mismatch on a correct
  // result.
  if (mlir::mha::getScoreModRegion(op))
    return createStringError(
        "the reference check has no reference for a score_mod region; "
        "use --expect with a result computed elsewhere");

  // Each operand is an argument; find the input bound to it.
  auto inputOf = [&](Value value) -> const NpyArray * {
    auto argument = dyn_cast_or_null<BlockArgument>(value);
    // An argument of a later block of the function is no input.
    if (!argument || argument.getOwner() != &func.getBody().front() ||
        argument.getArgNumber() >= inputs.size())
      return nullptr;
    return &inputs[argument.getArgNumber()];
  };
  for (Value operand : op->getOperands())
    if (!inputOf(operand))
      return createStringError(
          "the reference check needs every operand of mha.attention to be an "
          "argument of the function");
  auto data = [&](Value value) -> const float * {
    return value ? inputOf(value)->f32() : nullptr;
  };

  AttentionProblem problem;
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
  problem.returnsLayerOutput =
      ret && ret.getNumOperands() == 1 && ret.getOperand(0) == op.getResult();
  AttentionShape &shape = problem.shape;
  const NpyArray &x = *inputOf(op.getQuery());
  const NpyArray &kv = *inputOf(op.getKeyValueSource());
  shape = describeAttentionShape(op, x.shape, kv.shape);
  if (auto error = verifyAttentionShape(shape))
    return std::move(error);

  AttentionOperands &operands = problem.operands;
  operands.x = x.f32();
  operands.kv = op.getKv() ? kv.f32() : nullptr;
  operands.wQ = data(op.getWQ());
  operands.wK = data(op.getWK());
  operands.wV = data(op.getWV());
  operands.wO = data(op.getWO());
  operands.bQ = data(op.getBQ());
  operands.bK = data(op.getBK());
  operands.bV = data(op.getBV());
  operands.bO = data(op.getBO());
  if (Value mask = op.getMask()) {
    operands.mask = inputOf(mask)->bools();
    operands.maskBatch = inputOf(mask)->shape[0];
  }
  if (Value bias = op.getAttnBias()) {
    const NpyArray &array = *inputOf(bias);
    operands.attnBias = array.f32();
    for (int i = 0; i < 3; ++i)
      operands.attnBiasDims[i] = array.shape[i];
  }
  operands.alibiSlopes = data(op.getAlibiSlopes());
  operands.sinks = data(op.getSinks());
  operands.ropeInvFreq = data(op.getRopeInvFreq());
  operands.qNorm = data(op.getQNorm());
  operands.kNorm = data(op.getKNorm());
  return problem;
}

/// Whether `func` is a single mha.attention: one, and no other mha op in the
/// function's body (what describeAttention's refusals are about).
static bool isSingleAttention(func::FuncOp func) {
  int64_t layers = 0, others = 0;
  for (Operation &op : func.getBody().getOps()) {
    if (isa<mlir::mha::AttentionOp>(op))
      ++layers;
    else if (isa_and_nonnull<mlir::mha::MhaDialect>(op.getDialect()))
      ++others;
  }
  return layers == 1 && others == 0;
}

llvm::Expected<AttentionProblem>
describeGraphReference(func::FuncOp func, const std::vector<NpyArray> &inputs) {
  auto layer = describeAttention(func, inputs);
  if (layer && layer->returnsLayerOutput)
    return layer;
  if (!layer && isSingleAttention(func))
    return layer.takeError();
  if (!layer)
    llvm::consumeError(layer.takeError());
  auto graph = ReferenceGraph::describe(func, inputs);
  if (!graph)
    return graph.takeError();
  AttentionProblem problem;
  problem.returnsLayerOutput = true;
  problem.graph = std::make_shared<const ReferenceGraph>(std::move(*graph));
  return problem;
}

NpyArray computeReference(const AttentionProblem &problem,
                          NpyArray *probabilities) {
  if (problem.graph)
    return problem.graph->compute(probabilities);
  const AttentionShape &s = problem.shape;
  NpyArray y = NpyArray::zeros(ElementType::F32, {s.batch, s.seqLen, s.outDim});
  if (probabilities)
    *probabilities = NpyArray::zeros(
        ElementType::F32, {s.batch, s.numHeads, s.seqLen, s.kvSeqLen});
  referenceAttention(s, problem.operands, y.f32(),
                     probabilities ? probabilities->f32() : nullptr);
  return y;
}

} // namespace mha::runtime
