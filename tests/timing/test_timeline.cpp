// The Timeline's rules, one at a time, against schedules derived by hand from
// the formulas in docs/timing.md with the default parameters:
//   weight load  max(M/4, M*bytes/8)                      = 32 for bf16 M = 128
//   Matmul II    max(N, 64); + 60 SBUF access + K fill + M drain + 8 commit (+4 RMW)
//   first commit start + 1 + 60 + K + M + 8
//   ls_to_mm 4, seq dispatch 16, throttle share 1/4, stagger 8 per row group.
#include <gtest/gtest.h>

#include "pevp/arr_seq/timeline.h"

namespace {

using namespace pevp;
using arrseq::Cycle;
using arrseq::OpShape;
using arrseq::Stall;
using arrseq::Timeline;
using arrseq::TimingCsrs;

constexpr isa::TileRect kFull{0, 128, 0, 128};
constexpr isa::TileRect kTop{0, 64, 0, 128};     // row groups 0, 1
constexpr isa::TileRect kBottom{64, 64, 0, 128};  // row groups 2, 3

OpShape weights(isa::TileRect t, unsigned bytes = 2) {
  OpShape s;
  s.kind = pe::MicroOpKind::WeightLoad;
  s.tile = t;
  s.k = t.rows;
  s.m = t.cols;
  s.elem_bytes = bytes;
  s.fp32 = bytes == 4;
  s.first_partition = t.row0;
  arrseq::place_on(s, isa::ArrayGeometry{});  // the 128 x 128 preset
  return s;
}

OpShape matmul(isa::TileRect t, std::uint64_t n, std::uint8_t banks, bool accumulate = false) {
  OpShape s = weights(t);
  s.kind = pe::MicroOpKind::Matmul;
  s.n = n;
  s.banks = banks;
  s.accumulate = accumulate;
  s.macs = std::uint64_t{s.k} * s.m * n;
  arrseq::place_on(s, isa::ArrayGeometry{});  // a Matmul also writes the PSUM port
  return s;
}

// The reset values of the cluster and protected CSRs (the schemas').
TimingCsrs reset_csrs() {
  TimingCsrs c;
  c.cluster.inter_instr_dly_cnt = 8;
  c.cluster.p2fifo_af = 12;
  c.cluster.stagger_idle_limit = {0xffff, 0xffff, 0xffff, 0xffff};
  return c;
}

Timeline timeline(unsigned depth = 16) { return Timeline(arrseq::CostModel{}, depth); }

Cycle stall(const arrseq::Slot& s, Stall why) { return s.stalls[static_cast<unsigned>(why)]; }

TEST(Timeline, WeightLoadThenMatmulFollowTheFormulas) {
  Timeline t = timeline();
  const TimingCsrs c = reset_csrs();
  const arrseq::Slot wl = t.schedule(weights(kFull), 0, c);
  EXPECT_EQ(wl.start, 0u);
  EXPECT_EQ(wl.end, 32u);  // 128 / 4
  EXPECT_EQ(wl.response, 32u);
  const arrseq::Slot mm = t.schedule(matmul(kFull, 128, 0x01), 16, c);
  EXPECT_EQ(mm.push, 16u);
  EXPECT_EQ(mm.start, 36u) << "the weights are ready at 32, plus ls_to_mm 4";
  EXPECT_EQ(stall(mm, Stall::Dependency), 20u);
  EXPECT_EQ(mm.end, 36u + 128);
  EXPECT_EQ(mm.complete, 36u + 128 + 60 + 128 + 128 + 8);
  EXPECT_EQ(mm.done, 36u + 1 + 60 + 128 + 128 + 8) << "matmul_done_last = 0: done with the first column";
  EXPECT_EQ(mm.response, mm.done);
}

TEST(Timeline, MatmulDoneLastRespondsWithTheLastColumn) {
  Timeline t = timeline();
  TimingCsrs c = reset_csrs();
  c.cluster.matmul_done_last = true;
  t.schedule(weights(kFull), 0, c);
  const arrseq::Slot mm = t.schedule(matmul(kFull, 256, 0x01, true), 0, c);
  EXPECT_EQ(mm.complete, 36u + 256 + 60 + 128 + 128 + 8 + 4) << "an accumulate adds the RMW";
  EXPECT_EQ(mm.done, mm.complete);
  EXPECT_EQ(mm.response, mm.complete);
}

TEST(Timeline, MatmulsOnOneTileStreamBackToBackAtTheirInterval) {
  for (const std::uint64_t n : {32u, 64u, 100u, 512u}) {
    Timeline t = timeline();
    const TimingCsrs c = reset_csrs();
    t.schedule(weights(kFull), 0, c);
    Cycle prev = 0;
    for (unsigned i = 0; i < 6; ++i) {
      const arrseq::Slot mm = t.schedule(matmul(kFull, n, static_cast<std::uint8_t>(1u << (i % 8))), 16 * (i + 1), c);
      if (i > 0) {
        EXPECT_EQ(mm.start - prev, std::max<std::uint64_t>(n, 64)) << "N = " << n;
      }
      EXPECT_EQ(stall(mm, Stall::Dependency), i == 0 ? mm.start - 16 : 0u) << "waiting for the stream is no stall";
      prev = mm.start;
    }
  }
}

TEST(Timeline, TheNextStationaryLoadsInTheBackground) {
  Timeline t = timeline();
  const TimingCsrs c = reset_csrs();
  t.schedule(weights(kFull), 0, c);                                // 0..32
  const arrseq::Slot mm0 = t.schedule(matmul(kFull, 512, 1), 16, c);  // 36..548
  const arrseq::Slot wl1 = t.schedule(weights(kFull), 32, c);
  EXPECT_EQ(wl1.start, 36u) << "issue order: after the Matmul that took the previous stationary started";
  EXPECT_EQ(wl1.end, 68u) << "loads while the Matmul streams";
  const arrseq::Slot mm1 = t.schedule(matmul(kFull, 512, 2), 48, c);
  EXPECT_EQ(mm1.start, mm0.end) << "the load is hidden: the stream continues at its interval";
  EXPECT_EQ(stall(mm1, Stall::Dependency), 0u);
}

TEST(Timeline, AShortMatmulWaitsForItsStationary) {
  // N = 32: the stream (64) ends before the next 32-cycle load plus ls_to_mm.
  Timeline t = timeline();
  TimingCsrs c = reset_csrs();
  c.cluster.p2fifo_af = 0;
  t.schedule(weights(kFull), 0, c);
  const arrseq::Slot mm0 = t.schedule(matmul(kFull, 32, 1), 0, c);  // 36..100
  const arrseq::Slot wl1 = t.schedule(weights(kFull), 0, c);         // 36..68
  const arrseq::Slot mm1 = t.schedule(matmul(kFull, 32, 2), 0, c);
  EXPECT_EQ(wl1.start, 36u);
  EXPECT_EQ(mm1.start, std::max<Cycle>(mm0.end, wl1.end + 4));
  EXPECT_EQ(mm1.start, 100u);
}

TEST(Timeline, APsumBankSharedWithAnotherTileWaitsForItsCommit) {
  Timeline t = timeline();
  const TimingCsrs c = reset_csrs();
  t.schedule(weights(kTop), 0, c);
  t.schedule(weights(kBottom), 0, c);
  const arrseq::Slot a = t.schedule(matmul(kTop, 128, 0x01), 0, c);
  const arrseq::Slot same_bank = t.schedule(matmul(kBottom, 128, 0x01, true), 0, c);
  EXPECT_EQ(same_bank.start, a.complete);
  EXPECT_EQ(stall(same_bank, Stall::Dependency), a.complete - a.start) << "from the in-order issue point";
  Timeline u = timeline();
  u.schedule(weights(kTop), 0, c);
  u.schedule(weights(kBottom), 0, c);
  const arrseq::Slot b = u.schedule(matmul(kTop, 128, 0x01), 0, c);
  const arrseq::Slot other_bank = u.schedule(matmul(kBottom, 128, 0x02), 0, c);
  EXPECT_EQ(other_bank.start, b.start) << "independent tiles and banks run concurrently";
}

TEST(Timeline, OverlappingTilesWaitForCompletion) {
  Timeline t = timeline();
  const TimingCsrs c = reset_csrs();
  t.schedule(weights(kTop), 0, c);
  const arrseq::Slot mm = t.schedule(matmul(kTop, 64, 0x01), 0, c);
  const arrseq::Slot wl = t.schedule(weights(kFull), 0, c);
  EXPECT_EQ(wl.start, mm.complete) << "a different tile over the same PEs";
}

TEST(Timeline, APeRegWriteWaitsForItsTile) {
  Timeline t = timeline();
  const TimingCsrs c = reset_csrs();
  t.schedule(weights(kFull), 0, c);
  const arrseq::Slot mm = t.schedule(matmul(kFull, 64, 0x01), 0, c);
  OpShape prw;
  prw.kind = pe::MicroOpKind::PeRegWrite;
  prw.tile = kFull;
  prw.k = 128;
  arrseq::place_on(prw, isa::ArrayGeometry{});
  const arrseq::Slot w = t.schedule(prw, 0, c);
  EXPECT_EQ(w.start, mm.complete);
  EXPECT_EQ(w.end - w.start, 4u);
}

TEST(Timeline, WithoutTheDependencyCheckEverythingIsSerialised) {
  Timeline t = timeline();
  TimingCsrs c = reset_csrs();
  c.queue.disable_dependency_check = true;
  const arrseq::Slot a = t.schedule(weights(kTop), 0, c);
  const arrseq::Slot b = t.schedule(weights(kBottom), 0, c);
  EXPECT_EQ(b.start, a.complete);
  EXPECT_EQ(stall(b, Stall::Serialised), 32u);
  EXPECT_EQ(stall(b, Stall::Dependency), 0u);
}

TEST(Timeline, TheIfifoHoldsItsDepth) {
  Timeline t = timeline(2);
  TimingCsrs c = reset_csrs();
  c.cluster.p2fifo_af = 0;
  t.schedule(weights(kFull), 0, c);                          // starts 0
  const arrseq::Slot m1 = t.schedule(matmul(kFull, 512, 1), 0, c);  // starts 36
  const arrseq::Slot m2 = t.schedule(matmul(kFull, 512, 2), 0, c);  // starts 548
  const arrseq::Slot m3 = t.schedule(matmul(kFull, 512, 4), 0, c);
  EXPECT_EQ(m1.push, 0u);
  EXPECT_EQ(m2.push, 0u) << "depth 2: the slot of the load (started at 0)";
  EXPECT_EQ(m3.push, m1.start) << "the slot frees when the micro-op two ahead leaves";
  EXPECT_EQ(stall(m3, Stall::IfifoFull), m1.start);
  c.queue.fifo_size_sel = true;
  const arrseq::Slot m4 = t.schedule(matmul(kFull, 512, 8), 0, c);
  EXPECT_EQ(m4.push, m3.start) << "single-entry: the previous micro-op must have left";
}

TEST(Timeline, TheInterInstructionDelaySpacesResponses) {
  Timeline t = timeline();
  TimingCsrs c = reset_csrs();
  c.cluster.en_inter_instr_dly = true;
  c.cluster.inter_instr_dly_cnt = 40;
  const arrseq::Slot a = t.schedule(weights(kTop), 0, c);
  const arrseq::Slot b = t.schedule(weights(kBottom), 0, c);
  EXPECT_EQ(a.response, 32u);
  EXPECT_EQ(b.end, 32u) << "the work is not delayed";
  EXPECT_EQ(b.response, 72u) << "its response is";
  EXPECT_EQ(stall(b, Stall::InterInstrDelay), 40u);
  c.cluster.flush_p2f_fifos = true;
  const arrseq::Slot d = t.schedule(weights(kTop), 0, c);
  EXPECT_EQ(d.response, std::max(d.done, b.response)) << "flush_p2f_fifos: no spacing, order kept";
}

TEST(Timeline, TheP2fFifoBackPressuresIssueAtItsThreshold) {
  Timeline t = timeline();
  TimingCsrs c = reset_csrs();
  c.cluster.en_inter_instr_dly = true;
  c.cluster.inter_instr_dly_cnt = 63;
  c.cluster.p2fifo_af = 1;
  const isa::TileRect tiles[3] = {{0, 32, 0, 128}, {32, 32, 0, 128}, {64, 32, 0, 128}};
  t.schedule(weights(tiles[0]), 0, c);                          // done 32, response 32
  const arrseq::Slot b = t.schedule(weights(tiles[1]), 0, c);   // done 32, response 95
  EXPECT_EQ(b.response, 95u);
  const arrseq::Slot d = t.schedule(weights(tiles[2]), 40, c);  // at 40 one response waits: full
  EXPECT_EQ(d.start, 95u);
  EXPECT_EQ(stall(d, Stall::P2fFull), 55u);
}

TEST(Timeline, RowGroupsIdlePastTheirLimitWakeWithAStagger) {
  Timeline t = timeline();
  TimingCsrs c = reset_csrs();
  c.cluster.stagger_idle_limit = {100, 100, 0xffff, 0xffff};
  const arrseq::Slot a = t.schedule(weights(kFull), 50, c);
  EXPECT_EQ(stall(a, Stall::StaggerWake), 0u) << "idle 50 <= 100";
  const arrseq::Slot b = t.schedule(weights(kFull), 500, c);
  EXPECT_EQ(stall(b, Stall::StaggerWake), 16u) << "groups 0 and 1 idle 418 > 100: 2 x 8";
  EXPECT_EQ(b.start, 516u);
  const arrseq::Slot d = t.schedule(weights(kBottom), 900, c);
  EXPECT_EQ(stall(d, Stall::StaggerWake), 0u) << "groups 2 and 3 have the reset limit";
}

TEST(Timeline, AThrottledXbusStretchesTheTransfer) {
  Timeline t = timeline();
  TimingCsrs c = reset_csrs();
  c.throttled = 0x1;  // XBUS 0: SBUF partitions 0..15
  const arrseq::Slot a = t.schedule(weights(kFull), 0, c);
  EXPECT_EQ(a.end, 128u) << "256 bytes at 8 x 1/4 bytes per cycle";
  EXPECT_EQ(stall(a, Stall::Throttle), 96u);
  const arrseq::Slot b = t.schedule(weights(isa::TileRect{32, 32, 0, 128}), 0, c);
  EXPECT_EQ(stall(b, Stall::Throttle), 0u) << "partitions 32..63 use XBUS 2 and 3";
  c.throttled = 1u << isa::ArrayGeometry{}.psum_xbus();  // XBUS 8 on the preset
  t.schedule(weights(kFull), 0, c);
  const arrseq::Slot mm = t.schedule(matmul(kFull, 128, 1), 0, c);
  EXPECT_EQ(mm.end - mm.start, 512u) << "the PSUM port writes 128 columns at a quarter rate";
}

TEST(Timeline, TheSmallestThrottleFractionStretchesExactlyAndEnds) {
  // At the smallest share the configuration allows (2^-10) a throttled transfer
  // is 1024 times as long -- a finite, exact count, not a wrapped or undefined one.
  arrseq::TimingParams p;
  p.throttle_fraction = params::kMinFraction;
  Timeline t(arrseq::CostModel{p}, 16);
  TimingCsrs c = reset_csrs();
  c.throttled = 0x1;
  const arrseq::Slot a = t.schedule(weights(kFull), 0, c);
  EXPECT_EQ(a.end, 256u * 1024 / 8) << "256 bytes at 8 x 2^-10 bytes per cycle";
  c.throttled = 1u << isa::ArrayGeometry{}.psum_xbus();
  t.schedule(weights(kFull), a.end, c);
  const arrseq::Slot mm = t.schedule(matmul(kFull, 512, 1), a.end, c);
  EXPECT_EQ(mm.end - mm.start, 512u * 1024) << "512 columns written at 2^-10 of the PSUM port's rate";
}

TEST(Timeline, CostFactorsForFp32DoubleRowAndStrides) {
  const arrseq::CostModel m;
  OpShape fp32 = matmul(kFull, 100, 1);
  fp32.fp32 = true;
  fp32.elem_bytes = 4;
  EXPECT_EQ(m.matmul_ii(fp32), 400u);
  EXPECT_EQ(m.weight_load_cycles(weights(kFull, 4)), 128u);
  // An MX source with perf mode NONE feeds its 4 packed rows one per cycle: 4 cycles per moving column.
  OpShape mx = matmul(kFull, 512, 1);
  mx.pack = 4;
  mx.mx_words = 1;
  mx.passes = 4;
  mx.elem_bytes = 4;
  EXPECT_EQ(m.matmul_ii(mx), 2048u);
  mx.passes = 1;  // QUAD_ROW: all 4 at once
  EXPECT_EQ(m.matmul_ii(mx), 512u);
  mx.n = 10;
  EXPECT_EQ(m.matmul_ii(mx), 64u) << "never below MM_INIT_LATENCY";
  OpShape strided = weights(kFull);
  strided.strided = true;
  EXPECT_EQ(m.cost(strided).occupancy, 64u) << "half the SBUF bandwidth: 256 bytes at 4 per cycle";
}

TEST(Timeline, BusySpanSkipsTheGapsBetweenSubmissions) {
  Timeline t = timeline();
  const TimingCsrs c = reset_csrs();
  const arrseq::Slot a = t.schedule(weights(kFull), 10, c);
  EXPECT_EQ(t.stats().busy_span, 32u);
  const arrseq::Slot b = t.schedule(weights(kFull), 1000, c);  // the engine had drained
  EXPECT_EQ(b.start, 1000u);
  EXPECT_EQ(t.stats().busy_span, 64u);
  EXPECT_EQ(t.stats().first_start, a.start);
  EXPECT_EQ(t.stats().last_complete, 1032u);
}

TEST(Timeline, ZeroTimeKeepsOrderAndCountsButTakesNoTime) {
  Timeline t(arrseq::CostModel{}, 16, true);
  const TimingCsrs c = reset_csrs();
  const arrseq::Slot a = t.schedule(weights(kFull), 7, c);
  EXPECT_EQ(a.complete, 7u);
  EXPECT_EQ(a.response, 7u);
  t.schedule(matmul(kFull, 512, 1), 7, c);
  EXPECT_EQ(t.stats().micro_ops[1], 1u);
  EXPECT_EQ(t.stats().macs, 128u * 128 * 512);
  EXPECT_EQ(t.stats().busy_span, 0u);
}

TEST(ActivityCounter, CountsOverlapsOnceAndOnlyWhatHasHappened) {
  arrseq::ActivityCounter a;
  a.add(10, 50);
  a.add(40, 70);   // overlaps: counts 60 in all
  a.add(100, 120);
  a.settle(45);
  EXPECT_EQ(a.counted(), 35u);
  a.settle(110);
  EXPECT_EQ(a.counted(), 70u);
  a.settle(1000);
  EXPECT_EQ(a.counted(), 80u);
  a.add(500, 600);  // before the settled time: already over, nothing new counts
  a.settle(2000);
  EXPECT_EQ(a.counted(), 80u);
  a.reset(2000);
  a.add(2100, 2150);
  a.settle(3000);
  EXPECT_EQ(a.counted(), 50u);
}

TEST(Timeline, RowGroupCountersSettleAndReset) {
  Timeline t = timeline();
  const TimingCsrs c = reset_csrs();
  t.schedule(weights(kTop), 0, c);               // groups 0, 1: 0..32 weight load
  t.schedule(matmul(kTop, 256, 1), 0, c);        // 36..292 stream
  t.settle_counters(100);
  EXPECT_EQ(t.row_group(0).weight_load.counted(), 32u);
  EXPECT_EQ(t.row_group(0).matmul.counted(), 64u);
  EXPECT_EQ(t.row_group(0).idle(100), 4u);
  EXPECT_EQ(t.row_group(2).idle(100), 100u);
  t.settle_counters(1000);
  EXPECT_EQ(t.row_group(1).matmul.counted(), 256u);
  EXPECT_EQ(t.row_group(1).idle(1000), 1000u - 256 - 32);
  t.reset_counters(1000);
  t.settle_counters(1500);
  EXPECT_EQ(t.row_group(1).matmul.counted(), 0u);
  EXPECT_EQ(t.row_group(1).idle(1500), 500u);
  TimingCsrs off = c;
  off.counters_enabled = false;
  t.schedule(weights(kTop), 1500, off);
  t.settle_counters(2000);
  EXPECT_EQ(t.row_group(0).weight_load.counted(), 0u) << "cntr_en = 0 counts nothing";
}

}  // namespace

