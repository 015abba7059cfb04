// The generated pevp::regfile tables (pevp/regfile/desc.h) agree with the
// generated driver headers and with the spec's census (003 section 2).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "pevp/regfile/desc.h"
#include "tpb_arr_seq_cluster_host_visible_regs.h"
#include "tpb_arr_seq_top_host_visible_regs.h"
#include "tpb_arr_seq_top_protected_regs.h"
#include "vp_seq_regs.h"

namespace {

using pevp::regfile::Access;
using pevp::regfile::RegFileDesc;

void expect_consistent(const RegFileDesc& rf) {
  SCOPED_TRACE(std::string(rf.name));
  std::set<std::uint32_t> offsets;
  std::set<std::uint32_t> definitions;
  std::size_t fields = 0;
  std::uint32_t prev = 0;
  for (std::size_t i = 0; i < rf.num_registers; ++i) {
    const auto& r = rf.registers[i];
    EXPECT_TRUE(offsets.insert(r.offset).second) << r.name;
    EXPECT_EQ(r.offset % 4, 0u) << r.name;
    EXPECT_LE(r.offset + 4, rf.size_bytes) << r.name;
    if (i > 0) {
      EXPECT_GT(r.offset, prev) << r.name;
    }
    prev = r.offset;
    EXPECT_LT(r.definition, rf.num_definitions);
    EXPECT_GT(r.num_fields, 0u) << r.name;
    std::uint32_t used = 0;
    for (std::size_t f = 0; f < r.num_fields; ++f) {
      const auto& fd = r.fields[f];
      EXPECT_LE(fd.lsb + fd.width, 32u) << r.name << "." << fd.name;
      EXPECT_EQ(used & fd.mask(), 0u) << r.name << "." << fd.name;
      used |= fd.mask();
      EXPECT_EQ(((std::uint64_t{fd.reset} << fd.lsb) & ~std::uint64_t{fd.mask()}), 0u) << fd.name;
    }
    if (definitions.insert(r.definition).second) fields += r.num_fields;
  }
  EXPECT_EQ(definitions.size(), rf.num_definitions);
  EXPECT_EQ(fields, rf.num_field_definitions);
}

}  // namespace

TEST(Tables, TopCensus) {
  const RegFileDesc& rf = pevp::regs::tpb_arr_seq_top_host_visible::regfile_desc();
  expect_consistent(rf);
  EXPECT_EQ(rf.name, "tpb_arr_seq_top_host_visible");
  EXPECT_EQ(rf.addr_width, 12u);
  EXPECT_EQ(rf.size_bytes, 0x1000u);
  EXPECT_EQ(rf.interface, "APB");
  EXPECT_EQ(rf.flavor, "POSEDGE");
  EXPECT_EQ(rf.data_width, 32u);
  EXPECT_FALSE(rf.vp_defined);
  EXPECT_EQ(rf.num_bundles, 7u);
  EXPECT_EQ(rf.num_registers, 358u);
  EXPECT_EQ(rf.num_definitions, 305u);
  EXPECT_EQ(rf.num_field_definitions, 308u);
  EXPECT_EQ(rf.registers[0].offset, 0x000u);
  EXPECT_EQ(rf.registers[rf.num_registers - 1].offset, 0x840u);

  std::set<std::uint32_t> ro, rw;
  int pulses = 0, ones = 0;
  for (std::size_t i = 0; i < rf.num_registers; ++i) {
    const auto& r = rf.registers[i];
    bool all_ro = true;
    for (std::size_t f = 0; f < r.num_fields; ++f) {
      all_ro = all_ro && r.fields[f].access == Access::RO;
      if (r.instance == 0 && r.fields[f].access == Access::PulseOnW) ++pulses;
      if (r.instance == 0 && r.fields[f].reset == 0xffffffffu) ++ones;
      if (r.fields[f].reset != 0) {
        EXPECT_TRUE(r.def_name == "spare_register2" || r.def_name == "spare_register3");
      }
    }
    (all_ro ? ro : rw).insert(r.definition);
  }
  EXPECT_EQ(ro.size(), 299u);
  EXPECT_EQ(rw.size(), 6u);
  EXPECT_EQ(pulses, 1);
  EXPECT_EQ(ones, 2);
}

TEST(Tables, TopMatchesHeader) {
  namespace top = pevp::regs::tpb_arr_seq_top_host_visible;
  const RegFileDesc& rf = top::regfile_desc();
  EXPECT_EQ(rf.num_registers, top::kNumRegisters);
  EXPECT_EQ(rf.num_definitions, top::kNumDefinitions);
  const auto& q = rf.registers[0];
  EXPECT_EQ(q.name, "queue_cfg");
  EXPECT_EQ(q.bundle, "arr_seq_cfg");
  EXPECT_EQ(q.offset, top::arr_seq_cfg::queue_cfg::kOffset);
  ASSERT_EQ(q.num_fields, 3u);
  EXPECT_EQ(q.fields[2].name, "disable_dependency_check");
  EXPECT_EQ(q.fields[2].mask(), top::arr_seq_cfg::queue_cfg::disable_dependency_check::kMask);
  // Array instances are named "<register>_<instance>".
  bool found = false;
  for (std::size_t i = 0; i < rf.num_registers; ++i) {
    const auto& r = rf.registers[i];
    if (r.offset == top::arr_seq_queue_debug::queue_debug_vector_1::kOffsets[5]) {
      EXPECT_EQ(r.name, "queue_debug_vector_1_5");
      EXPECT_EQ(r.def_name, "queue_debug_vector_1");
      EXPECT_EQ(r.instance, 5u);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(Tables, OtherRegFiles) {
  const RegFileDesc& prot = pevp::regs::tpb_arr_seq_top_protected::regfile_desc();
  expect_consistent(prot);
  ASSERT_EQ(prot.num_registers, 1u);
  EXPECT_EQ(prot.registers[0].name, "throttle_cfg");
  EXPECT_EQ(prot.registers[0].fields[0].reset, 0x1ffu);
  EXPECT_EQ(prot.registers[0].fields[0].mask(), 0x1ffu);

  const RegFileDesc& clu = pevp::regs::tpb_arr_seq_cluster_host_visible::regfile_desc();
  expect_consistent(clu);
  EXPECT_EQ(clu.registers[0].name, "arr_cluster_cfg");
  bool dly = false;
  for (std::size_t f = 0; f < clu.registers[0].num_fields; ++f) {
    const auto& fd = clu.registers[0].fields[f];
    if (fd.name == "inter_instr_dly_cnt") {
      EXPECT_EQ(fd.lsb, 16u);
      EXPECT_EQ(fd.width, 6u);
      EXPECT_EQ(fd.reset, 8u);
      dly = true;
    }
  }
  EXPECT_TRUE(dly);

  const RegFileDesc& vp = pevp::regs::vp_seq::regfile_desc();
  expect_consistent(vp);
  EXPECT_TRUE(vp.vp_defined);
  EXPECT_EQ(vp.num_registers, pevp::regs::vp_seq::kNumRegisters);
}
