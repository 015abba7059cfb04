// Operand decode: dtype/fp32_mode validation, every code of every narrow format, the fp32 modes, the Low_High split,
// and the claim that products of decoded narrow operands are exact in fp32.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "force_target.h"
#include "test_util.h"

namespace {

using namespace pe_test;
using isa::Dtype;
using isa::Fp32Mode;
using isa::Generation;

TEST(pe_array_Decode, OperandErrorAcceptsOnlyMatmulInputsWithMatchingFp32Mode) {
  for (Dtype d : {Dtype::BFLOAT16, Dtype::FP16, Dtype::FP8_EXP2, Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5}) {
    EXPECT_EQ(pe::operand_error({Generation::MARIANA, d, Fp32Mode::None}), "") << isa::name(d);
    EXPECT_NE(pe::operand_error({Generation::MARIANA, d, Fp32Mode::Low}), "") << isa::name(d);
  }
  for (Fp32Mode m : {Fp32Mode::Low, Fp32Mode::High, Fp32Mode::Low_High})
    EXPECT_EQ(pe::operand_error({Generation::CAYMAN, Dtype::FP32, m}), "");
  EXPECT_NE(pe::operand_error({Generation::CAYMAN, Dtype::FP32, Fp32Mode::None}), "");
  EXPECT_NE(pe::operand_error({Generation::CAYMAN, Dtype::FP32, static_cast<Fp32Mode>(4)}), "");
  for (Dtype d : {Dtype::FP32R, Dtype::FP4_EXP2, Dtype::INT4, Dtype::SFP8_E8, Dtype::INT8, Dtype::INVALID,
                  static_cast<Dtype>(0x7F)}) {
    EXPECT_NE(pe::operand_error({Generation::MAVERICK, d, Fp32Mode::None}), "") << static_cast<int>(d);
    EXPECT_EQ(pe::operand_bytes(d), 0u);
  }
  EXPECT_EQ(pe::operand_bytes(Dtype::FP32), 4u);
  EXPECT_EQ(pe::operand_bytes(Dtype::BFLOAT16), 2u);
  EXPECT_EQ(pe::operand_bytes(Dtype::FP16), 2u);
  EXPECT_EQ(pe::operand_bytes(Dtype::FP8_EXP4), 1u);
}

TEST(pe_array_Decode, RejectedTypeWritesNothing) {
  const std::uint8_t src[4] = {1, 2, 3, 4};
  float dst[2] = {7.0f, 7.0f};
  EXPECT_FALSE(pe::decode_operands({Generation::MARIANA, Dtype::FP32, Fp32Mode::None}, src, 1, dst));
  EXPECT_FALSE(pe::decode_operands({Generation::MARIANA, Dtype::FP4_EXP2, Fp32Mode::None}, src, 2, dst));
  EXPECT_EQ(dst[0], 7.0f);
  EXPECT_EQ(dst[1], 7.0f);
}

TEST(pe_array_Decode, LittleEndianElements) {
  const std::uint8_t bf16[4] = {0x80, 0x3F, 0x00, 0xC0};  // 1.0, -2.0
  float out[2];
  ASSERT_TRUE(pe::decode_operands({Generation::MARIANA, Dtype::BFLOAT16, Fp32Mode::None}, bf16, 2, out));
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  const std::uint8_t fp32[4] = {0x00, 0x00, 0x40, 0x40};  // 3.0
  ASSERT_TRUE(pe::decode_operands({Generation::MARIANA, Dtype::FP32, Fp32Mode::High}, fp32, 1, out));
  EXPECT_EQ(out[0], 3.0f);
}

struct NarrowCase {
  Generation gen;
  Dtype dtype;
  num::Format format;
};

TEST(pe_array_Decode, EveryCodeMatchesNumerics) {
  const NarrowCase cases[] = {
      {Generation::MARIANA, Dtype::BFLOAT16, num::Format::BF16},
      {Generation::MARIANA, Dtype::FP16, num::Format::FP16},
      {Generation::CAYMAN, Dtype::FP8_EXP4, num::Format::FP8_E4M3},  // legacy e4m3 on v3
      {Generation::MARIANA, Dtype::FP8_EXP4, num::Format::FP8_E4M3FN},
      {Generation::MAVERICK, Dtype::FP8_EXP4, num::Format::FP8_E4M3FN},
      {Generation::MARIANA, Dtype::FP8_EXP5, num::Format::FP8_E5M2},
      {Generation::MARIANA, Dtype::FP8_EXP3, num::Format::FP8_E3M4},
      {Generation::MARIANA, Dtype::FP8_EXP2, num::Format::FP8_E2M5},
  };
  for (const NarrowCase& c : cases) {
    const pe::OperandType t{c.gen, c.dtype, Fp32Mode::None};
    const std::size_t eb = pe::operand_bytes(c.dtype);
    const std::size_t codes = std::size_t{1} << (8 * eb);
    std::vector<std::uint8_t> bytes(codes * eb);
    for (std::size_t code = 0; code < codes; ++code)
      for (std::size_t b = 0; b < eb; ++b) bytes[code * eb + b] = static_cast<std::uint8_t>(code >> (8 * b));
    const std::vector<float> out = decode(t, bytes);
    ASSERT_EQ(out.size(), codes);
    for (std::size_t code = 0; code < codes; ++code)
      ASSERT_EQ(bits(out[code]), bits(num::decode(c.format, static_cast<std::uint32_t>(code))))
          << num::format_info(c.format).name << " code " << code;
  }
}

// bf16 decodes a vector at a time where the address allows (widen_bf16) and element by element at an odd one: every
// code at even and odd addresses (offsets 0, 1, 2, 6), on every SIMD target, against the numerics library, NaN
// payloads and -0 included; then every count from 0 to 70 (no whole vector, whole vectors, and every tail length of
// the widest target), each writing exactly `count` floats.
TEST(pe_array_Decode, Bf16EveryCodeOnEveryTargetAtAnyAddress) {
  const pe::OperandType bf16{Generation::MARIANA, Dtype::BFLOAT16, Fp32Mode::None};
  const float kSentinel = from_bits(0x7F800001u);
  const std::size_t codes = 65536;
  std::vector<std::uint8_t> buffer(2 * codes + 8);
  for (const std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{6}}) {
    for (std::size_t code = 0; code < codes; ++code) {
      buffer[offset + 2 * code] = static_cast<std::uint8_t>(code);
      buffer[offset + 2 * code + 1] = static_cast<std::uint8_t>(code >> 8);
    }
    for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
      ForceTarget force(target);
      std::vector<float> out(codes + 1, kSentinel);
      ASSERT_TRUE(pe::decode_operands(bf16, buffer.data() + offset, codes, out.data()));
      for (std::size_t code = 0; code < codes; ++code)
        ASSERT_EQ(bits(out[code]), bits(num::decode(num::Format::BF16, static_cast<std::uint32_t>(code))))
            << hwy::TargetName(target) << ", offset " << offset << ", code " << code;
      ASSERT_EQ(bits(out[codes]), bits(kSentinel)) << hwy::TargetName(target) << ": wrote past the end";
      for (std::size_t count = 0; count <= 70; ++count) {
        const std::size_t first = 0xFF80 - count;  // codes around -Inf and the negative NaNs
        std::vector<float> some(count + 1, kSentinel);
        ASSERT_TRUE(pe::decode_operands(bf16, buffer.data() + offset + 2 * first, count, some.data()));
        for (std::size_t i = 0; i < count; ++i)
          ASSERT_EQ(bits(some[i]), bits(num::decode(num::Format::BF16, static_cast<std::uint32_t>(first + i))))
              << hwy::TargetName(target) << ", offset " << offset << ", " << count << " values, value " << i;
        ASSERT_EQ(bits(some[count]), bits(kSentinel))
            << hwy::TargetName(target) << ", offset " << offset << ": " << count << " values wrote past the end";
      }
    }
  }
}

