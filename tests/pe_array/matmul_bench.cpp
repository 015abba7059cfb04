// MAC rate of back-to-back 128x128x512 matmuls (K x M x N) on bf16 operands decoded to fp32: the fast kernel (on the
// SIMD target it dispatches to, and on every other target the host supports), the fast kernel including the
// moving tile's bf16 decode, the reference loop, and -- when OpenBLAS was found at configure time --
// single-threaded OpenBLAS cblas_sgemm on the same shape in the same run, both alone and interleaved call by call
// with the fast kernel (BM_fast_vs_openblas), whose "ratio" counter is the figure docs/performance.md reports:
// interleaving puts both under the same machine load, which separate benchmarks minutes apart on a shared 2-core
// host do not. The OpenBLAS benchmarks are labelled with the kernel OpenBLAS picked for this CPU
// (openblas_get_corename): Debian's 0.3.21 does not recognise every newer CPU and then falls back to an SSE3 kernel;
// OPENBLAS_CORETYPE=SkylakeX (or Haswell) forces its AVX-512 (AVX2) kernel. Run by hand:
//   OPENBLAS_NUM_THREADS=1 build/tests/pe_array/pe_array_bench --benchmark_repetitions=5
//     --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <hwy/aligned_allocator.h>
#include <hwy/targets.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pevp/numerics/convert.h"
#include "pevp/pe_array/compute.h"
#include "pevp/pe_array/fast_kernel.h"

#ifdef PEVP_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

namespace pe = pevp::pe;
namespace isa = pevp::isa;

constexpr pe::MatmulShape kShape{128, 128, 512};
constexpr double kMacs = static_cast<double>(kShape.k * kShape.m * kShape.n);

struct Operands {
  std::vector<std::uint8_t> st_bytes, mv_bytes;
  std::vector<float> st, mv;
  // dst's rows start on a cache line, as PSUM's do in the platform: std::vector's large blocks start 16 bytes into
  // one, which puts the two threads' panel boundary inside a line of every row (false sharing: 1.19x from the second
  // thread instead of 1.53x in docs/performance.md's measurement).
  hwy::AlignedFreeUniquePtr<float[]> dst;
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
    dst = hwy::AllocateAligned<float>(kShape.m * kShape.n);
    std::fill(dst.get(), dst.get() + kShape.m * kShape.n, 0.0f);
  }
  static pe::OperandType bf16() { return {isa::Generation::MARIANA, isa::Dtype::BFLOAT16, isa::Fp32Mode::None}; }
};

void set_rate(benchmark::State& state) {
  state.counters["MAC/s"] = benchmark::Counter(kMacs, benchmark::Counter::kIsIterationInvariantRate);
}

void run_fast(benchmark::State& state) {
  Operands o;
  state.SetLabel(pe::matmul_fast_target());
  for (auto _ : state) {
    pe::matmul_pass_fast(o.st.data(), o.mv.data(), o.dst.get(), kShape, true);
    benchmark::DoNotOptimize(o.dst.get());
    benchmark::ClobberMemory();
  }
  set_rate(state);
}

// The target Highway picks for this host.
void BM_fast(benchmark::State& state) { run_fast(state); }

// One compiled-in target, forced (registered per supported target in main).
void BM_fast_target(benchmark::State& state, std::int64_t target) {
  hwy::SetSupportedTargetsForTest(target);
  run_fast(state);
  hwy::SetSupportedTargetsForTest(0);
}

void BM_fast_with_moving_decode(benchmark::State& state) {
  Operands o;
  state.SetLabel(pe::matmul_fast_target());
  for (auto _ : state) {
    pe::decode_operands(Operands::bf16(), o.mv_bytes.data(), o.mv.size(), o.mv.data());
    pe::matmul_pass_fast(o.st.data(), o.mv.data(), o.dst.get(), kShape, true);
    benchmark::DoNotOptimize(o.dst.get());
    benchmark::ClobberMemory();
  }
  set_rate(state);
}

void BM_reference(benchmark::State& state) {
  Operands o;
  for (auto _ : state) {
    pe::matmul_pass_reference(o.st.data(), o.mv.data(), o.dst.get(), kShape, true);
    benchmark::DoNotOptimize(o.dst.get());
    benchmark::ClobberMemory();
  }
  set_rate(state);
}

BENCHMARK(BM_fast)->Unit(benchmark::kMicrosecond);

// The fast kernel on up to state.range(0) host threads; wall time (the CPU time of the calling thread would hide
// the workers).
void BM_fast_threads(benchmark::State& state) {
  Operands o;
  const auto threads = static_cast<unsigned>(state.range(0));
  state.SetLabel(pe::matmul_fast_target());
  for (auto _ : state) {
    pe::matmul_pass_fast(o.st.data(), o.mv.data(), o.dst.get(), kShape, true, threads);
    benchmark::DoNotOptimize(o.dst.get());
    benchmark::ClobberMemory();
  }
  set_rate(state);
}
BENCHMARK(BM_fast_threads)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);

