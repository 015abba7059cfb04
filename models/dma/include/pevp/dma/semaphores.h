// The seam between the DMA engines and the SEQ's EVENTS semaphores (docs/datapath.md "EVENTS semaphores",
// D-EVENTS). A descriptor waits on one semaphore before it starts and updates one when it completes, so a PE
// instruction waits for its data with its own EVENTS wait. The platform implements this over the SEQ; tests use a
// plain stand-in.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

#include "pevp/isa/enums.h"

namespace pevp::dma {

class Semaphores {
 public:
  virtual ~Semaphores() = default;
  virtual unsigned count() const = 0;
  virtual std::uint32_t value(unsigned i) = 0;  // as of the current simulated time
  // Applies the update at the current simulated time: "" or why not (an overflow past 2^32-1, an underflow below
  // 0 -- then nothing changes).
  virtual std::string update(unsigned i, isa::UpdateMode mode, std::uint32_t by) = 0;
  virtual const sc_core::sc_event& changed() const = 0;  // notified after any writer changes a semaphore
};

}  // namespace pevp::dma
