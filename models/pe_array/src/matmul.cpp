// The reference fp32 matmul pass and the fp32_mode driver of the PE array (see compute.h and
// docs/numerics-matmul.md); the fast kernel, matmul_pass_fast, is the Highway SIMD code in matmul_simd.cpp.
//
// This file is compiled with -ffp-contract=off (CMakeLists.txt): "sum = sum + a * b" must stay a rounded multiply
// followed by a rounded add. Fusing them into an FMA skips the product's rounding; that is harmless for the narrow
// dtypes (their products are exact in fp32) but changes the bits for full-fp32 inputs (fp32_mode High), and
// whether the compiler fuses would depend on -march, so the reference and the fast kernel could disagree.
#include <sched.h>

#include <cstring>
#include <thread>
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

void matmul(Kernel kernel, isa::Fp32Mode fp32_mode, const float* stationary, const float* moving, float* dst,
            const MatmulShape& s, bool accumulate, unsigned threads) {
  const auto pass = [&](const float* st, const float* mv, float* out, const MatmulShape& shape, bool acc) {
    if (kernel == Kernel::Fast)
      matmul_pass_fast(st, mv, out, shape, acc, threads);
    else
      matmul_pass_reference(st, mv, out, shape, acc);
  };
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

unsigned available_host_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? hw : 1;
}

}  // namespace pevp::pe
