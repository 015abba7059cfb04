// ApbToTlm on its own, driven by the pin-level master of the test benches: what reaches the TLM target is what the
// pins say, including what a master should not do (PSTRB on a read, a write with no strobe, an unaligned PADDR).
#include <gtest/gtest.h>

#include "apb_test_util.h"

namespace {

using namespace apbt;

// PinMaster -> ApbBus (+ checker) -> ApbToTlm -> Memory
struct SlaveBench {
  sc_core::sc_clock clk;
  ApbBus bus;
  PinMaster cpu;
  ApbToTlm slave;
  ApbChecker checker;
  Memory mem;
  SlaveBench()
      : clk("pclk", kT), bus("apb", ApbBusConfig{16}), cpu("cpu", bus), slave("slave"), checker("checker", quiet()),
        mem("mem") {
    cpu.pclk(clk);
    slave.pclk(clk);
    slave.connect(bus);
    checker.pclk(clk);
    checker.connect(bus);
    slave.socket.bind(mem.socket);
  }
  static ApbCheckerConfig quiet() {
    ApbCheckerConfig c;
    c.report = false;
    return c;
  }
  void run(std::function<void(PinMaster&)> script) {
    cpu.script = std::move(script);
    sc_core::sc_start(sc_time(10, sc_core::SC_US));
    EXPECT_TRUE(cpu.done);
  }
};

TEST(ApbToTlmPins, TheTargetIsCalledAtTheAccessPhasesFirstEdge) {
  SlaveBench b;
  b.mem.set_word(0x40, 0xDEADBEEF);
  b.run([&](PinMaster& m) {
    const PinMaster::Out r = m.read(0x40, pprot::kPrivileged);
    EXPECT_EQ(r.rdata, 0xDEADBEEFu);
    EXPECT_FALSE(r.slverr);
    EXPECT_EQ(r.waits, 0u);
    EXPECT_EQ(r.end, ns(20)) << "setup driven at 0, PENABLE at 10, PREADY sampled high at 20";
    const PinMaster::Out w = m.write(0x44, 0x01020304);
    EXPECT_EQ(w.rdata, 0u) << "PRDATA is 0 on a write";
    EXPECT_FALSE(w.slverr);
  });
  EXPECT_TRUE(b.checker.violations().empty()) << b.checker.report();
  ASSERT_EQ(b.mem.seen.size(), 2u);
  EXPECT_EQ(b.mem.seen[0].time, ns(10));
  EXPECT_EQ(b.mem.seen[0].length, 4u);
  EXPECT_TRUE(b.mem.seen[0].prot.privileged);
  EXPECT_FALSE(b.mem.seen[0].prot.nonsecure);
  EXPECT_EQ(b.mem.word(0x44), 0x01020304u);
}

TEST(ApbToTlmPins, ForwardsWhatThePinsSayEvenFromAMasterThatBreaksTheRules) {
  SlaveBench b;
  b.mem.set_word(0x44, 0x55555555);
  b.run([&](PinMaster& m) {
    // PSTRB on a read: ignored, the whole word is read.
    PinMaster::Out o = m.transfer(false, 0x44, 0, 0x5, pprot::kNonsecure);
    EXPECT_EQ(o.rdata, 0x55555555u);
    // A write with no strobe: the target is told every lane is disabled.
    o = m.transfer(true, 0x44, 0xFFFFFFFF, 0x0, pprot::kNonsecure);
    EXPECT_FALSE(o.slverr);
    // An unaligned PADDR reaches the target as it is; this one refuses it.
    o = m.write(0x41, 1);
    EXPECT_TRUE(o.slverr);
  });
  EXPECT_EQ(b.checker.count(ApbRule::StrbLowOnRead), 1u);
  EXPECT_EQ(b.checker.violations().size(), 1u) << b.checker.report();
  ASSERT_EQ(b.mem.seen.size(), 3u);
  EXPECT_EQ(b.mem.seen[0].cmd, tlm::TLM_READ_COMMAND);
  EXPECT_TRUE(b.mem.seen[0].be.empty());
  EXPECT_EQ(b.mem.seen[1].be, (std::vector<unsigned char>{0, 0, 0, 0}));
  EXPECT_EQ(b.mem.word(0x44), 0x55555555u);
  EXPECT_EQ(b.mem.seen[2].addr, 0x41u);
  EXPECT_EQ(b.slave.stats().errors, 1u);
}

}  // namespace
