// The arr_seq CSR block as the platform sees it: an APB router in front of the
// four register-file windows (top host-visible, cluster, protected, VP-defined
// SEQ), the pulse behaviour (perf_cntr_cfg.cntr_rst clears every per-tile
// counter), and the model-side hooks the sequencer uses -- read queue_cfg, the
// cluster fields and throttle_cfg, count a micro-op on its tile.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <systemc>
#include <unordered_map>

#include "pevp/isa/tiles.h"
#include "pevp/regfile/apb_router.h"
#include "pevp/regfile/regfile_target.h"

namespace pevp::regfile {

// The APB windows (model decision, docs/registers.md): 4 KiB each.
struct ArrSeqApbMap {
  sc_dt::uint64 top_host_visible = 0x0000;
  sc_dt::uint64 cluster_host_visible = 0x1000;
  sc_dt::uint64 top_protected = 0x2000;
  sc_dt::uint64 vp_seq = 0x3000;
};

struct ArrSeqCsrsConfig {
  ArrSeqApbMap map;
  // The tile grid the per-tile counters count (isa::counter_tile_name).
  isa::ArrayGeometry geometry;
  UnmappedPolicy unmapped = UnmappedPolicy::Error;
  sc_core::sc_time access_time = sc_core::sc_time(20, sc_core::SC_NS);
};

// The three per-tile counter banks of 003 section 4, one per micro-op class.
enum class CounterBank : std::uint8_t { WeightLoad, Matmul, PeRegWrite };
std::string_view bank_name(CounterBank bank);  // "arr_seq_ififo_perf_weight_load", ...

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

class ArrSeqCsrs : public sc_core::sc_module {
 public:
  ApbRouter router;
  RegFileTarget top;        // tpb_arr_seq_top_host_visible
  RegFileTarget cluster;    // tpb_arr_seq_cluster_host_visible
  RegFileTarget protect;    // tpb_arr_seq_top_protected (privileged accesses only)
  RegFileTarget seq;        // vp_seq (VP-defined)

  explicit ArrSeqCsrs(sc_core::sc_module_name name, ArrSeqCsrsConfig config = {});

  // The APB target socket a driver binds to.
  tlm_utils::simple_target_socket<ApbRouter>& apb() { return router.target; }

  // ---- hooks for the sequencer ------------------------------------------------------
  QueueCfg queue_cfg() const;
  bool counters_enabled() const;  // perf_cntr_cfg.cntr_en
  ClusterCfg cluster_cfg() const;
  std::uint32_t disable_throttle() const;  // throttle_cfg.disable_throttle[8:0], one bit per XBUS

  // Counts one micro-op of `bank` on `tile` when perf_cntr_cfg.cntr_en is set.
  // Returns false (and counts nothing) for a tile the banks have no counter for
  // (isa::counter_tile_name gives the 003 naming).
  bool count(CounterBank bank, const isa::TileRect& tile);
  // The 48-bit counter of `tile` ("tile_64x32_tile9") in `bank`; throws
  // std::invalid_argument for an unknown tile name.
  std::uint64_t counter(CounterBank bank, std::string_view tile) const;
  std::size_t counters_per_bank() const { return counters_[0].size(); }

  // Clears every per-tile counter of the three banks (what cntr_rst does).
  void clear_counters();
  // Restores every register of the four faces to its reset value (PRESETn).
  void reset();

 private:
  ArrSeqCsrsConfig config_;
  std::array<std::unordered_map<std::string, CounterRef>, 3> counters_;
  std::array<std::unordered_map<std::uint64_t, const CounterRef*>, 3> counter_cache_;  // by tile geometry
  // The last tile counted per bank: a stream repeats its tile.
  struct LastCount {
    std::uint64_t key = ~0ull;
    const CounterRef* ref = nullptr;
  };
  std::array<LastCount, 3> last_count_{};
  FieldRef fifo_size_sel_, bypass_peregwrite_, disable_depchk_, cntr_en_;
  FieldRef disable_throttle_;
};


}  // namespace pevp::regfile
