//===- ExpApproximation.h - math.exp and math.exp2 for AVX-512 -*- C++ -*-===//
//
// Softmax takes one exponential per score, an exp2 (its scale takes
// log2(e) along, compiler/utils/AttentionMath.h). Upstream's polynomial
// approximation (populateMathPolynomialApproximationPatterns) has exp only,
// and builds 2^n from the bits of n, with clamps before and after so that
// no input overflows the exponent field: about 21 vector instructions per
// register (x86, LLVM 22). AVX-512 has VSCALEFPS, p · 2^n for any n with
// IEEE overflow and underflow, n given as a float: with it, one exp2 takes
// 12 and one exp 16.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_CODEGEN_EXPAPPROXIMATION_H
#define MHA_COMPILER_CODEGEN_EXPAPPROXIMATION_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::mha {

/// Rewrites `math.exp` and `math.exp2` of f32 vectors as
///
///   exp:  x = clamp(x, -105, 89)       (NaN stays NaN)
///         n = roundeven(x · log2(e))
///         r = x - n · ln(2)            (Cody-Waite: ln(2) in a high and a
///                                       low part, two FMAs)
///         exp(x) = p(r) · 2^n          (p: degree 6 on [-ln2/2, ln2/2])
///   exp2: x = clamp(x, -152, 129)
///         n = roundeven(x), r = x - n  (exact)
///         exp2(x) = q(r) · 2^n         (q: degree 6 on [-1/2, 1/2])
///
/// with p · 2^n one VSCALEFPS per register of 16 (`llvm.ldexp`, which
/// converts n to integers, where the vector is not whole registers):
/// within 1 ulp of the f32 result (exp: 7.5e-8 relative against libm's f64
/// exp over [-110, 90], test/pipeline/execute-exp.mlir; upstream's form
/// gives 2.7e-7 and flushes subnormal results to 0); -inf gives exactly 0,
/// +inf gives +inf, NaN gives NaN. Only for targets with AVX-512: elsewhere
/// the intrinsic does not exist and `llvm.ldexp` of a vector is a loop of
/// libm calls.
void populateScalefExpPatterns(RewritePatternSet &patterns,
                               PatternBenefit benefit = 1);

} // namespace mlir::mha

#endif // MHA_COMPILER_CODEGEN_EXPAPPROXIMATION_H
