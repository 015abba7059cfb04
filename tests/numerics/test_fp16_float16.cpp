// fp16 against the compiler's _Float16 (GCC on x86-64: libgcc's soft-float conversions, IEEE 754 RNE), an
// implementation independent of this library.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "pevp/numerics/formats.h"
#include "reference.h"

namespace {

namespace num = pevp::num;

std::uint16_t compiler_to_fp16(float x) {
  const volatile float vx = x;  // keep the conversion at run time, in the default rounding mode
  const _Float16 h = static_cast<_Float16>(vx);
  std::uint16_t u;
  std::memcpy(&u, &h, sizeof u);
  return u;
}

float compiler_from_fp16(std::uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, sizeof h);
  return static_cast<float>(h);
}

void expect_same_encode(float x) {
  const std::uint16_t want = compiler_to_fp16(x);
  const std::uint32_t got = num::encode(num::Format::FP16, x);
  if (std::isnan(x)) {
    ASSERT_EQ(got, 0x7E00u) << "NaN encodes to the canonical NaN";
    ASSERT_TRUE(std::isnan(compiler_from_fp16(want)));
    return;
  }
  ASSERT_EQ(got, want) << std::hex << "x=0x" << ref::bits_of(x) << " (" << x << ")";
  ASSERT_EQ(num::to_fp16(x), want);
}

TEST(numerics_Fp16VsFloat16, EveryCodeDecodesLikeTheCompiler) {
  for (std::uint32_t c = 0; c < 65536u; ++c) {
    const auto h = static_cast<std::uint16_t>(c);
    const float want = compiler_from_fp16(h);
    const float got = num::from_fp16(h);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << c;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << std::hex << c;
      continue;
    }
    ASSERT_EQ(ref::bits_of(got), ref::bits_of(want)) << std::hex << "code 0x" << c;
  }
}

// Every fp32 whose bit pattern is a multiple of 251 (a prime: all low-bit residues appear), ~17 M values.
TEST(numerics_Fp16VsFloat16, StridedFp32EncodesLikeTheCompiler) {
  for (std::uint64_t u = 0; u < (1ull << 32); u += 251) expect_same_encode(ref::float_of(static_cast<std::uint32_t>(u)));
}

// Around every fp16 value: the value, its fp32 neighbours, and the midpoint to the next value with its neighbours.
TEST(numerics_Fp16VsFloat16, AroundEveryFp16ValueEncodesLikeTheCompiler) {
  for (std::uint32_t c = 0; c < 65536u; ++c) {
    const float v = compiler_from_fp16(static_cast<std::uint16_t>(c));
    if (!std::isfinite(v)) continue;
    const float next = compiler_from_fp16(static_cast<std::uint16_t>(c + 1));
    expect_same_encode(v);
    expect_same_encode(std::nextafter(v, 1e30f));
    expect_same_encode(std::nextafter(v, -1e30f));
    if (std::isfinite(next) && (c & 0x7FFFu) != 0x7FFFu) {
      const float mid = static_cast<float>((static_cast<double>(v) + next) / 2);
      expect_same_encode(mid);
      expect_same_encode(std::nextafter(mid, 1e30f));
      expect_same_encode(std::nextafter(mid, -1e30f));
    }
  }
  // The overflow boundary and the region above it, and every fp32 subnormal multiple of 5.
  for (std::uint32_t u = 0x477FE000u; u < 0x47800100u; ++u) {
    expect_same_encode(ref::float_of(u));
    expect_same_encode(ref::float_of(u | 0x80000000u));
  }
  for (std::uint32_t u = 0; u < 0x800000u; u += 5) expect_same_encode(ref::float_of(u));
}

}  // namespace
