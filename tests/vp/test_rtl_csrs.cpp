// csrs.impl = rtl: the CSR block's top, cluster and protected faces are the generated register RTL, Verilated,
// behind TLM -> APB4 bridges. These tests show the RTL is what the driver and the sequencer use -- writes land in
// its flops and not in the TLM register model, the counters count in its 48-bit counters -- and that what the
// RTL cannot do is refused with the reason. (Every other vp, timing and trace test also runs against the RTL as
// "rtl.<unit>.*".) Register offsets and values are the schemas' (docs/registers.md).
#include <gtest/gtest.h>

#include "pevp/platform/checkpoint.h"
#include "pevp/platform/config.h"
#include "vp_test_util.h"

namespace {

using namespace vpt;
namespace regfile_rtl = pevp::regfile_rtl;

platform::VpConfig rtl_config() {
  platform::VpConfig c = platform::preset(Generation::MARIANA);
  c.csrs_impl = platform::CsrsImpl::Rtl;
  return c;
}

std::size_t index_of(const pevp::regfile::RegFileDesc& d, std::string_view name) {
  for (std::size_t i = 0; i < d.num_registers; ++i)
    if (d.registers[i].name == name) return i;
  ADD_FAILURE() << "no register " << name;
  return 0;
}

TEST(RtlCsrs, DriverWritesReachTheRtlFlopsAndTheSequencersViewNotTheTlmModel) {
  platform::VirtualPlatform vp(rtl_config());
  platform::Platform& p = vp.platform();
  ASSERT_NE(p.rtl_csrs, nullptr);
  const auto& top_desc = p.rtl_csrs->top.rtl().desc();
  const std::size_t spare0 = index_of(top_desc, "spare_register0");
  const std::size_t queue_cfg = index_of(top_desc, "queue_cfg");
  vp.run([&](platform::Driver& d) {
    d.write_field("top", "spare_register0", "spare_register0", 0xC0FFEE11u);
    EXPECT_EQ(d.read_field("top", "spare_register0", "spare_register0"), 0xC0FFEE11u);
    EXPECT_EQ(p.rtl_csrs->top.rtl().value(spare0), 0xC0FFEE11u) << "the RTL's flops hold the write";
    EXPECT_EQ(p.csrs.top.regs().value(spare0), 0u) << "the TLM model is not used";
    EXPECT_FALSE(p.csrs.queue_cfg().fifo_size_sel);
    d.write_field("top", "queue_cfg", "fifo_size_sel", 1);
    EXPECT_EQ(p.rtl_csrs->top.rtl().value(queue_cfg) & 1u, 1u);
    EXPECT_TRUE(p.csrs.queue_cfg().fifo_size_sel) << "the sequencer reads the RTL's output pins";
    // The protected face: privileged only, in the RTL too.
    EXPECT_EQ(d.read_field("protected", "throttle_cfg", "disable_throttle"), 0x1FFu);
    d.write_field("protected", "throttle_cfg", "disable_throttle", 0x0F0u);
    EXPECT_EQ(p.csrs.disable_throttle(), 0x0F0u);
  });
  EXPECT_GT(p.rtl_csrs->top.bridge().stats().transfers, 0u);
  EXPECT_GT(p.rtl_csrs->clock.rising_edges(), 0u);
}

TEST(RtlCsrs, TheCountersCountInTheRtlsCountersAndCntrRstClearsThem) {
  const Generation g = Generation::MARIANA;
  platform::VirtualPlatform vp(rtl_config());
  platform::Platform& p = vp.platform();
  const std::string tile = isa::counter_tile_name(rect({0, 128, 0, 128}), isa::ArrayGeometry{});
  const auto& top_desc = p.rtl_csrs->top.rtl().desc();
  // The matmul bank's counter of the whole-array tile, as the RTL numbers its counters.
  std::size_t matmul_counter = p.rtl_csrs->top.rtl().counters().size();
  for (std::size_t c = 0; c < p.rtl_csrs->top.rtl().counters().size(); ++c) {
    const auto& r = top_desc.registers[p.rtl_csrs->top.rtl().counters()[c].lsb];
    if (r.bundle == kBankBundles[1] && r.name == tile + "_instr_cnt_lsb") matmul_counter = c;
  }
  ASSERT_LT(matmul_counter, p.rtl_csrs->top.rtl().counters().size());
  vp.run([&](platform::Driver& d) {
    d.arm();  // pulses cntr_rst, sets cntr_en
    Bench bench(d, g);
    std::mt19937 rng(21);
    const DtypeCase c{Dtype::BFLOAT16, Fp32Mode::None};
    bench.put_rows(0, 0, random_elems(g, c, 128 * 128, rng), 128);
    std::vector<Step> s = {lw_step(g, ldw(c, 0, 128, 128))};
    for (int i = 0; i < 5; ++i) s.push_back(mm_step(g, mmul(c, 0, psum_addr(0, 0), 128, 128, 8)));
    EXPECT_TRUE(bench.run(s).done);
    EXPECT_EQ(read_tile_counter(d, 0, tile), 1u);
    EXPECT_EQ(read_tile_counter(d, 1, tile), 5u);
    EXPECT_EQ(p.rtl_csrs->top.rtl().count(matmul_counter), 5u) << "the RTL's own 48-bit counter";
    EXPECT_EQ(p.csrs.counter(pevp::regfile::CounterBank::Matmul, tile), 5u);
    EXPECT_EQ(p.csrs.top.regs().value(p.rtl_csrs->top.rtl().counters()[matmul_counter].lsb), 0u)
        << "the TLM model's counter does not move";
    d.write_field("top", "perf_cntr_cfg", "cntr_rst", 1);
    EXPECT_EQ(read_tile_counter(d, 1, tile), 0u) << "cntr_rst's pulse cleared the RTL's counters";
    EXPECT_EQ(p.rtl_csrs->top.rtl().count(matmul_counter), 0u);
  });
}

TEST(RtlCsrs, ACheckpointIsRefusedWithTheReason) {
  platform::VirtualPlatform vp(rtl_config());
  try {
    (void)platform::save_checkpoint(vp.platform());
    FAIL() << "saved a checkpoint of RTL faces";
  } catch (const platform::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("csrs.impl = rtl"), std::string::npos) << e.what();
  }
}

TEST(RtlCsrs, TheConfigurationRefusesRtlWithTheReadZeroPolicy) {
  platform::VpConfig c = rtl_config();
  c.csrs.unmapped = pevp::regfile::UnmappedPolicy::ReadZeroWriteIgnore;
  try {
    platform::validate(c);
    FAIL() << "accepted";
  } catch (const platform::ConfigError& e) {
    EXPECT_EQ(e.key(), "csrs.impl");
    EXPECT_NE(std::string(e.what()).find("csrs.unmapped"), std::string::npos) << e.what();
  }
  platform::VpConfig ok = rtl_config();
  platform::apply_override(ok, "csrs.impl=TLM");
  EXPECT_EQ(ok.csrs_impl, platform::CsrsImpl::Tlm);
  EXPECT_THROW(platform::apply_override(ok, "csrs.impl=verilog"), platform::ConfigError);
}

}  // namespace
