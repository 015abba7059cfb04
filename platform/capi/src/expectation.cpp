#include "pevp/capi/expectation.h"

#include <algorithm>
#include <limits>

#include "pevp/isa/access_pattern.h"
#include "pevp/isa/enums.h"

namespace pevp::capi {

PsumWindow psum_window(const std::vector<ScheduledOp>& ops, const isa::ArrayGeometry& geo) {
  PsumWindow w;
  std::uint32_t p_lo = std::numeric_limits<std::uint32_t>::max(), p_hi = 0;
  std::int64_t b_lo = std::numeric_limits<std::int64_t>::max(), b_hi = -1;
  for (const ScheduledOp& s : ops) {
    const pe::MicroOp& op = s.op;
    if (op.kind != pe::MicroOpKind::Matmul) continue;
    const std::optional<isa::Location> at = isa::locate(op.dst.start, isa::Memory::Psum, geo);
    if (!at) continue;  // refused by the rules before it is scheduled; nothing written
    const unsigned elem = op.out_dtype == static_cast<std::int64_t>(isa::Dtype::BFLOAT16) ? 2 : 4;
    w.element_bytes = static_cast<std::uint8_t>(elem);
    // One output partition per active column; more columns than partitions fold (MAVERICK's c256 tiles).
    const std::uint32_t parts = std::min<std::uint32_t>(op.m, geo.partitions - at->partition);
    const isa::ByteRange r = isa::covered_bytes(op.dst, at->offset, elem);
    p_lo = std::min(p_lo, at->partition);
    p_hi = std::max(p_hi, at->partition + parts);
    b_lo = std::min<std::int64_t>(b_lo, r.first);
    b_hi = std::max<std::int64_t>(b_hi, r.last);
  }
  if (b_hi < 0 || p_hi <= p_lo) return w;
  w.first_partition = p_lo;
  w.partitions = p_hi - p_lo;
  w.offset = static_cast<std::uint32_t>(b_lo);
  w.bytes = static_cast<std::uint32_t>(b_hi - b_lo + 1);
  return w;
}

InstructionCycles instruction_cycles(const std::vector<ScheduledOp>& ops) {
  InstructionCycles c;
  if (ops.empty()) return c;
  c.issue = ops.front().slot.push;
  c.start = ops.front().slot.start;
  for (const ScheduledOp& s : ops) {
    c.issue = std::min<std::uint64_t>(c.issue, s.slot.push);
    c.start = std::min<std::uint64_t>(c.start, s.slot.start);
    c.complete = std::max<std::uint64_t>(c.complete, s.slot.complete);
    c.response = std::max<std::uint64_t>(c.response, s.slot.response);
  }
  return c;
}

}  // namespace pevp::capi
