// MX (OCP microscaling) GEMM operands: an fp32 matrix quantized on the host to E8M0-scaled blocks of fp8 / fp4
// elements, laid out for the PE array's MX sources (pevp/pe_array/mx.h), together with the exact fp32 value every
// element dequantizes to (what the array multiplies and what a reference must use).
//
// One E8M0 scale covers a slot of the PE's layout: for one free index (a column of B, a row of A), the 8 SBUF
// partitions of a scale group x the 4 values of one x4 word; which contraction indices those are depends on the
// perf mode's row order (MxRowOrder) and on the partitions of the k-tile. A block is OCP's (32 consecutive indices
// from a multiple of 32 in the k-tile, a shorter last one never split) wherever the slots allow: the slots inside
// one OCP block share its scale, a slot straddling two is a block of its own (docs/model-decisions.md
// D-MX-HOST-BLOCK). The quantization is OCP MX 1.0's (docs/numerics-matmul.md "MX operands from the host").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pevp/host/error.h"
#include "pevp/host/matrix.h"
#include "pevp/host/operands.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/generation.h"

namespace pevp::host {

inline constexpr unsigned kMxBlockPartitions = 8;  // one E8M0 scale per 8 partitions ...
inline constexpr unsigned kMxWordValues = 4;       // ... x the 4 values of one x4 word

// How a perf mode maps the packed values of partition p onto the contraction rows of a k-tile of `k` partitions
// (the contract of pevp/pe_array/mx.h, written out here on its own so that a GEMM checks the model's order).
enum class MxRowOrder : std::uint8_t {
  Packed,       // NONE, QUAD_ROW, OCT_ROW: value i of partition p is row R p + i
  Interleaved,  // *_INTERLEAVE: row i k + p
  Tiled,        // *_TILED: per group of g = min(8, k - g0) partitions from g0 = 8 floor(p / 8): row R g0 + i g + p - g0
};

struct MxLayout {
  isa::MxPerfMode mode = isa::MxPerfMode::QUAD_ROW;
  unsigned rows = 4;  // R: contraction rows per partition and free index (8 for OCT_ROW*)
  MxRowOrder order = MxRowOrder::Packed;
  unsigned words() const { return rows / kMxWordValues; }  // x4 words per partition and free index
  // The contraction row (0 .. R k - 1, relative to the k-tile) of value i (0 .. R-1) of partition p.
  std::size_t row(std::size_t p, unsigned i, std::size_t k) const;
};
MxLayout mx_layout(isa::MxPerfMode mode);

// "none", "quad_row", ..., "oct_row_tiled" (any case), or nullopt.
std::optional<isa::MxPerfMode> parse_mx_perf_mode(std::string_view text);
std::string mx_perf_mode_name(isa::MxPerfMode mode);  // the lower-case name parse_mx_perf_mode takes

// The MX element dtype a `pe-vp gemm` MX type names: mxfp8_e4m3 -> FP8_EXP4 (e4m3fn), mxfp8_e5m2 -> FP8_EXP5,
// mxfp4 -> FP4_EXP2 (any case); nullopt for any other text.
std::optional<isa::Dtype> parse_mx_type(std::string_view text);
// Whether the host quantizes to `d` (the three above), and OCP's emax_elem of its element format: 8, 15, 2.
bool is_host_mx_dtype(isa::Dtype d);
int mx_emax_elem(isa::Dtype d);

// One OCP block quantized: the E8M0 scale code and each value's element code (fp4: the low nibble).
//   X = 2^e, e = floor(log2(max |v|)) - emax_elem clamped to E8M0's -127..127; a block whose values are all zero
//   gets e = -127 (code 0x00). A NaN or an infinity in the block makes X NaN (code 0xFF) and every element code 0.
//   element = RNE(v / X) in the element format, finite values beyond its largest magnitude clamped to it (OCP's
//   saturating conversion; only e5m2 would otherwise round to Inf).
// Throws HostError for a dtype is_host_mx_dtype() refuses.
std::uint8_t mx_block_scale(isa::Dtype d, const float* values, std::size_t count);
std::uint8_t mx_element_code(isa::Generation gen, isa::Dtype d, float value, std::uint8_t scale);
// The exact value of code x 2^(scale - 127), rounded once to fp32 (exact unless it leaves fp32's normal range);
// NaN for scale 0xFF.
float mx_dequantize(isa::Generation gen, isa::Dtype d, std::uint8_t code, std::uint8_t scale);

// Quantizes `m`, whose contraction dimension is its columns (operand A, M x K) or its rows (operand B, K x N),
// in k-tiles of `k_tile` contraction indices (R x the array's rows; the last may be shorter) laid out as `layout`.
// The result's bytes hold one element code per byte (row-major, element_bytes 1), `mx_scales` the E8M0 scale of
// each element's block, `quantized` the dequantized values. Throws HostError for a bad dtype, k_tile not a multiple
// of layout.rows, or a matrix whose data size does not match its shape.
EncodedOperand encode_mx_operand(const Matrix& m, isa::Generation gen, isa::Dtype dtype, const MxLayout& layout,
                                 std::size_t k_tile, bool k_is_cols);

}  // namespace pevp::host
