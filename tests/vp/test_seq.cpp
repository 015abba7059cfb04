// What a driver sees of the SEQ and the arr_seq sequencer: EVENTS semaphores (blocking waits, updates on
// completion, misuse), the per-tile perf counters (cntr_en, cntr_rst, the three banks), queue_cfg (single-entry
// IFIFO and serialised issue give bit-identical results; PeRegWrite SBUF fetch vs immediate), the instruction-queue
// window (bursts, malformed accesses, iq_status, back-pressure), the interrupt line and the firmware self-names.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include <optional>

#include "vp_test_util.h"

namespace {

using namespace vpt;

platform::PlatformConfig config(Generation g) {
  platform::PlatformConfig c;
  c.gen = g;
  return c;
}
std::string gen_name(Generation g) { return std::string(isa::name(g)); }
const sc_core::sc_time kSettle(5, sc_core::SC_US);
const sc_core::sc_time kTimeout(2, sc_core::SC_MS);  // simulated; every program here needs a few microseconds

// A PeRegWrite (D-LAYOUT-PEREGWRITE): reg_addr, imm_value, a 1-element SBUF source, the tile as row/col groups.
isa::RawInstruction pe_reg_write(Generation g, std::uint32_t reg, std::uint32_t imm, std::uint32_t src,
                                 isa::Placement t) {
  isa::Encoder e(g, isa::Opcode::PE_REG_WRITE);
  e.set("reg_addr", reg)
      .set("imm_value", imm)
      .set("src_mem_pattern.start_addr", src)
      .set("src_mem_pattern.step_elem[0]", 1)
      .set("src_mem_pattern.num_elem[0]", 1);
  if (isa::is_maverick(g)) {
    e.set("tile_size.row", t.rows == 64 ? isa::tile_size::R64 : isa::tile_size::R128)
        .set("tile_size.col", t.cols == 128 ? isa::tile_size::C128 : isa::tile_size::C256)
        .set("tile_sel.row_sel", t.row0 / t.rows)
        .set("tile_sel.col_sel", t.col0 / t.cols);
  } else {
    e.set("row_grp", isa::group_mask(t.row0 / 32, t.rows / 32))
        .set("col_grp", isa::group_mask(t.col0 / 32, t.cols / 32));
  }
  return e.bytes();
}

// A small frame on one tile: K = M = 64, N = 32, bf16; stationary at SBUF 0, moving at 0x400.
struct Small {
  Generation g;
  DtypeCase c{Dtype::BFLOAT16, Fp32Mode::None};
  unsigned K = 64, M = 64, N = 32;
  isa::Placement t;
  explicit Small(Generation gen) : g(gen), t(isa::is_maverick(gen) ? isa::Placement{0, 64, 0, 128}
                                                                    : isa::Placement{0, 64, 0, 64}) {}
  void load(Bench& b, std::mt19937& rng) const {
    b.put_rows(0, 0, random_elems(g, c, K * M, rng), K);
    b.put_rows(0, 0x400, random_elems(g, c, K * N, rng), K);
  }
  isa::LdweightsArgs lw() const { return ldw(c, 0, K, M, t); }
  isa::MatmulArgs mm(unsigned bank) const { return mmul(c, 0x400, psum_addr(0, bank * kBank), K, M, N, pf::SINGLE, t); }
  // A one-shot accumulate onto the bank (BEGIN_ACCUM|END; accumulate_flag on v5): running twice would show.
  isa::MatmulArgs acc(unsigned bank) const {
    auto x = mm(bank);
    x.psum_flags = pf::BEGIN_ACCUM_MATMUL_GROUP | pf::END_MATMUL_GROUP;
    x.accumulate = true;
    return x;
  }
};

std::vector<isa::RawInstruction> raws(const std::vector<Step>& s) {
  std::vector<isa::RawInstruction> v;
  for (const auto& x : s) v.push_back(x.raw);
  return v;
}

// ==== EVENTS semaphores ===========================================================================================

// WAIT_GE: the instruction waits at the head of the queue until the driver writes the semaphore; nothing of it or
// of the instructions behind it executes before (PSUM, retired count, iq_status), and it runs after. Its INCREMENT
// update is applied on completion; a wait does not consume the semaphore.
TEST(Semaphores, WaitGeBlocksUntilTheDriverSetsIt) {
  const Generation g = Generation::MARIANA;
  platform::VirtualPlatform vp(config(g));
  const Small f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(1);
    bench.garbage_psum(rng);
    f.load(bench, rng);
    auto m0 = f.mm(0);
    m0.events = {isa::WaitMode::WAIT_GE, 3, 2, isa::UpdateMode::INCREMENT, 4, 5};
    const std::vector<Step> steps = {lw_step(g, f.lw()), mm_step(g, m0), mm_step(g, f.mm(1))};
    d.set_semaphore(4, 10);
    d.submit(raws(steps));
    sc_core::wait(kSettle);
    EXPECT_EQ(d.read_counter48("vp", "retired_cnt_lsb"), 1u);
    EXPECT_EQ(d.read_field("vp", "seq_status", "busy"), 1u);
    EXPECT_EQ(d.read_field("vp", "seq_status", "done"), 0u);
    EXPECT_EQ(d.read_field("vp", "seq_status", "error"), 0u);
    EXPECT_EQ(d.read_field("vp", "iq_status", "level"), 2u) << "the waiting instruction stays in the queue";
    EXPECT_FALSE(vp.platform().seq.irq.read());
    steps[0].apply(bench.ref);
    bench.expect_psum_matches("while waiting");
    EXPECT_EQ(d.semaphore(4), 10u);
    // Below the wait value: still waiting.
    d.set_semaphore(3, 1);
    sc_core::wait(kSettle);
    EXPECT_EQ(d.read_counter48("vp", "retired_cnt_lsb"), 1u);
    bench.expect_psum_matches("semaphore below the wait value");
    // At the wait value: runs.
    d.set_semaphore(3, 2);
    const platform::Completion c = d.wait_idle(kTimeout);
    EXPECT_TRUE(c.done);
    EXPECT_FALSE(c.error);
    EXPECT_EQ(c.retired, 3u);
    EXPECT_EQ(d.semaphore(4), 15u);
    EXPECT_EQ(d.semaphore(3), 2u);
    steps[1].apply(bench.ref);
    steps[2].apply(bench.ref);
    bench.expect_psum_matches("after the wait");
  });
}

// WAIT_EQ: neither a smaller nor a larger value releases the wait, only the equal one.
TEST(Semaphores, WaitEqReleasesOnlyOnTheExactValue) {
  const Generation g = Generation::CAYMAN;
  platform::VirtualPlatform vp(config(g));
  const Small f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(2);
    bench.garbage_psum(rng);
    f.load(bench, rng);
    auto m0 = f.mm(0);
    m0.events.wait_mode = isa::WaitMode::WAIT_EQ;
    m0.events.wait_sem = 7;
    m0.events.wait_value = 3;
    const std::vector<Step> steps = {lw_step(g, f.lw()), mm_step(g, m0)};
    d.submit(raws(steps));
    for (std::uint32_t v : {2u, 4u, 100u}) {
      d.set_semaphore(7, v);
      sc_core::wait(kSettle);
      EXPECT_EQ(d.read_counter48("vp", "retired_cnt_lsb"), 1u) << "semaphore " << v;
    }
    steps[0].apply(bench.ref);
    bench.expect_psum_matches("while waiting");
    d.set_semaphore(7, 3);
    const platform::Completion c = d.wait_idle(kTimeout);
    EXPECT_TRUE(c.done);
    EXPECT_EQ(c.retired, 2u);
    steps[1].apply(bench.ref);
    bench.expect_psum_matches("after the wait");
  });
}

