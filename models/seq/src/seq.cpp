#include "pevp/seq/seq.h"

#include "pevp/isa/hex.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "pevp/isa/enums.h"
#include "pevp/isa/rules.h"
#include "pevp/seq/iq_write_status.h"

namespace pevp::seq {

namespace {

constexpr const char* kMsgType = "/pevp/seq";

bool in_thread_context() {
  const sc_core::sc_process_handle h = sc_core::sc_get_current_process_handle();
  return h.valid() && h.proc_kind() == sc_core::SC_THREAD_PROC_;
}

// The execution rules' messages start with the field path by convention
// ("dst_mem_pattern.start_addr = 0x...: ..."); recover it when the instruction
// has such a field, so the error record can name its byte offset.
std::string leading_field(const isa::Decoded& d, const std::string& message) {
  const std::size_t end = message.find_first_of(" :");
  if (end == std::string::npos) return "";
  std::string path = message.substr(0, end);
  return d.has(path) ? path : "";
}

}  // namespace

const params::Params<SeqConfig>& seq_parameters() {
  static const params::Params<SeqConfig> list = {
      {"queue_depth", "instructions", "model choice D-IQ", params::Kind::Count, 1, params::kMaxDepth,
       &SeqConfig::queue_depth},
      {"quantum_ns", "ns", "model choice", params::Kind::TimeNs, 0, 0, &SeqConfig::quantum},
  };
  return list;
}

Seq::Seq(sc_core::sc_module_name name, isa::Generation gen, regfile::ArrSeqCsrs& csrs, arrseq::MicroOpSink& arr,
         SeqConfig config)
    : sc_core::sc_module(name),
      iq("iq"),
      irq("irq"),
      gen_(gen),
      geometry_(config.geometry.value_or(isa::preset_geometry(gen))),
      csrs_(csrs),
      arr_(arr),
      clock_(arr.clock()),
      config_(config),
      cache_(config.decode_cache_entries) {
  if (config_.queue_depth == 0) config_.queue_depth = 1;
  iq.register_b_transport(this, &Seq::b_transport);
  auto& r = csrs_.seq.regs();
  f_busy_ = r.field("seq_status", "busy");
  f_idle_ = r.field("seq_status", "idle");
  f_done_ = r.field("seq_status", "done");
  f_error_ = r.field("seq_status", "error");
  f_irq_done_ = r.field("irq_status", "done");
  f_irq_error_ = r.field("irq_status", "error");
  f_en_done_ = r.field("irq_enable", "done");
  f_en_error_ = r.field("irq_enable", "error");
  f_level_ = r.field("iq_status", "level");
  f_space_ = r.field("iq_status", "space");
  f_err_index_ = r.field("err_instr_index", "index");
  f_err_opcode_ = r.field("err_info", "opcode");
  f_err_field_ = r.field("err_info", "field_id");
  f_err_rule_ = r.field("err_info", "rule_id");
  f_err_lo_ = r.field("err_value_lo", "value");
  f_err_hi_ = r.field("err_value_hi", "value");
  c_retired_ = r.counter("retired_cnt_lsb");
  for (unsigned i = 0; i < isa::kNumSemaphores; ++i) f_sem_[i] = r.field("semaphore_" + std::to_string(i), "value");

  // seq_cmd pulses and driver writes to the semaphores / irq_enable.
  r.on_pulse([this](const regfile::RegisterDesc&, const regfile::FieldDesc& f) {
    if (std::string_view(f.name) == "clear_done") {
      done_ = false;
      update_status();
    } else if (std::string_view(f.name) == "clear_error") {
      clear_error();
    }
  });
  r.on_write([this](const regfile::RegisterDesc& reg, std::uint32_t, std::uint32_t) {
    if (reg.def_name == "semaphore") semaphore_changed_.notify(sc_core::SC_ZERO_TIME);
    update_status();  // irq_enable may have changed the line
  });

  dispatch_cycles_ = arr_.dispatch_cycles();
  tlm_utils::tlm_quantumkeeper::set_global_quantum(config_.quantum);
  restart_quantum();
  SC_THREAD(run);
  dispatcher_ = sc_core::sc_get_current_process_handle();  // during elaboration: the process just made
  SC_METHOD(drive_irq);
  sensitive << irq_changed_;
  dont_initialize();
  SC_METHOD(retire_due_method);
  sensitive << retire_due_;
  dont_initialize();
  update_status();
}

std::uint32_t Seq::semaphore(unsigned i) const { return i < f_sem_.size() ? csrs_.seq.regs().get(f_sem_[i]) : 0; }

void Seq::set_semaphore(unsigned i, std::uint32_t v) {
  csrs_.seq.regs().set(f_sem_[i], v);
  semaphore_changed_.notify(sc_core::SC_ZERO_TIME);
}

bool Seq::busy() const { return !queue_.empty() || !pending_.empty(); }

void Seq::publish_level() {
  auto& r = csrs_.seq.regs();
  r.set(f_level_, level());
  r.set(f_space_, space());
}

void Seq::update_status() {
  auto& r = csrs_.seq.regs();
  const bool stopped = error_.has_value();
  const bool active = busy() && !stopped;
  publish_level();
  // The status bits change rarely; this runs for every instruction queued,
  // issued and retired, so write them only when they do (or after a reset of
  // the register file, which a driver may do: compare with the registers).
  const int status = int{active} | int{done_} << 1 | int{stopped} << 2;
  if (status != last_status_ || r.get(f_idle_) == static_cast<std::uint32_t>(active)) {
    r.set(f_busy_, active);
    r.set(f_idle_, !active);
    r.set(f_done_, done_);
    r.set(f_error_, stopped);
    r.set(f_irq_done_, done_);
    r.set(f_irq_error_, stopped);
    if (status != last_status_ && status_observer) status_observer(active, done_, stopped);
    last_status_ = status;
  }
  const bool line = (done_ && r.get(f_en_done_)) || (stopped && r.get(f_en_error_));
  if (line != irq_level_) {
    irq_level_ = line;
    irq_changed_.notify(sc_core::SC_ZERO_TIME);
  }
}

void Seq::drive_irq() { irq.write(irq_level_); }

bool Seq::try_push(const isa::RawInstruction& raw) {
  if (queue_.size() >= config_.queue_depth) return false;
  const bool status_may_change = !busy() || done_;  // else only the level moves
  queue_.push_back({next_index_++, raw});
  if (queued_observer) queued_observer(queue_.back().index, raw);
  done_ = false;  // new work: the program is not complete any more
  if (status_may_change) update_status();  // else only iq_status moves: written when the bus reads it
  queued_.notify(sc_core::SC_ZERO_TIME);
  return true;
}

void Seq::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
  const std::uint64_t addr = trans.get_address();
  const unsigned len = trans.get_data_length();
  if (trans.get_command() != tlm::TLM_WRITE_COMMAND) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    SC_REPORT_WARNING(kMsgType, "instruction queue: reads are not supported (write-only window)");
    return;
  }
  if (trans.get_byte_enable_ptr() != nullptr || len == 0 || len % isa::kInstructionBytes != 0 ||
      addr % isa::kInstructionBytes != 0 || addr + len > config_.window_bytes ||
      (trans.get_streaming_width() != 0 && trans.get_streaming_width() < len)) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    SC_REPORT_WARNING(kMsgType, ("instruction queue: a write must be n x 64 bytes at a 64-byte aligned offset inside "
                                 "the window, without byte enables (address " +
                                 hex(addr) + ", length " + std::to_string(len) + ")")
                                    .c_str());
    return;
  }
  const unsigned n = len / isa::kInstructionBytes;
  IqWriteStatus* const status = trans.get_extension<IqWriteStatus>();
  if (status != nullptr) status->queued = 0;
  const bool may_wait = in_thread_context() && (status == nullptr || status->wait_for_room);
  if (space() < n && !may_wait) {
    // LT rule, as for a write that waits: the room is looked at from the caller's local time.
    if (delay != sc_core::SC_ZERO_TIME && in_thread_context()) {
      sc_core::wait(delay);
      delay = sc_core::SC_ZERO_TIME;
    }
    if (space() < n) {
      if (status != nullptr) status->space = space();
      SC_REPORT_WARNING(kMsgType, ("instruction queue full: " + std::to_string(n) + " instructions, " +
                                   std::to_string(space()) + " free; nothing queued").c_str());
      return;
    }
  }
  const unsigned char* data = trans.get_data_ptr();
  const std::uint64_t dropped_at_entry = work_dropped_;
  for (unsigned i = 0; i < n; ++i) {
    isa::RawInstruction raw;
    std::memcpy(raw.data(), data + std::size_t{i} * isa::kInstructionBytes, raw.size());
    while (!try_push(raw)) {
      // Back-pressure (thread context only). LT rule: a target that must wait
      // first consumes the time its caller has run ahead, so the wait starts
      // at the caller's local time.
      if (delay != sc_core::SC_ZERO_TIME) {
        sc_core::wait(delay);
        delay = sc_core::SC_ZERO_TIME;
        continue;  // space may have been freed meanwhile
      }
      if (error_) {
        // Stopped on a fault, nothing makes room until the driver clears it: the
        // write completes with an error instead of hanging its initiator
        // (D-IQ-STOPPED). The records before this one are queued, and the
        // initiator learns how many through IqWriteStatus.
        if (status != nullptr) status->queued = i;
        SC_REPORT_WARNING(kMsgType, ("instruction queue full and the SEQ stopped on a fault: " + std::to_string(i) +
                                     " of the write's " + std::to_string(n) + " instructions queued")
                                        .c_str());
        return;  // TLM_GENERIC_ERROR_RESPONSE, set on entry
      }
      sc_core::wait(space_freed_ | stopped_);
      if (work_dropped_ != dropped_at_entry) {
        // A hard reset dropped the records this write queued: the rest belong to the program it dropped too.
        if (status != nullptr) status->queued = i;
        SC_REPORT_WARNING(kMsgType, ("the SEQ was reset while a queue write waited for room: " + std::to_string(i) +
                                     " of the write's " + std::to_string(n) + " instructions were queued (and dropped)")
                                        .c_str());
        return;  // TLM_GENERIC_ERROR_RESPONSE, set on entry
      }
    }
  }
  // The write itself takes no time of its own here (the bus and the driver
  // annotate theirs); the caller's delay is left as it came.
  if (status != nullptr) status->queued = n;
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool Seq::wait_satisfied(const Events& e) const {
  if (e.wait_mode == isa::WaitMode::NONE) return true;
  const std::uint32_t v = semaphore(e.wait_sem);
  return e.wait_mode == isa::WaitMode::WAIT_GE ? v >= e.wait_value : v == e.wait_value;
}

