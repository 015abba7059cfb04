// The RTL PE's arithmetic units (models/pe_rtl/rtl: pe_fp32_add, pe_fp32_mul, pe_unpack16), Verilated side by side
// as pe_fp_units: hand-derived bit patterns for each rounding and special case, every 16-bit code through the
// unpackers against pevp::num's decoders, and random operands against the host's IEEE fp32 arithmetic (round to
// nearest even, subnormals kept: the default floating-point environment).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>

#include "pevp/numerics/convert.h"

#if PEVP_HAVE_FP_UNITS
#include "Vpe_fp_units.h"
#endif

namespace {

#if PEVP_HAVE_FP_UNITS

struct Units {
  Vpe_fp_units top;
  void set(std::uint32_t a, std::uint32_t b) {
    top.a = a;
    top.b = b;
    top.eval();
  }
  std::uint32_t add(std::uint32_t a, std::uint32_t b) { return set(a, b), top.sum; }
  std::uint32_t add_truncated(std::uint32_t a, std::uint32_t b) { return set(a, b), top.sum_truncated; }
  std::uint32_t mul(std::uint32_t a, std::uint32_t b) { return set(a, b), top.product; }
  std::uint32_t bf16(std::uint16_t h) {
    top.h = h;
    top.eval();
    return top.from_bf16;
  }
  std::uint32_t fp16(std::uint16_t h) {
    top.h = h;
    top.eval();
    return top.from_fp16;
  }
};

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float value(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
bool is_nan(std::uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }

// Patterns used below: 1.0 = 0x3F800000, 2^-24 = 0x33800000 (exponent 103), 2^-25 = 0x33000000 (102),
// 1 + 2^-23 = 0x3F800001, 2 - 2^-23 = 0x3FFFFFFF, the smallest normal 2^-126 = 0x00800000, the smallest subnormal
// 2^-149 = 0x00000001, the largest finite (2 - 2^-23) * 2^127 = 0x7F7FFFFF.

TEST(PeRtlAdder, RoundsToNearestTiesToEven) {
  Units u;
  // 1 + 2^-24 lies halfway between 1.0 (mantissa even) and 1 + 2^-23: the tie goes to the even 1.0.
  EXPECT_EQ(u.add(0x3F800000u, 0x33800000u), 0x3F800000u);
  // (1 + 2^-23) + 2^-24 lies halfway between 1 + 2^-23 (odd) and 1 + 2^-22 (0x3F800002, even): up.
  EXPECT_EQ(u.add(0x3F800001u, 0x33800000u), 0x3F800002u);
  // 1 + 2^-24 * (1 + 2^-23) (0x33800001) is just above the halfway point: the sticky bit rounds it up.
  EXPECT_EQ(u.add(0x3F800000u, 0x33800001u), 0x3F800001u);
  // 1 - 2^-25 lies halfway between 1 - 2^-24 (0x3F7FFFFF, odd) and 1.0 (even): up to 1.0, across the binade.
  EXPECT_EQ(u.add(0x3F800000u, 0xB3000000u), 0x3F800000u);
  // 1 - (2^-25 + 2^-48) (0xB3000001) is just below the halfway point: down to 0x3F7FFFFF.
  EXPECT_EQ(u.add(0x3F800000u, 0xB3000001u), 0x3F7FFFFFu);
  // The operand order does not matter.
  EXPECT_EQ(u.add(0x33800000u, 0x3F800001u), 0x3F800002u);
}

TEST(PeRtlAdder, CarryOutOfTheMantissaBumpsTheExponent) {
  Units u;
  // (2 - 2^-23) + 2^-24 = 2 - 2^-24, halfway between 0x3FFFFFFF (odd) and 2.0: rounds up, the all-ones mantissa
  // carries out and 2.0 = 0x40000000 has exponent 128 and mantissa 0.
  EXPECT_EQ(u.add(0x3FFFFFFFu, 0x33800000u), 0x40000000u);
  // 1.5 + 1.5 = 3: the significands' sum carries (1.1b + 1.1b = 11.0b) with nothing to round: 0x40400000.
  EXPECT_EQ(u.add(0x3FC00000u, 0x3FC00000u), 0x40400000u);
}

TEST(PeRtlAdder, SubnormalsInAndOut) {
  Units u;
  // 2^-149 + 2^-149 = 2^-148: 0x00000002.
  EXPECT_EQ(u.add(0x00000001u, 0x00000001u), 0x00000002u);
  // (1 + 2^-23) * 2^-126 - 2^-126 = 2^-149: a normal minus a normal leaves the smallest subnormal.
  EXPECT_EQ(u.add(0x00800001u, 0x80800000u), 0x00000001u);
  // 2^-126 - 2^-127 (0x80400000) = 2^-127 = 0x00400000.
  EXPECT_EQ(u.add(0x00800000u, 0x80400000u), 0x00400000u);
  // The largest subnormal (2^-126 - 2^-149 = 0x007FFFFF) + 2^-149 = 2^-126: out of the subnormals into a normal.
  EXPECT_EQ(u.add(0x007FFFFFu, 0x00000001u), 0x00800000u);
  // 1.0 + 2^-149: far below half an ulp of 1.0, gone.
  EXPECT_EQ(u.add(0x3F800000u, 0x00000001u), 0x3F800000u);
}

TEST(PeRtlAdder, OverflowsToInfinity) {
  Units u;
  // max + max = 2^129 - 2^105: past the range, +Inf; and the negatives: -Inf.
  EXPECT_EQ(u.add(0x7F7FFFFFu, 0x7F7FFFFFu), 0x7F800000u);
  EXPECT_EQ(u.add(0xFF7FFFFFu, 0xFF7FFFFFu), 0xFF800000u);
  // max + 2^103 (0x73000000, half of max's ulp 2^104): a tie, max's mantissa is odd, so it rounds up to 2^128 = Inf.
  EXPECT_EQ(u.add(0x7F7FFFFFu, 0x73000000u), 0x7F800000u);
  // max + 2^102 (0x72800000, a quarter ulp): stays max.
  EXPECT_EQ(u.add(0x7F7FFFFFu, 0x72800000u), 0x7F7FFFFFu);
}

TEST(PeRtlAdder, InfinitiesAndNaNs) {
  Units u;
  EXPECT_EQ(u.add(0x7F800000u, 0xFF800000u), 0x7FC00000u);  // Inf - Inf = NaN (canonical)
  EXPECT_EQ(u.add(0xFF800000u, 0x7F800000u), 0x7FC00000u);
  EXPECT_EQ(u.add(0x7F800000u, 0x7F800000u), 0x7F800000u);  // Inf + Inf = Inf
  EXPECT_EQ(u.add(0xFF800000u, 0x3F800000u), 0xFF800000u);  // -Inf + 1 = -Inf
  EXPECT_EQ(u.add(0x3F800000u, 0x7F800000u), 0x7F800000u);
  EXPECT_EQ(u.add(0x7FC00001u, 0x3F800000u), 0x7FC00000u);  // a NaN in (payload, quiet) gives the canonical NaN
  EXPECT_EQ(u.add(0x3F800000u, 0xFF800001u), 0x7FC00000u);  // a negative signalling NaN too
  EXPECT_EQ(u.add(0x7FFFFFFFu, 0x7F800000u), 0x7FC00000u);  // NaN + Inf
}

TEST(PeRtlAdder, ZerosAndExactCancellation) {
  Units u;
  EXPECT_EQ(u.add(0x3F800000u, 0xBF800000u), 0x00000000u);  // 1 - 1 = +0
  EXPECT_EQ(u.add(0xBF800000u, 0x3F800000u), 0x00000000u);  // -1 + 1 = +0
  EXPECT_EQ(u.add(0x00000001u, 0x80000001u), 0x00000000u);  // subnormals cancel to +0 as well
  EXPECT_EQ(u.add(0x80000000u, 0x80000000u), 0x80000000u);  // -0 + -0 = -0
  EXPECT_EQ(u.add(0x00000000u, 0x80000000u), 0x00000000u);  // +0 + -0 = +0
  EXPECT_EQ(u.add(0x80000000u, 0x00000000u), 0x00000000u);  // -0 + +0 = +0
  EXPECT_EQ(u.add(0x80000000u, 0xBF800000u), 0xBF800000u);  // -0 + -1 = -1
  EXPECT_EQ(u.add(0x00000000u, 0x80000001u), 0x80000001u);  // +0 + -2^-149 = -2^-149
}

TEST(PeRtlAdder, TruncatingBuildDropsTheDiscardedBits) {
  Units u;
  // The broken variant's adder: (1 + 2^-23) + 2^-24 truncates to 0x3F800001 where RNE gives 0x3F800002 ...
  EXPECT_EQ(u.add_truncated(0x3F800001u, 0x33800000u), 0x3F800001u);
  // ... 1 + 2^-24 (1 + 2^-23) to 1.0 where RNE gives 0x3F800001, and 1 - 2^-25 to 0x3F7FFFFF where RNE gives 1.0.
  EXPECT_EQ(u.add_truncated(0x3F800000u, 0x33800001u), 0x3F800000u);
  EXPECT_EQ(u.add_truncated(0x3F800000u, 0xB3000000u), 0x3F7FFFFFu);
  // Exact sums are the same in both builds: 1.5 + 1.5 = 3.
  EXPECT_EQ(u.add_truncated(0x3FC00000u, 0x3FC00000u), 0x40400000u);
}

TEST(PeRtlMultiplier, RoundsSubnormalsAndUnderflows) {
  Units u;
  // 1.5 * 2 = 3: exact.
  EXPECT_EQ(u.mul(0x3FC00000u, 0x40000000u), 0x40400000u);
  // (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46: the 2^-46 is below half an ulp, gone: 0x3F800002.
  EXPECT_EQ(u.mul(0x3F800001u, 0x3F800001u), 0x3F800002u);
  // (2 - 2^-23)^2 = 4 - 2^-21 + 2^-46 = (2 - 2^-22 + 2^-47) * 2: rounds to 0x407FFFFE (mantissa 2 - 2^-22).
  EXPECT_EQ(u.mul(0x3FFFFFFFu, 0x3FFFFFFFu), 0x407FFFFEu);
  // 2^-149 * 2^23 (0x4B000000) = 2^-126: a subnormal input, a normal result 0x00800000.
  EXPECT_EQ(u.mul(0x00000001u, 0x4B000000u), 0x00800000u);
  // 2^-75 (0x1A000000) * 2^-75 = 2^-150: exactly half the smallest subnormal, the tie goes to the even 0.
  EXPECT_EQ(u.mul(0x1A000000u, 0x1A000000u), 0x00000000u);
  // 1.5 * 2^-75 (0x1A400000) * 2^-75 = 0.75 * 2^-149: rounds up to the smallest subnormal 0x00000001.
  EXPECT_EQ(u.mul(0x1A400000u, 0x1A000000u), 0x00000001u);
  // 1.5 * 2^-75 * 2^-74 (0x1A800000) = 1.5 * 2^-149: a tie between 1 and 2 units, to the even 0x00000002.
  EXPECT_EQ(u.mul(0x1A400000u, 0x1A800000u), 0x00000002u);
  // 2^-100 (0x0D800000) squared = 2^-200: underflows to +0; with a negative operand to -0.
  EXPECT_EQ(u.mul(0x0D800000u, 0x0D800000u), 0x00000000u);
  EXPECT_EQ(u.mul(0x8D800000u, 0x0D800000u), 0x80000000u);
  // (1 - 2^-24) * 2^-126 rounds up into the smallest normal: 0x3F7FFFFF * 0x00800000 = 2^-126 - 2^-150, a tie
  // between 0x007FFFFF (odd) and 0x00800000 (even): 0x00800000.
  EXPECT_EQ(u.mul(0x3F7FFFFFu, 0x00800000u), 0x00800000u);
}

TEST(PeRtlMultiplier, OverflowInfinitiesNaNsAndZeros) {
  Units u;
  EXPECT_EQ(u.mul(0x5F800000u, 0x5F800000u), 0x7F800000u);  // 2^64 * 2^64 = 2^128: +Inf
  EXPECT_EQ(u.mul(0xDF800000u, 0x5F800000u), 0xFF800000u);  // -Inf
  EXPECT_EQ(u.mul(0x7F800000u, 0x00000000u), 0x7FC00000u);  // Inf * 0 = NaN
  EXPECT_EQ(u.mul(0x80000000u, 0xFF800000u), 0x7FC00000u);  // -0 * -Inf = NaN
  EXPECT_EQ(u.mul(0x7F800000u, 0xC0000000u), 0xFF800000u);  // Inf * -2 = -Inf
  EXPECT_EQ(u.mul(0x7F800000u, 0x00000001u), 0x7F800000u);  // Inf * 2^-149 = Inf
  EXPECT_EQ(u.mul(0x7FC00001u, 0x3F800000u), 0x7FC00000u);  // NaN * 1 = canonical NaN
  EXPECT_EQ(u.mul(0x00000000u, 0xFFC00000u), 0x7FC00000u);  // 0 * NaN
  EXPECT_EQ(u.mul(0x80000000u, 0x3F800000u), 0x80000000u);  // -0 * 1 = -0
  EXPECT_EQ(u.mul(0x80000000u, 0xBF800000u), 0x00000000u);  // -0 * -1 = +0
}

TEST(PeRtlUnpack, Bf16IsTheUpperHalf) {
  Units u;
  EXPECT_EQ(u.bf16(0x3F80), 0x3F800000u);  // 1.0
  EXPECT_EQ(u.bf16(0xFF81), 0xFF810000u);  // a NaN keeps sign and payload
  EXPECT_EQ(u.bf16(0x0001), 0x00010000u);  // a subnormal bf16 is a subnormal fp32
  for (unsigned h = 0; h < 0x10000; ++h)
    ASSERT_EQ(u.bf16(static_cast<std::uint16_t>(h)), bits(pevp::num::from_bf16(static_cast<std::uint16_t>(h))))
        << "bf16 code " << h;
}

TEST(PeRtlUnpack, Fp16NormalsSubnormalsInfinitiesNaNs) {
  Units u;
  EXPECT_EQ(u.fp16(0x3C00), 0x3F800000u);  // 1.0: exponent 15 + 112 = 127
  EXPECT_EQ(u.fp16(0x7BFF), 0x477FE000u);  // 65504: exponent 30 + 112 = 142 (0x8E), mantissa 0x3FF << 13
  EXPECT_EQ(u.fp16(0x0001), 0x33800000u);  // 2^-24, the smallest subnormal: exponent 103
  // 0x03FF = 1023 * 2^-24 = 1.111111111b * 2^-15: exponent 112 (0x70), mantissa 0x3FE << 13 = 0x7FC000.
  EXPECT_EQ(u.fp16(0x03FF), 0x387FC000u);
  EXPECT_EQ(u.fp16(0x8200), 0xB8000000u);  // -2^-15 (-0x200 * 2^-24): exponent 112, mantissa 0
  EXPECT_EQ(u.fp16(0x7C00), 0x7F800000u);  // +Inf
  EXPECT_EQ(u.fp16(0xFC00), 0xFF800000u);  // -Inf
  EXPECT_EQ(u.fp16(0x7E01), 0x7FC02000u);  // a NaN keeps its payload: 0x201 << 13
  EXPECT_EQ(u.fp16(0x8000), 0x80000000u);  // -0
  for (unsigned h = 0; h < 0x10000; ++h)
    ASSERT_EQ(u.fp16(static_cast<std::uint16_t>(h)), bits(pevp::num::from_fp16(static_cast<std::uint16_t>(h))))
        << "fp16 code " << h;
}

// Random operands against the host's fp32: raw bit patterns (every class, NaN results compared as "a NaN") and
// operands whose exponents lie close together (cancellation, long carries, ties).
TEST(PeRtlArithmetic, RandomOperandsMatchTheHostsIeeeArithmetic) {
  Units u;
  std::mt19937 rng(20261205);
  for (int i = 0; i < 300000; ++i) {
    std::uint32_t a = rng(), b = rng();
    if (i % 2 == 1) b = (a & 0xFF800000u) ^ (rng() & 0x87800000u) ^ (rng() & 0x007FFFFFu);  // near a's exponent
    if (i % 5 == 2) a &= 0x80FFFFFFu;  // small exponents: subnormal sums and products
    if (i % 5 == 3) b &= 0x80FFFFFFu;
    const std::uint32_t sum = bits(value(a) + value(b)), product = bits(value(a) * value(b));
    const std::uint32_t rtl_sum = u.add(a, b), rtl_product = u.mul(a, b);
    if (is_nan(sum))
      ASSERT_EQ(rtl_sum, 0x7FC00000u) << std::hex << a << " + " << b;
    else
      ASSERT_EQ(rtl_sum, sum) << std::hex << a << " + " << b;
    if (is_nan(product))
      ASSERT_EQ(rtl_product, 0x7FC00000u) << std::hex << a << " * " << b;
    else
      ASSERT_EQ(rtl_product, product) << std::hex << a << " * " << b;
  }
}

#else

TEST(PeRtlAdder, NeedsVerilator) { GTEST_SKIP() << "built without Verilator: no RTL PE tile"; }

#endif

}  // namespace
