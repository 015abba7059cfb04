// The SEQ instruction dispatcher: the engine's instruction queue and the loop
// that feeds the arr_seq sequencer.
//
// Bus side: `iq`, a write-only TLM target. A write of n x 64 bytes at a
// 64-byte-aligned offset queues n instructions in order (single writes and
// bursts alike). When the queue lacks space, a write from an SC_THREAD waits for
// it (back-pressure); from anywhere else, or when its initiator asked not to
// wait (IqWriteStatus::wait_for_room, D-IQ-NO-WAIT), it fails with
// TLM_GENERIC_ERROR_RESPONSE and queues nothing. A write waiting for room while the SEQ is stopped on a
// fault fails too, with the records before the one that found no room queued
// (D-IQ-STOPPED); an initiator that attaches IqWriteStatus learns how many.
// vp_seq iq_status shows level and space.
//
// The loop, per instruction in order: decode + validate (isa::decode; with
// everything else the 64 bytes alone decide, prepared once and cached by them:
// InstructionCache) -> raw opcode dispatch into the firmware stub, whose handler
// logs its self-name ("S: Matmul") at SC_DEBUG verbosity and emits micro-ops ->
// wait for the EVENTS wait semaphore (WAIT_GE / WAIT_EQ) -> issue the micro-ops
// to the arr_seq sequencer, which executes them and says when each enters the
// IFIFO, completes and responds. When an instruction's last micro-op responds,
// its EVENTS update (SET / INCREMENT / DECREMENT) is applied and retired_cnt
// counts it; when the queue has drained, seq_status.done and irq_status.done
// are set.
//
// Time: the SEQ is a temporally decoupled initiator. It keeps its own cycle
// count (seq_dispatch_cycles per instruction, blocked while the IFIFO is full),
// runs ahead of simulated time by at most one quantum
// (tlm::tlm_global_quantum), and synchronises whenever software could see the
// difference: before an EVENTS wait, before reporting a fault, when it runs out
// of work. Retirements happen at their response time: catch_up() applies every
// response due, and runs on every bus access to the platform (Platform's bus
// hook), at each synchronisation and from a method woken at the next response.
//
// A fault -- an invalid instruction, an execution
// error in the array, a semaphore that would under/overflow -- writes the error
// record (instruction index, opcode, field offset, value, rule number), sets
// seq_status.error and irq_status.error, and stops the queue. Faults are
// reported in program order: after every earlier instruction responded. An
// instruction leaves the queue only when its micro-ops are in the array or its
// fault is reported, so the program is never done while a fault is to come.
// seq_cmd.clear_error clears the record and resumes with the next instruction.
// The `irq` output is OR(irq_status & irq_enable), a signal. docs/seq.md,
// docs/timing.md.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "pevp/arr_seq/arr_seq.h"
#include "pevp/firmware/firmware.h"
#include "pevp/isa/decode.h"
#include "pevp/params/param.h"
#include "pevp/isa/enums.h"
#include "pevp/regfile/arr_seq_csrs.h"
#include "pevp/seq/instruction_cache.h"

namespace pevp::seq {

struct SeqConfig {
  // The machine instructions are decoded for (tile fields, addresses, banks);
  // none: the generation's preset.
  std::optional<isa::ArrayGeometry> geometry;
  unsigned queue_depth = 256;  // instructions (model choice, D-IQ)
  std::uint64_t window_bytes = 0x1000;  // size of the iq window
  // How far the SEQ may run ahead of simulated time (model choice; the
  // platform sets tlm::tlm_global_quantum from it). Larger is faster and
  // coarser: software polling a register sees retirements up to one quantum late
  // at worst -- catch_up() on bus accesses keeps that to zero for CSR reads.
  sc_core::sc_time quantum = sc_core::sc_time(1, sc_core::SC_US);
  // Prepared (decoded) instructions kept by their 64 bytes, in two-way sets (0 = no cache).
  unsigned decode_cache_entries = 8192;
};

// The configuration keys of SeqConfig (section "seq"; window_bytes is the
// platform's address_map.iq_size, the geometry the platform's).
const params::Params<SeqConfig>& seq_parameters();

// The last fault, as the error CSRs hold it plus the text for logs.
struct ErrorRecord {
  std::uint64_t index = 0;  // instruction index in the submitted stream (0-based)
  std::uint8_t opcode = 0;
  std::uint8_t field_offset = 0xFF;  // byte offset of the field in the instruction; 0xFF = none
  std::uint16_t rule_number = 0;
  std::string rule;
  std::string field;
  std::int64_t value = 0;
  std::string message;  // "instruction 3 (MATMUL): in_dtype = 12: ... [mm.in_dtype]"
};

// Per opcode: instructions retired.
struct SeqStats {
  std::array<std::uint64_t, 256> retired_by_opcode{};
  std::uint64_t decode_cache_hits = 0, decode_cache_misses = 0;
  std::uint64_t syncs = 0;  // times the SEQ synchronised with simulated time
  // Engine cycles an instruction was held at the head on its EVENTS wait, and of those the cycles nothing it had
  // issued before was still in the array: the array idle, waiting for data (or another signal) a semaphore
  // announces. Only waits inside a busy period count (not one before the first issue after software).
  std::uint64_t semaphore_wait_cycles = 0;
  std::uint64_t array_idle_on_semaphore_cycles = 0;
};

class Seq : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Seq> iq;
  // The interrupt line: OR(irq_status & irq_enable). Bind an sc_in<bool> to it.
  sc_core::sc_signal<bool> irq;