void Seq::account_semaphore_wait(arrseq::Cycle from, arrseq::Cycle array_busy_until) {
  const arrseq::Cycle until = clock_.now();
  stats_.semaphore_wait_cycles += until - from;
  if (until > array_busy_until) stats_.array_idle_on_semaphore_cycles += until - array_busy_until;
}

namespace {

// D-SEM-RANGE, the one rule for an instruction's EVENTS update and another agent's: the value semaphore `v` takes,
// or none when an increment would pass 2^32 - 1 (`overflow` set) or a decrement go below 0.
std::optional<std::uint32_t> updated(std::uint32_t v, isa::UpdateMode mode, std::uint32_t by, bool& overflow) {
  overflow = mode == isa::UpdateMode::INCREMENT;
  switch (mode) {
    case isa::UpdateMode::NONE: return v;
    case isa::UpdateMode::SET: return by;
    case isa::UpdateMode::INCREMENT:
      if (v > std::numeric_limits<std::uint32_t>::max() - by) return std::nullopt;
      return v + by;
    case isa::UpdateMode::DECREMENT:
      if (v < by) return std::nullopt;
      return v - by;
  }
  return v;
}

}  // namespace

std::string Seq::update_semaphore(unsigned i, isa::UpdateMode mode, std::uint32_t by) {
  if (i >= f_sem_.size())
    return "semaphore " + std::to_string(i) + " does not exist (" + std::to_string(f_sem_.size()) + " semaphores)";
  catch_up();  // the instructions' updates due by now come first
  const std::uint32_t v = semaphore(i);
  bool overflow = false;
  const std::optional<std::uint32_t> next = updated(v, mode, by, overflow);
  if (!next)
    return "semaphore " + std::to_string(i) + " = " + std::to_string(v) + (overflow ? " + " : " - ") +
           std::to_string(by) + (overflow ? " would pass 2^32 - 1" : " would go below 0");
  if (mode != isa::UpdateMode::NONE) set_semaphore(i, *next);
  return "";
}

