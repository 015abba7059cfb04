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
#include <vector>

#include "pevp/isa/tiles.h"
#include "pevp/regfile/apb_router.h"
#include "pevp/regfile/external_face.h"
#include "pevp/regfile/regfile_target.h"
#include "pevp/params/param.h"
#include "pevp/regfile/sequencer_csrs.h"

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
  // Faces implemented outside the TLM model (csrs.impl = rtl: the generated RTL behind a pin bridge); they
  // must outlive the block. Unset = every face is the TLM register model.
  ExternalFaces external;
};

std::string_view bank_name(CounterBank bank);  // "arr_seq_ififo_perf_weight_load", ...

// The configuration keys of ArrSeqCsrsConfig with a plain value (section
// "csrs"; the unmapped-address policy is a name the platform parses).
const params::Params<ArrSeqCsrsConfig>& csrs_parameters();

class ArrSeqCsrs : public sc_core::sc_module, public SequencerCsrs {
 public:
  ApbRouter router;
  RegFileTarget top;        // tpb_arr_seq_top_host_visible
  RegFileTarget cluster;    // tpb_arr_seq_cluster_host_visible
  RegFileTarget protect;    // tpb_arr_seq_top_protected (privileged accesses only)
  RegFileTarget seq;        // vp_seq (VP-defined)

  explicit ArrSeqCsrs(sc_core::sc_module_name name, ArrSeqCsrsConfig config = {});

  // The APB target socket a driver binds to.
  tlm_utils::simple_target_socket<ApbRouter>& apb() { return router.target; }

  // ---- the sequencer's view (SequencerCsrs) ---------------------------------------------
  QueueCfg queue_cfg() const override;
  bool counters_enabled() const override;  // perf_cntr_cfg.cntr_en
  ClusterCfg cluster_cfg() const override;
  std::uint32_t disable_throttle() const override;  // throttle_cfg.disable_throttle[8:0], one bit per XBUS
  // isa::counter_tile_name gives the 003 naming of the tile's counter.
  bool count(CounterBank bank, const isa::TileRect& tile) override;
  // vp_seq rgN_mm_active_cnt / rgN_wl_active_cnt / rgN_idle_cnt.
  void publish_row_group(unsigned group, const RowGroupActivity& activity) override;
  // Writes to the top, cluster and protected faces; the cntr_rst pulse.
  void on_config_change(std::function<void()> changed) override;
  void on_counters_reset(std::function<void()> counters_reset) override;
  // The 48-bit counter of `tile` ("tile_64x32_tile9") in `bank`; throws
  // std::invalid_argument for an unknown tile name.
  std::uint64_t counter(CounterBank bank, std::string_view tile) const;
  std::size_t counters_per_bank() const { return counters_[0].size(); }

  // Clears every per-tile counter of the three banks (what cntr_rst does).
  void clear_counters();
  // Restores every register of the four faces to its reset value (PRESETn).
  void reset();

  // True when a face is external (the RTL): its TLM RegFileTarget above then only names registers.
  bool has_external_faces() const { return config_.external.any(); }
  // The stored value of register `reg` of face `face` (0 top, 1 cluster, 2 protected, 3 vp_seq), from
  // whichever implementation holds it.
  std::uint32_t face_value(std::size_t face, std::uint32_t reg) const;

  // The four faces (top, cluster, protected, vp_seq), for a VP checkpoint
  // (docs/checkpoint.md). restore() tells the configuration listeners
  // (on_config_change), as a driver's writes would; the pulses do not fire.
  // With external faces there is no checkpoint: state() and restore() throw std::runtime_error.
  struct State {
    std::array<RegFileTarget::State, 4> faces;
  };
  State state() const;
  // Why `s` cannot be restored into this block (naming the face), or "".
  std::string check(const State& s) const;
  void restore(const State& s);

 private:
  std::uint32_t get(std::size_t face, const FieldRef& f) const { return (face_value(face, f.reg) & f.mask()) >> f.lsb; }
  ExternalFace* external(std::size_t face) const;
  // A counter pulse (perf_cntr_cfg.cntr_rst of the top face) from an external top face.
  bool is_counter_reset(std::size_t reg, std::uint32_t bits) const;

  ArrSeqCsrsConfig config_;
  // The TLM faces an external face replaces still elaborate: their sockets are bound here, never called.
  tlm_utils::multi_passthrough_initiator_socket<ArrSeqCsrs, 32, tlm::tlm_base_protocol_types, 0,
                                               sc_core::SC_ZERO_OR_MORE_BOUND>
      parked_;
  std::vector<std::function<void()>> config_listeners_;  // on_config_change, told on restore()
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
  // vp_seq's row-group counters: matmul-active, weight-load-active, idle per group.
  std::array<std::array<CounterRef, 3>, ClusterCfg::kStaggerGroups> row_group_counters_;
};


}  // namespace pevp::regfile