// SET / INCREMENT / DECREMENT on completion, and a program that synchronises with itself: later instructions wait
// on semaphores earlier ones update, with no help from the driver.
TEST(Semaphores, UpdatesOnCompletionAndSelfSynchronisation) {
  const Generation g = Generation::MAVERICK;
  platform::VirtualPlatform vp(config(g));
  const Small f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(4);
    bench.garbage_psum(rng);
    f.load(bench, rng);
    d.set_semaphore(2, 100);
    d.set_semaphore(3, 10);
    d.set_semaphore(6, 3);
    d.set_semaphore(8, 0);
    auto l = f.lw();
    l.events = {isa::WaitMode::NONE, 0, 0, isa::UpdateMode::INCREMENT, 8, 1};
    auto m1 = f.mm(1), m2 = f.mm(2), m3 = f.mm(3), m4 = f.mm(4), m5 = f.mm(5);
    m1.events = {isa::WaitMode::NONE, 0, 0, isa::UpdateMode::SET, 2, 9};
    m2.events = {isa::WaitMode::WAIT_EQ, 2, 9, isa::UpdateMode::INCREMENT, 3, 4};
    m3.events = {isa::WaitMode::WAIT_GE, 3, 14, isa::UpdateMode::DECREMENT, 6, 3};
    m4.events = {isa::WaitMode::WAIT_EQ, 6, 0, isa::UpdateMode::NONE, 0, 0};
    m5.events = {isa::WaitMode::WAIT_GE, 8, 1, isa::UpdateMode::SET, 31, 0xFFFF};
    const std::vector<Step> steps = {lw_step(g, l), mm_step(g, m1), mm_step(g, m2), mm_step(g, m3), mm_step(g, m4),
                                     mm_step(g, m5)};
    const platform::Completion c = bench.run(steps);
    EXPECT_TRUE(c.done);
    EXPECT_FALSE(c.error);
    EXPECT_FALSE(c.timed_out);
    EXPECT_EQ(c.retired, 6u);
    EXPECT_EQ(d.semaphore(2), 9u);
    EXPECT_EQ(d.semaphore(3), 14u);
    EXPECT_EQ(d.semaphore(6), 0u);
    EXPECT_EQ(d.semaphore(8), 1u);
    EXPECT_EQ(d.semaphore(31), 0xFFFFu);
    EXPECT_EQ(vp.platform().seq.semaphore(31), 0xFFFFu);
    bench.expect_psum_matches("self-synchronised program");
  });
}

// Semaphore misuse: DECREMENT below 0 and INCREMENT past 2^32 - 1 fault at completion with seq.semaphore_underflow /
// seq.semaphore_overflow, naming events.update_value (byte 10) and its value; the semaphore keeps its value; the
// instruction's own matmul has executed, nothing after it has; after clear_error the queue resumes.
struct SemMisuse {
  const char* name;
  isa::UpdateMode mode;
  std::uint32_t start;
  std::uint16_t by;
  const char* rule;
};
void PrintTo(const SemMisuse& p, std::ostream* os) { *os << p.name; }
class SemaphoreMisuse : public ::testing::TestWithParam<SemMisuse> {};

TEST_P(SemaphoreMisuse, FaultsAtCompletionAndStopsTheQueue) {
  const SemMisuse p = GetParam();
  const Generation g = Generation::MARIANA;
  platform::VirtualPlatform vp(config(g));
  const Small f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(6);
    bench.garbage_psum(rng);
    f.load(bench, rng);
    d.set_semaphore(5, p.start);
    auto m0 = f.mm(0);
    m0.events.update_mode = p.mode;
    m0.events.update_sem = 5;
    m0.events.update_value = p.by;
    const std::vector<Step> before = {lw_step(g, f.lw()), mm_step(g, m0)};
    const std::vector<Step> after = {mm_step(g, f.acc(1)), mm_step(g, f.acc(2))};
    std::vector<Step> all = before;
    all.insert(all.end(), after.begin(), after.end());
    d.submit(raws(all));
    const platform::Completion c = d.wait_idle(kTimeout);
    sc_core::wait(kSettle);
    EXPECT_TRUE(c.error);
    const auto e = d.error_record();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->index, 1u) << e->describe();
    EXPECT_EQ(e->opcode, 0x02) << e->describe();
    EXPECT_EQ(e->rule, p.rule) << e->describe();
    EXPECT_EQ(e->field_offset, 10) << e->describe();
    EXPECT_EQ(e->value, p.by) << e->describe();
    EXPECT_EQ(d.semaphore(5), p.start);
    EXPECT_TRUE(vp.platform().seq.irq.read());
    EXPECT_EQ(d.read_counter48("vp", "retired_cnt_lsb"), 1u) << "only the Ldweights retired";
    EXPECT_EQ(d.read_field("vp", "iq_status", "level"), 2u) << "the two later matmuls wait in the queue";
    for (const auto& s : before) s.apply(bench.ref);
    bench.expect_psum_matches("after the semaphore fault");  // the faulting matmul ran; the later ones did not
    d.clear_error();
    const platform::Completion c2 = d.wait_idle(kTimeout);
    EXPECT_TRUE(c2.done);
    EXPECT_FALSE(c2.error);
    EXPECT_EQ(c2.retired, 3u);
    EXPECT_EQ(d.semaphore(5), p.start);
    for (const auto& s : after) s.apply(bench.ref);
    bench.expect_psum_matches("after clear_error");
  });
}

INSTANTIATE_TEST_SUITE_P(Misuse, SemaphoreMisuse,
                         ::testing::Values(SemMisuse{"DecrementBelowZero", isa::UpdateMode::DECREMENT, 2, 3,
                                                     "seq.semaphore_underflow"},
                                           SemMisuse{"IncrementPastMax", isa::UpdateMode::INCREMENT, 0xFFFFFFF0u,
                                                     0x11, "seq.semaphore_overflow"}),
                         [](const ::testing::TestParamInfo<SemMisuse>& i) { return std::string(i.param.name); });

// A semaphore fault while an independent tile's matmul is already in the array: that one finishes, the rest
// after the fault is taken back; after clear_error every instruction has executed exactly once (all of them
// accumulate, so a repeat or a loss shows in PSUM) and the retired count covers all but the faulting one.
TEST(Semaphores, FaultWithIndependentTilesExecutesEverythingOnce) {
  const Generation g = Generation::MARIANA;
  platform::VirtualPlatform vp(config(g));
  const DtypeCase c{Dtype::FP16, Fp32Mode::None};
  const isa::Placement ta{0, 64, 0, 64}, tb{64, 64, 64, 64};
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(16);
    bench.garbage_psum(rng);
    bench.put_rows(0, 0, random_elems(g, c, 64 * 64, rng), 64);
    bench.put_rows(64, 0, random_elems(g, c, 64 * 64, rng), 64);
    bench.put_rows(0, 0x400, random_elems(g, c, 64 * 32, rng), 64);
    bench.put_rows(64, 0x400, random_elems(g, c, 64 * 32, rng), 64);
    auto acc = [&](const isa::Placement& t, unsigned bank) {
      auto a = mmul(c, bench.sbuf_addr(t.row0, 0x400), psum_addr(t.col0, bank * kBank), 64, 64, 32,
                    pf::BEGIN_ACCUM_MATMUL_GROUP | pf::END_MATMUL_GROUP, t);
      a.accumulate = true;
      return a;
    };
    auto bad = acc(ta, 0);
    bad.events = {isa::WaitMode::NONE, 0, 0, isa::UpdateMode::DECREMENT, 9, 1};  // semaphore 9 is 0
    const std::vector<Step> s = {lw_step(g, ldw(c, bench.sbuf_addr(0, 0), 64, 64, ta)),
                                 lw_step(g, ldw(c, bench.sbuf_addr(64, 0), 64, 64, tb)),
                                 mm_step(g, bad),
                                 mm_step(g, acc(tb, 1)),
                                 mm_step(g, acc(ta, 2)),
                                 mm_step(g, acc(tb, 3)),
                                 mm_step(g, acc(ta, 4))};
    d.submit(raws(s));
    const platform::Completion c1 = d.wait_idle(kTimeout);
    sc_core::wait(kSettle);
    EXPECT_TRUE(c1.error);
    const auto e = d.error_record();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->index, 2u) << e->describe();
    EXPECT_EQ(e->rule, "seq.semaphore_underflow") << e->describe();
    const std::uint64_t retired_at_fault = d.read_counter48("vp", "retired_cnt_lsb");
    EXPECT_GE(retired_at_fault, 2u);
    EXPECT_LE(retired_at_fault, 3u) << "at most the independent matmul already in the array finishes";
    EXPECT_EQ(d.read_field("vp", "iq_status", "level"), s.size() - 1 - retired_at_fault)
        << "everything after the fault that had not issued waits in the queue";
    d.clear_error();
    const platform::Completion c2 = d.wait_idle(kTimeout);
    EXPECT_TRUE(c2.done);
    EXPECT_FALSE(c2.error);
    EXPECT_EQ(c2.retired, s.size() - 1);
    EXPECT_EQ(d.semaphore(9), 0u);
    for (const auto& x : s) x.apply(bench.ref);
    bench.expect_psum_matches("every instruction exactly once");
  });
}

