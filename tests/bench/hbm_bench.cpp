// The cost in host time of the DRAM model's timing core and checkpoint image (docs/performance.md "Device memory"):
// what a DMA engine pays per access() it asks, by access size, and what a checkpoint of a sparse HBM costs.
//   hbm_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include "pevp/hbm/channel_model.h"
#include "pevp/hbm/dram.h"

namespace {
using namespace pevp;

// The timing core alone on CAYMAN's HBM figures, a stream of accesses of state.range(0) bytes from 16 requesters.
void BM_ChannelModelAccess(benchmark::State& state) {
  hbm::ChannelModel m(hbm::channel_timing(hbm::hbm_config(isa::Generation::CAYMAN)));
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  std::uint64_t address = 0, now = 0;
  unsigned requester = 0;
  for (auto _ : state) {
    now = m.access({address, bytes, hbm::Op::Read, now, requester});
    benchmark::DoNotOptimize(now);
    address = (address + bytes) % (std::uint64_t{1} << 30);
    requester = (requester + 1) % 16;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_ChannelModelAccess)->Arg(64)->Arg(4096)->Arg(1 << 20);

// The same through Dram::access (sc_time conversions, the observer test).
void BM_DramAccess(benchmark::State& state) {
  static hbm::Dram dram("hbm_bench_access", hbm::hbm_config(isa::Generation::CAYMAN));
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  std::uint64_t address = 0;
  sc_core::sc_time now;
  for (auto _ : state) {
    now = dram.access({address, bytes, memory::Direction::Read, now, 0});
    benchmark::DoNotOptimize(now);
    address = (address + bytes) % (std::uint64_t{1} << 30);
  }
}
BENCHMARK(BM_DramAccess)->Arg(4096);

// A checkpoint image of a 12 GiB HBM with state.range(0) MiB written at its start.
void BM_ExportPages(benchmark::State& state) {
  hbm::Dram dram(("hbm_bench_export_" + std::to_string(state.range(0))).c_str(),
                 hbm::hbm_config(isa::Generation::CAYMAN));
  const std::uint64_t written = static_cast<std::uint64_t>(state.range(0)) << 20;
  for (std::uint64_t a = 0; a < written; a += 64) dram.data()[a] = 1;
  for (auto _ : state) benchmark::DoNotOptimize(dram.export_pages());
}
BENCHMARK(BM_ExportPages)->Arg(0)->Arg(64)->Unit(benchmark::kMillisecond);

}  // namespace

int sc_main(int argc, char* argv[]) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
