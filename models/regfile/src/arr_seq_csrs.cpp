#include "pevp/regfile/arr_seq_csrs.h"

#include <stdexcept>

#include "tpb_arr_seq_cluster_host_visible_regs.h"
#include "tpb_arr_seq_top_host_visible_regs.h"
#include "tpb_arr_seq_top_protected_regs.h"
#include "vp_seq_regs.h"

namespace pevp::regfile {

namespace {
namespace top = pevp::regs::tpb_arr_seq_top_host_visible;
namespace cluster_regs = pevp::regs::tpb_arr_seq_cluster_host_visible;
namespace prot = pevp::regs::tpb_arr_seq_top_protected;
namespace vpseq = pevp::regs::vp_seq;

constexpr CounterBank kBanks[] = {CounterBank::WeightLoad, CounterBank::Matmul, CounterBank::PeRegWrite};

RegFileTargetConfig face(const ArrSeqCsrsConfig& c, bool privileged_only) {
  RegFileTargetConfig t;
  t.privileged_only = privileged_only;
  t.unmapped = c.unmapped;
  t.access_time = c.access_time;
  return t;
}
}  // namespace

const params::Params<ArrSeqCsrsConfig>& csrs_parameters() {
  static const params::Params<ArrSeqCsrsConfig> list = {
      {"access_time_ns", "ns", "model choice D-APB-TIME", params::Kind::TimeNs, 0, 0, &ArrSeqCsrsConfig::access_time},
  };
  return list;
}

std::string_view bank_name(CounterBank bank) {
  switch (bank) {
    case CounterBank::WeightLoad: return "arr_seq_ififo_perf_weight_load";
    case CounterBank::Matmul: return "arr_seq_ififo_perf_matmul";
    case CounterBank::PeRegWrite: return "arr_seq_ififo_perf_pe_regwrite";
  }
  return "";
}

ArrSeqCsrs::ArrSeqCsrs(sc_core::sc_module_name name, ArrSeqCsrsConfig config)
    : sc_core::sc_module(name),
      router("router"),
      top("top_host_visible", top::regfile_desc(), face(config, false)),
      cluster("cluster_host_visible", cluster_regs::regfile_desc(), face(config, false)),
      protect("top_protected", prot::regfile_desc(), face(config, true)),
      seq("vp_seq", vpseq::regfile_desc(), face(config, false)),
      config_(config),
      parked_("parked") {
  const auto map_face = [this](const char* window, sc_dt::uint64 base, sc_dt::uint64 size, RegFileTarget& tlm,
                               ExternalFace* ext) {
    if (ext == nullptr) {
      router.map(window, base, size, tlm.socket);
      return;
    }
    router.map(window, base, size, ext->target());
    parked_.bind(tlm.socket);
  };
  map_face("tpb_arr_seq_top_host_visible", config.map.top_host_visible, top::kSizeBytes, top, config.external.top);
  map_face("tpb_arr_seq_cluster_host_visible", config.map.cluster_host_visible, cluster_regs::kSizeBytes, cluster,
           config.external.cluster);
  map_face("tpb_arr_seq_top_protected", config.map.top_protected, prot::kSizeBytes, protect,
           config.external.protect);
  router.map("vp_seq", config.map.vp_seq, vpseq::kSizeBytes, seq.socket);

  RegisterFile& t = top.regs();
  fifo_size_sel_ = t.field("queue_cfg", "fifo_size_sel");
  bypass_peregwrite_ = t.field("queue_cfg", "bypass_peregwrite_instr");
  disable_depchk_ = t.field("queue_cfg", "disable_dependency_check");
  cntr_en_ = t.field("perf_cntr_cfg", "cntr_en");
  disable_throttle_ = protect.regs().field("throttle_cfg", "disable_throttle");

  // Every counter of every bank, resolved once: 9 shapes (4, 2 or 1 grid cells
  // each way) x their positions on the counted 4 x 4 cells.
  const unsigned gr = isa::counter_cell_rows(config.geometry), gc = isa::counter_cell_cols(config.geometry);
  constexpr unsigned kSide = isa::kCounterGridSide;
  for (CounterBank bank : kBanks) {
    auto& map = counters_[static_cast<std::size_t>(bank)];
    for (unsigned rows = kSide; rows >= 1; rows /= 2)
      for (unsigned cols = kSide; cols >= 1; cols /= 2)
        for (unsigned r0 = 0; r0 < kSide; r0 += rows)
          for (unsigned c0 = 0; c0 < kSide; c0 += cols) {
            const isa::TileRect rect{r0 * gr, rows * gr, c0 * gc, cols * gc};
            const std::string tile = isa::counter_tile_name(rect, config.geometry);
            map.emplace(tile, t.counter(std::string(bank_name(bank)) + "." + tile + "_instr_cnt_lsb"));
          }
  }

  RegisterFile& vp = seq.regs();
  for (unsigned g = 0; g < row_group_counters_.size(); ++g) {
    const std::string rg = "rg" + std::to_string(g);
    row_group_counters_[g] = {vp.counter(rg + "_mm_active_cnt_lsb"), vp.counter(rg + "_wl_active_cnt_lsb"),
                              vp.counter(rg + "_idle_cnt_lsb")};
  }

  // perf_cntr_cfg.cntr_rst: a write-1 pulse that clears every per-tile counter.
  t.on_pulse([this](const RegisterDesc& r, const FieldDesc& f) {
    if (r.name == "perf_cntr_cfg" && f.name == "cntr_rst") clear_counters();
  });
  if (ExternalFace* ext = config.external.top)
    ext->on_pulse([this](std::size_t reg, std::uint32_t bits) {
      if (is_counter_reset(reg, bits)) clear_counters();
    });
}

ExternalFace* ArrSeqCsrs::external(std::size_t face) const {
  switch (face) {
    case 0: return config_.external.top;
    case 1: return config_.external.cluster;
    case 2: return config_.external.protect;
    default: return nullptr;
  }
}

std::uint32_t ArrSeqCsrs::face_value(std::size_t face, std::uint32_t reg) const {
  if (const ExternalFace* ext = external(face)) return ext->value(reg);
  const RegFileTarget* faces[] = {&top, &cluster, &protect, &seq};
  return face < 4 ? faces[face]->regs().value(reg) : 0;
}

bool ArrSeqCsrs::is_counter_reset(std::size_t reg, std::uint32_t bits) const {
  const RegisterDesc& r = top.regs().desc().registers[reg];
  if (r.name != "perf_cntr_cfg") return false;
  for (std::size_t k = 0; k < r.num_fields; ++k)
    if (r.fields[k].name == "cntr_rst" && (bits & r.fields[k].mask()) != 0) return true;
  return false;
}

QueueCfg ArrSeqCsrs::queue_cfg() const {
  return QueueCfg{get(0, fifo_size_sel_) != 0, get(0, bypass_peregwrite_) != 0, get(0, disable_depchk_) != 0};
}

bool ArrSeqCsrs::counters_enabled() const { return get(0, cntr_en_) != 0; }

ClusterCfg ArrSeqCsrs::cluster_cfg() const {
  const RegisterFile& c = cluster.regs();
  const std::uint32_t v =
      face_value(1, static_cast<std::uint32_t>(c.index_at(cluster_regs::arr_seq_cluster_cfg::arr_cluster_cfg::kOffset)));
  namespace f = cluster_regs::arr_seq_cluster_cfg::arr_cluster_cfg;
  ClusterCfg out;
  out.matmul_done_last = f::matmul_done_last::get(v) != 0;
  out.en_inter_instr_dly = f::en_inter_instr_dly::get(v) != 0;
  out.inter_instr_dly_cnt = f::inter_instr_dly_cnt::get(v);
  out.p2fifo_af = f::p2fifo_af::get(v);
  out.flush_p2f_fifos = f::flush_p2f_fifos::get(v) != 0;
  out.enable_wl_last_active_col = f::enable_wl_last_active_col::get(v) != 0;
  out.wl_last_active_col = f::wl_last_active_col::get(v);
  for (unsigned g = 0; g < ClusterCfg::kStaggerGroups; ++g) {
    const std::string reg = "array_stagger_rg" + std::to_string(g) + "_ctrl1";
    out.stagger_idle_limit[g] = get(1, c.field(reg, "rg" + std::to_string(g) + "_ctrl1"));
  }
  return out;
}

std::uint32_t ArrSeqCsrs::disable_throttle() const { return get(2, disable_throttle_); }

void ArrSeqCsrs::publish_row_group(unsigned group, const RowGroupActivity& a) {
  RegisterFile& vp = seq.regs();
  const auto& refs = row_group_counters_.at(group);
  vp.write_counter(refs[0], a.matmul & kCounterMask48);
  vp.write_counter(refs[1], a.weight_load & kCounterMask48);
  vp.write_counter(refs[2], a.idle & kCounterMask48);
}

void ArrSeqCsrs::on_config_change(std::function<void()> changed) {
  config_listeners_.push_back(changed);
  const auto on_write = [changed](const RegisterDesc&, std::uint32_t, std::uint32_t) { changed(); };
  for (RegFileTarget* face : {&top, &cluster, &protect}) face->regs().on_write(on_write);
  for (std::size_t f = 0; f < 3; ++f)
    if (ExternalFace* ext = external(f)) ext->on_change(changed);
}

void ArrSeqCsrs::on_counters_reset(std::function<void()> counters_reset) {
  top.regs().on_pulse([counters_reset](const RegisterDesc& r, const FieldDesc& f) {
    if (r.name == "perf_cntr_cfg" && std::string_view(f.name) == "cntr_rst") counters_reset();
  });
  if (ExternalFace* ext = config_.external.top)
    ext->on_pulse([this, counters_reset](std::size_t reg, std::uint32_t bits) {
      if (is_counter_reset(reg, bits)) counters_reset();
    });
}

bool ArrSeqCsrs::count(CounterBank bank, const isa::TileRect& tile) {
  // The counter of a tile, found by its 003 name once and then by its geometry:
  // building the name for every micro-op costs more than the rest of the count.
  const std::uint64_t key = tile.key();
  LastCount& last = last_count_[static_cast<std::size_t>(bank)];
  if (last.key != key) {
    auto& cache = counter_cache_[static_cast<std::size_t>(bank)];
    auto it = cache.find(key);
    if (it == cache.end()) {
      const std::string name = isa::counter_tile_name(tile, config_.geometry);
      const auto& map = counters_[static_cast<std::size_t>(bank)];
      const auto found = name.empty() ? map.end() : map.find(name);
      it = cache.emplace(key, found == map.end() ? nullptr : &found->second).first;
    }
    last = {key, it->second};
  }
  if (last.ref == nullptr) return false;
  if (counters_enabled()) {
    if (ExternalFace* ext = config_.external.top) ext->add_to_counter(*last.ref, 1);
    else top.regs().add_to_counter(*last.ref);
  }
  return true;
}

std::uint64_t ArrSeqCsrs::counter(CounterBank bank, std::string_view tile) const {
  const auto& map = counters_[static_cast<std::size_t>(bank)];
  const auto it = map.find(std::string(tile));
  if (it == map.end()) throw std::invalid_argument("no per-tile counter named '" + std::string(tile) + "'");
  if (const ExternalFace* ext = config_.external.top) return ext->read_counter(it->second);
  return top.regs().read_counter(it->second);
}

void ArrSeqCsrs::reset() {
  for (RegFileTarget* face : {&top, &cluster, &protect, &seq}) face->regs().reset();
  for (std::size_t f = 0; f < 3; ++f)
    if (ExternalFace* ext = external(f)) ext->reset();
}

void ArrSeqCsrs::clear_counters() {
  if (ExternalFace* ext = config_.external.top) {
    ext->clear_counters();
    return;
  }
  for (auto& map : counters_)
    for (auto& [name, ref] : map) top.regs().write_counter(ref, 0);
}

namespace {
[[noreturn]] void no_checkpoint_with_rtl() {
  throw std::runtime_error(
      "the CSR block has no checkpoint with csrs.impl = rtl: the register state lives in the RTL's flops "
      "(use csrs.impl = tlm to save or restore)");
}
}  // namespace

ArrSeqCsrs::State ArrSeqCsrs::state() const {
  if (has_external_faces()) no_checkpoint_with_rtl();
  return {{top.state(), cluster.state(), protect.state(), seq.state()}};
}

std::string ArrSeqCsrs::check(const State& s) const {
  const RegFileTarget* faces[] = {&top, &cluster, &protect, &seq};
  for (std::size_t i = 0; i < s.faces.size(); ++i)
    if (std::string why = faces[i]->regs().check(s.faces[i].regs); !why.empty()) return why;
  return "";
}

void ArrSeqCsrs::restore(const State& s) {
  if (has_external_faces()) no_checkpoint_with_rtl();
  if (const std::string why = check(s); !why.empty()) throw std::invalid_argument(why);
  RegFileTarget* faces[] = {&top, &cluster, &protect, &seq};
  for (std::size_t i = 0; i < s.faces.size(); ++i) faces[i]->restore(s.faces[i]);
  for (const auto& changed : config_listeners_) changed();
}

}  // namespace pevp::regfile
