// GEMM references and error metrics (see gemm_reference.h). Built with -ffp-contract=off (CMakeLists.txt): the
// defined-order loops must round every product before the add, exactly as the PE array kernels do.
#include "pevp/host/gemm_reference.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "pevp/numerics/convert.h"
#include "pevp/pe_array/compute.h"

namespace pevp::host {
namespace {

void check_inner(const Matrix& a, const Matrix& b, const char* what) {
  if (a.cols != b.rows)
    throw HostError(std::string(what) + ": A is (" + std::to_string(a.rows) + ", " + std::to_string(a.cols) +
                    ") and B is (" + std::to_string(b.rows) + ", " + std::to_string(b.cols) +
                    "): A's columns must equal B's rows");
}

// ---- fp64 references ----------------------------------------------------------------------------------------------
//
// These are error-measurement references, so they need not be summed in k order: OpenBLAS's dgemm sums (and fuses
// the multiply-adds) in its own blocked order. Every product of two floats is exact in fp64 (24 + 24 significant
// bits < 53), so the only difference from the k-order loop is the rounding of the sums: |dgemm - exact| is at most
// about K * 2^-53 * sum_k |a||b| (~5e-13 of the scale at K = 4096), while the errors these references measure are
// those of fp32 accumulation (2^-24 per add, ~6e-8) or of bf16 / fp8 operands (2^-8 and coarser): some 10^5 times
// larger at least, so the choice of fp64 summation order cannot show in any reported error. Finite inputs cannot
// overflow in fp64 (|a b| < 2^256, K terms), so dgemm's result is finite exactly where the plain loop's is; the
// elements a NaN or an infinity reaches are summed in k order below, which keeps their IEEE special values exactly
// those of the plain loop (NaN from inf * 0 or inf - inf, otherwise the infinity) whatever BLAS does with them.

// The operand in fp64 (|x| for abs_product_sums), the one conversion dgemm needs; marks the rows and the columns
// that hold a NaN or an infinity. Uninitialised storage: every element is written once.
std::unique_ptr<double[]> widen(const Matrix& m, bool abs, std::vector<unsigned char>& bad_rows,
                                std::vector<unsigned char>& bad_cols) {
  std::unique_ptr<double[]> out(new double[m.data.size()]);
  bad_rows.assign(m.rows, 0);
  bad_cols.assign(m.cols, 0);
  for (std::size_t r = 0; r < m.rows; ++r) {
    const float* src = &m.data[r * m.cols];
    double* dst = &out[r * m.cols];
    unsigned char row_bad = 0;
    for (std::size_t c = 0; c < m.cols; ++c) {
      const unsigned char bad = !(std::fabs(src[c]) <= std::numeric_limits<float>::max());  // NaN or +-inf
      row_bad |= bad;
      bad_cols[c] |= bad;
      dst[c] = abs ? std::fabs(static_cast<double>(src[c])) : static_cast<double>(src[c]);
    }
    bad_rows[r] = row_bad;
  }
  return out;
}

// C = A @ B (or |A| @ |B|) in fp64: dgemm, then k-order sums for the elements that see a non-finite input.
MatrixF64 product_fp64(const Matrix& a, const Matrix& b, bool abs) {
  const std::size_t M = a.rows, K = a.cols, N = b.cols;
  MatrixF64 c(M, N);  // +0: the plain loop's value of an empty sum (K = 0)
  if (M == 0 || N == 0 || K == 0) return c;
  std::vector<unsigned char> bad_row, bad_col, unused;
  const std::unique_ptr<double[]> ad = widen(a, abs, bad_row, unused), bd = widen(b, abs, unused, bad_col);
  const bool any_bad = std::find(bad_row.begin(), bad_row.end(), 1) != bad_row.end() ||
                       std::find(bad_col.begin(), bad_col.end(), 1) != bad_col.end();
  // cblas takes int extents (LP64 OpenBLAS); beyond that (a 2^31-element row), every element takes the plain loop.
  const bool blas = M <= INT_MAX && N <= INT_MAX && K <= INT_MAX;
  if (blas)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M), static_cast<int>(N),
                static_cast<int>(K), 1.0, ad.get(), static_cast<int>(K), bd.get(), static_cast<int>(N), 0.0,
                c.data.data(), static_cast<int>(N));
  if (blas && !any_bad) return c;
  // The plain loop's order for each element: s = +0, then s = s + a * b for k = 0 .. K-1 (one rounding each, this
  // file is unfused). Whole rows run k-outer so the inner loop walks B's row.
  for (std::size_t m = 0; m < M; ++m) {
    if (blas && !bad_row[m]) continue;
    double* row = &c.data[m * N];
    std::fill(row, row + N, 0.0);
    for (std::size_t k = 0; k < K; ++k) {
      const double x = ad[m * K + k];
      const double* brow = &bd[k * N];
      for (std::size_t n = 0; n < N; ++n) row[n] = row[n] + x * brow[n];
    }
  }
  if (!blas) return c;
  for (std::size_t n = 0; n < N; ++n) {
    if (!bad_col[n]) continue;
    for (std::size_t m = 0; m < M; ++m) {
      if (bad_row[m]) continue;  // done above
      double s = 0.0;
      for (std::size_t k = 0; k < K; ++k) s = s + ad[m * K + k] * bd[k * N + n];
      c.data[m * N + n] = s;
    }
  }
  return c;
}

