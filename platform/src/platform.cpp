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

}  // namespace

Platform::Platform(sc_core::sc_module_name name, const PlatformConfig& config)
    : Platform(name, with_platform(config)) {}

Platform::Platform(sc_core::sc_module_name name, const VpConfig& config)
    : sc_core::sc_module(name),
      bus("bus"),
      sbuf("sbuf", validated(config).sbuf),
      psum("psum", config.psum),
      csrs("csrs", config.csrs),
      array("array", config.gen()),
      arr_seq("arr_seq", csrs, array, config.platform.arr_seq),
      seq("seq", config.gen(), csrs, arr_seq, config.platform.seq),
      config_(config.platform) {
  bus.map("sbuf", config_.map.sbuf, sbuf.size(), sbuf.socket);
  bus.map("psum", config_.map.psum, psum.size(), psum.socket);
  bus.map("apb", config_.map.apb, config_.map.apb_size, csrs.apb());
  bus.map("iq", config_.map.iq, config_.map.iq_size, seq.iq);
  array.sbuf_port.bind(sbuf.array_socket);
  array.psum_port.bind(psum.array_socket);
}

}  // namespace pevp::platform
