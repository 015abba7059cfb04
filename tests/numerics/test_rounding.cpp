// fp32 -> narrow rounding for every RNE format: ties at every midpoint, overflow, specials, fp32 subnormals and a
// sample of the whole fp32 space, each compared with the search-based reference encoder.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "pevp/numerics/formats.h"
#include "reference.h"

namespace {

namespace num = pevp::num;
using ref::Kind;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::string format_name(const ::testing::TestParamInfo<num::Format>& p) { return ref::spec(p.param).name; }

// Every format rounded to nearest-even (all but E8M0).
std::vector<num::Format> rne_formats() {
  std::vector<num::Format> out;
  for (num::Format f : num::kAllFormats) {
    if (f != num::Format::E8M0) out.push_back(f);
  }
  return out;
}

std::uint32_t zero_code_for(const ref::Spec& s, bool negative) {
  return negative && ref::has_signed_zero(s) ? ref::neg_zero_code(s) : 0u;
}

class Rounding : public ::testing::TestWithParam<num::Format> {};

// Between adjacent representable a < b: the midpoint goes to the even code, one fp32 ulp either side goes to a / b.
TEST_P(Rounding, MidpointsTieToEvenAndNeighboursRoundToNearest) {
  const ref::Spec& s = ref::spec(GetParam());
  const std::vector<ref::Entry> vs = ref::value_set(s);
  ASSERT_GT(vs.size(), 2u);
  for (std::size_t i = 0; i + 1 < vs.size(); ++i) {
    const ref::Entry a = vs[i];
    const ref::Entry b = vs[i + 1];
    const double mid_d = (a.v + b.v) / 2;
    const float mid = static_cast<float>(mid_d);
    ASSERT_EQ(static_cast<double>(mid), mid_d) << "midpoint not an fp32";
    const bool neg = mid < 0;
    const auto code_of = [&](const ref::Entry& e) { return e.v == 0.0 ? zero_code_for(s, neg) : e.code; };
    const ref::Entry even = (a.code & 1u) == 0u ? a : b;
    ASSERT_NE(a.code & 1u, b.code & 1u) << s.name << ": adjacent codes of equal parity";
    ASSERT_EQ(num::encode(s.fmt, mid), code_of(even)) << s.name << " midpoint " << mid_d << " of " << a.v << ", " << b.v;
    ASSERT_EQ(num::encode(s.fmt, std::nextafter(mid, -kInf)), code_of(a)) << s.name << " just below " << mid_d;
    ASSERT_EQ(num::encode(s.fmt, std::nextafter(mid, kInf)), code_of(b)) << s.name << " just above " << mid_d;
    // The values themselves, and one fp32 ulp inside the interval, stay put.
    ASSERT_EQ(num::encode(s.fmt, static_cast<float>(a.v)), a.code);
    ASSERT_EQ(num::encode(s.fmt, std::nextafter(static_cast<float>(a.v), kInf)), code_of(a));
    ASSERT_EQ(num::encode(s.fmt, std::nextafter(static_cast<float>(b.v), -kInf)), code_of(b));
  }
}

// Beyond the largest finite value: IEEE-like formats go to Inf from max + half ulp on (exactly IEEE 754);
// saturating formats (e4m3fn, e2m1, int4) stay at the largest finite value, also for +-Inf.
TEST_P(Rounding, OverflowFollowsTheFormatRule) {
  const ref::Spec& s = ref::spec(GetParam());
  const std::vector<ref::Entry> vs = ref::value_set(s);
  const ref::Entry max = vs.back();
  const ref::Entry min = vs.front();
  ASSERT_EQ(max.v, s.max);
  const float maxf = static_cast<float>(max.v);
  if (s.kind == Kind::Ieee) {
    const double half_ulp = (max.v - vs[vs.size() - 2].v) / 2;  // the top binade has uniform spacing
    const float t = static_cast<float>(max.v + half_ulp);
    ASSERT_EQ(static_cast<double>(t), max.v + half_ulp);
    const std::uint32_t inf = ((1u << s.e) - 1u) << s.m;
    const std::uint32_t sign = ref::sign_bit(s);
    for (const float x : {t, std::nextafter(t, kInf), 2 * t, FLT_MAX, kInf}) {
      EXPECT_EQ(num::encode(s.fmt, x), inf) << s.name << " x=" << x;
      EXPECT_EQ(num::encode(s.fmt, -x), sign | inf) << s.name << " x=" << -x;
      EXPECT_TRUE(std::isinf(num::quantize(s.fmt, x)));
    }
    for (const float x : {maxf, std::nextafter(maxf, kInf), std::nextafter(t, 0.0f)}) {
      EXPECT_EQ(num::encode(s.fmt, x), max.code) << s.name << " x=" << x;
      EXPECT_EQ(num::encode(s.fmt, -x), sign | max.code) << s.name << " x=" << -x;
    }
  } else {
    for (const float x : {maxf, std::nextafter(maxf, kInf), maxf + 0.5f * maxf, 2 * maxf, FLT_MAX, kInf}) {
      EXPECT_EQ(num::encode(s.fmt, x), max.code) << s.name << " x=" << x;
      EXPECT_EQ(num::quantize(s.fmt, x), maxf);
    }
    const float minf = static_cast<float>(min.v);
    for (const float x : {minf, std::nextafter(minf, -kInf), 2 * minf, -FLT_MAX, -kInf}) {
      EXPECT_EQ(num::encode(s.fmt, x), min.code) << s.name << " x=" << x;
    }
  }
}

TEST_P(Rounding, NanInfAndZero) {
  const ref::Spec& s = ref::spec(GetParam());
  for (const std::uint32_t nan : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0x7FA5A5A5u}) {
    EXPECT_EQ(num::encode(s.fmt, ref::float_of(nan)), s.canonical_nan) << s.name << std::hex << " nan 0x" << nan;
  }
  EXPECT_EQ(num::encode(s.fmt, 0.0f), 0u);
  EXPECT_EQ(num::encode(s.fmt, -0.0f), zero_code_for(s, true));
  if (ref::has_signed_zero(s)) {
    EXPECT_TRUE(std::signbit(num::quantize(s.fmt, -0.0f)));
  }
  EXPECT_FALSE(std::signbit(num::quantize(s.fmt, 0.0f)));
  // Tiny values round to a zero of their own sign.
  const float tiny = static_cast<float>(s.min_sub / 4);
  EXPECT_EQ(num::encode(s.fmt, tiny), 0u);
  EXPECT_EQ(num::encode(s.fmt, -tiny), zero_code_for(s, true));
  EXPECT_EQ(num::encode(s.fmt, ref::float_of(1u)), 0u) << "smallest fp32 subnormal";
  EXPECT_EQ(num::encode(s.fmt, -ref::float_of(1u)), zero_code_for(s, true));
  // +-Inf against the reference rule (Inf where the format has it, else the saturated extreme).
  const std::vector<ref::Entry> vs = ref::value_set(s);
  EXPECT_EQ(num::encode(s.fmt, kInf), ref::encode(s, vs, kInf));
  EXPECT_EQ(num::encode(s.fmt, -kInf), ref::encode(s, vs, -kInf));
}