// The edges of the semaphore range are fine: INCREMENT to exactly 2^32 - 1 and DECREMENT to exactly 0.
TEST(Semaphores, RangeEdgesAreNotErrors) {
  const Generation g = Generation::MARIANA_PLUS;
  platform::VirtualPlatform vp(config(g));
  const Small f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(8);
    f.load(bench, rng);
    d.set_semaphore(0, 0xFFFFFFF0u);
    d.set_semaphore(1, 0xFFFF);
    auto l = f.lw();
    l.events = {isa::WaitMode::NONE, 0, 0, isa::UpdateMode::INCREMENT, 0, 0xF};
    auto m = f.mm(0);
    m.events = {isa::WaitMode::NONE, 0, 0, isa::UpdateMode::DECREMENT, 1, 0xFFFF};
    const platform::Completion c = bench.run({lw_step(g, l), mm_step(g, m)});
    EXPECT_TRUE(c.done);
    EXPECT_FALSE(c.error);
    EXPECT_EQ(d.semaphore(0), 0xFFFFFFFFu);
    EXPECT_EQ(d.semaphore(1), 0u);
  });
}

// ==== per-tile counters ============================================================================================

struct CountedOp {
  enum Kind { LW, MM, REG } kind;
  isa::Placement tile;
  unsigned K, M;
  int times;
};

// Every counter of the three banks (49 each), read over the bus.
std::map<std::string, std::uint64_t> read_all_counters(platform::Driver& d) {
  std::map<std::string, std::uint64_t> out;
  const auto& desc = pevp::regs::tpb_arr_seq_top_host_visible::regfile_desc();
  for (unsigned b = 0; b < 3; ++b)
    for (std::size_t i = 0; i < desc.num_registers; ++i) {
      const auto& r = desc.registers[i];
      const std::string name(r.name);
      const std::string suffix = "_instr_cnt_lsb";
      if (r.bundle != kBankBundles[b] || name.size() < suffix.size() ||
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      const std::string tile = name.substr(0, name.size() - suffix.size());
      out[std::string(kBankBundles[b]) + "." + tile] = read_tile_counter(d, b, tile);
    }
  return out;
}

class Counters : public ::testing::TestWithParam<Generation> {};

// With cntr_en set, each micro-op counts once in its bank (weight_load / matmul / pe_regwrite) under the counter of
// its tile (isa::counter_tile_name: shape and top-left cell of the 4 x 4 grid); every other counter stays 0. On
// MAVERICK the cells are 32 x 64 PEs, so a tile in columns 128..255 counts as well (tile_64x64_tile2 here).
TEST_P(Counters, EachMicroOpCountsOnItsTile) {
  const Generation g = GetParam();
  platform::VirtualPlatform vp(config(g));
  const bool v5 = isa::is_maverick(g);
  const std::vector<CountedOp> v5_ops = {{CountedOp::LW, {0, 128, 0, 128}, 128, 128, 1},   {CountedOp::MM, {0, 128, 0, 128}, 128, 128, 2},
           {CountedOp::LW, {64, 64, 0, 128}, 64, 128, 1},    {CountedOp::MM, {64, 64, 0, 128}, 64, 128, 3},
           {CountedOp::LW, {0, 64, 128, 128}, 64, 128, 1},   {CountedOp::MM, {0, 64, 128, 128}, 64, 128, 2},
           {CountedOp::REG, {64, 64, 0, 128}, 0, 0, 2},      {CountedOp::REG, {0, 128, 0, 128}, 0, 0, 1}};
  const std::vector<CountedOp> v34_ops = {{CountedOp::LW, {0, 128, 0, 128}, 128, 128, 1}, {CountedOp::MM, {0, 128, 0, 128}, 128, 128, 2},
           {CountedOp::LW, {64, 64, 32, 32}, 64, 32, 1},   {CountedOp::MM, {64, 64, 32, 32}, 64, 32, 3},
           {CountedOp::LW, {96, 32, 64, 64}, 32, 64, 1},   {CountedOp::MM, {96, 32, 64, 64}, 32, 64, 1},
           {CountedOp::REG, {32, 32, 96, 32}, 0, 0, 2},    {CountedOp::REG, {0, 128, 0, 128}, 0, 0, 1}};
  const std::vector<CountedOp>& ops = v5 ? v5_ops : v34_ops;
  std::map<std::string, std::uint64_t> expect;
  for (const auto& o : ops) {
    const std::string tile = isa::counter_tile_name(rect(o.tile), isa::preset_geometry(g));
    if (tile.empty()) continue;
    expect[std::string(kBankBundles[o.kind]) + "." + tile] += static_cast<std::uint64_t>(o.times);
  }
  std::map<std::string, std::uint64_t> got;
  platform::Completion c;
  std::size_t count = 0;
  vp.run([&](platform::Driver& d) {
    d.arm();  // pulses cntr_rst, sets cntr_en
    Bench bench(d, g);
    std::mt19937 rng(12);
    const DtypeCase dc{Dtype::FP8_EXP5, Fp32Mode::None};
    bench.put_rows(0, 0, random_elems(g, dc, 128 * 128, rng), 128);
    bench.put_rows(0, 0x200, random_elems(g, dc, 128 * 16, rng), 128);
    std::vector<Step> steps;
    unsigned bank = 0;
    for (const auto& o : ops)
      for (int i = 0; i < o.times; ++i) {
        if (o.kind == CountedOp::LW) steps.push_back(lw_step(g, ldw(dc, 0, o.K, o.M, o.tile)));
        if (o.kind == CountedOp::MM)
          steps.push_back(mm_step(g, mmul(dc, 0x200, psum_addr(0, (bank++ % 8) * kBank), o.K, o.M, 16, pf::SINGLE,
                                          o.tile)));
        if (o.kind == CountedOp::REG)
          steps.push_back(raw_step(pe_reg_write(g, 0x20 + static_cast<unsigned>(i), 7, 0x100, o.tile)));
      }
    count = steps.size();
    c = bench.run(steps);
    got = read_all_counters(d);
  });
  EXPECT_TRUE(c.done);
  EXPECT_FALSE(c.error);
  EXPECT_EQ(c.retired, count);
  ASSERT_EQ(got.size(), 3u * 49u);
  for (const auto& [name, value] : got) {
    const auto it = expect.find(name);
    EXPECT_EQ(value, it == expect.end() ? 0u : it->second) << name;
  }
  for (const auto& [name, value] : expect) EXPECT_TRUE(got.count(name)) << "no counter " << name;
  const auto& st = vp.platform().arr_seq.stats();
  EXPECT_EQ(st.issued[0] + st.issued[1] + st.issued[2], count);
}

INSTANTIATE_TEST_SUITE_P(Gen, Counters, ::testing::Values(Generation::CAYMAN, Generation::MARIANA,
                                                          Generation::MAVERICK),
                         [](const ::testing::TestParamInfo<Generation>& i) { return gen_name(i.param); });

// cntr_en clear: nothing counts. cntr_en set: each micro-op counts. cntr_rst (a write pulse, reads 0): every
// counter back to 0 while cntr_en stays set, and counting goes on.
TEST(CounterControl, EnableGatesAndResetClears) {
  const Generation g = Generation::MARIANA;
  platform::VirtualPlatform vp(config(g));
  const Small f(g);
  const std::string tile = isa::counter_tile_name(rect(f.t), isa::ArrayGeometry{});
  vp.run([&](platform::Driver& d) {
    EXPECT_EQ(d.read_field("top", "perf_cntr_cfg", "cntr_en"), 0u) << "reset value";
    platform::ArmOptions o;
    o.counters = false;
    d.arm(o);
    Bench bench(d, g);
    std::mt19937 rng(13);
    f.load(bench, rng);
    const std::vector<Step> prog = {lw_step(g, f.lw()), mm_step(g, f.mm(0)), mm_step(g, f.mm(1))};
    auto expect_counts = [&](std::uint64_t lw, std::uint64_t mm, const char* when) {
      EXPECT_EQ(read_tile_counter(d, 0, tile), lw) << when;
      EXPECT_EQ(read_tile_counter(d, 1, tile), mm) << when;
      std::uint64_t sum = 0;
      for (const auto& [n, v] : read_all_counters(d)) sum += v;
      EXPECT_EQ(sum, lw + mm) << when << ": no other counter moves";
    };
    EXPECT_TRUE(bench.run(prog).done);
    expect_counts(0, 0, "cntr_en = 0");
    d.clear_done();
    d.write_field("top", "perf_cntr_cfg", "cntr_en", 1);
    EXPECT_TRUE(bench.run(prog).done);
    expect_counts(1, 2, "cntr_en = 1");
    d.clear_done();
    EXPECT_TRUE(bench.run(prog).done);
    expect_counts(2, 4, "cntr_en = 1, second run");
    d.write_field("top", "perf_cntr_cfg", "cntr_rst", 1);
    EXPECT_EQ(d.read_field("top", "perf_cntr_cfg", "cntr_rst"), 0u) << "a pulse reads 0";
    EXPECT_EQ(d.read_field("top", "perf_cntr_cfg", "cntr_en"), 1u) << "cntr_rst leaves cntr_en alone";
    expect_counts(0, 0, "after cntr_rst");
    d.clear_done();
    EXPECT_TRUE(bench.run(prog).done);
    expect_counts(1, 2, "counting after cntr_rst");
  });
}

// The three banks share their register names (003 section 4, anomaly A2: only the bundle tells the op class), so
// the driver's 48-bit counter read must be told the bank: "<bundle>.<register>" as docs/registers.md qualifies
// them. Each bank reads its own count.
TEST(CounterControl, ReadCounter48NamesTheBank) {
  const Generation g = Generation::MARIANA;
  platform::VirtualPlatform vp(config(g));
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(14);
    const DtypeCase c{Dtype::BFLOAT16, Fp32Mode::None};
    bench.put_rows(0, 0, random_elems(g, c, 128 * 128, rng), 128);
    std::vector<Step> s = {lw_step(g, ldw(c, 0, 128, 128))};
    for (int i = 0; i < 2; ++i) s.push_back(mm_step(g, mmul(c, 0, psum_addr(0, 0), 128, 128, 8)));
    for (int i = 0; i < 3; ++i) s.push_back(raw_step(pe_reg_write(g, 1, 2, 0, {})));
    EXPECT_TRUE(bench.run(s).done);
    const std::uint64_t want[3] = {1, 2, 3};
    for (unsigned b = 0; b < 3; ++b) {
      EXPECT_EQ(read_tile_counter(d, b, "tile_128x128_tile0"), want[b]) << kBankBundles[b] << " by offset";
      std::uint64_t v = ~0ull;
      try {
        v = d.read_counter48("top", std::string(kBankBundles[b]) + ".tile_128x128_tile0_instr_cnt_lsb");
      } catch (const std::exception& e) {
        ADD_FAILURE() << "read_counter48 with the bank-qualified name: " << e.what();
      }
      EXPECT_EQ(v, want[b]) << kBankBundles[b];
    }
    // The bare name is ambiguous across the banks: an error, never one bank picked silently.
    EXPECT_THROW(d.read_counter48("top", "tile_128x128_tile0_instr_cnt_lsb"), std::invalid_argument);
  });
}

