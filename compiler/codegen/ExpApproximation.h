//===- ExpApproximation.h - math.exp for AVX-512 ----------------*- C++ -*-===//
//
// Softmax takes one exp per score. Upstream's polynomial approximation
// (populateMathPolynomialApproximationPatterns) builds 2^n from the bits of
// n, with clamps before and after so that no input overflows the exponent
// field: about 21 vector instructions per register (x86, LLVM 22). AVX-512 has
// VSCALEFPS, p · 2^n for any n with IEEE overflow and underflow, which
// LLVM's x86 backend emits for `llvm.ldexp`; with it, one exp takes 16.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_COMPILER_CODEGEN_EXPAPPROXIMATION_H
#define MHA_COMPILER_CODEGEN_EXPAPPROXIMATION_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::mha {

/// Rewrites `math.exp` of f32 vectors as
///
///   x = clamp(x, -105, 89)             (NaN stays NaN)
///   n = roundeven(x · log2(e))
///   r = x - n · ln(2)                  (Cody-Waite: ln(2) in a high and a
///                                       low part, two FMAs)
///   exp(x) = ldexp(p(r), n)            (p: degree 6 on [-ln2/2, ln2/2])
///
/// within 1 ulp of the f32 result (7.5e-8 relative against libm's f64 exp
/// over [-110, 90], test/pipeline/execute-exp.mlir; upstream's form gives
/// 2.7e-7 and flushes subnormal results to 0); -inf gives exactly 0, +inf
/// gives +inf, NaN gives NaN. Only for targets with AVX-512: elsewhere
/// `llvm.ldexp` of a vector is a loop of libm calls.
void populateScalefExpPatterns(RewritePatternSet &patterns,
                               PatternBenefit benefit = 1);

} // namespace mlir::mha

#endif // MHA_COMPILER_CODEGEN_EXPAPPROXIMATION_H