std::optional<fw::Fault> Seq::apply_update(const Events& e) {
  if (e.update_mode == isa::UpdateMode::NONE) return std::nullopt;
  const unsigned i = e.update_sem;
  const auto by = static_cast<std::uint32_t>(e.update_value);
  const std::uint32_t v = semaphore(i);
  bool overflow = false;
  const std::optional<std::uint32_t> next = updated(v, e.update_mode, by, overflow);
  if (!next)
    return fw::Fault{overflow ? "seq.semaphore_overflow" : "seq.semaphore_underflow", "events.update_value", by,
                     "semaphore " + std::to_string(i) + " = " + std::to_string(v) +
                         (overflow ? " would pass 2^32 - 1" : " would go below 0")};
  set_semaphore(i, *next);
  return std::nullopt;
}

void Seq::fault(std::uint64_t index, const isa::Decoded& d, std::string rule, std::string field, std::int64_t value,
                std::string message) {
  ErrorRecord e;
  e.index = index;
  e.opcode = d.opcode_byte;
  if (const isa::DecodedField* f = field.empty() ? nullptr : d.field(field)) e.field_offset = f->leaf.offset;
  e.rule_number = isa::rule_number(rule);
  e.rule = std::move(rule);
  e.field = std::move(field);
  e.value = value;
  const std::string op = d.opcode ? std::string(isa::name(*d.opcode)) : "opcode " + hex(d.opcode_byte, 2);
  e.message = "instruction " + std::to_string(index) + " (" + op + "): " +
              // The value leads unless the message already names it ("field = value: ..."); a message that only
              // starts with the field's name ("psum_zero_region must be 0..3") still gets it.
              (e.field.empty() || message.rfind(e.field + " = ", 0) == 0 ? ""
                                                                          : e.field + " = " + std::to_string(value) + ": ") +
              message + " [" + e.rule + "]";
  if (fault_observer) fault_observer(e, d);
  if (error_) {  // keep the first record; this one waits its turn
    deferred_faults_.push_back(std::move(e));
    return;
  }
  publish(std::move(e));
}

