// MX (OCP microscaling) operands of the PE array: the v4 LdweightsMX / MatmulMX sources and v5's MXTENSOR_V2 member
// (spec 000 section 7). What the spec fixes: the dtype set, four values packed per element (float8_*_x4,
// float4_e2m1fn_x4), one E8M0 scale per group of 32 values = 8 partitions x 4 values, the MX_PERF_MODE codes. What
// the model decides (docs/model-decisions.md D-MX-*): where the scales lie (D-MX-SCALES), how a perf mode maps the
// packed values onto contraction rows (D-MX-PUMP), and that a scale multiplies its values at the multiplier input
// (D-MX-SCALE). Plain C++, no SystemC: the executor gathers the words and scales from SBUF and calls decode_mx().
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "pevp/isa/enums.h"
#include "pevp/isa/generation.h"

namespace pevp::pe {

inline constexpr unsigned kMxValuesPerWord = 4;    // the x4 element: four values
inline constexpr unsigned kMxGroupPartitions = 8;  // a scale covers 8 partitions x one word = 32 values

// The order in which a partition's packed values take their contraction rows (D-MX-PUMP).
enum class MxOrder : std::uint8_t {
  Packed,       // QUAD_ROW, OCT_ROW, NONE: partition p's values are rows R*p .. R*p + R-1
  Interleaved,  // *_INTERLEAVE: value i of every partition forms a slab of k rows: row i*k + p
  Tiled,        // *_TILED: per scale group of g (8, or fewer at the end) partitions, value-major: row R*8*G + i*g + p%8
};

// How MX_PERF_MODE packs an MX source: R contraction rows per partition and column (one x4 word, or two for the
// OCT modes), of which the PE consumes `pump` per cycle.
struct MxPacking {
  unsigned rows = kMxValuesPerWord;  // R: 4 (NONE, QUAD_ROW*) or 8 (OCT_ROW*)
  unsigned pump = 1;                 // 1 (NONE), 4 (QUAD_ROW*), 8 (OCT_ROW*)
  MxOrder order = MxOrder::Packed;
  isa::MxPerfMode mode = isa::MxPerfMode::NONE;

  unsigned words() const { return rows / kMxValuesPerWord; }  // x4 words per column and partition
  unsigned passes() const { return rows / pump; }              // cycles per moving column (4 for NONE, else 1)
};

// The packing of MX_PERF_MODE `mode`, or nullopt when it is none of the codes 0..6.
std::optional<MxPacking> mx_packing(std::int64_t mode);

// Bytes one x4 word of `d` occupies: 4 for FP8_EXP2/3/4/5, 2 for FP4_EXP2 and INT4; 0 when `d` is no MX dtype.
std::size_t mx_word_bytes(isa::Dtype d);

// Why `d` cannot be an MX source dtype (is_valid_mx_dtype, spec 000 section 7), or "" when it can.
std::string mx_operand_error(isa::Dtype d);

// The contraction row of value `i` (0 .. R-1: value i % 4 of word i / 4) of partition `p`, for a source of `k`
// partitions.
std::size_t mx_row(const MxPacking& packing, std::size_t p, unsigned i, std::size_t k);

// An MX source as gathered from SBUF: `k` partitions of `words` x4 words each (pattern order, packed, partition-major)
// and the scales, ceil(k / 8) groups of `words` E8M0 codes (group g's scale of word e at scales[g * words + e]).
struct MxOperand {
  isa::Generation gen = isa::Generation::MARIANA;
  isa::Dtype dtype = isa::Dtype::FP8_EXP4;
  MxPacking packing;
  std::size_t k = 0, words = 0;
  const std::uint8_t* data = nullptr;
  const std::uint8_t* scales = nullptr;
  // A converter table for the dtype's codes (ConvLutLoad, D-CONVLUT), or null for the format's own decode.
  const float* table = nullptr;

  std::size_t columns() const { return words / packing.words(); }  // words of a column: c * W .. c * W + W - 1
  std::size_t rows() const { return k * packing.rows; }
};

// Decodes `op` into dst[rows()][columns()] (row-major): value i of column c's words in partition p lands at row
// mx_row(p, i), column c. Values are little-endian within a word (fp8: byte i; fp4 / int4: nibble i of the u16, low
// nibble first) and decode exactly (FP8_EXP4 is e4m3fn on every MX generation; a loaded converter table replaces the
// decode when `table` is set); each is multiplied by its group's
// scale 2^(s-127) in fp32, one rounding (exact unless the product leaves fp32's normal range: Inf above, gradual
// underflow below), and scale 0xFF gives NaN (D-MX-SCALE). mx_word_bytes(dtype) must not be 0 and words must be a
// multiple of packing.words().
void decode_mx(const MxOperand& op, float* dst);

}  // namespace pevp::pe
