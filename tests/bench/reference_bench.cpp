// What the host references of `pe-vp gemm`'s check cost (platform/host/src/gemm_reference.cpp), against the plain
// loops they replaced, kept here as the baseline and measured in the same run:
//   DefinedOrder    reference_defined_order on bf16-quantized operands (the default `pe-vp gemm` check) and on fp32
//                   Low_High (three passes); "Old" is the per-element loop it was, "New" the blocked, vectorised
//                   and threaded one (threads:0 = the default, every host thread)
//   Fp64, AbsSums   reference_fp64 and abs_product_sums: "Old" the k-order fp64 triple loops, "New" OpenBLAS dgemm
//                   (OpenBLAS at its default thread count unless OPENBLAS_NUM_THREADS says otherwise)
// Each Old benchmark also compares its result with the new one: counter "mismatches" (defined order: elements whose
// bits differ, must be 0) or "max_err_per_scale" (fp64: max |new - old| / sum |a||b|, ~1e-16).
// Arguments: M, K, N (2048 x 4096 x 1024 by default: the shape whose check cost 25-45x the simulation). Wall-clock
// time (the new references run on several threads). Run by hand:
//   OPENBLAS_NUM_THREADS=2 build/tests/bench/reference_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "pevp/host/gemm_reference.h"
#include "pevp/host/operands.h"
#include "pevp/numerics/convert.h"
#include "pevp/pe_array/compute.h"

namespace {
using namespace pevp;
using isa::Fp32Mode;

// ---- the old references, verbatim but for names (this file is built with -ffp-contract=off, as the library) ----

std::vector<float> transpose(const host::Matrix& b) {
  std::vector<float> t(b.rows * b.cols);
  for (std::size_t k = 0; k < b.rows; ++k)
    for (std::size_t n = 0; n < b.cols; ++n) t[n * b.rows + k] = b.at(k, n);
  return t;
}

float dot_in_order(const float* x, const float* y, std::size_t len) {
  float s = 0.0f;
  for (std::size_t i = 0; i < len; ++i) s = s + x[i] * y[i];
  return s;
}

float canonical(float v) { return v != v ? num::bits_float(pe::kCanonicalNan) : v; }

host::MatrixF64 old_reference_fp64(const host::Matrix& a, const host::Matrix& b) {
  const auto bt = transpose(b);
  host::MatrixF64 c(a.rows, b.cols);
  for (std::size_t m = 0; m < a.rows; ++m)
    for (std::size_t n = 0; n < b.cols; ++n) {
      double s = 0.0;
      for (std::size_t k = 0; k < a.cols; ++k)
        s += static_cast<double>(a.at(m, k)) * static_cast<double>(bt[n * a.cols + k]);
      c.at(m, n) = s;
    }
  return c;
}

host::MatrixF64 old_abs_product_sums(const host::Matrix& a, const host::Matrix& b) {
  const auto bt = transpose(b);
  host::MatrixF64 c(a.rows, b.cols);
  for (std::size_t m = 0; m < a.rows; ++m)
    for (std::size_t n = 0; n < b.cols; ++n) {
      double s = 0.0;
      for (std::size_t k = 0; k < a.cols; ++k)
        s += std::fabs(static_cast<double>(a.at(m, k))) * std::fabs(static_cast<double>(bt[n * a.cols + k]));
      c.at(m, n) = s;
    }
  return c;
}

host::Matrix old_reference_defined_order(const host::Matrix& a, const host::Matrix& b, Fp32Mode mode,
                                         std::size_t k_tile) {
  const std::size_t M = a.rows, K = a.cols, N = b.cols;
  std::vector<float> a_hi = a.data, b_hi = transpose(b), a_lo, b_lo;
  if (mode == Fp32Mode::Low) {
    for (float& v : a_hi) v = num::to_tf32(v);
    for (float& v : b_hi) v = num::to_tf32(v);
  } else if (mode == Fp32Mode::Low_High) {
    a_lo.resize(a_hi.size());
    b_lo.resize(b_hi.size());
    for (std::size_t i = 0; i < a_hi.size(); ++i) std::tie(a_hi[i], a_lo[i]) = pe::split_tf32(a_hi[i]);
    for (std::size_t i = 0; i < b_hi.size(); ++i) std::tie(b_hi[i], b_lo[i]) = pe::split_tf32(b_hi[i]);
  }
  const bool three_pass = mode == Fp32Mode::Low_High;
  host::Matrix c(M, N);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (std::size_t t0 = 0; t0 < K; t0 += k_tile) {
        const std::size_t len = std::min(k_tile, K - t0);
        const std::size_t ai = m * K + t0, bi = n * K + t0;
        const float s = dot_in_order(&a_hi[ai], &b_hi[bi], len);
        acc = canonical(t0 == 0 ? s : acc + s);
        if (three_pass) {
          acc = canonical(acc + dot_in_order(&a_hi[ai], &b_lo[bi], len));
          acc = canonical(acc + dot_in_order(&a_lo[ai], &b_hi[bi], len));
        }
      }
      c.at(m, n) = acc;
    }
  return c;
}

