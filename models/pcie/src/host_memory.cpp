#include "pevp/pcie/host_memory.h"

#include <cstring>

namespace pevp::pcie {

HostMemory::HostMemory(sc_core::sc_module_name name, std::uint64_t span)
    : sc_core::sc_module(name), socket("socket"), span_(span) {
  socket.register_b_transport(this, &HostMemory::b_transport);
  socket.register_transport_dbg(this, &HostMemory::transport_dbg);
}

void HostMemory::install(RamLayout layout) {
  layout_ = std::move(layout);
  ++stats_.layouts;
}

std::uint8_t* HostMemory::find(std::uint64_t address, std::uint64_t bytes) const {
  for (const RamRegion& r : layout_.regions)
    if (address >= r.bus_address && address - r.bus_address < r.size && bytes <= r.size - (address - r.bus_address))
      return r.data + (address - r.bus_address);
  return nullptr;
}

sc_core::sc_time HostMemory::access(const memory::TimedAccess& a) {
  if (link_ == nullptr) return a.start;
  // The link model is smaller than the bus address space: the access is booked at its address 0 (the timing
  // depends on the bytes and the link's load, not on where in host memory they lie; D-PCI-DMA-TIMING).
  memory::TimedAccess folded = a;
  folded.address = 0;
  return link_->access(folded);
}

void HostMemory::b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time&) {
  t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  const bool write = t.is_write();
  HostAccess h{write, t.get_address(), t.get_data_length(), false, sc_core::sc_time_stamp()};
  if (t.get_byte_enable_ptr() != nullptr || t.get_streaming_width() != t.get_data_length()) {
    t.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  } else if (t.is_read() || write) {
    if (std::uint8_t* p = find(t.get_address(), t.get_data_length())) {
      if (write)
        std::memcpy(p, t.get_data_ptr(), t.get_data_length());
      else
        std::memcpy(t.get_data_ptr(), p, t.get_data_length());
      t.set_response_status(tlm::TLM_OK_RESPONSE);
      h.ok = true;
    }
  }
  if (h.ok) {
    ++(write ? stats_.writes : stats_.reads);
    (write ? stats_.write_bytes : stats_.read_bytes) += h.bytes;
  } else {
    ++stats_.errors;
  }
  if (observer) observer(h);
}

unsigned int HostMemory::transport_dbg(tlm::tlm_generic_payload& t) {
  std::uint8_t* p = find(t.get_address(), t.get_data_length());
  if (p == nullptr) return 0;
  if (t.is_write())
    std::memcpy(p, t.get_data_ptr(), t.get_data_length());
  else
    std::memcpy(t.get_data_ptr(), p, t.get_data_length());
  return t.get_data_length();
}

}  // namespace pevp::pcie
