// MX operand quantization (see mx_operands.h and docs/numerics-matmul.md "MX operands from the host").
#include "pevp/host/mx_operands.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "pevp/numerics/convert.h"
#include "pevp/numerics/formats.h"

namespace pevp::host {
namespace {

constexpr int kE8M0Bias = 127;
constexpr std::size_t kOcpBlockValues = 32;  // OCP MX 1.0: k = 32 elements share one scale
constexpr int kE8M0MinExponent = -127, kE8M0MaxExponent = 127;  // codes 0x00 .. 0xFE; 0xFF is NaN

std::string lower(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

num::Format mx_format(isa::Generation gen, isa::Dtype d) {
  if (!is_host_mx_dtype(d))
    throw HostError("dtype " + std::string(isa::name(d)) +
                    " is not an MX element type the host quantizes to (FP8_EXP4 = e4m3fn, FP8_EXP5 = e5m2, "
                    "FP4_EXP2 = e2m1)");
  const auto f = isa::element_format(gen, d);
  if (!f) throw HostError("dtype " + std::string(isa::name(d)) + " has no element format on " +
                          std::string(isa::name(gen)));
  return *f;
}

// The quantization blocks of a k-tile of `kc` contraction rows laid out as `layout`, each as its rows (k-tile
// relative; the rows the layout pads with are in none). One E8M0 scale covers a slot: word w of one scale group's
// partitions. The slots that lie inside one OCP block (32 consecutive rows from a multiple of 32) form that block
// together, so a ragged group whose two words share an OCP block is one block, never split; a slot whose rows
// straddle OCP blocks (the strided orders, D-MX-HOST-BLOCK) is a block of its own. The same for every free index.
std::vector<std::vector<std::size_t>> quantization_blocks(const MxLayout& layout, std::size_t kc) {
  constexpr std::size_t kStraddles = std::numeric_limits<std::size_t>::max();
  const std::size_t parts = (kc + layout.rows - 1) / layout.rows;
  std::vector<std::vector<std::size_t>> blocks;
  std::vector<std::size_t> ocp_of_block;  // the OCP block of blocks[i], or kStraddles
  for (std::size_t g0 = 0; g0 < parts; g0 += kMxBlockPartitions)
    for (unsigned w = 0; w < layout.words(); ++w) {
      std::vector<std::size_t> slot;
      for (std::size_t p = g0; p < std::min(parts, g0 + kMxBlockPartitions); ++p)
        for (unsigned v = 0; v < kMxWordValues; ++v)
          if (const std::size_t r = layout.row(p, w * kMxWordValues + v, parts); r < kc) slot.push_back(r);
      if (slot.empty()) continue;
      std::size_t ocp = slot.front() / kOcpBlockValues;
      for (std::size_t r : slot)
        if (r / kOcpBlockValues != ocp) ocp = kStraddles;
      const auto same = std::find(ocp_of_block.begin(), ocp_of_block.end(), ocp);
      if (ocp != kStraddles && same != ocp_of_block.end()) {
        std::vector<std::size_t>& block = blocks[static_cast<std::size_t>(same - ocp_of_block.begin())];
        block.insert(block.end(), slot.begin(), slot.end());
      } else {
        blocks.push_back(std::move(slot));
        ocp_of_block.push_back(ocp);
      }
    }
  return blocks;
}

}  // namespace

std::size_t MxLayout::row(std::size_t p, unsigned i, std::size_t k) const {
  switch (order) {
    case MxRowOrder::Packed: return std::size_t{rows} * p + i;
    case MxRowOrder::Interleaved: return i * k + p;
    case MxRowOrder::Tiled: {
      const std::size_t g0 = p / kMxBlockPartitions * kMxBlockPartitions;
      const std::size_t size = std::min<std::size_t>(kMxBlockPartitions, k - g0);
      return std::size_t{rows} * g0 + i * size + (p - g0);
    }
  }
  return 0;
}

MxLayout mx_layout(isa::MxPerfMode mode) {
  MxLayout l;
  l.mode = mode;
  switch (mode) {
    case isa::MxPerfMode::NONE:
    case isa::MxPerfMode::QUAD_ROW: break;
    case isa::MxPerfMode::QUAD_ROW_INTERLEAVE: l.order = MxRowOrder::Interleaved; break;
    case isa::MxPerfMode::QUAD_ROW_TILED: l.order = MxRowOrder::Tiled; break;
    case isa::MxPerfMode::OCT_ROW: l.rows = 8; break;
    case isa::MxPerfMode::OCT_ROW_INTERLEAVE: l.rows = 8, l.order = MxRowOrder::Interleaved; break;
    case isa::MxPerfMode::OCT_ROW_TILED: l.rows = 8, l.order = MxRowOrder::Tiled; break;
  }
  return l;
}

std::optional<isa::MxPerfMode> parse_mx_perf_mode(std::string_view text) {
  const std::string s = lower(text);
  for (unsigned m = 0; m <= static_cast<unsigned>(isa::MxPerfMode::OCT_ROW_TILED); ++m) {
    const auto mode = static_cast<isa::MxPerfMode>(m);
    if (s == mx_perf_mode_name(mode)) return mode;
  }
  return std::nullopt;
}

std::string mx_perf_mode_name(isa::MxPerfMode mode) { return lower(isa::name(mode)); }

std::optional<isa::Dtype> parse_mx_type(std::string_view text) {
  const std::string s = lower(text);
  if (s == "mxfp8_e4m3") return isa::Dtype::FP8_EXP4;
  if (s == "mxfp8_e5m2") return isa::Dtype::FP8_EXP5;
  if (s == "mxfp4") return isa::Dtype::FP4_EXP2;
  return std::nullopt;
}

bool is_host_mx_dtype(isa::Dtype d) {
  return d == isa::Dtype::FP8_EXP4 || d == isa::Dtype::FP8_EXP5 || d == isa::Dtype::FP4_EXP2;
}

int mx_emax_elem(isa::Dtype d) {
  switch (d) {
    case isa::Dtype::FP8_EXP4: return 8;   // e4m3fn: 448 = 1.75 x 2^8
    case isa::Dtype::FP8_EXP5: return 15;  // e5m2: 57344 = 1.75 x 2^15
    case isa::Dtype::FP4_EXP2: return 2;   // e2m1: 6 = 1.5 x 2^2
    default: throw HostError("dtype " + std::string(isa::name(d)) + " is not an MX element type the host quantizes to");
  }
}

std::uint8_t mx_block_scale(isa::Dtype d, const float* values, std::size_t count) {
  const int emax = mx_emax_elem(d);
  float max = 0.0f;
  for (std::size_t i = 0; i < count; ++i) {
    const float a = std::fabs(values[i]);
    if (!(a <= std::numeric_limits<float>::max())) return num::kE8M0Nan;  // NaN or an infinity
    max = std::max(max, a);
  }
  // floor(log2(max)) is the unbiased exponent of max (ilogb is exact, subnormals included); an all-zero block has no
  // exponent and takes the smallest scale, as the clamp below would give it.
  const int e = max == 0.0f ? kE8M0MinExponent
                            : std::clamp(std::ilogb(max) - emax, kE8M0MinExponent, kE8M0MaxExponent);
  return static_cast<std::uint8_t>(e + kE8M0Bias);
}

std::uint8_t mx_element_code(isa::Generation gen, isa::Dtype d, float value, std::uint8_t scale) {
  const num::Format f = mx_format(gen, d);
  if (scale == num::kE8M0Nan) return 0;  // the block is NaN through its scale
  // v / X: an exact power-of-two scaling (ldexp rounds once, only where the quotient leaves fp32's normal range,
  // far below the element format's smallest subnormal), then clamped to the largest magnitude and rounded (RNE).
  const float max = num::format_info(f).max_finite;
  const float q = std::clamp(std::ldexp(value, kE8M0Bias - scale), -max, max);
  return static_cast<std::uint8_t>(num::encode(f, q));
}

float mx_dequantize(isa::Generation gen, isa::Dtype d, std::uint8_t code, std::uint8_t scale) {
  const num::Format f = mx_format(gen, d);
  if (scale == num::kE8M0Nan) return std::numeric_limits<float>::quiet_NaN();
  // element x 2^(s - 127) is exact in fp64 (at most 4 significant bits, exponents within -143 .. 143); the one
  // conversion to fp32 is the one rounding the array's fp32 multiply by the scale makes.
  return static_cast<float>(std::ldexp(static_cast<double>(num::decode(f, code)), scale - kE8M0Bias));
}

EncodedOperand encode_mx_operand(const Matrix& m, isa::Generation gen, isa::Dtype dtype, const MxLayout& layout,
                                 std::size_t k_tile, bool k_is_cols) {
  const num::Format f = mx_format(gen, dtype);
  if (m.data.size() != m.rows * m.cols)
    throw HostError("encode_mx_operand: the matrix holds " + std::to_string(m.data.size()) + " values for shape (" +
                    std::to_string(m.rows) + ", " + std::to_string(m.cols) + ")");
  if (k_tile == 0 || k_tile % layout.rows != 0)
    throw HostError("encode_mx_operand: k_tile " + std::to_string(k_tile) + " is not a positive multiple of the " +
                    std::to_string(layout.rows) + " rows a partition packs");
  EncodedOperand out;
  out.gen = gen;
  out.dtype = dtype;
  out.rows = m.rows;
  out.cols = m.cols;
  out.element_bytes = 1;
  out.bytes.assign(m.data.size(), 0);
  out.mx = layout.mode;
  out.mx_k_tile = k_tile;
  out.mx_scales.assign(m.data.size(), 0);
  out.quantized = Matrix(m.rows, m.cols);
  const std::size_t K = k_is_cols ? m.cols : m.rows, F = k_is_cols ? m.rows : m.cols;
  const auto at = [&](std::size_t k, std::size_t fi) { return k_is_cols ? fi * m.cols + k : k * m.cols + fi; };
  const float max = num::format_info(f).max_finite;
  std::vector<std::size_t> index;
  std::vector<float> values;
  for (std::size_t k0 = 0; k0 < K; k0 += k_tile) {
    const std::size_t kc = std::min(k_tile, K - k0);
    const std::vector<std::vector<std::size_t>> blocks = quantization_blocks(layout, kc);
    for (std::size_t fi = 0; fi < F; ++fi)
      for (const std::vector<std::size_t>& block : blocks) {
        index.clear();
        values.clear();
        for (std::size_t r : block) {
          index.push_back(at(k0 + r, fi));
          values.push_back(m.data[index.back()]);
        }
        const std::uint8_t scale = mx_block_scale(dtype, values.data(), values.size());
        ++out.mx_blocks;
        out.mx_nan_blocks += scale == num::kE8M0Nan;
        for (std::size_t j = 0; j < index.size(); ++j) {
          const std::uint8_t code = mx_element_code(gen, dtype, values[j], scale);
          if (scale != num::kE8M0Nan && std::fabs(std::ldexp(values[j], kE8M0Bias - scale)) > max) ++out.mx_saturated;
          out.bytes[index[j]] = code;
          out.mx_scales[index[j]] = scale;
          out.quantized.data[index[j]] = mx_dequantize(gen, dtype, code, scale);
        }
      }
  }
  return out;
}

}  // namespace pevp::host