// ==== queue_cfg =====================================================================================================

// One program (four parallel 64x64 tiles with K-tiled groups, a dependent chain on one tile, a PeRegWrite) run under
// every issue policy: default, single-entry IFIFO (fifo_size_sel), serialised issue (disable_dependency_check) and
// both. PSUM is bit-identical across the modes and equal to the reference; the sequencer's statistics show the
// policy: dependency waits by default, full-IFIFO waits with a single entry, serialisation waits without the check.
TEST(QueueCfg, EveryIssuePolicyGivesBitIdenticalResults) {
  const Generation g = Generation::MARIANA;
  platform::VirtualPlatform vp(config(g));
  struct Mode {
    const char* name;
    bool single, serial;
  };
  const Mode modes[] = {{"default", false, false}, {"fifo_size_sel", true, false},
                        {"disable_dependency_check", false, true}, {"both", true, true}};
  std::vector<std::vector<std::uint8_t>> results;
  std::vector<arrseq::ArrSeqStats> deltas;
  vp.run([&](platform::Driver& d) {
    Bench bench(d, g);
    std::mt19937 data_rng(21);
    const DtypeCase c{Dtype::BFLOAT16, Fp32Mode::None};
    const isa::Placement tiles[4] = {{0, 64, 0, 64}, {0, 64, 64, 64}, {64, 64, 0, 64}, {64, 64, 64, 64}};
    for (unsigned t = 0; t < 4; ++t) {
      bench.put_rows(tiles[t].row0, 0, random_elems(g, c, 64 * 64, data_rng), 64);
      bench.put_rows(tiles[t].row0, 0x200, random_elems(g, c, 64 * 48, data_rng), 64);
      bench.put_rows(tiles[t].row0, 0x400, random_elems(g, c, 64 * 48, data_rng), 64);
    }
    std::vector<Step> prog;
    for (unsigned t = 0; t < 4; ++t)
      prog.push_back(lw_step(g, ldw(c, bench.sbuf_addr(tiles[t].row0, 0), 64, 64, tiles[t])));
    for (unsigned half = 0; half < 2; ++half)
      for (unsigned t = 0; t < 4; ++t)
        prog.push_back(mm_step(g, mmul(c, bench.sbuf_addr(tiles[t].row0, 0x200 + 0x200 * half),
                                       psum_addr(tiles[t].col0, t * kBank), 64, 64, 48,
                                       half ? pf::MULTI_END : pf::MULTI_START, tiles[t])));
    prog.push_back(raw_step(pe_reg_write(g, 3, 4, 0, tiles[0])));
    prog.push_back(mm_step(g, mmul(c, bench.sbuf_addr(0, 0x200), psum_addr(0, 6 * kBank), 64, 64, 48, pf::SINGLE,
                                   tiles[0])));
    ASSERT_LE(prog.size(), 16u) << "test bug: the default IFIFO must not fill";
    for (const Mode& m : modes) {
      SCOPED_TRACE(m.name);
      platform::ArmOptions o;
      o.single_entry = m.single;
      o.serialized = m.serial;
      d.arm(o);
      EXPECT_EQ(d.read_field("top", "queue_cfg", "fifo_size_sel"), m.single ? 1u : 0u);
      EXPECT_EQ(d.read_field("top", "queue_cfg", "disable_dependency_check"), m.serial ? 1u : 0u);
      EXPECT_EQ(vp.platform().arr_seq.ififo_capacity(), m.single ? 1u : 16u);
      std::mt19937 rng(99);  // the same PSUM garbage every time
      bench.garbage_psum(rng);
      const arrseq::ArrSeqStats before = vp.platform().arr_seq.stats();
      const platform::Completion c2 = bench.run(prog);
      EXPECT_TRUE(c2.done);
      EXPECT_FALSE(c2.error);
      const arrseq::ArrSeqStats after = vp.platform().arr_seq.stats();
      arrseq::ArrSeqStats delta;
      delta.dependency_waits = after.dependency_waits - before.dependency_waits;
      delta.serialised_waits = after.serialised_waits - before.serialised_waits;
      delta.ififo_full_waits = after.ififo_full_waits - before.ififo_full_waits;
      delta.faults = after.faults - before.faults;
      deltas.push_back(delta);
      bench.expect_psum_matches(m.name);
      results.push_back(bench.read_psum());
      d.clear_done();
    }
  });
  ASSERT_EQ(results.size(), 4u);
  for (std::size_t i = 1; i < results.size(); ++i) EXPECT_TRUE(results[i] == results[0]) << modes[i].name;
  for (const auto& dl : deltas) EXPECT_EQ(dl.faults, 0u);
  // default: dependent micro-ops wait for each other, the IFIFO never fills, nothing is serialised.
  EXPECT_GT(deltas[0].dependency_waits, 0u);
  EXPECT_EQ(deltas[0].ififo_full_waits, 0u);
  EXPECT_EQ(deltas[0].serialised_waits, 0u);
  // single-entry IFIFO: the SEQ finds it full.
  EXPECT_GT(deltas[1].ififo_full_waits, 0u) << "fifo_size_sel: pushes into a one-entry IFIFO must wait";
  // no dependency check: independent micro-ops are serialised.
  EXPECT_GT(deltas[2].serialised_waits, 0u);
}

