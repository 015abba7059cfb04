// The register-file engine's access semantics on the real generated tables.
#include <gtest/gtest.h>

#include "pevp/regfile/register_file.h"
#include "tpb_arr_seq_top_host_visible_regs.h"

namespace {
using namespace pevp::regfile;
namespace top = pevp::regs::tpb_arr_seq_top_host_visible;
namespace cfg = top::arr_seq_cfg;

TEST(RegisterFile, RwFieldsAreWriteMasked) {
  RegisterFile rf(top::regfile_desc());
  ASSERT_EQ(rf.bus_write(cfg::queue_cfg::kOffset, 0xFFFFFFFFu), RegisterFile::BusStatus::Ok);
  std::uint32_t v = 0;
  ASSERT_EQ(rf.bus_read(cfg::queue_cfg::kOffset, v), RegisterFile::BusStatus::Ok);
  EXPECT_EQ(v, 0x111u) << "only fifo_size_sel (0), bypass_peregwrite_instr (4), disable_dependency_check (8)";
  EXPECT_EQ(rf.get(rf.field("queue_cfg", "disable_dependency_check")), 1u);
}

TEST(RegisterFile, RoWritesAreIgnoredAndCounted) {
  RegisterFile rf(top::regfile_desc());
  const auto c = rf.counter("arr_seq_ififo_perf_matmul.tile_128x128_tile0_instr_cnt_lsb");
  rf.write_counter(c, 5);
  const std::uint32_t off = top::arr_seq_ififo_perf_matmul::kBase;
  EXPECT_EQ(rf.bus_write(off, 0xDEADBEEF), RegisterFile::BusStatus::Ok);
  std::uint32_t v = 0;
  rf.bus_read(off, v);
  EXPECT_EQ(v, 5u);
  EXPECT_EQ(rf.ignored_ro_writes(), 1u);
  rf.bus_write(off, 5);  // writing the value it already holds changes nothing: not counted
  EXPECT_EQ(rf.ignored_ro_writes(), 1u);
}

TEST(RegisterFile, PulseOnWReadsZeroAndFiresOnce) {
  RegisterFile rf(top::regfile_desc());
  int pulses = 0;
  rf.on_pulse([&](const RegisterDesc& r, const FieldDesc& f) {
    EXPECT_EQ(r.name, "perf_cntr_cfg");
    EXPECT_EQ(f.name, "cntr_rst");
    ++pulses;
  });
  rf.bus_write(cfg::perf_cntr_cfg::kOffset, 1u << 4 | 1u);
  EXPECT_EQ(pulses, 1);
  std::uint32_t v = 0;
  rf.bus_read(cfg::perf_cntr_cfg::kOffset, v);
  EXPECT_EQ(v, 0x1u) << "cntr_en stays, cntr_rst reads 0";
  rf.bus_write(cfg::perf_cntr_cfg::kOffset, 1u, 0xFFu);  // bit 4 clear: no pulse
  EXPECT_EQ(pulses, 1);
  rf.bus_write(cfg::perf_cntr_cfg::kOffset, 1u << 4, 0xFF00u);  // byte 0 disabled: bit 4 not written
  EXPECT_EQ(pulses, 1);
}

TEST(RegisterFile, ByteEnablesActAsPstrb) {
  RegisterFile rf(top::regfile_desc());
  const std::uint32_t off = cfg::spare_register0::kOffset;
  rf.bus_write(off, 0x11223344u);
  rf.bus_write(off, 0xAABBCCDDu, 0x0000FF00u);
  std::uint32_t v = 0;
  rf.bus_read(off, v);
  EXPECT_EQ(v, 0x1122CC44u);
}

TEST(RegisterFile, CountersAre48BitAndWrap) {
  RegisterFile rf(top::regfile_desc());
  const auto c = rf.counter("arr_seq_ififo_perf_weight_load.tile_32x32_tile15_instr_cnt_lsb");
  rf.write_counter(c, 0x0000FFFFFFFFFFFEull);
  rf.add_to_counter(c);
  EXPECT_EQ(rf.read_counter(c), 0xFFFFFFFFFFFFull);
  rf.add_to_counter(c);
  EXPECT_EQ(rf.read_counter(c), 0u) << "wraps at 2^48";
  rf.write_counter(c, 0x123456789ABCull);
  std::uint32_t lsb = 0, msb = 0;
  rf.peek(rf.desc().registers[c.lsb_reg].offset, lsb);
  rf.peek(rf.desc().registers[c.msb_reg].offset, msb);
  EXPECT_EQ(lsb, 0x56789ABCu);
  EXPECT_EQ(msb, 0x1234u);
  EXPECT_EQ(rf.desc().registers[c.msb_reg].offset, rf.desc().registers[c.lsb_reg].offset + 4) << "_msb at +4";
  EXPECT_EQ((static_cast<std::uint64_t>(msb & 0xFFFF) << 32) | lsb, 0x123456789ABCull) << "003 section 6 formula";
}

TEST(RegisterFile, UnmappedPolicies) {
  RegisterFile strict(top::regfile_desc());
  std::uint32_t v = 0x5a5a5a5a;
  EXPECT_EQ(strict.bus_read(0x018, v), RegisterFile::BusStatus::Unmapped) << "0x018..0x03F hold no registers";
  EXPECT_EQ(v, 0x5a5a5a5au);
  EXPECT_EQ(strict.bus_write(0x900, 1), RegisterFile::BusStatus::Unmapped);
  RegisterFile lax(top::regfile_desc(), UnmappedPolicy::ReadZeroWriteIgnore);
  EXPECT_EQ(lax.bus_read(0x018, v), RegisterFile::BusStatus::Ok);
  EXPECT_EQ(v, 0u);
  EXPECT_EQ(lax.bus_write(0x018, 1), RegisterFile::BusStatus::Ok);
  EXPECT_EQ(lax.unmapped_accesses(), 2u);
}

TEST(RegisterFile, ResetRestoresEveryResetValue) {
  RegisterFile rf(top::regfile_desc());
  for (std::size_t i = 0; i < rf.desc().num_registers; ++i) rf.poke(rf.desc().registers[i].offset, 0x5555AAAAu);
  rf.reset();
  for (std::size_t i = 0; i < rf.desc().num_registers; ++i) {
    std::uint32_t v = 0;
    rf.peek(rf.desc().registers[i].offset, v);
    EXPECT_EQ(v, reset_value(rf.desc().registers[i])) << rf.desc().registers[i].name;
  }
  std::uint32_t spare2 = 0;
  rf.peek(cfg::spare_register2::kOffset, spare2);
  EXPECT_EQ(spare2, 0xffffffffu);
}

TEST(RegisterFile, NamesResolveOrFailPrecisely) {
  RegisterFile rf(top::regfile_desc());
  EXPECT_NO_THROW(rf.field("queue_cfg", "fifo_size_sel"));
  try {
    rf.field("queue_cfg", "fifo_depth");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'queue_cfg' has no field 'fifo_depth'"), std::string::npos) << e.what();
  }
  try {
    rf.reg("tile_64x64_tile2_instr_cnt_lsb");
    FAIL() << "the three perf banks share this name";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ambiguous"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rf.reg("arr_seq_ififo_perf_pe_regwrite.tile_64x64_tile2_instr_cnt_lsb").bundle,
            "arr_seq_ififo_perf_pe_regwrite");
}

}  // namespace
