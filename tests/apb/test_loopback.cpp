// The two bridges against each other and against the checker: a TLM initiator -> TlmToApb -> pins (+ ApbChecker)
// -> ApbToTlm -> a TLM memory. Every expected time is derived by hand from the APB protocol on the bench's 10 ns
// PCLK (rising edges at 0, 10, 20, ... ns; the checker's cycle n is the edge at (n - 1) x 10 ns):
//   a request posted at t starts its setup phase at the first edge E0 > t, the memory is called at E0 + T (the
//   access phase's first edge), and the transfer completes -- the caller resumes -- at E0 + (2 + w) T, where
//   w = ceil((target delay - covered delay) / T) for a target that does not block.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "apb_test_util.h"

namespace {

using namespace apbt;
using tlm::TLM_OK_RESPONSE;

Access write_bytes(std::uint64_t addr, std::vector<unsigned char> data, std::vector<unsigned char> be = {}) {
  Access a;
  a.cmd = tlm::TLM_WRITE_COMMAND;
  a.addr = addr;
  a.data = std::move(data);
  a.be = std::move(be);
  return a;
}
Access read_bytes(std::uint64_t addr, std::vector<unsigned char> initial, std::vector<unsigned char> be = {}) {
  Access a;
  a.addr = addr;
  a.data = std::move(initial);
  a.be = std::move(be);
  return a;
}

void expect_clean(const ApbChecker& c) { EXPECT_TRUE(c.violations().empty()) << c.report(); }

TEST(Loopback, OneWordWriteAndReadWithoutWaitStates) {
  Loopback b;
  b.run([&](Initiator& cpu) {
    const Result w = cpu.write32(0x40, 0x12345678);
    EXPECT_EQ(w.status, TLM_OK_RESPONSE);
    EXPECT_EQ(w.end, ns(30)) << "posted at 0: setup at 10, access at 20, complete at 30";
    EXPECT_EQ(w.delay, sc_core::SC_ZERO_TIME);
    const Result r = cpu.read32(0x40);
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    EXPECT_EQ(le_word(r.data), 0x12345678u);
    EXPECT_EQ(r.end, ns(60)) << "posted at 30 (an edge): setup at 40, complete at 60";
  });
  expect_clean(b.checker);
  ASSERT_EQ(b.checker.transfers().size(), 2u);
  const ApbTransfer& w = b.checker.transfers()[0];
  EXPECT_TRUE(w.write);
  EXPECT_EQ(w.addr, 0x40u);
  EXPECT_EQ(w.wdata, 0x12345678u);
  EXPECT_EQ(w.strb, 0xFu);
  EXPECT_EQ(w.prot, 0x2u) << "no extension: unprivileged, non-secure, data";
  EXPECT_EQ(w.wait_states, 0u);
  EXPECT_EQ(w.setup_cycle, 3u) << "the setup phase driven at 10 ns is sampled at 20 ns";
  EXPECT_EQ(w.end_cycle, 4u);
  const ApbTransfer& r = b.checker.transfers()[1];
  EXPECT_FALSE(r.write);
  EXPECT_EQ(r.strb, 0u) << "APB4: PSTRB low on reads";
  EXPECT_EQ(r.rdata, 0x12345678u);
  EXPECT_EQ(r.setup_cycle, w.end_cycle + 2) << "one LT initiator: an idle cycle between its calls";
  ASSERT_EQ(b.mem.seen.size(), 2u);
  EXPECT_EQ(b.mem.seen[0].time, ns(20));
  EXPECT_EQ(b.mem.seen[0].cmd, tlm::TLM_WRITE_COMMAND);
  EXPECT_EQ(b.mem.seen[0].addr, 0x40u);
  EXPECT_TRUE(b.mem.seen[0].be.empty()) << "a whole-word write carries no byte enables";
  EXPECT_EQ(b.mem.seen[1].time, ns(50));
  EXPECT_EQ(b.mem.seen[1].cmd, tlm::TLM_READ_COMMAND);
  EXPECT_EQ(b.mem.word(0x40), 0x12345678u);
  EXPECT_EQ(b.master.stats().transactions, 2u);
  EXPECT_EQ(b.master.stats().transfers, 2u);
  EXPECT_EQ(b.master.stats().wait_cycles, 0u);
  EXPECT_EQ(b.slave.stats().transfers, 2u);
  EXPECT_EQ(b.slave.stats().errors, 0u);
}

TEST(Loopback, TheCallersDelayIsConsumedBeforeTheTransfer) {
  Loopback b;
  b.run([&](Initiator& cpu) {
    Access a = write_bytes(0x10, le_bytes(1));
    a.delay = ns(15);
    Result r = cpu.access(a);
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    EXPECT_EQ(r.delay, sc_core::SC_ZERO_TIME) << "nothing left to annotate";
    EXPECT_EQ(r.end, ns(40)) << "posted at 15: setup at 20, complete at 40";
    a.delay = ns(20);
    r = cpu.access(a);
    EXPECT_EQ(r.end, ns(90)) << "posted at 60, an edge: setup at the next one (70), complete at 90";
  });
  expect_clean(b.checker);
  ASSERT_EQ(b.mem.seen.size(), 2u);
  EXPECT_EQ(b.mem.seen[0].time, ns(30));
  EXPECT_EQ(b.mem.seen[1].time, ns(80));
}

// (target latency, covered delay, expected wait states)
struct WaitCase {
  double latency_ns;
  double covered_ns;
  unsigned waits;
};

void PrintTo(const WaitCase& c, std::ostream* os) {
  *os << "latency " << c.latency_ns << " ns, covered " << c.covered_ns << " ns";
}

class TargetLatency : public ::testing::TestWithParam<WaitCase> {};

TEST_P(TargetLatency, BecomesWaitStatesRoundedUpToCycles) {
  const WaitCase c = GetParam();
  LoopbackConfig cfg;
  cfg.slave.covered_delay = ns(c.covered_ns);
  Loopback b(cfg);
  b.mem.latency = ns(c.latency_ns);
  b.run([&](Initiator& cpu) {
    const Result w = cpu.write32(0x80, 0xA5A5F00D);
    EXPECT_EQ(w.status, TLM_OK_RESPONSE);
    EXPECT_EQ(w.end, ns(10 + (2 + c.waits) * 10));
    const Result r = cpu.read32(0x80);
    EXPECT_EQ(le_word(r.data), 0xA5A5F00Du);
    EXPECT_EQ(r.end, w.end + ns(10 + (2 + c.waits) * 10));
  });
  expect_clean(b.checker);
  ASSERT_EQ(b.checker.transfers().size(), 2u);
  for (const ApbTransfer& t : b.checker.transfers()) {
    EXPECT_EQ(t.wait_states, c.waits);
    EXPECT_EQ(t.end_cycle - t.setup_cycle, 1u + c.waits);
  }
  EXPECT_EQ(b.master.stats().wait_cycles, 2u * c.waits);
  EXPECT_EQ(b.slave.stats().wait_cycles, 2u * c.waits);
}

INSTANTIATE_TEST_SUITE_P(Loopback, TargetLatency,
                         ::testing::Values(WaitCase{0, 0, 0}, WaitCase{5, 0, 1}, WaitCase{10, 0, 1},
                                           WaitCase{20, 0, 2}, WaitCase{25, 0, 3}, WaitCase{25, 20, 1},
                                           WaitCase{20, 20, 0}, WaitCase{10, 20, 0}),
                         [](const ::testing::TestParamInfo<WaitCase>& i) {
                           return "latency" + std::to_string(static_cast<int>(i.param.latency_ns)) + "ns_covered" +
                                  std::to_string(static_cast<int>(i.param.covered_ns)) + "ns";
                         });

TEST(Loopback, ABlockingTargetHoldsPreadyLowUntilTheEdgeAfterItReturns) {
  Loopback b;
  b.mem.block_at[0x40] = ns(25);
  b.mem.block_at[0x44] = ns(30);
  b.run([&](Initiator& cpu) {
    // Called at 20, returns at 45: PREADY high from the edge at 50, sampled at 60.
    Result r = cpu.write32(0x40, 7);
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    EXPECT_EQ(r.end, ns(60));
    // Posted at 60, called at 80, returns at 110, an edge: the first edge strictly after the return is 120.
    r = cpu.write32(0x44, 8);
    EXPECT_EQ(r.end, ns(130));
  });
  expect_clean(b.checker);
  ASSERT_EQ(b.checker.transfers().size(), 2u);
  EXPECT_EQ(b.checker.transfers()[0].wait_states, 3u);
  EXPECT_EQ(b.checker.transfers()[1].wait_states, 4u);
  EXPECT_EQ(b.mem.seen[1].time, ns(80));
  EXPECT_EQ(b.mem.word(0x40), 7u);
  EXPECT_EQ(b.mem.word(0x44), 8u);
}

TEST(Loopback, ByteEnablesBecomePstrbOnWritesAndMaskReads) {
  Loopback b;
  b.mem.set_word(0x20, 0x11223344);
  b.run([&](Initiator& cpu) {
    // Lanes 0 and 2 of 0xAABBCCDD: DD and BB.
    Result r = cpu.access(write_bytes(0x20, le_bytes(0xAABBCCDD), {0xFF, 0x00, 0xFF, 0x00}));
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    // A read has no strobes: the whole word is read, only lane 1 is copied back.
    r = cpu.access(read_bytes(0x20, {0xEE, 0xEE, 0xEE, 0xEE}, {0x00, 0xFF, 0x00, 0x00}));
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    EXPECT_EQ(r.data, (std::vector<unsigned char>{0xEE, 0x33, 0xEE, 0xEE}));
    // Byte enables shorter than the data repeat: {0, FF} -> lanes 1 and 3.
    r = cpu.access(write_bytes(0x20, le_bytes(0x99887766), {0x00, 0xFF}));
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    // One byte at an odd address: PADDR is the word, PSTRB its lane.
    r = cpu.access(write_bytes(0x22, {0x5A}));
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
  });
  expect_clean(b.checker);
  const auto& t = b.checker.transfers();
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].strb, 0x5u);
  EXPECT_EQ(t[0].wdata, 0x00BB00DDu) << "disabled lanes are driven 0";
  EXPECT_EQ(t[1].strb, 0x0u);
  EXPECT_EQ(t[1].rdata, 0x11BB33DDu);
  EXPECT_EQ(t[2].strb, 0xAu);
  EXPECT_EQ(t[2].wdata, 0x99007700u);
  EXPECT_EQ(t[3].addr, 0x20u);
  EXPECT_EQ(t[3].strb, 0x4u);
  EXPECT_EQ(t[3].wdata, 0x005A0000u);
  // 0x11BB33DD, lanes 1 and 3 from 0x99887766 -> 0x99BB77DD, lane 2 = 0x5A -> 0x995A77DD.
  EXPECT_EQ(b.mem.word(0x20), 0x995A77DDu);
  ASSERT_EQ(b.mem.seen.size(), 4u);
  EXPECT_EQ(b.mem.seen[0].be, (std::vector<unsigned char>{0xFF, 0x00, 0xFF, 0x00}));
  EXPECT_TRUE(b.mem.seen[1].be.empty()) << "the read reached the target as a whole word";
  EXPECT_EQ(b.mem.seen[3].be, (std::vector<unsigned char>{0x00, 0x00, 0xFF, 0x00}));
}

