#include "pevp/memory/memory.h"

#include "pevp/memory/tlm_access.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

namespace pevp::memory {

std::string check_config(const MemoryConfig& c) {
  if (c.partitions == 0 || c.partition_bytes == 0)
    return "partitions and partition_bytes must both be > 0";
  if (c.bank_bytes != 0 && c.partition_bytes % c.bank_bytes != 0)
    return "bank_bytes (" + std::to_string(c.bank_bytes) + ") must divide partition_bytes (" +
           std::to_string(c.partition_bytes) + ")";
  if (c.beat_bytes == 0) return "beat_bytes must be > 0";
  // The global map is 32-bit (D-ADDR); a larger memory could not be addressed.
  if (c.size() > (std::uint64_t{1} << 32)) return "partitions x partition_bytes exceeds 4 GiB";
  return {};
}

const params::Params<MemoryConfig>& memory_parameters() {
  using M = MemoryConfig;
  static const params::Params<M> list = {
      {"access_latency_ns", "ns", "model choice (docs/memory.md)", params::Kind::TimeNs, 0, 0, &M::access_latency},
      {"beat_latency_ns", "ns", "model choice (docs/memory.md)", params::Kind::TimeNs, 0, 0, &M::beat_latency},
      {"beat_bytes", "bytes", "model choice (docs/memory.md)", params::Kind::Count, 1, params::kMaxDepth,
       &M::beat_bytes},
  };
  return list;
}

MemoryConfig sbuf_config(isa::Generation gen) { return sbuf_config(isa::preset_geometry(gen)); }
MemoryConfig psum_config(isa::Generation gen) { return psum_config(isa::preset_geometry(gen)); }

MemoryConfig sbuf_config(const isa::ArrayGeometry& g) {
  MemoryConfig c;
  c.name = "sbuf";
  c.partitions = g.partitions;
  c.partition_bytes = g.sbuf_partition_bytes;
  return c;
}

MemoryConfig psum_config(const isa::ArrayGeometry& g) {
  MemoryConfig c;
  c.name = "psum";
  c.partitions = g.partitions;
  c.partition_bytes = g.psum_partition_bytes();
  c.bank_bytes = g.psum_bank_bytes;
  return c;
}

Memory::Memory(sc_core::sc_module_name name, MemoryConfig config)
    : sc_core::sc_module(name), socket("socket"), array_socket("array_socket"), dma_socket("dma_socket"), config_(std::move(config)) {
  if (const std::string why = check_config(config_); !why.empty()) {
    // A platform construction mistake, not a software-visible access error.
    SC_REPORT_ERROR(("/pevp/" + config_.name + "/config").c_str(), why.c_str());
    return;
  }
  storage_ = buffers::LargeBuffer(config_.size());
  socket.register_b_transport(this, &Memory::b_transport);
  socket.register_get_direct_mem_ptr(this, &Memory::get_direct_mem_ptr);
  socket.register_transport_dbg(this, &Memory::transport_dbg);
  array_socket.register_b_transport(this, &Memory::b_transport);
  array_socket.register_get_direct_mem_ptr(this, &Memory::get_direct_mem_ptr);
  array_socket.register_transport_dbg(this, &Memory::transport_dbg);
  dma_socket.register_b_transport(this, &Memory::b_transport);
  dma_socket.register_get_direct_mem_ptr(this, &Memory::get_direct_mem_ptr);
  dma_socket.register_transport_dbg(this, &Memory::transport_dbg);
}

sc_core::sc_time Memory::transfer_time(std::uint64_t length) const {
  const std::uint64_t beats = (length + config_.beat_bytes - 1) / config_.beat_bytes;
  return config_.access_latency + config_.beat_latency * static_cast<double>(beats);
}

sc_core::sc_time Memory::access(const TimedAccess& a) { return a.start + transfer_time(a.bytes); }

void Memory::fail(tlm::tlm_generic_payload& trans, tlm::tlm_response_status status, const char* what) {
  ++errors_;
  trans.set_response_status(status);
  // Per-transaction detail at debug verbosity: the status is the software-visible
  // error, and SC_REPORT_ERROR would throw out of b_transport.
  const std::string id = "/pevp/" + config_.name + "/" + what;
  const std::string msg = "address 0x" + [&] {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(trans.get_address()));
    return std::string(buf);
  }() + " length " + std::to_string(trans.get_data_length()) + ": " + trans.get_response_string();
  SC_REPORT_INFO_VERB(id.c_str(), msg.c_str(), sc_core::SC_DEBUG);
}

void Memory::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  delay += config_.access_latency;
  if (const auto refused = check_access(trans, storage_.size())) return fail(trans, refused->status, refused->what);
  if (trans.get_command() == tlm::TLM_IGNORE_COMMAND) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  copy_access(trans, storage_.data() + trans.get_address());
  delay += transfer_time(trans.get_data_length()) - config_.access_latency;
  trans.set_dmi_allowed(true);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool Memory::get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  if (!grant_whole(trans, dmi, storage_.data(), storage_.size())) return false;
  // One access of one beat: what a single-beat b_transport would cost.
  dmi.set_read_latency(transfer_time(1));
  dmi.set_write_latency(transfer_time(1));
  return true;
}

unsigned int Memory::transport_dbg(tlm::tlm_generic_payload& trans) {
  return debug_access(trans, storage_.data(), storage_.size());
}

}  // namespace pevp::memory
