// Hand-derived values and codes for each format (worked out on paper from the bit layouts in docs/numerics.md, not
// computed from the library), plus the FormatInfo descriptors and names.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "pevp/numerics/formats.h"
#include "reference.h"

namespace {

namespace num = pevp::num;
using num::Format;

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();

struct Case {
  float x;
  std::uint32_t code;
};

void expect_cases(Format f, std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(num::encode(f, c.x), c.code) << num::format_info(f).name << " x=" << c.x << std::hex << " (0x"
                                           << ref::bits_of(c.x) << ")";
  }
}

void expect_decodes(Format f, std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(ref::bits_of(num::decode(f, c.code)), ref::bits_of(c.x))
        << num::format_info(f).name << std::hex << " code 0x" << c.code;
  }
}

TEST(numerics_Boundaries, Bf16) {
  expect_decodes(Format::BF16, {{1.0f, 0x3F80}, {-2.0f, 0xC000}, {0x1.fep127f, 0x7F7F}, {kInf, 0x7F80},
                                {0x1p-126f, 0x0080}, {0x1p-133f, 0x0001}, {-0.0f, 0x8000}});
  expect_cases(Format::BF16, {
                                 {ref::float_of(0x3F808000u), 0x3F80},  // 1 + 2^-8: tie, 0x3F80 even
                                 {ref::float_of(0x3F818000u), 0x3F82},  // tie, 0x3F81 odd -> up
                                 {ref::float_of(0x3F808001u), 0x3F81},
                                 {ref::float_of(0x3F807FFFu), 0x3F80},
                                 {0x1.fep127f, 0x7F7F},                 // max finite (0x7F7F0000)
                                 {ref::float_of(0x7F7F7FFFu), 0x7F7F},  // just below max + half ulp
                                 {0x1.ffp127f, 0x7F80},                 // max + half ulp (0x7F7F8000) -> Inf
                                 {FLT_MAX, 0x7F80},
                                 {-FLT_MAX, 0xFF80},
                                 {ref::float_of(0x00008000u), 0x0000},  // fp32 subnormal tie at half the min subnormal
                                 {ref::float_of(0x00008001u), 0x0001},
                                 {ref::float_of(0x00018000u), 0x0002},  // tie between 0x0001 and 0x0002
                                 {ref::float_of(0x007FFFFFu), 0x0080},  // largest fp32 subnormal -> min normal
                                 {ref::float_of(0x807F8000u), 0x8080},
                                 {kNan, 0x7FC0},
                             });
}

TEST(numerics_Boundaries, Fp16) {
  expect_decodes(Format::FP16, {{65504.0f, 0x7BFF}, {0x1p-24f, 0x0001}, {0x1p-14f, 0x0400}, {kInf, 0x7C00},
                                {-1.5f, 0xBE00}, {0x1.ff8p-15f, 0x03FF}});
  expect_cases(Format::FP16, {
                                 {65504.0f, 0x7BFF},
                                 {65519.996f, 0x7BFF},
                                 {65520.0f, 0x7C00},  // max + half ulp -> Inf
                                 {-65520.0f, 0xFC00},
                                 {0x1p-24f, 0x0001},
                                 {0x1p-25f, 0x0000},  // tie between 0 and the min subnormal
                                 {0x1.000002p-25f, 0x0001},
                                 {0x1.8p-24f, 0x0002},  // tie between 1 and 2 subnormal quanta
                                 {-0x1p-25f, 0x8000},
                                 {1.0f + 0x1p-11f, 0x3C00},
                                 {1.0f + 0x3p-11f, 0x3C02},
                                 {kNan, 0x7E00},
                             });
}

TEST(numerics_Boundaries, Fp8E4M3) {
  expect_decodes(Format::FP8_E4M3, {{240.0f, 0x77}, {kInf, 0x78}, {-kInf, 0xF8}, {0x1p-9f, 0x01}, {0x1p-6f, 0x08},
                                    {0x1.cp-7f, 0x07}, {1.0f, 0x38}, {-0.0f, 0x80}});
  expect_cases(Format::FP8_E4M3, {{240.0f, 0x77}, {247.99998f, 0x77}, {248.0f, 0x78}, {-248.0f, 0xF8},
                                  {232.0f, 0x76},  // tie between 224 (0x76) and 240 (0x77)
                                  {0x1p-10f, 0x00}, {0x1.000002p-10f, 0x01}, {0x1.8p-9f, 0x02},
                                  {kNan, 0x7C}, {kInf, 0x78}});
}

TEST(numerics_Boundaries, Fp8E4M3fn) {
  expect_decodes(Format::FP8_E4M3FN, {{448.0f, 0x7E}, {-448.0f, 0xFE}, {256.0f, 0x78},
                                      {0x1p-9f, 0x01}, {1.0f, 0x38}});
  EXPECT_TRUE(std::isnan(num::decode(Format::FP8_E4M3FN, 0x7F)));
  EXPECT_TRUE(std::isnan(num::decode(Format::FP8_E4M3FN, 0xFF)));
  EXPECT_EQ(num::decode(Format::FP8_E4M3FN, 0x7D), 416.0f);
  expect_cases(Format::FP8_E4M3FN, {{448.0f, 0x7E}, {464.0f, 0x7E}, {480.0f, 0x7E}, {1e6f, 0x7E}, {kInf, 0x7E},
                                    {-kInf, 0xFE}, {-1e6f, 0xFE}, {432.0f, 0x7E},  // tie 416 (0x7D) / 448 (0x7E)
                                    {kNan, 0x7F}, {0x1p-10f, 0x00}});
}

