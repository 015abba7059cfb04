#include "pevp/regfile/apb_router.h"

#include <stdexcept>

namespace pevp::regfile {

ApbRouter::ApbRouter(sc_core::sc_module_name name) : sc_core::sc_module(name), target("target"), initiator("initiator") {
  target.register_b_transport(this, &ApbRouter::b_transport);
  target.register_transport_dbg(this, &ApbRouter::transport_dbg);
}

void ApbRouter::map(std::string window, sc_dt::uint64 base, sc_dt::uint64 size, tlm::tlm_base_target_socket_b<>& socket) {
  for (const Window& w : windows_)
    if (base < w.base + w.size && w.base < base + size)
      throw std::invalid_argument("APB window '" + window + "' overlaps '" + w.name + "'");
  tlm::tlm_fw_transport_if<>* fw = socket.get_base_export().operator->();
  if (fw == nullptr) throw std::invalid_argument("APB window '" + window + "': its target socket has no interface");
  windows_.push_back({std::move(window), base, size, fw});
  initiator.bind(socket);
}

const ApbRouter::Window* ApbRouter::decode(sc_dt::uint64 address) const {
  for (const Window& w : windows_)
    if (address >= w.base && address - w.base < w.size) return &w;
  return nullptr;
}

void ApbRouter::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const sc_dt::uint64 address = trans.get_address();
  const Window* w = decode(address);
  if (w == nullptr) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (before_access) before_access(trans, *w, delay);
  trans.set_address(address - w->base);
  w->fw->b_transport(trans, delay);
  trans.set_address(address);
}

unsigned int ApbRouter::transport_dbg(tlm::tlm_generic_payload& trans) {
  const sc_dt::uint64 address = trans.get_address();
  const Window* w = decode(address);
  if (w == nullptr) return 0;
  trans.set_address(address - w->base);
  const unsigned int n = w->fw->transport_dbg(trans);
  trans.set_address(address);
  return n;
}

}  // namespace pevp::regfile
