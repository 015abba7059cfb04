// MAC rate of back-to-back 128x128x512 matmuls (K x M x N) on bf16 operands decoded to fp32: the fast kernel, the
// reference loop, the fast kernel including the moving tile's bf16 decode, and -- when OpenBLAS was found at
// configure time -- single-threaded OpenBLAS cblas_sgemm on the same shape in the same run. Run by hand:
//   build-pe/tests/pe_array/pe_array_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// Figures go to docs/numerics-matmul.md.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "pevp/numerics/convert.h"
#include "pevp/pe_array/compute.h"

#ifdef PEVP_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

namespace pe = pevp::pe;
namespace isa = pevp::isa;

constexpr pe::MatmulShape kShape{128, 128, 512};

struct Operands {
  std::vector<std::uint8_t> st_bytes, mv_bytes;
  std::vector<float> st, mv, dst;
  Operands() {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    auto make = [&](std::size_t n, std::vector<std::uint8_t>& bytes, std::vector<float>& out) {
      bytes.resize(2 * n);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t h = pevp::num::to_bf16(u(rng));
        bytes[2 * i] = static_cast<std::uint8_t>(h);
        bytes[2 * i + 1] = static_cast<std::uint8_t>(h >> 8);
      }
      out.resize(n);
      pe::decode_operands(bf16(), bytes.data(), n, out.data());
    };
    make(kShape.k * kShape.m, st_bytes, st);
    make(kShape.k * kShape.n, mv_bytes, mv);
    dst.assign(kShape.m * kShape.n, 0.0f);
  }
  static pe::OperandType bf16() { return {isa::Generation::MARIANA, isa::Dtype::BFLOAT16, isa::Fp32Mode::None}; }
};

void set_rate(benchmark::State& state) {
  const double macs = static_cast<double>(kShape.k * kShape.m * kShape.n);
  state.counters["MAC/s"] = benchmark::Counter(macs, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_fast(benchmark::State& state) {
  Operands o;
  for (auto _ : state) {
    pe::matmul_pass_fast(o.st.data(), o.mv.data(), o.dst.data(), kShape, true);
    benchmark::DoNotOptimize(o.dst.data());
    benchmark::ClobberMemory();
  }
  set_rate(state);
}

void BM_fast_with_moving_decode(benchmark::State& state) {
  Operands o;
  for (auto _ : state) {
    pe::decode_operands(Operands::bf16(), o.mv_bytes.data(), o.mv.size(), o.mv.data());
    pe::matmul_pass_fast(o.st.data(), o.mv.data(), o.dst.data(), kShape, true);
    benchmark::DoNotOptimize(o.dst.data());
    benchmark::ClobberMemory();
  }
  set_rate(state);
}

void BM_reference(benchmark::State& state) {
  Operands o;
  for (auto _ : state) {
    pe::matmul_pass_reference(o.st.data(), o.mv.data(), o.dst.data(), kShape, true);
    benchmark::DoNotOptimize(o.dst.data());
    benchmark::ClobberMemory();
  }
  set_rate(state);
}

BENCHMARK(BM_fast)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_fast_with_moving_decode)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_reference)->Unit(benchmark::kMicrosecond);

#ifdef PEVP_HAVE_OPENBLAS
void BM_openblas_sgemm(benchmark::State& state) {
  Operands o;
  openblas_set_num_threads(1);  // the simulator kernel is single-threaded
  const int m = static_cast<int>(kShape.m), n = static_cast<int>(kShape.n), k = static_cast<int>(kShape.k);
  for (auto _ : state) {
    // dst[M][N] += stationary[K][M]^T @ moving[K][N], row-major.
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, 1.0f, o.st.data(), m, o.mv.data(), n, 1.0f,
                o.dst.data(), n);
    benchmark::DoNotOptimize(o.dst.data());
    benchmark::ClobberMemory();
  }
  set_rate(state);
}
BENCHMARK(BM_openblas_sgemm)->Unit(benchmark::kMicrosecond);
#endif

}  // namespace

BENCHMARK_MAIN();
