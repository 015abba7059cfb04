// How fast `pe-vp sweep` turns points into results: a timing-only sweep of ResNet-50's layers (SCALE-Sim's
// lowering of its 53 convolutions and the classifier) over ten moving tile sizes -- 540 points, 210 distinct
// simulations (the network repeats layer shapes, and equal points share a key) -- on 1 and on every core.
// Reports simulations per second and per second per core; docs/performance.md has the figures.
//
//   build/tests/bench/sweep_bench
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace {

constexpr int kDistinctSimulations = 210;  // 21 distinct layer shapes x 10 tile sizes (the sweep prints it)

void BM_sweep_resnet50_timing(benchmark::State& state) {
  const auto jobs = static_cast<unsigned>(state.range(0));
  const std::string dir = "/tmp/pevp_sweep_bench_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/s.toml") << "[[workload]]\nnetwork = \"resnet50\"\n[grid]\n"
                                    "tile_n = [64, 128, 192, 256, 320, 384, 448, 512, 96, 160]\n";
  for (auto _ : state) {
    state.PauseTiming();
    std::filesystem::remove_all(dir + "/out");
    state.ResumeTiming();
    const std::string cmd = std::string(PEVP_CLI) + " sweep " + dir + "/s.toml --out " + dir + "/out -j " +
                            std::to_string(jobs) + " --no-plots --quiet > " + dir + "/log 2>&1";
    if (std::system(cmd.c_str()) != 0) state.SkipWithError("pe-vp sweep failed; see the log");
  }
  state.counters["simulations_per_s"] =
      benchmark::Counter(kDistinctSimulations, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["per_s_per_core"] =
      benchmark::Counter(static_cast<double>(kDistinctSimulations) / jobs, benchmark::Counter::kIsIterationInvariantRate);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_sweep_resnet50_timing)
    ->Arg(1)
    ->Arg(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())))
    ->Unit(benchmark::kSecond)
    ->Iterations(3)
    ->UseRealTime();

}  // namespace