TEST(Loopback, UnalignedAndLongAccessesSplitIntoBackToBackWordTransfers) {
  Loopback b;
  const std::vector<unsigned char> bytes{0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7};
  b.run([&](Initiator& cpu) {
    Result r = cpu.access(write_bytes(0x102, bytes));
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    EXPECT_EQ(r.end, ns(70)) << "three transfers of 2 cycles from the edge at 10";
    r = cpu.access(read_bytes(0x102, std::vector<unsigned char>(8, 0)));
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    EXPECT_EQ(r.data, bytes);
    EXPECT_EQ(r.end, ns(140)) << "posted at 70: setup at 80, three transfers";
  });
  expect_clean(b.checker);
  const auto& t = b.checker.transfers();
  ASSERT_EQ(t.size(), 6u);
  const std::uint32_t addrs[3] = {0x100, 0x104, 0x108};
  const std::uint32_t strbs[3] = {0xC, 0xF, 0x3};
  const std::uint32_t wdata[3] = {0xA1A00000, 0xA5A4A3A2, 0x0000A7A6};
  for (unsigned i = 0; i < 3; ++i) {
    EXPECT_EQ(t[i].addr, addrs[i]);
    EXPECT_EQ(t[i].strb, strbs[i]);
    EXPECT_EQ(t[i].wdata, wdata[i]);
    EXPECT_EQ(t[3 + i].addr, addrs[i]);
    EXPECT_EQ(t[3 + i].strb, 0u);
    if (i > 0) {
      EXPECT_EQ(t[i].setup_cycle, t[i - 1].end_cycle + 1) << "no idle cycle inside a split access";
      EXPECT_EQ(t[3 + i].setup_cycle, t[3 + i - 1].end_cycle + 1);
    }
  }
  EXPECT_EQ(b.mem.word(0x100), 0xA1A00000u);
  EXPECT_EQ(b.mem.word(0x104), 0xA5A4A3A2u);
  EXPECT_EQ(b.mem.word(0x108), 0x0000A7A6u);
  EXPECT_EQ(b.master.stats().transactions, 2u);
  EXPECT_EQ(b.master.stats().transfers, 6u);
}