// ---- the defined-order reference ----------------------------------------------------------------------------------
//
// Per output element the additions are exactly the defined order's (gemm_reference.h): per k-tile s = +0, then
// s = s + a[m][k] * b[k][n] for k in the tile, in k order, then C = canonical(first tile ? s : C + s) (and, Low_High,
// the two more passes). Only the order in which *different* elements are worked on changes, which no element's bits
// depend on: the loops below hold a block of MR rows x NB columns of partial sums s in vector registers and run the
// k loop over the block, so one vector lane is one (m, n) and gets one rounded multiply and one rounded add per k,
// in k order (no FMA: -ffp-contract=off). B is packed in panels of NB columns (k-major, zero-padded to NB), a panel
// chunk of whole k-tiles stays in L1 while every row block of a thread runs over it; threads take disjoint row blocks.
// The vector code (GCC / clang vector extensions, compiled for AVX-512, AVX2 and the baseline) is this file's own,
// independent of the PE array's kernel it checks.

float canonical(float v) { return v != v ? num::bits_float(pe::kCanonicalNan) : v; }

struct DefinedOrderJob {
  std::size_t M = 0, K = 0, N = 0, k_tile = 0;
  std::size_t k_chunk = 0;        // whole k-tiles: the part of a panel that is worked on at once
  bool three_pass = false;        // Low_High
  const float* a_hi = nullptr;    // M x K, row-major
  const float* a_lo = nullptr;    // Low_High: the lo parts of A
  const float* b_hi = nullptr;    // B in panels: panel p, row k, column j at (p * K + k) * NB + j
  const float* b_lo = nullptr;    // Low_High: the lo parts of B, the same layout
  const float* zero_row = nullptr;  // K zeros: the rows past M of a short last row block
  float* c = nullptr;             // M x N, row-major
};

// The tile's partial sums for MR rows (arow) x NB columns of one panel, k = k0 .. k0 + len - 1, written to
// out[i * NB + j].
template <class V, int MR, int NV>
[[gnu::always_inline]] inline void tile_sums(const float* const* arow, const float* panel, std::size_t k0,
                                             std::size_t len, float* out) {
  constexpr int W = static_cast<int>(sizeof(V) / sizeof(float)), NB = W * NV;
  V s[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) s[i][v] = V{};  // +0 in every lane
  const float* bk = panel + k0 * NB;
  for (std::size_t k = k0; k < k0 + len; ++k, bk += NB) {
    V b[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) std::memcpy(&b[v], bk + v * W, sizeof(V));
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const float x = arow[i][k];
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) s[i][v] = s[i][v] + x * b[v];  // x splat to every lane: a_i * b_j, then + s
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) std::memcpy(out + i * NB + v * W, &s[i][v], sizeof(V));
}