// bypass_peregwrite_instr clear: PeRegWrite writes the 32-bit SBUF word at its source; set: it writes imm_value and
// reads no SBUF (a source outside its partition is then no error).
class PeRegWrite : public ::testing::TestWithParam<Generation> {};
TEST_P(PeRegWrite, SbufWordOrImmediate) {
  const Generation g = GetParam();
  platform::VirtualPlatform vp(config(g));
  const isa::Placement t = isa::is_maverick(g) ? isa::Placement{64, 64, 0, 128} : isa::Placement{32, 32, 96, 32};
  const std::string counter = isa::counter_tile_name(rect(t), isa::preset_geometry(g));
  platform::Completion c1, c2;
  vp.run([&](platform::Driver& d) {
    d.arm();
    EXPECT_EQ(d.read_field("top", "queue_cfg", "bypass_peregwrite_instr"), 0u);
    Bench bench(d, g);
    const std::uint32_t word = 0xDEADBEEFu;
    const std::uint32_t src = bench.sbuf_addr(3, 0x40);
    d.write(d.map().sbuf + src, &word, 4);
    d.submit({pe_reg_write(g, 0x10, 0x1234, src, t)});
    c1 = d.wait_idle(kTimeout);
    EXPECT_EQ(vp.platform().array.pe_register(t.row0, t.col0, 0x10), word);
    d.clear_done();
    platform::ArmOptions o;
    o.reg_immediate = true;
    o.counters = false;  // keep counting (no cntr_rst pulse)
    d.arm(o);
    EXPECT_EQ(d.read_field("top", "queue_cfg", "bypass_peregwrite_instr"), 1u);
    const std::uint32_t outside = bench.sbuf_addr(5, bench.part_bytes() - 2);
    d.submit({pe_reg_write(g, 0x14, 0x5678, src, t), pe_reg_write(g, 0x18, 0x9ABC, outside, t)});
    c2 = d.wait_idle(kTimeout);
    EXPECT_EQ(vp.platform().array.pe_register(t.row0, t.col0, 0x14), 0x5678u);
    EXPECT_EQ(vp.platform().array.pe_register(t.row0, t.col0, 0x18), 0x9ABCu);
    EXPECT_EQ(vp.platform().array.pe_register(t.row0, t.col0, 0x10), word) << "an earlier register keeps its value";
    EXPECT_EQ(read_tile_counter(d, 2, counter), 3u);
  });
  EXPECT_TRUE(c1.done);
  EXPECT_FALSE(c1.error);
  EXPECT_TRUE(c2.done);
  EXPECT_FALSE(c2.error);
  EXPECT_EQ(c2.retired, 3u);
}
INSTANTIATE_TEST_SUITE_P(Gen, PeRegWrite, ::testing::ValuesIn(isa::kAllGenerations),
                         [](const ::testing::TestParamInfo<Generation>& i) { return gen_name(i.param); });

// Without the bypass, a PeRegWrite source that leaves its SBUF partition is an execution error
// (seq.peregwrite_src naming src_mem_pattern.start_addr, byte 20); nothing after it runs until clear_error.
TEST(PeRegWriteErrors, SourceLeavingItsPartitionFaults) {
  const Generation g = Generation::MARIANA;
  platform::VirtualPlatform vp(config(g));
  const isa::Placement t{0, 32, 0, 32};
  const std::uint32_t word = 0x01020304u;
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    d.write(d.map().sbuf, &word, 4);
    const std::uint32_t outside = bench.sbuf_addr(5, bench.part_bytes() - 2);
    d.submit({pe_reg_write(g, 1, 11, 0, t), pe_reg_write(g, 2, 22, outside, t), pe_reg_write(g, 3, 33, 0, t)});
    const platform::Completion c = d.wait_idle(kTimeout);
    sc_core::wait(kSettle);
    EXPECT_TRUE(c.error);
    const auto e = d.error_record();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->index, 1u) << e->describe();
    EXPECT_EQ(e->opcode, 0x03);
    EXPECT_EQ(e->rule, "seq.peregwrite_src") << e->describe();
    EXPECT_EQ(e->field_offset, 20) << e->describe();
    EXPECT_EQ(e->value, outside) << e->describe();
    EXPECT_TRUE(vp.platform().seq.irq.read());
    EXPECT_EQ(d.read_counter48("vp", "retired_cnt_lsb"), 1u);
    EXPECT_EQ(vp.platform().array.pe_register(0, 0, 1), word);
    EXPECT_EQ(vp.platform().array.pe_register(0, 0, 2), 0u);
    EXPECT_EQ(vp.platform().array.pe_register(0, 0, 3), 0u) << "the instruction after the fault ran";
    d.clear_error();
    const platform::Completion c2 = d.wait_idle(kTimeout);
    EXPECT_TRUE(c2.done);
    EXPECT_EQ(c2.retired, 2u);
    EXPECT_EQ(vp.platform().array.pe_register(0, 0, 3), word);
  });
}

// ==== the instruction-queue window ================================================================================

// Several instructions in one bus write (at offset 0 and at an aligned offset inside the window) queue in order.
TEST(InstructionQueue, BurstWritesQueueEveryInstruction) {
  const Generation g = Generation::MARIANA;
  platform::VirtualPlatform vp(config(g));
  const Small f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(30);
    bench.garbage_psum(rng);
    f.load(bench, rng);
    std::vector<Step> first = {lw_step(g, f.lw()), mm_step(g, f.mm(0)), mm_step(g, f.mm(1)), mm_step(g, f.mm(2)),
                               mm_step(g, f.mm(3))};
    auto second_mm = f.mm(4);
    second_mm.psum_flags = pf::MULTI_START;
    auto end_mm = f.mm(4);
    end_mm.psum_flags = pf::MULTI_END;
    std::vector<Step> second = {mm_step(g, second_mm), mm_step(g, f.mm(5)), mm_step(g, end_mm)};
    auto burst = [&](std::uint64_t offset, const std::vector<Step>& s) {
      std::vector<std::uint8_t> buf;
      for (const auto& x : s) buf.insert(buf.end(), x.raw.begin(), x.raw.end());
      d.write(d.map().iq + offset, buf.data(), buf.size());
    };
    burst(0, first);
    burst(7 * 64, second);
    const platform::Completion c = d.wait_idle(kTimeout);
    EXPECT_TRUE(c.done);
    EXPECT_FALSE(c.error);
    EXPECT_EQ(c.retired, 8u);
    EXPECT_EQ(vp.platform().seq.submitted(), 8u);
    for (const auto& s : first) s.apply(bench.ref);
    for (const auto& s : second) s.apply(bench.ref);
    bench.expect_psum_matches("bursts");
  });
}

