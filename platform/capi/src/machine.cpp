// The in-process VP of the C API and the server, and the protocol's requests executed on it.
#include "pevp/capi/machine.h"
#include "pevp/capi/stale_stack_poison.h"

#include "pevp/buffers/oom_headroom.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <ostream>
#include <streambuf>
#include <utility>
#include <stdexcept>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "pevp/arr_seq/arr_seq.h"
#include "pevp/capi/expectation.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/generation.h"
#include "pevp/isa_text/assembly.h"
#include "pevp/platform/checkpoint.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/firmware_log.h"
#include "pevp/platform/micro_op_log.h"
#include "pevp/platform/platform.h"
#include "pevp/platform/recorder.h"
#include "pevp/platform/reset.h"

#ifndef PEVP_VERSION
#define PEVP_VERSION "unknown"
#endif

namespace pevp::capi {

using remote::Op;
using remote::Reader;
using remote::Status;
using remote::Writer;

namespace {

// The bus master of the requests: runs one at a time in simulated time, then pauses the simulation.
class Host : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Host> socket;
  std::function<void(platform::Driver&)> request;
  std::exception_ptr failure;
  bool busy = false;
  sc_core::sc_event wake;

  SC_HAS_PROCESS(Host);
  Host(sc_core::sc_module_name n, const platform::AddressMap& map, const sc_core::sc_signal<bool>& irq)
      : sc_core::sc_module(n), socket("socket"), irq_(irq), driver_(socket, map, irq) {
    // A client's write into a full instruction queue is refused, never waited out on this, the VP's only bus
    // master (D-IQ-NO-WAIT); a client holds at most one frame's worth of records unwritten (D-SUBMIT-HOLD).
    driver_.queue_writes_wait = false;
    driver_.max_unwritten = remote::kMaxTransferBytes / isa::kInstructionBytes;
    SC_THREAD(serve);
    // Requests are parsed and executed on this thread -- assembly text included, whose expressions recurse -- so it
    // gets a main thread's stack, not SystemC's small default (an expression nested 63 deep overflowed that under
    // ASan).
    set_stack_size(kStackBytes);
  }
  static constexpr std::size_t kStackBytes = std::size_t{8} << 20;

  // Waits until the interrupt line is high or `timeout` of simulated time passed; true when it is high. The
  // driver's cancel() ends it with platform::Cancelled.
  bool wait_irq(const sc_core::sc_time& timeout) {
    const sc_core::sc_time deadline = platform::Driver::deadline_after(timeout, "wait_irq");
    driver_.throw_if_cancelled("wait_irq");
    while (!irq_.read() && sc_core::sc_time_stamp() < deadline) {
      sc_core::wait(deadline - sc_core::sc_time_stamp(), irq_.value_changed_event() | driver_.cancel_event());
      driver_.throw_if_cancelled("wait_irq");
    }
    return irq_.read();
  }
  platform::Driver& driver() { return driver_; }

 private:
  void serve() {
    for (;;) {
      while (!request) sc_core::wait(wake);
      const auto work = std::move(request);
      request = nullptr;
      // The previous request may have ended in an exception on this stack (the driver refusing something);
      // serve() is this stack's first frame, so half of it below here is inside it and deeper than any request.
      clear_stale_stack_poison(kStackBytes / 2);
      try {
        work(driver_);
      } catch (...) {
        failure = std::current_exception();
      }
      busy = false;
      sc_core::sc_pause();
    }
  }
  const sc_core::sc_signal<bool>& irq_;
  platform::Driver driver_;
};

// The most simulated time one expect request waits for its instruction: a single instruction takes microseconds.
constexpr std::uint64_t kExpectTimeoutNs = 10'000'000;  // 10 ms

// The error record's sentence travels as a protocol str; the SEQ's sentences are far shorter than this.
constexpr std::size_t kMaxFaultMessageBytes = 4096;

sc_core::sc_time nanoseconds(std::uint64_t ns) { return sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS); }

const sc_core::sc_time kTimeLimit = sc_core::sc_time::from_value(kMaxSimulatedPs);  // resolution: 1 ps
const std::string kTimeLimitText = platform::kMaxSimulatedText;

