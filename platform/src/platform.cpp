#include "pevp/platform/platform.h"

namespace pevp::platform {

Platform::Platform(sc_core::sc_module_name name, const PlatformConfig& config)
    : sc_core::sc_module(name),
      bus("bus"),
      sbuf("sbuf", memory::sbuf_config(config.gen)),
      psum("psum", memory::psum_config(config.gen)),
      csrs("csrs"),
      array("array", config.gen),
      arr_seq("arr_seq", csrs, array, config.arr_seq),
      seq("seq", config.gen, csrs, arr_seq, config.seq),
      config_(config) {
  config_.seq.window_bytes = config_.map.iq_size;
  bus.map("sbuf", config_.map.sbuf, sbuf.size(), sbuf.socket);
  bus.map("psum", config_.map.psum, psum.size(), psum.socket);
  bus.map("apb", config_.map.apb, config_.map.apb_size, csrs.apb());
  bus.map("iq", config_.map.iq, config_.map.iq_size, seq.iq);
  array.sbuf_port.bind(sbuf.array_socket);
  array.psum_port.bind(psum.array_socket);
}

}  // namespace pevp::platform
