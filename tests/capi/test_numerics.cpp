// pevp/pevp_numerics.h, the C driver's number conversions, against an independent reference: every code of each
// format decodes to the value its fields spell (sign, exponent, mantissa, bias, from pevp::num::format_info), and
// fp32 values -- a sweep over the whole fp32 range, and every tie between two neighbouring codes with the fp32
// values on either side of it -- encode to the nearest code, ties to the even one, with each format's NaN, Inf and
// saturation rules (docs/numerics.md "Special values"). The model's own generic encode()/decode() must agree too.
#include "pevp/pevp_numerics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "pevp/numerics/formats.h"

namespace {

using pevp::num::Format;

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// One format as the C API offers it, with its parameters.
struct Case {
  const char* name;
  Format format;
  std::uint32_t (*encode)(float);
  float (*decode)(std::uint32_t);
};

const Case kCases[] = {
    {"bf16", Format::BF16, [](float x) -> std::uint32_t { return pevp_f32_to_bf16(x); },
     [](std::uint32_t c) { return pevp_bf16_to_f32(static_cast<std::uint16_t>(c)); }},
    {"fp16", Format::FP16, [](float x) -> std::uint32_t { return pevp_f32_to_fp16(x); },
     [](std::uint32_t c) { return pevp_fp16_to_f32(static_cast<std::uint16_t>(c)); }},
    {"fp8_e4m3", Format::FP8_E4M3, [](float x) -> std::uint32_t { return pevp_f32_to_fp8_e4m3(x); },
     [](std::uint32_t c) { return pevp_fp8_e4m3_to_f32(static_cast<std::uint8_t>(c)); }},
    {"fp8_e4m3fn", Format::FP8_E4M3FN, [](float x) -> std::uint32_t { return pevp_f32_to_fp8_e4m3fn(x); },
     [](std::uint32_t c) { return pevp_fp8_e4m3fn_to_f32(static_cast<std::uint8_t>(c)); }},
    {"fp8_e5m2", Format::FP8_E5M2, [](float x) -> std::uint32_t { return pevp_f32_to_fp8_e5m2(x); },
     [](std::uint32_t c) { return pevp_fp8_e5m2_to_f32(static_cast<std::uint8_t>(c)); }},
    {"fp8_e3m4", Format::FP8_E3M4, [](float x) -> std::uint32_t { return pevp_f32_to_fp8_e3m4(x); },
     [](std::uint32_t c) { return pevp_fp8_e3m4_to_f32(static_cast<std::uint8_t>(c)); }},
    {"fp8_e2m5", Format::FP8_E2M5, [](float x) -> std::uint32_t { return pevp_f32_to_fp8_e2m5(x); },
     [](std::uint32_t c) { return pevp_fp8_e2m5_to_f32(static_cast<std::uint8_t>(c)); }},
};

// The reference: a code's value from its fields, in double (exact for every format here).
struct Reference {
  const pevp::num::FormatInfo& info;
  int width() const { return 1 + info.exponent_bits + info.mantissa_bits; }
  std::uint32_t sign_bit() const { return 1u << (width() - 1); }
  std::uint32_t top_exponent() const { return (1u << info.exponent_bits) - 1; }
  std::uint32_t mantissa_mask() const { return (1u << info.mantissa_bits) - 1; }