// The requests that take no simulated time: the only ones served once the time limit is reached.
bool takes_no_simulated_time(Op op) {
  switch (op) {
    case Op::Hello: case Op::Time: case Op::Shutdown: case Op::Cycles: case Op::Assemble: case Op::Stats:
    case Op::SaveCheckpoint: case Op::MicroOpLog: case Op::MicroOpLogTake: case Op::Diagnostics: case Op::Reset:
      return true;
    default:
      return false;
  }
}

// A wait's timeout as simulated time: refused when the wait could end past the VP's time limit.
sc_core::sc_time wait_timeout(Op op, std::uint64_t timeout_ns) {
  const std::uint64_t now_ps = sc_core::sc_time_stamp().value();
  const std::uint64_t left_ps = now_ps < kMaxSimulatedPs ? kMaxSimulatedPs - now_ps : 0;
  if (timeout_ns > left_ps / 1000)
    throw std::invalid_argument(std::string(name(op)) + ": a timeout of " + std::to_string(timeout_ns) +
                                " ns from simulated time " + std::to_string(now_ps) +
                                " ps would pass the VP's limit of " + kTimeLimitText + "; at most " +
                                std::to_string(left_ps / 1000) + " ns is left");
  return nanoseconds(timeout_ns);
}

// The slices a request's simulation runs in: sized so that one takes about kSliceWall of wall time, which bounds
// how long a cancellation waits to be noticed. A request that ends within its first slice pays nothing for them.
// Each request starts small again: how dense the last one's events were says nothing of the next (an idle wait
// grows the slice to seconds of simulated time, which a polling wait behind a running program would take minutes
// of wall time to get through), and the slice never grows past kLargest, so a change of pace within a request is
// noticed within a bounded wall time too.
class Slicer {
 public:
  void restart() { slice_ = kFirst; }
  sc_core::sc_time next() const { return slice_; }
  // Adapts the slice to the wall time the last one took (only a slice the request did not end in says anything).
  void took(std::chrono::steady_clock::duration wall) {
    if (wall < kSliceWall / 4 && slice_ < kLargest) slice_ = slice_ * 2;
    if (wall > kSliceWall && slice_ > kSmallest) slice_ = slice_ / 4;
    if (slice_ < kSmallest) slice_ = kSmallest;
  }

 private:
  static constexpr std::chrono::milliseconds kSliceWall{20};
  const sc_core::sc_time kFirst = sc_core::sc_time(10, sc_core::SC_US);
  const sc_core::sc_time kSmallest = sc_core::sc_time(10, sc_core::SC_NS);
  const sc_core::sc_time kLargest = sc_core::sc_time(100, sc_core::SC_MS);
  sc_core::sc_time slice_ = kFirst;
};

// The micro-op lines kept for the client between two takes: at most `cap` bytes of whole lines. A line that does not
// fit is not kept but counted, so a client that never takes cannot make the VP hold more (D-UOP-LOG-BOUND).
class KeptLines : public std::streambuf {
 public:
  explicit KeptLines(std::size_t cap) : cap_(cap) {}
  // The kept lines, whole, at most `cap` bytes (one take's reply when the cap is a frame's transfer limit).
  std::string take() { return std::exchange(kept_, std::string()); }
  std::uint64_t dropped() const { return dropped_; }
  std::uint64_t first_dropped() const { return first_dropped_; }
  void forget_dropped() { dropped_ = 0; }

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      const char one = traits_type::to_char_type(c);
      xsputn(&one, 1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const char* const end = s + n;
    while (s != end) {
      const char* newline = std::find(s, end, '\n');
      if (newline == end) {
        line_.append(s, end);
        break;
      }
      line_.append(s, newline + 1);
      end_line();
      s = newline + 1;
    }
    return n;
  }

 private:
  void end_line() {
    if (kept_.size() + line_.size() <= cap_) {
      kept_ += line_;
    } else if (dropped_++ == 0) {
      first_dropped_ = lines_;
    }
    ++lines_;
    line_.clear();
  }
  std::size_t cap_;
  std::string kept_, line_;
  std::uint64_t lines_ = 0, dropped_ = 0, first_dropped_ = 0;
};

// A request's error as the protocol reports it.
struct Refusal : std::runtime_error {
  Status status;
  Refusal(Status s, const std::string& m) : std::runtime_error(m), status(s) {}
};

}  // namespace