  SC_HAS_PROCESS(Seq);

  // `arr`: the sequencer it dispatches micro-ops into (an interface: arrseq::ArrSeq,
  // or another sequencer model).
  Seq(sc_core::sc_module_name name, isa::Generation gen, regfile::ArrSeqCsrs& csrs, arrseq::MicroOpSink& arr,
      SeqConfig config = {});

  // Queues one instruction as a bus write would (for tools and tests); false when full.
  bool try_push(const isa::RawInstruction& raw);
  unsigned level() const { return static_cast<unsigned>(queue_.size()); }
  // Taken-back instructions may briefly hold the queue above its depth: clamp.
  unsigned space() const { return level() >= config_.queue_depth ? 0 : config_.queue_depth - level(); }
  std::uint64_t submitted() const { return next_index_; }
  std::uint64_t retired() const { return retired_; }
  bool busy() const;
  const std::optional<ErrorRecord>& error() const { return error_; }
  // The firmware self-name lines printed so far, the last kFirmwareLogLines of
  // them (also SC_REPORT_INFO_VERB at SC_DEBUG).
  static constexpr std::size_t kFirmwareLogLines = 65536;
  const std::deque<std::string>& firmware_log() const { return fw_log_; }
  // Notified whenever the SEQ goes idle (done) or stops on an error.
  const sc_core::sc_event& settled_event() const { return settled_; }
  std::uint32_t semaphore(unsigned i) const;
  // An update from another agent than an instruction (a DMA engine's completion), at the current simulated time,
  // with the same range rules as an instruction's EVENTS update (D-SEM-RANGE): "" or why not, nothing changed then.
  // Waiting instructions re-evaluate their condition.
  std::string update_semaphore(unsigned i, isa::UpdateMode mode, std::uint32_t by);
  // Notified (after a delta) whenever a semaphore changes, by an instruction, the driver or another agent.
  const sc_core::sc_event& semaphore_changed_event() const { return semaphore_changed_; }
  SeqStats stats() const {
    SeqStats s = stats_;
    s.decode_cache_hits = cache_.hits();
    s.decode_cache_misses = cache_.misses();
    return s;
  }

  // ---- VP checkpoints (docs/checkpoint.md) ---------------------------------------------------
  // Why the SEQ is not at an idle point now, or "" when it is: nothing issued
  // and still waiting for its response, the dispatcher parked waiting for work,
  // and the queue empty unless the SEQ is stopped on a fault (D-CKPT-IDLE).
  std::string idle_violation() const;
  struct QueuedInstruction {
    std::uint64_t index = 0;
    isa::RawInstruction raw{};
  };
  // Everything that decides what the SEQ does next, at an idle point. The
  // firmware log is not state (a log); the decode cache is kept as its keys and
  // made again on restore, so its hits and misses go on as they would have.
  struct State {
    std::vector<QueuedInstruction> queue;  // only when stopped on a fault
    arrseq::Cycle local = 0;
    bool waited_for_software = true;
    std::uint64_t next_index = 0;
    std::uint64_t retired = 0;
    bool done = false;
    std::optional<ErrorRecord> error;
    std::vector<ErrorRecord> deferred_faults;
    std::uint64_t next_log_index = 0;
    std::array<std::uint64_t, 256> retired_by_opcode{};
    std::uint64_t syncs = 0;
    std::uint64_t semaphore_wait_cycles = 0, array_idle_on_semaphore_cycles = 0;
    std::vector<CacheKey> cache;
    std::uint64_t cache_hits = 0, cache_misses = 0;
    fw::Firmware::State firmware;
  };
  // The state now; throws std::logic_error naming why when not at an idle point.
  State state() const;
  // Why `s` cannot be restored into this SEQ at `times` (an idle-point rule it
  // breaks, a queue deeper than this one's, indices out of order or past the
  // next index, retirements the per-opcode counts do not add up to, its own
  // time after the checkpoint's, a bad cache key or firmware state), or "".
  std::string check(const State& s, const arrseq::RestoreTimes& times) const;
  // Replaces the state (at an idle point, `s` checked); the status registers,
  // the level and the interrupt line follow it. Throws std::logic_error when
  // either rule is broken (those of check() that need no time), before changing
  // anything.
  void restore(const State& s);

