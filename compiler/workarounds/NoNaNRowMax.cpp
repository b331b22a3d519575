//===- NoNaNRowMax.cpp - Softmax's row maxima reduced without NaN checks --===//
//
// Softmax subtracts each row's maximum before exp only to keep exp in
// range; the maximum is the attention math's one `arith.maxnumf` reduction
// (buildMaskedMax, compiler/utils/AttentionMath.cpp). LLVM must assume
// that any lane of its `llvm.vector.reduce.fmax` may be NaN and reduces a
// vector of 16 lanes in a chain of 16 NaN-checked scalar steps (61
// instructions with AVX-512, against 9 for the shuffle tree it uses when
// NaN is ruled out), once per row of every key block, beside the block's
// FMAs.
//
// Ruling NaN out (the `nnan` flag) changes no result: a NaN score reaches
// exp(score - max) whatever the maximum is, and makes its row's sum and
// output NaN (test/numerics/nan-inputs.test); the maximum of scores that
// are not NaN is the same with or without the flag.
//
// The pass marks every `vector.reduction <maxnumf>` of the function: in
// code that mha lowers, those are the row maxima of softmax (other maxima,
// such as the merge of key splits, use `arith.maximumf`). It runs after
// `lower-vector-multi-reduction` made them and before `convert-vector-to-
// llvm` passes the flag to LLVM.
//
// Retired by: fast-math flags on vector.multi_reduction, which
// linalg::vectorize takes from the reduction's combining op and
// lower-vector-multi-reduction passes on: the attention math's `maxnumf`
// could then say `nnan` itself.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::mha {
#define GEN_PASS_DEF_MHANONANROWMAX
#include "compiler/Passes.h.inc"
} // namespace mlir::mha

using namespace mlir;

namespace {
struct MhaNoNaNRowMaxPass : mha::impl::MhaNoNaNRowMaxBase<MhaNoNaNRowMaxPass> {
  void runOnOperation() override {
    getOperation().walk([](vector::ReductionOp reduction) {
      if (reduction.getKind() == vector::CombiningKind::MAXNUMF)
        reduction.setFastmath(reduction.getFastmath() |
                              arith::FastMathFlags::nnan);
    });
  }
};
} // namespace