struct Machine::Impl {
  platform::VpConfig config;
  platform::Platform platform;
  Host host;
  bool started = false, broken = false;
  bool started_requests = false;  // the host ran a request: the platform is no longer as at power-on
  std::unique_ptr<platform::FirmwareLog> firmware_log;
  // The micro-op lines kept for the client (micro_op_log / micro_op_log_take); the log is made at the first
  // micro_op_log request, after any firmware log, and lives as long as the VP (it is switched, never unhooked).
  KeptLines micro_op_kept{remote::kMaxTransferBytes};
  std::ostream micro_op_lines{&micro_op_kept};
  std::unique_ptr<platform::MicroOpLog> micro_op_log;
  platform::Driver* driver = nullptr;  // the host's, while it executes a request
  Slicer slicer;
  std::string cancel_reason;  // why the request being executed was cancelled
  // The warnings kept for the client (diagnostics): the library prints nothing on its driver's streams. At most a
  // frame's worth of whole lines between takes; the rest are counted and said with the next take.
  std::string diagnostics;
  std::uint64_t diagnostics_dropped = 0;
  // What the reset request returns the platform to: taken on the host thread before the first request touches it,
  // or why it cannot be (csrs.impl = rtl).
  std::optional<platform::CheckpointImage> power_on;
  std::string power_on_error;

  // The micro-ops the expect request's instruction was lowered into, as the sequencer scheduled them; kept only while
  // one runs (the observer below is made first, so every later log chains it).
  bool expecting = false;
  std::vector<ScheduledOp> expected_ops;

  explicit Impl(const platform::VpConfig& c)
      : config(c), platform("vp", c), host("capi_host", c.platform.map, platform.seq.irq) {
    host.socket.bind(platform.bus.target);
    platform.arr_seq.observer = [this](const pe::MicroOp& op, const arrseq::Slot& s) {
      if (expecting) expected_ops.push_back({op, s});
    };
    platform.hazards.sink = [this](const platform::HazardReport& r) { keep_diagnostic(r.text); };
  }

  // One line for the client's next diagnostics take, or counted when the kept lines are full.
  void keep_diagnostic(const std::string& line) {
    if (diagnostics.size() + line.size() + 1 > remote::kMaxTransferBytes / 2) {
      ++diagnostics_dropped;
      return;
    }
    diagnostics += line + "\n";
  }

  // Executes one request on the host thread, in simulated time: the simulation runs until the host has answered
  // it and paused. The request is parsed and executed there, and every exception it raises is caught there too:
  // none crosses back onto the main stack (an exception unwinding the main stack after one was thrown on a
  // SystemC thread stack is what makes ASan report false positives, stale_stack_poison.h).
  Outcome on_host(Op op, const std::vector<std::uint8_t>& payload, const CancelCheck& cancel) {
    if (broken) return {Status::State, "the VP stopped in an earlier call (a deadlock); start a new process", {}};
    if (sc_core::sc_time_stamp() >= kTimeLimit && !takes_no_simulated_time(op))
      return {Status::State, std::string(name(op)) + ": the VP's simulated time reached its limit of " +
                                 kTimeLimitText + "; only requests that take no simulated time are served",
              {}};
    Outcome out;
    host.request = [&](platform::Driver& d) {
      if (!started_requests) take_power_on_state();
      started_requests = true;
      driver = &d;
      out = parse_and_execute(op, payload);
      driver = nullptr;
    };
    host.busy = true;
    host.failure = nullptr;
    host.driver().reset_cancel();
    if (started) host.wake.notify(sc_core::SC_ZERO_TIME);
    started = true;
    try {
      if (!simulate_until_answered(cancel)) {
        broken = true;
        return {Status::Internal, "the simulation ran out of events before the call finished (a deadlock)", {}};
      }
    } catch (const std::exception& e) {
      broken = true;
      return {Status::Internal, std::string("the simulation failed: ") + e.what(), {}};
    }
    if (host.failure) return {Status::Internal, std::string(name(op)) + ": an exception escaped the request", {}};
    // checks.hazards = error: a hazard met while the request ran -- by its own accesses, or by the driver's
    // feeder writing a submitted program into the queue meanwhile -- is its error, whatever else it did
    // (D-HAZARD-ERROR).
    if (std::optional<platform::HazardReport> h = platform.hazards.take_error()) return {Status::Hazard, h->text, {}};
    return out;
  }