// ---- inputs -------------------------------------------------------------------------------------------------------

constexpr std::size_t kKTile = 128;  // the presets' k-tile (128 array rows)

// Uniform [-1, 1) operands, as fp32 and quantized to bf16 (what the default check's references see), made once per
// shape and shared by the benchmarks.
struct Operands {
  host::Matrix a, b, a_bf16, b_bf16;
};
const Operands& operands(const benchmark::State& state) {
  static std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, Operands> cache;
  const auto key = std::tuple{state.range(0), state.range(1), state.range(2)};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const auto [m, k, n] = key;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Operands o;
  o.a = host::Matrix(static_cast<std::size_t>(m), static_cast<std::size_t>(k));
  o.b = host::Matrix(static_cast<std::size_t>(k), static_cast<std::size_t>(n));
  for (float& v : o.a.data) v = u(rng);
  for (float& v : o.b.data) v = u(rng);
  o.a_bf16 = host::encode_operand(o.a, isa::Generation::MARIANA, isa::Dtype::BFLOAT16).quantized;
  o.b_bf16 = host::encode_operand(o.b, isa::Generation::MARIANA, isa::Dtype::BFLOAT16).quantized;
  return cache.emplace(key, std::move(o)).first->second;
}

void set_macs(benchmark::State& state, double passes) {
  const double macs = static_cast<double>(state.range(0)) * static_cast<double>(state.range(1)) *
                      static_cast<double>(state.range(2)) * passes;
  state.counters["MACs"] = benchmark::Counter(macs * static_cast<double>(state.iterations()),
                                              benchmark::Counter::kIsRate);
}

// ---- defined order ------------------------------------------------------------------------------------------------

// range(3): 0 bf16 operands (mode None), 1 fp32 Low_High.
std::pair<const host::Matrix&, const host::Matrix&> defined_inputs(const benchmark::State& state, Fp32Mode& mode) {
  const Operands& o = operands(state);
  mode = state.range(3) == 0 ? Fp32Mode::None : Fp32Mode::Low_High;
  if (mode == Fp32Mode::None) return {o.a_bf16, o.b_bf16};
  return {o.a, o.b};
}

void label_mode(benchmark::State& state, const char* what) {
  state.SetLabel(std::string(what) + (state.range(3) == 0 ? " bf16" : " fp32 Low_High"));
}

void BM_DefinedOrderOld(benchmark::State& state) {
  Fp32Mode mode;
  const auto [a, b] = defined_inputs(state, mode);
  host::Matrix c;
  for (auto _ : state) {
    c = old_reference_defined_order(a, b, mode, kKTile);
    benchmark::DoNotOptimize(c.data.data());
  }
  set_macs(state, mode == Fp32Mode::Low_High ? 3 : 1);
  state.counters["mismatches"] =
      static_cast<double>(host::count_bit_mismatches(host::reference_defined_order(a, b, mode, kKTile), c));
  label_mode(state, "plain loop");
}

