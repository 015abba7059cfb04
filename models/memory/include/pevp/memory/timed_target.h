// The timing of a memory, asked without moving data. A DMA engine moves its bytes through DMI (or not at all in a
// timing-only run) and asks each memory it touches when an access of that size, starting at a given time, is done:
// the memory's own model answers, contention with earlier accesses from every requester included, and books the
// memory's resources for it. SBUF and PSUM answer from their fixed latency model, device memory (HBM) from its
// channel queues (docs/memory-system.md).
#pragma once

#include <cstdint>

#include <systemc>

namespace pevp::memory {

enum class Direction : std::uint8_t { Read, Write };

struct TimedAccess {
  std::uint64_t address = 0;  // local to the memory (0 = its first byte)
  std::uint64_t bytes = 0;
  Direction direction = Direction::Read;
  sc_core::sc_time start;  // absolute simulated time the access is presented
  unsigned requester = 0;  // who asks (a DMA engine's index): for the memory's statistics
};

class TimedTarget {
 public:
  virtual ~TimedTarget() = default;
  // The absolute time the access completes (>= its start). Books the memory's resources, so a later access that
  // overlaps it in time waits. The caller has checked the range against the memory's size.
  virtual sc_core::sc_time access(const TimedAccess& a) = 0;
};

}  // namespace pevp::memory
