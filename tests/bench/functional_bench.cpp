// How fast a functional GEMM runs through the whole platform, against the two references it is judged by, measured
// in one process at one host thread count:
//   kernel    the fast matmul kernel alone (pe::matmul_pass_fast) on exactly the matmuls the platform executes --
//             the plan's Matmul shapes, in order, on decoded fp32 operands that stay in cache: the physical limit
//             of the platform at this thread count
//   platform  `pe-vp gemm`'s driver program on the VP (SBUF loads over the bus, the SEQ, the firmware stub,
//             arr_seq, the PE array on DMI, PSUM read-back), wall time from building the platform to the end of
//             the simulation; the operands are generated and encoded before the clock starts
//   openblas  cblas_sgemm of the same M x K x N in fp32 at the same thread count (when OpenBLAS was found)
// SystemC runs one simulation per process, so each point is one run of this program; scripts/bench-functional.py
// runs the grid of docs/performance.md. Output: one JSON object on stdout.
//   functional_bench [--m M] [--k K] [--n N] [--threads T] [--mode functional|timing|both] [--repeat R]
//                    [--no-kernel] [--no-openblas] [--no-platform] [--platform-only] [--no-b-panels]
// --repeat R runs the kernel and OpenBLAS references R times and reports the fastest (the platform runs once).
// OpenBLAS starts its thread pool when the library loads, and idle pool threads spin for a while: measure the
// platform with OPENBLAS_NUM_THREADS=1 (no pool) and OpenBLAS in a run of its own (--no-platform --no-kernel) with
// OPENBLAS_NUM_THREADS=T, as scripts/bench-functional.py does.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "pevp/firmware/firmware.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/operands.h"
#include "pevp/isa/decode.h"
#include "pevp/pe_array/compute.h"
#include "pevp/pe_array/fast_kernel.h"
#include "pevp/platform/config.h"
#include "pevp/platform/gemm.h"

#ifdef PEVP_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

using namespace pevp;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// CPU seconds of every thread of the process: on a loaded host, a figure that waiting for a core does not inflate.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Page faults the process has taken: a fresh page costs a fault on first touch, and on some virtual machines that
// fault is far dearer than the write (docs/performance.md), so a small GEMM's wall time can be mostly its faults.
long process_page_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt + u.ru_majflt;
}

// The (K, M, N) of every Matmul micro-op of the plan, in program order, as the firmware lowers them.
std::vector<pe::MatmulShape> matmul_shapes(const host::GemmPlan& plan, const isa::ArrayGeometry& geo) {
  std::vector<pe::MatmulShape> shapes;
  fw::Firmware firmware;
  fw::HandlerOutput out;
  std::uint64_t index = 0;
  for (const host::Step& step : plan.steps)
    for (const auto& record : step.program) {
      const auto d = std::make_shared<const isa::Decoded>(isa::decode(plan.options.gen, geo, record));
      firmware.handle(fw::prepare(d), index, out);
      firmware.retire(index++);
      for (const pe::MicroOp& op : out.ops)
        if (op.kind == pe::MicroOpKind::Matmul) shapes.push_back({op.k, op.m, op.src.count()});
    }
  return shapes;
}

// The kernel alone on the plan's matmuls: one stationary, moving and dst buffer of the largest shape, filled with
// decoded bf16 values, accumulated into (as the platform's K-tiled groups do). Fastest of `repeat` rounds.
double kernel_seconds(const std::vector<pe::MatmulShape>& shapes, unsigned threads, int repeat) {
  std::size_t st = 0, mv = 0, dst = 0;
  for (const auto& s : shapes) {
    st = std::max(st, s.k * s.m);
    mv = std::max(mv, s.k * s.n);
    dst = std::max(dst, s.m * s.n);
  }
  std::mt19937_64 rng(2);
  const auto fill = [&](std::size_t n) {  // bf16 values, as the platform's decoded operands are
    std::vector<float> v = platform::random_operand(1, n, rng).data;
    for (float& x : v) x = num::from_bf16(num::to_bf16(x));
    return v;
  };
  const std::vector<float> a = fill(st), b = fill(mv);
  // C's rows start on a cache line, as PSUM's do in the platform (a block 16 bytes into one, std::vector's, shares a
  // line between the two threads' panels in every row: false sharing the platform does not have).
  const std::size_t line_floats = 64 / sizeof(float), floats = (dst + line_floats - 1) / line_floats * line_floats;
  const std::unique_ptr<float, decltype(&std::free)> c_storage(
      static_cast<float*>(std::aligned_alloc(64, std::max<std::size_t>(floats, line_floats) * sizeof(float))),
      &std::free);
  if (!c_storage) throw std::bad_alloc();
  float* const c = c_storage.get();
  std::fill(c, c + dst, 0.0f);
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = Clock::now();
    for (const auto& s : shapes) pe::matmul_pass_fast(a.data(), b.data(), c, s, true, threads);
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

#ifdef PEVP_HAVE_OPENBLAS
double openblas_seconds(const host::GemmShape& g, unsigned threads, int repeat) {
  openblas_set_num_threads(static_cast<int>(threads));
  std::mt19937_64 rng(3);
  const host::Matrix a = platform::random_operand(g.m, g.k, rng), b = platform::random_operand(g.k, g.n, rng);
  std::vector<float> c(g.m * g.n, 0.0f);
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data.data(), k, b.data.data(), n, 0.0f,
                c.data(), n);
    best = std::min(best, seconds_since(t0));
  }
  return best;
}
#endif

}  // namespace