void Seq::publish(ErrorRecord e) {
  auto& r = csrs_.seq.regs();
  r.set(f_err_index_, static_cast<std::uint32_t>(e.index));
  r.set(f_err_opcode_, e.opcode);
  r.set(f_err_field_, e.field_offset);
  r.set(f_err_rule_, e.rule_number);
  r.set(f_err_lo_, static_cast<std::uint32_t>(static_cast<std::uint64_t>(e.value)));
  r.set(f_err_hi_, static_cast<std::uint32_t>(static_cast<std::uint64_t>(e.value) >> 32));
  SC_REPORT_INFO_VERB(kMsgType, e.message.c_str(), sc_core::SC_LOW);
  error_ = std::move(e);
  update_status();
  settled_.notify(sc_core::SC_ZERO_TIME);
  stopped_.notify(sc_core::SC_ZERO_TIME);
}

void Seq::clear_error() {
  if (!error_) return;
  error_.reset();
  auto& r = csrs_.seq.regs();
  for (const auto& f : {f_err_index_, f_err_opcode_, f_err_field_, f_err_rule_, f_err_lo_, f_err_hi_}) r.set(f, 0);
  if (!deferred_faults_.empty()) {  // the next fault found while stopped
    ErrorRecord next = std::move(deferred_faults_.front());
    deferred_faults_.pop_front();
    publish(std::move(next));
    return;
  }
  // The fault was the program's last instruction: nothing is left, so the
  // program is complete (otherwise done comes with the last retirement).
  if (queue_.empty() && pending_.empty()) {
    done_ = true;
    settled_.notify(sc_core::SC_ZERO_TIME);
  }
  update_status();
  resumed_.notify(sc_core::SC_ZERO_TIME);
}

Seq::PreparedPtr Seq::prepare(const isa::RawInstruction& raw) const {
  auto p = std::make_shared<Prepared>();
  p->fw = fw::prepare(std::make_shared<const isa::Decoded>(isa::decode(gen_, geometry_, raw)));
  for (const pe::MicroOp& op : p->fw.ops) p->shapes.push_back(arrseq::shape_of(op, geometry_));
  return p;
}

Seq::PreparedPtr Seq::prepare_cached(const isa::RawInstruction& raw) {
  return cache_.get(raw, [this](const isa::RawInstruction& r) { return prepare(r); });
}

void Seq::run() {
  parked_ = false;
  for (;;) {
    catch_up();
    if (queue_.empty() || error_) {
      arm_retirement();
      parked_ = true;
      sc_core::wait(queued_ | resumed_);
      parked_ = false;
      restart_quantum();
      waited_for_software_ = true;
      continue;
    }
    dispatch_head();
    // Run ahead of simulated time by at most one quantum (the quantum keeper's
    // need_sync(), compared in cycles).
    if (local_ >= sync_cycle_ || clock_.now() >= sync_cycle_) sync_to(local_);
  }
}

