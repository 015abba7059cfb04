// Stochastic rounding fp32 -> bf16 with a caller-supplied random value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "pevp/numerics/formats.h"
#include "reference.h"

namespace {

namespace num = pevp::num;

constexpr float kInf = std::numeric_limits<float>::infinity();

double bf16_value(std::uint16_t h) { return ref::decode(ref::spec(num::Format::BF16), h); }

// The bf16 values of the same sign just below and just above |x| (x finite, not a bf16 value), from the reference
// value set, not from bit manipulation.
struct Bracket {
  std::uint16_t toward_zero;
  std::uint16_t away;
};

Bracket bracket(const std::vector<ref::Entry>& vs, float x) {
  const double a = std::fabs(static_cast<double>(x));
  const auto it = std::upper_bound(vs.begin(), vs.end(), a, [](double t, const ref::Entry& e) { return t < e.v; });
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const auto lo = static_cast<std::uint16_t>((it - 1)->code | sign);
  // Above the largest finite bf16 the next step up is Inf.
  const auto hi = static_cast<std::uint16_t>((it == vs.end() ? 0x7F80u : it->code) | sign);
  return {lo, hi};
}

TEST(numerics_StochasticBf16, RandomZeroTruncatesAndAllOnesRoundsAway) {
  const std::vector<ref::Entry> vs = ref::value_set(ref::spec(num::Format::BF16));
  for (std::uint64_t u = 0; u < (1ull << 32); u += 7919) {
    const float x = ref::float_of(static_cast<std::uint32_t>(u));
    if (!std::isfinite(x)) continue;
    const bool exact = (static_cast<std::uint32_t>(u) & 0xFFFFu) == 0u;
    const Bracket b = bracket(vs, x);
    if (exact) {
      ASSERT_EQ(bf16_value(num::to_bf16_sr(x, 0u)), static_cast<double>(x));
      ASSERT_EQ(bf16_value(num::to_bf16_sr(x, 0xFFFFFFFFu)), static_cast<double>(x));
      continue;
    }
    ASSERT_EQ(num::to_bf16_sr(x, 0u), b.toward_zero) << std::hex << u;
    ASSERT_EQ(num::to_bf16_sr(x, 0xFFFFFFFFu), b.away) << std::hex << u;
    ASSERT_EQ(num::to_bf16_sr(x, 0x0000FFFFu), b.away) << std::hex << u;
    ASSERT_EQ(num::to_bf16_sr(x, 0xFFFF0000u), b.toward_zero) << "only the low 16 random bits are used";
  }
}

TEST(numerics_StochasticBf16, ExactValuesNeverChange) {
  std::mt19937 rng(7);
  for (std::uint32_t c = 0; c < 65536u; ++c) {
    const auto h = static_cast<std::uint16_t>(c);
    const float v = num::from_bf16(h);
    if (std::isnan(v)) continue;
    for (int k = 0; k < 8; ++k) ASSERT_EQ(num::to_bf16_sr(v, rng()), h) << std::hex << c;
    ASSERT_EQ(num::to_bf16_sr(v, 0xFFFFFFFFu), h);
  }
}

// Over all 2^16 low random values, x rounds away from zero exactly d times, d = its discarded 16 bits: the rounding
// probability is d / 2^16 exactly.
TEST(numerics_StochasticBf16, RoundUpCountEqualsDiscardedFraction) {
  const std::vector<ref::Entry> vs = ref::value_set(ref::spec(num::Format::BF16));
  for (const std::uint32_t u : {0x3F800001u, 0x3F804000u, 0x3F80C000u, 0xBF80FFFFu, 0x00001234u, 0x40490FDBu}) {
    const float x = ref::float_of(u);
    const Bracket b = bracket(vs, x);
    std::uint32_t away = 0;
    for (std::uint32_t r = 0; r < 65536u; ++r) {
      const std::uint16_t h = num::to_bf16_sr(x, r);
      ASSERT_TRUE(h == b.toward_zero || h == b.away);
      away += h == b.away ? 1u : 0u;
    }
    EXPECT_EQ(away, u & 0xFFFFu) << std::hex << u;
  }
}

// The mean of many SR roundings is close to the value (fixed seed, deterministic).
TEST(numerics_StochasticBf16, MeanOfManyRoundingsIsUnbiased) {
  std::mt19937 rng(20240601u);
  for (const float x : {1.0f + 0.3f * 0x1p-7f, 3.14159265f, -1.0e-3f, 123456.78f, 0x1.3p-130f}) {
    constexpr int kN = 200000;
    const std::uint16_t lo = num::to_bf16_sr(x, 0u);
    const std::uint16_t hi = num::to_bf16_sr(x, 0xFFFFu);
    ASSERT_NE(lo, hi) << x << " must not be a bf16 value";
    double sum = 0;
    int n_hi = 0;
    for (int i = 0; i < kN; ++i) {
      const std::uint16_t h = num::to_bf16_sr(x, rng());
      ASSERT_TRUE(h == lo || h == hi);
      n_hi += h == hi ? 1 : 0;
      sum += bf16_value(h);
    }
    const double mean = sum / kN;
    const double ulp = std::fabs(bf16_value(hi) - bf16_value(lo));
    // Each rounding is x plus a zero-mean error within one ulp: 6 sigma of the mean is at most 6 * ulp / sqrt(N).
    EXPECT_NEAR(mean, static_cast<double>(x), 6.0 * ulp / std::sqrt(static_cast<double>(kN))) << x;
    EXPECT_GT(n_hi, 0);
    EXPECT_LT(n_hi, kN);
  }
}

TEST(numerics_StochasticBf16, Specials) {
  for (const std::uint32_t r : {0u, 0x8000u, 0xFFFFu, 0xFFFFFFFFu}) {
    EXPECT_EQ(num::to_bf16_sr(std::numeric_limits<float>::quiet_NaN(), r), 0x7FC0);
    EXPECT_EQ(num::to_bf16_sr(ref::float_of(0xFF800001u), r), 0x7FC0);
    EXPECT_EQ(num::to_bf16_sr(kInf, r), 0x7F80);
    EXPECT_EQ(num::to_bf16_sr(-kInf, r), 0xFF80);
    EXPECT_EQ(num::to_bf16_sr(0.0f, r), 0x0000);
    EXPECT_EQ(num::to_bf16_sr(-0.0f, r), 0x8000);
    EXPECT_EQ(num::to_bf16_sr(ref::float_of(0x7F7F0000u), r), 0x7F7F);  // max finite bf16 is exact
  }
  // Between the bf16 max and 2^128 the step up is Inf.
  EXPECT_EQ(num::to_bf16_sr(ref::float_of(0x7F7FFFFFu), 0u), 0x7F7F);
  EXPECT_EQ(num::to_bf16_sr(ref::float_of(0x7F7FFFFFu), 1u), 0x7F80);
  EXPECT_EQ(num::to_bf16_sr(ref::float_of(0xFF7F0001u), 0xFFFFu), 0xFF80);
  // bf16 subnormals: the smallest fp32 subnormal goes to the smallest bf16 subnormal only with r = 0xFFFF.
  EXPECT_EQ(num::to_bf16_sr(ref::float_of(1u), 0xFFFEu), 0x0000);
  EXPECT_EQ(num::to_bf16_sr(ref::float_of(1u), 0xFFFFu), 0x0001);
  EXPECT_EQ(num::to_bf16_sr(ref::float_of(0x007FFFFFu), 1u), 0x0080);  // carries into the smallest normal
}

}  // namespace
