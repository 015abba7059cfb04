// Operand conversion: hand-picked values per dtype and generation against literal codes (worked out from the
// formats' definitions) and against pevp::num's inline conversions; the byte layout; the quantized operand; the
// dtype errors and the command-line type names.
#include <gtest/gtest.h>

#include <string>

#include "host_test_util.h"
#include "pevp/host/operands.h"
#include "pevp/numerics/convert.h"

namespace {

using namespace host_test;
namespace num = pevp::num;
namespace isa = pevp::isa;
using isa::Dtype;
using isa::Generation;

struct Case {
  float x;
  std::uint32_t code;
};

// Checks the code of every case, that pevp::num's conversion agrees, and that the quantized value is the code's
// decode.
template <typename ToCode, typename FromCode>
void check_cases(Generation g, Dtype d, const std::vector<Case>& cases, ToCode to_code, FromCode from_code) {
  host::Matrix m(1, cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) m.data[i] = cases[i].x;
  const auto op = host::encode_operand(m, g, d);
  const std::size_t es = op.element_bytes;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("x = " + std::to_string(cases[i].x));
    std::uint32_t code = 0;
    for (std::size_t b = 0; b < es; ++b) code |= static_cast<std::uint32_t>(op.bytes[i * es + b]) << (8 * b);
    EXPECT_EQ(code, cases[i].code);
    EXPECT_EQ(code, static_cast<std::uint32_t>(to_code(cases[i].x)));
    EXPECT_EQ(to_bits(op.quantized.data[i]), to_bits(from_code(code)));
  }
}

TEST(Operands, Bfloat16RoundsToNearestEven) {
  for (Generation g : isa::kAllGenerations)
    check_cases(g, Dtype::BFLOAT16,
                {{1.0f, 0x3F80},
                 {-2.0f, 0xC000},
                 {1.0f + 0x1p-8f, 0x3F80},        // halfway, ties to the even code
                 {1.0f + 3 * 0x1p-8f, 0x3F82},    // halfway, ties up to the even code
                 {1.0f + 0x1p-8f + 0x1p-20f, 0x3F81},
                 {from_bits(0x7F7FFFFF), 0x7F80},  // fp32 max rounds up to Inf
                 {from_bits(0x7FA00001), 0x7FC0},  // any NaN -> the canonical bf16 NaN
                 {-0.0f, 0x8000}},
                num::to_bf16, num::from_bf16);
}

TEST(Operands, Fp16OverflowAndSubnormals) {
  check_cases(Generation::MARIANA, Dtype::FP16,
              {{1.0f, 0x3C00},
               {65504.0f, 0x7BFF},
               {65519.0f, 0x7BFF},  // below max + half ulp
               {65520.0f, 0x7C00},  // max + half ulp ties to Inf
               {0x1p-24f, 0x0001},
               {0x1p-26f, 0x0000},  // a quarter of the smallest subnormal rounds to +0
               {-3.0f, 0xC200}},
              num::to_fp16, [](std::uint32_t c) { return num::from_fp16(static_cast<std::uint16_t>(c)); });
}

TEST(Operands, Fp8Exp4IsE4m3OnCaymanAndE4m3fnFromV4) {
  auto c8 = [](std::uint32_t c) { return static_cast<std::uint8_t>(c); };
  // CAYMAN: IEEE-like e4m3, max 240, overflow to Inf (0x78).
  check_cases(Generation::CAYMAN, Dtype::FP8_EXP4, {{1.0f, 0x38}, {240.0f, 0x77}, {300.0f, 0x78}, {-0.5f, 0xB0}},
              num::to_fp8_e4m3, [&](std::uint32_t c) { return num::from_fp8_e4m3(c8(c)); });
  // v4+: OCP e4m3fn, max 448, saturating (docs/numerics.md).
  for (Generation g : {Generation::MARIANA, Generation::MARIANA_PLUS, Generation::MAVERICK})
    check_cases(g, Dtype::FP8_EXP4, {{1.0f, 0x38}, {448.0f, 0x7E}, {1000.0f, 0x7E}, {-0.5f, 0xB0}},
                num::to_fp8_e4m3fn, [&](std::uint32_t c) { return num::from_fp8_e4m3fn(c8(c)); });
}

TEST(Operands, OtherFp8Formats) {
  auto c8 = [](std::uint32_t c) { return static_cast<std::uint8_t>(c); };
  for (Generation g : isa::kAllGenerations) {
    // e5m2, bias 15: 1.0 = 0.01111.00; 57344 = max.
    check_cases(g, Dtype::FP8_EXP5, {{1.0f, 0x3C}, {57344.0f, 0x7B}, {1.25f, 0x3D}}, num::to_fp8_e5m2,
                [&](std::uint32_t c) { return num::from_fp8_e5m2(c8(c)); });
    // e3m4, bias 3: 1.0 = 0.011.0000; 1.0625 = one ulp above.
    check_cases(g, Dtype::FP8_EXP3, {{1.0f, 0x30}, {1.0625f, 0x31}}, num::to_fp8_e3m4,
                [&](std::uint32_t c) { return num::from_fp8_e3m4(c8(c)); });
    // e2m5, bias 1: 1.0 = 0.01.00000; 1.03125 = one ulp above.
    check_cases(g, Dtype::FP8_EXP2, {{1.0f, 0x20}, {1.03125f, 0x21}}, num::to_fp8_e2m5,
                [&](std::uint32_t c) { return num::from_fp8_e2m5(c8(c)); });
  }
}

