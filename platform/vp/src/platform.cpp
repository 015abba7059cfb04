#include "pevp/platform/platform.h"

#include "pevp/platform/config.h"

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

seq::SeqConfig seq_config(const VpConfig& c) {
  seq::SeqConfig s = c.platform.seq;
  s.geometry = c.geometry;
  return s;
}

}  // namespace

Platform::Platform(sc_core::sc_module_name name, const PlatformConfig& config)
    : Platform(name, with_platform(config)) {}

Platform::Platform(sc_core::sc_module_name name, const VpConfig& config)
    : sc_core::sc_module(name),
      bus("bus"),
      sbuf("sbuf", validated(config).sbuf),
      psum("psum", config.psum),
      rtl_csrs(make_rtl_csrs(config)),
      csrs("csrs", csrs_config(config, rtl_csrs.get())),
      array("array", config.geometry, config.host_threads == 0 ? pe::available_host_threads() : config.host_threads,
            config.psum_rounding),
      arr_seq("arr_seq", csrs, array, arr_seq_config(config)),
      seq("seq", config.gen(), csrs, arr_seq, seq_config(config)),
      config_(config.platform),
      vp_config_(std::make_unique<const VpConfig>(config)),
      geometry_(config.geometry),
      mode_(config.mode) {
  bus.map("sbuf", config_.map.sbuf, sbuf.size(), sbuf.socket);
  bus.map("psum", config_.map.psum, psum.size(), psum.socket);
  bus.map("apb", config_.map.apb, config_.map.apb_size, csrs.apb());
  bus.map("iq", config_.map.iq, config_.map.iq_size, seq.iq);
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
    if (bus_observer) bus_observer(trans, w, delay);
  };
}

Platform::~Platform() = default;

}  // namespace pevp::platform
