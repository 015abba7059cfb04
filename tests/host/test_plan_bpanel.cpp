// The B-panel plan (docs/gemm-tiling.md D-GEMM-BPANEL): hand-derived step lists for small shapes (which loads, at
// which offsets, in which order; the program's addresses, PSUM banks and group flags; the read-backs), the fall-back
// to the round order when no panel fits the SBUF budget or a panel would load no fewer bytes, the SBUF capacity of
// every generation's preset and of a small SBUF, and the result bit-identical to the round order and to the
// defined-order reference on every generation and several dtypes (dense, double_row, fp32 Low_High, MX, sparse).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "host_test_util.h"
#include "pevp/host/execute_plan.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/gemm_reference.h"
#include "pevp/host/mx_operands.h"
#include "pevp/host/sparse_operands.h"
#include "pevp/isa/decode.h"

namespace {

using namespace host_test;
namespace isa = pevp::isa;
using isa::Dtype;
using isa::Generation;
namespace pf = isa::psum_flags;

host::GemmOptions bf16(Generation g, unsigned tile_n, std::optional<std::uint32_t> budget = std::nullopt) {
  host::GemmOptions o;
  o.gen = g;
  o.tile_n = tile_n;
  o.sbuf_bytes_per_partition = budget;
  return o;
}

// One SBUF load as the test writes it: operand, k0, k_count, f0, f_count, offset.
using Load = std::tuple<host::Operand, std::size_t, std::size_t, std::size_t, std::size_t, std::uint32_t>;
constexpr host::Operand A = host::Operand::A, B = host::Operand::B;

std::vector<Load> loads_of(const host::Step& s) {
  std::vector<Load> out;
  for (const auto& l : s.loads) {
    EXPECT_EQ(l.partition0, 0u);
    out.emplace_back(l.operand, l.k0, l.k_count, l.f0, l.f_count, l.offset);
  }
  return out;
}

// One instruction: LDWEIGHTS {SBUF offset, active rows, active cols} or MATMUL {SBUF offset, active rows, active
// cols, PSUM bank, flags}; bank and flags are -1 for LDWEIGHTS.
using Instr = std::tuple<isa::Opcode, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
Instr ldw(std::int64_t off, std::int64_t k, std::int64_t m) { return {isa::Opcode::LDWEIGHTS, off, k, m, -1, -1}; }
Instr mm(std::int64_t off, std::int64_t k, std::int64_t m, std::int64_t bank, std::int64_t flags) {
  return {isa::Opcode::MATMUL, off, k, m, bank, flags};
}

std::vector<Instr> program_of(const host::GemmPlan& plan, const host::Step& s) {
  const isa::ArrayGeometry& geo = host::geometry_of(plan.options);
  std::vector<Instr> out;
  for (const auto& raw : s.program) {
    const isa::Decoded d = isa::decode(plan.options.gen, raw);
    EXPECT_TRUE(d.violations.empty());
    const std::int64_t off = d.get("src_mem_pattern.start_addr") - isa::ArrayGeometry::kSbufBase;
    if (*d.opcode == isa::Opcode::LDWEIGHTS) {
      out.push_back(ldw(off, d.get("num_active_rows"), d.get("num_active_cols")));
      continue;
    }
    const std::int64_t dst = d.get("dst_mem_pattern.start_addr") - isa::ArrayGeometry::kPsumBase;
    EXPECT_EQ(dst % geo.psum_bank_bytes, 0);
    out.push_back(mm(off, d.get("num_active_rows"), d.get("num_active_cols"), dst / geo.psum_bank_bytes,
                     d.get("psum_accumulate_flags")));
  }
  return out;
}

// One read-back: bank, partitions, elements, row0, col0.
using Read = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::size_t, std::size_t>;
std::vector<Read> reads_of(const host::Step& s) {
  std::vector<Read> out;
  for (const auto& r : s.reads) out.emplace_back(r.bank, r.partitions, r.elements, r.row0, r.col0);
  return out;
}

TEST(BPanel, OnePanelHandDerived) {
  // 300 x 200 x 40 bf16, tile_n 16, MARIANA: m-blocks {128, 128, 44}, k-tiles {128, 72}, n-tiles {16, 16, 8}.
  // The round order packs 8 output tiles per round (m0 x 3, m1 x 3, m2 x n0 n1, then m2 x n2), so n-tile 2 of B is
  // loaded twice: 784 bytes per partition per k-tile against 680 for one panel of all three n-tiles (B once) with
  // two m-blocks per step (8 banks / 3 n-tiles). Step 0: the panel (k-tile major: n0 n1 n2 of k-tile 0, then of
  // k-tile 1, 32 + 32 + 16 bytes each) from byte 0, then A of m-blocks 0 and 1 (k-tile major, 256 bytes each) from
  // byte 160; step 1: A of m-block 2 only (88 bytes per k-tile), after the panel, which stays.
  const auto plan = host::plan_gemm({300, 200, 40}, bf16(Generation::MARIANA, 16));
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.stats.b_panels, 1u);
  EXPECT_EQ(plan.stats.b_panel_ntiles, 3u);
  EXPECT_EQ(plan.stats.b_panel_mblocks, 2u);
  EXPECT_EQ(plan.stats.rounds, 2u);
  EXPECT_EQ(plan.stats.k_split_rounds, 0u);
  EXPECT_EQ(plan.stats.sbuf_bytes_loaded, 2ull * (200 * 40 + 300 * 200));  // every element once
  EXPECT_EQ(plan.stats.peak_sbuf_bytes_per_partition, 1184u);
  EXPECT_EQ(loads_of(plan.steps[0]), (std::vector<Load>{{B, 0, 128, 0, 16, 0},
                                                        {B, 0, 128, 16, 16, 32},
                                                        {B, 0, 128, 32, 8, 64},
                                                        {B, 128, 72, 0, 16, 80},
                                                        {B, 128, 72, 16, 16, 112},
                                                        {B, 128, 72, 32, 8, 144},
                                                        {A, 0, 128, 0, 128, 160},
                                                        {A, 0, 128, 128, 128, 416},
                                                        {A, 128, 72, 0, 128, 672},
                                                        {A, 128, 72, 128, 128, 928}}));
  EXPECT_EQ(program_of(plan, plan.steps[0]),
            (std::vector<Instr>{ldw(160, 128, 128), mm(0, 128, 128, 0, pf::MULTI_START),
                                mm(32, 128, 128, 1, pf::MULTI_START), mm(64, 128, 128, 2, pf::MULTI_START),
                                ldw(416, 128, 128), mm(0, 128, 128, 3, pf::MULTI_START),
                                mm(32, 128, 128, 4, pf::MULTI_START), mm(64, 128, 128, 5, pf::MULTI_START),
                                ldw(672, 72, 128), mm(80, 72, 128, 0, pf::MULTI_END),
                                mm(112, 72, 128, 1, pf::MULTI_END), mm(144, 72, 128, 2, pf::MULTI_END),
                                ldw(928, 72, 128), mm(80, 72, 128, 3, pf::MULTI_END),
                                mm(112, 72, 128, 4, pf::MULTI_END), mm(144, 72, 128, 5, pf::MULTI_END)}));
  EXPECT_EQ(reads_of(plan.steps[0]), (std::vector<Read>{{0, 128, 16, 0, 0},
                                                        {1, 128, 16, 0, 16},
                                                        {2, 128, 8, 0, 32},
                                                        {3, 128, 16, 128, 0},
                                                        {4, 128, 16, 128, 16},
                                                        {5, 128, 8, 128, 32}}));
  EXPECT_EQ(loads_of(plan.steps[1]), (std::vector<Load>{{A, 0, 128, 256, 44, 160}, {A, 128, 72, 256, 44, 248}}));
  EXPECT_EQ(program_of(plan, plan.steps[1]),
            (std::vector<Instr>{ldw(160, 128, 44), mm(0, 128, 44, 0, pf::MULTI_START),
                                mm(32, 128, 44, 1, pf::MULTI_START), mm(64, 128, 44, 2, pf::MULTI_START),
                                ldw(248, 72, 44), mm(80, 72, 44, 0, pf::MULTI_END), mm(112, 72, 44, 1, pf::MULTI_END),
                                mm(144, 72, 44, 2, pf::MULTI_END)}));
  EXPECT_EQ(reads_of(plan.steps[1]),
            (std::vector<Read>{{0, 44, 16, 256, 0}, {1, 44, 16, 256, 16}, {2, 44, 8, 256, 32}}));
}

TEST(BPanel, TwoPanelsHandDerived) {
  // 300 x 200 x 512 bf16, tile_n 64, budget 2048 bytes per partition: 8 n-tiles of 64 (128 bytes per k-tile), two
  // k-tiles. A panel of p n-tiles with q m-blocks needs 2 x (128 p + 256 q) bytes: p = 6 is the widest with one
  // m-block (2048), so 2 panels, balanced to 4 n-tiles each, with 2 m-blocks per step (2 x (512 + 512) = 2048).
  // The round order (one m-block per round, 8 n-tiles fill PSUM) loads B three times: 3672 bytes per partition per
  // k-tile against 2 x 600 + 1024 = 2224 for the panels (A twice, B once).
  const auto plan = host::plan_gemm({300, 200, 512}, bf16(Generation::MARIANA, 64, 2048));
  ASSERT_EQ(plan.steps.size(), 4u);
  EXPECT_EQ(plan.stats.b_panels, 2u);
  EXPECT_EQ(plan.stats.b_panel_ntiles, 4u);
  EXPECT_EQ(plan.stats.b_panel_mblocks, 2u);
  EXPECT_EQ(plan.stats.rounds, 4u);
  EXPECT_EQ(plan.stats.peak_sbuf_bytes_per_partition, 2048u);
  EXPECT_EQ(plan.stats.sbuf_bytes_loaded, 2ull * (200 * 512 + 2 * 300 * 200));
  for (std::size_t panel = 0; panel < 2; ++panel) {
    const host::Step& first = plan.steps[2 * panel];
    const host::Step& second = plan.steps[2 * panel + 1];
    std::vector<Load> want;
    for (std::size_t t = 0; t < 2; ++t)
      for (std::size_t j = 0; j < 4; ++j)
        want.emplace_back(B, 128 * t, t ? 72 : 128, 256 * panel + 64 * j, 64, static_cast<std::uint32_t>(512 * t + 128 * j));
    for (std::size_t t = 0; t < 2; ++t)
      for (std::size_t i = 0; i < 2; ++i)
        want.emplace_back(A, 128 * t, t ? 72 : 128, 128 * i, 128, static_cast<std::uint32_t>(1024 + 512 * t + 256 * i));
    EXPECT_EQ(loads_of(first), want) << "panel " << panel;
    EXPECT_EQ(loads_of(second), (std::vector<Load>{{A, 0, 128, 256, 44, 1024}, {A, 128, 72, 256, 44, 1112}}));
    std::vector<Instr> prog;
    for (std::size_t t = 0; t < 2; ++t)
      for (std::int64_t i = 0; i < 2; ++i) {
        prog.push_back(ldw(1024 + 512 * static_cast<std::int64_t>(t) + 256 * i, t ? 72 : 128, 128));
        for (std::int64_t j = 0; j < 4; ++j)
          prog.push_back(mm(512 * static_cast<std::int64_t>(t) + 128 * j, t ? 72 : 128, 128, 4 * i + j,
                            t ? pf::MULTI_END : pf::MULTI_START));
      }
    EXPECT_EQ(program_of(plan, first), prog) << "panel " << panel;
    std::vector<Read> reads;
    for (std::uint32_t u = 0; u < 8; ++u) reads.emplace_back(u, 128, 64, 128 * (u / 4), 256 * panel + 64 * (u % 4));
    EXPECT_EQ(reads_of(first), reads);
    EXPECT_EQ(reads_of(second).size(), 4u);
    EXPECT_EQ(std::get<3>(reads_of(second)[0]), 256u);
  }
}

// The round order's steps, field by field.
void expect_same_steps(const host::GemmPlan& got, const host::GemmPlan& want) {
  ASSERT_EQ(got.steps.size(), want.steps.size());
  for (std::size_t s = 0; s < got.steps.size(); ++s) {
    EXPECT_EQ(loads_of(got.steps[s]), loads_of(want.steps[s])) << "step " << s;
    EXPECT_EQ(got.steps[s].program, want.steps[s].program) << "step " << s;
    EXPECT_EQ(reads_of(got.steps[s]), reads_of(want.steps[s])) << "step " << s;
  }
  EXPECT_EQ(got.stats.sbuf_bytes_loaded, want.stats.sbuf_bytes_loaded);
}

TEST(BPanel, FallsBackToTheRoundOrderWhenNoPanelFits) {
  // The same GEMM with 700 bytes per partition: one n-tile and one m-block of both k-tiles need 2 x (128 + 256) =
  // 768, so no panel fits and the round order streams K (one k-tile per step).
  auto o = bf16(Generation::MARIANA, 64, 700);
  const auto plan = host::plan_gemm({300, 200, 512}, o);
  EXPECT_EQ(plan.stats.b_panels, 0u);
  EXPECT_GT(plan.stats.k_split_rounds, 0u);
  o.b_resident = false;
  expect_same_steps(plan, host::plan_gemm({300, 200, 512}, o));
}

TEST(BPanel, KeepsTheRoundOrderWhenPanelsLoadNoLess) {
  // One round (6 output tiles): every operand element is loaded once either way.
  auto o = bf16(Generation::MARIANA, 512);
  const auto one_round = host::plan_gemm({130, 300, 1030}, o);
  EXPECT_EQ(one_round.stats.b_panels, 0u);
  // M 1000 (8 m-blocks, 2000 bytes of A per k-tile), K 1280 (10 k-tiles), N 512 in 8 n-tiles of 64 (1024 bytes), 4000
  // bytes per partition: a panel of one n-tile needs 10 x (128 + 256) = 3840, of two 5120, so 8 panels would reload A
  // 8 times (8 x 2000 + 1024 = 17024 bytes per partition per k-tile) where the round order (8 rounds of one m-block
  // and all 8 n-tiles, K streamed 3 k-tiles per step) loads 8 x 1280 = 10240: the rounds stay.
  auto tall = bf16(Generation::MARIANA, 64, 4000);
  const auto p = host::plan_gemm({1000, 1280, 512}, tall);
  EXPECT_EQ(p.stats.b_panels, 0u);
  EXPECT_EQ(p.stats.rounds, 8u);
  tall.b_resident = false;
  expect_same_steps(p, host::plan_gemm({1000, 1280, 512}, tall));
  // The option off: always the round order.
  auto off = bf16(Generation::MARIANA, 16);
  off.b_resident = false;
  EXPECT_EQ(host::plan_gemm({300, 200, 40}, off).stats.b_panels, 0u);
}

TEST(BPanel, FitsEveryGenerationsSbufAndFallsBackOnASmallOne) {
  // 4096^3 bf16: a panel's n-tile is 32 k-tiles x 1 KiB = 32 KiB per partition, an m-block's A 8 KiB (16 KiB for
  // MAVERICK's 256-column m-blocks). Every preset holds a panel (CAYMAN's 224 KiB partitions too); the peak stays
  // within the partition; B is loaded once, A once per panel.
  for (Generation g : {Generation::CAYMAN, Generation::MARIANA, Generation::MARIANA_PLUS, Generation::MAVERICK}) {
    host::GemmOptions o;
    o.gen = g;
    const auto s = host::plan_summary({4096, 4096, 4096}, o);
    const isa::ArrayGeometry& geo = isa::preset_geometry(g);
    EXPECT_GT(s.stats.b_panels, 0u) << isa::name(g);
    EXPECT_LE(s.stats.peak_sbuf_bytes_per_partition, geo.sbuf_partition_bytes) << isa::name(g);
    EXPECT_EQ(s.stats.sbuf_bytes_loaded, 2ull * 4096 * 4096 * (1 + s.stats.b_panels)) << isa::name(g);
    o.b_resident = false;
    // The round order reloads B per m-block (per round): 1056 MiB on the 128-column presets, 576 MiB on MAVERICK
    // (16 m-blocks of 256, 4 folded output tiles per round), against 96 MiB.
    EXPECT_GT(host::plan_summary({4096, 4096, 4096}, o).stats.sbuf_bytes_loaded, 5 * s.stats.sbuf_bytes_loaded)
        << isa::name(g);
  }
  // A MARIANA array with 32 KiB SBUF partitions: one n-tile's panel of 4096^3 needs 32 KiB + 8 KiB of A: none fits,
  // so the round order streams K.
  isa::ArrayGeometry small = isa::preset_geometry(Generation::MARIANA);
  small.sbuf_partition_bytes = 32 * 1024;
  host::GemmOptions o;
  o.gen = Generation::MARIANA;
  o.geometry = small;
  const auto s = host::plan_summary({4096, 4096, 4096}, o);
  EXPECT_EQ(s.stats.b_panels, 0u);
  EXPECT_GT(s.stats.k_split_rounds, 0u);
  EXPECT_LE(s.stats.peak_sbuf_bytes_per_partition, small.sbuf_partition_bytes);
}

// ---- bit-exactness -------------------------------------------------------------------------------------------------

struct Exact {
  Generation gen;
  std::string type;  // bf16, fp16, fp8, fp8_double_row, tf32_low_high, mxfp8, sparse_2_4
  std::size_t m, k, n;
  unsigned tile_n;
};

std::string exact_name(const testing::TestParamInfo<Exact>& i) {
  return std::string(isa::name(i.param.gen)) + "_" + i.param.type + "_" + std::to_string(i.param.m) + "x" +
         std::to_string(i.param.k) + "x" + std::to_string(i.param.n) + "_tile_n_" + std::to_string(i.param.tile_n);
}

class BPanelExact : public testing::TestWithParam<Exact> {};

TEST_P(BPanelExact, SameBitsAsTheRoundOrderAndTheReference) {
  const Exact& c = GetParam();
  host::GemmOptions o;
  o.gen = c.gen;
  o.tile_n = c.tile_n;
  if (c.type == "fp16") o.dtype = Dtype::FP16;
  if (c.type == "fp8" || c.type == "fp8_double_row") o.dtype = Dtype::FP8_EXP4;
  if (c.type == "fp8_double_row") o.double_row = true;
  if (c.type == "tf32_low_high") o.dtype = Dtype::FP32, o.fp32_mode = isa::Fp32Mode::Low_High;
  if (c.type == "mxfp8") o.dtype = Dtype::FP8_EXP4, o.mx = isa::MxPerfMode::QUAD_ROW;
  if (c.type == "sparse_2_4") o.sparsity = host::parse_sparsity("2:4");
  const host::Matrix am = random_matrix(c.m, c.k, 31), bm = random_matrix(c.k, c.n, 32);
  const auto panels = host::plan_gemm({c.m, c.k, c.n}, o);
  ASSERT_GT(panels.stats.b_panels, 0u) << "the shape should use B panels";
  auto ro = o;
  ro.b_resident = false;
  const auto rounds = host::plan_gemm({c.m, c.k, c.n}, ro);
  ASSERT_EQ(rounds.stats.b_panels, 0u);
  EXPECT_LT(panels.stats.sbuf_bytes_loaded, rounds.stats.sbuf_bytes_loaded);
  host::EncodedOperand a, b;
  if (o.mx) {
    const host::MxLayout layout = host::mx_layout(*o.mx);
    a = host::encode_mx_operand(am, o.gen, o.dtype, layout, panels.k_tile, true);
    b = host::encode_mx_operand(bm, o.gen, o.dtype, layout, panels.k_tile, false);
  } else if (o.sparsity) {
    a = host::encode_sparse_operand(am, o.gen, o.dtype, *o.sparsity);
    b = host::encode_operand(bm, o.gen, o.dtype);
  } else {
    a = host::encode_operand(am, o.gen, o.dtype);
    b = host::encode_operand(bm, o.gen, o.dtype);
  }
  const host::Matrix got = host::execute_plan(panels, a, b);
  EXPECT_EQ(host::count_bit_mismatches(got, host::execute_plan(rounds, a, b)), 0u);
  EXPECT_EQ(host::count_bit_mismatches(got, host::reference_defined_order(panels, a, b)), 0u);
}

// Shapes with more output tiles than PSUM holds and more than one k-tile, so the round order reloads B and the
// panel plan runs (the test asserts both).
INSTANTIATE_TEST_SUITE_P(
    Shapes, BPanelExact,
    testing::Values(Exact{Generation::CAYMAN, "bf16", 300, 300, 520, 64}, Exact{Generation::CAYMAN, "fp16", 260, 200, 300, 32},
                    Exact{Generation::CAYMAN, "fp8_double_row", 300, 600, 520, 64},
                    Exact{Generation::MARIANA, "bf16", 300, 300, 520, 64},
                    Exact{Generation::MARIANA, "fp8", 400, 260, 1100, 128},
                    Exact{Generation::MARIANA, "tf32_low_high", 200, 300, 300, 32},
                    Exact{Generation::MARIANA, "mxfp8", 300, 1100, 520, 64},
                    Exact{Generation::MARIANA, "sparse_2_4", 300, 600, 520, 64},
                    Exact{Generation::MARIANA_PLUS, "bf16", 300, 300, 2100, 256},
                    Exact{Generation::MAVERICK, "bf16", 600, 300, 520, 64},
                    Exact{Generation::MAVERICK, "fp16", 300, 260, 1000, 128}),
    exact_name);

}  // namespace
