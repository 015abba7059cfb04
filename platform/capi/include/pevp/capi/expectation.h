// The scoreboard's expectation of one instruction (pevp_expect, the protocol's expect op; docs/cosim-reference.md
// "Scoreboard"): the micro-ops the VP scheduled for it, the PSUM window they write and their cycles, so a testbench
// can check its own array transaction by transaction.
#pragma once

#include <cstdint>
#include <vector>

#include "pevp/arr_seq/timeline.h"
#include "pevp/isa/geometry.h"
#include "pevp/pe_array/micro_op.h"

namespace pevp::capi {

// One scheduled micro-op as the sequencer's observer told it.
struct ScheduledOp {
  pe::MicroOp op;
  arrseq::Slot slot;
};

// The PSUM region an instruction's matmuls write: partitions [first_partition, first_partition + partitions) and,
// in each, bytes [offset, offset + bytes) -- the union (bounding box) of every matmul micro-op's destination
// pattern. element_bytes is 4 (fp32 words) unless the output is BFLOAT16 (2). An instruction that writes no PSUM
// (a weight load, a register write) has partitions = bytes = 0. The banks a group's BEGIN zeroes outside the
// destination are not part of it (D-EXPECT-WINDOW).
struct PsumWindow {
  std::uint32_t first_partition = 0, partitions = 0;
  std::uint32_t offset = 0, bytes = 0;
  std::uint8_t element_bytes = 4;
};
PsumWindow psum_window(const std::vector<ScheduledOp>& ops, const isa::ArrayGeometry& geo);

// The instruction's cycles (the micro-op log's, docs/cosim-reference.md): its first micro-op's entry into the IFIFO
// (issue) and start, the latest `complete` of its micro-ops -- the completion, its last effect: the last PSUM column
// committed, or the weights loaded -- and the last micro-op's response (its retirement).
struct InstructionCycles {
  std::uint64_t issue = 0, start = 0, complete = 0, response = 0;
};
InstructionCycles instruction_cycles(const std::vector<ScheduledOp>& ops);

}  // namespace pevp::capi
