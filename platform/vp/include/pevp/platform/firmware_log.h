// `--log-firmware`: the firmware stub's self-name line for each instruction ("S: Matmul") and each micro-op the
// sequencer scheduled with its simulated times, printed as they happen:
//
//   fw [      1.7521 us] instr 0: S: Ldweights
//   fw [      1.7588 us]   weight_load tile rows 0-127 cols 0-127: start 1.7588 us, complete 1.7621, response 1.7621
//
// The firmware line carries the SEQ's own time when it dispatched the instruction (it runs ahead of simulated
// time by at most a quantum, docs/timing.md); a micro-op line the time it entered the IFIFO, then its start,
// completion and response (the Timeline's cycles, in us). In the functional-only mode every time is the dispatch
// time. The log hooks the SEQ's firmware observer and the sequencer's micro-op observer, keeping an observer set
// before it (the recorder's) and giving it back when it goes: make it after the Recorder, so it goes first.
#pragma once

#include <functional>
#include <ostream>

#include "pevp/platform/platform.h"

namespace pevp::platform {

class FirmwareLog {
 public:
  FirmwareLog(Platform& platform, std::ostream& out);
  ~FirmwareLog();
  FirmwareLog(const FirmwareLog&) = delete;
  FirmwareLog& operator=(const FirmwareLog&) = delete;

 private:
  std::string us(arrseq::Cycle c, int width = 0) const;  // microseconds, 4 decimals
  Platform& p_;
  std::ostream& out_;
  std::function<void(const pe::MicroOp&, const arrseq::Slot&)> previous_observer_;
};

}  // namespace pevp::platform