TEST(pe_array_Decode, Fp32ModesHighKeepsBitsLowRoundsToTf32) {
  std::mt19937 rng(11);
  std::vector<std::uint8_t> bytes(4 * 4096);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
  const std::vector<float> high = decode({Generation::MARIANA, Dtype::FP32, Fp32Mode::High}, bytes);
  const std::vector<float> low_high = decode({Generation::MARIANA, Dtype::FP32, Fp32Mode::Low_High}, bytes);
  const std::vector<float> low = decode({Generation::MARIANA, Dtype::FP32, Fp32Mode::Low}, bytes);
  for (std::size_t i = 0; i < 4096; ++i) {
    const std::uint32_t raw = static_cast<std::uint32_t>(bytes[4 * i]) | bytes[4 * i + 1] << 8 |
                              bytes[4 * i + 2] << 16 | static_cast<std::uint32_t>(bytes[4 * i + 3]) << 24;
    ASSERT_EQ(bits(high[i]), raw);
    ASSERT_EQ(bits(low_high[i]), raw);
    ASSERT_EQ(bits(low[i]), bits(num::to_tf32(from_bits(raw))));
  }
}

TEST(pe_array_Decode, SplitTf32IsTwoTf32PartsWithinTwoToMinus22) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::uint32_t> any;
  auto is_tf32 = [](float f) { return (bits(f) & 0x1FFFu) == 0u; };
  for (int i = 0; i < 200000; ++i) {
    const float x = from_bits(any(rng));
    if (!std::isfinite(x)) continue;
    const auto [hi, lo] = pe::split_tf32(x);
    ASSERT_TRUE(is_tf32(hi) && is_tf32(lo)) << x;
    ASSERT_TRUE(std::isfinite(hi) && std::isfinite(lo)) << x;
    const double err = std::fabs(static_cast<double>(x) - hi - lo);
    // Absolute term: below 2^-114 lo lands on tf32's subnormal grid (quantum 2^-136).
    ASSERT_LE(err, std::ldexp(std::fabs(static_cast<double>(x)), -22) + 0x1p-137) << x;
  }
  // Near fp32 max RNE to tf32 overflows; the split truncates instead and stays finite.
  const float big = from_bits(0x7F7FFFFFu);
  const auto [hi, lo] = pe::split_tf32(big);
  EXPECT_EQ(bits(hi), 0x7F7FE000u);
  EXPECT_LE(std::fabs(static_cast<double>(big) - hi - lo), std::ldexp(static_cast<double>(big), -22));
  EXPECT_TRUE(std::isfinite(lo));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(pe::split_tf32(-inf).first, -inf);
  EXPECT_EQ(pe::split_tf32(-inf).second, 0.0f);
  EXPECT_TRUE(std::isnan(pe::split_tf32(std::nanf("")).first));
  EXPECT_EQ(pe::split_tf32(std::nanf("")).second, 0.0f);
  EXPECT_EQ(pe::split_tf32(1.0f + 0x1p-20f), std::make_pair(1.0f, 0x1p-20f));
}

