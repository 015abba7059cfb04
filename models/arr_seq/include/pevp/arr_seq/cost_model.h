// How long each micro-op occupies the array: the one place a micro-op's delay is
// annotated. The datapath issue is functional, so every duration is zero; the
// timing issue replaces the body of duration() with the documented formulas
// (docs/timing.md) without touching the sequencer.
#pragma once

#include <systemc>

#include "pevp/pe_array/executor.h"
#include "pevp/pe_array/micro_op.h"

namespace pevp::arrseq {

class CostModel {
 public:
  // The time from issue to completion of `op`, which did `stats` (shapes, MACs).
  sc_core::sc_time duration(const pe::MicroOp& op, const pe::ExecStats& stats) const;
};

}  // namespace pevp::arrseq