  void take_power_on_state() {
    try {
      power_on = platform::power_on_state(platform);
    } catch (const std::exception& e) {
      power_on_error = e.what();
    }
  }

  // The hard reset (pevp/platform/reset.h), with what the host itself holds of the old program: the records its
  // feeder had not written yet, and a failure the feeder met that no wait reported.
  void reset(platform::Driver& d) {
    if (!power_on) throw Refusal(Status::State, "reset: no power-on state to return to: " + power_on_error);
    d.forget_program();
    platform::hard_reset(platform, *power_on);
  }

  // Runs the simulation slice by slice until the host answered; false when it ran out of events first (a
  // deadlock). Between slices it asks `cancel`; once that gives a reason, the driver's waits end (cancel()).
  bool simulate_until_answered(const CancelCheck& cancel) {
    bool cancelling = false;
    slicer.restart();
    for (;;) {
      const auto start = std::chrono::steady_clock::now();
      // SC_RUN_TO_TIME: SC_EXIT_ON_STARVATION leaves time where it is when the next event lies past the slice's end
      // (a wait_irq's far deadline), and the next slice would start from the same time again.
      sc_core::sc_start(slicer.next(), sc_core::SC_RUN_TO_TIME);
      if (!host.busy) return true;
      if (!sc_core::sc_pending_activity()) return false;  // the host waits for nothing that can happen
      slicer.took(std::chrono::steady_clock::now() - start);
      if (cancelling || !cancel) continue;
      cancel_reason = cancel();
      if (cancel_reason.empty()) continue;
      cancelling = true;
      host.driver().cancel();
    }
  }

  Outcome parse_and_execute(Op op, const std::vector<std::uint8_t>& payload) {
    try {
      Reader in(payload.data(), payload.size(), name(op));
      return execute(op, in);
    } catch (const remote::ProtocolError& e) {
      return {Status::Protocol, e.what(), {}};
    } catch (const std::bad_alloc&) {
      // The server goes on: the reserve the failure gave back is taken again for the next one (pe-vp serve only).
      if (buffers::oom_headroom_installed()) buffers::reserve_oom_headroom();
      return {Status::Internal, std::string(name(op)) + ": out of host memory", {}};
    } catch (const std::exception& e) {
      return {Status::Internal, std::string(name(op)) + ": " + e.what(), {}};
    }
  }

  // Runs `work` with the driver (on the host thread, inside on_host); every exception becomes a status and a
  // message.
  Outcome run(const std::function<void(platform::Driver&)>& work) {
    try {
      work(*driver);
      return {};
    } catch (const Refusal& e) {
      return {e.status, e.what(), {}};
    } catch (const platform::Cancelled& e) {
      return {Status::State, std::string(e.what()) + ": " + cancel_reason, {}};
    } catch (const platform::HoldLimitError& e) {
      return {Status::State, e.what(), {}};
    } catch (const std::bad_alloc&) {
      throw;  // parse_and_execute's: "out of host memory", the reserve taken again
    } catch (const platform::PrivilegeError& e) {
      return {Status::Privilege, e.what(), {}};
    } catch (const platform::BusError& e) {
      return {Status::Bus, e.what(), {}};
    } catch (const std::invalid_argument& e) {
      return {Status::Argument, e.what(), {}};
    } catch (const std::out_of_range& e) {
      return {Status::Argument, e.what(), {}};
    } catch (const std::exception& e) {
      return {Status::Internal, e.what(), {}};
    }
  }

  // Runs `work`, whose result payload it writes into `out`.
  Outcome run_with(const std::function<void(platform::Driver&, Writer&)>& work) {
    Writer out;
    Outcome o = run([&](platform::Driver& d) { work(d, out); });
    if (o.ok()) o.payload = out.take();
    return o;
  }