TEST(Loopback, AStreamingAccessRevisitsItsWindow) {
  Loopback b;
  b.run([&](Initiator& cpu) {
    Access a = write_bytes(0x40, {1, 2, 3, 4, 5, 6, 7, 8});
    a.streaming_width = 4;  // a FIFO register: two word writes to 0x40
    EXPECT_EQ(cpu.access(a).status, TLM_OK_RESPONSE);
    Access h = write_bytes(0x41, {0x11, 0x22, 0x33, 0x44});
    h.streaming_width = 2;  // bytes to 0x41, 0x42, 0x41, 0x42
    EXPECT_EQ(cpu.access(h).status, TLM_OK_RESPONSE);
  });
  expect_clean(b.checker);
  const auto& t = b.checker.transfers();
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].addr, 0x40u);
  EXPECT_EQ(t[0].wdata, 0x04030201u);
  EXPECT_EQ(t[1].addr, 0x40u);
  EXPECT_EQ(t[1].wdata, 0x08070605u);
  EXPECT_EQ(t[2].strb, 0x6u);
  EXPECT_EQ(t[2].wdata, 0x00221100u);
  EXPECT_EQ(t[3].strb, 0x6u);
  EXPECT_EQ(t[3].wdata, 0x00443300u);
  EXPECT_EQ(b.mem.word(0x40), 0x08443305u);
}

