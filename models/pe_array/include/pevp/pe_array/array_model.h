// The seam between the arr_seq sequencer and whatever executes its micro-ops:
// the functional PE array model (pe::PeArray) today, an RTL array tile behind a
// bridge later. The sequencer holds only this interface.
#pragma once

#include "pevp/pe_array/executor.h"
#include "pevp/pe_array/micro_op.h"

namespace pevp::pe {

class ArrayModel {
 public:
  virtual ~ArrayModel() = default;
  // Executes one micro-op now. `bypass_peregwrite` is queue_cfg.bypass_peregwrite_instr:
  // a PeRegWrite takes its immediate instead of its SBUF word. On an error
  // nothing is written and the result names the rule.
  virtual ExecResult execute(const MicroOp& op, bool bypass_peregwrite) = 0;
};

}  // namespace pevp::pe
