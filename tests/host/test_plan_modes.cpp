// The GEMM plan's use of the array beyond one 128 x 128 tile and one PSUM bank, each run on the plain-C++ executor and
// compared bit for bit with a defined-order loop written here (k-tiles of an explicit width, each summed from +0 in
// k order, then added onto the earlier ones): MAVERICK's 256 columns (c256 tiles folding columns 128-255 into the
// output tile's upper half), n-tiles spanning several PSUM banks (v4+), and fp8 double_row (k-tiles of 256 rows, two
// per SBUF partition) -- with the options each refuses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host_test_util.h"
#include "pevp/host/execute_plan.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/isa/decode.h"
#include "pevp/pe_array/compute.h"

namespace {

using namespace host_test;
namespace isa = pevp::isa;
namespace pe = pevp::pe;
using isa::Dtype;
using isa::Fp32Mode;
using isa::Generation;

// C = A @ B in the defined order with k-tiles of `k_tile` rows, from the operands as encoded.
host::Matrix defined_order(const host::EncodedOperand& a, const host::EncodedOperand& b, std::size_t k_tile) {
  const pe::OperandType t{a.gen, a.dtype, Fp32Mode::None};
  std::vector<float> av(a.rows * a.cols), bv(b.rows * b.cols);
  EXPECT_TRUE(pe::decode_operands(t, a.bytes.data(), av.size(), av.data()));
  EXPECT_TRUE(pe::decode_operands(t, b.bytes.data(), bv.size(), bv.data()));
  host::Matrix c(a.rows, b.cols);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < b.cols; ++j) {
      float acc = 0.0f;
      for (std::size_t k0 = 0; k0 < a.cols; k0 += k_tile) {
        float s = 0.0f;
        for (std::size_t k = k0; k < std::min(a.cols, k0 + k_tile); ++k) s = s + av[i * a.cols + k] * bv[k * b.cols + j];
        acc = k0 == 0 ? s : acc + s;
      }
      c.at(i, j) = acc != acc ? from_bits(pe::kCanonicalNan) : acc;
    }
  return c;
}

struct PlanRun {
  host::GemmPlan plan;
  host::EncodedOperand a, b;
  host::Matrix c;
};

PlanRun run(std::size_t m, std::size_t k, std::size_t n, const host::GemmOptions& o) {
  PlanRun r;
  r.plan = host::plan_gemm({m, k, n}, o);
  r.a = host::encode_operand(random_matrix(m, k, 21), o.gen, o.dtype);
  r.b = host::encode_operand(random_matrix(k, n, 22), o.gen, o.dtype);
  r.c = host::execute_plan(r.plan, r.a, r.b);
  return r;
}

void expect_bits(const host::Matrix& got, const host::Matrix& want) {
  ASSERT_EQ(got.data.size(), want.data.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.data.size(); ++i)
    if (to_bits(got.data[i]) != to_bits(want.data[i]) && ++bad <= 3)
      ADD_FAILURE() << "C[" << i / got.cols << "][" << i % got.cols << "] = " << std::hex << to_bits(got.data[i])
                    << ", expected " << to_bits(want.data[i]);
  EXPECT_EQ(bad, 0u);
}

host::GemmOptions options(Generation g, Dtype d = Dtype::BFLOAT16) {
  host::GemmOptions o;
  o.gen = g;
  o.dtype = d;
  return o;
}

std::vector<isa::Decoded> decoded(const host::GemmPlan& p) {
  std::vector<isa::Decoded> out;
  for (const auto& s : p.steps)
    for (const auto& raw : s.program) out.push_back(isa::decode(p.options.gen, raw));
  return out;
}

