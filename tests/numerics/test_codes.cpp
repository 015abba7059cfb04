// Every code of every format: decode against the textbook formula, then encode back (round trip).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "pevp/numerics/formats.h"
#include "reference.h"

namespace {

namespace num = pevp::num;
using ref::Kind;

class EveryCode : public ::testing::TestWithParam<num::Format> {};

std::string format_name(const ::testing::TestParamInfo<num::Format>& p) { return ref::spec(p.param).name; }

TEST_P(EveryCode, DecodesToTheFormulaValue) {
  const ref::Spec& s = ref::spec(GetParam());
  for (std::uint32_t c = 0; c < (1u << s.bits); ++c) {
    const double want = ref::decode(s, c);
    const float got = num::decode(s.fmt, c);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << s.name << " code 0x" << std::hex << c;
      // NaN codes keep their sign (E8M0 has none: its NaN decodes positive).
      const bool code_neg = s.kind != Kind::Scale && ((c >> (s.bits - 1)) & 1u) != 0u;
      ASSERT_EQ(std::signbit(got), code_neg) << s.name << " code 0x" << std::hex << c;
      continue;
    }
    ASSERT_EQ(static_cast<double>(static_cast<float>(want)), want) << "reference value not an fp32";
    ASSERT_EQ(ref::bits_of(got), ref::bits_of(static_cast<float>(want)))
        << s.name << " code 0x" << std::hex << c << ": got " << got << " want " << want;
  }
}

TEST_P(EveryCode, RoundTripsThroughEncode) {
  const ref::Spec& s = ref::spec(GetParam());
  for (std::uint32_t c = 0; c < (1u << s.bits); ++c) {
    const float v = num::decode(s.fmt, c);
    const std::uint32_t back = num::encode(s.fmt, v);
    if (ref::is_nan_code(s, c)) {
      ASSERT_EQ(back, s.canonical_nan) << s.name << " NaN code 0x" << std::hex << c;
    } else {
      // Includes -0 (sign kept) and +-Inf; int4 has a single zero.
      ASSERT_EQ(back, c) << s.name << " code 0x" << std::hex << c;
    }
  }
}

TEST_P(EveryCode, QuantizeIsIdempotentOnEveryValue) {
  const ref::Spec& s = ref::spec(GetParam());
  for (std::uint32_t c = 0; c < (1u << s.bits); ++c) {
    const float v = num::decode(s.fmt, c);
    if (std::isnan(v)) {
      ASSERT_TRUE(std::isnan(num::quantize(s.fmt, v)));
      continue;
    }
    ASSERT_EQ(ref::bits_of(num::quantize(s.fmt, v)), ref::bits_of(v)) << s.name << " code 0x" << std::hex << c;
  }
}

TEST_P(EveryCode, CodesWiderThanTheFormatAreMasked) {
  const ref::Spec& s = ref::spec(GetParam());
  const std::uint32_t step = s.bits > 12 ? 97u : 1u;
  for (std::uint32_t c = 0; c < (1u << s.bits); c += step) {
    for (std::uint32_t high : {1u << s.bits, 0xFFFFFFFFu << s.bits, 0x80000000u}) {
      const float a = num::decode(s.fmt, c);
      const float b = num::decode(s.fmt, c | high);
      ASSERT_EQ(ref::bits_of(a), ref::bits_of(b)) << s.name << " code 0x" << std::hex << c << " | 0x" << high;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(numerics, EveryCode, ::testing::ValuesIn(num::kAllFormats), format_name);

// The NaN decode rule: sign and payload are kept, payload left-aligned in the fp32 mantissa.
TEST(numerics_NanDecode, KeepsSignAndLeftAlignedPayload) {
  for (const ref::Spec& s : ref::specs()) {
    if (!ref::is_float_kind(s)) continue;
    for (std::uint32_t c = 0; c < (1u << s.bits); ++c) {
      if (!ref::is_nan_code(s, c)) continue;
      const std::uint32_t payload = c & ((1u << s.m) - 1u);
      const std::uint32_t want = (((c >> (s.bits - 1)) & 1u) << 31) | 0x7F800000u | (payload << (23 - s.m));
      ASSERT_EQ(ref::bits_of(num::decode(s.fmt, c)), want) << s.name << " code 0x" << std::hex << c;
    }
  }
  EXPECT_EQ(ref::bits_of(num::decode(num::Format::E8M0, 0xFF)), 0x7FC00000u);
}

// The inline per-format entry points agree with the generic API on every code.
TEST(numerics_FastPaths, AgreeWithGenericDecode) {
  for (std::uint32_t c = 0; c < 65536u; ++c) {
    const auto h = static_cast<std::uint16_t>(c);
    ASSERT_EQ(ref::bits_of(num::from_bf16(h)), ref::bits_of(num::decode(num::Format::BF16, c)));
    ASSERT_EQ(ref::bits_of(num::from_fp16(h)), ref::bits_of(num::decode(num::Format::FP16, c)));
  }
  for (std::uint32_t c = 0; c < 256u; ++c) {
    const auto b = static_cast<std::uint8_t>(c);
    ASSERT_EQ(ref::bits_of(num::from_fp8_e4m3(b)), num::kFp8E4M3Table[c]);
    ASSERT_EQ(ref::bits_of(num::from_fp8_e4m3fn(b)), num::kFp8E4M3fnTable[c]);
    ASSERT_EQ(ref::bits_of(num::from_fp8_e5m2(b)), num::kFp8E5M2Table[c]);
    ASSERT_EQ(ref::bits_of(num::from_fp8_e3m4(b)), num::kFp8E3M4Table[c]);
    ASSERT_EQ(ref::bits_of(num::from_fp8_e2m5(b)), num::kFp8E2M5Table[c]);
    ASSERT_EQ(ref::bits_of(num::from_e8m0(b)), ref::bits_of(num::decode(num::Format::E8M0, c)));
  }
}

}  // namespace