// Misaligned, non-multiple-of-64, empty and window-crossing writes and any read get an error response (BusError);
// none of them queues anything or disturbs the engine, which then runs a program normally.
TEST(InstructionQueue, MalformedAccessesAreBusErrors) {
  const Generation g = Generation::CAYMAN;
  platform::VirtualPlatform vp(config(g));
  const Small f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(31);
    f.load(bench, rng);
    std::vector<std::uint8_t> buf(256);
    const auto one = isa::encode_ldweights(g, f.lw());
    for (std::size_t i = 0; i < buf.size(); i += 64) std::copy(one.begin(), one.end(), buf.begin() + i);
    struct Bad {
      std::uint64_t offset;
      std::size_t len;
    };
    // (0 bytes is no bus transaction at all, D-ZERO-BURST: checked after the loop.)
    for (const Bad b : {Bad{32, 64}, Bad{8, 128}, Bad{0, 32}, Bad{0, 96}, Bad{64, 100}, Bad{0x1000 - 64, 128}}) {
      SCOPED_TRACE("offset " + std::to_string(b.offset) + " length " + std::to_string(b.len));
      bool threw = false;
      try {
        d.write(d.map().iq + b.offset, buf.data(), b.len);
      } catch (const platform::BusError& e) {
        threw = true;
        EXPECT_NE(e.status, tlm::TLM_OK_RESPONSE);
        EXPECT_NE(e.status, tlm::TLM_INCOMPLETE_RESPONSE);
      }
      EXPECT_TRUE(threw);
      EXPECT_EQ(vp.platform().seq.submitted(), 0u);
      EXPECT_EQ(d.read_field("vp", "iq_status", "level"), 0u);
    }
    const sc_core::sc_time before_empty = sc_core::sc_time_stamp();
    d.write(d.map().iq, buf.data(), 0);
    EXPECT_EQ(sc_core::sc_time_stamp(), before_empty) << "an empty write takes no time";
    EXPECT_EQ(vp.platform().seq.submitted(), 0u);
    bool threw = false;
    try {
      d.read(d.map().iq, buf.data(), 64);
    } catch (const platform::BusError& e) {
      threw = true;
      EXPECT_EQ(e.status, tlm::TLM_COMMAND_ERROR_RESPONSE);
    }
    EXPECT_TRUE(threw) << "the queue window is write-only";
    EXPECT_EQ(d.read_field("vp", "seq_status", "idle"), 1u);
    EXPECT_EQ(d.read_field("vp", "seq_status", "error"), 0u);
    EXPECT_EQ(d.read_counter48("vp", "retired_cnt_lsb"), 0u);
    bench.garbage_psum(rng);
    const std::vector<Step> s = {lw_step(g, f.lw()), mm_step(g, f.mm(0))};
    const platform::Completion c = bench.run(s);
    EXPECT_TRUE(c.done);
    EXPECT_EQ(c.retired, 2u);
    bench.expect_psum_matches("after the bus errors");
  });
}

// iq_status shows the queue's level and free space, live: 0 / depth when idle, n / depth - n while n instructions
// wait behind a semaphore, back to 0 / depth when drained.
TEST(InstructionQueue, StatusShowsLevelAndSpace) {
  const Generation g = Generation::MARIANA_PLUS;
  platform::VirtualPlatform vp(config(g));
  const Small f(g);
  const unsigned depth = platform::PlatformConfig{}.seq.queue_depth;
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(32);
    f.load(bench, rng);
    EXPECT_EQ(d.read_field("vp", "iq_status", "level"), 0u);
    EXPECT_EQ(d.read_field("vp", "iq_status", "space"), depth);
    auto l = f.lw();
    l.events.wait_mode = isa::WaitMode::WAIT_GE;
    l.events.wait_sem = 12;
    l.events.wait_value = 1;
    std::vector<Step> s = {lw_step(g, l)};
    for (unsigned b = 0; b < 5; ++b) s.push_back(mm_step(g, f.mm(b)));
    d.submit(raws(s));
    sc_core::wait(kSettle);
    EXPECT_EQ(d.read_field("vp", "iq_status", "level"), 6u);
    EXPECT_EQ(d.read_field("vp", "iq_status", "space"), depth - 6);
    EXPECT_EQ(d.read_field("vp", "seq_status", "busy"), 1u);
    d.set_semaphore(12, 1);
    const platform::Completion c = d.wait_idle(kTimeout);
    EXPECT_TRUE(c.done);
    EXPECT_EQ(c.retired, 6u);
    EXPECT_EQ(d.read_field("vp", "iq_status", "level"), 0u);
    EXPECT_EQ(d.read_field("vp", "iq_status", "space"), depth);
    EXPECT_EQ(d.read_field("vp", "seq_status", "idle"), 1u);
  });
}

// A queue of 4: the driver's submit waits for space, and a single burst of 10 instructions from a thread is
// back-pressured inside the write; every instruction runs, in order.
TEST(InstructionQueue, SmallQueueBackPressure) {
  const Generation g = Generation::MAVERICK;
  platform::PlatformConfig cfg = config(g);
  cfg.seq.queue_depth = 4;
  platform::VirtualPlatform vp(cfg);
  const Small f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    EXPECT_EQ(d.read_field("vp", "iq_status", "space"), 4u);
    Bench bench(d, g);
    std::mt19937 rng(33);
    bench.garbage_psum(rng);
    f.load(bench, rng);
    std::vector<Step> s = {lw_step(g, f.lw())};
    for (unsigned i = 0; i < 19; ++i) {
      auto a = f.mm(i % 8);
      a.accumulate = i >= 8;
      s.push_back(mm_step(g, a));
    }
    const platform::Completion c = bench.run(s);
    EXPECT_TRUE(c.done);
    EXPECT_EQ(c.retired, 20u);
    bench.expect_psum_matches("submit with back-pressure");
    d.clear_done();
    std::vector<std::uint8_t> buf;
    std::vector<Step> s2;
    for (unsigned i = 0; i < 10; ++i) {
      auto a = f.mm(i % 8);
      a.accumulate = true;
      s2.push_back(mm_step(g, a));
      buf.insert(buf.end(), s2.back().raw.begin(), s2.back().raw.end());
    }
    d.write(d.map().iq, buf.data(), buf.size());
    const platform::Completion c2 = d.wait_idle(kTimeout);
    EXPECT_TRUE(c2.done);
    EXPECT_EQ(c2.retired, 30u);
    for (const auto& x : s2) x.apply(bench.ref);
    bench.expect_psum_matches("one burst larger than the queue");
  });
}

// Loosely timed: a queue write that must wait for space first consumes the time its initiator ran ahead (the
// annotated delay), so the wait starts at the initiator's local time; a write that finds space leaves the delay as
// it came, for the initiator to account.
TEST(InstructionQueue, ABlockedWriteConsumesTheCallersDelayFirst) {
  const Generation g = Generation::MARIANA;
  platform::PlatformConfig cfg = config(g);
  cfg.seq.queue_depth = 1;
  platform::VirtualPlatform vp(cfg);
  const Small f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    auto waiting = f.lw();  // holds the queue's only entry until semaphore 5 is set
    waiting.events.wait_mode = isa::WaitMode::WAIT_GE;
    waiting.events.wait_sem = 5;
    waiting.events.wait_value = 1;
    const isa::RawInstruction held = isa::encode_ldweights(g, waiting), next = isa::encode_ldweights(g, f.lw());
    auto write = [&](const isa::RawInstruction& raw, sc_core::sc_time& delay) {
      tlm::tlm_generic_payload trans;
      trans.set_command(tlm::TLM_WRITE_COMMAND);
      trans.set_address(0);
      trans.set_data_ptr(const_cast<unsigned char*>(raw.data()));
      trans.set_data_length(static_cast<unsigned>(raw.size()));
      trans.set_streaming_width(static_cast<unsigned>(raw.size()));
      trans.set_byte_enable_ptr(nullptr);
      // Straight into the queue's target (its forward interface), past the bus.
      static_cast<sc_core::sc_export<tlm::tlm_fw_transport_if<>>&>(vp.platform().seq.iq)->b_transport(trans, delay);
      return trans.get_response_status();
    };
    const sc_core::sc_time ahead(300, sc_core::SC_NS);
    sc_core::sc_time delay = ahead;
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    EXPECT_EQ(write(held, delay), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(delay, ahead) << "room in the queue: the delay is the initiator's to account";
    EXPECT_EQ(sc_core::sc_time_stamp(), t0);
    // The queue is full; another thread frees it 100 ns later, before the initiator's local time (t0 + 300 ns).
    sc_core::sc_spawn([&] {
      sc_core::wait(100, sc_core::SC_NS);
      d.set_semaphore(5, 1);
    });
    EXPECT_EQ(write(next, delay), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(delay, sc_core::SC_ZERO_TIME) << "the delay was consumed before waiting";
    // The write took effect at the caller's local time: not earlier (the delay skipped), not later (the delay
    // added after waiting for space).
    EXPECT_EQ(sc_core::sc_time_stamp(), t0 + ahead);
    const platform::Completion c = d.wait_idle(kTimeout);
    EXPECT_TRUE(c.done);
    EXPECT_EQ(c.retired, 2u);
  });
}