void BM_DefinedOrderNew(benchmark::State& state) {
  Fp32Mode mode;
  const auto [a, b] = defined_inputs(state, mode);
  host::DefinedOrderOptions opt;
  opt.threads = static_cast<unsigned>(state.range(4));
  for (auto _ : state) {
    host::Matrix c = host::reference_defined_order(a, b, mode, kKTile, opt);
    benchmark::DoNotOptimize(c.data.data());
  }
  set_macs(state, mode == Fp32Mode::Low_High ? 3 : 1);
  label_mode(state, "blocked");
}

// ---- fp64 ---------------------------------------------------------------------------------------------------------

double max_err_per_scale(const host::MatrixF64& got, const host::MatrixF64& want, const host::MatrixF64& scale) {
  double worst = 0.0;
  for (std::size_t i = 0; i < want.data.size(); ++i)
    if (scale.data[i] > 0) worst = std::max(worst, std::fabs(got.data[i] - want.data[i]) / scale.data[i]);
  return worst;
}

template <bool Abs>
void fp64_old(benchmark::State& state) {
  const Operands& o = operands(state);
  host::MatrixF64 c;
  for (auto _ : state) {
    c = Abs ? old_abs_product_sums(o.a, o.b) : old_reference_fp64(o.a, o.b);
    benchmark::DoNotOptimize(c.data.data());
  }
  set_macs(state, 1);
  const host::MatrixF64 scale = host::abs_product_sums(o.a, o.b);
  state.counters["max_err_per_scale"] =
      max_err_per_scale(Abs ? scale : host::reference_fp64(o.a, o.b), c, scale);
  state.SetLabel("plain loop");
}

template <bool Abs>
void fp64_new(benchmark::State& state) {
  const Operands& o = operands(state);
  for (auto _ : state) {
    host::MatrixF64 c = Abs ? host::abs_product_sums(o.a, o.b) : host::reference_fp64(o.a, o.b);
    benchmark::DoNotOptimize(c.data.data());
  }
  set_macs(state, 1);
  state.SetLabel("OpenBLAS dgemm");
}

void BM_Fp64Old(benchmark::State& state) { fp64_old<false>(state); }
void BM_Fp64New(benchmark::State& state) { fp64_new<false>(state); }
void BM_AbsSumsOld(benchmark::State& state) { fp64_old<true>(state); }
void BM_AbsSumsNew(benchmark::State& state) { fp64_new<true>(state); }

constexpr std::int64_t kM = 2048, kK = 4096, kN = 1024;

// One timed run of each slow baseline is enough (seconds each); the new ones repeat to --benchmark_min_time.
BENCHMARK(BM_DefinedOrderOld)
    ->ArgNames({"M", "K", "N", "fp32"})
    ->Args({kM, kK, kN, 0})
    ->Args({kM, kK, kN, 1})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DefinedOrderNew)
    ->ArgNames({"M", "K", "N", "fp32", "threads"})
    ->Args({kM, kK, kN, 0, 1})
    ->Args({kM, kK, kN, 0, 0})
    ->Args({kM, kK, kN, 1, 1})
    ->Args({kM, kK, kN, 1, 0})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fp64Old)
    ->ArgNames({"M", "K", "N"})
    ->Args({kM, kK, kN})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fp64New)
    ->ArgNames({"M", "K", "N"})
    ->Args({kM, kK, kN})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AbsSumsOld)
    ->ArgNames({"M", "K", "N"})
    ->Args({kM, kK, kN})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AbsSumsNew)
    ->ArgNames({"M", "K", "N"})
    ->Args({kM, kK, kN})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
