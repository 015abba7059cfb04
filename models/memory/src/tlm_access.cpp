#include "pevp/memory/tlm_access.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace pevp::memory {

std::optional<Refusal> check_access(const tlm::tlm_generic_payload& trans, std::uint64_t size) {
  const sc_dt::uint64 addr = trans.get_address();
  const std::uint64_t len = trans.get_data_length();
  if (addr >= size || len > size - addr) return Refusal{tlm::TLM_ADDRESS_ERROR_RESPONSE, "addr_error"};
  if (trans.get_command() == tlm::TLM_IGNORE_COMMAND) return std::nullopt;
  // Streaming (width < length: the same window repeated) is not modelled: no initiator of the memories streams.
  if (len == 0 || trans.get_streaming_width() < len) return Refusal{tlm::TLM_BURST_ERROR_RESPONSE, "burst_error"};
  if (trans.get_data_ptr() == nullptr) return Refusal{tlm::TLM_GENERIC_ERROR_RESPONSE, "null_data"};
  const unsigned char* be = trans.get_byte_enable_ptr();
  const unsigned int be_len = trans.get_byte_enable_length();
  if (be != nullptr) {
    // Every enable validated before any byte moves, so an error changes nothing.
    if (be_len == 0) return Refusal{tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, "byte_enable_error"};
    for (unsigned int i = 0; i < be_len && i < len; ++i)
      if (be[i] != TLM_BYTE_ENABLED && be[i] != TLM_BYTE_DISABLED)
        return Refusal{tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, "byte_enable_error"};
  }
  return std::nullopt;
}

void copy_access(tlm::tlm_generic_payload& trans, std::uint8_t* mem) {
  unsigned char* ptr = trans.get_data_ptr();
  const std::uint64_t len = trans.get_data_length();
  const bool read = trans.get_command() == tlm::TLM_READ_COMMAND;
  const unsigned char* be = trans.get_byte_enable_ptr();
  if (be == nullptr) {
    if (read) std::memcpy(ptr, mem, len);
    else std::memcpy(mem, ptr, len);
    return;
  }
  const unsigned int be_len = trans.get_byte_enable_length();
  for (std::uint64_t i = 0; i < len; ++i) {
    if (be[i % be_len] != TLM_BYTE_ENABLED) continue;
    if (read) ptr[i] = mem[i];
    else mem[i] = ptr[i];
  }
}

unsigned int debug_access(tlm::tlm_generic_payload& trans, std::uint8_t* data, std::uint64_t size) {
  const sc_dt::uint64 addr = trans.get_address();
  unsigned char* ptr = trans.get_data_ptr();
  if (addr >= size || ptr == nullptr || trans.get_command() == tlm::TLM_IGNORE_COMMAND) return 0;
  const auto n = static_cast<unsigned int>(std::min<std::uint64_t>(trans.get_data_length(), size - addr));
  if (trans.is_read()) std::memcpy(ptr, data + addr, n);
  else std::memcpy(data + addr, ptr, n);
  return n;
}

bool grant_whole(const tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi, std::uint8_t* data, std::uint64_t size) {
  if (trans.get_address() >= size) {
    dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_NONE);
    dmi.set_start_address(size);
    dmi.set_end_address(std::numeric_limits<sc_dt::uint64>::max());
    return false;
  }
  dmi.set_dmi_ptr(data);
  dmi.set_start_address(0);
  dmi.set_end_address(size - 1);  // inclusive
  dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_READ_WRITE);
  return true;
}

}  // namespace pevp::memory