bool Seq::dispatch_head() {
  local_ = std::max(local_, clock_.now());
  const Entry entry = queue_.front();
  const PreparedPtr instr = prepare_cached(entry.raw);
  const isa::Decoded& decoded = instr->decoded();
  fw::HandlerOutput& out = handler_out_;  // reused: its micro-op vector keeps its capacity
  firmware_.handle(instr->fw, entry.index, out);
  if (!out.self_name.empty() && entry.index >= next_log_index_) {
    next_log_index_ = entry.index + 1;
    // A bounded log: a stream of millions of instructions must not grow memory.
    if (fw_log_.size() >= kFirmwareLogLines) fw_log_.pop_front();
    fw_log_.push_back(out.self_name);
    if (firmware_observer) firmware_observer(entry.index, out.self_name, local_);
    // The report handler looks the message type up by string before it checks
    // the verbosity: test the verbosity first, it is on every instruction.
    if (sc_core::sc_report_handler::get_verbosity_level() >= sc_core::SC_DEBUG)
      SC_REPORT_INFO_VERB(kMsgType, out.self_name.c_str(), sc_core::SC_DEBUG);
  }
  const arrseq::Cycle ready = local_ + dispatch_cycles_;
  if (out.fault) {
    // Report in program order: an earlier instruction may still fault when it
    // retires, and then this one is behind the stop, not the cause of it.
    sync_to(ready);
    if (!drain_pending()) return false;  // it stays queued and is handled again after clear_error
    queue_.pop_front();
    if (left_observer) left_observer(entry.index);
    space_freed_.notify(sc_core::SC_ZERO_TIME);
    firmware_.rewind(entry.index, {}, {});  // a rejected instruction leaves no state behind
    local_ = std::max(ready, clock_.now());
    const fw::Fault& f = *out.fault;
    fault(entry.index, decoded, f.rule, f.field, f.value, f.message);
    return true;
  }
  // EVENTS: wait before issue, at the SEQ's own time. The instruction stays at
  // the head of the queue while it waits, so level/space show it.
  if (instr->fw.events.wait_mode != isa::WaitMode::NONE) {
    sync_to(ready);
    const arrseq::Cycle wait_from = clock_.now();
    // What the instructions issued before still hold the array for: the wait idles it only past that.
    const arrseq::Cycle array_busy_until = pending_.empty() ? wait_from : std::max(wait_from, pending_.back().response);
    const bool in_busy_period = !waited_for_software_;
    bool waited = false;
    while (!error_ && !wait_satisfied(instr->fw.events)) {
      arm_retirement();
      sc_core::wait(semaphore_changed_ | settled_ | retired_ev_);
      catch_up();
      waited = true;
    }
    if (waited && in_busy_period) account_semaphore_wait(wait_from, array_busy_until);
    // An earlier instruction faulted meanwhile: start again from the head.
    if (error_ || queue_.empty() || queue_.front().index != entry.index) return false;
  }
  // An update that will under/overflow stops the run-ahead: nothing after it
  // may execute, so it must retire (and fault) before the next instruction issues.
  const bool update_faults = update_may_fault(instr->fw.events);
  arrseq::Cycle t = std::max(ready, clock_.now());
  arrseq::Cycle response = t;
  // The instruction stays at the head of the queue until it is in the array or reported: while the SEQ waits to
  // report an array fault in program order, an earlier instruction retiring must find work left, not a done
  // program (the fault would then come after seq_status.done, and a driver would miss it).
  for (std::size_t i = 0; i < out.ops.size(); ++i) {
    // The firmware emits the micro-ops prepared with the instruction, in order.
    const pe::MicroOp& op = out.ops[i];
    const arrseq::Issued r = arr_.issue(op, instr->shapes[i], t, waited_for_software_);
    waited_for_software_ = false;
    if (!r.result.ok) {  // nothing of it was written
      sync_to(r.push);
      if (!drain_pending()) return false;  // it stays queued and is handled again after clear_error
      queue_.pop_front();
      if (left_observer) left_observer(entry.index);
      space_freed_.notify(sc_core::SC_ZERO_TIME);
      firmware_.rewind(entry.index, {}, {});
      local_ = std::max(r.push, clock_.now());
      // The SEQ holds the instruction: the error record names the field the message leads with.
      const std::string field = leading_field(decoded, r.result.message);
      fault(entry.index, decoded, r.result.rule, field, field.empty() ? 0 : decoded.get(field), r.result.message);
      return true;
    }
    t = r.push;  // the SEQ is blocked until the micro-op is in the IFIFO
    response = std::max(response, r.response);
  }
  queue_.pop_front();
  if (issued_observer) issued_observer(entry.index);
  space_freed_.notify(sc_core::SC_ZERO_TIME);
  local_ = t;
  pending_.push_back({entry.index, instr, response});  // still busy: only iq_status moved
  if (update_faults) drain_pending();
  return true;
}