// ==== interrupt, done, firmware log ==============================================================================

// The interrupt line is OR(irq_status & irq_enable): done raises it when enabled; clear_done drops it; with
// irq_enable.done clear the raw cause still shows in irq_status but the line stays low.
TEST(Interrupt, DoneFollowsEnableAndClear) {
  const Generation g = Generation::MARIANA;
  platform::VirtualPlatform vp(config(g));
  const Small f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(40);
    f.load(bench, rng);
    EXPECT_FALSE(vp.platform().seq.irq.read());
    EXPECT_TRUE(bench.run({lw_step(g, f.lw())}).done);
    EXPECT_TRUE(vp.platform().seq.irq.read());
    EXPECT_EQ(d.read_field("vp", "irq_status", "done"), 1u);
    EXPECT_EQ(d.read_field("vp", "seq_status", "done"), 1u);
    d.clear_done();
    EXPECT_FALSE(vp.platform().seq.irq.read());
    EXPECT_EQ(d.read_field("vp", "irq_status", "done"), 0u);
    EXPECT_EQ(d.read_field("vp", "seq_status", "done"), 0u);
    d.write_field("vp", "irq_enable", "done", 0);
    EXPECT_TRUE(bench.run({mm_step(g, f.mm(0))}).done);
    EXPECT_EQ(d.read_field("vp", "irq_status", "done"), 1u);
    EXPECT_FALSE(vp.platform().seq.irq.read());
    d.write_field("vp", "irq_enable", "done", 1);
    EXPECT_TRUE(vp.platform().seq.irq.read()) << "enabling a pending cause raises the line";
  });
}

// irq_enable.error gates the line for a fault too: the raw cause shows in irq_status, the line rises only when the
// enable is set, and clear_error drops both.
TEST(Interrupt, ErrorRaisesTheLineOnlyWhenEnabled) {
  const Generation g = Generation::MARIANA;
  platform::VirtualPlatform vp(config(g));
  vp.run([&](platform::Driver& d) {
    platform::ArmOptions o;
    o.irq = false;
    d.arm(o);
    isa::RawInstruction bad{};
    bad[0] = 0x05;
    bad[1] = 16;
    d.submit({bad});
    const platform::Completion c = d.wait_idle(kTimeout);
    EXPECT_TRUE(c.error);
    EXPECT_EQ(d.read_field("vp", "irq_status", "error"), 1u);
    EXPECT_FALSE(vp.platform().seq.irq.read());
    d.write_field("vp", "irq_enable", "error", 1);
    EXPECT_TRUE(vp.platform().seq.irq.read());
    d.clear_error();
    EXPECT_EQ(d.read_field("vp", "irq_status", "error"), 0u);
    EXPECT_EQ(d.read_field("vp", "seq_status", "error"), 0u);
    EXPECT_FALSE(vp.platform().seq.irq.read()) << "done is not enabled and nothing else is pending";
  });
}

// The raw-opcode dispatch names each handler with the firmware's own DEBUG string, in program order.
TEST(Dispatch, FirmwareSelfNamesInProgramOrder) {
  const Generation g = Generation::CAYMAN;
  platform::VirtualPlatform vp(config(g));
  const Small f(g);
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(41);
    f.load(bench, rng);
    EXPECT_TRUE(bench.run({lw_step(g, f.lw()), mm_step(g, f.mm(0)), raw_step(pe_reg_write(g, 1, 1, 0, f.t))}).done);
  });
  const auto& log = vp.platform().seq.firmware_log();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0], "S: Ldweights");
  EXPECT_EQ(log[1], "S: Matmul");
  EXPECT_EQ(log[2], "S: PeRegWrite");
}

}  // namespace

// Two independent instructions whose EVENTS updates both fail at completion: the
// first fault stays in the record; the second is reported after clear_error,
// then the program completes. Nothing is lost or reported out of order.
TEST(FaultOrder, ASecondFaultWhileStoppedIsReportedAfterTheFirst) {
  platform::PlatformConfig cfg;
  cfg.gen = Generation::MARIANA;
  platform::VirtualPlatform vp(cfg);
  std::vector<std::optional<platform::ErrorInfo>> records;
  platform::Completion last;
  vp.run([&](platform::Driver& d) {
    d.arm();
    auto lw = [&](unsigned grp, unsigned sem) {
      isa::LdweightsArgs a;
      a.src = isa::Pattern::row(0, 64);
      a.num_active_rows = 64;
      a.num_active_cols = 64;
      a.tile = grp == 0 ? isa::Placement{0, 64, 0, 64} : isa::Placement{64, 64, 64, 64};
      a.events.update_mode = isa::UpdateMode::DECREMENT;  // semaphores start at 0: underflow
      a.events.update_sem = static_cast<std::uint8_t>(sem);
      a.events.update_value = 1;
      return isa::encode_ldweights(cfg.gen, a);
    };
    d.submit({lw(0, 1), lw(1, 2)});
    d.wait_idle();
    records.push_back(d.error_record());
    d.clear_error();
    d.wait_idle();
    records.push_back(d.error_record());
    d.clear_error();
    last = d.wait_idle();
  });
  ASSERT_EQ(records.size(), 2u);
  ASSERT_TRUE(records[0].has_value());
  EXPECT_EQ(records[0]->index, 0u);
  EXPECT_EQ(records[0]->rule, "seq.semaphore_underflow");
  ASSERT_TRUE(records[1].has_value());
  EXPECT_EQ(records[1]->index, 1u);
  EXPECT_EQ(records[1]->rule, "seq.semaphore_underflow");
  EXPECT_TRUE(last.done);
  EXPECT_FALSE(last.error);
}

// ==== programs longer than the instruction queue ==================================================================
// submit() returns at once and the driver's feeder writes the rest as the queue makes room, so the caller can set
// the semaphores the program waits on while most of it is still unwritten, and a fault anywhere in a long program
// is reported as that fault -- the feeder does not hang on a queue stopped by it (D-IQ-STOPPED): it holds the
// rest and writes it after clear_error.
namespace {
constexpr unsigned kShortQueue = 8;

platform::PlatformConfig short_queue(Generation g) {
  platform::PlatformConfig c = config(g);
  c.seq.queue_depth = kShortQueue;
  return c;
}

// Ldweights, then `matmuls` matmuls into bank 0, with an invalid matmul (INT8 input) at `bad_at` if it is set.
std::vector<isa::RawInstruction> long_program(const Small& f, unsigned matmuls, std::optional<unsigned> bad_at,
                                              std::optional<isa::MatmulArgs> first = std::nullopt) {
  std::vector<isa::RawInstruction> p{isa::encode_ldweights(f.g, f.lw())};
  for (unsigned i = 0; i < matmuls; ++i) p.push_back(isa::encode_matmul(f.g, i == 0 && first ? *first : f.mm(0)));
  if (bad_at) {
    isa::MatmulArgs bad = f.mm(0);
    bad.in_dtype = Dtype::INT8;
    p.insert(p.begin() + *bad_at, isa::encode_matmul(f.g, bad));
  }
  return p;
}
}  // namespace

// Arms, loads the operands, submits the 62-instruction program with its invalid matmul at `bad_at` into a queue of
// 8, and waits until the SEQ stops on it.
platform::Completion run_to_the_fault(platform::Driver& d, const Small& f, unsigned bad_at) {
  d.arm();
  Bench bench(d, f.g);
  std::mt19937 rng(2);
  f.load(bench, rng);
  d.submit(long_program(f, 60, bad_at));
  return d.wait_idle(kTimeout);
}

class FaultInALongProgram : public ::testing::TestWithParam<unsigned> {};

