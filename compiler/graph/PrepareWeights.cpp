//===- PrepareWeights.cpp - Compute what depends only on weights once -----===//
//
// Weights are arguments of the compiled function, so whatever a graph
// computes from them alone (the Q|K|V matrix that mha-fuse-projections packs
// is the case that matters) would be computed again on every call, although
// it changes only when the weights do. This pass moves each such computation
// into a function of its own, `@<name>_prepare<i>`, which returns it as a
// flat f32 buffer, and passes that buffer to `@<name>` as a new last
// argument; `@<name>`'s `mha.prepare_functions` lists them in that order. A
// runtime calls the prepare functions once, after compiling, and passes their
// results to every call (mha-run does): the weights are packed
// once per compiled graph, as oneDNN reorders weights once into its blocked
// layout.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialects/MhaOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAPREPAREWEIGHTS
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// True if `operand` is a weight or a bias of an mha op: every operand of a
/// projection but its input, and of `mha.attention` from `w_q` on.
bool isWeightOperand(OpOperand &operand) {
  Operation *owner = operand.getOwner();
  unsigned number = operand.getOperandNumber();
  if (isa<ProjectOp, OutputProjectOp>(owner))
    return number >= 1;
  if (auto attention = dyn_cast<AttentionOp>(owner))
    return number >= attention.getODSOperandIndexAndLength(3).first;
  return false;
}

/// Ops that only describe their operand differently: left in the layer,
/// where they cost nothing, rather than prepared.
bool isView(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::ExtractSliceOp, tensor::CastOp>(op);
}

/// A pure op outside the mha dialect, without regions: one that can be
/// computed once instead of per call when its operands can.
bool isPreparable(Operation *op) {
  Dialect *dialect = op->getDialect();
  return dialect && !isa<MhaDialect>(dialect) && isPure(op) &&
         op->getNumRegions() == 0 && !op->hasTrait<OpTrait::IsTerminator>();
}

/// What of `function` depends on its weights alone.
class WeightSlice {
public:
  explicit WeightSlice(func::FuncOp function) {
    for (BlockArgument argument : function.getArguments())
      if (reachesOnlyWeights(argument))
        weights.insert(argument);
    // Constants may feed the slice (zeros for a missing bias); any other op
    // must read a weight, so that e.g. a `tensor.empty` is not prepared.
    for (Operation &op : function.getBody().front()) {
      if (!isPreparable(&op))
        continue;
      auto known = [&](Value v) { return weights.contains(v) || isInSlice(v); };
      if (op.hasTrait<OpTrait::ConstantLike>() ||
          (op.getNumOperands() > 0 && llvm::all_of(op.getOperands(), known)))
        ops.insert(&op);
    }
  }

  /// The ops whose results the layer needs and that compute something:
  /// prepared ops, not views or constants, with a user outside the slice or
  /// a view among their users.
  SmallVector<Operation *> roots() const {
    SmallVector<Operation *> result;
    for (Operation *op : ops) {
      if (isView(op) || op->hasTrait<OpTrait::ConstantLike>())
        continue;
      bool neededOutside = llvm::any_of(op->getUsers(), [&](Operation *user) {
        return !ops.contains(user) || isView(user);
      });
      if (neededOutside)
        result.push_back(op);
    }
    return result;
  }

  /// The prepared ops `root` depends on, itself included, producers first.
  SetVector<Operation *> backwardSlice(Operation *root) const {
    BackwardSliceOptions options;
    options.inclusive = true;
    options.omitBlockArguments = true;
    SetVector<Operation *> slice;
    // Every operand of a prepared op is a weight argument or prepared.
    (void)getBackwardSlice(root, &slice, options);
    return slice;
  }

private:
  bool isInSlice(Value value) const {
    Operation *producer = value.getDefiningOp();
    return producer && ops.contains(producer);
  }

public:
  /// True if every use of `value`, through preparable ops, ends as a weight
  /// or bias of an mha op (and there is at least one). The input `x` of a
  /// layer reaches a projection's input operand, so it is not a weight.
  static bool reachesOnlyWeights(Value value) {
    if (value.use_empty())
      return false;
    for (OpOperand &use : value.getUses()) {
      if (isWeightOperand(use))
        continue;
      Operation *user = use.getOwner();
      if (!isPreparable(user) || user->getNumResults() == 0)
        return false;
      for (Value result : user->getResults())
        if (!reachesOnlyWeights(result))
          return false;
    }
    return true;
  }

private:
  llvm::SmallDenseSet<Value> weights;
  llvm::SetVector<Operation *> ops;
};

/// The name of the `index`th function split off `function`. Runtimes do not
/// rely on it: they read `mha.prepare_functions`.
std::string getPreparedWeightsFunctionName(StringRef function, unsigned index) {
  return (function + "_prepare" + Twine(index)).str();
}

