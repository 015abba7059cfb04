// The firmware stub: the compare chain of spec 000 section 2.1, each handler's
// DEBUG self-name, and what it lowers an instruction to -- a micro-op whose
// operands (tile, extents, patterns, dtypes, PSUM group semantics) are decided
// here once, so the array and the cost model never read an instruction field.
#include <gtest/gtest.h>

#include <memory>

#include "isa_test_util.h"
#include "pevp/firmware/firmware.h"

namespace pevp::isa::test {
namespace {

using fw::Handler;

fw::Prepared prepared(G g, const RawInstruction& raw) {
  return fw::prepare(std::make_shared<const Decoded>(decode(g, raw)));
}

TEST(Firmware, TheCompareChainIsOnTheRawByte) {
  EXPECT_EQ(fw::dispatch(0x01), Handler::Ldweights);
  EXPECT_EQ(fw::dispatch(0x02), Handler::Matmul);
  EXPECT_EQ(fw::dispatch(0x03), Handler::PeRegWrite);
  EXPECT_EQ(fw::dispatch(0x06), Handler::LdTags);
  EXPECT_EQ(fw::dispatch(0x07), Handler::MatmulSparse);
  EXPECT_EQ(fw::dispatch(0x08), Handler::PeManageSeed);
  EXPECT_EQ(fw::dispatch(0x09), Handler::LdweightsMX);
  EXPECT_EQ(fw::dispatch(0x0a), Handler::MatmulMX);
  EXPECT_EQ(fw::dispatch(0xe4), Handler::ConvLutLoad);
  for (unsigned b : {0x00u, 0x04u, 0x05u, 0x0bu, 0x9fu, 0xe3u, 0xe5u, 0xffu})
    EXPECT_EQ(fw::dispatch(static_cast<std::uint8_t>(b)), Handler::None) << b;
}

// Spec 2: the DEBUG self-names, the XS: prefix of MatmulMX, PeManageSeed's mode.
TEST(Firmware, SelfNamesBelongToTheHandlers) {
  EXPECT_EQ(prepared(G::CAYMAN, lw_base(G::CAYMAN)).self_name, "S: Ldweights");
  EXPECT_EQ(prepared(G::CAYMAN, mm_base(G::CAYMAN)).self_name, "S: Matmul");
  EXPECT_EQ(prepared(G::MARIANA, mx_mm_base(G::MARIANA)).self_name, "XS: MatmulMX");
  EXPECT_EQ(prepared(G::MARIANA, sparse_base(G::MARIANA)).self_name, "S: MatmulSparse");
  EXPECT_EQ(prepared(G::MARIANA, load_seed_base(G::MARIANA)).self_name, "S: PeManageSeed(LOAD)");
  EXPECT_EQ(prepared(G::MARIANA, save_seed_base(G::MARIANA)).self_name, "S: PeManageSeed(SAVE)");
  // MatmulSparse lowers to one sparse matmul micro-op (D-SPARSE-SELECT).
  const fw::Prepared sparse = prepared(G::MARIANA, sparse_base(G::MARIANA));
  EXPECT_FALSE(sparse.fault.has_value()) << sparse.fault->describe();
  ASSERT_EQ(sparse.ops.size(), 1u);
  EXPECT_EQ(sparse.ops[0].sparse, pe::SparseRole::Matmul);
  EXPECT_EQ(sparse.ops[0].kind, pe::MicroOpKind::Matmul);
  // MatmulMX lowers to one MX matmul micro-op.
  const fw::Prepared mx = prepared(G::MARIANA, mx_mm_base(G::MARIANA));
  EXPECT_FALSE(mx.fault.has_value()) << mx.fault->describe();
  ASSERT_EQ(mx.ops.size(), 1u);
  EXPECT_TRUE(mx.ops[0].mx);
  EXPECT_EQ(mx.ops[0].kind, pe::MicroOpKind::Matmul);
}

TEST(Firmware, AnInvalidInstructionFaultsWithItsFirstViolation) {
  RawInstruction raw = mm_base(G::MARIANA);
  patch(G::MARIANA, raw, "in_dtype", 12);
  const fw::Prepared p = prepared(G::MARIANA, raw);
  ASSERT_TRUE(p.fault.has_value());
  EXPECT_EQ(p.fault->rule, "mm.in_dtype");
  EXPECT_EQ(p.fault->field, "in_dtype");
  EXPECT_EQ(p.fault->value, 12);
  EXPECT_FALSE(!p.ops.empty());
}

TEST(Firmware, LdweightsLowersToAWeightLoadWithItsOperands) {
  LdweightsArgs a = lw_args();
  a.src = {0x40, {1, 0, 0}, {64, 1, 1}};
  a.num_active_rows = 96;
  a.num_active_cols = 64;
  a.tile = {0, 128, 0, 128};
  a.in_dtype = Dtype::FP32;
  a.fp32_mode = Fp32Mode::Low;
  a.xpose = true;
  a.src = Pattern::row(0x40, 96);  // transposed: M partitions of K elements
  const fw::Prepared p = prepared(G::MARIANA, encode_ldweights(G::MARIANA, a));
  ASSERT_TRUE(!p.ops.empty()) << (p.fault ? p.fault->describe() : "");
  const pe::MicroOp& op = p.ops.front();
  EXPECT_EQ(op.kind, pe::MicroOpKind::WeightLoad);
  EXPECT_EQ(op.opcode_byte, 0x01);
  EXPECT_EQ(op.tile, (TileRect{0, 128, 0, 128}));
  EXPECT_EQ(op.k, 96u);
  EXPECT_EQ(op.m, 64u);
  EXPECT_EQ(op.in_dtype, Dtype::FP32);
  EXPECT_EQ(op.fp32_mode, Fp32Mode::Low);
  EXPECT_TRUE(op.transpose);
  EXPECT_EQ(op.src.member, PatternMember::Tensor3D);
  EXPECT_EQ(op.src.start, 0x40u);
  EXPECT_EQ(op.src.dims, 3u);
  EXPECT_EQ(op.src.count(), 96u);
  EXPECT_FALSE(op.mx);
  EXPECT_EQ(op.mx_mode, 0);
}

// The PSUM group semantics of spec 4.1, decided per generation by the firmware.
TEST(Firmware, MatmulPsumGroupSemanticsPerGeneration) {
  auto group = [](G g, std::uint8_t flags, std::optional<bool> acc = std::nullopt) {
    MatmulArgs a = mm_args();
    a.psum_flags = flags;
    a.accumulate = acc;
    if (flags & psum_flags::BEGIN_MATMUL_GROUP) a.zero_region = ZeroRegion::BANKS_4;
    if (is_maverick(g)) a.zero_region = ZeroRegion::BANKS_1;
    const fw::Prepared p = prepared(g, encode_matmul(g, a));
    EXPECT_TRUE(!p.ops.empty()) << (p.fault ? p.fault->describe() : "");
    return !p.ops.empty() ? p.ops.front().psum : pe::PsumGroup{};
  };
  // CAYMAN: BEGIN overwrites, anything else adds; a BEGIN zeroes its zero region.
  const pe::PsumGroup start = group(G::CAYMAN, psum_flags::MULTI_START);
  EXPECT_TRUE(start.tracked);
  EXPECT_TRUE(start.begin);
  EXPECT_FALSE(start.accumulate);
  EXPECT_EQ(start.zero_banks, 4u);
  const pe::PsumGroup mid = group(G::CAYMAN, psum_flags::MULTI_MID);
  EXPECT_TRUE(mid.accumulate);
  EXPECT_EQ(mid.zero_banks, 0u);
  EXPECT_TRUE(group(G::CAYMAN, psum_flags::MULTI_END).end);
  // MARIANA: accumulate_flag decides add or overwrite, whatever the group flags.
  EXPECT_TRUE(group(G::MARIANA, psum_flags::MULTI_START, true).accumulate);
  EXPECT_FALSE(group(G::MARIANA, psum_flags::MULTI_MID, false).accumulate);
  // MAVERICK: no group flags, no group state; accumulate_flag alone.
  const pe::PsumGroup v5 = group(G::MAVERICK, psum_flags::SINGLE, true);
  EXPECT_FALSE(v5.tracked);
  EXPECT_TRUE(v5.accumulate);
}

TEST(Firmware, MatmulCarriesBothPatternsAndTheOutputType) {
  MatmulArgs a = mm_args();
  a.src = {0x200, {1, 0, 0}, {100, 1, 1}};
  a.dst = {kPsum + 3 * 2048, {1, 0, 0}, {100, 1, 1}};
  a.out_dtype = Dtype::BFLOAT16;
  a.num_active_rows = 128;
  a.num_active_cols = 32;
  a.tile = {0, 128, 32, 32};
  const fw::Prepared p = prepared(G::MARIANA, encode_matmul(G::MARIANA, a));
  ASSERT_TRUE(!p.ops.empty()) << (p.fault ? p.fault->describe() : "");
  EXPECT_EQ(p.ops.front().kind, pe::MicroOpKind::Matmul);
  EXPECT_EQ(p.ops.front().tile, (TileRect{0, 128, 32, 32}));
  EXPECT_EQ(p.ops.front().m, 32u);
  EXPECT_EQ(p.ops.front().src.start, 0x200u);
  EXPECT_EQ(p.ops.front().src.count(), 100u);
  EXPECT_EQ(p.ops.front().dst.start, kPsum + 3u * 2048);
  EXPECT_EQ(p.ops.front().out_dtype, static_cast<std::int64_t>(Dtype::BFLOAT16));
  // The stream rule's key: a Matmul reads the cells its tile covers.
  EXPECT_EQ(p.stream.role, StreamChecker::Key::Role::Use);
  EXPECT_EQ(p.stream.c0, 1);
  EXPECT_EQ(p.stream.c1, 2);
}

TEST(Firmware, PeRegWriteCarriesRegisterValueAndSource) {
  Encoder e(G::CAYMAN, Opcode::PE_REG_WRITE);
  full_tile(e, G::CAYMAN);
  e.set("reg_addr", 7).set("imm_value", 0xABCD).set("src_mem_pattern.start_addr", 0x80);
  e.set("src_mem_pattern.step_elem[0]", 1).set("src_mem_pattern.num_elem[0]", 1);
  const fw::Prepared p = prepared(G::CAYMAN, e.bytes());
  ASSERT_TRUE(!p.ops.empty()) << (p.fault ? p.fault->describe() : "");
  EXPECT_EQ(p.ops.front().kind, pe::MicroOpKind::PeRegWrite);
  EXPECT_EQ(p.ops.front().reg_addr, 7u);
  EXPECT_EQ(p.ops.front().imm_value, 0xABCDu);
  EXPECT_EQ(p.ops.front().src.start_raw, 0x80u);
  EXPECT_EQ(p.ops.front().k, 128u);  // no active counts: the whole tile
}

TEST(Firmware, TheStreamRuleRunsAcrossInstructions) {
  // An fp32 stationary, then a bf16 Matmul on its tile: spec 8's no-mix rule.
  LdweightsArgs lw = lw_args();
  lw.in_dtype = Dtype::FP32;
  lw.fp32_mode = Fp32Mode::High;
  fw::Firmware firmware;
  fw::HandlerOutput out;
  firmware.handle(prepared(G::MARIANA, encode_ldweights(G::MARIANA, lw)), 0, out);
  EXPECT_FALSE(out.fault.has_value());
  ASSERT_EQ(out.ops.size(), 1u);
  EXPECT_EQ(out.ops[0].instr_index, 0u);
  firmware.handle(prepared(G::MARIANA, mm_base(G::MARIANA)), 1, out);
  ASSERT_TRUE(out.fault.has_value());
  EXPECT_EQ(out.fault->rule, "mm.fp32_no_mix");
  EXPECT_TRUE(out.ops.empty());
  // Rewinding to before the load forgets it: the Matmul then passes.
  firmware.rewind(0, {}, {});
  firmware.handle(prepared(G::MARIANA, mm_base(G::MARIANA)), 1, out);
  EXPECT_FALSE(out.fault.has_value()) << out.fault->describe();
}

}  // namespace
}  // namespace pevp::isa::test