TEST_P(FaultInALongProgram, IsReportedAsThatFault) {
  const Generation g = Generation::MARIANA;
  const unsigned bad_at = GetParam();
  {
    platform::VirtualPlatform vp(short_queue(g));
    const Small f(g);
    std::optional<platform::ErrorInfo> record;
    platform::Completion c;
    std::size_t held = 0, unsubmitted = 0, level = 0;
    vp.run([&](platform::Driver& d) {
      c = run_to_the_fault(d, f, bad_at);
      record = d.error_record();
      held = d.held();
      unsubmitted = d.unsubmitted();
      level = d.read_field("vp", "iq_status", "level");
    });
    EXPECT_TRUE(c.error);
    EXPECT_FALSE(c.timed_out);
    ASSERT_TRUE(record.has_value());
    EXPECT_EQ(record->index, bad_at);
    EXPECT_EQ(record->rule, "mm.in_dtype");
    EXPECT_EQ(c.retired, bad_at);
    // Whatever the queue held at the fault stays in it; the driver holds exactly the rest (the queue said how many
    // records of the refused burst it took).
    EXPECT_LE(level, kShortQueue);
    EXPECT_EQ(held + level, 62u - bad_at - 1) << "every instruction after the fault is queued or held, once";
    EXPECT_EQ(held, unsubmitted);
    EXPECT_GT(held, 0u);
  }
}
// At the head, inside the first queueful, and past the queue depth.
INSTANTIATE_TEST_SUITE_P(LongPrograms, FaultInALongProgram, ::testing::Values(0u, 5u, 41u));

// After clear_error the program goes on from the instruction after the fault, as it would with a queue long enough
// for it: the feeder writes what it held.
TEST_P(FaultInALongProgram, ClearErrorResumesTheRestOfTheProgram) {
  const Generation g = Generation::MARIANA;
  const unsigned bad_at = GetParam();
  platform::VirtualPlatform vp(short_queue(g));
  const Small f(g);
  platform::Completion first, second;
  std::optional<platform::ErrorInfo> record;
  std::size_t held_at_fault = 0, held_after = 0, unsubmitted_after = 0;
  vp.run([&](platform::Driver& d) {
    first = run_to_the_fault(d, f, bad_at);
    record = d.error_record();
    held_at_fault = d.held();
    d.clear_error();
    second = d.wait_idle(kTimeout);
    held_after = d.held();
    unsubmitted_after = d.unsubmitted();
  });
  ASSERT_TRUE(first.error);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->index, bad_at);
  EXPECT_GT(held_at_fault, 0u);
  EXPECT_TRUE(second.done);
  EXPECT_FALSE(second.error);
  EXPECT_FALSE(second.timed_out);
  EXPECT_EQ(second.retired, 61u) << "every instruction but the rejected one";
  EXPECT_EQ(held_after, 0u);
  EXPECT_EQ(unsubmitted_after, 0u);
}

// discard_unwritten() forgets the held rest: clear_error then runs only what the queue holds.
TEST(LongPrograms, DiscardUnwrittenDropsTheHeldRest) {
  const Generation g = Generation::MARIANA;
  const unsigned bad_at = 5;
  platform::VirtualPlatform vp(short_queue(g));
  const Small f(g);
  platform::Completion c;
  std::size_t held = 0, discarded = 0, level = 0;
  vp.run([&](platform::Driver& d) {
    run_to_the_fault(d, f, bad_at);
    held = d.held();
    level = d.read_field("vp", "iq_status", "level");
    discarded = d.discard_unwritten();
    d.clear_error();
    c = d.wait_idle(kTimeout);
  });
  EXPECT_GT(held, 0u);
  EXPECT_EQ(discarded, held);
  EXPECT_TRUE(c.done);
  EXPECT_FALSE(c.error);
  EXPECT_EQ(c.retired, bad_at + level) << "the instructions before the fault and those the queue held";
}

TEST(LongPrograms, TheCallerSetsASemaphoreWhileTheProgramIsStillBeingWritten) {
  const Generation g = Generation::CAYMAN;
  platform::VirtualPlatform vp(short_queue(g));
  const Small f(g);
  platform::Completion c;
  std::size_t unsubmitted_before = 0;
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(3);
    f.load(bench, rng);
    isa::MatmulArgs first = f.mm(0);
    first.events = {isa::WaitMode::WAIT_GE, 3, 1, isa::UpdateMode::NONE, 0, 0};
    d.submit(long_program(f, 40, std::nullopt, first));  // 41 instructions; the first matmul waits on semaphore 3
    sc_core::wait(kSettle);
    unsubmitted_before = d.unsubmitted();
    EXPECT_EQ(d.read_counter48("vp", "retired_cnt_lsb"), 1u) << "the Ldweights ran; the matmul waits";
    d.set_semaphore(3, 1);
    c = d.wait_idle(kTimeout);
  });
  EXPECT_EQ(unsubmitted_before, 41u) << "the program is one burst, still waiting for room";
  EXPECT_TRUE(c.done);
  EXPECT_FALSE(c.error);
  EXPECT_FALSE(c.timed_out);
  EXPECT_EQ(c.retired, 41u);
}

TEST(LongPrograms, AProgramWaitingForASemaphoreNobodySetsTimesOut) {
  const Generation g = Generation::MARIANA;
  platform::VirtualPlatform vp(short_queue(g));
  const Small f(g);
  platform::Completion c;
  vp.run([&](platform::Driver& d) {
    d.arm();
    isa::MatmulArgs first = f.mm(0);
    first.events = {isa::WaitMode::WAIT_GE, 3, 1, isa::UpdateMode::NONE, 0, 0};
    d.submit(long_program(f, 40, std::nullopt, first));
    c = d.wait_idle(sc_core::sc_time(50, sc_core::SC_US));
    // Release it afterwards, so no thread is left waiting when the simulation
    // ends (SystemC never unwinds a suspended thread: its memory would leak).
    d.set_semaphore(3, 1);
    EXPECT_TRUE(d.wait_idle(kTimeout).done);
  });
  EXPECT_TRUE(c.timed_out);
  EXPECT_FALSE(c.done);
  EXPECT_EQ(c.retired, 1u);
}

// ==== simulated time at its extremes ==============================================================================

namespace {

// A small program run from simulated time `start` on: it must retire and give the reference's PSUM.
void run_small_program_at(Generation g, sc_core::sc_time start) {
  platform::VirtualPlatform vp(config(g));
  const Small f(g);
  vp.run([&](platform::Driver& d) {
    sc_core::wait(start);
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(62);
    bench.garbage_psum(rng);
    f.load(bench, rng);
    const platform::Completion c = bench.run({lw_step(g, f.lw()), mm_step(g, f.mm(0)), mm_step(g, f.mm(1))});
    EXPECT_TRUE(c.done);
    EXPECT_EQ(c.retired, 3u);
    bench.expect_psum_matches("a program at " + std::to_string(start.value()) + " ps");
  });
}

}  // namespace

// Far past the VP's time limit (D-SIM-TIME-LIMIT), where a double no longer holds a picosecond count exactly, the
// engine clock's cycle of to_time(c) can be c - 1: a retirement armed for that time found nothing due and armed
// itself again at the same time, for ever (100 % CPU, the simulation never returned). The SEQ arms and syncs for
// the first time at which the cycle is reached, so a program still runs.
TEST(SimulatedTime, AProgramRetiresAtTwoToTheSixtySecondPicoseconds) {
  run_small_program_at(Generation::MARIANA, sc_core::sc_time::from_value(std::uint64_t{1} << 62));
}

// A wait whose end would pass the end of sc_time (2^64 - 1 ps) is refused, naming it: sc_time adds modulo 2^64, so
// the deadline wrapped to the past and the wait returned at once as timed out.
TEST(SimulatedTime, AWaitWhoseEndWouldWrapIsRefused) {
  platform::VirtualPlatform vp(config(Generation::MARIANA));
  vp.run([&](platform::Driver& d) {
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
    try {
      d.wait_idle(sc_core::sc_time::from_value(std::numeric_limits<std::uint64_t>::max()));
      ADD_FAILURE() << "a wait past the end of simulated time was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("wait_idle: a timeout of 18446744073709551615 ps from 1000000 ps would "
                                           "pass the end of simulated time"),
                std::string::npos)
          << e.what();
    }
  });
}
