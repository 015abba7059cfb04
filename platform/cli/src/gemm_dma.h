// The driver program of `pe-vp gemm --data-path dma` (gemm_dma.cpp; docs/memory-system.md).
#pragma once

#include <cstdint>
#include <string>

#include <systemc>

#include "pevp/host/gemm_plan.h"
#include "pevp/host/matrix.h"
#include "pevp/host/operands.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/gemm.h"
#include "pevp/platform/platform.h"
#include "pevp/platform/progress.h"

namespace pevp::platform {

struct DmaPathResult {
  std::string failure;  // "" on success, else what stopped (a DMA queue's error record, the SEQ's error, no progress)
  std::size_t failed_step = 0;
  std::uint64_t load_bytes = 0, eviction_bytes = 0;
};

// Runs the walked plan (its header planned with sbuf_buffers = 2) through the DMA engines on the driver's thread:
// operands laid out in device memory, descriptors queued step by step, C read back from device memory into `c`
// (null: a timing-only run, which moves no data). `window`: how long nothing may move before the run is called stuck.
DmaPathResult run_dma_steps(Driver& d, Platform& p, const host::GemmPlan& header, const StepWalk& walk,
                            const host::EncodedOperand* a, const host::EncodedOperand* b, host::Matrix* c,
                            Progress* progress, sc_core::sc_time window);

}  // namespace pevp::platform
