// MX operands: packing, dtypes and the decode of gathered words and scales (see mx.h).
#include "pevp/pe_array/mx.h"

#include <algorithm>
#include <array>

#include "pevp/numerics/convert.h"
#include "pevp/numerics/formats.h"

namespace pevp::pe {

std::optional<MxPacking> mx_packing(std::int64_t mode) {
  MxPacking p;
  if (mode < 0 || mode > static_cast<std::int64_t>(isa::MxPerfMode::OCT_ROW_TILED)) return std::nullopt;
  p.mode = static_cast<isa::MxPerfMode>(mode);
  switch (p.mode) {
    case isa::MxPerfMode::NONE: break;  // one word per column, its four rows one per cycle
    case isa::MxPerfMode::QUAD_ROW: p.pump = 4; break;
    case isa::MxPerfMode::QUAD_ROW_INTERLEAVE: p.pump = 4, p.order = MxOrder::Interleaved; break;
    case isa::MxPerfMode::QUAD_ROW_TILED: p.pump = 4, p.order = MxOrder::Tiled; break;
    case isa::MxPerfMode::OCT_ROW: p.rows = p.pump = 8; break;
    case isa::MxPerfMode::OCT_ROW_INTERLEAVE: p.rows = p.pump = 8, p.order = MxOrder::Interleaved; break;
    case isa::MxPerfMode::OCT_ROW_TILED: p.rows = p.pump = 8, p.order = MxOrder::Tiled; break;
  }
  return p;
}

std::size_t mx_word_bytes(isa::Dtype d) {
  switch (d) {
    case isa::Dtype::FP8_EXP2:
    case isa::Dtype::FP8_EXP3:
    case isa::Dtype::FP8_EXP4:
    case isa::Dtype::FP8_EXP5: return kMxValuesPerWord;
    case isa::Dtype::FP4_EXP2:
    case isa::Dtype::INT4: return kMxValuesPerWord / 2;
    default: return 0;
  }
}

std::string mx_operand_error(isa::Dtype d) {
  if (mx_word_bytes(d) != 0) return {};
  const std::string_view n = isa::name(d);
  return "dtype " + (n.empty() ? std::to_string(static_cast<unsigned>(d)) : std::string(n)) +
         " is not an MX source dtype (FP8_EXP2/3/4/5, FP4_EXP2, INT4)";
}

std::size_t mx_row(const MxPacking& packing, std::size_t p, unsigned i, std::size_t k) {
  const std::size_t r = packing.rows;
  switch (packing.order) {
    case MxOrder::Packed: return r * p + i;
    case MxOrder::Interleaved: return i * k + p;
    case MxOrder::Tiled: {
      const std::size_t g0 = p / kMxGroupPartitions * kMxGroupPartitions;
      const std::size_t size = std::min<std::size_t>(kMxGroupPartitions, k - g0);
      return r * g0 + i * size + (p - g0);
    }
  }
  return 0;
}

namespace {

// Every code of a value's format, decoded (fp8: 256 codes; fp4 / int4: the 16 of a nibble).
std::array<float, 256> value_table(isa::Generation gen, isa::Dtype d) {
  std::array<float, 256> t{};
  // FP8_EXP4 is e4m3fn on v4 and later, the only generations with MX (element_format picks it).
  const num::Format f = *isa::element_format(gen, d);
  for (unsigned c = 0; c < t.size(); ++c) t[c] = num::decode(f, c);
  return t;
}

}  // namespace

void decode_mx(const MxOperand& op, float* dst) {
  const std::size_t wb = mx_word_bytes(op.dtype);
  const bool nibbles = wb < kMxValuesPerWord;
  std::array<float, 256> value = value_table(op.gen, op.dtype);
  if (op.table) std::copy(op.table, op.table + (nibbles ? 16 : 256), value.begin());
  const unsigned per_column = op.packing.words();
  const std::size_t columns = op.columns();
  for (std::size_t p = 0; p < op.k; ++p) {
    const std::uint8_t* words = op.data + p * op.words * wb;
    const std::uint8_t* scales = op.scales + p / kMxGroupPartitions * op.words;
    for (std::size_t c = 0; c < columns; ++c)
      for (unsigned w = 0; w < per_column; ++w) {
        const std::size_t e = c * per_column + w;
        const std::uint8_t* word = words + e * wb;
        // 2^(s-127) is an fp32 (0x00 the subnormal 2^-127), so value * scale is the exact product rounded once.
        const float scale = num::from_e8m0(scales[e]);
        for (unsigned v = 0; v < kMxValuesPerWord; ++v) {
          const unsigned code = nibbles ? (word[v / 2] >> (4 * (v % 2))) & 0xFu : word[v];
          dst[mx_row(op.packing, p, w * kMxValuesPerWord + v, op.k) * columns + c] = value[code] * scale;
        }
      }
  }
}

}  // namespace pevp::pe