TEST(numerics_Boundaries, Fp8E5M2) {
  expect_decodes(Format::FP8_E5M2, {{57344.0f, 0x7B}, {kInf, 0x7C}, {0x1p-16f, 0x01}, {0x1p-14f, 0x04},
                                    {1.0f, 0x3C}, {-0.0f, 0x80}});
  expect_cases(Format::FP8_E5M2, {{57344.0f, 0x7B}, {61439.996f, 0x7B}, {61440.0f, 0x7C}, {-61440.0f, 0xFC},
                                  {0x1p-17f, 0x00}, {0x1.8p-16f, 0x02}, {kNan, 0x7E}, {1.125f, 0x3C},
                                  {1.375f, 0x3E}});
}

TEST(numerics_Boundaries, Fp8E3M4) {
  expect_decodes(Format::FP8_E3M4, {{15.5f, 0x6F}, {kInf, 0x70}, {0x1p-6f, 0x01}, {0.25f, 0x10}, {1.0f, 0x30}});
  expect_cases(Format::FP8_E3M4, {{15.5f, 0x6F}, {15.75f, 0x70}, {15.749999f, 0x6F}, {0x1p-7f, 0x00},
                                  {kNan, 0x78}});
}

TEST(numerics_Boundaries, Fp8E2M5) {
  expect_decodes(Format::FP8_E2M5, {{3.9375f, 0x5F}, {kInf, 0x60}, {0x1p-5f, 0x01}, {1.0f, 0x20}, {2.0f, 0x40},
                                    {0x1.fp-1f, 0x1F}});
  expect_cases(Format::FP8_E2M5, {{3.9375f, 0x5F}, {3.96875f, 0x60}, {3.9687498f, 0x5F}, {0x1p-6f, 0x00},
                                  {kNan, 0x70}});
}

TEST(numerics_Boundaries, Fp4E2M1) {
  const float values[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (std::uint32_t c = 0; c < 8; ++c) {
    EXPECT_EQ(ref::bits_of(num::decode(Format::FP4_E2M1, c)), ref::bits_of(values[c]));
    EXPECT_EQ(ref::bits_of(num::decode(Format::FP4_E2M1, c | 8u)), ref::bits_of(-values[c]));
  }
  expect_cases(Format::FP4_E2M1, {{0.25f, 0x0}, {0.75f, 0x2}, {1.25f, 0x2}, {1.75f, 0x4}, {2.5f, 0x4},
                                  {3.5f, 0x6}, {5.0f, 0x6}, {5.0001f, 0x7}, {7.0f, 0x7}, {1e30f, 0x7},
                                  {kInf, 0x7}, {-kInf, 0xF}, {-5.0f, 0xE}, {kNan, 0x0}, {-0.0f, 0x8},
                                  {-0.25f, 0x8}});
}

TEST(numerics_Boundaries, Int4) {
  for (int v = -8; v <= 7; ++v) {
    EXPECT_EQ(num::decode(Format::INT4, static_cast<std::uint32_t>(v) & 0xFu), static_cast<float>(v));
  }
  expect_cases(Format::INT4, {{0.5f, 0x0}, {1.5f, 0x2}, {2.5f, 0x2}, {-0.5f, 0x0}, {-1.5f, 0xE}, {-2.5f, 0xE},
                              {6.5f, 0x6}, {7.4999995f, 0x7}, {7.5f, 0x7}, {100.0f, 0x7}, {-7.5f, 0x8},
                              {-8.5f, 0x8}, {-100.0f, 0x8}, {kInf, 0x7}, {-kInf, 0x8}, {kNan, 0x0},
                              {-0.0f, 0x0}, {0.49999997f, 0x0}, {0.50000006f, 0x1}, {ref::float_of(1u), 0x0}});
}

TEST(numerics_FormatInfo, MatchesHandDerivedValues) {
  for (const ref::Spec& s : ref::specs()) {
    const num::FormatInfo& i = num::format_info(s.fmt);
    SCOPED_TRACE(s.name);
    EXPECT_EQ(i.name, s.name);
    EXPECT_EQ(i.code_bits, s.bits);
    EXPECT_EQ(i.exponent_bits, s.e);
    EXPECT_EQ(i.mantissa_bits, s.m);
    EXPECT_EQ(i.bias, s.bias);
    EXPECT_EQ(static_cast<double>(i.max_finite), s.max);
    EXPECT_EQ(static_cast<double>(i.min_subnormal), s.min_sub);
    EXPECT_EQ(i.canonical_nan, s.canonical_nan);
    EXPECT_EQ(i.has_inf, s.kind == ref::Kind::Ieee);
    EXPECT_EQ(i.has_nan, s.kind == ref::Kind::Ieee || s.kind == ref::Kind::FiniteNan || s.kind == ref::Kind::Scale);
    EXPECT_EQ(num::code_mask(s.fmt), (1u << s.bits) - 1u);
    EXPECT_EQ(num::format_from_name(s.name), s.fmt);
  }
  EXPECT_EQ(num::format_info(Format::TF32).storage_bits, 32);
  EXPECT_EQ(num::format_info(Format::FP4_E2M1).storage_bits, 4);
  EXPECT_EQ(num::format_info(Format::FP16).min_normal, 0x1p-14f);
  EXPECT_EQ(num::format_info(Format::FP8_E4M3FN).min_normal, 0x1p-6f);
  EXPECT_FALSE(num::format_info(Format::E8M0).is_signed);
  EXPECT_FALSE(num::format_from_name("fp8").has_value());
}

TEST(numerics_FormatInfo, InvalidFormatValueThrows) {
  const auto bad = static_cast<Format>(200);
  EXPECT_THROW(num::format_info(bad), std::invalid_argument);
  EXPECT_THROW(num::encode(bad, 1.0f), std::invalid_argument);
  EXPECT_THROW(num::decode(bad, 0u), std::invalid_argument);
}

}  // namespace