  bool is_nan(std::uint32_t c) const {
    const std::uint32_t e = (c >> info.mantissa_bits) & top_exponent(), m = c & mantissa_mask();
    if (e != top_exponent()) return false;
    return info.has_inf ? m != 0 : m == mantissa_mask();  // e4m3fn: only S.1111.111
  }
  bool is_inf(std::uint32_t c) const {
    return info.has_inf && ((c >> info.mantissa_bits) & top_exponent()) == top_exponent() &&
           (c & mantissa_mask()) == 0;
  }
  double value(std::uint32_t c) const {
    const double sign = (c & sign_bit()) ? -1.0 : 1.0;
    if (is_inf(c)) return sign * INFINITY;
    const std::uint32_t e = (c >> info.mantissa_bits) & top_exponent(), m = c & mantissa_mask();
    const double fraction = std::ldexp(static_cast<double>(m), -info.mantissa_bits);
    if (e == 0) return sign * std::ldexp(fraction, 1 - info.bias);
    return sign * std::ldexp(1.0 + fraction, static_cast<int>(e) - info.bias);
  }
  // The positive finite codes in increasing value (code order is value order for positive codes).
  std::vector<std::uint32_t> positive_finite() const {
    std::vector<std::uint32_t> out;
    for (std::uint32_t c = 0; c < sign_bit(); ++c)
      if (!is_nan(c) && !is_inf(c)) out.push_back(c);
    return out;
  }
  // x rounded to nearest, ties to the even code; overflow per the format (docs/numerics.md).
  std::uint32_t encode(float x, const std::vector<std::uint32_t>& positives) const {
    if (std::isnan(x)) return info.canonical_nan;
    const std::uint32_t sign = std::signbit(x) ? sign_bit() : 0;
    const double a = std::fabs(static_cast<double>(x));
    const std::uint32_t max_code = positives.back();
    const double max = value(max_code), ulp = max - value(positives[positives.size() - 2]);
    if (a > max) {
      if (!info.has_inf) return sign | max_code;  // saturate (e4m3fn), Inf included
      return sign | (a >= max + ulp / 2 ? top_exponent() << info.mantissa_bits : max_code);
    }
    const auto hi = std::lower_bound(positives.begin(), positives.end(), a,
                                     [&](std::uint32_t c, double v) { return value(c) < v; });
    if (value(*hi) == a) return sign | *hi;
    const std::uint32_t up = *hi, down = *(hi - 1);
    const double to_up = value(up) - a, to_down = a - value(down);
    if (to_up != to_down) return sign | (to_up < to_down ? up : down);
    return sign | ((down & 1) == 0 ? down : up);
  }
};

std::string hex(std::uint32_t v) {
  char s[16];
  std::snprintf(s, sizeof s, "0x%x", v);
  return s;
}

TEST(CapiNumerics, EveryCodeDecodesToItsFieldsValue) {
  for (const Case& k : kCases) {
    const Reference ref{pevp::num::format_info(k.format)};
    for (std::uint32_t c = 0; c < (1u << ref.width()); ++c) {
      const float got = k.decode(c);
      ASSERT_EQ(bits(got), bits(pevp::num::decode(k.format, c))) << k.name << " " << hex(c);
      if (ref.is_nan(c)) {
        ASSERT_TRUE(std::isnan(got)) << k.name << " " << hex(c);
        continue;
      }
      ASSERT_EQ(static_cast<double>(got), ref.value(c)) << k.name << " " << hex(c);
      ASSERT_EQ(std::signbit(got), (c & ref.sign_bit()) != 0) << k.name << " " << hex(c);
      // Every non-NaN code survives the round trip, -0 and Inf included.
      ASSERT_EQ(k.encode(got), c) << k.name << " round trip of " << hex(c);
    }
  }
}

TEST(CapiNumerics, Fp32SweepRoundsAsTheReference) {
  for (const Case& k : kCases) {
    const Reference ref{pevp::num::format_info(k.format)};
    const std::vector<std::uint32_t> positives = ref.positive_finite();
    std::uint64_t checked = 0;
    // The whole fp32 range, both signs, NaNs and Infs included, at a prime stride (1,048,447 patterns).
    for (std::uint64_t u = 0; u <= 0xFFFFFFFFu; u += 4099, ++checked) {
      const float x = from_bits(static_cast<std::uint32_t>(u));
      ASSERT_EQ(k.encode(x), ref.encode(x, positives)) << k.name << " of fp32 " << hex(static_cast<std::uint32_t>(u));
      ASSERT_EQ(k.encode(x), pevp::num::encode(k.format, x)) << k.name;
    }
    EXPECT_GT(checked, 1000000u);
  }
}

TEST(CapiNumerics, TiesRoundToEvenAndTheirNeighboursToTheNearer) {
  for (const Case& k : kCases) {
    const Reference ref{pevp::num::format_info(k.format)};
    const std::vector<std::uint32_t> positives = ref.positive_finite();
    std::vector<double> points;
    for (std::size_t i = 0; i + 1 < positives.size(); ++i)
      points.push_back((ref.value(positives[i]) + ref.value(positives[i + 1])) / 2);
    const double max = ref.value(positives.back());
    points.push_back(max + (max - ref.value(positives[positives.size() - 2])) / 2);  // the overflow tie
    int ties_up = 0, ties_down = 0;
    for (const double tie : points) {
      const auto t = static_cast<float>(tie);
      ASSERT_EQ(static_cast<double>(t), tie) << k.name << ": every tie is an fp32 value";
      for (const float x : {t, std::nextafter(t, 0.0f), std::nextafter(t, INFINITY), -t}) {
        ASSERT_EQ(k.encode(x), ref.encode(x, positives)) << k.name << " of " << x;
      }
      const std::uint32_t code = k.encode(t);
      if (code & 1) ADD_FAILURE() << k.name << ": the tie " << tie << " went to the odd code " << hex(code);
      (k.decode(code) > t ? ties_up : ties_down) += 1;
    }
    // Half the ties round up, half down (to even), the overflow tie up to Inf or down to a saturated max.
    EXPECT_GT(ties_up, 0) << k.name;
    EXPECT_GT(ties_down, 0) << k.name;
  }
}

// Hand-derived values (docs/numerics.md's tables).
TEST(CapiNumerics, SpecialValuesPerFormat) {
  // 1 + 2^-8 lies halfway between bf16 1.0 (0x3F80, even) and 1 + 2^-7 (0x3F81): even wins; 1 + 3 x 2^-8 lies
  // halfway between 0x3F81 and 0x3F82: 0x3F82.
  EXPECT_EQ(pevp_f32_to_bf16(1.0f + 0x1p-8f), 0x3F80);
  EXPECT_EQ(pevp_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);
  EXPECT_EQ(pevp_f32_to_bf16(NAN), 0x7FC0);
  EXPECT_EQ(pevp_f32_to_fp16(NAN), 0x7E00);
  EXPECT_EQ(pevp_f32_to_fp16(65520.0f), 0x7C00);  // max 65504 + half its ulp of 32: Inf
  EXPECT_EQ(pevp_f32_to_fp16(65519.0f), 0x7BFF);
  // e4m3: max 240 (0x77), ulp 16 there; 248 ties 240 (odd mantissa 111) with 256 (Inf, 0x78): Inf.
  EXPECT_EQ(pevp_f32_to_fp8_e4m3(247.0f), 0x77);
  EXPECT_EQ(pevp_f32_to_fp8_e4m3(248.0f), 0x78);
  EXPECT_EQ(pevp_f32_to_fp8_e4m3(-INFINITY), 0xF8);
  EXPECT_EQ(pevp_f32_to_fp8_e4m3(NAN), 0x7C);
  // e4m3fn saturates: Inf and 1e9 -> 448 (0x7E); NaN -> 0x7F; 0x7F decodes to NaN.
  EXPECT_EQ(pevp_f32_to_fp8_e4m3fn(INFINITY), 0x7E);
  EXPECT_EQ(pevp_f32_to_fp8_e4m3fn(-1e9f), 0xFE);
  EXPECT_EQ(pevp_f32_to_fp8_e4m3fn(NAN), 0x7F);
  EXPECT_TRUE(std::isnan(pevp_fp8_e4m3fn_to_f32(0x7F)));
  EXPECT_EQ(pevp_fp8_e4m3fn_to_f32(0x7E), 448.0f);
  // e5m2: max 57344 (0x7B); 61440 is the tie with Inf (0x7C) and goes to Inf (0x7B is odd).
  EXPECT_EQ(pevp_f32_to_fp8_e5m2(61439.0f), 0x7B);
  EXPECT_EQ(pevp_f32_to_fp8_e5m2(61440.0f), 0x7C);
  EXPECT_EQ(pevp_f32_to_fp8_e5m2(NAN), 0x7E);
  // Subnormals: e4m3's smallest is 2^-9 (0x01); 2^-10 ties 0 (even) with it: +0; 3 x 2^-10 ties 0x01/0x02: 0x02.
  EXPECT_EQ(pevp_f32_to_fp8_e4m3(0x1p-10f), 0x00);
  EXPECT_EQ(pevp_f32_to_fp8_e4m3(3 * 0x1p-10f), 0x02);
  EXPECT_EQ(pevp_f32_to_fp8_e4m3(-0.0f), 0x80);
  EXPECT_EQ(pevp_fp8_e3m4_to_f32(0x6F), 15.5f);
  EXPECT_EQ(pevp_fp8_e2m5_to_f32(0x5F), 3.9375f);
}

}  // namespace
