//===- Comparison.h - Compare an output with an expected array --*- C++ -*-===//

#ifndef MHA_RUNTIME_COMPARISON_H
#define MHA_RUNTIME_COMPARISON_H

#include "runtime/Npy.h"

#include "llvm/Support/Error.h"

#include <string>

namespace mha {
namespace runtime {

/// How far an output is from what was expected.
struct Comparison {
  /// The largest |got - want|.
  double maxAbsError = 0;
  /// The largest |got - want| / |want| over elements with want != 0.
  double maxRelError = 0;
  /// Elements outside |got - want| <= atol + rtol * |want| (NaN counts as
  /// outside unless both are NaN).
  int64_t mismatches = 0;
  /// The flat index of the worst element (by tolerance excess).
  int64_t worstIndex = 0;
  /// The tolerances used.
  double atol = 0, rtol = 0;
  /// The number of elements compared.
  int64_t numElements = 0;
  /// True when no element is outside the tolerance.
  bool passed = true;

  /// "max abs error 1.2E-07, max rel error 3.4E-06; passes when |got - want|
  /// <= atol + rtol*|want| for every element (atol 1E-04, rtol 1E-04): ok"
  /// or "... 3 of 96 elements outside ...: FAILED": the rule is part of it.
  std::string summary() const;
};

/// Compares `got` with `want` element by element; the shapes and dtypes must
/// be equal (float32), else the error says what differs.
llvm::Expected<Comparison> compareArrays(const NpyArray &got,
                                         const NpyArray &want, double atol,
                                         double rtol);

/// The accuracy rule of bf16 layers, whose inputs were rounded to bf16: the
/// error of `got` against `exact` (the reference of the float32 inputs as
/// given) is at most `factor` times the error of `rounded` (the reference of
/// the bf16-rounded inputs: what storing them in bf16 alone costs), or
/// `atol` where that is larger; never NaN. The arrays hold `count` floats.
struct StorageErrorCheck {
  double error = 0, storageError = 0, bound = 0;
  bool nan = false, passed = true;

  /// "bf16 max abs error E, of the reference on the bf16-rounded inputs S,
  /// bound B (Fx, or --atol): ok" (or MISMATCH, NaN).
  std::string summary(double factor) const;
};
StorageErrorCheck checkStorageError(const float *got, const float *exact,
                                    const float *rounded, int64_t count,
                                    double factor, double atol);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_COMPARISON_H