TEST(Operands, Fp32KeepsRawBitsAndTheQuantizedOperandIsTheInput) {
  // tf32 rounding (fp32_mode Low) is the PE array's job, so even a value with low mantissa bits stays as is.
  const std::vector<std::uint32_t> bits = {0x3F800001, 0x7FA00001, 0x80000000, 0x00000001, 0xFF800000};
  host::Matrix m(1, bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) m.data[i] = from_bits(bits[i]);
  const auto op = host::encode_operand(m, Generation::CAYMAN, Dtype::FP32);
  ASSERT_EQ(op.element_bytes, 4u);
  for (std::size_t i = 0; i < bits.size(); ++i) {
    EXPECT_EQ(op.bytes[4 * i], bits[i] & 0xFF);
    EXPECT_EQ(op.bytes[4 * i + 3], bits[i] >> 24);
    EXPECT_EQ(to_bits(op.quantized.data[i]), bits[i]);
  }
}

TEST(Operands, RowMajorLittleEndianLayout) {
  host::Matrix m(2, 3);
  m.at(1, 2) = 3.0f;  // bf16 0x4040
  m.at(0, 1) = -1.0f; // bf16 0xBF80
  const auto op = host::encode_operand(m, Generation::MARIANA, Dtype::BFLOAT16);
  ASSERT_EQ(op.bytes.size(), 12u);
  EXPECT_EQ(op.bytes[10], 0x40);
  EXPECT_EQ(op.bytes[11], 0x40);
  EXPECT_EQ(op.bytes[2], 0x80);
  EXPECT_EQ(op.bytes[3], 0xBF);
  EXPECT_EQ(op.element(1, 2), op.bytes.data() + 10);
  EXPECT_EQ(op.quantized.at(0, 1), -1.0f);
}

TEST(Operands, NonMatmulDtypesAreErrors) {
  host::Matrix m(1, 1);
  for (Dtype d : {Dtype::INT8, Dtype::FP4_EXP2, Dtype::FP32R, Dtype::INVALID}) {
    try {
      host::encode_operand(m, Generation::MARIANA, d);
      ADD_FAILURE() << isa::name(d) << " accepted";
    } catch (const host::HostError& e) {
      EXPECT_NE(std::string(e.what()).find("is not a dense matmul input"), std::string::npos) << e.what();
    }
  }
  host::Matrix bad(2, 2);
  bad.data.resize(3);
  EXPECT_THROW(host::encode_operand(bad, Generation::MARIANA, Dtype::BFLOAT16), host::HostError);
}

TEST(Operands, InputTypeNames) {
  using isa::Fp32Mode;
  auto is = [](Generation g, const char* text, Dtype d, Fp32Mode mode) {
    const auto t = host::parse_input_type(g, text);
    EXPECT_EQ(t.dtype, d) << text;
    EXPECT_EQ(t.fp32_mode, mode) << text;
  };
  is(Generation::CAYMAN, "bf16", Dtype::BFLOAT16, Fp32Mode::None);
  is(Generation::CAYMAN, "BFLOAT16", Dtype::BFLOAT16, Fp32Mode::None);
  is(Generation::CAYMAN, "tf32", Dtype::FP32, Fp32Mode::Low);
  is(Generation::CAYMAN, "fp32", Dtype::FP32, Fp32Mode::High);
  is(Generation::CAYMAN, "fp8_e4m3", Dtype::FP8_EXP4, Fp32Mode::None);
  is(Generation::MARIANA, "fp8_e4m3fn", Dtype::FP8_EXP4, Fp32Mode::None);
  is(Generation::MAVERICK, "FP8_EXP4", Dtype::FP8_EXP4, Fp32Mode::None);
  is(Generation::MARIANA, "fp8_e2m5", Dtype::FP8_EXP2, Fp32Mode::None);
  auto error = [](Generation g, const char* text, const char* what) {
    try {
      host::parse_input_type(g, text);
      ADD_FAILURE() << text << " accepted";
    } catch (const host::PlanError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  error(Generation::CAYMAN, "fp8_e4m3fn", "CAYMAN has no e4m3fn input (its FP8_EXP4 is IEEE-like e4m3, max 240");
  error(Generation::MARIANA, "fp8_e4m3", "MARIANA's FP8_EXP4 is e4m3fn");
  error(Generation::MARIANA, "INT8", "not a dense matmul input");
  error(Generation::MARIANA, "fp4_e2m1", "not a dense matmul input format");
  error(Generation::MARIANA, "float17", "unknown");
}

}  // namespace