int sc_main(int argc, char** argv) {
  CLI::App app("functional_bench: the platform's functional GEMM speed against the kernel alone and OpenBLAS");
  host::GemmShape shape{1024, 2048, 2048};
  unsigned threads = pe::available_host_threads();
  std::string mode = "functional";
  int repeat = 3;
  bool no_kernel = false, no_openblas = false, no_platform = false, platform_only = false;
  app.add_option("--m", shape.m)->check(CLI::Range(1, 1 << 16));
  app.add_option("--k", shape.k)->check(CLI::Range(1, 1 << 16));
  app.add_option("--n", shape.n)->check(CLI::Range(1, 1 << 16));
  app.add_option("--threads", threads)->check(CLI::Range(1, 4096));
  app.add_option("--mode", mode)->check(CLI::IsMember({"functional", "timing", "both"}));
  app.add_option("--repeat", repeat)->check(CLI::Range(1, 1000));
  app.add_flag("--no-kernel", no_kernel);
  app.add_flag("--no-openblas", no_openblas);
  app.add_flag("--no-platform", no_platform);
  app.add_flag("--platform-only", platform_only, "only the platform run (for profiling)");
  bool no_b_panels = false;
  app.add_flag("--no-b-panels", no_b_panels, "the round order only (host::GemmOptions::b_resident = false)");
  CLI11_PARSE(app, argc, argv);
  if (platform_only) no_kernel = no_openblas = true;

  platform::VpConfig config = platform::preset(isa::Generation::MARIANA);
  platform::apply_override(config, "mode=" + mode);
  config.host_threads = threads;
  host::GemmOptions options;
  options.gen = config.gen();
  options.geometry = config.geometry;
  options.tile_n = host::tile_limits(config.geometry, config.gen()).n_default;
  options.b_resident = !no_b_panels;
  const host::GemmPlan plan = host::plan_gemm(shape, options);
  std::mt19937_64 rng(1);
  const host::EncodedOperand a = host::encode_operand(platform::random_operand(shape.m, shape.k, rng), options.gen, options.dtype);
  const host::EncodedOperand b = host::encode_operand(platform::random_operand(shape.k, shape.n, rng), options.gen, options.dtype);
  std::size_t instructions = 0;
  for (const auto& step : plan.steps) instructions += step.program.size();

  nlohmann::json out;
  out["m"] = shape.m;
  out["k"] = shape.k;
  out["n"] = shape.n;
  out["macs"] = plan.stats.macs;
  out["instructions"] = instructions;
  out["threads"] = threads;
  out["mode"] = mode;
  out["kernel_target"] = pe::matmul_fast_target();
  out["b_panels"] = plan.stats.b_panels;
  out["sbuf_bytes_loaded"] = plan.stats.sbuf_bytes_loaded;
  const double macs = static_cast<double>(plan.stats.macs);

  double platform_s = 0;
  if (!no_platform) {
    const auto t0 = Clock::now();
    const double cpu0 = process_cpu_seconds();
    const long faults0 = process_page_faults();
    const platform::GemmRun run = platform::run_gemm_plan(plan, a, b, config, {});
    platform_s = seconds_since(t0);
    out["platform_cpu_s"] = process_cpu_seconds() - cpu0;
    out["platform_page_faults"] = process_page_faults() - faults0;
    if (run.error || run.timed_out) {
      std::fprintf(stderr, "functional_bench: the platform run failed at step %zu: %s\n", run.failed_step,
                   run.error ? run.error->describe().c_str() : "timeout");
      return 1;
    }
    out["platform_s"] = platform_s;
    out["platform_macs_per_s"] = macs / platform_s;
  }
  if (!no_kernel) {
    const double kernel_s = kernel_seconds(matmul_shapes(plan, config.geometry), threads, repeat);
    out["kernel_s"] = kernel_s;
    out["kernel_macs_per_s"] = macs / kernel_s;
    if (!no_platform) out["platform_vs_kernel"] = kernel_s / platform_s;
  }
#ifdef PEVP_HAVE_OPENBLAS
  if (!no_openblas) {
    const double blas_s = openblas_seconds(shape, threads, repeat);
    out["openblas_s"] = blas_s;
    out["openblas_macs_per_s"] = macs / blas_s;
    out["openblas_core"] = openblas_get_corename();
    if (!no_platform) out["platform_vs_openblas"] = blas_s / platform_s;
    if (out.contains("kernel_s")) out["kernel_vs_openblas"] = blas_s / out["kernel_s"].get<double>();
  }
#endif
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
