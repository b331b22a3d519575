//===- WidenBF16.cpp - Compute bf16 mha ops in f32 ------------------------===//
//
// A bf16 layer stores its inputs, weights and the attention operands (Q, K,
// V and the heads' output) in bf16, and computes in f32: every contraction
// accumulates in f32 and softmax (max, exp, sum, rescaling) is never done in
// bf16. Widening bf16 to f32 is exact, so an mha op on bf16 values equals
// the same op in f32 on their widened copies, followed by a rounding
// (`arith.truncf`, round to nearest even) where the graph stores bf16. This
// pass rewrites each mha op with bf16 operands that way, so that every pass
// after it (tiling, the fused attention path, the lowering) sees f32 ops
// only. It runs before mha-prepare-weights: the widened weights depend on
// the weights alone, so they are computed once, at prepare time, not per
// call.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialects/MhaOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHAWIDENBF16
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;
using namespace mlir::mha;

namespace {
/// `type` with f32 elements where it is a tensor of bf16; null otherwise.
RankedTensorType widenedType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.getElementType().isBF16())
    return {};
  return tensor.clone(Float32Type::get(type.getContext()));
}

/// The ops this pass widens: those the f32 lowering handles.
/// `mha.cache_append` is not among them: widened, it would no longer
/// update its cache in place (bf16 caches are not lowered yet).
bool isWidenable(Operation *op) {
  return isa<ProjectOp, SplitHeadsOp, SdpaOp, AttentionWeightsOp, ConcatHeadsOp,
             OutputProjectOp>(op);
}

struct MhaWidenBF16Pass : mha::impl::MhaWidenBF16Base<MhaWidenBF16Pass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isWidenable(op) && llvm::any_of(op->getOperandTypes(), [](Type type) {
            return bool(widenedType(type));
          }))
        ops.push_back(op);
    });
    OpBuilder builder(&getContext());
    for (Operation *op : ops) {
      builder.setInsertionPoint(op);
      Location loc = op->getLoc();
      // Each bf16 operand widened once per op (CSE merges the widenings of
      // one value that several ops read, e.g. x read by Q, K and V).
      IRMapping mapping;
      for (Value operand : op->getOperands())
        if (RankedTensorType wide = widenedType(operand.getType()))
          if (!mapping.contains(operand))
            mapping.map(operand,
                        arith::ExtFOp::create(builder, loc, wide, operand));
      Operation *wideOp = builder.clone(*op, mapping);
      for (auto [result, wideResult] :
           llvm::zip(op->getResults(), wideOp->getResults())) {
        RankedTensorType wide = widenedType(result.getType());
        if (!wide) {
          // Already f32: the output of a bf16 layer, left unrounded.
          result.replaceAllUsesWith(wideResult);
          continue;
        }
        wideResult.setType(wide);
        // Stored in bf16: rounded to nearest even.
        Value rounded =
            arith::TruncFOp::create(builder, loc, result.getType(), wideResult);
        result.replaceAllUsesWith(rounded);
      }
      op->erase();
    }
  }
};
} // namespace
