// The arr_seq sequencer between the SEQ and the PE array (003 sections 3-4):
//   * the IFIFO the SEQ pushes micro-ops into -- `depth` entries, or one when
//     queue_cfg.fifo_size_sel is set (read at every push, so a driver's CSR write
//     takes effect for the next micro-op);
//   * 16 issue queues, one per 32x32 quadrant of the 128x128 grid (the tile's
//     top-left quadrant; model decision D-QUEUES). Issue is in order from the
//     IFIFO head; a micro-op waits for the earlier micro-ops of its own queue and,
//     with the dependency check, for any in-flight micro-op that shares PEs of its
//     tile or a PSUM bank it writes. queue_cfg.disable_dependency_check serialises
//     everything: a micro-op waits until nothing is in flight;
//   * bypass_peregwrite_instr, passed to the array for PeRegWrite;
//   * the per-tile counters (ArrSeqCsrs::count), gated by perf_cntr_cfg.cntr_en.
// The functional work happens at issue (the dependency check guarantees every
// conflicting earlier micro-op has completed); completion follows after the
// cost model's duration. docs/arr-seq.md.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <vector>

#include <systemc>

#include "pevp/arr_seq/cost_model.h"
#include "pevp/pe_array/pe_array.h"
#include "pevp/regfile/arr_seq_csrs.h"

namespace pevp::arrseq {

struct ArrSeqConfig {
  unsigned ififo_depth = 16;  // model choice: no public figure (D-IFIFO)
};

struct ArrSeqStats {
  std::array<std::uint64_t, 3> issued{};  // by pe::MicroOpKind
  std::uint64_t dependency_waits = 0;     // micro-ops that had to wait for a conflicting one
  std::uint64_t serialised_waits = 0;     // ... waited only because the dependency check is disabled
  std::uint64_t ififo_full_waits = 0;     // pushes that found the IFIFO full
  std::uint64_t faults = 0;
  std::uint64_t flushed = 0;              // micro-ops dropped by flush()
};

class ArrSeq : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(ArrSeq);
  static constexpr unsigned kQueues = 16;

  ArrSeq(sc_core::sc_module_name name, regfile::ArrSeqCsrs& csrs, pe::PeArray& array, ArrSeqConfig config = {});

  // ---- the SEQ side ----------------------------------------------------------------
  // Pushes one micro-op; blocks the calling SC_THREAD while the IFIFO is full.
  void put(pe::MicroOp op);
  unsigned ififo_level() const { return static_cast<unsigned>(ififo_.size()); }
  unsigned ififo_capacity() const;  // 1 with fifo_size_sel, else the configured depth
  bool can_put() const { return ififo_.size() < ififo_capacity(); }
  // For a pusher that waits for space itself (the SEQ): count the full IFIFO.
  void note_ififo_full() { ++stats_.ififo_full_waits; }
  // Notified when an entry leaves the IFIFO (issued or flushed).
  const sc_core::sc_event& space_event() const { return popped_; }
  // Drops every micro-op not yet issued and returns them in order (after a fault).
  std::vector<pe::MicroOp> flush();
  // Nothing in the IFIFO and nothing in flight.
  bool idle() const { return ififo_.empty() && in_flight_.empty(); }

  // Called when a micro-op completes, and when one fails at issue (nothing of it
  // was written; the sequencer stops issuing until flush() or the next put()).
  std::function<void(const pe::MicroOp&)> on_complete;
  std::function<void(const pe::MicroOp&, const pe::ExecResult&)> on_fault;

  const ArrSeqStats& stats() const { return stats_; }
  CostModel& cost_model() { return cost_; }

  // The issue queue of a tile (top-left quadrant index, row-major over 4x4).
  static unsigned queue_of(const isa::TileRect& tile);
  // The PSUM banks (bit b = bank b) a micro-op writes; 0 for weight loads and PeRegWrite.
  static std::uint8_t psum_banks_written(const pe::MicroOp& op);

 private:
  struct InFlight {
    pe::MicroOp op;
    unsigned queue;
    std::uint8_t banks;
    sc_core::sc_time done_at;
  };
  void issue_thread();
  void complete_thread();
  // Why `op` may not issue yet: 0 = free, 1 = a conflicting micro-op, 2 = only serialisation.
  int blocked(const pe::MicroOp& op, unsigned queue, std::uint8_t banks, bool depchk_disabled) const;

  regfile::ArrSeqCsrs& csrs_;
  pe::PeArray& array_;
  ArrSeqConfig config_;
  CostModel cost_;
  std::deque<pe::MicroOp> ififo_;
  std::vector<InFlight> in_flight_;
  sc_core::sc_event pushed_, popped_, completed_, completion_due_;
  ArrSeqStats stats_;
};

}  // namespace pevp::arrseq