// Every fp32 subnormal (and the smallest normals), both signs.
TEST_P(Rounding, Fp32SubnormalInputs) {
  const ref::Spec& s = ref::spec(GetParam());
  const std::vector<ref::Entry> vs = ref::value_set(s);
  const auto check = [&](std::uint32_t u) {
    for (const std::uint32_t sign : {0u, 0x80000000u}) {
      const float x = ref::float_of(sign | u);
      ASSERT_EQ(num::encode(s.fmt, x), ref::encode(s, vs, x)) << s.name << std::hex << " x=0x" << (sign | u);
    }
  };
  for (std::uint32_t u = 0; u < 0x800000u; ++u) check(u);
  for (std::uint32_t u = 0x7FFF00u; u <= 0x800100u; ++u) check(u);
}

// A strided sample of all 2^32 fp32 patterns (NaNs and Infs included).
TEST_P(Rounding, SampledFp32AgreesWithReference) {
  const ref::Spec& s = ref::spec(GetParam());
  const std::vector<ref::Entry> vs = ref::value_set(s);
  constexpr std::uint64_t kStride = 1021;  // prime, so every low-bit residue is visited
  for (std::uint64_t u = 0; u < (1ull << 32); u += kStride) {
    const float x = ref::float_of(static_cast<std::uint32_t>(u));
    ASSERT_EQ(num::encode(s.fmt, x), ref::encode(s, vs, x)) << s.name << std::hex << " x=0x" << u;
  }
}

// Dense sampling inside the format's own range: 64 evenly spaced fp32 points in every gap between neighbours.
TEST_P(Rounding, DenseInRangeAgreesWithReference) {
  const ref::Spec& s = ref::spec(GetParam());
  const std::vector<ref::Entry> vs = ref::value_set(s);
  const std::size_t step = vs.size() > 4096 ? 61 : 1;  // 16-bit and tf32 formats: every 61st gap
  for (std::size_t i = 0; i + 1 < vs.size(); i += step) {
    for (int k = 1; k < 64; ++k) {
      const float x = static_cast<float>(vs[i].v + (vs[i + 1].v - vs[i].v) * k / 64);
      ASSERT_EQ(num::encode(s.fmt, x), ref::encode(s, vs, x)) << s.name << " x=" << x;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(numerics, Rounding, ::testing::ValuesIn(rne_formats()), format_name);

}  // namespace
