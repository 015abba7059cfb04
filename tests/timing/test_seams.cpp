// The arr_seq sequencer's seams: it reaches the PE array through pe::ArrayModel
// and its CSR block through regfile::SequencerCsrs, so another model -- or RTL
// behind a bridge -- can stand in for either. Here both are stand-ins written
// for the test, with no register file and no PE array behind them: the
// sequencer must work from what the interfaces say alone.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "isa_test_util.h"
#include "pevp/arr_seq/arr_seq.h"
#include "pevp/firmware/firmware.h"

namespace pevp::isa::test {
namespace {

// An array that records what it is asked to execute and fails on request.
struct RecordingArray : pe::ArrayModel {
  std::vector<pe::MicroOp> executed;
  std::vector<bool> bypass;
  bool fail_next = false;
  pe::ExecResult execute(const pe::MicroOp& op, bool bypass_peregwrite) override {
    if (fail_next) {
      fail_next = false;
      return pe::ExecResult::error("exec.no_stationary", "no stationary loaded for the tile (stand-in)");
    }
    executed.push_back(op);
    bypass.push_back(bypass_peregwrite);
    return pe::ExecResult::success();
  }
};

// A CSR block that is a plain struct: software "writes" by changing a field and
// raising the change notice, as a bus-attached block would on a write.
struct PlainCsrs : regfile::SequencerCsrs {
  regfile::QueueCfg queue;
  regfile::ClusterCfg cluster;
  std::uint32_t throttle_disabled = 0x1FF;
  bool counting = true;
  std::vector<std::pair<regfile::CounterBank, TileRect>> counted;
  std::vector<std::pair<unsigned, regfile::RowGroupActivity>> published;
  std::function<void()> changed, reset;

