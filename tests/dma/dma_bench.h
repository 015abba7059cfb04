// A small SystemC bench for the DMA engines: SBUF, PSUM, HBM and host memory as memory::Memory targets mapped at
// the DMA address space's bases, a stand-in for the SEQ's semaphores that records when each update lands, a
// single-server stand-in for a contended memory, and helpers that write descriptors into a ring in host memory.
#pragma once

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

#include "pevp/dma/address_space.h"
#include "pevp/dma/dma_engines.h"
#include "pevp/memory/memory.h"

namespace pevp::dma::test {

using sc_core::SC_NS;
using sc_core::sc_time;

class StandInSemaphores : public Semaphores {
 public:
  struct Update {
    sc_time at;
    unsigned index;
    std::uint32_t value_after;
  };
  explicit StandInSemaphores(unsigned n) : values_(n, 0) {}
  unsigned count() const override { return static_cast<unsigned>(values_.size()); }
  std::uint32_t value(unsigned i) override { return values_.at(i); }
  std::string update(unsigned i, isa::UpdateMode mode, std::uint32_t by) override {
    std::uint32_t& v = values_.at(i);
    switch (mode) {
      case isa::UpdateMode::SET: v = by; break;
      case isa::UpdateMode::INCREMENT:
        if (v > 0xFFFFFFFFu - by) return "increment by " + std::to_string(by) + " overflows " + std::to_string(v);
        v += by;
        break;
      case isa::UpdateMode::DECREMENT:
        if (v < by) return "decrement by " + std::to_string(by) + " underflows " + std::to_string(v);
        v -= by;
        break;
      case isa::UpdateMode::NONE: return "";
    }
    updates.push_back({sc_core::sc_time_stamp(), i, v});
    changed_.notify(sc_core::SC_ZERO_TIME);
    return "";
  }
  const sc_core::sc_event& changed() const override { return changed_; }
  void poke(unsigned i, std::uint32_t v) { values_.at(i) = v; }
  std::vector<Update> updates;

 private:
  std::vector<std::uint32_t> values_;
  sc_core::sc_event changed_;
};

// One server at `bytes_per_ns`: an access starts when both it is presented and the previous one is done.
class SingleServer : public memory::TimedTarget {
 public:
  explicit SingleServer(double bytes_per_ns) : rate_(bytes_per_ns) {}
  sc_time access(const memory::TimedAccess& a) override {
    const sc_time begin = std::max(a.start, free_at_);
    free_at_ = begin + sc_time(static_cast<double>(a.bytes) / rate_, SC_NS);
    requesters.push_back(a.requester);
    return free_at_;
  }
  std::vector<unsigned> requesters;

 private:
  double rate_;
  sc_time free_at_ = sc_core::SC_ZERO_TIME;
};

// Every memory: 10 ns per access + 1 ns per started 64-byte beat (memory::Memory's model).
inline memory::MemoryConfig mem_config(const char* name, std::uint32_t partitions, std::uint32_t partition_bytes) {
  memory::MemoryConfig c;
  c.name = name;
  c.partitions = partitions;
  c.partition_bytes = partition_bytes;
  c.access_latency = sc_time(10, SC_NS);
  c.beat_latency = sc_time(1, SC_NS);
  c.beat_bytes = 64;
  return c;
}

// 2 engines x 2 queues; 16 bytes/ns, 100 ns per descriptor, 50 ns per row.
inline DmaConfig test_config() {
  DmaConfig c;
  c.engines = 2;
  c.queues_per_engine = 2;
  c.engine_gbps = 16.0;
  c.descriptor = sc_time(100, SC_NS);
  c.row_overhead = sc_time(50, SC_NS);
  c.max_ring_entries = 64;
  return c;
}

inline constexpr std::uint32_t kSbufPartitionBytes = 4096;
inline constexpr std::uint32_t kPsumPartitionBytes = 2048;
inline constexpr std::uint32_t kPartitions = 4;
inline constexpr std::uint64_t kHbmBytes = 1 << 20;
inline constexpr std::uint64_t kHostBytes = 1 << 16;

// The memories' system-bus sockets must be bound; this bench reaches memory through data() instead.
struct IdleBus : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<IdleBus> ports[4];
  explicit IdleBus(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
};

struct Bench {
  memory::Memory sbuf{"sbuf", mem_config("sbuf", kPartitions, kSbufPartitionBytes)};
  memory::Memory psum{"psum", mem_config("psum", kPartitions, kPsumPartitionBytes)};
  memory::Memory hbm{"hbm", mem_config("hbm", 1, kHbmBytes)};
  memory::Memory host{"host", mem_config("host", 1, kHostBytes)};
  StandInSemaphores sems{32};
  DmaEngines dma;
  std::vector<TransferRecord> records;
  IdleBus bus{"bus"};

  explicit Bench(DmaConfig c = test_config(), bool move_data = true, memory::TimedTarget* hbm_timing = nullptr)
      : dma("dma", c, sems, move_data) {
    expect_ok(dma.map("sbuf", kSbufBase, sbuf.size(), sbuf.dma_socket, sbuf));
    expect_ok(dma.map("psum", kPsumBase, psum.size(), psum.dma_socket, psum));
    expect_ok(dma.map("hbm", kHbmBase, hbm.size(), hbm.dma_socket, hbm_timing ? *hbm_timing : hbm));
    expect_ok(dma.map("host", kHostBase, host.size(), host.dma_socket, host));
    bus.ports[0].bind(sbuf.socket);
    bus.ports[1].bind(psum.socket);
    bus.ports[2].bind(hbm.socket);
    bus.ports[3].bind(host.socket);
    dma.on_transfer([this](const TransferRecord& r) { records.push_back(r); });
  }
  static void expect_ok(const std::string& why) {
    if (!why.empty()) throw std::logic_error(why);
  }

  // Queue (e, q)'s ring: `entries` slots in host memory, 4 KiB per queue.
  static std::uint64_t ring_local(QueueId id) { return 0x1000 * (1 + id.engine * 4 + id.queue); }
  void program(QueueId id, std::uint32_t entries = 8) {
    dma.set_ring(id, kHostBase + ring_local(id), entries);
    dma.set_enabled(id, true);
  }
  // Writes descriptors into slots [first, first + n) and rings the doorbell to first + n.
  void submit(QueueId id, const std::vector<Descriptor>& ds, std::uint32_t first = 0, std::uint32_t entries = 8) {
    for (std::size_t i = 0; i < ds.size(); ++i) put_raw(id, first + static_cast<std::uint32_t>(i), encode(ds[i]), entries);
    dma.ring_doorbell(id, first + static_cast<std::uint32_t>(ds.size()));
  }
  void put_raw(QueueId id, std::uint32_t slot, const DescriptorBytes& b, std::uint32_t entries = 8) {
    std::memcpy(host.data() + ring_local(id) + (slot % entries) * kDescriptorBytes, b.data(), b.size());
  }
  // Runs `script` as a thread from time 0, then the simulation until nothing is left to do.
  void run(std::function<void()> script) {
    sc_core::sc_spawn(std::move(script), "script");
    sc_core::sc_start();
  }
  std::uint8_t* at(std::uint64_t dma_address) {
    if (dma_address >= kHostBase) return host.data() + (dma_address - kHostBase);
    if (dma_address >= kHbmBase) return hbm.data() + (dma_address - kHbmBase);
    if (dma_address >= kPsumBase) return psum.data() + (dma_address - kPsumBase);
    return sbuf.data() + dma_address;
  }
};

}  // namespace pevp::dma::test