// DESIGN.md: "products of bf16/fp16/fp8/tf32 inputs are exact in fp32" -- every fp8 pair exhaustively, fp16 and the
// 8-bit-exponent formats (away from fp32's under/overflow, where no format with fp32's exponent range can be exact)
// by sampling.
TEST(pe_array_Decode, NarrowProductsAreExactInFp32) {
  for (num::Format f : {num::Format::FP8_E4M3, num::Format::FP8_E4M3FN, num::Format::FP8_E5M2,
                        num::Format::FP8_E3M4, num::Format::FP8_E2M5}) {
    for (std::uint32_t a = 0; a < 256; ++a) {
      for (std::uint32_t b = 0; b < 256; ++b) {
        const float x = num::decode(f, a), y = num::decode(f, b);
        const double exact = static_cast<double>(x) * y;
        if (!std::isfinite(exact)) continue;
        ASSERT_EQ(static_cast<double>(x * y), exact) << num::format_info(f).name << " " << a << " " << b;
      }
    }
  }
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::uint32_t> code16(0, 0xFFFF);
  for (int i = 0; i < 1000000; ++i) {
    const float x = num::from_fp16(static_cast<std::uint16_t>(code16(rng)));
    const float y = num::from_fp16(static_cast<std::uint16_t>(code16(rng)));
    const double exact = static_cast<double>(x) * y;
    if (!std::isfinite(exact)) continue;
    ASSERT_EQ(static_cast<double>(x * y), exact) << x << " * " << y;
  }
  std::uniform_int_distribution<std::uint32_t> any;
  for (int i = 0; i < 1000000; ++i) {
    const float bx = num::from_bf16(static_cast<std::uint16_t>(code16(rng)));
    const float by = num::from_bf16(static_cast<std::uint16_t>(code16(rng)));
    const float tx = num::to_tf32(from_bits(any(rng))), ty = num::to_tf32(from_bits(any(rng)));
    for (auto [x, y] : {std::make_pair(bx, by), std::make_pair(tx, ty)}) {
      const double exact = static_cast<double>(x) * y;
      if (!std::isfinite(exact) || exact == 0.0) continue;
      const double mag = std::fabs(exact);
      if (mag < 0x1p-126 || mag > 0x1p127) continue;  // fp32 subnormal or overflow range
      ASSERT_EQ(static_cast<double>(x * y), exact) << x << " * " << y;
    }
  }
}

}  // namespace
