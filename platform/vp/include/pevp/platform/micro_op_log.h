// `--micro-op-log PATH`, pevp_micro_op_log_*(): one JSON object per line (JSON Lines) for every micro-op the
// sequencer scheduled, in issue order, for a testbench to compare against an RTL's events -- the instruction and
// micro-op it came from, its opcode and kind, its tile, extents and queue, the PSUM banks it writes, the row groups
// and SBUF partition it reads, and its cycles: ready, issue (IFIFO entry), start, end, complete, done, response
// and the stall cycles by reason. Every field, with its unit, is defined in docs/cosim-reference.md.
//
// Cycles are tensor-engine cycles from the start of simulation (the Timeline's, docs/timing.md), integers only,
// keys in a fixed order and every key on every line: the same stream gives byte-identical lines on every run.
//
// Like FirmwareLog, it hooks the sequencer's micro-op observer, keeping an observer set before it (the recorder's,
// the firmware log's) and giving it back when it goes: make it after them, so it goes first.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "pevp/platform/platform.h"

namespace pevp::platform {

class MicroOpLog {
 public:
  MicroOpLog(Platform& platform, std::ostream& out);
  ~MicroOpLog();
  MicroOpLog(const MicroOpLog&) = delete;
  MicroOpLog& operator=(const MicroOpLog&) = delete;

  // While off, micro-ops pass unlogged (and leave the line numbers alone); on by default.
  void enable(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }
  std::uint64_t lines() const { return seq_; }

  // The line of one scheduled micro-op, without its newline: `seq` its number in the log, `uop` its index within
  // its instruction.
  static std::string line(const pe::MicroOp& op, const arrseq::Slot& s, const isa::ArrayGeometry& geo,
                          std::uint64_t seq, unsigned uop);

 private:
  Platform& p_;
  std::ostream& out_;
  std::function<void(const pe::MicroOp&, const arrseq::Slot&)> previous_observer_;
  bool enabled_ = true;
  std::uint64_t seq_ = 0;
  // The micro-op's index within its instruction: counted from the first micro-op after one that completed its
  // instruction, or after a change of instruction index (a fault can leave an instruction half issued).
  bool open_ = false;  // the previous micro-op left its instruction open
  std::uint64_t last_instr_ = 0;
  unsigned uop_ = 0;
};

}  // namespace pevp::platform
