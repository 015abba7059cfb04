// The census of 003 sections 2-4, computed from the generated tables (never
// from a hand-written list): counts, unique offsets, the highest offset,
// access types and reset values.
#include <gtest/gtest.h>

#include <set>

#include "pevp/regfile/register_file.h"
#include "tpb_arr_seq_cluster_host_visible_regs.h"
#include "tpb_arr_seq_top_host_visible_regs.h"
#include "tpb_arr_seq_top_protected_regs.h"
#include "vp_seq_regs.h"

namespace {
using namespace pevp::regfile;
namespace top = pevp::regs::tpb_arr_seq_top_host_visible;

bool all_fields(const RegisterDesc& r, Access a) {
  for (std::size_t k = 0; k < r.num_fields; ++k)
    if (r.fields[k].access != a) return false;
  return true;
}

TEST(Census, TopHostVisibleCountsMatch003) {
  const RegFileDesc& d = top::regfile_desc();
  EXPECT_EQ(d.name, "tpb_arr_seq_top_host_visible");
  EXPECT_EQ(d.addr_width, 12u);
  EXPECT_EQ(d.size_bytes, 0x1000u);
  EXPECT_EQ(d.interface, "APB");
  EXPECT_EQ(d.flavor, "POSEDGE");
  EXPECT_EQ(d.data_width, 32u);
  EXPECT_EQ(d.num_bundles, 7u);

  // Unique definitions and fields, counted from the expanded instances.
  std::set<std::uint32_t> definitions;
  std::size_t field_definitions = 0;
  for (std::size_t i = 0; i < d.num_registers; ++i)
    if (definitions.insert(d.registers[i].definition).second) field_definitions += d.registers[i].num_fields;
  EXPECT_EQ(definitions.size(), 305u);
  EXPECT_EQ(d.num_definitions, 305u);
  EXPECT_EQ(field_definitions, 308u);
  EXPECT_EQ(d.num_registers, 358u);

  std::set<std::uint32_t> offsets;
  std::uint32_t highest = 0;
  for (std::size_t i = 0; i < d.num_registers; ++i) {
    offsets.insert(d.registers[i].offset);
    highest = std::max(highest, d.registers[i].offset);
  }
  EXPECT_EQ(offsets.size(), 358u) << "every expanded offset is unique";
  EXPECT_EQ(highest, 0x840u) << "358 registers occupy 0x000..0x843";
}

TEST(Census, AccessAndResetSplitOverUniqueDefinitions) {
  const RegFileDesc& d = top::regfile_desc();
  std::set<std::uint32_t> seen;
  int ro = 0, rw = 0, pulse_fields = 0, nonzero_resets = 0;
  for (std::size_t i = 0; i < d.num_registers; ++i) {
    const RegisterDesc& r = d.registers[i];
    if (!seen.insert(r.definition).second) continue;
    (all_fields(r, Access::RO) ? ro : rw)++;
    for (std::size_t k = 0; k < r.num_fields; ++k) {
      pulse_fields += r.fields[k].access == Access::PulseOnW;
      if (r.fields[k].reset != 0) {
        ++nonzero_resets;
        EXPECT_EQ(r.fields[k].reset, 0xffffffffu) << r.name;
        EXPECT_TRUE(r.name == "spare_register2" || r.name == "spare_register3") << r.name;
      }
    }
  }
  EXPECT_EQ(ro, 299);
  EXPECT_EQ(rw, 6);
  EXPECT_EQ(pulse_fields, 1);
  EXPECT_EQ(nonzero_resets, 2);
}

TEST(Census, PerfBanksHold49CountersOf48BitsEach) {
  const RegFileDesc& d = top::regfile_desc();
  for (std::string_view bank : {"arr_seq_ififo_perf_weight_load", "arr_seq_ififo_perf_matmul",
                                "arr_seq_ififo_perf_pe_regwrite"}) {
    int lsb = 0, msb = 0;
    for (std::size_t i = 0; i < d.num_registers; ++i) {
      const RegisterDesc& r = d.registers[i];
      if (r.bundle != bank) continue;
      ASSERT_EQ(r.num_fields, 1u);
      if (r.fields[0].name == "cntr_lsb") {
        ++lsb;
        EXPECT_EQ(r.fields[0].width, 32);
      } else {
        ++msb;
        EXPECT_EQ(r.fields[0].name, "cntr_msb");
        EXPECT_EQ(r.fields[0].width, 16) << "003 correction: msb is [15:0], counters are 48-bit";
      }
    }
    EXPECT_EQ(lsb, 49) << bank;
    EXPECT_EQ(msb, 49) << bank;
  }
  EXPECT_EQ(top::arr_seq_ififo_perf_weight_load::kBase, 0x100u);
  EXPECT_EQ(top::arr_seq_ififo_perf_matmul::kBase, 0x300u);
  EXPECT_EQ(top::arr_seq_ififo_perf_pe_regwrite::kBase, 0x500u);
}

TEST(Census, ResetStateOfEveryFileIsItsSchemaResets) {
  for (const RegFileDesc* d : {&top::regfile_desc(), &pevp::regs::tpb_arr_seq_top_protected::regfile_desc(),
                               &pevp::regs::tpb_arr_seq_cluster_host_visible::regfile_desc(),
                               &pevp::regs::vp_seq::regfile_desc()}) {
    RegisterFile rf(*d);
    for (std::size_t i = 0; i < d->num_registers; ++i) {
      std::uint32_t expect = 0;
      for (std::size_t k = 0; k < d->registers[i].num_fields; ++k) {
        const FieldDesc& f = d->registers[i].fields[k];
        if (f.access != Access::PulseOnW) expect |= f.reset << f.lsb;
      }
      std::uint32_t got = 0;
      ASSERT_TRUE(rf.peek(d->registers[i].offset, got));
      EXPECT_EQ(got, expect) << d->name << "." << d->registers[i].name;
    }
  }
  // Hand-derived from the spec: throttle_cfg resets to disable_throttle 0x1ff.
  RegisterFile prot(pevp::regs::tpb_arr_seq_top_protected::regfile_desc());
  std::uint32_t v = 0;
  ASSERT_TRUE(prot.peek(0x0, v));
  EXPECT_EQ(v, 0x1ffu);
  RegisterFile cl(pevp::regs::tpb_arr_seq_cluster_host_visible::regfile_desc());
  EXPECT_EQ(cl.get(cl.field("arr_cluster_cfg", "inter_instr_dly_cnt")), 0x8u);
}

}  // namespace
