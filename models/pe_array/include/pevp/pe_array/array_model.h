// The seam between the arr_seq sequencer and whatever executes its micro-ops: the functional PE array model
// (pe::PeArray) with its C++ arithmetic, or with the Verilated RTL tile as its datapath (pe_array.impl = rtl). The
// sequencer holds only this interface.
//
// The seam is a timed transaction (model decision D-ARRAY-SEAM, docs/cosim.md "The datapath in the loop"): the
// sequencer offers a micro-op at the earliest cycle its own rules allow (IFIFO, in-order issue, the tile's ports,
// the dependency check, the P2F back-pressure, the launch stagger), and the implementation executes it and decides
// when it accepted it and when it completes -- or leaves the time to the sequencer's cost model. The sequencer is a
// temporally decoupled initiator: the cycles are numbers on its timeline, nothing waits in simulated time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "pevp/pe_array/executor.h"
#include "pevp/pe_array/micro_op.h"

namespace pevp::pe {

// The times an implementation decided for one micro-op, in engine cycles on the sequencer's timeline.
struct ArrayTiming {
  std::uint64_t accept = 0;        // it took the micro-op (at or after the cycle it was offered at)
  std::uint64_t end = 0;           // the resource it held is free again: the weight-load port, the moving stream
  std::uint64_t complete = 0;      // its last effect: the weights loaded, the last PSUM word written
  std::uint64_t first_result = 0;  // a Matmul's first PSUM word written (a weight load: its completion)
  // Why these times are not a valid answer to an offer at `offered` (accept before it, or the times out of order),
  // or "".
  const char* problem(std::uint64_t offered) const {
    if (accept < offered) return "accepted before it was offered";
    if (end < accept || complete < end) return "not accept <= end <= complete";
    if (first_result < accept || first_result > complete) return "its first result outside [accept, complete]";
    return "";
  }
};

// The answer to an offer: the verdict (on an error nothing was written) and the time, when the implementation
// models it.
struct Accepted {
  ExecResult result = ExecResult::success();
  std::optional<ArrayTiming> timing;  // unset: the sequencer's cost model times the micro-op
};

class ArrayModel {
 public:
  virtual ~ArrayModel() = default;
  // Executes one micro-op now. `bypass_peregwrite` is queue_cfg.bypass_peregwrite_instr:
  // a PeRegWrite takes its immediate instead of its SBUF word. On an error
  // nothing is written and the result names the rule.
  virtual ExecResult execute(const MicroOp& op, bool bypass_peregwrite) = 0;
  // Offers one micro-op at cycle `earliest`. The default executes it and leaves its time to the sequencer's cost
  // model; an implementation that models time answers with its own (ArrayTiming::problem must be "").
  virtual Accepted offer(const MicroOp& op, bool bypass_peregwrite, std::uint64_t earliest) {
    (void)earliest;
    return {execute(op, bypass_peregwrite), std::nullopt};
  }
  // Which implementation executes the micro-ops ("C++ executor", "RTL tile 32x32"), for statistics.
  virtual std::string implementation() const { return "C++ executor"; }
};

}  // namespace pevp::pe
