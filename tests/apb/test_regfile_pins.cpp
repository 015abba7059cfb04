// The platform's own register files behind ApbToTlm: the arr_seq CSR block (its four faces behind the router)
// driven through pins, by a pin-level master written from the protocol and by the TLM->APB bridge. Expected
// values come from the schemas as written in docs/registers.md and the generated documentation: top
// spare_register0 @ 0x008 (RW, reset 0), spare_register2 @ 0x010 (RW, reset 0xffffffff), the protected face's
// throttle_cfg @ 0x2000 (reset 0x1ff, privileged accesses only).
#include <gtest/gtest.h>

#include "apb_test_util.h"
#include "pevp/regfile/arr_seq_csrs.h"

namespace {

using namespace apbt;
using pevp::regfile::ArrSeqCsrs;

constexpr std::uint32_t kUnpriv = pprot::kNonsecure;                    // PPROT 0b010
constexpr std::uint32_t kPriv = pprot::kNonsecure | pprot::kPrivileged;  // PPROT 0b011

// PinMaster -> ApbBus (+ checker) -> ApbToTlm -> ArrSeqCsrs
struct RegfileOnPins {
  sc_core::sc_clock clk;
  ApbBus bus;
  PinMaster cpu;
  ApbToTlm slave;
  ApbChecker checker;
  ArrSeqCsrs csrs;
  explicit RegfileOnPins(ApbToTlmConfig slave_cfg)
      : clk("pclk", kT), bus("apb", ApbBusConfig{16}), cpu("cpu", bus), slave("slave", slave_cfg),
        checker("checker"), csrs("csrs") {
    cpu.pclk(clk);
    slave.pclk(clk);
    slave.connect(bus);
    checker.pclk(clk);
    checker.connect(bus);
    slave.socket.bind(csrs.apb());
  }
  void run(std::function<void(PinMaster&)> script) {
    cpu.script = std::move(script);
    sc_core::sc_start(sc_time(10, sc_core::SC_US));
    EXPECT_TRUE(cpu.done);
    EXPECT_TRUE(checker.violations().empty()) << checker.report();
  }
};

// The register file's 20 ns access time is one APB transfer (setup + access at 100 MHz): covered, no wait states.
ApbToTlmConfig covered() {
  ApbToTlmConfig c;
  c.covered_delay = ns(20);
  return c;
}

TEST(RegfilePins, ResetValueReadAndReadWriteRegisterThroughPins) {
  RegfileOnPins b(covered());
  b.run([&](PinMaster& m) {
    PinMaster::Out o = m.read(0x010);
    EXPECT_FALSE(o.slverr);
    EXPECT_EQ(o.rdata, 0xFFFFFFFFu) << "spare_register2's reset value";
    EXPECT_EQ(o.waits, 0u);
    o = m.read(0x008);
    EXPECT_EQ(o.rdata, 0u) << "spare_register0's reset value";
    o = m.write(0x008, 0x1234A5A5);
    EXPECT_FALSE(o.slverr);
    EXPECT_EQ(o.waits, 0u);
    EXPECT_EQ(m.read(0x008).rdata, 0x1234A5A5u);
    // PSTRB: only lane 1.
    o = m.write(0x008, 0x0000BB00, kUnpriv, 0x2);
    EXPECT_FALSE(o.slverr);
    EXPECT_EQ(m.read(0x008).rdata, 0x1234BBA5u);
  });
  EXPECT_EQ(b.slave.stats().transfers, 6u);
  EXPECT_EQ(b.slave.stats().wait_cycles, 0u);
}

TEST(RegfilePins, TheProtectedFaceAnswersAnUnprivilegedAccessWithPslverr) {
  RegfileOnPins b(covered());
  b.run([&](PinMaster& m) {
    PinMaster::Out o = m.read(0x2000, kUnpriv);
    EXPECT_TRUE(o.slverr);
    EXPECT_EQ(o.rdata, 0u);
    o = m.write(0x2000, 0x0, kUnpriv);
    EXPECT_TRUE(o.slverr);
    o = m.read(0x2000, kPriv);
    EXPECT_FALSE(o.slverr);
    EXPECT_EQ(o.rdata, 0x1FFu) << "the unprivileged write changed nothing";
    o = m.write(0x2000, 0x0F0, kPriv);
    EXPECT_FALSE(o.slverr);
  });
  EXPECT_EQ(b.csrs.protect.rejected_unprivileged(), 2u);
  EXPECT_EQ(b.csrs.disable_throttle(), 0x0F0u);
  EXPECT_EQ(b.slave.stats().errors, 2u);
  ASSERT_EQ(b.checker.transfers().size(), 4u);
  EXPECT_TRUE(b.checker.transfers()[0].slverr);
  EXPECT_FALSE(b.checker.transfers()[2].slverr);
}

TEST(RegfilePins, UnmappedAndMisalignedAddressesGivePslverr) {
  RegfileOnPins b(covered());
  b.run([&](PinMaster& m) {
    EXPECT_TRUE(m.read(0x018).slverr) << "a hole in the top face";
    EXPECT_TRUE(m.write(0x00A, 1).slverr) << "PADDR not word aligned (APB4: unpredictable; the file refuses it)";
    EXPECT_TRUE(m.read(0x9000).slverr) << "outside every window";
    EXPECT_EQ(m.read(0x008).rdata, 0u) << "nothing changed";
  });
  EXPECT_EQ(b.slave.stats().errors, 3u);
}

TEST(RegfilePins, AnUncoveredAccessTimeBecomesWaitStates) {
  RegfileOnPins b(ApbToTlmConfig{});  // the file's 20 ns annotated as target latency: 2 cycles
  b.run([&](PinMaster& m) {
    const PinMaster::Out o = m.read(0x010);
    EXPECT_EQ(o.rdata, 0xFFFFFFFFu);
    EXPECT_EQ(o.waits, 2u);
    // The master's first edge is at 0: setup driven at 0, PENABLE at 10, PREADY sampled low at 20 and 30.
    EXPECT_EQ(o.end, ns(40));
  });
  ASSERT_EQ(b.checker.transfers().size(), 1u);
  EXPECT_EQ(b.checker.transfers()[0].wait_states, 2u);
}

// Initiator -> TlmToApb -> pins (+ checker) -> ApbToTlm -> ArrSeqCsrs: the privilege attribute end to end.
struct RegfileBehindBothBridges {
  sc_core::sc_clock clk;
  ApbBus bus;
  Initiator cpu;
  TlmToApb master;
  ApbToTlm slave;
  ApbChecker checker;
  ArrSeqCsrs csrs;
  RegfileBehindBothBridges()
      : clk("pclk", kT), bus("apb", ApbBusConfig{16}), cpu("cpu"), master("master"), slave("slave", covered()),
        checker("checker"), csrs("csrs") {
    master.pclk(clk);
    master.connect(bus);
    slave.pclk(clk);
    slave.connect(bus);
    checker.pclk(clk);
    checker.connect(bus);
    cpu.socket.bind(master.socket);
    slave.socket.bind(csrs.apb());
  }
};

TEST(RegfilePins, TlmAccessesReachTheCsrBlockThroughBothBridges) {
  RegfileBehindBothBridges b;
  b.cpu.script = [&](Initiator& cpu) {
    EXPECT_EQ(cpu.write32(0x2000, 0x0F0).status, tlm::TLM_GENERIC_ERROR_RESPONSE) << "unprivileged";
    EXPECT_EQ(cpu.write32(0x2000, 0x0F0, ApbProt(true)).status, tlm::TLM_OK_RESPONSE);
    const Result r = cpu.read32(0x2000, ApbProt(true));
    EXPECT_EQ(r.status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(le_word(r.data), 0x0F0u);
    // A half-word at 0x00A: PADDR 0x008 with PSTRB 0b1100, the file's byte mask.
    Access half;
    half.cmd = tlm::TLM_WRITE_COMMAND;
    half.addr = 0x00A;
    half.data = {0x34, 0x12};
    EXPECT_EQ(cpu.access(half).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(le_word(cpu.read32(0x008).data), 0x12340000u);
    // Two bytes of the reset value 0xffffffff of spare_register3 @ 0x014.
    Access two;
    two.addr = 0x016;
    two.data = {0, 0};
    const Result t = cpu.access(two);
    EXPECT_EQ(t.status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(t.data, (std::vector<unsigned char>{0xFF, 0xFF}));
  };
  sc_core::sc_start(sc_time(10, sc_core::SC_US));
  EXPECT_TRUE(b.cpu.done);
  EXPECT_TRUE(b.checker.violations().empty()) << b.checker.report();
  EXPECT_EQ(b.csrs.disable_throttle(), 0x0F0u);
  EXPECT_EQ(b.csrs.protect.rejected_unprivileged(), 1u);
  const auto& t = b.checker.transfers();
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[0].prot, 0x2u);
  EXPECT_EQ(t[1].prot, 0x3u);
  EXPECT_EQ(t[3].addr, 0x008u);
  EXPECT_EQ(t[3].strb, 0xCu);
  EXPECT_EQ(t[3].wdata, 0x12340000u);
}

}  // namespace
