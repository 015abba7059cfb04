#include "pevp/platform/platform.h"

#include "pevp/platform/config.h"

#include <algorithm>
#include <stdexcept>

#include "pevp/dma/address_space.h"
#include "pevp/pe_array_rtl/rtl_datapath.h"

namespace pevp::platform {

namespace {

VpConfig with_platform(const PlatformConfig& c) {
  VpConfig v = preset(c.gen);
  v.platform = c;
  v.platform.seq.window_bytes = c.map.iq_size;
  return v;
}

const VpConfig& validated(const VpConfig& c) {
  validate(c);
  return c;
}

// The sequencer's configuration for the simulated mode: timing-only moves no
// data, functional-only takes no time.
arrseq::ArrSeqConfig arr_seq_config(const VpConfig& c) {
  arrseq::ArrSeqConfig a = c.platform.arr_seq;
  a.timing.clock_ghz = c.tensor_engine_clock_ghz;
  a.execute = c.mode != SimMode::Timing;
  a.timed = c.mode != SimMode::Functional;
  a.geometry = c.geometry;
  return a;
}

regfile::ArrSeqCsrsConfig csrs_config(const VpConfig& c, regfile_rtl::RtlCsrs* rtl) {
  regfile::ArrSeqCsrsConfig r = c.csrs;
  r.geometry = c.geometry;
  if (rtl != nullptr) r.external = rtl->faces();
  return r;
}

std::unique_ptr<regfile_rtl::RtlCsrs> make_rtl_csrs(const VpConfig& c) {
  if (c.csrs_impl != CsrsImpl::Rtl) return nullptr;
  return std::make_unique<regfile_rtl::RtlCsrs>("rtl_csrs");
}

std::unique_ptr<pe::Datapath> make_array_datapath(const VpConfig& c) {
  if (c.pe_array_impl != PeArrayImpl::Rtl) return nullptr;
  return std::make_unique<pe_array_rtl::RtlDatapath>(c.geometry.pe_rows, c.geometry.pe_cols);
}

// The SEQ's EVENTS semaphores as the DMA engines see them: read and updated at the current simulated time, after the
// responses due by then (the SEQ runs ahead of simulated time), with the SEQ's own range rules.
class SeqSemaphores final : public dma::Semaphores {
 public:
  explicit SeqSemaphores(seq::Seq& seq) : seq_(seq) {}
  unsigned count() const override { return isa::kNumSemaphores; }
  std::uint32_t value(unsigned i) override {
    seq_.catch_up();
    return seq_.semaphore(i);
  }
  std::string update(unsigned i, isa::UpdateMode mode, std::uint32_t by) override {
    return seq_.update_semaphore(i, mode, by);
  }
  const sc_core::sc_event& changed() const override { return seq_.semaphore_changed_event(); }

