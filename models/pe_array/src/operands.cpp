// Operand decode for the PE array: SBUF bytes of a matmul input dtype -> fp32 (see compute.h).
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "pevp/numerics/convert.h"
#include "pevp/pe_array/compute.h"
#include "src/simd_decode.h"

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

// The decoders, one per format, each a loop the compiler vectorises (element loads through memcpy: the buffers
// have no alignment). Each writes exactly `count` floats.
void decode_bf16(const std::uint8_t* src, std::size_t count, float* dst) {
  // A stationary of a whole array is 16 K values per LdWeights: the SIMD widening where the address allows u16 loads
  // (and the run is long enough to pay for the dispatch; a tagged load decodes one value at a time).
  if (count >= 16 && reinterpret_cast<std::uintptr_t>(src) % 2 == 0) return widen_bf16(src, count, dst);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    std::memcpy(dst + i, &bits, 4);
  }
}

void decode_fp16(const std::uint8_t* src, std::size_t count, float* dst) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = num::from_fp16(h);
  }
}

void decode_fp32(const std::uint8_t* src, std::size_t count, float* dst) {
  if (count > 0) std::memcpy(dst, src, count * 4);  // an empty operand may come as null pointers
}

void decode_tf32(const std::uint8_t* src, std::size_t count, float* dst) {
  for (std::size_t i = 0; i < count; ++i) {
    float x;
    std::memcpy(&x, src + 4 * i, 4);
    dst[i] = num::to_tf32(x);
  }
}

template <const std::array<std::uint32_t, 256>& kTable>
void decode_fp8(const std::uint8_t* src, std::size_t count, float* dst) {
  for (std::size_t i = 0; i < count; ++i) dst[i] = num::bits_float(kTable[src[i]]);
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

RowDecoder row_decoder(const OperandType& t) {
  if (!operand_error(t).empty()) return nullptr;
  switch (t.dtype) {
    case isa::Dtype::BFLOAT16: return &decode_bf16;
    case isa::Dtype::FP16: return &decode_fp16;
    case isa::Dtype::FP32: return t.fp32_mode == isa::Fp32Mode::Low ? &decode_tf32 : &decode_fp32;
    default: break;
  }
  // The fp8 family: element_format() picks e4m3 (CAYMAN) or e4m3fn (v4+) for FP8_EXP4.
  switch (*isa::element_format(t.gen, t.dtype)) {
    case num::Format::FP8_E4M3: return &decode_fp8<num::kFp8E4M3Table>;
    case num::Format::FP8_E4M3FN: return &decode_fp8<num::kFp8E4M3fnTable>;
    case num::Format::FP8_E5M2: return &decode_fp8<num::kFp8E5M2Table>;
    case num::Format::FP8_E3M4: return &decode_fp8<num::kFp8E3M4Table>;
    case num::Format::FP8_E2M5: return &decode_fp8<num::kFp8E2M5Table>;
    default: return nullptr;  // unreachable: is_matmul_input() admits only the formats above
  }
}

bool decode_operands(const OperandType& t, const std::uint8_t* src, std::size_t count, float* dst) {
  const RowDecoder decode = row_decoder(t);
  if (!decode) return false;
  decode(src, count, dst);
  return true;
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
