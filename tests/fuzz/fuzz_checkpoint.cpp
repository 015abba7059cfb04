// libFuzzer harness, structure-aware: checkpoints (platform/vp checkpoint.h) read, restored into a live VP and run
// on. Input: a selector byte (the configuration the checkpoint is read against: 0 CAYMAN, 1 MARIANA, 2 MARIANA with
// stochastic PSUM rounding, the presets otherwise), then the checkpoint's bytes.
//
// The mutator (LLVMFuzzerCustomMutator) walks the checkpoint with the tests' independent reading of the format
// (tests/checkpoint/ckpt_fields.h), sets one field of one section -- a time, a cycle, a count, an index, a counter, a
// flag, an enum -- to a boundary value (0, 2^32, 2^62, 2^63, 2^64 - 1, the supported limit) or to one relative to
// the state (the checkpoint's time, another time of the state, one cycle either side), or mutates the bytes of one
// section, and recomputes the CRCs, so the input reaches the rules of meaning behind them; one mutation in eight is
// libFuzzer's own on the whole input, CRCs left as they fall, for the byte layer.
//
// Its contract, for every input:
//   - read_checkpoint either throws CheckpointError whose message starts with "checkpoint fuzz.ckpt: " (nothing else
//     escapes: an std::out_of_range, a bad_alloc or a length_error is a finding), or returns an image whose sizes
//     hold (the memories' sizes and pages, the register counts, K x M values, the seed count, the IFIFO and queue
//     depths) and which the independent reading walks whole;
//   - an accepted MARIANA checkpoint restored into the live VP either is refused (status argument, a message
//     naming the checkpoint; nothing moves) or is applied at its time with every cycle it holds inside the
//     supported range (kMaxCheckpointTimePs); then a short program (a weight load and a Matmul, after clear_error
//     resumes any queued instructions) runs to done or to a fault within 10 ms of simulated time: no hang, no
//     deadlock, no crash.
// The VP keeps running from input to input (one SystemC simulation per process), so its clock only goes forward:
// the harness restores each checkpoint shifted to the VP's current time -- its time and every cycle it holds moved
// by the same whole number of 5 ns (12 cycles of the 2.4 GHz clock) -- which keeps every relation between them,
// and a fresh process restores an input as it is (a crash reproduces from the file alone). Checkpoints more than
// 1 ms of simulated time ahead are only read (a restore would move the one VP's clock far ahead for every later
// input), and the program runs only after states whose times all lie within 1 ms of their checkpoint's time.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../checkpoint/ckpt_fields.h"
#include "fuzz_util.h"
#include "pevp/arr_seq/engine_clock.h"
#include "pevp/capi/machine.h"
#include "pevp/capi/stale_stack_poison.h"
#include "pevp/isa/builders.h"
#include "pevp/platform/checkpoint.h"
#include "pevp/platform/config.h"
#include "pevp/remote/protocol.h"

// libsystemc.so calls sc_main from its own main; the fuzzer's main runs instead, so this is never called.
int sc_main(int, char*[]) { return 0; }

// As in fuzz_protocol: LeakSanitizer cannot see the live objects on the SystemC thread stacks the requests run on.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

using namespace pevp;
using ckf::Bytes;
using ckf::Kind;
using remote::Op;
constexpr const char* kTarget = "fuzz_checkpoint";

// The live VP's configuration is selector 1's; the shift unit is exact at its clock (checked in machine()).
constexpr std::uint8_t kLiveSelector = 1;
constexpr std::uint64_t kShiftPs = 5000;
constexpr std::uint64_t kShiftCycles = 12;
constexpr std::uint64_t kWindowPs = 1000000000;   // 1 ms: how far ahead a checkpoint, and its state, may reach
constexpr std::uint64_t kProgramBoundNs = 10000000;  // 10 ms: the program's bound after the restore

