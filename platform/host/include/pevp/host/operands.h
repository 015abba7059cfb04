// GEMM operands in the PE array's input formats: an fp32 matrix converted to the SBUF bytes of an ISA dtype on a
// generation (round to nearest-even, little-endian), together with the exact fp32 value every stored element
// decodes to -- the "quantized" operand, which is what the hardware multiplies and what a reference must use.
//
// Formats come from isa::element_format(gen, dtype) and the conversions from pevp::num, so FP8_EXP4 is e4m3 (max 240)
// on CAYMAN and e4m3fn (max 448) from v4 (docs/model-decisions.md D-DTYPE-E4M3). FP32 stores the raw fp32 bits: the
// tf32 rounding of fp32_mode Low (and the Low_High split) happen inside the PE array, so the quantized FP32 operand
// is the input itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "pevp/host/error.h"
#include "pevp/host/matrix.h"
#include "pevp/host/sparse_operands.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/generation.h"

namespace pevp::host {

struct EncodedOperand {
  isa::Generation gen = isa::Generation::MARIANA;
  isa::Dtype dtype = isa::Dtype::BFLOAT16;
  std::size_t rows = 0, cols = 0;
  std::size_t element_bytes = 0;   // 1, 2 or 4
  std::vector<std::uint8_t> bytes;  // row-major: element (r, c) at (r * cols + c) * element_bytes, little-endian
  Matrix quantized;                 // the value each stored element decodes to, exactly

  // MX operands (mx_operands.h): bytes hold one element code per byte; the perf mode and k-tile the blocks follow,
  // the E8M0 scale of each element's block (row-major like bytes), and what the quantization did: blocks made,
  // finite values clamped to the element format's largest magnitude, blocks made NaN by a NaN or an infinity.
  std::optional<isa::MxPerfMode> mx;
  std::size_t mx_k_tile = 0;
  std::vector<std::uint8_t> mx_scales;
  std::size_t mx_blocks = 0, mx_saturated = 0, mx_nan_blocks = 0;

  // Sparse operands (sparse_operands.h): the pattern A was pruned to and which of its values survived (1 = kept,
  // row-major like bytes; the pruned ones are +0 in bytes and quantized).
  std::optional<SparsePattern> sparsity;
  std::vector<std::uint8_t> sparse_kept;

  const std::uint8_t* element(std::size_t r, std::size_t c) const {
    return bytes.data() + (r * cols + c) * element_bytes;
  }
};

// The code of one value in `dtype` (RNE; FP32: the raw bits) and the exact fp32 value a code decodes to. Throw
// HostError when `dtype` is not a dense matmul input (BFLOAT16, FP16, FP8_EXP2/3/4/5, FP32).
std::uint32_t encode_element(isa::Generation gen, isa::Dtype dtype, float x);
float decode_element(isa::Generation gen, isa::Dtype dtype, std::uint32_t code);

// Converts every element of `m`. Throws HostError for a dtype that is not a dense matmul input or a matrix whose
// data size does not match rows x cols.
EncodedOperand encode_operand(const Matrix& m, isa::Generation gen, isa::Dtype dtype);

// An input type named on a command line: the ISA dtype and the fp32_mode it implies.
struct InputType {
  isa::Dtype dtype = isa::Dtype::BFLOAT16;
  isa::Fp32Mode fp32_mode = isa::Fp32Mode::None;
};

// Accepts an ISA dtype name ("BFLOAT16", "FP8_EXP4", "FP32" -- FP32 alone gives fp32_mode High) or a number-format
// name ("bf16", "fp16", "fp32", "tf32" = FP32 + Low, "fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2", "fp8_e3m4", "fp8_e2m5"),
// any case. A format the generation does not have is an error that says which one it has: "fp8_e4m3fn" on CAYMAN
// (its FP8_EXP4 is e4m3, max 240) and "fp8_e4m3" on v4+ (FP8_EXP4 is e4m3fn there). Throws PlanError.
InputType parse_input_type(isa::Generation gen, std::string_view text);

}  // namespace pevp::host