namespace {
// The transposes of the cost model (docs/timing.md 4.2, 4.3): a transposing Matmul is max(K, min(64, N)), fp32 at
// 2x instead of 4x; a transposed weight load adds that pass unless it runs in the background (bg_xpose_mode), which
// costs what a plain load costs; fp8 double_row streams N columns of 256 rows and loads 2M elements.
TEST(CostModel, TransposesAndDoubleRow) {
  const arrseq::CostModel cost;
  OpShape x = matmul(kFull, 32, 1);
  x.transpose = true;
  EXPECT_EQ(cost.matmul_ii(x), 128u) << "max(K = 128, min(64, 32))";
  x.k = 16;
  x.n = 128;
  EXPECT_EQ(cost.matmul_ii(x), 64u) << "max(16, min(64, 128))";
  x.fp32 = true;
  EXPECT_EQ(cost.matmul_ii(x), 128u) << "fp32: x 2";
  OpShape lw = weights(kFull);
  const std::uint64_t plain = cost.weight_load_cycles(lw);
  EXPECT_EQ(plain, 32u);
  lw.transpose = true;
  EXPECT_EQ(cost.weight_load_cycles(lw), 32u + 128u) << "a foreground transpose pass of max(M, min(64, K))";
  lw.background_transpose = true;
  EXPECT_EQ(cost.weight_load_cycles(lw), plain) << "bg_xpose_mode hides it";
  OpShape dr = matmul(kFull, 512, 1);
  dr.pack = 2;
  EXPECT_EQ(cost.matmul_ii(dr), 512u) << "K = 256 in the time of 128";
  OpShape drl = weights(kFull, 1);
  drl.pack = 2;
  EXPECT_EQ(cost.weight_load_cycles(drl), 64u) << "2M elements / 4";
}
}  // namespace