const platform::VpConfig& config_of(std::uint8_t selector) {
  static const platform::VpConfig configs[3] = {
      platform::preset(isa::Generation::CAYMAN),
      platform::preset(isa::Generation::MARIANA),
      [] {
        platform::VpConfig c = platform::preset(isa::Generation::MARIANA);
        platform::apply_override(c, "tensor_engine.psum_rounding=stochastic");
        return c;
      }(),
  };
  return configs[selector % 3];
}

// How far the inputs got, printed when the fuzzer exits: a run whose inputs never restore or never run a program
// exercises only the reader.
struct Tally {
  std::uint64_t read = 0, accepted = 0, restores = 0, applied = 0, programs = 0;
  ~Tally() {
    std::fprintf(stderr, "%s: %llu read, %llu accepted by the reader, %llu restores tried, %llu applied, %llu programs run\n",
                 kTarget, static_cast<unsigned long long>(read), static_cast<unsigned long long>(accepted),
                 static_cast<unsigned long long>(restores), static_cast<unsigned long long>(applied),
                 static_cast<unsigned long long>(programs));
  }
};
Tally tally;

const arrseq::EngineClock& live_clock() {
  static const arrseq::EngineClock clock(config_of(kLiveSelector).tensor_engine_clock_ghz);
  return clock;
}

// The last cycle at or before the supported limit (the restore's bound).
arrseq::Cycle limit_cycle() {
  const sc_core::sc_time limit = sc_core::sc_time::from_value(platform::kMaxCheckpointTimePs);
  const arrseq::Cycle c = live_clock().to_cycles(limit);
  return live_clock().to_time(c) > limit ? c - 1 : c;
}

capi::Machine& machine() {
  static capi::Machine* m = [] {
    if (live_clock().to_ps(kShiftCycles) != kShiftPs) fuzz::fail(kTarget, "the shift unit is not whole cycles");
    std::string error;
    capi::Machine* made = capi::Machine::open(config_of(kLiveSelector), &error);
    if (made == nullptr) fuzz::fail(kTarget, "cannot open the VP: " + error);
    return made;
  }();
  return *m;
}

capi::Outcome execute(Op op, const std::vector<std::uint8_t>& payload) {
  capi::clear_stale_stack_poison();  // pevp/capi/stale_stack_poison.h
  capi::Outcome o = machine().execute(op, payload);
  if (machine().broken()) fuzz::fail(kTarget, std::string(remote::name(op)) + " left the VP broken: " + o.message);
  return o;
}

std::uint64_t le(const std::vector<std::uint8_t>& b, std::size_t at) { return ckf::get_le(b, at, 8); }

std::uint64_t time_ps() {
  const capi::Outcome o = execute(Op::Time, {});
  if (!o.ok() || o.payload.size() != 8) fuzz::fail(kTarget, "the time request failed: " + o.message);
  return le(o.payload, 0);
}

void check_image(const platform::CheckpointImage& img, const platform::VpConfig& cfg) {
  const isa::ArrayGeometry& geo = cfg.geometry;
  const auto memory = [&](const platform::MemoryImage& m, std::uint64_t size, const char* what) {
    if (m.size != size) fuzz::fail(kTarget, std::string(what) + ": accepted a memory of another size");
    std::uint64_t last = 0;
    for (std::size_t i = 0; i < m.pages.size(); ++i) {
      const auto& [index, bytes] = m.pages[i];
      if ((i > 0 && index <= last) || index * 4096 >= size) fuzz::fail(kTarget, std::string(what) + ": page out of order");
      if (bytes.size() != std::min<std::uint64_t>(4096, size - index * 4096)) fuzz::fail(kTarget, "a page not whole");
      last = index;
    }
  };
  memory(img.sbuf, std::uint64_t{geo.partitions} * geo.sbuf_partition_bytes, "SBUF");
  memory(img.psum, std::uint64_t{geo.partitions} * geo.psum_partition_bytes(), "PSUM");
  for (const auto& f : img.csrs.faces)
    if (f.regs.values.empty()) fuzz::fail(kTarget, "a register file without registers");
  for (const auto& s : img.array.exec.stationaries)
    if (s.values.size() != s.k * s.m) fuzz::fail(kTarget, "a stationary whose values are not K x M");
  if (img.array.exec.seeds.size() != std::size_t{geo.partitions} * geo.psum_banks * 2)
    fuzz::fail(kTarget, "the wrong seed count");
  if (img.arr_seq.timeline.starts.size() > cfg.platform.arr_seq.ififo_depth)
    fuzz::fail(kTarget, "more IFIFO starts than its depth");
  if (img.seq.queue.size() > std::size_t{cfg.platform.seq.queue_depth} + 1) fuzz::fail(kTarget, "a queue past its depth");
  if (img.time_value > platform::kMaxCheckpointTimePs) fuzz::fail(kTarget, "accepted a time past the supported limit");
  (void)fw::Firmware::check(img.seq.firmware);
}

