// The host's memory as the device's DMA reaches it through the PCI link: a TLM-2.0 target for the DMA engines' host
// region whose bytes are the host's RAM (a guest's, under QEMU), handed in as regions of bus addresses -- local
// address a of the target is bus address a (D-PCI-DMA-ADDRESS). No fds here: whoever owns the RAM (the mpqemu link's
// guest-RAM map) hands in pointers and something that keeps them valid.
//
// Time comes from the platform's own host-memory model (the link's bandwidth and latency, D-HOST-MEMORY-LINK),
// asked through memory::TimedTarget: an access is booked there at the model's address 0 (D-PCI-DMA-TIMING). An
// access to an address no region holds is answered with TLM_ADDRESS_ERROR_RESPONSE, which the DMA engines turn into
// the queue's error record (docs/dma.md "Errors"); the target grants no DMI (the regions are not one block), so the
// engines move each row through b_transport, and a new layout needs no DMI invalidation.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "pevp/memory/timed_target.h"

namespace pevp::pcie {

struct RamRegion {
  std::uint64_t bus_address = 0;
  std::uint64_t size = 0;
  std::uint8_t* data = nullptr;
};

// The host's RAM now: its regions and an owner that keeps their bytes valid while this layout is installed.
struct RamLayout {
  std::vector<RamRegion> regions;
  std::shared_ptr<const void> keep_alive;
};

// One DMA access to host memory, for observers.
struct HostAccess {
  bool write = false;
  std::uint64_t address = 0, bytes = 0;
  bool ok = false;
  sc_core::sc_time at;
};

struct HostMemoryStats {
  std::uint64_t reads = 0, writes = 0, read_bytes = 0, write_bytes = 0;
  std::uint64_t errors = 0;  // accesses outside every region
  std::uint64_t layouts = 0;  // layouts installed
};

class HostMemory : public sc_core::sc_module, public memory::TimedTarget {
 public:
  tlm_utils::simple_target_socket<HostMemory> socket;

  // `span`: the bytes of bus address space the target answers for (the size of the DMA engines' host region).
  HostMemory(sc_core::sc_module_name name, std::uint64_t span);

  // Where the time of an access comes from (the platform's host-memory model); without one, accesses take none.
  void time_by(memory::TimedTarget& link) { link_ = &link; }
  // Replaces the layout; the next access sees the new one. Call it from the simulation thread.
  void install(RamLayout layout);

  sc_core::sc_time access(const memory::TimedAccess& a) override;
  std::uint64_t size() const { return span_; }
  const HostMemoryStats& stats() const { return stats_; }
  std::function<void(const HostAccess&)> observer;

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  // The bytes of [address, address + bytes) when one region holds them all, else nullptr.
  std::uint8_t* find(std::uint64_t address, std::uint64_t bytes) const;

  std::uint64_t span_;
  memory::TimedTarget* link_ = nullptr;
  RamLayout layout_;
  HostMemoryStats stats_;
};

}  // namespace pevp::pcie
