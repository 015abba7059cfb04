// The hard reset of the whole platform: the device reset a real engine does, which drops its work rather than
// waiting for it (docs/checkpoint.md "Hard reset", model decisions D-RESET-*).
//
// One call, at the current simulated time: the SEQ's queue, the instruction blocked on its EVENTS wait and those in
// the array waiting for their responses are dropped (Seq::drop_work); so are the DMA engines' queues and the
// descriptors they were fetching, waiting on or moving (DmaEngines::hard_reset); device memory (HBM) is zeroed;
// then the power-on state -- SBUF, PSUM, every register of the four CSR faces with the semaphores and counters, the
// PE array, the arr_seq sequencer and its timeline, the SEQ's counts, firmware state and decode cache -- is applied
// as a checkpoint taken before the platform's first access, at the current time (D-RESET-STATE). The host's own
// memory is not the device's and stays (D-RESET-MEMORY). No simulated time passes: the reset takes three delta
// cycles, in which the restarted threads park and the interrupt lines fall (D-RESET-TIME).
#pragma once

#include "pevp/platform/checkpoint.h"
#include "pevp/platform/platform.h"

namespace pevp::platform {

// The state hard_reset() returns `platform` to: call it before the platform's first access (a host thread's first
// activation), when everything is as constructed. Throws CheckpointError where a platform cannot be checkpointed
// (csrs.impl = rtl: D-CSR-RTL-CKPT), naming why.
CheckpointImage power_on_state(const Platform& platform);

// Drops every queued, blocked and in-flight piece of work and returns `platform` to `power_on` (taken from it by
// power_on_state) at the current simulated time. Runs in an SC_THREAD (the host's); takes no simulated time. A reset
// while idle leaves the platform exactly as at power-on: its checkpoint equals the power-on one but for the time.
// Throws CheckpointError, changing nothing, when `power_on` does not fit this platform (another configuration) or
// the caller is no thread process.
void hard_reset(Platform& platform, const CheckpointImage& power_on);

}  // namespace pevp::platform