// C[m0 + i][n0 + j] = canonical(first ? s : C + s) for the mc x nc elements of the block that are in C.
template <int NB>
[[gnu::always_inline]] inline void merge(const DefinedOrderJob& job, std::size_t m0, std::size_t mc, std::size_t n0,
                                         std::size_t nc, const float* sums, bool first) {
  for (std::size_t i = 0; i < mc; ++i) {
    float* crow = job.c + (m0 + i) * job.N + n0;
    const float* srow = sums + i * NB;
    if (first)
      for (std::size_t j = 0; j < nc; ++j) crow[j] = canonical(srow[j]);
    else
      for (std::size_t j = 0; j < nc; ++j) crow[j] = canonical(crow[j] + srow[j]);
  }
}

// Row blocks [block_begin, block_end) of MR rows, every panel, every k-tile.
template <class V, int MR, int NV>
[[gnu::always_inline]] inline void defined_order_rows(const DefinedOrderJob& job, std::size_t block_begin,
                                                      std::size_t block_end) {
  constexpr std::size_t NB = sizeof(V) / sizeof(float) * NV;
  alignas(64) float sums[MR * NB];
  const std::size_t panels = (job.N + NB - 1) / NB;
  for (std::size_t p = 0; p < panels; ++p) {
    const std::size_t n0 = p * NB, nc = std::min(NB, job.N - n0);
    const float* b_hi = job.b_hi + p * job.K * NB;
    const float* b_lo = job.three_pass ? job.b_lo + p * job.K * NB : nullptr;
    for (std::size_t c0 = 0; c0 < job.K; c0 += job.k_chunk) {
      const std::size_t c1 = std::min(job.K, c0 + job.k_chunk);
      for (std::size_t blk = block_begin; blk < block_end; ++blk) {
        const std::size_t m0 = blk * MR, mc = std::min<std::size_t>(MR, job.M - m0);
        const float* a_hi[MR];
        const float* a_lo[MR];
        for (std::size_t i = 0; i < static_cast<std::size_t>(MR); ++i) {
          a_hi[i] = i < mc ? job.a_hi + (m0 + i) * job.K : job.zero_row;
          a_lo[i] = job.three_pass && i < mc ? job.a_lo + (m0 + i) * job.K : job.zero_row;
        }
        for (std::size_t t0 = c0; t0 < c1; t0 += job.k_tile) {
          const std::size_t len = std::min(job.k_tile, job.K - t0);
          tile_sums<V, MR, NV>(a_hi, b_hi, t0, len, sums);
          merge<NB>(job, m0, mc, n0, nc, sums, t0 == 0);
          if (job.three_pass) {
            tile_sums<V, MR, NV>(a_hi, b_lo, t0, len, sums);
            merge<NB>(job, m0, mc, n0, nc, sums, false);
            tile_sums<V, MR, NV>(a_lo, b_hi, t0, len, sums);
            merge<NB>(job, m0, mc, n0, nc, sums, false);
          }
        }
      }
    }
  }
}

typedef float F32x4 __attribute__((vector_size(16)));
typedef float F32x8 __attribute__((vector_size(32)));
typedef float F32x16 __attribute__((vector_size(64)));

// The register blocks: MR rows x NV vectors of partial sums, sized to the vector registers (16 xmm / ymm: 12
// sums + 3 of B; 32 zmm: 24 sums + 4 of B).
struct Blocking {
  std::size_t rows = 0, cols = 0;  // MR, NB
  void (*run)(const DefinedOrderJob&, std::size_t, std::size_t) = nullptr;
};

