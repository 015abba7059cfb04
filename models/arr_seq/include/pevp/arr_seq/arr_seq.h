// The arr_seq sequencer between the SEQ and the PE array (003 sections 3-4):
//   * the IFIFO the SEQ pushes micro-ops into -- `ififo_depth` entries, or one
//     when queue_cfg.fifo_size_sel is set (read at every push, so a driver's CSR
//     write takes effect for the next micro-op);
//   * 16 issue queues, one per 32x32 quadrant of the 128x128 grid (the tile's
//     top-left quadrant; model decision D-QUEUES), issued in order from the
//     IFIFO head; with the dependency check a micro-op waits for any in-flight
//     micro-op that shares PEs of its tile or a PSUM bank it writes, except that
//     one tile's weight loads and Matmuls pipeline (the background stationary);
//     queue_cfg.disable_dependency_check serialises everything;
//   * bypass_peregwrite_instr, passed to the array for PeRegWrite;
//   * the per-tile counters (ArrSeqCsrs::count), gated by perf_cntr_cfg.cntr_en,
//     and the VP's per-row-group active/idle cycle counters (vp_seq rg_perf).
//
// Timing is analytic (Timeline): issue() executes a micro-op's function at
// once, in program order (the dependency rules make that order equivalent to
// the array's), and returns when it enters the IFIFO, starts, completes and
// responds. The SEQ uses those times as a temporally decoupled initiator.
// The functional result never depends on timing. docs/timing.md.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include <systemc>

#include "pevp/arr_seq/cost_model.h"
#include "pevp/arr_seq/engine_clock.h"
#include "pevp/arr_seq/timeline.h"
#include "pevp/pe_array/array_model.h"
#include "pevp/regfile/sequencer_csrs.h"

namespace pevp::arrseq {

struct ArrSeqConfig {
  isa::ArrayGeometry geometry;  // queues, tile grid, XBUS ports (the platform's geometry)
  unsigned ififo_depth = 16;  // model choice: no public figure (D-IFIFO)
  TimingParams timing;
  bool execute = true;  // false: the timing-only mode (no data read or written, no arithmetic)
  bool timed = true;    // false: the functional-only mode (every micro-op takes no time)
};

// The configuration keys of ArrSeqConfig (section "arr_seq"; its timing is
// timing_parameters(), its geometry the platform's).
const params::Params<ArrSeqConfig>& arr_seq_parameters();

struct ArrSeqStats {
  std::array<std::uint64_t, 3> issued{};  // by pe::MicroOpKind
  std::uint64_t dependency_waits = 0;     // micro-ops that had to wait for a conflicting one
  std::uint64_t serialised_waits = 0;     // ... waited only because the dependency check is disabled
  std::uint64_t ififo_full_waits = 0;     // pushes that found the IFIFO full
  std::uint64_t faults = 0;
};

// Per opcode: instructions' micro-ops issued and the cycles they held the array.
struct OpcodeStats {
  std::uint64_t micro_ops = 0;
  std::uint64_t busy_cycles = 0;   // occupancy: weight-load port, stream, register write
  std::uint64_t latency_cycles = 0;  // start to completion, summed
};

// What became of one micro-op the sequencer was given.
struct Issued {
  pe::ExecResult result = pe::ExecResult::success();  // the array's verdict; on an error nothing was written
  Cycle push = 0, start = 0, complete = 0, response = 0;
};

// The seam between the SEQ and the sequencer it dispatches into: what the SEQ
// needs, and nothing more, so another sequencer model can stand in for ArrSeq.
class MicroOpSink {
 public:
  virtual ~MicroOpSink() = default;
  // Issues one micro-op whose timing shape is `shape`, ready at cycle `ready`
  // (`after_idle`: the SEQ had drained and waited for software before it).
  virtual Issued issue(const pe::MicroOp& op, const OpShape& shape, Cycle ready, bool after_idle) = 0;
  // Brings the sequencer's activity counters up to `now` (at each synchronisation).
  virtual void settle(Cycle now) = 0;
  // The engine clock cycles are counted in, and the SEQ's per-instruction
  // dispatch time in them (0 when untimed).
  virtual EngineClock clock() const = 0;
  virtual Cycle dispatch_cycles() const = 0;
};

class ArrSeq : public sc_core::sc_module, public MicroOpSink {
 public:
  // `csrs`: its CSR block, `array`: what executes its micro-ops -- interfaces, so
  // a register block or an array behind a bus bridge can stand in for the models.
  ArrSeq(sc_core::sc_module_name name, regfile::SequencerCsrs& csrs, pe::ArrayModel& array, ArrSeqConfig config = {});

