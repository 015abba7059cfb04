// Throughput of the trace writers (Google Benchmark), run by hand:
//   build/tests/trace/trace_bench --benchmark_min_time=0.5
// The trace-event case is the timing model's shape: 32 tracks of pipelined
// phases (every third slice partially overlaps its predecessor, so lanes are
// needed), two args on each slice, recorded slightly out of order.
#include <benchmark/benchmark.h>

#include <ostream>
#include <random>
#include <streambuf>

#include "pevp/trace/trace_events.h"
#include "pevp/trace/vcd.h"

namespace {

// Counts bytes and drops them: measures formatting, not the disk.
class NullBuf : public std::streambuf {
 public:
  std::size_t bytes = 0;

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += static_cast<std::size_t>(n);
    return n;
  }
  int overflow(int c) override {
    ++bytes;
    return c;
  }
};

pevp::trace::TraceEventWriter make_trace(std::size_t n) {
  pevp::trace::TraceEventWriter w;
  std::vector<pevp::trace::TrackId> tracks;
  for (int q = 0; q < 16; ++q) tracks.push_back(w.track("arr_seq queues", "queue " + std::to_string(q)));
  for (int g = 0; g < 16; ++g) tracks.push_back(w.track("PE row groups", "row group " + std::to_string(g)));
  std::mt19937_64 rng(1);
  std::vector<std::uint64_t> next(tracks.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t t = i % tracks.size();
    const std::uint64_t dur = 700 + rng() % 5000;
    std::uint64_t start = next[t];
    if (i % 3 == 0 && start > 400) start -= 400;  // pipelined: overlaps the previous phase
    next[t] = start + dur;
    const std::uint64_t jitter = rng() % 3000;  // recorded a little out of order
    w.slice(tracks[t], i % 2 ? "stream" : "drain", "pe", start + jitter, dur,
            {{"instr", static_cast<std::int64_t>(i)}, {"rows", std::int64_t{128}}});
  }
  return w;
}

void BM_TraceEventWrite(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto w = make_trace(n);
  std::size_t bytes = 0;
  for (auto _ : state) {
    NullBuf buf;
    std::ostream os(&buf);
    w.write(os);
    bytes = buf.bytes;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  state.counters["bytes_per_event"] = static_cast<double>(bytes) / static_cast<double>(n);
}
BENCHMARK(BM_TraceEventWrite)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

void BM_TraceEventRecord(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(make_trace(n).size());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}
BENCHMARK(BM_TraceEventRecord)->Arg(1000000)->Unit(benchmark::kMillisecond);

void BM_VcdWrite(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  pevp::trace::VcdWriter w;
  std::vector<pevp::trace::VcdWriter::SignalId> sig;
  for (int i = 0; i < 200; ++i) sig.push_back(w.signal("pe_vp.arr_seq", "s" + std::to_string(i), i % 2 ? 1 : 32));
  std::mt19937_64 rng(2);
  for (std::size_t i = 0; i < n; ++i) w.change(sig[i % sig.size()], rng() % (n * 10), rng() % 1000);
  for (auto _ : state) {
    NullBuf buf;
    std::ostream os(&buf);
    w.write(os);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}
BENCHMARK(BM_VcdWrite)->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace
