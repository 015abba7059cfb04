// Structured-sparse operands on the host: the published patterns and their fmap counts, N:M pruning of one group per
// pattern against kept positions derived by hand, ties and NaN, the compressed TAG_WEIGHT rows and the fmap rows of
// a small k-tile written out by hand from the documented mapping (D-SPARSE-SELECT: tag = row group << 2 | fmap;
// partition g x group_rows + q carries contraction row q x 4F + g x F + f), the sparse plan's instructions, and the
// plain-C++ plan runner bit-exact against a defined-order sum on the pruned operand written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "host_test_util.h"
#include "pevp/host/execute_plan.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/gemm_reference.h"
#include "pevp/host/sparse_operands.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/geometry.h"
#include "pevp/numerics/convert.h"

namespace {

using namespace pevp;
using isa::Dtype;
using isa::Generation;

// ---- the patterns -------------------------------------------------------------------------------------------------

TEST(SparsePatterns, PublishedPatternsAndTheirFmaps) {
  const struct {
    const char* text;
    unsigned n, m, fmaps;
  } want[] = {{"4:16", 4, 16, 4}, {"4:12", 4, 12, 3}, {"4:8", 4, 8, 2}, {"2:8", 2, 8, 4},
              {"2:4", 2, 4, 2},   {"1:4", 1, 4, 4},   {"1:2", 1, 2, 2}};
  for (const auto& w : want) {
    const auto p = host::parse_sparsity(w.text);
    ASSERT_TRUE(p) << w.text;
    EXPECT_EQ(p->n, w.n) << w.text;
    EXPECT_EQ(p->m, w.m) << w.text;
    EXPECT_EQ(p->fmaps, w.fmaps) << w.text;
    EXPECT_EQ(host::sparsity_name(*p), w.text);
  }
  for (const char* bad : {"3:4", "2:3", "1:1", "4:4", "2:16", "2-4", "", "2:4 ", "02:4"})
    EXPECT_FALSE(host::parse_sparsity(bad)) << bad;
}

// ---- pruning: one group per pattern ---------------------------------------------------------------------------------

// Sixteen values of distinct magnitudes, exact in bf16.
const std::vector<float> kRow = {0.5f, -7.0f, 3.0f, 1.0f,  -2.0f, 6.0f,  0.25f, 4.0f,
                                 -5.0f, 1.5f, 8.0f, -0.75f, 2.5f, -3.5f, 0.125f, 9.0f};

std::vector<std::size_t> kept_of(const host::EncodedOperand& e) {
  std::vector<std::size_t> k;
  for (std::size_t i = 0; i < e.sparse_kept.size(); ++i)
    if (e.sparse_kept[i]) k.push_back(i);
  return k;
}

TEST(SparsePruning, KeepsTheLargestMagnitudesOfEachGroup) {
  const struct {
    const char* pattern;
    std::vector<std::size_t> kept;  // by hand from kRow's magnitudes
  } want[] = {
      {"4:16", {1, 5, 10, 15}},                    // 9, 8, 7, 6
      {"4:12", {1, 5, 8, 10, 12, 13, 14, 15}},     // 8 7 6 5 of 0..11; the short group 12..15 keeps all four
      {"4:8", {1, 2, 5, 7, 8, 10, 13, 15}},        // 7 6 4 3 | 9 8 5 3.5
      {"2:8", {1, 5, 10, 15}},                     // 7 6 | 9 8
      {"2:4", {1, 2, 5, 7, 8, 10, 13, 15}},        // 7 3 | 6 4 | 8 5 | 9 3.5
      {"1:4", {1, 5, 10, 15}},                     // 7 | 6 | 8 | 9
      {"1:2", {1, 2, 5, 7, 8, 10, 13, 15}},        // one of each pair
  };
  host::Matrix a(1, kRow.size());
  a.data = kRow;
  for (const auto& w : want) {
    SCOPED_TRACE(w.pattern);
    const auto e =
        host::encode_sparse_operand(a, Generation::MARIANA, Dtype::BFLOAT16, *host::parse_sparsity(w.pattern));
    EXPECT_EQ(kept_of(e), w.kept);
    for (std::size_t i = 0; i < kRow.size(); ++i) {
      const bool kept = std::find(w.kept.begin(), w.kept.end(), i) != w.kept.end();
      EXPECT_EQ(e.quantized.data[i], kept ? kRow[i] : 0.0f) << i;
      const std::uint16_t code = static_cast<std::uint16_t>(e.bytes[2 * i] | e.bytes[2 * i + 1] << 8);
      EXPECT_EQ(code, kept ? num::to_bf16(kRow[i]) : 0) << i;
    }
  }
}

TEST(SparsePruning, TiesGoToTheLowerIndexAfterRoundingAndNanIsKept) {
  host::Matrix a(2, 4);
  // 1 + 2^-10 rounds to bf16 1.0: row 0 ties three ways at |1| and keeps indices 0 and 1 (2:4).
  a.data = {1.0f, -1.0f, 1.0f + 0x1p-10f, 0.5f,
            // Row 1: NaN ranks above 3 and 2.
            2.0f, std::numeric_limits<float>::quiet_NaN(), 3.0f, 0.0f};
  const auto e = host::encode_sparse_operand(a, Generation::CAYMAN, Dtype::BFLOAT16, *host::parse_sparsity("2:4"));
  EXPECT_EQ(kept_of(e), (std::vector<std::size_t>{0, 1, 5, 6}));
  EXPECT_TRUE(std::isnan(e.quantized.at(1, 1)));
  EXPECT_THROW(host::encode_sparse_operand(a, Generation::CAYMAN, Dtype::FP32, *host::parse_sparsity("2:4")),
               host::HostError);
}

// ---- the compressed rows of one k-tile, by hand -------------------------------------------------------------------

// An 8-row tile: four row groups of 2 PE rows; 2:4 runs F = 2, so the k-tile is 16 rows in two blocks of 8.
constexpr std::size_t kTileRows = 8;

std::uint16_t u16_at(const std::vector<std::uint8_t>& v, std::size_t byte) {
  return static_cast<std::uint16_t>(v[byte] | v[byte + 1] << 8);
}

TEST(SparseCompression, TagWeightRowsOfOneKtile) {
  host::Matrix a(1, kRow.size());
  a.data = kRow;
  const auto p = *host::parse_sparsity("2:4");
  const auto e = host::encode_sparse_operand(a, Generation::MARIANA, Dtype::BFLOAT16, p);
  std::vector<std::uint8_t> rows(kTileRows * 4, 0xAA);
  host::gather_sparse_weights(e, p, kTileRows, 0, 16, 0, 1, rows.data());
  // Block 0 (rows 0..7) keeps positions 1, 2, 5, 7 -> PE rows 0, 2, 4, 6 (slot x 2 + 0); block 1 (rows 8..15) keeps
  // positions 0, 2, 5, 7 -> PE rows 1, 3, 5, 7. Tag = (position / 2) << 2 | position % 2.
  const struct {
    std::uint16_t weight, tag;
  } want[kTileRows] = {{0xC0E0, 1},    // -7, block 0 position 1: row group 0, fmap 1
                       {0xC0A0, 0},    // -5, block 1 position 0
                       {0x4040, 4},    // 3, block 0 position 2: row group 1, fmap 0
                       {0x4100, 4},    // 8, block 1 position 2
                       {0x40C0, 9},    // 6, block 0 position 5: row group 2, fmap 1
                       {0xC060, 9},    // -3.5, block 1 position 5
                       {0x4080, 13},   // 4, block 0 position 7: row group 3, fmap 1
                       {0x4110, 13}};  // 9, block 1 position 7
  for (std::size_t r = 0; r < kTileRows; ++r) {
    EXPECT_EQ(u16_at(rows, r * 4), want[r].weight) << "PE row " << r;
    EXPECT_EQ(u16_at(rows, r * 4 + 2), want[r].tag) << "PE row " << r;
  }
}

TEST(SparseCompression, FmapRowsOfARaggedKtile) {
  host::Matrix b(16, 1);
  for (std::size_t d = 0; d < 16; ++d) b.data[d] = static_cast<float>(d + 1);
  const auto eb = host::encode_operand(b, Generation::MARIANA, Dtype::BFLOAT16);
  const auto p = *host::parse_sparsity("2:4");
  std::vector<std::uint8_t> rows(kTileRows * 2 * 2, 0xAA);
  // 11 contraction rows: partition g x 2 + q, fmap f is row q x 8 + g x 2 + f, zero from row 11 on.
  host::gather_sparse_fmaps(eb, p, kTileRows, 0, 11, 0, 1, rows.data());
  const float want[kTileRows][2] = {{1, 2}, {9, 10}, {3, 4}, {11, 0}, {5, 6}, {0, 0}, {7, 8}, {0, 0}};
  for (std::size_t r = 0; r < kTileRows; ++r)
    for (std::size_t f = 0; f < 2; ++f)
      EXPECT_EQ(u16_at(rows, (r * 2 + f) * 2), num::to_bf16(want[r][f])) << "partition " << r << " fmap " << f;
}

TEST(SparseCompression, AnOperandKeepingTooManyIsRefused) {
  host::Matrix a(1, 8, 1.0f);
  const auto p = *host::parse_sparsity("2:4");
  auto e = host::encode_sparse_operand(a, Generation::MARIANA, Dtype::BFLOAT16, p);
  e.sparse_kept.assign(8, 1);  // eight kept of one 8-row block: more than the four row groups
  std::vector<std::uint8_t> rows(kTileRows * 4);
  EXPECT_THROW(host::gather_sparse_weights(e, p, kTileRows, 0, 8, 0, 1, rows.data()), host::HostError);
}

// ---- the plan and the plain-C++ runner ----------------------------------------------------------------------------

TEST(SparsePlan, InstructionsAndRefusals) {
  host::GemmOptions o;
  o.gen = Generation::CAYMAN;
  o.sparsity = host::parse_sparsity("1:4");
  const host::GemmPlan plan = host::plan_gemm({64, 1000, 32}, o);
  EXPECT_EQ(plan.k_tile, 4u * isa::preset_geometry(o.gen).pe_rows);  // the PE rows x 4 fmaps
  EXPECT_EQ(plan.stats.instructions.at(isa::Opcode::MATMUL_SPARSE), 2u);
  EXPECT_EQ(plan.stats.instructions.at(isa::Opcode::LDWEIGHTS), 2u);
  EXPECT_EQ(plan.stats.macs, 64u * 1000 * 32) << "dense-equivalent";
  const isa::Decoded ld = isa::decode(o.gen, plan.steps[0].program[0]);
  EXPECT_TRUE(ld.violations.empty());
  EXPECT_EQ(ld.get_or("tag_weight_mode", 0), 1);
  const isa::Decoded mm = isa::decode(o.gen, plan.steps[0].program[1]);
  EXPECT_TRUE(mm.violations.empty());
  EXPECT_EQ(mm.get_or("src_mem_pattern.num_elem[3]", 0), 4);
  host::GemmOptions bad = o;
  bad.dtype = Dtype::FP32;
  bad.fp32_mode = isa::Fp32Mode::High;
  EXPECT_THROW(host::plan_gemm({64, 64, 64}, bad), host::PlanError);
  bad = o;
  bad.dtype = Dtype::FP8_EXP4;
  EXPECT_THROW(host::plan_gemm({64, 64, 64}, bad), host::PlanError);
  bad = o;
  bad.gen = Generation::MARIANA;
  bad.dtype = Dtype::FP8_EXP4;
  bad.mx = isa::MxPerfMode::QUAD_ROW;
  EXPECT_THROW(host::plan_gemm({64, 64, 64}, bad), host::PlanError);
}

// The defined order on the pruned operand, per k-tile of pe_rows x F rows, written here: s from +0 over the tile's
// rows, C = first tile ? s : C + s.
host::Matrix reference(const host::Matrix& a, const host::Matrix& b, std::size_t k_tile) {
  host::Matrix c(a.rows, b.cols);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < b.cols; ++j)
      for (std::size_t k0 = 0; k0 < a.cols; k0 += k_tile) {
        float s = 0.0f;
        for (std::size_t k = k0; k < std::min(a.cols, k0 + k_tile); ++k) s = s + a.at(i, k) * b.at(k, j);
        c.at(i, j) = k0 == 0 ? s : c.at(i, j) + s;
      }
  return c;
}

TEST(SparsePlan, PlainRunnerMatchesTheDefinedOrderOnThePrunedOperand) {
  for (Generation g : isa::kAllGenerations)
    for (const char* pat : {"2:4", "4:12", "1:4"}) {
      SCOPED_TRACE(std::string(isa::name(g)) + " " + pat);
      host::GemmOptions o;
      o.gen = g;
      o.sparsity = host::parse_sparsity(pat);
      o.tile_n = 48;
      o.sbuf_bytes_per_partition = 1200;  // two k-tiles per step at most: the groups stay open between steps
      const host::GemmShape shape{70, 1300, 100};
      const host::GemmPlan plan = host::plan_gemm(shape, o);
      const host::Matrix a = host_test::random_matrix(shape.m, shape.k, 5);
      const host::Matrix b = host_test::random_matrix(shape.k, shape.n, 6);
      const auto ea = host::encode_sparse_operand(a, g, o.dtype, *o.sparsity);
      const auto eb = host::encode_operand(b, g, o.dtype);
      const host::Matrix got = host::execute_plan(plan, ea, eb);
      const std::size_t k_tile = std::size_t{isa::preset_geometry(g).pe_rows} * o.sparsity->fmaps;
      const host::Matrix want = reference(ea.quantized, eb.quantized, k_tile);
      EXPECT_EQ(host::count_bit_mismatches(got, want), 0u);
      EXPECT_GT(plan.stats.k_split_rounds, 0u);
    }
}

}  // namespace
