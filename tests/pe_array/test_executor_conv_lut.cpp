// ConvLutLoad (opcode 0xe4) on the executor, as this model defines it (D-CONVLUT, pevp/pe_array/conv_lut.h): the
// converter table of an 8-bit or 4-bit dtype replaces that dtype's decode at the multiplier input of later loads
// and matmuls, dense and MX; other dtypes are untouched; errors name their field. The expected values use tables
// written here and a plain row-order fp32 sum.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "executor_test_util.h"
#include "pevp/isa/encode.h"
#include "pevp/isa/layout.h"
#include "pevp/pe_array/conv_lut.h"

namespace {

using namespace pe_test;

constexpr Generation kGen = Generation::MARIANA;

isa::RawInstruction conv_lut(Dtype lut_dtype, std::uint32_t at, unsigned entries) {
  isa::Encoder e(kGen, isa::Opcode::CONV_LUT_LOAD);
  e.set("src_mem_pattern.start_addr", at)
      .set("src_mem_pattern.step_elem[0]", 1)
      .set("src_mem_pattern.num_elem[0]", entries)
      .set("src_mem_pattern.num_elem[1]", 1)
      .set("lut_dtype", static_cast<int>(lut_dtype));
  return e.bytes();
}

struct Rig {
  Mem mem{kGen};
  pe::ArrayExecutor ex{isa::preset_geometry(kGen)};

  pe::ExecResult run(const isa::RawInstruction& raw) {
    for (const auto& v : isa::decode(kGen, raw).violations) ADD_FAILURE() << "test bug: " << v.describe();
    const pe::MicroOp op = dec(kGen, raw);
    return op.kind == pe::MicroOpKind::WeightLoad
               ? ex.ldweights(op, mem.sbuf.data(), mem.sbuf.size())
               : ex.matmul(op, mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(), mem.psum.size());
  }
  // A table of `entries` fp32 values in partition 0 at byte `off`.
  void put_table(std::uint32_t off, const std::vector<float>& table) {
    std::vector<std::uint8_t> b(table.size() * 4);
    std::memcpy(b.data(), table.data(), b.size());
    mem.put(0, off, b, 1);
  }
  float out(std::size_t p, std::size_t j) const { return from_bits(psum_u32(mem, p, j * 4)); }
};

// A table no fp8 format has: code c -> (c - 128) / 8.
std::vector<float> ramp(unsigned entries) {
  std::vector<float> t(entries);
  for (unsigned c = 0; c < entries; ++c) t[c] = (static_cast<float>(c) - entries / 2.0f) / 8.0f;
  return t;
}

TEST(ConvLut, FirmwareLowersItToOneWholeArrayWeightLoad) {
  const auto p = pevp::fw::prepare(
      std::make_shared<const isa::Decoded>(isa::decode(kGen, conv_lut(Dtype::FP8_EXP4, 0x1000, 256))));
  ASSERT_FALSE(p.fault) << p.fault->describe();
  EXPECT_EQ(p.self_name, "S: ConvLutLoad");
  ASSERT_EQ(p.ops.size(), 1u);
  const pe::MicroOp& op = p.ops[0];
  EXPECT_EQ(op.kind, pe::MicroOpKind::WeightLoad);
  EXPECT_TRUE(op.conv_lut);
  EXPECT_EQ(op.in_dtype, Dtype::FP8_EXP4);
  EXPECT_EQ(op.m, 256u);
  const auto geo = isa::preset_geometry(kGen);
  EXPECT_EQ(op.tile, (isa::TileRect{0, geo.pe_rows, 0, geo.pe_cols}));
}

TEST(ConvLut, EntriesPerDtype) {
  EXPECT_EQ(pe::conv_lut_entries(Dtype::FP8_EXP3), 256u);
  EXPECT_EQ(pe::conv_lut_entries(Dtype::INT4), 16u);
  EXPECT_EQ(pe::conv_lut_entries(Dtype::BFLOAT16), 0u);
  EXPECT_NE(pe::conv_lut_error(Dtype::FP32).find("has no converter table"), std::string::npos);
}

TEST(ConvLut, ATableReplacesTheDecodeOfItsDtypeOnly) {
  Rig rig;
  constexpr unsigned K = 32, M = 8, N = 16;
  std::mt19937 rng(4);
  std::vector<std::uint8_t> st(K * M), mv(K * N);
  for (auto& b : st) b = static_cast<std::uint8_t>(rng());
  for (auto& b : mv) b = static_cast<std::uint8_t>(rng());
  rig.mem.put(0, 0x2000, st, K);
  rig.mem.put(0, 0x3000, mv, K);
  const std::vector<float> table = ramp(256);
  rig.put_table(0x1000, table);
  expect_ok(rig.run(conv_lut(Dtype::FP8_EXP4, 0x1000, 256)));
  ASSERT_NE(rig.ex.conv_lut(Dtype::FP8_EXP4), nullptr);
  EXPECT_EQ(rig.ex.conv_lut(Dtype::FP8_EXP5), nullptr);

  const pe::OperandType e4{kGen, Dtype::FP8_EXP4, Fp32Mode::None};
  expect_ok(rig.run(isa::encode_ldweights(kGen, ldw(e4, 0x2000, K, M))));
  expect_ok(rig.run(isa::encode_matmul(kGen, mm(e4, 0x3000, kPsum, K, M, N, pf::SINGLE))));
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < N; ++j) {
      float s = 0.0f;
      for (unsigned k = 0; k < K; ++k) s = s + table[st[k * M + i]] * table[mv[k * N + j]];
      ASSERT_EQ(bits(rig.out(i, j)), bits(s)) << i << "," << j;
    }