  Outcome hello() const {
    const platform::VpConfig& c = config;
    Writer w;
    w.u8(remote::kProtocolVersion).str(isa::name(c.gen()));
    w.u64(c.platform.map.sbuf).u64(c.platform.map.psum).u64(c.platform.map.apb).u64(c.platform.map.iq);
    w.u32(c.geometry.sbuf_partition_bytes).u32(c.geometry.psum_partition_bytes()).u32(c.geometry.partitions);
    w.str(PEVP_VERSION);
    return {Status::Ok, "", w.take()};
  }

  Outcome assemble(Reader& in) {
    const std::string source = in.lstr("source");
    in.end();
    const isa::AsmResult r = isa::assemble(config.gen(), source, isa::AsmOptions(false, config.geometry));
    if (!r.ok()) {
      std::string all;
      for (const auto& d : r.diagnostics) all += (all.empty() ? "" : "\n") + d.describe("source");
      return {Status::Assembly, all, {}};
    }
    Writer w;
    for (const auto& rec : r.records) w.bytes(rec.data(), rec.size());
    return {Status::Ok, "", w.take()};
  }

  // expect: executes one instruction on the VP and answers what it wrote to PSUM and when (expectation.h).
  Outcome expect(Reader& in) {
    if (in.left() != isa::kInstructionBytes)
      throw remote::ProtocolError("expect: " + std::to_string(in.left()) + " bytes are not one " +
                                  std::to_string(isa::kInstructionBytes) + "-byte instruction");
    const std::vector<std::uint8_t> bytes = in.rest();
    isa::RawInstruction raw{};
    std::copy(bytes.begin(), bytes.end(), raw.begin());
    Writer w;
    Outcome o = run([&](platform::Driver& d) {
      // Refused before anything runs: the rule and the field, as the SEQ's error record would name them.
      const isa::Decoded decoded = isa::decode(config.gen(), config.geometry, raw);
      if (!decoded.valid())
        throw Refusal(Status::Argument, "expect: the instruction breaks rule " + decoded.violations.front().rule +
                                            ": " + decoded.violations.front().describe() + " (nothing was executed)");
      const std::uint32_t status = d.read(platform::resolve_register(d.map(), "vp", "seq_status"));
      if (status & 1u)
        throw Refusal(Status::State, "expect: the SEQ is busy with earlier instructions: wait for idle first (the "
                                     "expectation is of one instruction on an idle engine)");
      if (status & 8u)
        throw Refusal(Status::State, "expect: the SEQ is stopped on an error record: read it and clear it first");
      expected_ops.clear();
      expecting = true;
      platform::Completion c;
      try {
        d.submit({raw});
        c = d.wait_idle(wait_timeout(Op::Expect, kExpectTimeoutNs));
      } catch (...) {
        expecting = false;
        throw;
      }
      expecting = false;
      if (c.error) {
        const std::optional<seq::ErrorRecord>& e = platform.seq.error();
        throw Refusal(Status::State, "expect: the VP refused the instruction at execution" +
                                         (e ? " (rule " + e->rule + "): " + e->message : std::string()) +
                                         "; the SEQ is stopped on its error record (pevp_error_record, "
                                         "pevp_clear_error)");
      }
      if (c.timed_out || !c.done)
        throw Refusal(Status::Timeout, "expect: the instruction did not complete within " +
                                           std::to_string(kExpectTimeoutNs) +
                                           " ns of simulated time (an EVENTS wait on a semaphore nothing sets? is "
                                           "the VP armed, pevp_arm?)");
      const PsumWindow win = psum_window(expected_ops, config.geometry);
      const InstructionCycles cyc = instruction_cycles(expected_ops);
      w.u64(expected_ops.empty() ? 0 : expected_ops.back().op.instr_index);
      w.u32(static_cast<std::uint32_t>(expected_ops.size()));
      w.u64(cyc.issue).u64(cyc.start).u64(cyc.complete).u64(cyc.response);
      w.u32(win.first_partition).u32(win.partitions).u32(win.offset).u32(win.bytes).u8(win.element_bytes);
      // Read without bus time: the scoreboard's look leaves the run's timing alone.
      const std::uint8_t* psum = platform.psum.data();
      const std::uint32_t pb = config.geometry.psum_partition_bytes();
      for (std::uint32_t p = 0; p < win.partitions; ++p)
        w.bytes(psum + std::uint64_t{win.first_partition + p} * pb + win.offset, win.bytes);
    });
    if (o.ok()) o.payload = w.take();
    return o;
  }

