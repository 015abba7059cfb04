// The in-process VP of the C API and the server, and the protocol's requests executed on it.
#include "pevp/capi/machine.h"
#include "pevp/capi/stale_stack_poison.h"

#include "pevp/buffers/oom_headroom.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <sstream>
#include <stdexcept>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "pevp/isa/decode.h"
#include "pevp/isa/generation.h"
#include "pevp/isa_text/assembly.h"
#include "pevp/platform/checkpoint.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/firmware_log.h"
#include "pevp/platform/micro_op_log.h"
#include "pevp/platform/platform.h"
#include "pevp/platform/recorder.h"

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
    SC_THREAD(serve);
    // Requests are parsed and executed on this thread -- assembly text included, whose expressions recurse -- so it
    // gets a main thread's stack, not SystemC's small default (an expression nested 63 deep overflowed that under
    // ASan).
    set_stack_size(kStackBytes);
  }
  static constexpr std::size_t kStackBytes = std::size_t{8} << 20;

  // Waits until the interrupt line is high or `timeout` of simulated time passed; true when it is high.
  bool wait_irq(const sc_core::sc_time& timeout) {
    const sc_core::sc_time deadline = sc_core::sc_time_stamp() + timeout;
    while (!irq_.read() && sc_core::sc_time_stamp() < deadline)
      sc_core::wait(deadline - sc_core::sc_time_stamp(), irq_.value_changed_event());
    return irq_.read();
  }

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

sc_core::sc_time nanoseconds(std::uint64_t ns) { return sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS); }

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
  std::unique_ptr<platform::FirmwareLog> firmware_log;
  // The micro-op lines kept for the client (micro_op_log / micro_op_log_take); the log is made at the first
  // micro_op_log request, after any firmware log, and lives as long as the VP (it is switched, never unhooked).
  std::ostringstream micro_op_lines;
  std::unique_ptr<platform::MicroOpLog> micro_op_log;
  platform::Driver* driver = nullptr;  // the host's, while it executes a request

  explicit Impl(const platform::VpConfig& c)
      : config(c), platform("vp", c), host("capi_host", c.platform.map, platform.seq.irq) {
    host.socket.bind(platform.bus.target);
  }

  // Executes one request on the host thread, in simulated time: the simulation runs until the host has answered
  // it and paused. The request is parsed and executed there, and every exception it raises is caught there too:
  // none crosses back onto the main stack (an exception unwinding the main stack after one was thrown on a
  // SystemC thread stack is what makes ASan report false positives, stale_stack_poison.h).
  Outcome on_host(Op op, const std::vector<std::uint8_t>& payload) {
    if (broken) return {Status::State, "the VP stopped in an earlier call (a deadlock); start a new process", {}};
    Outcome out;
    host.request = [&](platform::Driver& d) {
      driver = &d;
      out = parse_and_execute(op, payload);
      driver = nullptr;
    };
    host.busy = true;
    host.failure = nullptr;
    if (started) host.wake.notify(sc_core::SC_ZERO_TIME);
    started = true;
    try {
      sc_core::sc_start();
    } catch (const std::exception& e) {
      broken = true;
      return {Status::Internal, std::string("the simulation failed: ") + e.what(), {}};
    }
    if (host.busy) {
      broken = true;
      return {Status::Internal, "the simulation ran out of events before the call finished (a deadlock)", {}};
    }
    if (host.failure) return {Status::Internal, std::string(name(op)) + ": an exception escaped the request", {}};
    return out;
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
      case Op::MicroOpLogTake: {
        in.end();
        std::string all = micro_op_lines.str();
        std::size_t cut = all.size();
        if (cut > remote::kMaxTransferBytes) cut = all.rfind('\n', remote::kMaxTransferBytes - 1) + 1;  // whole lines
        micro_op_lines.str(all.substr(cut));
        micro_op_lines.seekp(0, std::ios::end);
        all.resize(cut);
        return {Status::Ok, "", Writer().lstr(all).take()};
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
          const platform::Completion c = d.wait_idle(nanoseconds(timeout_ns));
          w.u8(c.done).u8(c.error).u8(c.timed_out).u64(c.retired);
        });
      }
      case Op::WaitIrq: {
        const std::uint64_t timeout_ns = in.u64("timeout_ns");
        in.end();
        return run_with([&](platform::Driver&, Writer& w) {
          const bool raised = host.wait_irq(nanoseconds(timeout_ns));
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
            w.u8(0).u32(0).u8(0).u8(0xFF).u16(0).u64(0).str("").str("");
            return;
          }
          w.u8(1).u32(e->index).u8(e->opcode).u8(e->field_offset).u16(e->rule_number);
          w.u64(static_cast<std::uint64_t>(e->value)).str(e->rule).str(e->describe());
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
      case Op::RestoreCheckpoint: {
        const std::vector<std::uint8_t> bytes = in.rest();
        return run([&](platform::Driver&) {
          try {
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
    the_machine = new Machine(std::make_unique<Impl>(config));
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

Outcome Machine::execute(Op op, const std::vector<std::uint8_t>& payload) {
  clear_stale_stack_poison();
  return impl_->on_host(op, payload);
}

}  // namespace pevp::capi