  // e5m2 has no table: its own decode, as without any ConvLutLoad.
  const pe::OperandType e5{kGen, Dtype::FP8_EXP5, Fp32Mode::None};
  expect_ok(rig.run(isa::encode_ldweights(kGen, ldw(e5, 0x2000, K, M))));
  expect_ok(rig.run(isa::encode_matmul(kGen, mm(e5, 0x3000, kPsum, K, M, N, pf::SINGLE))));
  const auto want = ref_sum(e5, st, mv, K, M, N);
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < N; ++j) ASSERT_EQ(bits(rig.out(i, j)), bits(canon(want[i * N + j]))) << i << "," << j;

  // A reset forgets the table: e4m3fn decodes as the format again.
  rig.ex.reset();
  EXPECT_EQ(rig.ex.conv_lut(Dtype::FP8_EXP4), nullptr);
}

TEST(ConvLut, AnMxSourceDecodesThroughItsTable) {
  // An fp4 table (16 entries) under an MX source: value x scale, scale 127 = 1.
  Rig rig;
  const std::vector<float> table = ramp(16);
  rig.put_table(0x1000, table);
  expect_ok(rig.run(conv_lut(Dtype::FP4_EXP2, 0x1000, 16)));
  constexpr unsigned K = 8, M = 2, N = 3;  // one scale group; QUAD_ROW: 4 rows per partition
  std::vector<std::uint8_t> st(K * M * 2), mv(K * N * 2), st_scale(M, 127), mv_scale(N, 127);
  std::mt19937 rng(8);
  for (auto& b : st) b = static_cast<std::uint8_t>(rng());
  for (auto& b : mv) b = static_cast<std::uint8_t>(rng());
  rig.mem.put(0, 0x2000, st, K);
  rig.mem.put(0, 0x2800, st_scale, 1);
  rig.mem.put(0, 0x3000, mv, K);
  rig.mem.put(0, 0x3800, mv_scale, 1);
  const auto mx = [&](isa::Opcode op, std::uint32_t data, std::uint32_t scales, unsigned words) {
    isa::Encoder e(kGen, op);
    e.set("src_mem_pattern.start_addr", data)
        .set("src_mem_pattern.scale_addr", scales)
        .set("src_mem_pattern.step_elem", 1)
        .set("src_mem_pattern.num_elem", words)
        .set("in_dtype", static_cast<int>(Dtype::FP4_EXP2))
        .set("perf_mode", static_cast<int>(isa::MxPerfMode::QUAD_ROW))
        .set("num_active_rows", K)
        .set("num_active_cols", M)
        .set("row_grp", 0xF)
        .set("col_grp", 0xF);
    if (op == isa::Opcode::MATMUL_MX)
      e.set("out_dtype", static_cast<int>(Dtype::FP32))
          .set("psum_accumulate_flags", pf::SINGLE)
          .set("dst_mem_pattern.start_addr", kPsum)
          .set("dst_mem_pattern.step_elem[0]", 1)
          .set("dst_mem_pattern.num_elem[0]", N)
          .set("dst_mem_pattern.num_elem[1]", 1)
          .set("dst_mem_pattern.num_elem[2]", 1);
    return e.bytes();
  };
  expect_ok(rig.run(mx(isa::Opcode::LDWEIGHTS_MX, 0x2000, 0x2800, M)));
  expect_ok(rig.run(mx(isa::Opcode::MATMUL_MX, 0x3000, 0x3800, N)));
  // Value v of word (p, c): nibble v of its u16, low first; QUAD_ROW row 4p + v.
  const auto value = [&](const std::vector<std::uint8_t>& b, unsigned words, unsigned p, unsigned c, unsigned v) {
    const std::uint8_t byte = b[(p * words + c) * 2 + v / 2];
    return table[(byte >> (4 * (v % 2))) & 0xF];
  };
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < N; ++j) {
      float s = 0.0f;
      for (unsigned p = 0; p < K; ++p)
        for (unsigned v = 0; v < 4; ++v) s = s + value(st, M, p, i, v) * value(mv, N, p, j, v);
      EXPECT_EQ(bits(rig.out(i, j)), bits(s)) << i << "," << j;
    }
}

