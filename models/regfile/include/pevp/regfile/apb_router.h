// The APB/TLM router in front of the register-file windows: decodes the address
// to a window, forwards the transaction with a window-relative address, and
// answers TLM_ADDRESS_ERROR_RESPONSE (nothing forwarded) outside every window.
// Each window is bound to the router's multi-initiator socket (so elaboration
// sees a fully wired block), but the router calls the window's forward
// interface through a pointer taken when it was mapped: that also works before
// elaboration, which register-level tests and drivers' unit tests rely on.
#pragma once

#include <functional>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

namespace pevp::regfile {

class ApbRouter : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<ApbRouter> target;
  tlm_utils::multi_passthrough_initiator_socket<ApbRouter> initiator;

  explicit ApbRouter(sc_core::sc_module_name name);

  // Binds `socket` to the next initiator slot and maps [base, base + size) onto
  // it. Windows must not overlap (std::invalid_argument otherwise).
  // Any base-protocol target socket (a simple_target_socket_optional's binding policy makes it another type).
  void map(std::string window, sc_dt::uint64 base, sc_dt::uint64 size, tlm::tlm_base_target_socket_b<>& socket);

  struct Window {
    std::string name;
    sc_dt::uint64 base;
    sc_dt::uint64 size;
    tlm::tlm_fw_transport_if<>* fw;
  };
  const std::vector<Window>& windows() const { return windows_; }
  // The window holding `address`, or nullptr.
  const Window* decode(sc_dt::uint64 address) const;

  // Called before every b_transport is forwarded (not for debug transport):
  // a platform uses it to bring temporally decoupled models up to the time of
  // the access, so software reads the state at its own time.
  std::function<void(const tlm::tlm_generic_payload&, const Window&, const sc_core::sc_time& delay)> before_access;

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);

  std::vector<Window> windows_;
};

}  // namespace pevp::regfile