// The checkpoint with its time and every cycle it holds moved by `shift` units of kShiftPs; a cycle that would
// overflow stays as it is (the restore refuses it as past the limit either way).
Bytes shifted(Bytes b, const ckf::Layout& l, std::uint64_t shift) {
  for (const ckf::Field& f : l.fields) {
    const std::uint64_t by = f.kind == Kind::Time ? shift * kShiftPs : f.kind == Kind::Cycle ? shift * kShiftCycles : 0;
    if (by == 0) continue;
    const std::uint64_t v = ckf::get(b, f);
    if (v <= ~std::uint64_t{0} - by) ckf::set(b, f, v + by);
  }
  ckf::fix_crcs(b, l);
  return b;
}

// A weight load and a Matmul on the preset's whole array, from SBUF to PSUM bank 7.
std::vector<std::uint8_t> short_program() {
  const isa::Generation g = config_of(kLiveSelector).gen();
  isa::LdweightsArgs l;
  l.src = isa::Pattern::row(0x0000, 128);
  l.in_dtype = isa::Dtype::BFLOAT16;
  l.num_active_rows = l.num_active_cols = 128;
  isa::MatmulArgs m;
  m.src = isa::Pattern::row(0x1000, 64);
  m.dst = isa::Pattern::row(isa::ArrayGeometry::kPsumBase + 7 * 2048, 64);
  m.in_dtype = isa::Dtype::BFLOAT16;
  m.out_dtype = isa::Dtype::FP32;
  m.num_active_rows = m.num_active_cols = 128;
  m.psum_flags = isa::psum_flags::SINGLE;
  std::vector<std::uint8_t> bytes;
  for (const isa::RawInstruction& r : {isa::encode_ldweights(g, l), isa::encode_matmul(g, m)})
    bytes.insert(bytes.end(), r.begin(), r.end());
  return bytes;
}

