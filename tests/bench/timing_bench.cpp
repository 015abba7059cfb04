// How fast the platform simulates a long instruction stream, in micro-ops per
// wall-clock second, with the plain-C++ costs it is built from measured in the
// same process as references:
//   decode    isa::decode of every record (what a decode-cache miss costs)
//   timeline  arrseq::Timeline::schedule of every micro-op alone (the floor)
//   platform  the whole VP: driver submits through the bus, SEQ (decode cache,
//             firmware stub, temporal decoupling), arr_seq, retirement
// SystemC runs one simulation per process, so each platform variant is its own
// run of this program (scripts/bench-timing.sh runs them all):
//   timing_bench [--mode timing|both|functional] [--instructions N] [--no-cache]
//                [--trace FILE] [--quantum-ns Q] [--direct] [--null-observer] [--platform-only]
// The stream: Ldweights + Matmul pairs (bf16, N = 128) on the full array,
// rotating over SBUF offsets and PSUM banks.
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "pevp/arr_seq/timeline.h"
#include "pevp/firmware/firmware.h"
#include "pevp/isa/decode.h"
#include "pevp/platform/calibration.h"
#include "pevp/platform/config.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/virtual_platform.h"
#include "pevp/platform/recorder.h"

namespace {

using namespace pevp;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Options {
  std::string mode = "timing";
  std::size_t instructions = 2'000'000;
  bool cache = true;
  std::string trace;
  double quantum_ns = 1000;
  bool direct = false;  // queue with Seq::try_push instead of bus writes (isolates the driver's cost)
  bool null_observer = false;  // an empty per-micro-op observer: what the tracing hook costs when it records nothing
  bool references = true;  // false (--platform-only): skip the decode and Timeline references (for profiling)
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "timing_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--mode") o.mode = next();
    else if (a == "--instructions") o.instructions = std::stoull(next());
    else if (a == "--no-cache") o.cache = false;
    else if (a == "--trace") o.trace = next();
    else if (a == "--quantum-ns") o.quantum_ns = std::stod(next());
    else if (a == "--direct") o.direct = true;
    else if (a == "--null-observer") o.null_observer = true;
    else if (a == "--platform-only") o.references = false;
    else {
      std::fprintf(stderr, "timing_bench: unknown option %s\n", a.c_str());
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int sc_main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const isa::Generation gen = isa::Generation::MARIANA;
  const platform::StreamSpec spec{"bench", isa::Dtype::BFLOAT16, isa::Fp32Mode::None, 128, 128, true, 0};
  // The distinct records of one period of the stream, repeated to the length asked.
  const std::vector<isa::RawInstruction> period = platform::calibration_stream(gen, spec, 512, true);
  std::vector<isa::RawInstruction> stream;
  stream.reserve(o.instructions);
  while (stream.size() < o.instructions) stream.push_back(period[stream.size() % period.size()]);

  // Reference 1: decode alone.
  if (o.references) {
    const std::size_t n = std::min<std::size_t>(o.instructions, 200'000);
    const auto t0 = Clock::now();
    std::size_t violations = 0;
    for (std::size_t i = 0; i < n; ++i) violations += isa::decode(gen, stream[i]).violations.size();
    const double s = seconds_since(t0);
    std::printf("decode:    %8.0f ns per instruction (%zu, %zu violations)\n", s / n * 1e9, n, violations);
  }
  // Reference 2: the Timeline alone, on the micro-ops' shapes.
  if (o.references) {
    std::vector<arrseq::OpShape> shapes;
    for (std::size_t i = 0; i < period.size(); ++i) {
      const pevp::fw::Prepared p = pevp::fw::prepare(std::make_shared<const isa::Decoded>(isa::decode(gen, period[i])));
      for (const pe::MicroOp& op : p.ops) shapes.push_back(arrseq::shape_of(op, isa::preset_geometry(gen)));
    }
    arrseq::Timeline t(arrseq::CostModel{}, 16);
    arrseq::TimingCsrs csrs;
    csrs.cluster.p2fifo_af = 12;
    csrs.cluster.stagger_idle_limit = {0xffff, 0xffff, 0xffff, 0xffff};
    const auto t0 = Clock::now();
    arrseq::Cycle ready = 0;
    for (std::size_t i = 0; i < o.instructions; ++i) ready = t.schedule(shapes[i % shapes.size()], ready + 16, csrs).push;
    const double s = seconds_since(t0);
    std::printf("timeline:  %8.2f M micro-ops/s (%zu micro-ops, %llu cycles)\n", o.instructions / s / 1e6,
                o.instructions, static_cast<unsigned long long>(t.stats().busy_span));
  }
  // The platform.
  platform::VpConfig config = platform::preset(gen);
  platform::apply_override(config, "mode=" + o.mode);
  config.platform.seq.quantum = sc_core::sc_time(o.quantum_ns, sc_core::SC_NS);
  if (!o.cache) config.platform.seq.decode_cache_entries = 0;
  platform::VirtualPlatform vp(config);
  platform::RecorderOptions ro;
  ro.trace_path = o.trace;
  platform::Recorder recorder(vp.platform(), ro);
  if (o.null_observer) vp.platform().arr_seq.observer = [](const pe::MicroOp&, const arrseq::Slot&) {};
  double wall = 0, cpu = 0;
  std::uint64_t retired = 0;
  vp.run([&](platform::Driver& d) {
    d.arm();
    const auto t0 = Clock::now();
    const std::clock_t c0 = std::clock();
    constexpr std::size_t kChunk = 256;  // the SEQ queue's depth: the driver streams behind back-pressure
    if (o.direct) {
      seq::Seq& q = vp.platform().seq;
      for (std::size_t i = 0; i < stream.size();)
        if (q.try_push(stream[i])) ++i;
        else sc_core::wait(sc_core::sc_time(100, sc_core::SC_NS));
    } else {
      for (std::size_t i = 0; i < stream.size(); i += kChunk)
        d.submit(std::vector<isa::RawInstruction>(stream.begin() + i,
                                                  stream.begin() + std::min(stream.size(), i + kChunk)));
    }
    const platform::Completion c = d.wait_idle(sc_core::sc_time(1e6, sc_core::SC_SEC));
    wall = seconds_since(t0);
    cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;  // one thread: robust on a loaded machine
    retired = c.retired;
  });
  const nlohmann::json s = platform::run_stats(vp.platform());
  std::printf("platform:  %8.2f M micro-ops/s of CPU time, %.2f M per wall second (mode %s, %s, quantum %.0f ns%s; "
              "%llu retired in %.3f s wall; %.0f us simulated, %llu syncs)\n",
              stream.size() / cpu / 1e6, stream.size() / wall / 1e6, o.mode.c_str(), o.cache ? "decode cache" : "no decode cache", o.quantum_ns,
              o.trace.empty() ? (o.null_observer ? ", empty observer" : "") : ", tracing", static_cast<unsigned long long>(retired), wall,
              s["simulated_time_ns"].get<double>() / 1e3,
              static_cast<unsigned long long>(s["seq"]["synchronisations"].get<std::uint64_t>()));
  if (!o.trace.empty()) {
    std::string error;
    const auto t0 = Clock::now();
    if (!recorder.finish(&error)) {
      std::fprintf(stderr, "timing_bench: %s\n", error.c_str());
      return 1;
    }
    std::printf("trace:     %zu events written in %.3f s\n", recorder.trace_events(), seconds_since(t0));
  }
  return 0;
}
