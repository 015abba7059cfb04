// Structured sparsity: tag unpacking, the per-column product order and the sparse kernel (see sparse.h and
// docs/pe-array-executor.md D-SPARSE-*). Compiled with -ffp-contract=off like the dense kernels: a product is a
// rounded fp32 multiply, then a rounded add.
#include "pevp/pe_array/sparse.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "pevp/pe_array/compute.h"

namespace pevp::pe {
namespace {

float store_value(float v) {
  if (v != v) {
    float nan;
    std::memcpy(&nan, &kCanonicalNan, sizeof nan);
    return nan;
  }
  return v;
}

std::string cell_text(std::size_t cell, std::size_t mi, unsigned tag) {
  return "tag " + std::to_string(tag) + " of tile row " + std::to_string(cell) + ", column " + std::to_string(mi);
}

}  // namespace

bool valid_force_tag_bits(std::int64_t force) {
  return force >= 0 && force < kTagLimit && (force & kFmapSelectMask) == 0;
}

void unpack_tag_row(const std::uint16_t* words, std::size_t m, std::uint8_t force, std::uint8_t* row) {
  for (std::size_t i = 0; i < m; ++i) {
    const unsigned nibble = (words[i / kTagsPerWord] >> (kTagBits * (i % kTagsPerWord))) & (kTagLimit - 1);
    row[m - 1 - i] = static_cast<std::uint8_t>(nibble | force);
  }
}

std::size_t dense_row(std::size_t source, std::size_t fmap, std::size_t fmaps, std::size_t row0, std::size_t k,
                      const isa::ArrayGeometry& geo) {
  const std::size_t gr = geo.group_rows(), first = row0 / gr;
  const std::size_t groups = k == 0 ? 1 : (row0 + k - 1) / gr - first + 1;
  const std::size_t abs = row0 + source;
  return (abs % gr) * groups * fmaps + (abs / gr - first) * fmaps + fmap;
}

SparsePlan plan_sparse(const isa::TileRect& tile, std::size_t k, std::size_t m, std::size_t fmaps,
                       const std::vector<std::uint8_t>& tags, const isa::ArrayGeometry& geo) {
  SparsePlan plan;
  plan.k = k;
  plan.m = m;
  plan.fmaps = fmaps;
  plan.terms.resize(k * m);
  const std::size_t gr = geo.group_rows();
  std::vector<std::size_t> key(k);
  for (std::size_t mi = 0; mi < m; ++mi) {
    SparseTerm* col = &plan.terms[mi * k];
    for (std::size_t cell = 0; cell < k; ++cell) {
      const unsigned tag = tags[cell * m + mi];
      const std::size_t abs = tile.row0 + cell;
      const std::size_t src_abs = std::size_t{tag >> kFmapSelectBits} * gr + abs % gr;
      const unsigned fmap = tag & kFmapSelectMask;
      if (fmap >= fmaps) {
        plan.error = cell_text(cell, mi, tag) + " selects fmap " + std::to_string(fmap) + "; the matmul sends " +
                     std::to_string(fmaps) + " per partition";
        return plan;
      }
      if (src_abs < tile.row0 || src_abs >= tile.row0 + k) {
        plan.error = cell_text(cell, mi, tag) + " selects row group " + std::to_string(tag >> kFmapSelectBits) +
                     " (PE row " + std::to_string(src_abs) + "); the matmul's active rows are PE rows " +
                     std::to_string(tile.row0) + ".." + std::to_string(tile.row0 + k - 1);
        return plan;
      }
      const auto source = static_cast<std::uint32_t>(src_abs - tile.row0);
      col[cell] = {static_cast<std::uint32_t>(cell), source, fmap};
      key[cell] = dense_row(source, fmap, fmaps, tile.row0, k, geo);
    }
    // Dense order of the selected rows; a stable sort keeps two cells selecting one row in cell order.
    std::stable_sort(col, col + k, [&](const SparseTerm& a, const SparseTerm& b) { return key[a.cell] < key[b.cell]; });
  }
  return plan;
}

void sparse_pass(const SparsePlan& plan, const float* weights, const float* moving, std::size_t n, float* dst,
                 bool accumulate) {
  const std::size_t k = plan.k, m = plan.m, f = plan.fmaps;
  std::vector<float> sum(n);
  for (std::size_t mi = 0; mi < m; ++mi) {
    std::fill(sum.begin(), sum.end(), 0.0f);
    for (std::size_t j = 0; j < k; ++j) {
      const SparseTerm& t = plan.terms[mi * k + j];
      const float w = weights[std::size_t{t.cell} * m + mi];
      const float* x = moving + (std::size_t{t.source} * f + t.fmap) * n;
      for (std::size_t i = 0; i < n; ++i) sum[i] = sum[i] + w * x[i];
    }
    float* out = dst + mi * n;
    for (std::size_t i = 0; i < n; ++i) out[i] = store_value(accumulate ? out[i] + sum[i] : sum[i]);
  }
}

void sparse_matmul(isa::Fp32Mode fp32_mode, const SparsePlan& plan, const float* weights, const float* moving,
                   std::size_t n, float* dst, bool accumulate) {
  if (fp32_mode != isa::Fp32Mode::Low_High) {
    sparse_pass(plan, weights, moving, n, dst, accumulate);
    return;
  }
  const std::size_t ns = plan.k * plan.m, nm = plan.k * plan.fmaps * n;
  std::vector<float> st_hi(ns), st_lo(ns), mv_hi(nm), mv_lo(nm);
  for (std::size_t i = 0; i < ns; ++i) std::tie(st_hi[i], st_lo[i]) = split_tf32(weights[i]);
  for (std::size_t i = 0; i < nm; ++i) std::tie(mv_hi[i], mv_lo[i]) = split_tf32(moving[i]);
  sparse_pass(plan, st_hi.data(), mv_hi.data(), n, dst, accumulate);
  sparse_pass(plan, st_hi.data(), mv_lo.data(), n, dst, true);
  sparse_pass(plan, st_lo.data(), mv_hi.data(), n, dst, true);
}

}  // namespace pevp::pe