TEST(ConvLut, ErrorsNameTheField) {
  Rig rig;
  auto r = rig.run(conv_lut(Dtype::BFLOAT16, 0x1000, 256));
  EXPECT_EQ(r.rule, "exec.convlut") << r.describe();
  EXPECT_NE(r.message.find("lut_dtype = 6"), std::string::npos) << r.message;
  r = rig.run(conv_lut(Dtype::FP8_EXP4, 0x1000, 16));
  EXPECT_EQ(r.rule, "exec.pattern_count") << r.describe();
  EXPECT_NE(r.message.find("has 256 (one fp32 value per code)"), std::string::npos) << r.message;
  // 256 entries of 4 bytes from 512 bytes before the partition's end leave it.
  r = rig.run(conv_lut(Dtype::FP8_EXP4, rig.mem.part() - 512, 256));
  EXPECT_EQ(r.rule, "exec.pattern_partition_bounds") << r.describe();
  EXPECT_EQ(rig.ex.conv_lut(Dtype::FP8_EXP4), nullptr) << "nothing loaded by a refused ConvLutLoad";
}

TEST(ConvLut, TheTablesArePartOfTheState) {
  Rig rig;
  rig.put_table(0x1000, ramp(16));
  expect_ok(rig.run(conv_lut(Dtype::INT4, 0x1000, 16)));
  pe::ArrayExecutor::State s = rig.ex.state();
  EXPECT_EQ(rig.ex.check(s, kGen), "");
  pe::ArrayExecutor other(isa::preset_geometry(kGen));
  other.restore(s);
  ASSERT_NE(other.conv_lut(Dtype::INT4), nullptr);
  EXPECT_EQ(other.conv_lut(Dtype::INT4)[3], ramp(16)[3]);
  s.conv_luts[pe::conv_lut_slot(Dtype::INT4)].resize(15);
  EXPECT_NE(rig.ex.check(s, kGen).find("the INT4 converter table has 15 entries, not 16"), std::string::npos);
}

}  // namespace
