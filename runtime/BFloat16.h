//===- BFloat16.h - Rounding float32 to bfloat16 ----------------*- C++ -*-===//
//
// NumPy has no bfloat16, so the bf16 arguments of a graph arrive as float32
// arrays and are rounded here: to nearest, ties to even (what `arith.truncf`
// and the AVX512_BF16 conversions do), NaN stays NaN (quiet, sign kept),
// infinities stay infinities and values past the largest bf16 round to
// infinity.
//
//===----------------------------------------------------------------------===//

#ifndef MHA_RUNTIME_BFLOAT16_H
#define MHA_RUNTIME_BFLOAT16_H

#include "runtime/Npy.h"

#include <cstdint>
#include <cstring>

namespace mha {
namespace runtime {

/// The bits of the bfloat16 nearest to `value` (ties to even).
inline uint16_t floatToBF16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    // NaN: keep the sign and the top of the payload, and make it quiet so
    // that cutting the low payload bits never leaves an infinity.
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even;
  // a carry into the exponent is the correct rounding up (to infinity past
  // the largest finite value).
  uint32_t lowestKept = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7fffu + lowestKept) >> 16);
}

/// The float32 value of the bfloat16 `bits` (exact).
inline float bf16BitsToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

/// `value` rounded to the nearest bfloat16, as a float32.
inline float roundToBF16(float value) {
  return bf16BitsToFloat(floatToBF16Bits(value));
}

/// The bf16 bits of `count` floats, each rounded to nearest even.
void floatsToBF16Bits(const float *from, uint16_t *to, int64_t count);

/// A BF16 array of `array`'s (float32) elements rounded to nearest even.
NpyArray toBF16Array(const NpyArray &array);

/// Replaces each element of the float32 `array` with its rounding to
/// bfloat16 (still float32): the values a bf16 argument holds, which the
/// reference must see. Returns how many elements changed.
int64_t roundToBF16InPlace(NpyArray &array);

} // namespace runtime
} // namespace mha

#endif // MHA_RUNTIME_BFLOAT16_H