void Seq::restart_quantum() {
  qk_.reset();
  // The first cycle at or past the keeper's next sync point: local_ reaching
  // it is need_sync() with the local time set to local_ - now.
  const sc_core::sc_time at = qk_.next_sync_point();
  arrseq::Cycle c = clock_.to_cycles(at);
  while (c > 0 && clock_.to_time(c - 1) >= at) --c;
  while (clock_.to_time(c) < at) ++c;
  sync_cycle_ = c;
}

void Seq::sync_to(arrseq::Cycle c) {
  // time_reaching, not to_time: a drain waits for a response by syncing to it until it retired.
  const sc_core::sc_time t = time_reaching(c), now = sc_core::sc_time_stamp();
  if (t > now) {
    ++stats_.syncs;
    sc_core::wait(t - now);
  }
  restart_quantum();  // the next quantum starts now
  catch_up();
  // Count the row groups' activity up to now, so the intervals scheduled
  // ahead do not pile up between register reads.
  arr_.settle(clock_.now());
}

bool Seq::drain_pending() {
  while (!pending_.empty() && !error_) sync_to(pending_.back().response);
  return !error_;
}

void Seq::catch_up() {
  if (pending_.empty()) return;
  const arrseq::Cycle now = clock_.now();
  while (!pending_.empty() && pending_.front().response <= now) retire_front();
}

void Seq::arm_retirement() {
  if (pending_.empty()) return;
  const sc_core::sc_time t = time_reaching(pending_.front().response), now = sc_core::sc_time_stamp();
  retire_due_.notify(t > now ? t - now : sc_core::SC_ZERO_TIME);
}

sc_core::sc_time Seq::time_reaching(arrseq::Cycle c) const {
  // to_time(c) is that time wherever the clock's conversions are exact. Where the picoseconds outgrow a double's
  // mantissa (far beyond the VP's time limit, D-SIM-TIME-LIMIT) to_cycles(to_time(c)) may fall short of c, and a
  // wake-up armed for to_time(c) would find nothing due and arm itself again at the same time for ever: step on
  // until the cycle is reached, by a step that doubles, so the search ends within the 64 bits of sc_time.
  sc_core::sc_time t = clock_.to_time(c);
  const sc_core::sc_time::value_type last = std::numeric_limits<sc_core::sc_time::value_type>::max();
  for (sc_core::sc_time::value_type step = 1; clock_.to_cycles(t) < c; step = step <= last / 2 ? 2 * step : step) {
    if (t.value() > last - step) return sc_core::sc_time::from_value(last);
    t = sc_core::sc_time::from_value(t.value() + step);
  }
  return t;
}

void Seq::retire_due_method() {
  catch_up();
  arm_retirement();
}

void Seq::retire_front() {
  const Pending done = std::move(pending_.front());
  pending_.pop_front();
  if (left_observer) left_observer(done.index);
  firmware_.retire(done.index);
  retired_ev_.notify(sc_core::SC_ZERO_TIME);
  if (auto f = apply_update(done.instr->fw.events)) {
    // The instructions issued after it are already in the array and complete
    // normally; nothing later is fetched until clear_error (D-FAULT-REQUEUE).
    std::vector<std::shared_ptr<const isa::Decoded>> survivors;
    std::vector<std::uint64_t> survivor_indices;
    for (const Pending& p : pending_) {
      survivors.push_back(p.instr->fw.decoded);
      survivor_indices.push_back(p.index);
    }
    firmware_.rewind(done.index, survivors, survivor_indices);
    fault(done.index, done.instr->decoded(), f->rule, f->field, f->value, f->message);
    return;
  }
  ++retired_;
  ++stats_.retired_by_opcode[done.instr->decoded().opcode_byte];
  csrs_.seq.regs().add_to_counter(c_retired_);
  if (queue_.empty() && pending_.empty()) {  // else still busy, and the queue level is unchanged
    if (!error_) {
      done_ = true;
      settled_.notify(sc_core::SC_ZERO_TIME);
    }
    update_status();
  }
}