// How much of the second thread's gain one parallel region per matmul costs at the platform's granularity: a K-group
// of kGroup accumulating 128 x 128 x 512 matmuls on bf16 moving rows read in place (as the platform's PSUM tiles
// are), either as the platform runs them -- one matmul_pass_fast_rows call, one parallel region, per matmul -- or
// with one team for the whole group, each thread taking a fixed share of the columns through all kGroup matmuls
// (no region or barrier between matmuls; the same bits, as each column stays with one thread). Wall time.
constexpr std::size_t kGroup = 32;

void run_rows_group(benchmark::State& state, bool one_team) {
  Operands o;
  const auto threads = static_cast<unsigned>(state.range(0));
  const pe::MovingRows rows{o.mv_bytes.data(), kShape.n * 2, Operands::bf16()};
  const pe::DstRows dst{o.dst.get(), kShape.n};
  constexpr std::size_t kLineFloats = 64 / sizeof(float);  // shares of whole cache lines of dst
  state.SetLabel(pe::matmul_fast_target());
  for (auto _ : state) {
    if (!one_team) {
      for (std::size_t g = 0; g < kGroup; ++g)
        pe::matmul_pass_fast_rows(o.st.data(), rows, dst, kShape, true, threads);
    } else {
      pe::for_each_share(kShape.n / kLineFloats, 1, threads, [&](std::size_t b0, std::size_t b1) {
        const std::size_t n0 = b0 * kLineFloats, n = (b1 - b0) * kLineFloats;
        const pe::MovingRows share{rows.data + n0 * 2, rows.row_bytes, rows.type};
        for (std::size_t g = 0; g < kGroup; ++g)
          pe::matmul_pass_fast_rows(o.st.data(), share, {dst.data + n0, dst.row_floats}, {kShape.k, kShape.m, n},
                                    true, 1);
      });
    }
    benchmark::DoNotOptimize(o.dst.get());
    benchmark::ClobberMemory();
  }
  state.counters["MAC/s"] = benchmark::Counter(kMacs * kGroup, benchmark::Counter::kIsIterationInvariantRate);
}
void BM_rows_group_region_per_matmul(benchmark::State& state) { run_rows_group(state, false); }
void BM_rows_group_one_team(benchmark::State& state) { run_rows_group(state, true); }
BENCHMARK(BM_rows_group_region_per_matmul)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_rows_group_one_team)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_fast_with_moving_decode)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_reference)->Unit(benchmark::kMicrosecond);

#ifdef PEVP_HAVE_OPENBLAS
// dst[M][N] += stationary[K][M]^T @ moving[K][N], row-major: the same computation as matmul_pass_fast(accumulate),
// in OpenBLAS's own (FMA, blocked) order.
void sgemm(Operands& o) {
  const int m = static_cast<int>(kShape.m), n = static_cast<int>(kShape.n), k = static_cast<int>(kShape.k);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, 1.0f, o.st.data(), m, o.mv.data(), n, 1.0f,
              o.dst.get(), n);
}

void run_sgemm(benchmark::State& state, int threads) {
  Operands o;
  openblas_set_num_threads(threads);
  state.SetLabel(openblas_get_corename());
  for (auto _ : state) {
    sgemm(o);
    benchmark::DoNotOptimize(o.dst.get());
    benchmark::ClobberMemory();
  }
  set_rate(state);
}

void BM_openblas_sgemm(benchmark::State& state) { run_sgemm(state, 1); }  // as the single-threaded kernel
BENCHMARK(BM_openblas_sgemm)->Unit(benchmark::kMicrosecond);

void BM_openblas_sgemm_threads(benchmark::State& state) { run_sgemm(state, static_cast<int>(state.range(0))); }
BENCHMARK(BM_openblas_sgemm_threads)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);

// This thread's CPU time in seconds -- what Google Benchmark's rates use too.
double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Each iteration runs one fast-kernel matmul and one sgemm on separate dst buffers and times each; "ratio" is the
// fast kernel's MAC rate over OpenBLAS's.
void BM_fast_vs_openblas(benchmark::State& state) {
  Operands fast, blas;
  openblas_set_num_threads(1);
  state.SetLabel(std::string(pe::matmul_fast_target()) + " vs " + openblas_get_corename());
  double t_fast = 0, t_blas = 0;
  for (auto _ : state) {
    const double t0 = thread_seconds();
    pe::matmul_pass_fast(fast.st.data(), fast.mv.data(), fast.dst.get(), kShape, true);
    benchmark::DoNotOptimize(fast.dst.get());
    benchmark::ClobberMemory();
    const double t1 = thread_seconds();
    sgemm(blas);
    benchmark::DoNotOptimize(blas.dst.get());
    benchmark::ClobberMemory();
    t_fast += t1 - t0;
    t_blas += thread_seconds() - t1;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["fast_MAC/s"] = kMacs * n / t_fast;
  state.counters["openblas_MAC/s"] = kMacs * n / t_blas;
  state.counters["ratio"] = t_blas / t_fast;
}
BENCHMARK(BM_fast_vs_openblas)->Unit(benchmark::kMicrosecond);
#endif

}  // namespace

int main(int argc, char** argv) {
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    const std::string name = std::string("BM_fast_target/") + hwy::TargetName(target);
    benchmark::RegisterBenchmark(name.c_str(), [target](benchmark::State& s) { BM_fast_target(s, target); })
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
