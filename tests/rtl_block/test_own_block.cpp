// docs/cosim.md section 4 as a test: an own APB4 block (my_block.v: a PSTRB-masked scratch register at 0x000 with
// reset 0xA5A50000, a write counter at 0x004, one wait state, PSLVERR elsewhere), Verilated, on the platform's
// system bus behind TlmToApb, reached by a driver program -- with the protocol checker on its pins.
#include <gtest/gtest.h>

#include "Vmy_block.h"
#include "pevp/apb/apb_bus.h"
#include "pevp/apb/apb_checker.h"
#include "pevp/apb/tlm_to_apb.h"
#include "pevp/platform/config.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/virtual_platform.h"

namespace {

constexpr std::uint64_t kBase = 0x3020000;  // a free window of the system bus (docs/datapath.md's map)

TEST(OwnBlock, ADriverReachesAVerilatedApbBlockThroughTheBridge) {
  pevp::platform::VirtualPlatform vp(pevp::platform::preset(pevp::isa::Generation::MARIANA));
  sc_core::sc_clock pclk("pclk", sc_core::sc_time(10, sc_core::SC_NS));
  pevp::apb::ApbBus bus("my_apb", pevp::apb::ApbBusConfig{12});
  pevp::apb::TlmToApb bridge("my_bridge");
  bridge.pclk(pclk);
  bridge.connect(bus);
  pevp::apb::ApbChecker checker("my_checker");
  checker.pclk(pclk);
  checker.connect(bus);
  Vmy_block block("my_block");
  block.PCLK(pclk);
  block.PRESETn(bus.presetn);
  block.PSEL(bus.psel);
  block.PENABLE(bus.penable);
  block.PWRITE(bus.pwrite);
  block.PADDR(bus.paddr);
  block.PWDATA(bus.pwdata);
  block.PSTRB(bus.pstrb);
  block.PPROT(bus.pprot);
  block.PRDATA(bus.prdata);
  block.PREADY(bus.pready);
  block.PSLVERR(bus.pslverr);
  vp.platform().bus.map("my_block", kBase, 0x1000, bridge.socket);

  vp.run([&](pevp::platform::Driver& d) {
    // Power-on reset: PRESETn low for a cycle (the block's flops reset on its falling edge).
    bus.presetn.write(false);
    sc_core::wait(20, sc_core::SC_NS);
    bus.presetn.write(true);
    sc_core::wait(20, sc_core::SC_NS);
    EXPECT_EQ(d.read32(kBase), 0xA5A50000u) << "the block's reset value";
    d.write32(kBase, 0x12345678u);
    EXPECT_EQ(d.read32(kBase), 0x12345678u);
    // A 2-byte write at +2 is one transfer with PSTRB 0b1100.
    const std::uint16_t half = 0xBEEF;
    d.write(kBase + 2, &half, sizeof half);
    EXPECT_EQ(d.read32(kBase), 0xBEEF5678u);
    EXPECT_EQ(d.read32(kBase + 4), 2u) << "two writes accepted";
    EXPECT_THROW(d.read32(kBase + 8), std::exception) << "PSLVERR is an error to the driver";
  });
  EXPECT_TRUE(checker.violations().empty()) << checker.report();
  EXPECT_EQ(bridge.stats().transfers, 7u);
  EXPECT_EQ(bridge.stats().wait_cycles, 7u) << "one wait state per transfer";
  EXPECT_EQ(bridge.stats().slave_errors, 1u);
}

}  // namespace
