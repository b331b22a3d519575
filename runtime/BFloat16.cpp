//===- BFloat16.cpp - Rounding float32 arrays to bfloat16 -----------------===//

#include "runtime/BFloat16.h"

#include <cassert>

using namespace mha::runtime;

void mha::runtime::floatsToBF16Bits(const float *from, uint16_t *to,
                                    int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    to[i] = floatToBF16Bits(from[i]);
}

NpyArray mha::runtime::toBF16Array(const NpyArray &array) {
  assert(array.elementType == ElementType::F32 && "not a float32 array");
  NpyArray result = NpyArray::zeros(ElementType::BF16, array.shape);
  floatsToBF16Bits(array.f32(),
                   reinterpret_cast<uint16_t *>(result.data.data()),
                   array.numElements());
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