  Outcome execute(Op op, Reader& in) {
    switch (op) {
      case Op::Hello:
        in.end();
        return hello();
      case Op::Time: {
        in.end();
        return {Status::Ok, "", Writer().u64(sc_core::sc_time_stamp().value()).take()};  // resolution: 1 ps
      }
      case Op::Shutdown:
        in.end();
        return {};
      case Op::Cycles: {
        in.end();
        const arrseq::ArrSeq& a = platform.arr_seq;
        const double ghz = a.config().timing.clock_ghz;
        std::uint64_t ghz_bits = 0;
        static_assert(sizeof ghz == sizeof ghz_bits, "f64 travels as 8 bytes");
        std::memcpy(&ghz_bits, &ghz, sizeof ghz_bits);
        const arrseq::TimelineStats& st = a.timeline().stats();
        return {Status::Ok, "", Writer().u64(a.now()).u64(st.busy_span).u64(st.first_start).u64(st.last_complete)
                                    .u64(ghz_bits).take()};
      }
      case Op::MicroOpLog: {
        const bool on = in.flag("on");
        in.end();
        if (!micro_op_log) {
          if (!on) return {};
          micro_op_log = std::make_unique<platform::MicroOpLog>(platform, micro_op_lines);
        }
        micro_op_log->enable(on);
        return {};
      }
      case Op::Diagnostics: {
        in.end();
        std::string lines = std::exchange(diagnostics, std::string());
        if (diagnostics_dropped != 0)
          lines += "pe-vp: " + std::to_string(std::exchange(diagnostics_dropped, 0)) +
                   " more warnings were not kept (the VP keeps at most " +
                   std::to_string(remote::kMaxTransferBytes / 2) + " bytes of them between takes)\n";
        return {Status::Ok, "", Writer().lstr(lines).take()};
      }
      case Op::MicroOpLogTake: {
        in.end();
        micro_op_lines.flush();
        if (micro_op_kept.dropped() != 0) {
          // Said once, before the kept lines are handed out: they stay for the next take.
          const std::string why = "micro_op_log_take: " + std::to_string(micro_op_kept.dropped()) +
                                  " micro-op lines from line " + std::to_string(micro_op_kept.first_dropped()) +
                                  " on were not kept: the VP keeps at most " +
                                  std::to_string(remote::kMaxTransferBytes) +
                                  " bytes of lines between takes (D-UOP-LOG-BOUND); take again for the lines kept";
          micro_op_kept.forget_dropped();
          return {Status::State, why, {}};
        }
        return {Status::Ok, "", Writer().lstr(micro_op_kept.take()).take()};
      }
      case Op::Read32: {
        const std::uint64_t address = in.u64("address");
        const bool privileged = in.flag("privileged");
        in.end();
        return run_with([&](platform::Driver& d, Writer& w) { w.u32(d.read32(address, privileged)); });
      }
      case Op::Write32: {
        const std::uint64_t address = in.u64("address");
        const bool privileged = in.flag("privileged");
        const std::uint32_t value = in.u32("value");
        in.end();
        return run([&](platform::Driver& d) { d.write32(address, value, privileged); });
      }
      case Op::Read: {
        const std::uint64_t address = in.u64("address");
        const std::uint32_t bytes = in.u32("bytes");
        in.end();
        if (bytes > remote::kMaxTransferBytes)
          throw remote::ProtocolError("read: " + std::to_string(bytes) + " bytes exceed the transfer limit of " +
                                      std::to_string(remote::kMaxTransferBytes) + " per request");
        std::vector<std::uint8_t> data(bytes);
        Outcome o = run([&](platform::Driver& d) { d.read(address, data.data(), data.size()); });
        if (o.ok()) o.payload = std::move(data);
        return o;
      }
      case Op::Write: {
        const std::uint64_t address = in.u64("address");
        const std::vector<std::uint8_t> data = in.rest();
        return run([&](platform::Driver& d) { d.write(address, data.data(), data.size()); });
      }
      case Op::ReadReg: {
        const std::string face = in.str("face"), name = in.str("name");
        in.end();
        return run_with([&](platform::Driver& d, Writer& w) {
          w.u32(d.read(platform::resolve_register(d.map(), face, name)));
        });
      }
      case Op::WriteReg: {
        const std::string face = in.str("face"), name = in.str("name");
        const std::uint32_t value = in.u32("value");
        in.end();
        return run([&](platform::Driver& d) {
          const platform::RegisterRef r = platform::resolve_register(d.map(), face, name);
          const unsigned width = r.field ? r.field->width : 32;
          if (width < 32 && value >> width != 0)
            throw std::invalid_argument(r.name() + ": " + std::to_string(value) + " does not fit its " +
                                        std::to_string(width) + " bits");
          d.write(r, value);
        });
      }
      case Op::Counter48: {
        const std::string face = in.str("face"), name = in.str("lsb register");
        in.end();
        return run_with([&](platform::Driver& d, Writer& w) { w.u64(d.read_counter48(face, name)); });
      }
      case Op::Arm: {
        platform::ArmOptions o;
        o.serialized = in.flag("serialized");
        o.single_entry = in.flag("single_entry");
        o.reg_immediate = in.flag("reg_immediate");
        in.end();
        return run([&](platform::Driver& d) { d.arm(o); });
      }
      case Op::Submit: {
        if (in.left() % isa::kInstructionBytes != 0)
          throw remote::ProtocolError("submit: " + std::to_string(in.left()) + " bytes are not whole " +
                                      std::to_string(isa::kInstructionBytes) + "-byte records");
        const std::vector<std::uint8_t> bytes = in.rest();
        std::vector<isa::RawInstruction> program(bytes.size() / isa::kInstructionBytes);
        for (std::size_t i = 0; i < program.size(); ++i)
          std::copy(bytes.begin() + static_cast<std::ptrdiff_t>(i * isa::kInstructionBytes),
                    bytes.begin() + static_cast<std::ptrdiff_t>((i + 1) * isa::kInstructionBytes), program[i].begin());
        return run([&](platform::Driver& d) { d.submit(program); });
      }
      case Op::WaitIdle: {
        const std::uint64_t timeout_ns = in.u64("timeout_ns");
        in.end();
        return run_with([&](platform::Driver& d, Writer& w) {
          const platform::Completion c = d.wait_idle(wait_timeout(op, timeout_ns));
          w.u8(c.done).u8(c.error).u8(c.timed_out).u64(c.retired);
        });
      }
      case Op::WaitIrq: {
        const std::uint64_t timeout_ns = in.u64("timeout_ns");
        in.end();
        return run_with([&](platform::Driver&, Writer& w) {
          const bool raised = host.wait_irq(wait_timeout(op, timeout_ns));
          w.u8(raised).u64(sc_core::sc_time_stamp().value());
        });
      }
      case Op::ClearDone:
        in.end();
        return run([&](platform::Driver& d) { d.clear_done(); });
      case Op::ErrorRecord:
        in.end();
        return run_with([&](platform::Driver& d, Writer& w) {
          const std::optional<platform::ErrorInfo> e = d.error_record();
          if (!e) {
            w.u8(0).u32(0).u8(0).u8(0xFF).u16(0).u64(0).str("").str("").str("").str("");  // every field, empty
            return;
          }
          w.u8(1).u32(e->index).u8(e->opcode).u8(e->field_offset).u16(e->rule_number);
          w.u64(static_cast<std::uint64_t>(e->value)).str(e->rule).str(e->describe());
          // The CSRs hold numbers; the SEQ's own record (the one they were set from) has the field's name and the
          // sentence it would otherwise only have said as a SystemC report.
          const std::optional<seq::ErrorRecord>& full = platform.seq.error();
          w.str(full ? remote::printable_message(full->field) : "");
          w.str(full ? remote::printable_message(full->message.substr(0, kMaxFaultMessageBytes)) : "");
        });
      case Op::ClearError:
        in.end();
        return run([&](platform::Driver& d) { d.clear_error(); });
      case Op::Assemble:
        return assemble(in);
      case Op::Stats: {
        in.end();
        std::string json;
        Outcome o = run([&](platform::Driver&) { json = platform::run_stats(platform).dump(); });
        if (o.ok()) o.payload = Writer().lstr(json).take();
        return o;
      }
      case Op::SaveCheckpoint: {
        in.end();
        std::vector<std::uint8_t> bytes;
        Outcome o = run([&](platform::Driver&) {
          try {
            bytes = platform::save_checkpoint(platform);
          } catch (const platform::CheckpointError& e) {
            throw Refusal(Status::State, e.what());  // not at an idle point
          }
          if (bytes.size() > remote::kMaxTransferBytes)
            throw Refusal(Status::State, "the checkpoint has " + std::to_string(bytes.size()) +
                                             " bytes, more than a frame carries (" +
                                             std::to_string(remote::kMaxTransferBytes) + ")");
        });
        if (o.ok()) o.payload = std::move(bytes);
        return o;
      }
      case Op::Reset:
        in.end();
        return run([&](platform::Driver& d) { reset(d); });
      case Op::Expect:
        return expect(in);
      case Op::RestoreCheckpoint: {
        const std::vector<std::uint8_t> bytes = in.rest();
        return run([&](platform::Driver&) {
          try {
            // The reader refuses a time past the VP's limit (D-SIM-TIME-LIMIT), up to which restoring waits.
            platform::restore_checkpoint(platform, bytes, "(sent by the client)");
          } catch (const platform::CheckpointError& e) {
            throw Refusal(Status::Argument, e.what());  // nothing was applied
          }
        });
      }
    }
    return {Status::Protocol, "unknown op", {}};
  }
};

