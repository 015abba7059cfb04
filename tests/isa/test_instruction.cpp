// The typed form of an instruction (instruction.h): one struct per opcode with
// typed parts, the same on every generation whatever byte a field sits at.
// Expectations are the values the baselines of isa_test_util.h encode.
#include <gtest/gtest.h>

#include "isa_test_util.h"
#include "pevp/isa/instruction.h"

namespace pevp::isa::test {
namespace {

TEST(Typed, EveryOpcodeGivesItsOwnStruct) {
  for (G g : kAllGenerations)
    for (Opcode op : kAllOpcodes) {
      if (!usable(op, g)) continue;
      const Instruction i = typed(decode(g, base_of(g, op)));
      const std::size_t want = 1 + static_cast<std::size_t>(op == Opcode::LDWEIGHTS       ? 0
                                                            : op == Opcode::MATMUL        ? 1
                                                            : op == Opcode::MATMUL_SPARSE ? 2
                                                            : op == Opcode::LDTAGS        ? 3
                                                            : op == Opcode::PE_REG_WRITE  ? 4
                                                            : op == Opcode::PE_MANAGE_SEED ? 5
                                                            : op == Opcode::LDWEIGHTS_MX  ? 6
                                                            : op == Opcode::MATMUL_MX     ? 7
                                                                                          : 8);
      EXPECT_EQ(i.index(), want) << gen_name(g) << " " << name(op);
    }
  RawInstruction junk{};
  junk[0] = 0x77;
  EXPECT_TRUE(std::holds_alternative<std::monostate>(typed(decode(G::MARIANA, junk))));
}

TEST(Typed, TransposeIsOneFieldWhereverItSits) {
  LdweightsArgs a = lw_args();
  a.xpose = true;
  // CAYMAN: transpose_mode@34; MARIANA and MAVERICK: flags.xpose_mode.
  for (G g : {G::CAYMAN, G::MARIANA, G::MAVERICK}) {
    const auto i = std::get<Ldweights>(typed(decode(g, encode_ldweights(g, a))));
    EXPECT_TRUE(i.transpose) << gen_name(g);
    EXPECT_EQ(i.in.dtype(), Dtype::BFLOAT16);
    EXPECT_EQ(i.src.member, PatternMember::Tensor3D);
    EXPECT_EQ(i.src.count(), 128u);
    ASSERT_TRUE(i.tile.rect.has_value());
    EXPECT_EQ(i.tile.active_rows, 128u);
    EXPECT_FALSE(std::get<Ldweights>(typed(decode(g, lw_base(g)))).transpose) << gen_name(g);
  }
}

TEST(Typed, MatmulPsumPartsFollowTheGenerationsFields) {
  MatmulArgs a = mm_args();
  a.psum_flags = psum_flags::MULTI_START;
  a.zero_region = ZeroRegion::BANKS_2;
  const auto cay = std::get<Matmul>(typed(decode(G::CAYMAN, encode_matmul(G::CAYMAN, a))));
  ASSERT_TRUE(cay.psum.group_flags.has_value());
  EXPECT_EQ(*cay.psum.group_flags, psum_flags::MULTI_START);
  EXPECT_FALSE(cay.psum.accumulate.has_value()) << "CAYMAN has no accumulate_flag";
  EXPECT_EQ(cay.psum.zero_region, 1);
  EXPECT_EQ(cay.dst.start, kPsum);
  a.accumulate = true;
  const auto mar = std::get<Matmul>(typed(decode(G::MARIANA, encode_matmul(G::MARIANA, a))));
  ASSERT_TRUE(mar.psum.accumulate.has_value());
  EXPECT_TRUE(*mar.psum.accumulate);
  a.zero_region = ZeroRegion::BANKS_1;
  const auto v5 = std::get<Matmul>(typed(decode(G::MAVERICK, encode_matmul(G::MAVERICK, a))));
  EXPECT_FALSE(v5.psum.group_flags.has_value()) << "MAVERICK has no group flags";
  EXPECT_TRUE(v5.psum.accumulate.value_or(false));
}

TEST(Typed, EventsArePartOfEveryInstruction) {
  MatmulArgs a = mm_args();
  a.events = {WaitMode::WAIT_EQ, 3, 7, UpdateMode::INCREMENT, 4, 2};
  const Instruction i = typed(decode(G::MARIANA_PLUS, encode_matmul(G::MARIANA_PLUS, a)));
  const EventsPart e = events_of(i);
  EXPECT_EQ(e.wait_mode, WaitMode::WAIT_EQ);
  EXPECT_EQ(e.wait_sem, 3u);
  EXPECT_EQ(e.wait_value, 7u);
  EXPECT_EQ(e.update_mode, UpdateMode::INCREMENT);
  EXPECT_EQ(e.update_sem, 4u);
  EXPECT_EQ(e.update_value, 2);
  EXPECT_EQ(events_of(Instruction{}).wait_mode, WaitMode::NONE);
}

TEST(Typed, TheOtherOpcodesCarryTheirParts) {
  const auto seed = std::get<PeManageSeed>(typed(decode(G::MARIANA, save_seed_base(G::MARIANA))));
  EXPECT_EQ(seed.mode, 2);
  EXPECT_EQ(seed.identity.count(), 16u);
  EXPECT_EQ(seed.dst_seed.start, kPsum);
  EXPECT_EQ(seed.active_rows, 16u);
  EXPECT_EQ(seed.active_cols, 128u);
  const auto mx = std::get<MatmulMX>(typed(decode(G::MARIANA, mx_mm_base(G::MARIANA))));
  EXPECT_EQ(mx.src.scale_addr, 0x4000);
  EXPECT_EQ(mx.src.dims, 1u);
  EXPECT_EQ(mx.src.count(), 128u);
  EXPECT_EQ(mx.in_dtype, static_cast<std::int64_t>(Dtype::FP8_EXP4));
  const auto tags = std::get<LdTags>(typed(decode(G::CAYMAN, ldtags_base(G::CAYMAN))));
  EXPECT_EQ(tags.force_tag_bits, 0x4);
  EXPECT_EQ(tags.src.count(), 32u);
  const auto sparse = std::get<MatmulSparse>(typed(decode(G::CAYMAN, sparse_base(G::CAYMAN))));
  EXPECT_EQ(sparse.src.dims, 4u);
  EXPECT_EQ(sparse.src.num[3], 2);
  const auto prw = std::get<PeRegWrite>(typed(decode(G::MARIANA, regwrite_base(G::MARIANA))));
  EXPECT_EQ(prw.reg_addr, 0x10u);
  EXPECT_EQ(prw.imm_value, 0xdeadbeefu);
  EXPECT_EQ(prw.tile.active_rows, 128u) << "no active counts: the whole tile";
  const auto lut = std::get<ConvLutLoad>(typed(decode(G::MAVERICK, convlut_base(G::MAVERICK))));
  EXPECT_EQ(lut.lut_dtype, static_cast<std::int64_t>(Dtype::BFLOAT16));
  EXPECT_EQ(lut.src.start, 0x800u);
}

}  // namespace
}  // namespace pevp::isa::test
