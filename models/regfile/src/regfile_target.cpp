#include "pevp/regfile/regfile_target.h"

#include <cstring>

#include "pevp/regfile/apb_prot.h"

namespace pevp::regfile {

RegFileTarget::RegFileTarget(sc_core::sc_module_name name, const RegFileDesc& desc, RegFileTargetConfig config)
    : sc_core::sc_module(name), socket("socket"), config_(config), regs_(desc, config.unmapped) {
  socket.register_b_transport(this, &RegFileTarget::b_transport);
  socket.register_transport_dbg(this, &RegFileTarget::transport_dbg);
}

bool RegFileTarget::byte_mask(const tlm::tlm_generic_payload& trans, std::uint32_t& mask) {
  mask = ~0u;
  const unsigned char* be = trans.get_byte_enable_ptr();
  if (be == nullptr) return true;
  const unsigned int n = trans.get_byte_enable_length();
  if (n == 0) return false;
  mask = 0;
  for (unsigned int b = 0; b < 4; ++b) {
    const unsigned char e = be[b % n];  // byte enables repeat modulo their length
    if (e == TLM_BYTE_ENABLED) mask |= 0xFFu << (8 * b);
    else if (e != TLM_BYTE_DISABLED) return false;
  }
  return true;
}

void RegFileTarget::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  delay += config_.access_time;
  if (config_.privileged_only && !is_privileged(trans)) {
    ++rejected_unprivileged_;
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  const tlm::tlm_command cmd = trans.get_command();
  if (cmd == tlm::TLM_IGNORE_COMMAND) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (trans.get_data_length() != 4 || trans.get_streaming_width() < 4 || trans.get_data_ptr() == nullptr) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  const sc_dt::uint64 addr = trans.get_address();
  if (addr % 4 != 0 || addr >= regs_.desc().size_bytes) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  std::uint32_t mask = 0;
  if (!byte_mask(trans, mask)) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  const auto offset = static_cast<std::uint32_t>(addr);
  std::uint32_t value = 0;
  RegisterFile::BusStatus status;
  if (cmd == tlm::TLM_READ_COMMAND) {
    std::memcpy(&value, trans.get_data_ptr(), 4);  // disabled bytes keep the initiator's data
    status = regs_.bus_read(offset, value, mask);
    if (status == RegisterFile::BusStatus::Ok) std::memcpy(trans.get_data_ptr(), &value, 4);
  } else {
    std::memcpy(&value, trans.get_data_ptr(), 4);
    status = regs_.bus_write(offset, value, mask);
  }
  trans.set_response_status(status == RegisterFile::BusStatus::Ok ? tlm::TLM_OK_RESPONSE
                                                                  : tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

unsigned int RegFileTarget::transport_dbg(tlm::tlm_generic_payload& trans) {
  // Debug: whole aligned words, no side effects, RO writable (a back door);
  // stops at the first word without a register. The privilege boundary holds
  // for debug access too (D-DBG-PRIV): a debugger reaches the protected face by
  // marking its transactions privileged, as on the bus.
  if (config_.privileged_only && !is_privileged(trans)) {
    ++rejected_unprivileged_;
    return 0;
  }
  const sc_dt::uint64 addr = trans.get_address();
  const unsigned int len = trans.get_data_length();
  if (addr % 4 != 0 || len % 4 != 0 || trans.get_data_ptr() == nullptr) return 0;
  unsigned int done = 0;
  for (; done < len; done += 4) {
    const sc_dt::uint64 a = addr + done;
    if (a >= regs_.desc().size_bytes) break;
    std::uint32_t v = 0;
    if (trans.is_read()) {
      if (!regs_.peek(static_cast<std::uint32_t>(a), v)) break;
      std::memcpy(trans.get_data_ptr() + done, &v, 4);
    } else if (trans.is_write()) {
      std::memcpy(&v, trans.get_data_ptr() + done, 4);
      if (!regs_.poke(static_cast<std::uint32_t>(a), v)) break;
    }
  }
  return done;
}

}  // namespace pevp::regfile
