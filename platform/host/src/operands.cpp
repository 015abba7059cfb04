// Operand conversion (see operands.h).
#include "pevp/host/operands.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "pevp/numerics/convert.h"
#include "pevp/numerics/formats.h"
#include "pevp/pe_array/compute.h"

namespace pevp::host {
namespace {

std::string dtype_text(isa::Dtype d) {
  const std::string_view n = isa::name(d);
  return n.empty() ? "ordinal " + std::to_string(static_cast<unsigned>(d)) : std::string(n);
}

// The element size, or a HostError for a dtype the PE array cannot multiply densely.
std::size_t checked_bytes(isa::Dtype dtype) {
  const std::size_t bytes = pe::operand_bytes(dtype);
  if (bytes == 0)
    throw HostError("dtype " + dtype_text(dtype) +
                    " is not a dense matmul input (BFLOAT16, FP16, FP8_EXP2/3/4/5 or FP32)");
  return bytes;
}

}  // namespace

std::uint32_t encode_element(isa::Generation gen, isa::Dtype dtype, float x) {
  checked_bytes(dtype);
  if (dtype == isa::Dtype::FP32) return num::float_bits(x);
  return num::encode(*isa::element_format(gen, dtype), x);
}

float decode_element(isa::Generation gen, isa::Dtype dtype, std::uint32_t code) {
  checked_bytes(dtype);
  if (dtype == isa::Dtype::FP32) return num::bits_float(code);
  return num::decode(*isa::element_format(gen, dtype), code);
}

EncodedOperand encode_operand(const Matrix& m, isa::Generation gen, isa::Dtype dtype) {
  if (m.data.size() != m.rows * m.cols)
    throw HostError("encode_operand: the matrix holds " + std::to_string(m.data.size()) + " values for shape (" +
                    std::to_string(m.rows) + ", " + std::to_string(m.cols) + ")");
  EncodedOperand out;
  out.gen = gen;
  out.dtype = dtype;
  out.rows = m.rows;
  out.cols = m.cols;
  out.element_bytes = checked_bytes(dtype);
  out.bytes.resize(m.data.size() * out.element_bytes);
  out.quantized = Matrix(m.rows, m.cols);
  for (std::size_t i = 0; i < m.data.size(); ++i) {
    const std::uint32_t code = encode_element(gen, dtype, m.data[i]);
    for (std::size_t b = 0; b < out.element_bytes; ++b)
      out.bytes[i * out.element_bytes + b] = static_cast<std::uint8_t>(code >> (8 * b));
    out.quantized.data[i] = decode_element(gen, dtype, code);
  }
  return out;
}

InputType parse_input_type(isa::Generation gen, std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const bool v4 = isa::is_v4_plus(gen);
  const std::string g(isa::name(gen));
  if (lower == "tf32") return {isa::Dtype::FP32, isa::Fp32Mode::Low};
  if (lower == "fp32") return {isa::Dtype::FP32, isa::Fp32Mode::High};
  if (lower == "fp8_e4m3fn" && !v4)
    throw PlanError("dtype fp8_e4m3fn: " + g + " has no e4m3fn input (its FP8_EXP4 is IEEE-like e4m3, max 240; "
                    "e4m3fn starts at v4)");
  if (lower == "fp8_e4m3" && v4)
    throw PlanError("dtype fp8_e4m3: " + g + "'s FP8_EXP4 is e4m3fn (OCP, max 448); the IEEE-like e4m3 (max 240) "
                    "is CAYMAN's");
  // A number-format name: the ISA dtype whose element format on this generation it is.
  if (const auto fmt = num::format_from_name(lower)) {
    for (isa::Dtype d : {isa::Dtype::BFLOAT16, isa::Dtype::FP16, isa::Dtype::FP8_EXP2, isa::Dtype::FP8_EXP3,
                         isa::Dtype::FP8_EXP4, isa::Dtype::FP8_EXP5})
      if (isa::element_format(gen, d) == fmt) return {d, isa::Fp32Mode::None};
    throw PlanError("dtype " + std::string(text) + ": not a dense matmul input format (fp4, int4 and e8m0 are MX "
                    "data and scales)");
  }
  if (const auto d = isa::parse_dtype(text)) {
    if (pe::operand_bytes(*d) == 0)
      throw PlanError("dtype " + std::string(text) +
                      ": not a dense matmul input (BFLOAT16, FP16, FP8_EXP2/3/4/5, FP32; or bf16, fp16, tf32, fp32, "
                      "fp8_e4m3/e4m3fn/e5m2/e3m4/e2m5)");
    return {*d, *d == isa::Dtype::FP32 ? isa::Fp32Mode::High : isa::Fp32Mode::None};
  }
  throw PlanError("dtype " + std::string(text) +
                  ": unknown; use an ISA dtype (BFLOAT16, FP16, FP8_EXP2/3/4/5, FP32) or a format name (bf16, fp16, "
                  "tf32, fp32, fp8_e4m3 (CAYMAN), fp8_e4m3fn (v4+), fp8_e5m2, fp8_e3m4, fp8_e2m5)");
}

}  // namespace pevp::host