  // ---- hard reset (pevp/platform/reset.h) ------------------------------------------------------
  // Drops, at the current simulated time and without waiting for anything, every instruction queued, held at the
  // head on its EVENTS wait or in the array waiting for its response, and any fault reported or deferred: the SEQ is
  // then (at once, or a delta later if its thread was runnable) idle and parked, nothing left to retire. A write
  // into the queue waiting for room is refused with the records it queued before the reset. The registers,
  // semaphores, counts and caches are left as they are: the platform's hard reset restores them from its power-on
  // state next. Takes no simulated time; needs the simulation running (an SC_THREAD or SC_METHOD calls it).
  void drop_work();

  // Called when seq_status busy/done/error change (the VCD recorder).
  std::function<void(bool busy, bool done, bool error)> status_observer;
  // Called when the firmware names an instruction (its self-name line, "S: Matmul"), with the instruction's index
  // and the SEQ's own time then, in engine cycles (`--log-firmware`). Unset, dispatching pays one test.
  std::function<void(std::uint64_t index, const std::string& line, arrseq::Cycle at)> firmware_observer;
  // An instruction's life, for the hazard checks (pevp/platform/hazards.h): its record entered the queue; it was
  // issued (past its EVENTS wait, its micro-ops in the array); it left the SEQ (retired at its response, or taken
  // out by its fault). Unset, each costs one test.
  std::function<void(std::uint64_t index, const isa::RawInstruction& raw)> queued_observer;
  std::function<void(std::uint64_t index)> issued_observer;
  std::function<void(std::uint64_t index)> left_observer;
  // Every fault the SEQ finds, when it finds it (before it is published or deferred): its record and the
  // instruction's decode -- a refused instruction's rule, for the functional coverage (pevp/coverage). Unset, a
  // fault pays one test.
  std::function<void(const ErrorRecord& record, const isa::Decoded& decoded)> fault_observer;

  // Applies every response due by now: retirements, EVENTS updates, done. The
  // platform calls it before a bus access so software sees the state at its time.
  void catch_up();
  // Writes iq_status (level, space). The queue moves twice per instruction and
  // software only sees it through the bus, so the platform writes it before a
  // bus access instead of the SEQ after every move; status changes write it too.
  void publish_level();