 private:
  seq::Seq& seq_;
};

seq::SeqConfig seq_config(const VpConfig& c) {
  seq::SeqConfig s = c.platform.seq;
  s.geometry = c.geometry;
  return s;
}

}  // namespace

Platform::Platform(sc_core::sc_module_name name, const PlatformConfig& config)
    : Platform(name, with_platform(config)) {}

Platform::Platform(sc_core::sc_module_name name, const VpConfig& config)
    : Platform(name, config, HostRegionBacking{}) {}

Platform::Platform(sc_core::sc_module_name name, const VpConfig& config, const HostRegionBacking& host)
    : sc_core::sc_module(name),
      bus("bus"),
      sbuf("sbuf", validated(config).sbuf),
      psum("psum", config.psum),
      rtl_csrs(make_rtl_csrs(config)),
      csrs("csrs", csrs_config(config, rtl_csrs.get())),
      array_datapath(make_array_datapath(config)),
      array("array", config.geometry, config.host_threads == 0 ? pe::available_host_threads() : config.host_threads,
            config.psum_rounding),
      arr_seq("arr_seq", csrs, array, arr_seq_config(config)),
      seq("seq", config.gen(), csrs, arr_seq, seq_config(config)),
      hbm("hbm", config.hbm),
      host_memory("host_memory", config.host_memory),
      semaphores_(std::make_unique<SeqSemaphores>(seq)),
      dma("dma", config.dma, *semaphores_, config.mode != SimMode::Timing),
      hazards(config.hazards, config.gen(), config.geometry, config.platform.map,
              [this](std::uint64_t address) { return debug_read_word(address); }),
      config_(config.platform),
      vp_config_(std::make_unique<const VpConfig>(config)),
      geometry_(config.geometry),
      mode_(config.mode) {
  bus.map("sbuf", config_.map.sbuf, sbuf.size(), sbuf.socket);
  bus.map("psum", config_.map.psum, psum.size(), psum.socket);
  bus.map("apb", config_.map.apb, config_.map.apb_size, csrs.apb());
  bus.map("iq", config_.map.iq, config_.map.iq_size, seq.iq);
  bus.map("dma", config_.map.dma, config_.map.dma_size, dma.regs);
  // A device memory smaller than the window fills only its start.
  bus.map("hbm_window", config_.map.hbm_window, std::min<std::uint64_t>(config_.map.hbm_window_size, hbm.size()),
          hbm.bus_socket);
  // The DMA engines' address space (D-DMA-SPACE): every endpoint on its own port, timed by its own model.
  const auto map_dma = [this](const char* what, std::uint64_t base, std::uint64_t size, dma::TargetSocket& target,
                              memory::TimedTarget& timing) {
    if (const std::string why = dma.map(what, base, size, target, timing); !why.empty())
      throw std::logic_error("the DMA address space: " + why);
  };
  map_dma("sbuf", dma::kSbufBase, sbuf.size(), sbuf.dma_socket, sbuf);
  map_dma("psum", dma::kPsumBase, psum.size(), psum.dma_socket, psum);
  map_dma("hbm", dma::kHbmBase, hbm.size(), hbm.socket, hbm);
  if (host.target == nullptr)
    map_dma("host_memory", dma::kHostBase, host_memory.size(), host_memory.socket, host_memory);
  else
    map_dma("host_memory", dma::kHostBase, host.size, *host.target, *host.timing);
  dma.on_transfer([this](const dma::TransferRecord& t) {
    if (!dma_span_.used || t.start < dma_span_.first_start) dma_span_.first_start = t.start;
    dma_span_.last_end = std::max(dma_span_.last_end, t.end);
    dma_span_.used = true;
    hazards.dma_write(t);
  });
  if (hazards.mode() != HazardMode::Off) {
    seq.queued_observer = [this](std::uint64_t index, const isa::RawInstruction& raw) { hazards.queued(index, raw); };
    seq.issued_observer = [this](std::uint64_t index) { hazards.issued(index); };
    seq.left_observer = [this](std::uint64_t index) { hazards.left(index); };
    hazards.engine_stopped = [this] { return seq.error().has_value(); };
  }
  if (array_datapath) array.set_datapath(array_datapath.get(), config.platform.arr_seq.timing.sbuf_access_cycles);
  array.sbuf_port.bind(sbuf.array_socket);
  array.psum_port.bind(psum.array_socket);
  // Software sees the engine as of its own time: the SEQ runs ahead of
  // simulated time, so every bus access first applies the responses due.
  bus.before_access = [this](const tlm::tlm_generic_payload& trans, const regfile::ApbRouter::Window& w,
                             const sc_core::sc_time& delay) {
    seq.catch_up();
    seq.publish_level();
    // A read of the row-group counters (vp_seq rg_perf, 0x200..0x25F) sees them settled to now.
    const std::uint64_t offset = trans.get_address() - config_.map.vp_seq();
    if (w.base == config_.map.apb && trans.get_address() >= config_.map.vp_seq() && offset >= 0x200 && offset < 0x260)
      arr_seq.publish_counters(arr_seq.now());
    hazards.access(trans, w.name, w.base, delay);
    if (bus_observer) bus_observer(trans, w, delay);
  };
}

std::optional<std::uint32_t> Platform::debug_read_word(std::uint64_t address) {
  std::uint32_t word = 0;
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_address(address);
  t.set_data_ptr(reinterpret_cast<unsigned char*>(&word));
  t.set_data_length(sizeof word);
  t.set_streaming_width(sizeof word);
  if (bus.target.get_base_interface().transport_dbg(t) != sizeof word) return std::nullopt;
  return word;
}

Platform::~Platform() = default;

}  // namespace pevp::platform
