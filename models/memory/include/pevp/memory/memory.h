// SBUF and PSUM as TLM-2.0 memory targets (FACTS.md
// "Geometry"). One module serves both: a flat byte array of partitions x
// partition_bytes at local addresses 0..size-1 (the platform router subtracts
// the base of the global map, D-ADDR). b_transport follows the MINRES
// tlm_target / qbox gs_memory habits: start at an error status, upgrade to OK
// only when the access succeeded, leave memory untouched on every error; DMI
// grants the whole array read/write with an inclusive end of size - 1. The PE
// array reaches operands through DMI or data(), never per-element transactions.
// docs/memory.md describes the parameters, the error policy and DMI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "pevp/buffers/large_buffer.h"
#include "pevp/isa/generation.h"
#include "pevp/isa/geometry.h"
#include "pevp/memory/timed_target.h"
#include "pevp/params/param.h"

namespace pevp::memory {

struct MemoryConfig {
  // Unit name in message IDs (/pevp/<name>/addr_error): "sbuf" or "psum".
  std::string name = "memory";
  std::uint32_t partitions = 128;
  std::uint32_t partition_bytes = 0;  // bytes per partition; must be > 0
  // Bank size inside a partition (PSUM: 2 KiB); 0 = not banked. Must divide
  // partition_bytes. Carried for the PE array's bank decoding.
  std::uint32_t bank_bytes = 0;
  // Model choices (no public figure): every transaction costs access_latency,
  // and a successful one adds beat_latency per started beat of beat_bytes.
  sc_core::sc_time access_latency = sc_core::sc_time(10, sc_core::SC_NS);
  sc_core::sc_time beat_latency = sc_core::sc_time(1, sc_core::SC_NS);
  std::uint32_t beat_bytes = 64;

  std::uint64_t size() const { return std::uint64_t{partitions} * partition_bytes; }
};

// An empty string when the config is usable, else why not.
std::string check_config(const MemoryConfig& config);

// Geometry per generation (isa::geometry): SBUF partitions x sbuf_partition_bytes,
// PSUM partitions x 16 KiB in 2 KiB banks; default latencies.
// The configuration keys of a MemoryConfig (sections "sbuf" and "psum"; the
// partitions and sizes follow the geometry).
const params::Params<MemoryConfig>& memory_parameters();

MemoryConfig sbuf_config(isa::Generation gen);
MemoryConfig psum_config(isa::Generation gen);
MemoryConfig sbuf_config(const isa::ArrayGeometry& geo);
MemoryConfig psum_config(const isa::ArrayGeometry& geo);

class Memory : public sc_core::sc_module, public TimedTarget {
 public:
  // Three ports on the same array: `socket` for the system bus (host loads and
  // read-backs), `array_socket` for the PE array (DMI), `dma_socket` for the DMA
  // engines (DMI; docs/dma.md). A simple target socket takes one initiator, and
  // the paths are separate ports in hardware too.
  tlm_utils::simple_target_socket<Memory> socket;
  tlm_utils::simple_target_socket_optional<Memory> array_socket;
  tlm_utils::simple_target_socket_optional<Memory> dma_socket;

  Memory(sc_core::sc_module_name name, MemoryConfig config);
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

  const MemoryConfig& config() const { return config_; }
  std::uint64_t size() const { return storage_.size(); }
  // The fast functional path: local address a is data()[a].
  std::uint8_t* data() { return storage_.data(); }
  const std::uint8_t* data() const { return storage_.data(); }
  // Local address of byte `offset` of partition `p` (partition-major).
  std::uint64_t local_address(std::uint32_t p, std::uint32_t offset) const {
    return std::uint64_t{p} * config_.partition_bytes + offset;
  }
  // Transactions answered with an error status since construction.
  std::uint64_t errors() const { return errors_; }
  // A VP checkpoint's restore (docs/checkpoint.md) puts the count back with the
  // bytes (which it writes through data()).
  void restore_errors(std::uint64_t errors) { errors_ = errors; }
  // The time a successful transaction of `length` bytes takes (the latency
  // model above): what a timing-only driver waits instead of moving the data.
  sc_core::sc_time transfer_time(std::uint64_t length) const;
  // TimedTarget: a.start + transfer_time(a.bytes). The latency model books no
  // resource, so concurrent accesses do not delay each other.
  sc_core::sc_time access(const TimedAccess& a) override;

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  void fail(tlm::tlm_generic_payload& trans, tlm::tlm_response_status status, const char* what);

  MemoryConfig config_;
  buffers::LargeBuffer storage_;  // zero at construction, on huge pages where the host grants them
  std::uint64_t errors_ = 0;
};

}  // namespace pevp::memory