TEST(Loopback, WordsWithoutAnEnabledByteAreNotTransferred) {
  Loopback b;
  b.run([&](Initiator& cpu) {
    std::vector<unsigned char> be(12, 0x00);
    for (unsigned i = 4; i < 8; ++i) be[i] = 0xFF;
    Result r = cpu.access(write_bytes(0x200, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, be));
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    EXPECT_EQ(r.end, ns(30)) << "one transfer";
    Access none = write_bytes(0x300, {1, 2, 3, 4}, {0, 0, 0, 0});
    none.delay = ns(7);
    r = cpu.access(none);
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    EXPECT_EQ(r.end, ns(30)) << "nothing to transfer: no time passes";
    EXPECT_EQ(r.delay, ns(7)) << "and the caller's delay is left to it";
  });
  expect_clean(b.checker);
  ASSERT_EQ(b.checker.transfers().size(), 1u);
  EXPECT_EQ(b.checker.transfers()[0].addr, 0x204u);
  EXPECT_EQ(b.checker.transfers()[0].wdata, 0x08070605u);
  EXPECT_EQ(b.mem.word(0x200), 0u);
  EXPECT_EQ(b.mem.word(0x208), 0u);
}

TEST(Loopback, PprotCarriesTheApbProtExtensionBothWays) {
  Loopback b;
  ApbProt secure_instr;
  secure_instr.privileged = true;
  secure_instr.nonsecure = false;
  secure_instr.instruction = true;
  b.run([&](Initiator& cpu) {
    cpu.write32(0x0, 1);                            // no extension
    cpu.write32(0x4, 2, secure_instr);              // PPROT 0b101
    cpu.read32(0x8, ApbProt(/*is_privileged=*/true));  // PPROT 0b011
  });
  expect_clean(b.checker);
  const auto& t = b.checker.transfers();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].prot, 0x2u);
  EXPECT_EQ(t[1].prot, 0x5u);
  EXPECT_EQ(t[2].prot, 0x3u);
  const auto& s = b.mem.seen;
  ASSERT_EQ(s.size(), 3u);
  for (const Seen& x : s) EXPECT_TRUE(x.has_prot) << "ApbToTlm always states PPROT";
  EXPECT_FALSE(s[0].prot.privileged);
  EXPECT_TRUE(s[0].prot.nonsecure);
  EXPECT_FALSE(s[0].prot.instruction);
  EXPECT_TRUE(s[1].prot.privileged);
  EXPECT_FALSE(s[1].prot.nonsecure);
  EXPECT_TRUE(s[1].prot.instruction);
  EXPECT_TRUE(s[2].prot.privileged);
  EXPECT_TRUE(s[2].prot.nonsecure);
  EXPECT_FALSE(s[2].prot.instruction);
}