std::string message_of(const host::GemmShape& s, const host::GemmOptions& o) {
  try {
    host::plan_gemm(s, o);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// ---- MAVERICK: the whole 128 x 256 array ------------------------------------------------------------------------

TEST(PlanC256, MaverickUsesAll256ColumnsAndFoldsTheUpperHalf) {
  const host::GemmOptions o = options(Generation::MAVERICK);
  const PlanRun r = run(300, 300, 700, o);  // m-blocks 256 + 44, k-tiles 128 + 128 + 44, n-tiles 512 + 188
  expect_bits(r.c, defined_order(r.a, r.b, 128));
  ASSERT_EQ(r.plan.stats.tiles.size(), 2u);
  EXPECT_EQ(r.plan.stats.tiles[0], (isa::TileRect{0, 128, 0, 256}));  // the c256 tile
  EXPECT_EQ(r.plan.stats.tiles[1], (isa::TileRect{0, 128, 0, 128}));  // a 44-column block on the C128 half
  unsigned folded = 0;
  for (const auto& d : decoded(r.plan)) {
    EXPECT_TRUE(d.valid()) << d.violations.front().describe();
    if (*d.opcode != isa::Opcode::MATMUL || d.get("tile_size.col") != isa::tile_size::C256) continue;
    ++folded;
    EXPECT_EQ(d.get("num_active_cols"), 0) << "0 encodes 256";
    EXPECT_EQ(d.get("dst_mem_pattern.num_elem[2]"), 2);
    EXPECT_EQ(d.get("dst_mem_pattern.step_elem[2]"), 512) << "the upper half one tile_n further on";
  }
  EXPECT_EQ(folded, 2u * 3u);  // 2 n-tiles x 3 k-tiles of the 256-column block
  EXPECT_EQ(r.plan.stats.macs, std::uint64_t{300} * 300 * 700);
  // A folded output tile spans two banks, so four share PSUM at once; its upper half is read separately.
  std::size_t upper_reads = 0;
  for (const auto& s : r.plan.steps)
    for (const auto& rd : s.reads) upper_reads += rd.offset != 0;
  EXPECT_EQ(upper_reads, 2u);
}

// ---- n-tiles over several PSUM banks (v4+) ------------------------------------------------------------------------

TEST(PlanMultiBank, WideNTilesSpanBanksBitExact) {
  for (Generation g : {Generation::MARIANA, Generation::MAVERICK}) {
    SCOPED_TRACE(std::string(isa::name(g)));
    host::GemmOptions o = options(g);
    o.tile_n = g == Generation::MAVERICK ? 2048 : 4096;
    const PlanRun r = run(200, 200, 5000, o);
    expect_bits(r.c, defined_order(r.a, r.b, 128));
    for (const auto& d : decoded(r.plan)) EXPECT_TRUE(d.valid()) << d.violations.front().describe();
  }
}

TEST(PlanMultiBank, TileNLimitsNameTheirReason) {
  host::GemmOptions o = options(Generation::CAYMAN);
  o.tile_n = 513;
  EXPECT_NE(message_of({64, 64, 1024}, o).find("must be 1..512 (fp32 elements of one 2048-byte PSUM bank, as CAYMAN "
                                               "keeps a matmul in one bank)"),
            std::string::npos)
      << message_of({64, 64, 1024}, o);
  o = options(Generation::MARIANA);
  o.tile_n = 4097;
  EXPECT_NE(message_of({64, 64, 8192}, o).find("must be 1..4096"), std::string::npos);
  o = options(Generation::MAVERICK);
  o.tile_n = 2049;
  EXPECT_NE(message_of({64, 64, 8192}, o).find("must be 1..2048 (fp32 elements of a PSUM partition's 8 banks, halved "
                                               "for the two halves of a c256 tile)"),
            std::string::npos)
      << message_of({64, 64, 8192}, o);
}

// ---- fp8 double_row ------------------------------------------------------------------------------------------------

TEST(PlanDoubleRow, KTilesOf256RowsBitExact) {
  for (Generation g : {Generation::CAYMAN, Generation::MARIANA, Generation::MARIANA_PLUS})
    for (const Dtype d : {Dtype::FP8_EXP4, Dtype::FP8_EXP5})
      for (const std::size_t k : {1u, 255u, 256u, 513u}) {  // odd K: the last partition's second row is zeros
        SCOPED_TRACE(std::string(isa::name(g)) + " " + std::string(isa::name(d)) + " K=" + std::to_string(k));
        host::GemmOptions o = options(g, d);
        o.double_row = true;
        const PlanRun r = run(130, k, 300, o);
        EXPECT_EQ(r.plan.k_tile, 256u);
        expect_bits(r.c, defined_order(r.a, r.b, 256));
        for (const auto& dec : decoded(r.plan)) {
          EXPECT_TRUE(dec.valid()) << dec.violations.front().describe();
          EXPECT_EQ(dec.get("perf_opt"), isa::perf_opt::FP8_DOUBLE_ROW);
          EXPECT_LE(dec.get("num_active_rows"), 128);
        }
        EXPECT_EQ(r.plan.stats.macs, std::uint64_t{130} * k * 300);
      }
}

TEST(PlanDoubleRow, OnlyFp8OnGenerationsWithPerfOpt) {
  host::GemmOptions o = options(Generation::MARIANA, Dtype::BFLOAT16);
  o.double_row = true;
  EXPECT_NE(message_of({64, 64, 64}, o).find("options.double_row: double_row packs two fp8 rows per partition; the "
                                             "dtype is BFLOAT16"),
            std::string::npos);
  o = options(Generation::MAVERICK, Dtype::FP8_EXP4);
  o.double_row = true;
  EXPECT_NE(message_of({64, 64, 64}, o).find("perf_opt, a field of CAYMAN and MARIANA"), std::string::npos);
}

}  // namespace