void rows_baseline(const DefinedOrderJob& job, std::size_t b0, std::size_t b1) {
  defined_order_rows<F32x4, 4, 3>(job, b0, b1);
}
#if defined(__x86_64__) || defined(__i386__)
#define PEVP_REFERENCE_X86 1
__attribute__((target("avx2"))) void rows_avx2(const DefinedOrderJob& job, std::size_t b0, std::size_t b1) {
  defined_order_rows<F32x8, 4, 3>(job, b0, b1);
}
__attribute__((target("avx512f"))) void rows_avx512(const DefinedOrderJob& job, std::size_t b0, std::size_t b1) {
  defined_order_rows<F32x16, 6, 4>(job, b0, b1);
}
#endif

bool cpu_supports(ReferenceIsa isa) {
#ifdef PEVP_REFERENCE_X86
  __builtin_cpu_init();
  if (isa == ReferenceIsa::Avx512) return __builtin_cpu_supports("avx512f");
  if (isa == ReferenceIsa::Avx2) return __builtin_cpu_supports("avx2");
#endif
  return isa == ReferenceIsa::Auto || isa == ReferenceIsa::Baseline;
}

Blocking blocking(ReferenceIsa isa) {
  if (isa == ReferenceIsa::Auto)
    isa = cpu_supports(ReferenceIsa::Avx512) ? ReferenceIsa::Avx512
          : cpu_supports(ReferenceIsa::Avx2) ? ReferenceIsa::Avx2
                                             : ReferenceIsa::Baseline;
  if (!cpu_supports(isa)) throw HostError("reference_defined_order: this CPU cannot run the requested vector code");
#ifdef PEVP_REFERENCE_X86
  if (isa == ReferenceIsa::Avx512) return {6, 64, rows_avx512};
  if (isa == ReferenceIsa::Avx2) return {4, 24, rows_avx2};
#endif
  return {4, 12, rows_baseline};
}

// The operand values the array multiplies: x itself (None, High), x rounded to tf32 (Low), or the hi and lo parts of
// the Low_High split.
template <isa::Fp32Mode Mode>
void operand_parts(float x, float* hi, float* lo) {
  if constexpr (Mode == isa::Fp32Mode::Low) {
    *hi = num::to_tf32(x);
  } else if constexpr (Mode == isa::Fp32Mode::Low_High) {
    std::tie(*hi, *lo) = pe::split_tf32(x);
  } else {
    *hi = x;
  }
}

// Share t of `shares` of the operands as the array multiplies them: A's elements (Low, Low_High) and B's panels.
template <isa::Fp32Mode Mode>
void prepare_share(const Matrix& a, const Matrix& b, std::size_t nb, float* a_hi, float* a_lo, float* b_hi,
                   float* b_lo, std::size_t t, std::size_t shares) {
  constexpr bool split = Mode == isa::Fp32Mode::Low_High;
  if constexpr (Mode == isa::Fp32Mode::Low || split)
    for (std::size_t i = a.data.size() * t / shares; i < a.data.size() * (t + 1) / shares; ++i)
      operand_parts<Mode>(a.data[i], &a_hi[i], split ? &a_lo[i] : nullptr);
  const std::size_t K = b.rows, N = b.cols, panels = (N + nb - 1) / nb;
  for (std::size_t p = panels * t / shares; p < panels * (t + 1) / shares; ++p) {
    const std::size_t nc = std::min(nb, N - p * nb);
    for (std::size_t k = 0; k < K; ++k) {
      const std::size_t at = (p * K + k) * nb;
      const float* src = &b.data[k * N + p * nb];
      for (std::size_t j = 0; j < nc; ++j) operand_parts<Mode>(src[j], &b_hi[at + j], split ? &b_lo[at + j] : nullptr);
      std::fill(b_hi + at + nc, b_hi + at + nb, 0.0f);
      if constexpr (split) std::fill(b_lo + at + nc, b_lo + at + nb, 0.0f);
    }
  }
}