 private:
  // check()'s rules that need no time: restore() holds its state to them too.
  std::string state_problem(const State& s) const;
  struct Entry {
    std::uint64_t index;
    isa::RawInstruction raw;
  };
  // The EVENTS fields of one instruction (modes NONE when it has none).
  using Events = isa::EventsPart;
  // One distinct instruction, prepared once and cached by its 64 bytes: the
  // decode, the firmware's verdict that needs no history, the EVENTS fields
  // and the timing shape of its micro-op. A stream repeats a few distinct
  // instructions, so the per-instruction work is only what depends on order.
  struct Prepared {
    fw::Prepared fw;          // its EVENTS included (fw.events)
    std::vector<arrseq::OpShape> shapes;  // of each of fw.ops
    const isa::Decoded& decoded() const { return *fw.decoded; }
  };
  using PreparedPtr = std::shared_ptr<const Prepared>;
  struct Pending {  // an instruction issued to the array, waiting for its response
    std::uint64_t index;
    PreparedPtr instr;
    arrseq::Cycle response = 0;
  };

  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void run();
  // One instruction from the head of the queue; false when the queue stopped
  // underneath it (it is handled again after clear_error).
  bool dispatch_head();
  PreparedPtr prepare(const isa::RawInstruction& raw) const;
  PreparedPtr prepare_cached(const isa::RawInstruction& raw);
  void retire_front();
  void retire_due_method();
  void arm_retirement();
  // The first simulated time at which the clock reads cycle `c` (clock_.now() >= c), when retirements due by then
  // are caught up.
  sc_core::sc_time time_reaching(arrseq::Cycle c) const;
  // Advances simulated time to cycle `c` (no-op when it has passed) and catches up.
  void sync_to(arrseq::Cycle c);
  // Waits until every instruction issued so far has responded; false if the
  // queue stopped meanwhile (an earlier instruction faulted).
  bool drain_pending();
  void fault(std::uint64_t index, const isa::Decoded& d, std::string rule, std::string field, std::int64_t value,
             std::string message);
  bool wait_satisfied(const Events& e) const;
  // Would this EVENTS update fault on the semaphore value the instructions
  // already issued will leave? Then the SEQ stops running ahead until they retire.
  bool update_may_fault(const Events& e) const;
  std::optional<fw::Fault> apply_update(const Events& e);
  void set_semaphore(unsigned i, std::uint32_t v);
  // Adds an EVENTS wait that began at `from` to the statistics; the array was busy with earlier work until
  // `array_busy_until`.
  void account_semaphore_wait(arrseq::Cycle from, arrseq::Cycle array_busy_until);
  void update_status();  // iq_status, seq_status, irq_status and the irq line
  void drive_irq();  // the signal's only writer: status changes come from several processes
  void clear_error();
  void publish(ErrorRecord e);  // the error CSRs, status, irq

  isa::Generation gen_;
  isa::ArrayGeometry geometry_;
  regfile::ArrSeqCsrs& csrs_;
  arrseq::MicroOpSink& arr_;
  arrseq::EngineClock clock_;  // the sequencer's clock, to tell the time in its cycles
  SeqConfig config_;
  fw::Firmware firmware_;
  std::deque<Entry> queue_;
  std::deque<Pending> pending_;  // in issue order, so in response order
  arrseq::Cycle local_ = 0;      // the SEQ's own time, at or ahead of simulated time
  arrseq::Cycle dispatch_cycles_ = 0;
  bool waited_for_software_ = true;  // the SEQ ran out of work since its last issue
  // run() waits for work or a resume (or has not started): nothing is being dispatched.
  bool parked_ = true;
  std::uint64_t next_index_ = 0;
  std::uint64_t retired_ = 0;
  bool done_ = false;
  std::optional<ErrorRecord> error_;
  // Faults found while the queue was already stopped (an instruction issued
  // before the first fault, retiring after it): reported one by one after clear_error.
  std::deque<ErrorRecord> deferred_faults_;
  std::uint64_t next_log_index_ = 0;  // the firmware names each instruction once
  std::deque<std::string> fw_log_;
  InstructionCache<Prepared> cache_;
  sc_core::sc_event queued_, space_freed_, semaphore_changed_, resumed_, settled_, irq_changed_, retired_ev_;
  sc_core::sc_event stopped_;  // an error record was published: the queue stops
  sc_core::sc_event retire_due_;
  // The dispatcher thread (run()); drop_work() restarts it from the top, which unwinds whatever it was waiting for.
  sc_core::sc_process_handle dispatcher_;
  std::uint64_t work_dropped_ = 0;  // drop_work() calls: a queue write waiting for room notices one happened
  bool irq_level_ = false;
  int last_status_ = -1;  // busy | done << 1 | error << 2, for status_observer
  regfile::FieldRef f_busy_, f_idle_, f_done_, f_error_, f_irq_done_, f_irq_error_, f_en_done_, f_en_error_;
  regfile::FieldRef f_level_, f_space_, f_err_index_, f_err_opcode_, f_err_field_, f_err_rule_, f_err_lo_, f_err_hi_;
  regfile::CounterRef c_retired_;
  std::array<regfile::FieldRef, isa::kNumSemaphores> f_sem_;
  // tlm_quantumkeeper with its next sync point readable, so the run-ahead
  // check per instruction is one compare of cycles.
  struct QuantumKeeper : tlm_utils::tlm_quantumkeeper {
    sc_core::sc_time next_sync_point() const { return m_next_sync_point; }
  };
  QuantumKeeper qk_;
  arrseq::Cycle sync_cycle_ = 0;  // qk_'s next sync point in cycles
  void restart_quantum();         // qk_.reset() and sync_cycle_
  fw::HandlerOutput handler_out_;
  SeqStats stats_;
};

}  // namespace pevp::seq