  regfile::QueueCfg queue_cfg() const override { return queue; }
  regfile::ClusterCfg cluster_cfg() const override { return cluster; }
  std::uint32_t disable_throttle() const override { return throttle_disabled; }
  bool counters_enabled() const override { return counting; }
  bool count(regfile::CounterBank bank, const TileRect& tile) override {
    if (counting) counted.push_back({bank, tile});
    return true;
  }
  void publish_row_group(unsigned group, const regfile::RowGroupActivity& a) override { published.push_back({group, a}); }
  void on_config_change(std::function<void()> f) override { changed = std::move(f); }
  void on_counters_reset(std::function<void()> f) override { reset = std::move(f); }
  void write_queue_cfg(regfile::QueueCfg q) {
    queue = q;
    changed();
  }
};

pe::MicroOp lowered(G g, const RawInstruction& raw) {
  const fw::Prepared p = fw::prepare(std::make_shared<const Decoded>(decode(g, raw)));
  EXPECT_TRUE(!p.ops.empty()) << (p.fault ? p.fault->describe() : "");
  return (p.ops.empty() ? pe::MicroOp{} : p.ops.front());
}

TEST(Seams, TheSequencerDrivesAnyArrayModelWithTheMicroOpsOperands) {
  PlainCsrs csrs;
  csrs.cluster.p2fifo_af = 12;
  csrs.cluster.stagger_idle_limit = {0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF};
  RecordingArray array;
  arrseq::ArrSeq seq("seams_arr_seq", csrs, array);
  const pe::MicroOp lw = lowered(G::MARIANA, lw_base(G::MARIANA));
  const pe::MicroOp mm = lowered(G::MARIANA, mm_base(G::MARIANA));
  const auto a = seq.issue(lw, 0);
  const auto b = seq.issue(mm, 0);
  ASSERT_TRUE(a.result.ok && b.result.ok);
  ASSERT_EQ(array.executed.size(), 2u);
  EXPECT_EQ(array.executed[0].kind, pe::MicroOpKind::WeightLoad);
  EXPECT_EQ(array.executed[1].kind, pe::MicroOpKind::Matmul);
  EXPECT_EQ(array.executed[1].src.count(), 128u);
  // The Matmul streams behind the weights it uses (docs/timing.md: II = max(N, 64) = 128).
  EXPECT_GE(b.start, a.complete);
  EXPECT_EQ(b.complete - b.start, seq.timeline().cost_model().cost(arrseq::shape_of(mm, ArrayGeometry{})).latency());
  // Each micro-op is counted in its bank, on its tile.
  ASSERT_EQ(csrs.counted.size(), 2u);
  EXPECT_EQ(csrs.counted[0].first, regfile::CounterBank::WeightLoad);
  EXPECT_EQ(csrs.counted[1].first, regfile::CounterBank::Matmul);
  EXPECT_EQ(csrs.counted[1].second, (TileRect{0, 128, 0, 128}));
}

TEST(Seams, AnArrayModelsErrorIsTheMicroOpsResultAndNothingIsScheduled) {
  PlainCsrs csrs;
  RecordingArray array;
  arrseq::ArrSeq seq("seams_arr_seq", csrs, array);
  array.fail_next = true;
  const auto r = seq.issue(lowered(G::CAYMAN, mm_base(G::CAYMAN)), 0);
  EXPECT_FALSE(r.result.ok);
  EXPECT_EQ(r.result.rule, "exec.no_stationary");
  EXPECT_TRUE(csrs.counted.empty());
  EXPECT_EQ(seq.stats().faults, 1u);
}

TEST(Seams, ConfigurationIsReadThroughTheViewAfterEachChangeNotice) {
  PlainCsrs csrs;
  RecordingArray array;
  arrseq::ArrSeq seq("seams_arr_seq", csrs, array);
  EXPECT_EQ(seq.ififo_capacity(), seq.config().ififo_depth);
  csrs.write_queue_cfg({true, true, false});  // fifo_size_sel, bypass_peregwrite_instr
  EXPECT_EQ(seq.ififo_capacity(), 1u);
  Encoder e(G::CAYMAN, Opcode::PE_REG_WRITE);
  full_tile(e, G::CAYMAN);
  e.set("src_mem_pattern.num_elem[0]", 1);
  seq.issue(lowered(G::CAYMAN, e.bytes()), 0);
  ASSERT_EQ(array.bypass.size(), 1u);
  EXPECT_TRUE(array.bypass[0]) << "queue_cfg.bypass_peregwrite_instr reaches the array";
  // The PeRegWrite is counted in its own bank.
  ASSERT_EQ(csrs.counted.size(), 1u);
  EXPECT_EQ(csrs.counted[0].first, regfile::CounterBank::PeRegWrite);
}

TEST(Seams, RowGroupActivityIsPublishedThroughTheView) {
  PlainCsrs csrs;
  csrs.cluster.stagger_idle_limit = {0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF};
  RecordingArray array;
  arrseq::ArrSeq seq("seams_arr_seq", csrs, array);
  const auto r = seq.issue(lowered(G::MARIANA, lw_base(G::MARIANA)), 0);
  seq.publish_counters(r.complete);
  ASSERT_EQ(csrs.published.size(), 4u);
  for (unsigned g = 0; g < 4; ++g) {
    EXPECT_EQ(csrs.published[g].first, g);
    EXPECT_EQ(csrs.published[g].second.weight_load, r.complete - r.start) << "every row group loaded weights";
    EXPECT_EQ(csrs.published[g].second.matmul, 0u);
  }
  // The counter reset pulse clears them.
  csrs.published.clear();
  csrs.reset();
  ASSERT_EQ(csrs.published.size(), 4u);
  EXPECT_EQ(csrs.published[0].second.weight_load, 0u);
}

// The asynchronous seam (D-ARRAY-SEAM): an implementation that decides its own times. It accepts `accept_delay`
// cycles after the offer, holds its port or stream `hold` cycles, completes `latency` cycles after it accepted, and
// produces a matmul's first result `first` cycles after it accepted. It records the cycles it was offered at.
struct DecidingArray : pe::ArrayModel {
  std::uint64_t accept_delay = 0, hold = 10, latency = 30, first = 20;
  bool answer_early = false;  // answers with an accept before the offer: an invalid answer
  std::vector<std::uint64_t> offered;
  pe::ExecResult execute(const pe::MicroOp&, bool) override { return pe::ExecResult::success(); }
  pe::Accepted offer(const pe::MicroOp& op, bool bypass, std::uint64_t earliest) override {
    offered.push_back(earliest);
    pe::ArrayTiming t;
    t.accept = answer_early ? earliest - 1 : earliest + accept_delay;
    t.end = t.accept + hold;
    t.complete = t.accept + latency;
    t.first_result = op.kind == pe::MicroOpKind::Matmul ? t.accept + first : t.complete;
    return {execute(op, bypass), t};
  }
};

// Stagger wake-ups and the P2F back-pressure off: only the IFIFO, issue order and the dependency check remain.
void quiet(PlainCsrs& csrs) {
  csrs.cluster.stagger_idle_limit = {0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF};
  csrs.cluster.p2fifo_af = 0;
}

TEST(Seams, TheTimelineTakesTheImplementationsTimesAndStillAppliesTheDependencies) {
  PlainCsrs csrs;
  quiet(csrs);
  DecidingArray array;
  array.accept_delay = 7;
  arrseq::ArrSeq seq("seams_arr_seq", csrs, array);
  const pe::MicroOp lw = lowered(G::MARIANA, lw_base(G::MARIANA));
  const pe::MicroOp mm = lowered(G::MARIANA, mm_base(G::MARIANA));
  const auto a = seq.issue(lw, 100);
  ASSERT_TRUE(a.result.ok) << a.result.describe();
  // Offered when it was ready (an empty IFIFO, an idle tile), accepted 7 later, complete 30 after that.
  ASSERT_EQ(array.offered.size(), 1u);
  EXPECT_EQ(array.offered[0], 100u);
  EXPECT_EQ(a.start, 107u);
  EXPECT_EQ(a.complete, 137u);
  const auto b = seq.issue(mm, 100);
  ASSERT_TRUE(b.result.ok);
  // The matmul needs the weights: offered at the load's end (its port time, 107 + 10) plus ls_to_mm_cycles (4),
  // the dependency rule applied to the implementation's times; not at the cost model's load time.
  ASSERT_EQ(array.offered.size(), 2u);
  EXPECT_EQ(array.offered[1], 107u + 10u + seq.timeline().cost_model().params().ls_to_mm_cycles);
  EXPECT_EQ(b.start, array.offered[1] + 7);
  EXPECT_EQ(b.complete, b.start + 30);
  // Its response comes with its first result (matmul_done_last = 0), in order after the load's (137).
  EXPECT_EQ(b.response, std::max<std::uint64_t>(b.start + 20, 137));
  // A second matmul on the tile waits for the stream the first held (its end, start + 10), not its completion:
  // the stream pipelines.
  const auto c = seq.issue(mm, 100);
  EXPECT_EQ(array.offered[2], b.start + 10);
  EXPECT_EQ(c.start, b.start + 10 + 7);
  // The statistics count the implementation's occupancy.
  EXPECT_EQ(seq.timeline().stats().busy_cycles[static_cast<unsigned>(pe::MicroOpKind::Matmul)], 20u);
}

TEST(Seams, WithoutTheDependencyCheckAnImplementationsMicroOpWaitsForTheLastCompletion) {
  PlainCsrs csrs;
  quiet(csrs);
  csrs.queue.disable_dependency_check = true;
  DecidingArray array;
  arrseq::ArrSeq seq("seams_arr_seq", csrs, array);
  const pe::MicroOp lw = lowered(G::MARIANA, lw_base(G::MARIANA));
  const pe::MicroOp mm = lowered(G::MARIANA, mm_base(G::MARIANA));
  seq.issue(lw, 0);
  const auto b = seq.issue(mm, 0);
  const auto c = seq.issue(mm, 0);
  // Serialised: each is offered when the one before completed (accept + 30), not when its stream freed.
  EXPECT_EQ(array.offered[2], b.complete);
  EXPECT_EQ(c.start, b.complete);
}

TEST(Seams, AnIfifoOfOneEntryHoldsTheNextPushUntilTheImplementationAccepted) {
  PlainCsrs csrs;
  quiet(csrs);
  csrs.queue.fifo_size_sel = true;  // one IFIFO entry
  DecidingArray array;
  array.accept_delay = 50;
  arrseq::ArrSeq seq("seams_arr_seq", csrs, array);
  const pe::MicroOp lw = lowered(G::MARIANA, lw_base(G::MARIANA));
  const auto a = seq.issue(lw, 0);
  const auto b = seq.issue(lw, 0);
  // The second load enters the IFIFO only when the first left it -- when the implementation accepted it (50).
  EXPECT_EQ(a.start, 50u);
  EXPECT_EQ(b.push, 50u);
  // Then the load port: free at the first's end (50 + 10); accepted 50 after the offer.
  EXPECT_EQ(array.offered[1], 60u);
  EXPECT_EQ(b.start, 110u);
}

TEST(Seams, AnImplementationsInvalidTimesFailTheMicroOpAndScheduleNothing) {
  PlainCsrs csrs;
  quiet(csrs);
  DecidingArray array;
  array.answer_early = true;
  arrseq::ArrSeq seq("seams_arr_seq", csrs, array);
  const auto r = seq.issue(lowered(G::MARIANA, lw_base(G::MARIANA)), 10);
  EXPECT_FALSE(r.result.ok);
  EXPECT_EQ(r.result.rule, "seq.array_timing");
  EXPECT_NE(r.result.message.find("accepted before it was offered"), std::string::npos) << r.result.message;
  EXPECT_TRUE(csrs.counted.empty());
  EXPECT_EQ(seq.stats().faults, 1u);
  EXPECT_FALSE(seq.timeline().stats().any);
}

}  // namespace
}  // namespace pevp::isa::test
