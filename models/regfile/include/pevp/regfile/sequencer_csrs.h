// The seam between the arr_seq sequencer and its CSR block: the configuration
// it reads (queue_cfg, the cluster fields, throttle_cfg, perf_cntr_cfg) and the
// counters it writes (the per-tile banks of 003 section 4, the VP's row-group
// activity counters), with a notice when software changes either. The TLM
// register model (regfile::ArrSeqCsrs) implements it; a register block behind a
// bus bridge (generated RTL) can implement it the same way. The sequencer holds
// only this interface, never a RegisterFile.
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "pevp/isa/tiles.h"

namespace pevp::regfile {

// queue_cfg (003 section 3): the host's whole say over issue policy.
struct QueueCfg {
  bool fifo_size_sel = false;             // 1 = single-entry IFIFO
  bool bypass_peregwrite_instr = false;   // 1 = PeRegWrite is register-immediate
  bool disable_dependency_check = false;  // 1 = single-threaded, in-order issue
};

// arr_cluster_cfg + array_stagger (cluster face).
struct ClusterCfg {
  bool matmul_done_last = false;
  bool en_inter_instr_dly = false;
  std::uint32_t inter_instr_dly_cnt = 0;
  std::uint32_t p2fifo_af = 0;
  bool flush_p2f_fifos = false;
  bool enable_wl_last_active_col = false;
  std::uint32_t wl_last_active_col = 0;
  // array_stagger_rgN_ctrl1.rgN_ctrl1, one register per row group.
  static constexpr unsigned kStaggerGroups = 4;
  std::array<std::uint32_t, kStaggerGroups> stagger_idle_limit{};
};

// The three per-tile counter banks of 003 section 4, one per micro-op class.
enum class CounterBank : std::uint8_t { WeightLoad, Matmul, PeRegWrite };

// One row group's activity (vp_seq rg_perf): cycles matmul-active,
// weight-load-active and idle, each 48 bits wide as the CSRs hold it.
struct RowGroupActivity {
  std::uint64_t matmul = 0, weight_load = 0, idle = 0;
};

class SequencerCsrs {
 public:
  virtual ~SequencerCsrs() = default;

  virtual QueueCfg queue_cfg() const = 0;
  virtual ClusterCfg cluster_cfg() const = 0;
  virtual std::uint32_t disable_throttle() const = 0;  // throttle_cfg.disable_throttle, one bit per XBUS
  virtual bool counters_enabled() const = 0;           // perf_cntr_cfg.cntr_en

  // Counts one micro-op of `bank` on `tile` when counting is enabled. Returns
  // false (and counts nothing) for a tile the banks have no counter for.
  virtual bool count(CounterBank bank, const isa::TileRect& tile) = 0;
  // Publishes row group `group`'s activity for software to read.
  virtual void publish_row_group(unsigned group, const RowGroupActivity& activity) = 0;

  // `changed` runs after any software write that may change what the getters
  // return; `counters_reset` when software pulses perf_cntr_cfg.cntr_rst.
  virtual void on_config_change(std::function<void()> changed) = 0;
  virtual void on_counters_reset(std::function<void()> counters_reset) = 0;
};

}  // namespace pevp::regfile