void restore_and_run(const Bytes& ckpt) {
  const std::optional<ckf::Layout> layout = ckf::layout_of(ckpt);
  if (!layout) fuzz::fail(kTarget, "read_checkpoint accepted what the format's independent reading cannot walk");
  const ckf::Field* time_field = layout->find("time.value");
  if (time_field == nullptr) fuzz::fail(kTarget, "read_checkpoint accepted a checkpoint without its time");
  const std::uint64_t rel_ps = ckf::get(ckpt, *time_field);
  if (rel_ps > kWindowPs) return;
  const arrseq::Cycle rel_cycle = live_clock().to_cycles(sc_core::sc_time::from_value(rel_ps));
  arrseq::Cycle latest = rel_cycle;
  for (const ckf::Field& f : layout->fields)
    if (f.kind == Kind::Cycle) latest = std::max(latest, ckf::get(ckpt, f));
  const bool run_after = latest <= rel_cycle + live_clock().to_cycles(sc_core::sc_time::from_value(kWindowPs));

  const std::uint64_t now = time_ps();
  const std::uint64_t shift = (now + kShiftPs - 1) / kShiftPs;
  ++tally.restores;
  const capi::Outcome restored = execute(Op::RestoreCheckpoint, shifted(ckpt, *layout, shift));
  if (!restored.ok()) {
    if (restored.status != remote::Status::Argument || restored.message.rfind("checkpoint ", 0) != 0)
      fuzz::fail(kTarget, "a refused restore that is not a checkpoint error: " + restored.message);
    if (time_ps() != now) fuzz::fail(kTarget, "a refused restore moved simulated time: " + restored.message);
    return;
  }
  ++tally.applied;
  if (time_ps() != shift * kShiftPs + rel_ps) fuzz::fail(kTarget, "the restore did not end at the checkpoint's time");
  // A state the program is not run after must still lie in the supported range: a run after it ends.
  const arrseq::Cycle limit = limit_cycle();
  if (latest > limit - std::min(limit, shift * kShiftCycles))
    fuzz::fail(kTarget, "a restore accepted a cycle past the supported limit: " + std::to_string(latest));
  if (!run_after) return;
  ++tally.programs;
  const std::vector<std::uint8_t> arm = {0, 0, 0};  // parallel issue, the whole IFIFO, PeRegWrite through it
  for (const auto& [op, payload] : {std::pair{Op::Arm, arm}, std::pair{Op::ClearError, std::vector<std::uint8_t>{}},
                                    std::pair{Op::Submit, short_program()}})
    if (const capi::Outcome o = execute(op, payload); !o.ok())
      fuzz::fail(kTarget, std::string(remote::name(op)) + " after a restore failed: " + o.message);
  std::vector<std::uint8_t> timeout(8);
  ckf::put_le(timeout, 0, kProgramBoundNs, 8);
  const capi::Outcome waited = execute(Op::WaitIdle, timeout);
  if (!waited.ok() || waited.payload.size() != 11) fuzz::fail(kTarget, "wait_idle failed: " + waited.message);
  if (waited.payload[2] != 0)
    fuzz::fail(kTarget, "a short program after a restore did not finish within " +
                            std::to_string(kProgramBoundNs / 1000000) + " ms of simulated time");
}

// ---- the mutator ----------------------------------------------------------------------------------------------

bool mutable_kind(Kind k) { return k != Kind::Value; }

std::uint64_t pick_value(std::minstd_rand& rng, const Bytes& b, const ckf::Layout& l, const ckf::Field& f) {
  const std::uint64_t v = ckf::get(b, f);
  const std::uint64_t limit_ps = platform::kMaxCheckpointTimePs;
  const arrseq::Cycle last_cycle = limit_cycle();
  const ckf::Field* time_field = l.find("time.value");  // a checkpoint cut after its configuration has none
  const std::uint64_t time = time_field ? ckf::get(b, *time_field) : 0;
  const arrseq::Cycle now = live_clock().to_cycles(sc_core::sc_time::from_value(time));
  // Another time of the state, for "earlier / later than the state".
  std::vector<std::uint64_t> cycles;
  for (const ckf::Field& g : l.fields)
    if (g.kind == Kind::Cycle) cycles.push_back(ckf::get(b, g));
  const std::uint64_t other = cycles.empty() ? 0 : cycles[rng() % cycles.size()];
  // A cycle's time in ps, for the time field; past the limit the conversion would leave a double's range of
  // integers, and any time past the limit is refused alike.
  const auto ps_of = [&](arrseq::Cycle c) { return c <= last_cycle ? live_clock().to_time(c).value() : limit_ps + 1; };
  const bool is_time = f.kind == Kind::Time;
  const std::uint64_t boundaries[] = {0,
                                      1,
                                      v - 1,
                                      v + 1,
                                      v * 2,
                                      v / 2,
                                      std::uint64_t{1} << 32,
                                      (std::uint64_t{1} << 32) - 1,
                                      std::uint64_t{1} << 62,
                                      std::uint64_t{1} << 63,
                                      ~std::uint64_t{0},
                                      is_time ? limit_ps : last_cycle,
                                      is_time ? limit_ps + 1 : last_cycle + 1,
                                      is_time ? time : now,
                                      is_time ? time + 1 : now + 1,
                                      is_time ? ps_of(now - 1) : now - 1,
                                      is_time ? ps_of(other) : other,
                                      is_time ? ps_of(other) - 1 : other + 1,
                                      is_time ? ps_of(other) + 1 : other - 1,
                                      (static_cast<std::uint64_t>(rng()) << 32) ^ rng()};
  std::uint64_t out = boundaries[rng() % std::size(boundaries)];
  if (f.width < 8) out &= (std::uint64_t{1} << (8 * f.width)) - 1;
  return out;
}

