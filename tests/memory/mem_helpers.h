// A test initiator for the memory target: one transaction through the socket's
// forward interface (no elaboration needed), returning the response status and
// the annotated delay (qbox's initiator-tester idea).
#pragma once

#include <systemc>
#include <tlm>
#include <vector>

namespace pevp::memory::test {

struct Result {
  tlm::tlm_response_status status;
  sc_core::sc_time delay;
  bool dmi_allowed;
};

struct Txn {
  Txn(tlm::tlm_command c, sc_dt::uint64 a, std::vector<unsigned char>* d = nullptr, unsigned len = 0,
      unsigned width = 0, std::vector<unsigned char> be = {})
      : cmd(c), address(a), data(d), length(len), streaming_width(width), byte_enables(std::move(be)) {}
  tlm::tlm_command cmd;
  sc_dt::uint64 address;
  std::vector<unsigned char>* data;  // length = data->size() unless length is set
  unsigned length;
  unsigned streaming_width;  // 0 = length
  std::vector<unsigned char> byte_enables;
};

template <typename Socket>
Result transport(Socket& socket, const Txn& t) {
  tlm::tlm_generic_payload trans;
  const unsigned len = t.length ? t.length : static_cast<unsigned>(t.data ? t.data->size() : 0);
  trans.set_command(t.cmd);
  trans.set_address(t.address);
  trans.set_data_ptr(t.data ? t.data->data() : nullptr);
  trans.set_data_length(len);
  trans.set_streaming_width(t.streaming_width ? t.streaming_width : len);
  std::vector<unsigned char> be = t.byte_enables;
  if (!be.empty()) {
    trans.set_byte_enable_ptr(be.data());
    trans.set_byte_enable_length(static_cast<unsigned>(be.size()));
  }
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket.get_base_export()->b_transport(trans, delay);
  return {trans.get_response_status(), delay, trans.is_dmi_allowed()};
}

template <typename Socket>
Result write(Socket& s, sc_dt::uint64 a, std::vector<unsigned char> bytes, std::vector<unsigned char> be = {}) {
  return transport(s, {tlm::TLM_WRITE_COMMAND, a, &bytes, 0, 0, std::move(be)});
}

template <typename Socket>
std::vector<unsigned char> read(Socket& s, sc_dt::uint64 a, unsigned n, tlm::tlm_response_status* status = nullptr) {
  std::vector<unsigned char> bytes(n, 0xEE);
  const Result r = transport(s, {tlm::TLM_READ_COMMAND, a, &bytes});
  if (status) *status = r.status;
  return bytes;
}

}  // namespace pevp::memory::test
