// The generated register-file RTL, Verilated, driven through its APB4 pins by a pin-level master (tests/apb's
// PinMaster). Expectations are the schemas' values as docs/registers.md lists them: top spare_register0 @ 0x008
// (RW, reset 0), spare_register2 @ 0x010 (RW, reset 0xffffffff), queue_cfg @ 0x000; the protected face's
// throttle_cfg @ 0x000 (reset 0x1ff, disable_throttle [8:0] + hw_only_en_transfer_cnt_upd [12:9]); the per-tile
// counters of the top face (cntr_lsb [31:0] + cntr_msb [15:0], 48 bits). The RTL is reset at power-on (time 0).
#include <gtest/gtest.h>

#include "apb_test_util.h"
#include "pevp/regfile/register_file.h"
#include "pevp/regfile_rtl/rtl_regfile.h"

namespace {

using namespace apbt;
using pevp::regfile_rtl::Face;
using pevp::regfile_rtl::RtlRegFile;

constexpr std::uint32_t kUnpriv = pprot::kNonsecure;
constexpr std::uint32_t kPriv = pprot::kNonsecure | pprot::kPrivileged;

struct RtlOnPins {
  sc_core::sc_clock clk;
  ApbBus bus;
  PinMaster cpu;
  ApbChecker checker;
  std::unique_ptr<RtlRegFile> rtl;
  RtlOnPins(Face face)
      : clk("pclk", kT),
        bus("apb", ApbBusConfig{pevp::regfile_rtl::face_desc(face).addr_width}),
        cpu("cpu", bus),
        checker("checker") {
    cpu.pclk(clk);
    checker.pclk(clk);
    checker.connect(bus);
    pevp::regfile_rtl::RtlRegFileConfig cfg;
    cfg.privileged_only = face == Face::Protected;
    rtl = pevp::regfile_rtl::make_rtl_regfile("rtl", face, bus, cfg);
    rtl->pclk(clk);
  }
  void run(std::function<void(PinMaster&)> script) {
    cpu.script = std::move(script);
    sc_core::sc_start(sc_time(100, sc_core::SC_US));
    EXPECT_TRUE(cpu.done);
    EXPECT_TRUE(checker.violations().empty()) << checker.report();
  }
};

TEST(RtlRegfile, EveryRegisterOfEveryFaceReadsItsResetValue) {
  // One bench per process: the four faces side by side on their own buses.
  sc_core::sc_clock clk("pclk", kT);
  std::vector<std::unique_ptr<ApbBus>> buses;
  std::vector<std::unique_ptr<RtlRegFile>> rtls;
  for (Face f : pevp::regfile_rtl::kFaces) {
    buses.push_back(std::make_unique<ApbBus>(
        ("apb_" + std::string(pevp::regfile_rtl::face_name(f))).c_str(),
        ApbBusConfig{pevp::regfile_rtl::face_desc(f).addr_width}));
    pevp::regfile_rtl::RtlRegFileConfig cfg;
    cfg.privileged_only = f == Face::Protected;
    rtls.push_back(pevp::regfile_rtl::make_rtl_regfile(
        ("rtl_" + std::string(pevp::regfile_rtl::face_name(f))).c_str(), f, *buses.back(), cfg));
    rtls.back()->pclk(clk);
  }
  sc_core::sc_start(sc_time(20, sc_core::SC_NS));
  for (const auto& rtl : rtls) {
    const auto& d = rtl->desc();
    for (std::size_t i = 0; i < d.num_registers; ++i)
      EXPECT_EQ(rtl->value(i), pevp::regfile::reset_value(d.registers[i]))
          << d.name << " register " << d.registers[i].name;
  }
}

TEST(RtlRegfile, ReadWriteMasksStrobesAndErrorsOnTheTopFace) {
  RtlOnPins b(Face::Top);
  b.run([&](PinMaster& m) {
    EXPECT_EQ(m.read(0x010).rdata, 0xFFFFFFFFu) << "spare_register2's reset";
    PinMaster::Out o = m.write(0x008, 0x1234A5A5);
    EXPECT_FALSE(o.slverr);
    EXPECT_EQ(o.waits, 0u);
    EXPECT_EQ(m.read(0x008).rdata, 0x1234A5A5u);
    o = m.write(0x008, 0xFFFFFFFF, kUnpriv, 0x5);  // lanes 0 and 2 only
    EXPECT_EQ(m.read(0x008).rdata, 0x12FFA5FFu);
    o = m.write(0x008, 0, kUnpriv, 0x0);  // no lane: nothing changes, no error
    EXPECT_FALSE(o.slverr);
    EXPECT_EQ(m.read(0x008).rdata, 0x12FFA5FFu);
    // Misaligned and unmapped: PSLVERR, PRDATA 0, nothing written.
    o = m.read(0x009);
    EXPECT_TRUE(o.slverr);
    EXPECT_EQ(o.rdata, 0u);
    o = m.write(0x00A, 0);
    EXPECT_TRUE(o.slverr);
    EXPECT_EQ(m.read(0x008).rdata, 0x12FFA5FFu);
    o = m.read(0xFFC);
    EXPECT_TRUE(o.slverr);
  });
}

TEST(RtlRegfile, CountersAddTheirIncrementEveryEdgeWrapAt48BitsAndClear) {
  RtlOnPins b(Face::Top);
  ASSERT_FALSE(b.rtl->counters().empty());
  const auto& d = b.rtl->desc();
  const auto c0 = b.rtl->counters()[0];
  const std::uint32_t lsb_off = d.registers[c0.lsb].offset, msb_off = d.registers[c0.msb].offset;
  b.run([&](PinMaster& m) {
    sc_core::wait(b.cpu.pclk.posedge_event());
    b.rtl->increment(0, 0xFFFFFFFFu);
    for (int i = 0; i < 3; ++i) sc_core::wait(b.cpu.pclk.posedge_event());
    b.rtl->increment(0, 0);
    // Three edges of 2^32 - 1: 3 * 2^32 - 3 = 0x2_FFFF_FFFD.
    EXPECT_EQ(m.read(lsb_off).rdata, 0xFFFFFFFDu);
    EXPECT_EQ(m.read(msb_off).rdata, 0x2u);
    EXPECT_EQ(b.rtl->count(0), 0x2FFFFFFFDull);
    // A write to a counter is ignored without an error.
    PinMaster::Out o = m.write(lsb_off, 0);
    EXPECT_FALSE(o.slverr);
    EXPECT_EQ(m.read(lsb_off).rdata, 0xFFFFFFFDu);
    b.rtl->clear_counters(true);
    sc_core::wait(b.cpu.pclk.posedge_event());
    b.rtl->clear_counters(false);
    sc_core::wait(sc_core::SC_ZERO_TIME);
    EXPECT_EQ(m.read(lsb_off).rdata, 0u);
    EXPECT_EQ(b.rtl->count(0), 0u);
  });
}

TEST(RtlRegfile, ThePulseFiresForOneCycleInItsStrobedLane) {
  RtlOnPins b(Face::Top);
  const auto& d = b.rtl->desc();
  std::size_t perf = d.num_registers;
  for (std::size_t i = 0; i < d.num_registers; ++i)
    if (d.registers[i].name == "perf_cntr_cfg") perf = i;
  ASSERT_LT(perf, d.num_registers);
  b.run([&](PinMaster& m) {
    m.write(d.registers[perf].offset, 1u << 4, kUnpriv, 0x2);  // cntr_rst is in lane 0: not strobed
    sc_core::wait(sc_core::SC_ZERO_TIME);
    EXPECT_EQ(b.rtl->pulses(perf), 0u);
    m.write(d.registers[perf].offset, 1u << 4);
    sc_core::wait(sc_core::SC_ZERO_TIME);
    EXPECT_EQ(b.rtl->pulses(perf), 1u << 4);
    sc_core::wait(b.cpu.pclk.posedge_event());
    sc_core::wait(sc_core::SC_ZERO_TIME);
    EXPECT_EQ(b.rtl->pulses(perf), 0u);
  });
}

TEST(RtlRegfile, TheProtectedFaceAnswersOnlyPrivilegedTransfers) {
  RtlOnPins b(Face::Protected);
  b.run([&](PinMaster& m) {
    PinMaster::Out o = m.read(0x000, kUnpriv);
    EXPECT_TRUE(o.slverr);
    EXPECT_EQ(o.rdata, 0u);
    o = m.write(0x000, 0, kUnpriv);
    EXPECT_TRUE(o.slverr);
    o = m.read(0x000, kPriv);
    EXPECT_FALSE(o.slverr);
    EXPECT_EQ(o.rdata, 0x1FFu);
    m.write(0x000, 0xFFFFF0F0u, kPriv);
    EXPECT_EQ(m.read(0x000, kPriv).rdata, 0x10F0u) << "bits [12:0] are stored";
  });
}

TEST(RtlRegfile, AMismatchedConfigurationIsRefused) {
  ApbBus bus("apb", ApbBusConfig{12});
  pevp::regfile_rtl::RtlRegFileConfig cfg;
  cfg.privileged_only = true;
  EXPECT_THROW(pevp::regfile_rtl::make_rtl_regfile("a", Face::Top, bus, cfg), std::invalid_argument);
  ApbBus wide("wide", ApbBusConfig{16});
  EXPECT_THROW(pevp::regfile_rtl::make_rtl_regfile("b", Face::Top, wide), std::invalid_argument);
  EXPECT_THROW(pevp::regfile_rtl::parse_face("bottom"), std::invalid_argument);
}

}  // namespace