  using Issued = arrseq::Issued;
  // Executes `op` (unless timing-only) and schedules it, ready at cycle `ready`.
  // On an execution error nothing is scheduled.
  // `after_idle`: the SEQ had drained and waited for software before it (Timeline::schedule).
  Issued issue(const pe::MicroOp& op, Cycle ready, bool after_idle = false);
  // The same with `shape` = shape_of(op) already taken (the SEQ keeps it with
  // its cached decode, so a repeated instruction is not read again).
  Issued issue(const pe::MicroOp& op, const OpShape& shape, Cycle ready, bool after_idle = false) override;
  void settle(Cycle now) override { timeline_.settle_counters(now); }
  EngineClock clock() const override { return clock_; }
  Cycle dispatch_cycles() const override { return config_.timed ? config_.timing.seq_dispatch_cycles : 0; }

  // The IFIFO's entries now: 1 with queue_cfg.fifo_size_sel, else the configured depth.
  unsigned ififo_capacity() const { return csrs_.queue_cfg().fifo_size_sel ? 1 : config_.ififo_depth; }

  // ---- clocks (engine_clock.h) -----------------------------------------------------------
  Cycle to_cycles(const sc_core::sc_time& t) const { return clock_.to_cycles(t); }
  sc_core::sc_time to_time(Cycle c) const { return clock_.to_time(c); }
  Cycle now() const { return clock_.now(); }
  std::uint64_t to_ps(Cycle c) const { return clock_.to_ps(c); }

  // Called for every scheduled micro-op when set (the trace and VCD recorder);
  // unset, issuing pays one test.
  std::function<void(const pe::MicroOp&, const Slot&)> observer;

  // Writes the row-group counters, settled to `now`, into vp_seq rg_perf.
  void publish_counters(Cycle now);

  const ArrSeqStats& stats() const { return stats_; }
  const std::array<OpcodeStats, 256>& opcode_stats() const { return opcode_stats_; }
  const Timeline& timeline() const { return timeline_; }
  Timeline& timeline() { return timeline_; }
  const ArrSeqConfig& config() const { return config_; }

  // The timeline and the statistics, for a VP checkpoint (docs/checkpoint.md).
  // The CSR cache is derived: restore() marks it stale.
  struct State {
    Timeline::State timeline;
    ArrSeqStats stats;
    std::array<OpcodeStats, 256> opcode_stats{};
  };
  State state() const { return {timeline_.state(), stats_, opcode_stats_}; }
  std::string check(const State& s, const RestoreTimes& times) const { return timeline_.check(s.timeline, times); }
  void restore(const State& s) {
    timeline_.restore(s.timeline);
    stats_ = s.stats;
    opcode_stats_ = s.opcode_stats;
    csr_dirty_ = true;
  }

  // The issue queue of a tile (top-left quadrant index, row-major over 4x4).
  static unsigned queue_of(const isa::TileRect& tile, const isa::ArrayGeometry& geo);

 private:
  const TimingCsrs& csrs_now();

  regfile::SequencerCsrs& csrs_;
  pe::ArrayModel& array_;
  ArrSeqConfig config_;
  Timeline timeline_;
  EngineClock clock_;
  // The CSR state timing reads, refreshed only after a register write: reading
  // the fields for every micro-op would cost more than the scheduling.
  TimingCsrs csr_cache_;
  bool csr_dirty_ = true;
  ArrSeqStats stats_;
  std::array<OpcodeStats, 256> opcode_stats_{};
};

}  // namespace pevp::arrseq
