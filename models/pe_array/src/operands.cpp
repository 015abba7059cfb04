// Operand decode for the PE array: SBUF bytes of a matmul input dtype -> fp32 (see compute.h).
#include <cmath>
#include <cstring>

#include "pevp/numerics/convert.h"
#include "pevp/pe_array/compute.h"

namespace pevp::pe {

namespace {

bool is_matmul_input(isa::Dtype d) {
  switch (d) {
    case isa::Dtype::BFLOAT16:
    case isa::Dtype::FP16:
    case isa::Dtype::FP32:
    case isa::Dtype::FP8_EXP2:
    case isa::Dtype::FP8_EXP3:
    case isa::Dtype::FP8_EXP4:
    case isa::Dtype::FP8_EXP5: return true;
    default: return false;
  }
}

std::uint16_t load_u16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] | (static_cast<unsigned>(p[1]) << 8));
}

std::uint32_t load_u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

void decode_table(const std::array<std::uint32_t, 256>& table, const std::uint8_t* src, std::size_t count,
                  float* dst) {
  for (std::size_t i = 0; i < count; ++i) dst[i] = num::bits_float(table[src[i]]);
}

}  // namespace

std::string operand_error(const OperandType& t) {
  if (!is_matmul_input(t.dtype)) {
    const std::string_view n = isa::name(t.dtype);
    return "dtype " + (n.empty() ? std::to_string(static_cast<unsigned>(t.dtype)) : std::string(n)) +
           " is not a dense matmul input (BFLOAT16, FP16, FP8_EXP2/3/4/5, FP32)";
  }
  const bool fp32 = t.dtype == isa::Dtype::FP32;
  const bool mode_none = t.fp32_mode == isa::Fp32Mode::None;
  const bool mode_known = static_cast<unsigned>(t.fp32_mode) <= static_cast<unsigned>(isa::Fp32Mode::Low_High);
  if (!mode_known) return "fp32_mode " + std::to_string(static_cast<unsigned>(t.fp32_mode)) + " is not defined";
  if (fp32 && mode_none) return "FP32 input needs fp32_mode Low, High or Low_High";
  if (!fp32 && !mode_none) return "fp32_mode must be None for a non-FP32 input";
  return {};
}

std::size_t operand_bytes(isa::Dtype d) {
  if (!is_matmul_input(d)) return 0;
  if (d == isa::Dtype::FP32) return 4;
  if (d == isa::Dtype::BFLOAT16 || d == isa::Dtype::FP16) return 2;
  return 1;
}

bool decode_operands(const OperandType& t, const std::uint8_t* src, std::size_t count, float* dst) {
  if (!operand_error(t).empty()) return false;
  switch (t.dtype) {
    case isa::Dtype::BFLOAT16:
      for (std::size_t i = 0; i < count; ++i) dst[i] = num::from_bf16(load_u16(src + 2 * i));
      return true;
    case isa::Dtype::FP16:
      for (std::size_t i = 0; i < count; ++i) dst[i] = num::from_fp16(load_u16(src + 2 * i));
      return true;
    case isa::Dtype::FP32:
      if (t.fp32_mode == isa::Fp32Mode::Low) {
        for (std::size_t i = 0; i < count; ++i) dst[i] = num::to_tf32(num::bits_float(load_u32(src + 4 * i)));
      } else {
        for (std::size_t i = 0; i < count; ++i) dst[i] = num::bits_float(load_u32(src + 4 * i));
      }
      return true;
    default: break;
  }
  // The fp8 family: element_format() picks e4m3 (CAYMAN) or e4m3fn (v4+) for FP8_EXP4.
  switch (*isa::element_format(t.gen, t.dtype)) {
    case num::Format::FP8_E4M3: decode_table(num::kFp8E4M3Table, src, count, dst); return true;
    case num::Format::FP8_E4M3FN: decode_table(num::kFp8E4M3fnTable, src, count, dst); return true;
    case num::Format::FP8_E5M2: decode_table(num::kFp8E5M2Table, src, count, dst); return true;
    case num::Format::FP8_E3M4: decode_table(num::kFp8E3M4Table, src, count, dst); return true;
    case num::Format::FP8_E2M5: decode_table(num::kFp8E2M5Table, src, count, dst); return true;
    default: return false;  // unreachable: is_matmul_input() admits only the formats above
  }
}

std::pair<float, float> split_tf32(float x) {
  if (!std::isfinite(x)) return {num::to_tf32(x), 0.0f};
  float hi = num::to_tf32(x);
  // RNE carries a finite x above tf32 max + half ulp to Inf; truncating keeps hi finite and x - hi exact.
  if (std::isinf(hi)) hi = num::bits_float(num::float_bits(x) & 0xFFFFE000u);
  // x - hi is exact: hi is x rounded to a nearby value of the same binade or the next, so their difference fits.
  return {hi, num::to_tf32(x - hi)};
}

}  // namespace pevp::pe