// One section's payload mutated by libFuzzer (its length and CRC fixed); not the configuration, whose text is
// compared key for key, nor the CSRs and the SEQ, whose registers and queued instructions could legitimately hold
// the program up (a semaphore wait, a throttle) past its bound.
bool mutate_section(std::minstd_rand& rng, Bytes& b, const ckf::Layout& l) {
  std::vector<const ckf::Section*> open;
  for (const ckf::Section& s : l.sections)
    if (s.name != "config" && s.name != "csrs" && s.name != "seq" && s.length > 0) open.push_back(&s);
  if (open.empty()) return false;
  const ckf::Section& s = *open[rng() % open.size()];
  Bytes payload(b.begin() + static_cast<std::ptrdiff_t>(s.payload),
                b.begin() + static_cast<std::ptrdiff_t>(s.payload + s.length));
  const std::size_t n = LLVMFuzzerMutate(payload.data(), payload.size(), payload.size());
  payload.resize(n);
  Bytes out(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(s.payload));
  ckf::put_le(out, s.payload - 12, payload.size(), 8);
  ckf::put_le(out, s.payload - 4, ckf::crc32(payload.data(), payload.size()), 4);
  out.insert(out.end(), payload.begin(), payload.end());
  out.insert(out.end(), b.begin() + static_cast<std::ptrdiff_t>(s.payload + s.length), b.end());
  b = std::move(out);
  return true;
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  std::minstd_rand rng(seed);
  if (size < 2 || rng() % 8 == 0) return LLVMFuzzerMutate(data, size, max_size);
  Bytes b(data + 1, data + size);
  const std::optional<ckf::Layout> l = ckf::layout_of(b);
  if (!l) return LLVMFuzzerMutate(data, size, max_size);
  if (rng() % 4 == 0) {
    if (!mutate_section(rng, b, *l)) return LLVMFuzzerMutate(data, size, max_size);
  } else {
    std::vector<const ckf::Field*> fields;
    for (const ckf::Field& f : l->fields)
      if (mutable_kind(f.kind)) fields.push_back(&f);
    if (fields.empty()) return LLVMFuzzerMutate(data, size, max_size);
    const ckf::Field& f = *fields[rng() % fields.size()];
    ckf::set(b, f, pick_value(rng, b, *l, f));
    ckf::fix_crcs(b, *l);
  }
  if (b.size() + 1 > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::copy(b.begin(), b.end(), data + 1);
  return b.size() + 1;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const platform::VpConfig& cfg = config_of(data[0]);
  ++tally.read;
  try {
    const platform::CheckpointImage img = platform::read_checkpoint(data + 1, size - 1, cfg, "fuzz.ckpt");
    check_image(img, cfg);
    ++tally.accepted;
  } catch (const platform::CheckpointError& e) {
    if (std::string(e.what()).rfind("checkpoint fuzz.ckpt: ", 0) != 0)
      fuzz::fail(kTarget, std::string("an error that does not name the checkpoint: ") + e.what());
    return 0;
  }
  if (data[0] % 3 == kLiveSelector) restore_and_run(Bytes(data + 1, data + size));
  return 0;
}
