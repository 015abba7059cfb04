#include "pevp/arr_seq/arr_seq.h"

#include <algorithm>

#include "pevp/isa/generation.h"

namespace pevp::arrseq {

using regfile::CounterBank;

namespace {

CounterBank bank_of(pe::MicroOpKind k) {
  switch (k) {
    case pe::MicroOpKind::WeightLoad: return CounterBank::WeightLoad;
    case pe::MicroOpKind::Matmul: return CounterBank::Matmul;
    case pe::MicroOpKind::PeRegWrite: return CounterBank::PeRegWrite;
  }
  return CounterBank::Matmul;
}

}  // namespace

ArrSeq::ArrSeq(sc_core::sc_module_name name, regfile::ArrSeqCsrs& csrs, pe::PeArray& array, ArrSeqConfig config)
    : sc_core::sc_module(name), csrs_(csrs), array_(array), config_(config) {
  if (config_.ififo_depth == 0) config_.ififo_depth = 1;
  SC_THREAD(issue_thread);
  SC_THREAD(complete_thread);
}

unsigned ArrSeq::ififo_capacity() const { return csrs_.queue_cfg().fifo_size_sel ? 1 : config_.ififo_depth; }

void ArrSeq::put(pe::MicroOp op) {
  if (ififo_.size() >= ififo_capacity()) {
    ++stats_.ififo_full_waits;
    while (ififo_.size() >= ififo_capacity()) sc_core::wait(popped_);
  }
  ififo_.push_back(std::move(op));
  pushed_.notify(sc_core::SC_ZERO_TIME);
}

std::vector<pe::MicroOp> ArrSeq::flush() {
  std::vector<pe::MicroOp> out(std::make_move_iterator(ififo_.begin()), std::make_move_iterator(ififo_.end()));
  stats_.flushed += out.size();
  ififo_.clear();
  popped_.notify(sc_core::SC_ZERO_TIME);
  return out;
}

unsigned ArrSeq::queue_of(const isa::TileRect& t) { return ((t.row0 / 32) * 4 + (t.col0 / 32) % 4) % kQueues; }

std::uint8_t ArrSeq::psum_banks_written(const pe::MicroOp& op) {
  if (op.kind != pe::MicroOpKind::Matmul) return 0;
  // The banks the dst pattern spans inside a partition: from the start byte to the
  // farthest byte any step reaches (fp32 elements). A conservative superset is
  // fine here: it only makes the dependency check stricter.
  const isa::Decoded& d = *op.instr;
  const std::int64_t start = d.get_or("dst_mem_pattern.start_addr", isa::Geometry::kPsumBase);
  const std::int64_t part_off = (start - static_cast<std::int64_t>(isa::Geometry::kPsumBase)) % 16384;
  std::int64_t lo = 0, hi = 0;
  for (int i = 0; i < 4; ++i) {
    const std::string n = "dst_mem_pattern.num_elem[" + std::to_string(i) + "]";
    const std::string s = "dst_mem_pattern.step_elem[" + std::to_string(i) + "]";
    if (!d.has(n)) break;
    const std::int64_t reach = (std::max<std::int64_t>(d.get(n), 1) - 1) * d.get_or(s, 0) * 4;
    (reach < 0 ? lo : hi) += reach;
  }
  const std::int64_t first = std::clamp<std::int64_t>((part_off + lo) / 2048, 0, 7);
  const std::int64_t last = std::clamp<std::int64_t>((part_off + hi + 3) / 2048, 0, 7);
  std::uint8_t mask = 0;
  for (std::int64_t b = first; b <= last; ++b) mask |= static_cast<std::uint8_t>(1u << b);
  return mask;
}

int ArrSeq::blocked(const pe::MicroOp& op, unsigned queue, std::uint8_t banks, bool depchk_disabled) const {
  int why = 0;
  for (const InFlight& f : in_flight_) {
    if (f.queue == queue || f.op.tile.overlaps(op.tile) || (f.banks & banks)) return 1;
    if (depchk_disabled) why = 2;
  }
  return why;
}

void ArrSeq::issue_thread() {
  for (;;) {
    while (ififo_.empty()) sc_core::wait(pushed_);
    unsigned queue = 0;
    std::uint8_t banks = 0;
    bool counted_wait = false;
    for (;;) {
      if (ififo_.empty()) break;  // flushed while waiting
      // The head may have changed (a flush and a refill while waiting): recompute.
      queue = queue_of(ififo_.front().tile);
      banks = psum_banks_written(ififo_.front());
      const int why = blocked(ififo_.front(), queue, banks, csrs_.queue_cfg().disable_dependency_check);
      if (why == 0) break;
      if (!counted_wait) ++(why == 1 ? stats_.dependency_waits : stats_.serialised_waits);
      counted_wait = true;
      sc_core::wait(completed_);
    }
    if (ififo_.empty()) continue;

    pe::MicroOp op = std::move(ififo_.front());
    ififo_.pop_front();
    popped_.notify(sc_core::SC_ZERO_TIME);
    const pe::ExecResult r = array_.execute(op, csrs_.queue_cfg().bypass_peregwrite_instr);
    if (!r.ok) {
      ++stats_.faults;
      if (on_fault) on_fault(op, r);
      continue;
    }
    ++stats_.issued[static_cast<unsigned>(op.kind)];
    csrs_.count(bank_of(op.kind), op.tile);
    const sc_core::sc_time done_at = sc_core::sc_time_stamp() + cost_.duration(op, array_.last_stats());
    in_flight_.push_back({std::move(op), queue, banks, done_at});
    completion_due_.notify(done_at - sc_core::sc_time_stamp());
  }
}

void ArrSeq::complete_thread() {
  for (;;) {
    sc_core::wait(completion_due_);
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    // Retire in issue order everything due by now; re-arm for the next due one.
    std::vector<pe::MicroOp> done;
    auto it = in_flight_.begin();
    while (it != in_flight_.end()) {
      if (it->done_at <= now) {
        done.push_back(std::move(it->op));
        it = in_flight_.erase(it);
      } else {
        ++it;
      }
    }
    sc_core::sc_time next = sc_core::SC_ZERO_TIME;
    bool any = false;
    for (const InFlight& f : in_flight_)
      if (!any || f.done_at < next) next = f.done_at, any = true;
    if (any) completion_due_.notify(next - now);
    for (const pe::MicroOp& op : done)
      if (on_complete) on_complete(op);
    if (!done.empty()) completed_.notify(sc_core::SC_ZERO_TIME);
  }
}

}  // namespace pevp::arrseq