// Runs blocks [0, blocks) on `threads` threads (the calling one included), in contiguous shares. A thread that
// cannot be started leaves its share to the calling thread.
template <class F>
void parallel_blocks(std::size_t blocks, unsigned threads, F f) {
  threads = static_cast<unsigned>(std::min<std::size_t>(std::max(threads, 1u), std::max<std::size_t>(blocks, 1)));
  std::vector<std::thread> pool;
  std::vector<std::pair<std::size_t, std::size_t>> own;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t b0 = blocks * t / threads, b1 = blocks * (t + 1) / threads;
    if (t == 0) {
      own.emplace_back(b0, b1);
      continue;
    }
    try {
      pool.emplace_back(f, b0, b1);
    } catch (const std::system_error&) {
      own.emplace_back(b0, b1);
    }
  }
  for (const auto& [b0, b1] : own) f(b0, b1);
  for (auto& t : pool) t.join();
}

}  // namespace

MatrixF64 reference_fp64(const Matrix& a, const Matrix& b) {
  check_inner(a, b, "reference_fp64");
  return product_fp64(a, b, false);
}

MatrixF64 abs_product_sums(const Matrix& a, const Matrix& b) {
  check_inner(a, b, "abs_product_sums");
  return product_fp64(a, b, true);
}

bool reference_isa_supported(ReferenceIsa isa) { return cpu_supports(isa); }

Matrix reference_defined_order(const Matrix& a, const Matrix& b, isa::Fp32Mode mode, std::size_t k_tile) {
  return reference_defined_order(a, b, mode, k_tile, DefinedOrderOptions{});
}

Matrix reference_defined_order(const Matrix& a, const Matrix& b, isa::Fp32Mode mode, std::size_t k_tile,
                               const DefinedOrderOptions& options) {
  check_inner(a, b, "reference_defined_order");
  if (k_tile == 0) throw HostError("reference_defined_order: k_tile must be at least 1");
  const Blocking blk = blocking(options.isa);
  const std::size_t M = a.rows, K = a.cols, N = b.cols;
  Matrix c(M, N);  // K = 0: no k-tile, C stays +0
  if (M == 0 || N == 0 || K == 0) return c;
  DefinedOrderJob job;
  job.M = M;
  job.K = K;
  job.N = N;
  job.k_tile = std::min(k_tile, K);
  // A panel chunk of about 24 KiB (half of a 48 KiB L1), in whole k-tiles, at least one.
  const std::size_t chunk_rows = std::max<std::size_t>(1, (24u << 10) / (blk.cols * sizeof(float)));
  job.k_chunk = std::max<std::size_t>(1, chunk_rows / job.k_tile) * job.k_tile;
  job.three_pass = mode == isa::Fp32Mode::Low_High;
  // Threads pay off from a few million multiply-adds (starting one costs some 10 us).
  unsigned threads = options.threads != 0 ? options.threads : pe::available_host_threads();
  if (options.threads == 0 && static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) < 0x1p22)
    threads = 1;
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, M * N));

  // The operands as the array multiplies them (operand_parts): A row-major (A itself when its values are used as
  // they are), B in panels of NB columns -- panel p, row k, column j at (p * K + k) * NB + j, zeros past N. Made in
  // parallel, thread t taking share t of A's rows and of the panels (uninitialised storage, written once).
  const std::size_t NB = blk.cols, panels = (N + NB - 1) / NB;
  const bool transform_a = mode == isa::Fp32Mode::Low || job.three_pass;
  std::unique_ptr<float[]> a_hi(transform_a ? new float[M * K] : nullptr);
  std::unique_ptr<float[]> a_lo(job.three_pass ? new float[M * K] : nullptr);
  std::unique_ptr<float[]> b_hi(new float[panels * K * NB]);
  std::unique_ptr<float[]> b_lo(job.three_pass ? new float[panels * K * NB] : nullptr);
  parallel_blocks(threads, threads, [&](std::size_t t0, std::size_t t1) {
    for (std::size_t t = t0; t < t1; ++t) switch (mode) {
        case isa::Fp32Mode::Low:
          prepare_share<isa::Fp32Mode::Low>(a, b, NB, a_hi.get(), nullptr, b_hi.get(), nullptr, t, threads);
          break;
        case isa::Fp32Mode::Low_High:
          prepare_share<isa::Fp32Mode::Low_High>(a, b, NB, a_hi.get(), a_lo.get(), b_hi.get(), b_lo.get(), t,
                                                  threads);
          break;
        default:
          prepare_share<isa::Fp32Mode::High>(a, b, NB, nullptr, nullptr, b_hi.get(), nullptr, t, threads);
      }
  });
  const std::vector<float> zero_row(K, 0.0f);
  job.a_hi = transform_a ? a_hi.get() : a.data.data();
  job.a_lo = a_lo.get();
  job.b_hi = b_hi.get();
  job.b_lo = b_lo.get();
  job.zero_row = zero_row.data();
  job.c = c.data.data();
  const std::size_t blocks = (M + blk.rows - 1) / blk.rows;
  parallel_blocks(blocks, threads, [&job, &blk](std::size_t b0, std::size_t b1) { blk.run(job, b0, b1); });
  return c;
}

