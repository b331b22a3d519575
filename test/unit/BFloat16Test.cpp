//===- BFloat16Test.cpp - Rounding float32 to bfloat16 --------------------===//
//
// Bit patterns checked by hand: a bf16 is the top 16 bits of a float32, so
// rounding looks at the low 16 bits (0x8000 is the tie) and the lowest kept
// bit (even or odd).
//
//===----------------------------------------------------------------------===//

#include "runtime/BFloat16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mha::runtime;

namespace {
float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint16_t round(uint32_t bits) { return floatToBF16Bits(fromBits(bits)); }

TEST(BFloat16, RoundsToNearestTiesToEven) {
  EXPECT_EQ(round(0x3f800000u), 0x3f80u); // 1.0 exactly
  EXPECT_EQ(round(0x3f807fffu), 0x3f80u); // just below the tie: down
  EXPECT_EQ(round(0x3f808000u), 0x3f80u); // 1 + 2^-8, a tie: to even (down)
  EXPECT_EQ(round(0x3f808001u), 0x3f81u); // just above the tie: up
  EXPECT_EQ(round(0x3f818000u), 0x3f82u); // 1 + 3 * 2^-8, a tie: to even (up)
  EXPECT_EQ(round(0xbfc00000u), 0xbfc0u); // -1.5 exactly
  EXPECT_EQ(round(0xbf818000u), 0xbf82u); // negative tie: to even, away
  EXPECT_EQ(round(0x3faaaaabu), 0x3fabu); // 4/3: low bits 0xaaab > tie
}

TEST(BFloat16, ZerosDenormalsAndOverflow) {
  EXPECT_EQ(round(0x00000000u), 0x0000u);
  EXPECT_EQ(round(0x80000000u), 0x8000u); // -0 keeps its sign
  EXPECT_EQ(round(0x00000001u), 0x0000u); // the smallest denormal: to 0
  EXPECT_EQ(round(0x00008000u), 0x0000u); // a denormal tie: to even (0)
  EXPECT_EQ(round(0x00018000u), 0x0002u); // a denormal tie: to even (up)
  EXPECT_EQ(round(0x7f7f0000u), 0x7f7fu); // the largest bf16
  EXPECT_EQ(round(0x7f7fffffu), 0x7f80u); // FLT_MAX: rounds to infinity
  EXPECT_EQ(round(0x7f800000u), 0x7f80u); // +inf
  EXPECT_EQ(round(0xff800000u), 0xff80u); // -inf
}

TEST(BFloat16, NaNStaysNaN) {
  EXPECT_EQ(round(0x7fc00000u), 0x7fc0u); // quiet NaN
  // Payload only in the low bits: truncated it would be infinity.
  EXPECT_EQ(round(0x7f800001u), 0x7fc0u);
  EXPECT_EQ(round(0xffc00001u), 0xffc0u); // the sign is kept
  EXPECT_TRUE(std::isnan(roundToBF16(NAN)));
}

TEST(BFloat16, WidensExactly) {
  EXPECT_EQ(bf16BitsToFloat(0x3f80u), 1.0f);
  EXPECT_EQ(bf16BitsToFloat(0xc040u), -3.0f);
  EXPECT_EQ(bf16BitsToFloat(0x3f81u), 1.0f + 1.0f / 128);
}

TEST(BFloat16, Arrays) {
  NpyArray array = NpyArray::zeros(ElementType::F32, {2, 2});
  float values[] = {1.0f, fromBits(0x3f808001u), fromBits(0x3f818000u), NAN};
  std::memcpy(array.f32(), values, sizeof values);
  NpyArray bf16 = toBF16Array(array);
  ASSERT_EQ(bf16.elementType, ElementType::BF16);
  ASSERT_EQ(bf16.data.size(), 8u);
  const auto *bits = reinterpret_cast<const uint16_t *>(bf16.data.data());
  EXPECT_EQ(bits[0], 0x3f80u);
  EXPECT_EQ(bits[1], 0x3f81u);
  EXPECT_EQ(bits[2], 0x3f82u);
  EXPECT_EQ(bits[3] & 0x7fc0u, 0x7fc0u);
  EXPECT_EQ(roundToBF16InPlace(array), 2); // 1.0 and NaN do not change
  EXPECT_EQ(array.f32()[1], 1.0f + 1.0f / 128);
  EXPECT_EQ(array.f32()[2], 1.0f + 2.0f / 128);
  EXPECT_TRUE(std::isnan(array.f32()[3]));
  // bf16 has no .npy type.
  auto serialized = serializeNpy(bf16);
  EXPECT_FALSE(bool(serialized));
  llvm::consumeError(serialized.takeError());
}
} // namespace
