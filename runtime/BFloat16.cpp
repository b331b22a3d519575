//===- BFloat16.cpp - Rounding float32 arrays to bfloat16 -----------------===//

#include "runtime/BFloat16.h"

#include <cassert>

using namespace mha::runtime;

NpyArray mha::runtime::toBF16Array(const NpyArray &array) {
  assert(array.elementType == ElementType::F32 && "not a float32 array");
  NpyArray result = NpyArray::zeros(ElementType::BF16, array.shape);
  const float *from = array.f32();
  auto *to = reinterpret_cast<uint16_t *>(result.data.data());
  for (int64_t i = 0, e = array.numElements(); i < e; ++i)
    to[i] = floatToBF16Bits(from[i]);
  return result;
}

int64_t mha::runtime::roundToBF16InPlace(NpyArray &array) {
  assert(array.elementType == ElementType::F32 && "not a float32 array");
  float *values = array.f32();
  int64_t changed = 0;
  for (int64_t i = 0, e = array.numElements(); i < e; ++i) {
    float rounded = roundToBF16(values[i]);
    // NaN compares unequal to itself: count only real changes.
    if (rounded != values[i] && !(rounded != rounded && values[i] != values[i]))
      ++changed;
    values[i] = rounded;
  }
  return changed;
}
