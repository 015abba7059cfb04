// The protocol checker on pin sequences driven by hand, one row of pin values per 10 ns cycle: good traffic gives
// no violation, and each bad sequence breaks exactly one APB4 rule once, reported at the edge that sampled it with
// that sample's pins. The driver puts row i on the bus at the (i + 1)-th rising edge (the first is at 0 ns); the
// checker samples it at the next edge, its cycle i + 2.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "apb_test_util.h"

namespace {

using namespace apbt;

ApbPins idle() { return ApbPins{}; }
ApbPins in_reset() {
  ApbPins p;
  p.presetn = false;
  return p;
}
ApbPins setup_write(std::uint32_t addr, std::uint32_t wdata = 0xCAFE, std::uint32_t strb = 0xF,
                    std::uint32_t prot = pprot::kNonsecure) {
  ApbPins p;
  p.psel = true;
  p.pwrite = true;
  p.paddr = addr;
  p.pwdata = wdata;
  p.pstrb = strb;
  p.pprot = prot;
  return p;
}
ApbPins setup_read(std::uint32_t addr, std::uint32_t prot = pprot::kNonsecure) {
  ApbPins p;
  p.psel = true;
  p.paddr = addr;
  p.pprot = prot;
  return p;
}
ApbPins access(ApbPins setup, bool ready, std::uint32_t rdata = 0, bool slverr = false) {
  setup.penable = true;
  setup.pready = ready;
  setup.prdata = rdata;
  setup.pslverr = slverr;
  return setup;
}
template <typename F>
ApbPins with(ApbPins p, F change) {
  change(p);
  return p;
}

struct PinBench {
  sc_core::sc_clock clk;
  ApbBus bus;
  ApbChecker checker;
  PinDriver driver;
  PinBench(std::vector<ApbPins> rows, unsigned addr_bits = 32, ApbCheckerConfig cfg = {})
      : clk("pclk", kT), bus("apb", ApbBusConfig{addr_bits}), checker("checker", cfg), driver("driver", bus) {
    checker.pclk(clk);
    checker.connect(bus);
    driver.pclk(clk);
    driver.rows = std::move(rows);
  }
  void run() { sc_core::sc_start(sc_time(10 * (driver.rows.size() + 3), SC_NS)); }
};

TEST(Checker, GoodTrafficHasNoViolation) {
  const ApbPins w = setup_write(0x10, 0xCAFE);
  const ApbPins r = setup_read(0x14);
  const ApbPins w2 = setup_write(0x18, 0x1234, 0x3, pprot::kPrivileged | pprot::kInstruction);
  PinBench b({
      idle(),
      w,
      access(w, true),
      r,  // back to back: SETUP straight after the completing ACCESS
      with(access(r, false), [](ApbPins& p) { p.pwdata = 2; }),  // PWDATA is free during a read
      with(access(r, false), [](ApbPins& p) { p.pwdata = 3; }),
      access(r, true, 0xBEEF, true),  // PSLVERR in the completing cycle
      idle(),
      w2,
      access(w2, true),
      with(idle(), [](ApbPins& p) { p.paddr = 0xFFF; p.pstrb = 0xF; }),  // anything goes while idle
      idle(),
  });
  b.run();
  EXPECT_TRUE(b.checker.violations().empty()) << b.checker.report();
  const auto& t = b.checker.transfers();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_TRUE(t[0].write);
  EXPECT_EQ(t[0].addr, 0x10u);
  EXPECT_EQ(t[0].wdata, 0xCAFEu);
  EXPECT_EQ(t[0].setup_cycle, 3u);  // row 1
  EXPECT_EQ(t[0].end_cycle, 4u);
  EXPECT_EQ(t[0].wait_states, 0u);
  EXPECT_FALSE(t[1].write);
  EXPECT_EQ(t[1].setup_cycle, 5u);
  EXPECT_EQ(t[1].end_cycle, 8u);
  EXPECT_EQ(t[1].wait_states, 2u);
  EXPECT_EQ(t[1].rdata, 0xBEEFu);
  EXPECT_TRUE(t[1].slverr);
  EXPECT_EQ(t[2].strb, 0x3u);
  EXPECT_EQ(t[2].prot, 0x5u);
  EXPECT_EQ(b.checker.completed_transfers(), 3u);
  EXPECT_EQ(b.checker.cycles(), b.driver.rows.size() + 3) << "one sample per edge, the first at 0 ns";
}

TEST(Checker, ResetMayCutATransferAtTheEdgeItIsSampled) {
  const ApbPins w = setup_write(0x10);
  PinBench b({idle(), w, with(access(w, false), [](ApbPins& p) { p.presetn = false; }), in_reset(), in_reset(),
              idle(), w, access(w, true), idle()});
  b.run();
  EXPECT_TRUE(b.checker.violations().empty()) << b.checker.report();
  EXPECT_EQ(b.checker.completed_transfers(), 1u);
}

struct BadCase {
  const char* name;
  std::vector<ApbPins> rows;
  ApbRule rule;
  std::size_t row;  // the row that breaks the rule
  unsigned addr_bits = 32;
};

std::vector<BadCase> bad_cases() {
  const ApbPins w = setup_write(0x10, 0xA);
  const ApbPins r = setup_read(0x10);
  return {
      {"reset_idle", {idle(), in_reset(), in_reset(), with(in_reset(), [](ApbPins& p) { p.psel = true; }), idle()},
       ApbRule::ResetIdle, 3},
      {"enable_without_select", {idle(), with(idle(), [](ApbPins& p) { p.penable = true; }), idle()},
       ApbRule::EnableWithoutSelect, 1},
      {"access_without_setup", {idle(), access(w, true), idle()}, ApbRule::AccessWithoutSetup, 1},
      {"setup_then_access", {idle(), w, w, access(w, true), idle()}, ApbRule::SetupThenAccess, 2},
      {"access_held_until_ready", {idle(), w, access(w, false), idle()}, ApbRule::AccessHeldUntilReady, 3},
      {"enable_low_after_transfer", {idle(), w, access(w, true), access(w, true), idle()},
       ApbRule::EnableLowAfterTransfer, 3},
      {"paddr_stable", {idle(), w, with(access(w, true), [](ApbPins& p) { p.paddr = 0x14; }), idle()},
       ApbRule::AddrStable, 2},
      {"pwrite_stable", {idle(), w, with(access(w, true), [](ApbPins& p) { p.pwrite = false; }), idle()},
       ApbRule::WriteStable, 2},
      {"pwdata_stable",
       {idle(), w, access(w, false), with(access(w, true), [](ApbPins& p) { p.pwdata = 0xB; }), idle()},
       ApbRule::WdataStable, 3},
      {"pstrb_stable", {idle(), w, with(access(w, true), [](ApbPins& p) { p.pstrb = 0x3; }), idle()},
       ApbRule::StrbStable, 2},
      {"pprot_stable", {idle(), w, with(access(w, true), [](ApbPins& p) { p.pprot = 0x3; }), idle()},
       ApbRule::ProtStable, 2},
      {"pstrb_low_on_read",
       {idle(), with(r, [](ApbPins& p) { p.pstrb = 0x1; }),
        with(access(r, true), [](ApbPins& p) { p.pstrb = 0x1; }), idle()},
       ApbRule::StrbLowOnRead, 1},
      {"pslverr_in_a_wait_state", {idle(), w, access(w, false, 0, true), access(w, true, 0, true), idle()},
       ApbRule::SlverrOnlyWhenReady, 2},
      {"pslverr_while_idle", {idle(), with(idle(), [](ApbPins& p) { p.pslverr = true; }), idle()},
       ApbRule::SlverrOnlyWhenReady, 1},
      {"paddr_width", {idle(), setup_write(0x1000), access(setup_write(0x1000), true), idle()}, ApbRule::AddrWidth,
       1, 12},
  };
}

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class BadSequence : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadSequence, BreaksExactlyItsRuleOnce) {
  const BadCase& c = GetParam();
  ApbCheckerConfig cfg;
  cfg.report = false;
  PinBench b(c.rows, c.addr_bits, cfg);
  b.run();
  ASSERT_EQ(b.checker.violations().size(), 1u) << b.checker.report();
  const ApbViolation& v = b.checker.violations()[0];
  EXPECT_EQ(v.rule, c.rule) << b.checker.report();
  EXPECT_EQ(b.checker.count(c.rule), 1u);
  EXPECT_EQ(v.cycle, c.row + 2);
  ASSERT_GT(b.driver.driven_at.size(), c.row);
  EXPECT_EQ(v.time, b.driver.driven_at[c.row] + kT) << "reported at the edge that sampled the row";
  const ApbPins& want = c.rows[c.row];
  EXPECT_EQ(v.pins.psel, want.psel);
  EXPECT_EQ(v.pins.penable, want.penable);
  EXPECT_EQ(v.pins.paddr, want.paddr);
  EXPECT_EQ(v.pins.pwdata, want.pwdata);
  EXPECT_EQ(v.pins.pstrb, want.pstrb);
  EXPECT_EQ(v.pins.pprot, want.pprot);
  EXPECT_EQ(v.pins.pslverr, want.pslverr);
  EXPECT_NE(b.checker.report().find(std::string(rule_name(c.rule))), std::string::npos);
  EXPECT_FALSE(v.detail.empty());
}

