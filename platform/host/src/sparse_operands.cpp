// Structured-sparse operands: host-side N:M pruning and the compressed rows of the sparse path (see
// sparse_operands.h and docs/gemm-tiling.md D-GEMM-SPARSE).
#include "pevp/host/sparse_operands.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "pevp/host/operands.h"
#include "pevp/pe_array/sparse.h"

namespace pevp::host {
namespace {

// The published patterns and the fmap count that carries each: N = 4 kept of 4F rows natively, the others as
// subsets (D-SPARSE-SELECT): every 4F-row block holds at most one kept value per row group.
constexpr SparsePattern kPublished[] = {{4, 16, 4}, {4, 12, 3}, {4, 8, 2}, {2, 8, 4}, {2, 4, 2}, {1, 4, 4}, {1, 2, 2}};

// The row groups a 4-bit tag names (D-SPARSE-SELECT); validate_gemm requires the geometry to have as many.
constexpr std::size_t kTagRowGroups = pe::kTagLimit >> pe::kFmapSelectBits;

// Bytes of one u16 weight or tag of a TAG_WEIGHT element.
constexpr std::size_t kHalfBytes = 2;

// The tag's row group sits above its fmap bits (D-SPARSE-SELECT).
std::uint16_t tag_of(std::size_t position, unsigned fmaps) {
  return static_cast<std::uint16_t>((position / fmaps) << pe::kFmapSelectBits | position % fmaps);
}

void check_ranges(const char* what, std::size_t k0, std::size_t k_count, std::size_t k_extent, std::size_t f0,
                  std::size_t f_count, std::size_t f_extent, std::size_t tile_rows) {
  if (k0 > k_extent || k_count > k_extent - k0 || f0 > f_extent || f_count > f_extent - f0 || k_count > tile_rows)
    throw HostError(std::string("sparse ") + what + " load (k " + std::to_string(k0) + "+" + std::to_string(k_count) +
                    ", free " + std::to_string(f0) + "+" + std::to_string(f_count) + ") does not fit the operand (" +
                    std::to_string(k_extent) + " contraction x " + std::to_string(f_extent) + " free) or its " +
                    std::to_string(tile_rows) + "-row k-tile");
}

}  // namespace

std::optional<SparsePattern> parse_sparsity(std::string_view text) {
  for (const SparsePattern& p : kPublished)
    if (text == sparsity_name(p)) return p;
  return std::nullopt;
}

std::string sparsity_name(const SparsePattern& p) { return std::to_string(p.n) + ":" + std::to_string(p.m); }

bool is_sparse_dtype(isa::Dtype d) { return d == isa::Dtype::BFLOAT16 || d == isa::Dtype::FP16; }

EncodedOperand encode_sparse_operand(const Matrix& a, isa::Generation gen, isa::Dtype dtype, const SparsePattern& p) {
  if (!is_sparse_dtype(dtype))
    throw HostError("sparse operand dtype " + std::string(isa::name(dtype)) +
                    ": a TAG_WEIGHT load carries a 16-bit BFLOAT16 or FP16 weight");
  EncodedOperand e = encode_operand(a, gen, dtype);
  e.sparsity = p;
  e.sparse_kept.assign(a.rows * a.cols, 0);
  // Ranked by the encoded value, the one the array multiplies; NaN above every number so that it propagates.
  auto rank = [&](std::size_t i) {
    const float v = e.quantized.data[i];
    return std::isnan(v) ? HUGE_VAL : static_cast<double>(std::fabs(v));
  };
  std::vector<std::size_t> group(p.m);
  for (std::size_t r = 0; r < a.rows; ++r)
    for (std::size_t k0 = 0; k0 < a.cols; k0 += p.m) {
      const std::size_t size = std::min<std::size_t>(p.m, a.cols - k0);
      group.resize(size);
      std::iota(group.begin(), group.end(), r * a.cols + k0);
      std::stable_sort(group.begin(), group.end(), [&](std::size_t x, std::size_t y) { return rank(x) > rank(y); });
      for (std::size_t i = 0; i < size; ++i) {
        const std::size_t at = group[i];
        if (i < p.n) {
          e.sparse_kept[at] = 1;
          continue;
        }
        e.quantized.data[at] = 0.0f;
        std::memset(e.bytes.data() + at * e.element_bytes, 0, e.element_bytes);
      }
    }
  return e;
}

void gather_sparse_weights(const EncodedOperand& a, const SparsePattern& p, std::size_t tile_rows,
                           std::size_t k0, std::size_t k_count, std::size_t f0, std::size_t f_count,
                           std::uint8_t* out) {
  const std::size_t groups = kTagRowGroups, gr = tile_rows / groups, block = groups * p.fmaps;
  check_ranges("stationary", k0, k_count, a.cols, f0, f_count, a.rows, tile_rows * p.fmaps);
  if (a.sparse_kept.size() != a.rows * a.cols || a.element_bytes != kHalfBytes)
    throw HostError("sparse stationary load: operand A is not a pruned 16-bit operand");
  const std::size_t per = f_count * 2 * kHalfBytes;
  std::memset(out, 0, tile_rows * per);
  for (std::size_t j = 0; j < f_count; ++j) {
    const std::size_t row = f0 + j;
    for (std::size_t q = 0; q * block < k_count; ++q) {
      std::size_t slot = 0;
      for (std::size_t pos = 0; pos < block && q * block + pos < k_count; ++pos) {
        const std::size_t k = k0 + q * block + pos;
        if (!a.sparse_kept[row * a.cols + k]) continue;
        if (slot == groups)
          throw HostError("sparse stationary load: row " + std::to_string(row) + " keeps more than " +
                          std::to_string(groups) + " values of contraction rows " + std::to_string(k0 + q * block) +
                          ".." + std::to_string(k0 + q * block + block - 1) + " (not pruned " + sparsity_name(p) + ")");
        std::uint8_t* cell = out + (slot++ * gr + q) * per + j * 2 * kHalfBytes;
        std::memcpy(cell, a.element(row, k), kHalfBytes);
        const std::uint16_t tag = tag_of(pos, p.fmaps);
        cell[kHalfBytes] = static_cast<std::uint8_t>(tag & 0xFF);
        cell[kHalfBytes + 1] = static_cast<std::uint8_t>(tag >> 8);
      }
    }
  }
}

void gather_sparse_fmaps(const EncodedOperand& b, const SparsePattern& p, std::size_t tile_rows,
                         std::size_t k0, std::size_t k_count, std::size_t f0, std::size_t f_count, std::uint8_t* out) {
  const std::size_t gr = tile_rows / kTagRowGroups, block = kTagRowGroups * p.fmaps, es = b.element_bytes;
  check_ranges("moving", k0, k_count, b.rows, f0, f_count, b.cols, tile_rows * p.fmaps);
  const std::size_t per = f_count * p.fmaps * es;
  std::memset(out, 0, tile_rows * per);
  for (std::size_t partition = 0; partition < tile_rows; ++partition) {
    const std::size_t g = partition / gr, q = partition % gr;
    for (std::size_t f = 0; f < p.fmaps; ++f) {
      const std::size_t d = q * block + g * p.fmaps + f;
      if (d >= k_count) continue;
      std::memcpy(out + partition * per + f * f_count * es, b.element(k0 + d, f0), f_count * es);
    }
  }
}

}  // namespace pevp::host