Matrix reference_defined_order(const GemmPlan& plan, const EncodedOperand& a, const EncodedOperand& b) {
  check_operands(plan, a, b);
  return reference_defined_order(a.quantized, b.quantized, plan.options.fp32_mode, plan.k_tile);
}

ErrorStats compare(const Matrix& c, const MatrixF64& ref, const ErrorOptions& o) {
  if (c.rows != ref.rows || c.cols != ref.cols)
    throw HostError("compare: the result is (" + std::to_string(c.rows) + ", " + std::to_string(c.cols) +
                    ") and the reference (" + std::to_string(ref.rows) + ", " + std::to_string(ref.cols) + ")");
  ErrorStats s;
  s.elements = c.data.size();
  const double inf = HUGE_VAL;
  for (std::size_t i = 0; i < c.data.size(); ++i) {
    const double x = c.data[i], r = ref.data[i];
    double abs = 0.0, rel = 0.0;
    if (std::isnan(x) || std::isnan(r)) {
      abs = rel = std::isnan(x) && std::isnan(r) ? 0.0 : inf;
      s.non_finite_equal += std::isnan(x) && std::isnan(r);
    } else if (std::isinf(x) || std::isinf(r)) {
      abs = rel = x == r ? 0.0 : inf;
      s.non_finite_equal += x == r;
    } else {
      abs = std::fabs(x - r);
      rel = abs / std::max(std::fabs(r), o.tiny);
    }
    s.max_abs_error = std::max(s.max_abs_error, abs);
    if (rel > s.max_rel_error) {
      s.max_rel_error = rel;
      s.worst_row = i / c.cols;
      s.worst_col = i % c.cols;
    }
    if (rel > o.rel_tolerance) ++s.mismatches;
  }
  return s;
}

std::size_t count_bit_mismatches(const Matrix& c, const Matrix& ref) {
  if (c.rows != ref.rows || c.cols != ref.cols)
    throw HostError("count_bit_mismatches: shapes (" + std::to_string(c.rows) + ", " + std::to_string(c.cols) +
                    ") and (" + std::to_string(ref.rows) + ", " + std::to_string(ref.cols) + ") differ");
  std::size_t n = 0;
  for (std::size_t i = 0; i < c.data.size(); ++i) n += num::float_bits(c.data[i]) != num::float_bits(ref.data[i]);
  return n;
}

}  // namespace pevp::host