INSTANTIATE_TEST_SUITE_P(Checker, BadSequence, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.name); });

TEST(Checker, AViolationNamesTheValuesInvolved) {
  const ApbPins w = setup_write(0x10);
  ApbCheckerConfig cfg;
  cfg.report = false;
  PinBench b({idle(), w, with(access(w, true), [](ApbPins& p) { p.paddr = 0x14; }), idle()}, 32, cfg);
  b.run();
  ASSERT_EQ(b.checker.violations().size(), 1u);
  const std::string& d = b.checker.violations()[0].detail;
  EXPECT_NE(d.find("0x14"), std::string::npos) << d;
  EXPECT_NE(d.find("0x10"), std::string::npos) << d;
  EXPECT_NE(d.find("cycle 3"), std::string::npos) << d << ": the setup phase's cycle";
}

TEST(Checker, ClearForgetsViolationsAndKeepsWatching) {
  const ApbPins w = setup_write(0x20);
  ApbCheckerConfig cfg;
  cfg.report = false;
  PinBench b({idle(), with(idle(), [](ApbPins& p) { p.penable = true; }), idle(), idle(), w, access(w, true), idle(),
              w, access(w, false), idle()},
             32, cfg);
  sc_core::sc_start(ns(35));  // rows 0..3 driven, row 1 sampled at 20 ns
  EXPECT_EQ(b.checker.count(ApbRule::EnableWithoutSelect), 1u);
  b.checker.clear();
  EXPECT_TRUE(b.checker.violations().empty());
  EXPECT_EQ(b.checker.count(ApbRule::EnableWithoutSelect), 0u);
  sc_core::sc_start(ns(100));
  EXPECT_EQ(b.checker.completed_transfers(), 1u);
  ASSERT_EQ(b.checker.violations().size(), 1u) << "only what happened after clear()";
  EXPECT_EQ(b.checker.violations()[0].rule, ApbRule::AccessHeldUntilReady);
}

TEST(Checker, PslverrOutsideTheCompletingCycleMayBeAllowed) {
  ApbCheckerConfig cfg;
  cfg.check_slverr_when_unsampled = false;
  PinBench b({idle(), with(idle(), [](ApbPins& p) { p.pslverr = true; }), idle()}, 32, cfg);
  b.run();
  EXPECT_TRUE(b.checker.violations().empty()) << b.checker.report();
}

}  // namespace
