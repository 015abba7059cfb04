#include "pevp/arr_seq/arr_seq.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace pevp::arrseq {

using regfile::CounterBank;

namespace {

CounterBank bank_of(pe::MicroOpKind k) {
  switch (k) {
    case pe::MicroOpKind::WeightLoad: return CounterBank::WeightLoad;
    case pe::MicroOpKind::Matmul: return CounterBank::Matmul;
    case pe::MicroOpKind::PeRegWrite: return CounterBank::PeRegWrite;
  }
  return CounterBank::Matmul;
}

}  // namespace

const params::Params<ArrSeqConfig>& arr_seq_parameters() {
  static const params::Params<ArrSeqConfig> list = {
      {"ififo_depth", "micro-ops", "model choice D-IFIFO", params::Kind::Count, 1, params::kMaxDepth,
       &ArrSeqConfig::ififo_depth},
  };
  return list;
}

ArrSeq::ArrSeq(sc_core::sc_module_name name, regfile::SequencerCsrs& csrs, pe::ArrayModel& array, ArrSeqConfig config)
    : sc_core::sc_module(name),
      csrs_(csrs),
      array_(array),
      config_(config),
      timeline_(CostModel(config.timing), std::max(config.ififo_depth, 1u), !config.timed),
      clock_(config.timing.clock_ghz) {
  csrs_.on_config_change([this] { csr_dirty_ = true; });
  // perf_cntr_cfg.cntr_rst clears the row-group counters with the per-tile ones.
  csrs_.on_counters_reset([this] {
    timeline_.reset_counters(now());
    publish_counters(now());
  });
}

unsigned ArrSeq::queue_of(const isa::TileRect& t, const isa::ArrayGeometry& geo) {
  // One queue per cell of the counters' 4 x 4 grid over the whole array
  // (isa::counter_cell_rows / _cols: 32 x 32 PEs on the 128 x 128 presets,
  // 32 x 64 on MAVERICK's 128 x 256).
  const unsigned grid_cols = geo.queues / isa::kCounterGridSide;
  return ((t.row0 / isa::counter_cell_rows(geo)) * grid_cols + (t.col0 / isa::counter_cell_cols(geo)) % grid_cols) %
         geo.queues;
}

const TimingCsrs& ArrSeq::csrs_now() {
  if (csr_dirty_) {
    csr_cache_.queue = csrs_.queue_cfg();
    csr_cache_.cluster = csrs_.cluster_cfg();
    csr_cache_.throttled = ~csrs_.disable_throttle() & ((1u << config_.geometry.xbus_ports()) - 1);
    csr_cache_.counters_enabled = csrs_.counters_enabled();
    csr_dirty_ = false;
  }
  return csr_cache_;
}

ArrSeq::Issued ArrSeq::issue(const pe::MicroOp& op, Cycle ready, bool after_idle) {
  return issue(op, shape_of(op, config_.geometry), ready, after_idle);
}

ArrSeq::Issued ArrSeq::issue(const pe::MicroOp& op, const OpShape& shape_in, Cycle ready, bool after_idle) {
  Issued out;
  const TimingCsrs& csrs = csrs_now();
  OpShape shape = shape_in;
  shape.pe_reg_bypass = csrs.queue.bypass_peregwrite_instr;
  // The array executes the micro-op when the timeline offers it (D-ARRAY-SEAM), and may decide its time.
  Timeline::Execute execute;
  if (config_.execute)
    execute = [&](Cycle earliest, std::optional<pe::ArrayTiming>& decided) {
      pe::Accepted a;
      // The cluster CSR that stops weight loads early changes what a load fills: the micro-op carries it to the
      // array.
      if (op.kind == pe::MicroOpKind::WeightLoad && csrs.cluster.enable_wl_last_active_col) {
        pe::MicroOp stopped = op;
        stopped.wl_last_active_col = csrs.cluster.wl_last_active_col;
        a = array_.offer(stopped, csrs.queue.bypass_peregwrite_instr, earliest);
      } else {
        a = array_.offer(op, csrs.queue.bypass_peregwrite_instr, earliest);
      }
      out.result = std::move(a.result);
      if (out.result.ok && a.timing) {
        if (const char* why = a.timing->problem(earliest); *why != '\0') {
          out.result = pe::ExecResult::error("seq.array_timing", "the array implementation (" +
                                                                     array_.implementation() + ") answered " +
                                                                     pe::name(op.kind) + " with times " + why);
        } else {
          decided = a.timing;
        }
      }
      return out.result.ok;
    };
  const Slot* scheduled = timeline_.schedule(shape, ready, csrs, after_idle, execute);
  if (scheduled == nullptr) {
    ++stats_.faults;
    out.push = out.start = out.complete = out.response = timeline_.push_time(ready, 1);
    return out;
  }
  const Slot& s = *scheduled;
  out.push = s.push;
  out.start = s.start;
  out.complete = s.complete;
  out.response = s.response;

  ++stats_.issued[static_cast<unsigned>(op.kind)];
  stats_.ififo_full_waits += s.stalls[static_cast<unsigned>(Stall::IfifoFull)] > 0;
  stats_.dependency_waits += s.stalls[static_cast<unsigned>(Stall::Dependency)] > 0;
  stats_.serialised_waits += s.stalls[static_cast<unsigned>(Stall::Serialised)] > 0;
  OpcodeStats& per = opcode_stats_[op.opcode_byte];
  ++per.micro_ops;
  per.busy_cycles += s.cost.occupancy;
  per.latency_cycles += s.complete - s.start;
  csrs_.count(bank_of(op.kind), op.tile);
  if (observer) observer(op, s);
  return out;
}

void ArrSeq::publish_counters(Cycle now) {
  timeline_.settle_counters(now);
  for (unsigned g = 0; g < Timeline::kRowGroups; ++g) {
    const RowGroupCounters& c = timeline_.row_group(g);
    csrs_.publish_row_group(g, {c.matmul.counted(), c.weight_load.counted(), c.idle(now)});
  }
}

}  // namespace pevp::arrseq
