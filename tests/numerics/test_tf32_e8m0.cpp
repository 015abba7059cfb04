// tf32 rounding (hand-derived cases, idempotence) and the E8M0 scale encode rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

#include "pevp/numerics/formats.h"
#include "reference.h"

namespace {

namespace num = pevp::num;
using num::Format;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::uint32_t tf32_bits(std::uint32_t x) { return ref::bits_of(num::to_tf32(ref::float_of(x))); }

TEST(numerics_Tf32, HandDerivedRoundToNearestEven) {
  // tf32 keeps 10 mantissa bits: the ulp at 1.0 is 2^-10 = 0x2000 in the fp32 pattern, half an ulp is 0x1000.
  EXPECT_EQ(tf32_bits(0x3F800000u), 0x3F800000u);
  EXPECT_EQ(tf32_bits(0x3F800FFFu), 0x3F800000u);  // below half
  EXPECT_EQ(tf32_bits(0x3F801000u), 0x3F800000u);  // tie, even stays
  EXPECT_EQ(tf32_bits(0x3F801001u), 0x3F802000u);  // above half
  EXPECT_EQ(tf32_bits(0x3F803000u), 0x3F804000u);  // tie, odd goes up
  EXPECT_EQ(tf32_bits(0x3FFFF000u), 0x40000000u);  // tie carries into the next binade (odd mantissa 0x3FF)
  EXPECT_EQ(tf32_bits(0xBF803000u), 0xBF804000u);  // sign-symmetric
  EXPECT_EQ(num::to_tf32(1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(num::to_tf32(1.0f + 0x1p-10f + 0x1p-11f), 1.0f + 0x1p-9f);
  // Overflow: max tf32 = 0x7F7FE000, max + half ulp = 0x7F7FF000 -> Inf.
  EXPECT_EQ(tf32_bits(0x7F7FE000u), 0x7F7FE000u);
  EXPECT_EQ(tf32_bits(0x7F7FEFFFu), 0x7F7FE000u);
  EXPECT_EQ(tf32_bits(0x7F7FF000u), 0x7F800000u);
  EXPECT_EQ(tf32_bits(0xFF7FFFFFu), 0xFF800000u);
  EXPECT_EQ(tf32_bits(0x7F800000u), 0x7F800000u);
  // fp32 subnormals are tf32 subnormals: quantum 0x2000 in the pattern.
  EXPECT_EQ(tf32_bits(0x00000FFFu), 0x00000000u);
  EXPECT_EQ(tf32_bits(0x00001000u), 0x00000000u);  // tie, even
  EXPECT_EQ(tf32_bits(0x00001001u), 0x00002000u);
  EXPECT_EQ(tf32_bits(0x00003000u), 0x00004000u);  // tie, odd goes up
  EXPECT_EQ(tf32_bits(0x007FF000u), 0x00800000u);  // into the smallest normal
  EXPECT_EQ(tf32_bits(0x80000001u), 0x80000000u);  // -0 keeps its sign
  // NaN -> canonical 0x7FC00000 whatever the sign or payload.
  EXPECT_EQ(tf32_bits(0x7F800001u), 0x7FC00000u);
  EXPECT_EQ(tf32_bits(0xFFFFFFFFu), 0x7FC00000u);
  // The generic API codes tf32 as the top 19 bits of the container.
  EXPECT_EQ(num::encode(Format::TF32, 1.0f), 0x3F800000u >> 13);
  EXPECT_EQ(num::decode(Format::TF32, 0x3F800000u >> 13), 1.0f);
  EXPECT_EQ(num::encode(Format::TF32, std::numeric_limits<float>::quiet_NaN()), 0x7FC00000u >> 13);
}

TEST(numerics_Tf32, IdempotentAndLow13BitsClear) {
  for (std::uint64_t u = 0; u < (1ull << 32); u += 811) {
    const float x = ref::float_of(static_cast<std::uint32_t>(u));
    const float t = num::to_tf32(x);
    ASSERT_EQ(ref::bits_of(t) & 0x1FFFu, 0u) << std::hex << u;
    ASSERT_EQ(ref::bits_of(num::to_tf32(t)), ref::bits_of(t)) << std::hex << u;
    ASSERT_EQ(ref::bits_of(num::quantize(Format::TF32, x)), ref::bits_of(t)) << std::hex << u;
    if (std::isfinite(t)) {
      // Half an ulp: relative 2^-11 for normals, half the subnormal quantum 2^-136 below.
      const double bound = std::max(std::fabs(static_cast<double>(x)) * 0x1p-11, 0x1p-137);
      ASSERT_LE(std::fabs(static_cast<double>(t) - x), bound) << std::hex << u;
    }
  }
}

TEST(numerics_E8M0, EveryCodeIsAPowerOfTwo) {
  for (std::uint32_t c = 0; c < 255u; ++c) {
    EXPECT_EQ(static_cast<double>(num::from_e8m0(static_cast<std::uint8_t>(c))), std::ldexp(1.0, static_cast<int>(c) - 127));
  }
  EXPECT_TRUE(std::isnan(num::from_e8m0(0xFF)));
  EXPECT_EQ(num::from_e8m0(127), 1.0f);
  EXPECT_EQ(num::from_e8m0(0), 0x1p-127f);
  EXPECT_EQ(num::from_e8m0(254), 0x1p127f);
}

TEST(numerics_E8M0, EncodeFloorsTheExponent) {
  for (int c = 0; c < 255; ++c) {
    const float p = std::ldexp(1.0f, c - 127);
    SCOPED_TRACE(c);
    EXPECT_EQ(num::to_e8m0(p), c);                           // powers of two are exact
    EXPECT_EQ(num::to_e8m0(std::nextafter(p, kInf)), c);     // just above: floor
    EXPECT_EQ(num::to_e8m0(std::nextafter(p, 0.0f)), c == 0 ? 0 : c - 1);  // just below: the binade below
    if (c < 254) {
      EXPECT_EQ(num::to_e8m0(1.5f * p), c);  // 1.5 * 2^k: floor, not nearest
    }
  }
  EXPECT_EQ(num::to_e8m0(3.0f), 128);
  EXPECT_EQ(num::to_e8m0(0.75f), 126);
  EXPECT_EQ(num::to_e8m0(FLT_MAX), 254);
  EXPECT_EQ(num::to_e8m0(0.0f), 0);
  EXPECT_EQ(num::to_e8m0(-0.0f), 0);
  EXPECT_EQ(num::to_e8m0(ref::float_of(1u)), 0);  // below 2^-127: clamped to the smallest scale
  EXPECT_EQ(num::to_e8m0(-1.0f), 0xFF);
  EXPECT_EQ(num::to_e8m0(-ref::float_of(1u)), 0xFF);
  EXPECT_EQ(num::to_e8m0(kInf), 0xFF);
  EXPECT_EQ(num::to_e8m0(-kInf), 0xFF);
  EXPECT_EQ(num::to_e8m0(std::numeric_limits<float>::quiet_NaN()), 0xFF);
  EXPECT_EQ(num::to_e8m0(-std::numeric_limits<float>::quiet_NaN()), 0xFF);
}

TEST(numerics_E8M0, SampledEncodeAgreesWithFrexpReference) {
  for (std::uint64_t u = 0; u < (1ull << 32); u += 4099) {
    const float x = ref::float_of(static_cast<std::uint32_t>(u));
    ASSERT_EQ(num::encode(Format::E8M0, x), ref::encode_e8m0(x)) << std::hex << u;
  }
}

}  // namespace
