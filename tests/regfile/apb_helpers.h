// A tiny APB initiator for tests: one 32-bit access through any target socket,
// returning the TLM response status (qbox's initiator-tester idea).
#pragma once

#include <cstring>
#include <systemc>
#include <tlm>
#include <vector>

#include "pevp/regfile/apb_prot.h"

namespace pevp::regfile::test {

struct Access {
  tlm::tlm_response_status status;
  std::uint32_t data;
  sc_core::sc_time delay;
};

template <typename Socket>
Access apb(Socket& socket, tlm::tlm_command cmd, sc_dt::uint64 address, std::uint32_t data = 0,
           bool privileged = false, std::vector<unsigned char> byte_enables = {}, unsigned length = 4) {
  std::vector<unsigned char> buffer(length, 0);
  std::memcpy(buffer.data(), &data, std::min<unsigned>(length, 4));
  tlm::tlm_generic_payload trans;
  trans.set_command(cmd);
  trans.set_address(address);
  trans.set_data_ptr(buffer.data());
  trans.set_data_length(length);
  trans.set_streaming_width(length);
  if (!byte_enables.empty()) {
    trans.set_byte_enable_ptr(byte_enables.data());
    trans.set_byte_enable_length(static_cast<unsigned>(byte_enables.size()));
  }
  ApbProt prot(privileged);
  trans.set_extension(&prot);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket.get_base_export()->b_transport(trans, delay);  // the forward interface, no elaboration needed
  trans.clear_extension(&prot);
  std::uint32_t out = 0;
  std::memcpy(&out, buffer.data(), std::min<unsigned>(length, 4));
  return {trans.get_response_status(), out, delay};
}

template <typename Socket>
Access rd(Socket& s, sc_dt::uint64 a, bool privileged = false) {
  return apb(s, tlm::TLM_READ_COMMAND, a, 0, privileged);
}
template <typename Socket>
Access wr(Socket& s, sc_dt::uint64 a, std::uint32_t v, bool privileged = false) {
  return apb(s, tlm::TLM_WRITE_COMMAND, a, v, privileged);
}

}  // namespace pevp::regfile::test