TEST(Loopback, ATargetErrorIsPslverrAndAGenericErrorStatus) {
  Loopback b;
  b.mem.status_at[0x80] = tlm::TLM_ADDRESS_ERROR_RESPONSE;
  b.mem.status_at[0x84] = tlm::TLM_INCOMPLETE_RESPONSE;  // a target that never answered
  b.mem.set_word(0x80, 0x01020304);
  b.run([&](Initiator& cpu) {
    Result r = cpu.write32(0x80, 0xFFFFFFFF);
    EXPECT_EQ(r.status, tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(r.end, ns(30)) << "an error is a complete transfer";
    r = cpu.access(read_bytes(0x80, {5, 5, 5, 5}));
    EXPECT_EQ(r.status, tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(r.data, (std::vector<unsigned char>{5, 5, 5, 5})) << "a failed read leaves the buffer alone";
    r = cpu.read32(0x84);
    EXPECT_EQ(r.status, tlm::TLM_GENERIC_ERROR_RESPONSE);
    r = cpu.read32(0x88);
    EXPECT_EQ(r.status, TLM_OK_RESPONSE) << "the next transfer is unaffected";
  });
  expect_clean(b.checker);
  const auto& t = b.checker.transfers();
  ASSERT_EQ(t.size(), 4u);
  EXPECT_TRUE(t[0].slverr);
  EXPECT_TRUE(t[1].slverr);
  EXPECT_EQ(t[1].rdata, 0u) << "PRDATA is 0 with PSLVERR";
  EXPECT_TRUE(t[2].slverr);
  EXPECT_FALSE(t[3].slverr);
  EXPECT_EQ(b.mem.word(0x80), 0x01020304u);
  EXPECT_EQ(b.master.stats().slave_errors, 3u);
  EXPECT_EQ(b.slave.stats().errors, 3u);
}

TEST(Loopback, ThePslverrStatusIsConfigurable) {
  LoopbackConfig cfg;
  cfg.master.slverr_status = tlm::TLM_ADDRESS_ERROR_RESPONSE;
  Loopback b(cfg);
  b.mem.status_at[0x80] = tlm::TLM_GENERIC_ERROR_RESPONSE;
  b.run([&](Initiator& cpu) { EXPECT_EQ(cpu.read32(0x80).status, tlm::TLM_ADDRESS_ERROR_RESPONSE); });
  expect_clean(b.checker);
}

TEST(Loopback, PslverrStopsASplitAccessAfterTheFailingWord) {
  Loopback b;
  b.mem.status_at[0x80] = tlm::TLM_ADDRESS_ERROR_RESPONSE;
  b.run([&](Initiator& cpu) {
    const Result r = cpu.access(write_bytes(0x7C, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
    EXPECT_EQ(r.status, tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(r.end, ns(50)) << "two transfers: the second failed, the third never started";
  });
  expect_clean(b.checker);
  ASSERT_EQ(b.checker.transfers().size(), 2u);
  EXPECT_FALSE(b.checker.transfers()[0].slverr);
  EXPECT_TRUE(b.checker.transfers()[1].slverr);
  EXPECT_EQ(b.mem.word(0x7C), 0x04030201u) << "the word before the error was written";
  EXPECT_EQ(b.mem.word(0x84), 0u) << "the word after it was not";
  EXPECT_EQ(b.mem.seen.size(), 2u);
}

TEST(Loopback, TwoInitiatorsGetBackToBackTransfers) {
  LoopbackConfig cfg;
  cfg.initiators = 2;
  Loopback b(cfg);
  b.run(
      [&](Initiator& cpu) {
        const Result r = cpu.write32(0x10, 0x1111);  // posted at 0
        EXPECT_EQ(r.end, ns(30));
      },
      [&](Initiator& cpu) {
        Access a = write_bytes(0x14, le_bytes(0x2222));
        a.delay = ns(5);  // posted at 5, while the first is in flight
        const Result r = cpu.access(a);
        EXPECT_EQ(r.status, TLM_OK_RESPONSE);
        EXPECT_EQ(r.end, ns(50)) << "set up at 30, the edge the first completed at";
      });
  expect_clean(b.checker);
  const auto& t = b.checker.transfers();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].setup_cycle, t[0].end_cycle + 1);
  EXPECT_EQ(b.mem.word(0x10), 0x1111u);
  EXPECT_EQ(b.mem.word(0x14), 0x2222u);
}

TEST(Loopback, WhatThePinsCannotCarryIsRejectedWithoutTouchingThem) {
  LoopbackConfig cfg;
  cfg.addr_bits = 12;
  Loopback b(cfg);
  b.run([&](Initiator& cpu) {
    auto expect = [&](Access a, tlm::tlm_response_status status, const char* why) {
      a.delay = ns(5);
      const Result r = cpu.access(a);
      EXPECT_EQ(r.status, status) << why;
      EXPECT_EQ(r.delay, ns(5)) << why << ": the delay is the caller's";
      EXPECT_EQ(r.end, sc_core::SC_ZERO_TIME) << why << ": no time passes";
    };
    expect(write_bytes(0x1000, {1, 2, 3, 4}), tlm::TLM_ADDRESS_ERROR_RESPONSE, "past a 12-bit PADDR");
    expect(write_bytes(0xFFE, {1, 2, 3, 4}), tlm::TLM_ADDRESS_ERROR_RESPONSE, "the last two bytes past it");
    expect(write_bytes(0x10, {1, 2, 3, 4}, {0x12, 0xFF, 0xFF, 0xFF}), tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE,
           "a byte enable neither 0x00 nor 0xFF");
    Access be0 = write_bytes(0x10, {1, 2, 3, 4});
    be0.be_length_zero = true;
    expect(be0, tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, "byte enables of length 0");
    Access empty = write_bytes(0x10, {1, 2, 3, 4});
    empty.length = 0;
    expect(empty, tlm::TLM_BURST_ERROR_RESPONSE, "no bytes");
    Access sw0 = write_bytes(0x10, {1, 2, 3, 4});
    sw0.streaming_width = 0;
    expect(sw0, tlm::TLM_BURST_ERROR_RESPONSE, "streaming width 0");
    Access null = write_bytes(0x10, {1, 2, 3, 4});
    null.null_data = true;
    expect(null, tlm::TLM_GENERIC_ERROR_RESPONSE, "no data pointer");
    Access ignore = write_bytes(0x10, {1, 2, 3, 4});
    ignore.cmd = tlm::TLM_IGNORE_COMMAND;
    expect(ignore, TLM_OK_RESPONSE, "TLM_IGNORE_COMMAND");
    // The last word a 12-bit PADDR reaches is fine: posted at 5, set up at 10.
    Access last = write_bytes(0xFFC, {1, 2, 3, 4});
    last.delay = ns(5);
    const Result r = cpu.access(last);
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    EXPECT_EQ(r.end, ns(30));
  });
  expect_clean(b.checker);
  EXPECT_EQ(b.checker.transfers().size(), 1u);
  EXPECT_EQ(b.master.stats().rejected, 7u);
  EXPECT_EQ(b.master.stats().transactions, 1u);
  EXPECT_EQ(b.mem.seen.size(), 1u);
}

// A caller that cannot wait: an SC_METHOD.
struct MethodCaller : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<MethodCaller> socket;
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
  SC_HAS_PROCESS(MethodCaller);
  explicit MethodCaller(sc_core::sc_module_name n) : sc_core::sc_module(n), socket("socket") { SC_METHOD(call); }
  void call() {
    std::uint32_t word = 0;
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_data_ptr(reinterpret_cast<unsigned char*>(&word));
    t.set_data_length(4);
    t.set_streaming_width(4);
    sc_time d = sc_core::SC_ZERO_TIME;
    socket->b_transport(t, d);
    status = t.get_response_status();
  }
};

TEST(Loopback, ACallerThatCannotWaitGetsAnErrorNotACrash) {
  Loopback b;
  MethodCaller method("method");
  method.socket.bind(b.fanin.target);
  // Before the simulation runs: straight into the bridge's forward interface.
  std::uint32_t word = 0;
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_data_ptr(reinterpret_cast<unsigned char*>(&word));
  t.set_data_length(4);
  t.set_streaming_width(4);
  sc_time d = sc_core::SC_ZERO_TIME;
  b.master.socket.get_base_export()->b_transport(t, d);
  EXPECT_EQ(t.get_response_status(), tlm::TLM_GENERIC_ERROR_RESPONSE);
  b.run([&](Initiator&) {});
  EXPECT_EQ(method.status, tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(b.master.stats().rejected, 2u);
  EXPECT_EQ(sc_core::sc_report_handler::get_count("/pevp/apb/tlm_to_apb/not_a_thread"), 2);
  EXPECT_TRUE(b.checker.transfers().empty());
}

// Drives PRESETn low over [35, 65) ns: sampled low by the edges at 40, 50 and 60.
struct ResetPulse : sc_core::sc_module {
  SC_HAS_PROCESS(ResetPulse);
  ResetPulse(sc_core::sc_module_name n, ApbBus& bus) : sc_core::sc_module(n), bus_(bus) { SC_THREAD(main); }
  void main() {
    sc_core::wait(ns(35));
    bus_.presetn.write(false);
    sc_core::wait(ns(30));
    bus_.presetn.write(true);
  }
  ApbBus& bus_;
};

TEST(Loopback, ResetEndsTheTransferInFlightAndRefusesNewOnes) {
  Loopback b;
  ResetPulse reset("reset", b.bus);
  b.mem.latency_at[0x40] = ns(50);  // 5 wait states: still in its access phase at 40
  b.run([&](Initiator& cpu) {
    Result r = cpu.write32(0x40, 1);
    EXPECT_EQ(r.status, tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(r.end, ns(40)) << "the edge that sampled PRESETn low";
    r = cpu.write32(0x44, 2);  // posted at 40, its edge (50) is in reset
    EXPECT_EQ(r.status, tlm::TLM_GENERIC_ERROR_RESPONSE);
    EXPECT_EQ(r.end, ns(50));
    sc_core::wait(ns(20));  // 70: out of reset
    r = cpu.write32(0x48, 3);
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    EXPECT_EQ(r.end, ns(100));
  });
  expect_clean(b.checker);
  EXPECT_EQ(b.checker.completed_transfers(), 1u);
  EXPECT_EQ(b.master.stats().reset_aborts, 2u);
  EXPECT_EQ(b.slave.stats().reset_aborts, 1u);
  ASSERT_EQ(b.mem.seen.size(), 2u) << "0x44 never reached the pins";
  EXPECT_EQ(b.mem.word(0x40), 1u) << "the target had taken the write before the reset cut the transfer";
  EXPECT_EQ(b.mem.word(0x48), 3u);
}

TEST(Loopback, ALongStallIsReportedOnceAndWaitedOut) {
  LoopbackConfig cfg;
  cfg.master.stall_warning_cycles = 2;
  Loopback b(cfg);
  b.mem.latency = ns(50);
  b.run([&](Initiator& cpu) {
    const Result r = cpu.read32(0x0);
    EXPECT_EQ(r.status, TLM_OK_RESPONSE);
    EXPECT_EQ(r.end, ns(80)) << "10 + (2 + 5) x 10";
  });
  expect_clean(b.checker);
  EXPECT_EQ(sc_core::sc_report_handler::get_count("/pevp/apb/tlm_to_apb/stall"), 1);
}

TEST(ApbConfig, BadWidthsAreRejectedAtConstruction) {
  EXPECT_THROW(ApbBus("bus0", ApbBusConfig{0}), std::invalid_argument);
  EXPECT_THROW(ApbBus("bus33", ApbBusConfig{33}), std::invalid_argument);
  TlmToApbConfig wide;
  wide.addr_bits = 40;
  EXPECT_THROW(TlmToApb("wide", wide), std::invalid_argument);
  ApbCheckerConfig cwide;
  cwide.addr_bits = 33;
  EXPECT_THROW(ApbChecker("cwide", cwide), std::invalid_argument);
  // A configured width must match the bus it connects to.
  ApbBus bus12("bus12", ApbBusConfig{12});
  TlmToApbConfig m16;
  m16.addr_bits = 16;
  TlmToApb master16("master16", m16);
  EXPECT_THROW(master16.connect(bus12), std::invalid_argument);
  ApbCheckerConfig c16;
  c16.addr_bits = 16;
  ApbChecker checker16("checker16", c16);
  EXPECT_THROW(checker16.connect(bus12), std::invalid_argument);
}

}  // namespace