namespace {
Machine* the_machine = nullptr;  // lives until the process ends (see Machine::open)
Machine::Impl* the_impl = nullptr;  // the_machine's, for the report handler

// Where the SystemC reports raised in this process go (docs/errors.md "Where the VP's messages go"): the library
// prints nothing on its driver's stdout. A report that throws (an error's default action) becomes the failing
// call's message through the exception; a fatal one, or one raised before the VP exists (while it elaborates), is
// written on stderr; any other shown report -- an info such as a fault's sentence (also in the error record), a
// warning -- is a line of the diagnostics (pevp_diagnostics). The actions other than showing (throw, stop, abort)
// are SystemC's own.
void route_report(const sc_core::sc_report& report, const sc_core::sc_actions& actions) {
  constexpr sc_core::sc_actions kShow = sc_core::SC_DISPLAY | sc_core::SC_LOG;
  if ((actions & kShow) != 0 && (actions & sc_core::SC_THROW) == 0) {
    if (report.get_severity() == sc_core::SC_FATAL || the_impl == nullptr) {
      std::fprintf(stderr, "%s\n", sc_core::sc_report_compose_message(report).c_str());
    } else {
      // One line, "Info: /pevp/seq: ...", without the file and process lines SystemC adds to a warning.
      static const char* const kSeverity[] = {"Info", "Warning", "Error", "Fatal"};
      std::string line = std::string(kSeverity[report.get_severity()]) + ": " + report.get_msg_type() + ": " +
                         report.get_msg();
      std::replace(line.begin(), line.end(), '\n', ' ');
      the_impl->keep_diagnostic(line);
    }
  }
  sc_core::sc_report_handler::default_handler(report, actions & ~kShow);
}
}  // namespace

bool Machine::exists() { return the_machine != nullptr; }

Machine* Machine::open(const platform::VpConfig& config, std::string* error) {
  if (the_machine != nullptr) {
    if (error) *error = "a VP exists in this process already (SystemC runs one simulation per process)";
    return nullptr;
  }
  try {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    // The normal end of a request pauses the simulation; the kernel's info messages about it are not news.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    sc_core::sc_report_handler::set_handler(route_report);
    the_machine = new Machine(std::make_unique<Impl>(config));
    the_impl = the_machine->impl_.get();
    return the_machine;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return nullptr;
  }
}

Machine::Machine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

const platform::VpConfig& Machine::config() const { return impl_->config; }

void Machine::log_firmware(std::ostream& out) {
  impl_->firmware_log = std::make_unique<platform::FirmwareLog>(impl_->platform, out);
}

bool Machine::broken() const { return impl_->broken; }

Outcome Machine::execute(Op op, const std::vector<std::uint8_t>& payload, const CancelCheck& cancel) {
  clear_stale_stack_poison();
  return impl_->on_host(op, payload, cancel);
}

}  // namespace pevp::capi