struct MhaPrepareWeightsPass
    : mha::impl::MhaPrepareWeightsBase<MhaPrepareWeightsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions;
    for (auto function : module.getOps<func::FuncOp>())
      if (function.isPublic() && !function.isExternal() &&
          function.getBody().hasOneBlock())
        functions.push_back(function);
    for (func::FuncOp function : functions)
      if (failed(prepare(function, symbols)))
        return signalPassFailure();
  }

  /// Splits the weight-only computations of `function` off into prepare
  /// functions.
  LogicalResult prepare(func::FuncOp function, SymbolTable &symbols) {
    WeightSlice slice(function);
    SmallVector<Operation *> roots;
    for (Operation *root : slice.roots()) {
      // One flat f32 buffer per prepare function, so that a runtime needs to
      // know nothing about its shape. (The verifiers make weights static;
      // this also keeps a rank-0 or non-f32 value in the layer.)
      if (root->getNumResults() != 1)
        continue;
      auto type = dyn_cast<RankedTensorType>(root->getResult(0).getType());
      if (type && type.hasStaticShape() && type.getRank() > 0 &&
          type.getElementType().isF32())
        roots.push_back(root);
    }
    if (roots.empty())
      return success();

    MLIRContext *context = function.getContext();
    OpBuilder builder(context);
    // The prepare functions take the layer's arguments as written, before
    // this adds any.
    FunctionType preparedType = function.getFunctionType();
    ArrayAttr argAttrs = function.getAllArgAttrs();
    Operation *insertAfter = function;
    SmallVector<Attribute> prepareFunctions;
    for (auto [index, root] : llvm::enumerate(roots)) {
      std::string name =
          getPreparedWeightsFunctionName(function.getSymName(), index);
      if (symbols.lookup(name))
        return function.emitOpError() << "cannot add the prepare function @"
                                      << name << ": the name is taken";
      Value result = root->getResult(0);
      auto type = cast<RankedTensorType>(result.getType());
      auto flatType =
          RankedTensorType::get({type.getNumElements()}, type.getElementType());
      SmallVector<ReassociationIndices> allInOne = {
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()))};

      // @<name>_prepare<i>: the same arguments, the root's slice, flattened.
      builder.setInsertionPointAfter(insertAfter);
      auto prepare = func::FuncOp::create(
          builder, function.getLoc(), name,
          FunctionType::get(context, preparedType.getInputs(), {flatType}));
      insertAfter = prepare;
      // Run once per compiled graph: small code beats fast code. Optimized
      // for speed (also where the JIT's wrappers would inline it), LLVM
      // unrolls the copy loops into blocks that its scheduler takes seconds
      // over: 3.9 s of JIT time instead of 0.3 s at d_model 1024.
      prepare->setAttr(
          "passthrough",
          builder.getStrArrayAttr({"cold", "minsize", "noinline", "optsize"}));
      if (argAttrs)
        prepare.setAllArgAttrs(argAttrs);
      symbols.insert(prepare);
      prepareFunctions.push_back(FlatSymbolRefAttr::get(prepare));
      Block *body = prepare.addEntryBlock();
      builder.setInsertionPointToStart(body);
      IRMapping mapping;
      mapping.map(
          function.getArguments().take_front(preparedType.getNumInputs()),
          body->getArguments());
      for (Operation *op : slice.backwardSlice(root))
        builder.clone(*op, mapping);
      Value flat = mapping.lookup(result);
      if (type.getRank() > 1)
        flat = tensor::CollapseShapeOp::create(builder, function.getLoc(),
                                               flatType, flat, allInOne);
      func::ReturnOp::create(builder, function.getLoc(), flat);

      // The layer reads the prepared buffer in the root's shape instead.
      unsigned position = function.getNumArguments();
      if (failed(function.insertArgument(
              position, flatType,
              builder.getDictionaryAttr(
                  builder.getNamedAttr(MhaDialect::NameAttrHelper::getNameStr(),
                                       builder.getStringAttr(name))),
              root->getLoc())))
        return failure();
      Value prepared = function.getArgument(position);
      if (type.getRank() > 1) {
        builder.setInsertionPointToStart(&function.getBody().front());
        prepared = tensor::ExpandShapeOp::create(builder, root->getLoc(), type,
                                                 prepared, allInOne);
      }
      result.replaceAllUsesWith(prepared);
    }

    // The runtime's list of what to call once, in argument order.
    MhaDialect::PrepareFunctionsAttrHelper(context).setAttr(
        function, builder.getArrayAttr(prepareFunctions));

    // What only the prepared results needed is dead now; users come after
    // their operands, so one backward sweep erases whole chains.
    Block &block = function.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isOpTriviallyDead(&op))
        op.erase();
    return success();
  }
};
} // namespace

SmallVector<bool> mlir::mha::getWeightArguments(func::FuncOp function) {
  return llvm::map_to_vector(function.getArguments(), [](BlockArgument arg) {
    return WeightSlice::reachesOnlyWeights(arg);
  });
}
