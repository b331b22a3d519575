//===- Comparison.cpp - Compare an output with an expected array ----------===//

#include "runtime/Comparison.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mha::runtime;

std::string Comparison::summary() const {
  // The rule is printed with the result: a max rel error far above rtol is
  // fine where the element it comes from is tiny, and the rule says why.
  std::string text = llvm::formatv(
      "max abs error {0:E2}, max rel error {1:E2}; passes when "
      "|got - want| <= atol + rtol*|want| for every element (atol {2:E0}, "
      "rtol {3:E0})",
      maxAbsError, maxRelError, atol, rtol);
  if (passed)
    return text + ": ok";
  return text + llvm::formatv(": {0} of {1} elements outside, the worst at "
                              "flat index {2}: FAILED",
                              mismatches, numElements, worstIndex)
                    .str();
}

llvm::Expected<Comparison> mha::runtime::compareArrays(const NpyArray &got,
                                                       const NpyArray &want,
                                                       double atol,
                                                       double rtol) {
  if (got.elementType != ElementType::F32 ||
      want.elementType != ElementType::F32)
    return llvm::createStringError(
        llvm::formatv("can only compare float32 arrays, got {0} and {1}",
                      getElementTypeName(got.elementType),
                      getElementTypeName(want.elementType)));
  if (got.shape != want.shape)
    return llvm::createStringError(
        llvm::formatv("the output has shape {0} but the expected array has "
                      "shape {1}",
                      formatShape(got.shape), formatShape(want.shape)));
  Comparison result;
  result.atol = atol;
  result.rtol = rtol;
  result.numElements = got.numElements();
  const float *a = got.f32();
  const float *b = want.f32();
  double worstExcess = -INFINITY;
  for (int64_t i = 0; i < result.numElements; ++i) {
    double x = a[i], y = b[i];
    if (std::isnan(x) && std::isnan(y))
      continue;
    double error = std::fabs(x - y);
    double allowed = atol + rtol * std::fabs(y);
    // A NaN on one side makes `error` NaN: count it as outside.
    bool outside = !(error <= allowed);
    if (!std::isnan(error)) {
      result.maxAbsError = std::max(result.maxAbsError, error);
      if (y != 0)
        result.maxRelError = std::max(result.maxRelError, error / std::fabs(y));
    } else {
      result.maxAbsError = INFINITY;
    }
    double excess = std::isnan(error) ? INFINITY : error - allowed;
    if (excess > worstExcess) {
      worstExcess = excess;
      result.worstIndex = i;
    }
    result.mismatches += outside;
  }
  result.passed = result.mismatches == 0;
  return result;
}

StorageErrorCheck mha::runtime::checkStorageError(const float *got,
                                                  const float *exact,
                                                  const float *rounded,
                                                  int64_t count, double factor,
                                                  double atol) {
  StorageErrorCheck check;
  for (int64_t i = 0; i < count; ++i) {
    check.nan |= std::isnan(got[i]);
    check.error =
        std::max(check.error, std::fabs(double(got[i]) - double(exact[i])));
    check.storageError = std::max(
        check.storageError, std::fabs(double(rounded[i]) - double(exact[i])));
  }
  check.bound = std::max(factor * check.storageError, atol);
  check.passed = !check.nan && check.error <= check.bound;
  return check;
}

std::string StorageErrorCheck::summary(double factor) const {
  return llvm::formatv("bf16 max abs error {0:e}, of the reference on the "
                       "bf16-rounded inputs {1:e}, bound {2:e} ({3:F1}x, or "
                       "--atol): {4}",
                       error, storageError, bound, factor,
                       nan ? "NaN" : (passed ? "ok" : "MISMATCH"))
      .str();
}