bool Seq::update_may_fault(const Events& e) const {
  if (e.update_mode != isa::UpdateMode::INCREMENT && e.update_mode != isa::UpdateMode::DECREMENT) return false;
  const unsigned sem = e.update_sem;
  // The value the instructions already issued will leave, applied in order.
  std::int64_t v = semaphore(sem);
  const auto step = [&](const Events& x) {
    if (x.update_mode == isa::UpdateMode::NONE || x.update_sem != sem) return true;
    const std::int64_t by = x.update_value;
    if (x.update_mode == isa::UpdateMode::SET) v = by;
    if (x.update_mode == isa::UpdateMode::INCREMENT) v += by;
    if (x.update_mode == isa::UpdateMode::DECREMENT) v -= by;
    return v >= 0 && v <= std::numeric_limits<std::uint32_t>::max();
  };
  for (const Pending& p : pending_)
    if (!step(p.instr->fw.events)) return true;
  return !step(e);
}

// ---- hard reset -------------------------------------------------------------------------------

void Seq::drop_work() {
  queue_.clear();
  pending_.clear();
  error_.reset();
  deferred_faults_.clear();
  done_ = false;
  ++work_dropped_;
  // Nothing that was due for the old program may fire into the new one.
  for (sc_core::sc_event* e : {&queued_, &semaphore_changed_, &resumed_, &settled_, &retired_ev_, &stopped_,
                               &retire_due_})
    e->cancel();
  // The dispatcher may be anywhere inside an instruction: blocked on its EVENTS wait, synchronising to a response,
  // or between the two. Rather than a reset event every one of its waits also waits on -- and a check after each
  // of them that the instruction it holds still exists -- the thread is reset (IEEE 1666 sc_process_handle::reset):
  // its stack unwinds, dropping the instruction it held, and it starts run() again at once, finds no work and
  // parks -- before this call returns, or, when the thread was already runnable in this delta, when the kernel runs it
  // next (pevp/platform/reset.h waits a delta for that). The dispatch code stays as it reads, with no reset path
  // through it.
  dispatcher_.reset();
  // A queue write waiting for room wakes to find the reset (b_transport) and refuses the rest of its records.
  space_freed_.notify(sc_core::SC_ZERO_TIME);
  update_status();
}

// ---- checkpoints ---------------------------------------------------------------------------

std::string Seq::idle_violation() const {
  if (!pending_.empty())
    return std::to_string(pending_.size()) + " instruction(s) in flight (issued, not yet responded; the first is " +
           std::to_string(pending_.front().index) + ")";
  if (!queue_.empty() && !error_)
    return std::to_string(queue_.size()) + " instruction(s) queued and the SEQ running (the head is instruction " +
           std::to_string(queue_.front().index) + ")";
  if (!parked_) return "the SEQ's dispatcher is still handling an instruction (it has not gone back to wait for work)";
  return "";
}

Seq::State Seq::state() const {
  if (const std::string why = idle_violation(); !why.empty()) throw std::logic_error("not at an idle point: " + why);
  State s;
  for (const Entry& e : queue_) s.queue.push_back({e.index, e.raw});
  s.local = local_;
  s.waited_for_software = waited_for_software_;
  s.next_index = next_index_;
  s.retired = retired_;
  s.done = done_;
  s.error = error_;
  s.deferred_faults.assign(deferred_faults_.begin(), deferred_faults_.end());
  s.next_log_index = next_log_index_;
  s.retired_by_opcode = stats_.retired_by_opcode;
  s.syncs = stats_.syncs;
  s.semaphore_wait_cycles = stats_.semaphore_wait_cycles;
  s.array_idle_on_semaphore_cycles = stats_.array_idle_on_semaphore_cycles;
  s.cache = cache_.keys();
  s.cache_hits = cache_.hits();
  s.cache_misses = cache_.misses();
  s.firmware = firmware_.state();
  return s;
}

