// The fp32 matmul kernels of the PE array (see compute.h and docs/numerics-matmul.md).
//
// This file is compiled with -ffp-contract=off (CMakeLists.txt): "sum = sum + a * b" must stay a rounded multiply
// followed by a rounded add. Fusing them into an FMA skips the product's rounding; that is harmless for the narrow
// dtypes (their products are exact in fp32) but changes the bits for full-fp32 inputs (fp32_mode High), and
// whether the compiler fuses would depend on -march, so the reference and the fast kernel could disagree.
#include <cstring>
#include <tuple>
#include <vector>

#include "pevp/pe_array/compute.h"

// x87 arithmetic (FLT_EVAL_METHOD 2) would keep partial sums in extended precision.
#if defined(__FLT_EVAL_METHOD__) && __FLT_EVAL_METHOD__ != 0
#error "pevp_pe_compute needs FLT_EVAL_METHOD == 0 (SSE/NEON fp32 arithmetic), not x87 extended precision"
#endif

namespace pevp::pe {

namespace {

inline float store_value(float v) {
  if (v != v) {
    float nan;
    std::memcpy(&nan, &kCanonicalNan, sizeof nan);
    return nan;
  }
  return v;
}

// One MR x NR block of dst, its accumulators held in registers, k innermost so every element sums in k order.
// The fixed trip counts let the compiler unroll i and vectorise j (NR lanes across N).
template <std::size_t MR, std::size_t NR>
inline void block(const float* stationary, const float* moving, float* dst, const MatmulShape& s, std::size_t m0,
                  std::size_t n0, bool accumulate) {
  float acc[MR][NR] = {};  // +0: the defined starting value
  for (std::size_t k = 0; k < s.k; ++k) {
    // Row pointers are formed from the index, never stepped past the last row
    // (that would be undefined behaviour). The target is built without GCC's
    // loop vectorizer, which read a row past the operands (CMakeLists.txt).
    const float* a = stationary + k * s.m + m0;
    const float* b = moving + k * s.n + n0;
    float bv[NR];
    for (std::size_t j = 0; j < NR; ++j) bv[j] = b[j];
    for (std::size_t i = 0; i < MR; ++i) {
      const float ai = a[i];
      for (std::size_t j = 0; j < NR; ++j) acc[i][j] = acc[i][j] + ai * bv[j];
    }
  }
  for (std::size_t i = 0; i < MR; ++i) {
    float* d = dst + (m0 + i) * s.n + n0;
    for (std::size_t j = 0; j < NR; ++j) d[j] = store_value(accumulate ? d[j] + acc[i][j] : acc[i][j]);
  }
}

// Rows m0..m0+MR-1 across one column panel [n0, n1): NR = 8 tiles, then 4, then single columns.
template <std::size_t MR>
inline void rows_panel(const float* st, const float* mv, float* dst, const MatmulShape& s, std::size_t m0,
                       std::size_t n0, std::size_t n1, bool accumulate) {
  std::size_t n = n0;
  for (; n + 8 <= n1; n += 8) block<MR, 8>(st, mv, dst, s, m0, n, accumulate);
  for (; n + 4 <= n1; n += 4) block<MR, 4>(st, mv, dst, s, m0, n, accumulate);
  for (; n < n1; ++n) block<MR, 1>(st, mv, dst, s, m0, n, accumulate);
}

// Register block: 6 rows x 8 columns = 12 SSE (or 6 AVX) accumulators.
constexpr std::size_t kMr = 6;
// Column panel: the moving panel K x kPanel (128 x 64 fp32 = 32 KiB) stays in L1 while every row block uses it.
constexpr std::size_t kPanel = 64;

}  // namespace

void matmul_pass_reference(const float* stationary, const float* moving, float* dst, const MatmulShape& s,
                           bool accumulate) {
  for (std::size_t m = 0; m < s.m; ++m) {
    for (std::size_t n = 0; n < s.n; ++n) {
      float sum = 0.0f;
      for (std::size_t k = 0; k < s.k; ++k) sum = sum + stationary[k * s.m + m] * moving[k * s.n + n];
      float& d = dst[m * s.n + n];
      d = store_value(accumulate ? d + sum : sum);
    }
  }
}

void matmul_pass_fast(const float* stationary, const float* moving, float* dst, const MatmulShape& s,
                      bool accumulate) {
  for (std::size_t n0 = 0; n0 < s.n; n0 += kPanel) {
    const std::size_t n1 = n0 + kPanel < s.n ? n0 + kPanel : s.n;
    std::size_t m = 0;
    for (; m + kMr <= s.m; m += kMr) rows_panel<kMr>(stationary, moving, dst, s, m, n0, n1, accumulate);
    for (; m + 2 <= s.m; m += 2) rows_panel<2>(stationary, moving, dst, s, m, n0, n1, accumulate);
    for (; m < s.m; ++m) rows_panel<1>(stationary, moving, dst, s, m, n0, n1, accumulate);
  }
}

void matmul(Kernel kernel, isa::Fp32Mode fp32_mode, const float* stationary, const float* moving, float* dst,
            const MatmulShape& s, bool accumulate) {
  auto pass = kernel == Kernel::Fast ? &matmul_pass_fast : &matmul_pass_reference;
  if (fp32_mode != isa::Fp32Mode::Low_High) {
    pass(stationary, moving, dst, s, accumulate);
    return;
  }
  const std::size_t ns = s.k * s.m, nm = s.k * s.n;
  std::vector<float> st_hi(ns), st_lo(ns), mv_hi(nm), mv_lo(nm);
  for (std::size_t i = 0; i < ns; ++i) std::tie(st_hi[i], st_lo[i]) = split_tf32(stationary[i]);
  for (std::size_t i = 0; i < nm; ++i) std::tie(mv_hi[i], mv_lo[i]) = split_tf32(moving[i]);
  pass(st_hi.data(), mv_hi.data(), dst, s, accumulate);
  pass(st_hi.data(), mv_lo.data(), dst, s, true);
  pass(st_lo.data(), mv_hi.data(), dst, s, true);
}

}  // namespace pevp::pe