std::string Seq::check(const State& s, const arrseq::RestoreTimes& times) const {
  if (std::string why = state_problem(s); !why.empty()) return why;
  // At an idle point the SEQ has synchronised: it holds no time ahead of simulated time.
  if (s.local > times.now)
    return "the SEQ's own time at cycle " + std::to_string(s.local) + " is after the checkpoint's time (cycle " +
           std::to_string(times.now) + ")";
  return "";
}

std::string Seq::state_problem(const State& s) const {
  if (!s.queue.empty() && !s.error)
    return "the queue holds " + std::to_string(s.queue.size()) +
           " instruction(s) but the SEQ is not stopped on a fault (not an idle point)";
  // A fault's taken-back instruction may hold the queue one above its depth (Seq::space()).
  if (s.queue.size() > std::size_t{config_.queue_depth} + 1)
    return "the queue holds " + std::to_string(s.queue.size()) + " instructions, this SEQ's depth is " +
           std::to_string(config_.queue_depth);
  for (std::size_t i = 0; i < s.queue.size(); ++i)
    if (s.queue[i].index >= s.next_index || (i > 0 && s.queue[i].index <= s.queue[i - 1].index))
      return "queued instruction " + std::to_string(i) + " has index " + std::to_string(s.queue[i].index) +
             " (out of order, or not below the next index " + std::to_string(s.next_index) + ")";
  if (s.retired > s.next_index)
    return std::to_string(s.retired) + " instructions retired of " + std::to_string(s.next_index) + " submitted";
  std::uint64_t by_opcode = 0;  // saturating: a sum that wraps must not match
  for (std::uint64_t n : s.retired_by_opcode) by_opcode += std::min(n, ~std::uint64_t{0} - by_opcode);
  if (by_opcode != s.retired)
    return std::to_string(s.retired) + " instructions retired, but the per-opcode counts add up to " +
           std::to_string(by_opcode);
  if (s.next_log_index > s.next_index)
    return "the next firmware log index " + std::to_string(s.next_log_index) + " is past the next instruction index " +
           std::to_string(s.next_index);
  if (s.error && s.done) return "both done and stopped on a fault";
  if (s.error && s.error->index >= s.next_index)
    return "the error record names instruction " + std::to_string(s.error->index) + ", not below the next index " +
           std::to_string(s.next_index);
  if (!s.error && !s.deferred_faults.empty()) return "deferred faults without a fault reported";
  if (s.deferred_faults.size() > s.next_index) return "more deferred faults than instructions";
  for (std::size_t i = 0; i < s.deferred_faults.size(); ++i)
    if (s.deferred_faults[i].index >= s.next_index)
      return "deferred fault " + std::to_string(i) + " names instruction " + std::to_string(s.deferred_faults[i].index) +
             ", not below the next index " + std::to_string(s.next_index);
  if (std::string why = cache_.check(s.cache); !why.empty()) return "the decode cache: " + why;
  if (std::string why = fw::Firmware::check(s.firmware); !why.empty()) return why;
  return "";
}

void Seq::restore(const State& s) {
  if (const std::string why = idle_violation(); !why.empty()) throw std::logic_error("not at an idle point: " + why);
  if (const std::string why = state_problem(s); !why.empty()) throw std::logic_error(why);
  queue_.clear();
  for (const QueuedInstruction& q : s.queue) queue_.push_back({q.index, q.raw});
  local_ = s.local;
  waited_for_software_ = s.waited_for_software;
  next_index_ = s.next_index;
  retired_ = s.retired;
  done_ = s.done;
  error_ = s.error;
  deferred_faults_.assign(s.deferred_faults.begin(), s.deferred_faults.end());
  next_log_index_ = s.next_log_index;
  stats_.retired_by_opcode = s.retired_by_opcode;
  stats_.syncs = s.syncs;
  stats_.semaphore_wait_cycles = s.semaphore_wait_cycles;
  stats_.array_idle_on_semaphore_cycles = s.array_idle_on_semaphore_cycles;
  cache_.rebuild(s.cache, s.cache_hits, s.cache_misses, [this](const isa::RawInstruction& r) { return prepare(r); });
  firmware_.restore(s.firmware);
  fw_log_.clear();  // a log of this process's run, not state
  // The status registers came back with the CSRs; recompute the rest from them and tell the waiters.
  last_status_ = -1;
  irq_level_ = !irq_level_;  // forces the line to be driven again
  update_status();
  irq_changed_.notify(sc_core::SC_ZERO_TIME);
  settled_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace pevp::seq
