// MX operands on the host: the OCP block quantizer against hand-derived values, the blocks it forms against a plain
// OCP loop over 32 consecutive contraction indices (QUAD_ROW), the SBUF words of a ragged k-tile written out by hand,
// the MX plan's instructions per generation, and the plain-C++ plan runner (the PE array's executor without SystemC)
// bit-exact against the defined-order reference on the dequantized operands, for every perf mode.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "host_test_util.h"
#include "pevp/host/execute_plan.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/gemm_reference.h"
#include "pevp/host/mx_operands.h"
#include "pevp/isa/decode.h"
#include "pevp/isa/geometry.h"
#include "pevp/isa/instruction.h"
#include "pevp/numerics/formats.h"

namespace {

using namespace pevp;
using host_test::to_bits;
using isa::Dtype;
using isa::Generation;
using isa::MxPerfMode;

constexpr Generation kV4 = Generation::MARIANA;

// ---- the block quantizer, by hand ---------------------------------------------------------------------------------

TEST(MxQuantizer, E4m3fnBlockWhoseMaxIs448HasScaleOne) {
  // floor(log2 448) = 8 = emax_elem(e4m3fn): X = 2^0, E8M0 code 127; 448 is e4m3fn 0x7E (S.1111.110), 1.0 0x38.
  const std::vector<float> block = {448.0f, 1.0f, -2.0f, 0.0f};
  const std::uint8_t s = host::mx_block_scale(Dtype::FP8_EXP4, block.data(), block.size());
  EXPECT_EQ(s, 127);
  EXPECT_EQ(host::mx_element_code(kV4, Dtype::FP8_EXP4, 448.0f, s), 0x7E);
  EXPECT_EQ(host::mx_element_code(kV4, Dtype::FP8_EXP4, 1.0f, s), 0x38);
  EXPECT_EQ(host::mx_element_code(kV4, Dtype::FP8_EXP4, -2.0f, s), 0xC0);
  EXPECT_EQ(host::mx_dequantize(kV4, Dtype::FP8_EXP4, 0x7E, s), 448.0f);
}

TEST(MxQuantizer, Fp4BlockWhoseMaxIs6HasScaleOne) {
  // floor(log2 6) = 2 = emax_elem(e2m1): X = 2^0; 6 is e2m1 0b0111, 0.5 is 0b0001, -3 is 0b1101.
  const std::vector<float> block = {6.0f, 0.5f, -3.0f};
  const std::uint8_t s = host::mx_block_scale(Dtype::FP4_EXP2, block.data(), block.size());
  EXPECT_EQ(s, 127);
  EXPECT_EQ(host::mx_element_code(kV4, Dtype::FP4_EXP2, 6.0f, s), 0x7);
  EXPECT_EQ(host::mx_element_code(kV4, Dtype::FP4_EXP2, 0.5f, s), 0x1);
  EXPECT_EQ(host::mx_element_code(kV4, Dtype::FP4_EXP2, -3.0f, s), 0xD);
  // 1.25 lies halfway between 1 (0b0010) and 1.5 (0b0011): ties to the even code, 1.
  EXPECT_EQ(host::mx_element_code(kV4, Dtype::FP4_EXP2, 1.25f, s), 0x2);
}

TEST(MxQuantizer, AllZeroBlockTakesTheSmallestScaleAndZeroCodes) {
  const std::vector<float> zeros(32, 0.0f);
  const std::uint8_t s = host::mx_block_scale(Dtype::FP8_EXP4, zeros.data(), zeros.size());
  EXPECT_EQ(s, 0x00);  // 2^-127
  EXPECT_EQ(host::mx_element_code(kV4, Dtype::FP8_EXP4, 0.0f, s), 0x00);
  EXPECT_EQ(to_bits(host::mx_dequantize(kV4, Dtype::FP8_EXP4, 0x00, s)), 0u);  // +0
}

TEST(MxQuantizer, ScaleFloorsTheMaxExponentAndClampsToE8m0) {
  // max 0.95: floor(log2) = -1, X = 2^(-1 - 8) = 2^-9 (code 118); 0.95 / X = 486.4 > 448 is clamped to 448, which
  // dequantizes to 448 x 2^-9 = 0.875 -- OCP's floor scale leaves the block max up to 2^(emax + 1) = 512.
  const float v = 0.95f;
  const std::uint8_t s = host::mx_block_scale(Dtype::FP8_EXP4, &v, 1);
  EXPECT_EQ(s, 127 - 9);
  EXPECT_EQ(host::mx_element_code(kV4, Dtype::FP8_EXP4, v, s), 0x7E);
  EXPECT_EQ(host::mx_dequantize(kV4, Dtype::FP8_EXP4, 0x7E, s), 0.875f);
  // e5m2: max 1.999 -> X = 2^-15 (code 112); 1.999 x 2^15 = 65503 would round to Inf, saturates to 57344 (0x7B).
  const float w = 1.999f;
  const std::uint8_t s5 = host::mx_block_scale(Dtype::FP8_EXP5, &w, 1);
  EXPECT_EQ(s5, 112);
  EXPECT_EQ(host::mx_element_code(kV4, Dtype::FP8_EXP5, w, s5), 0x7B);
  EXPECT_EQ(host::mx_dequantize(kV4, Dtype::FP8_EXP5, 0x7B, s5), 1.75f);
  // A tiny block: floor(log2 2^-140) - 8 = -148 is clamped to E8M0's -127 (code 0).
  const float tiny = std::ldexp(1.0f, -140);
  EXPECT_EQ(host::mx_block_scale(Dtype::FP8_EXP4, &tiny, 1), 0x00);
  // The largest scale a finite fp32 reaches: floor(log2 FLT_MAX) - 2 = 125 for fp4 (code 252).
  const float big = std::numeric_limits<float>::max();
  EXPECT_EQ(host::mx_block_scale(Dtype::FP4_EXP2, &big, 1), 252);
}

TEST(MxQuantizer, NanOrInfinityMakesTheBlockNan) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
    const std::vector<float> block = {1.0f, bad, 2.0f};
    const std::uint8_t s = host::mx_block_scale(Dtype::FP8_EXP5, block.data(), block.size());
    EXPECT_EQ(s, 0xFF);
    EXPECT_EQ(host::mx_element_code(kV4, Dtype::FP8_EXP5, 1.0f, s), 0x00);
    EXPECT_TRUE(std::isnan(host::mx_dequantize(kV4, Dtype::FP8_EXP5, 0x00, s)));
  }
}

TEST(MxQuantizer, NamesAndRefusals) {
  EXPECT_EQ(host::parse_mx_type("MXFP8_E4M3"), Dtype::FP8_EXP4);
  EXPECT_EQ(host::parse_mx_type("mxfp8_e5m2"), Dtype::FP8_EXP5);
  EXPECT_EQ(host::parse_mx_type("mxfp4"), Dtype::FP4_EXP2);
  EXPECT_FALSE(host::parse_mx_type("fp8_e4m3fn"));
  EXPECT_EQ(host::parse_mx_perf_mode("Oct_Row_Tiled"), MxPerfMode::OCT_ROW_TILED);
  EXPECT_FALSE(host::parse_mx_perf_mode("quad"));
  EXPECT_THROW(host::mx_block_scale(Dtype::INT4, nullptr, 0), host::HostError);
}

// ---- the row orders and the blocks ----------------------------------------------------------------------------------

TEST(MxLayout, RowOrdersOfThePerfModes) {
  // Packed: R p + i; interleaved: i k + p; tiled: R g0 + i g + p - g0 with g = min(8, k - g0).
  EXPECT_EQ(host::mx_layout(MxPerfMode::QUAD_ROW).row(3, 2, 10), 14u);
  EXPECT_EQ(host::mx_layout(MxPerfMode::OCT_ROW).row(3, 7, 10), 31u);
  EXPECT_EQ(host::mx_layout(MxPerfMode::QUAD_ROW_INTERLEAVE).row(3, 2, 10), 23u);
  EXPECT_EQ(host::mx_layout(MxPerfMode::OCT_ROW_TILED).row(17, 5, 20), 8u * 16 + 5 * 4 + 1);
  EXPECT_EQ(host::mx_layout(MxPerfMode::QUAD_ROW_TILED).row(9, 3, 128), 4u * 8 + 3 * 8 + 1);
  EXPECT_EQ(host::mx_layout(MxPerfMode::NONE).rows, 4u);
  EXPECT_EQ(host::mx_layout(MxPerfMode::OCT_ROW_INTERLEAVE).words(), 2u);
}

// A plain OCP MX quantizer over 32 consecutive values (the last block of a k-tile shorter), written here from the
// specification: floor(log2 max) by frexp, the element by the numerics library's RNE of the clamped quotient.
float ocp_dequantized(const std::vector<float>& block, std::size_t i, num::Format f, int emax) {
  float max = 0.0f;
  for (float v : block) max = std::max(max, std::fabs(v));
  int e2 = 0;
  std::frexp(max, &e2);  // max = m x 2^e2, m in [0.5, 1): floor(log2 max) = e2 - 1
  const int e = max == 0.0f ? -127 : std::max(-127, e2 - 1 - emax);
  const float lim = num::format_info(f).max_finite;
  const float q = num::quantize(f, std::clamp(std::ldexp(block[i], -e), -lim, lim));
  return static_cast<float>(std::ldexp(static_cast<double>(q), e));
}

TEST(MxLayout, QuadRowBlocksAre32ConsecutiveContractionIndicesAsOcpSays) {
  for (Dtype d : {Dtype::FP8_EXP4, Dtype::FP8_EXP5, Dtype::FP4_EXP2}) {
    const std::size_t K = 700, N = 9, tile = 512;  // a full k-tile of 16 blocks, then 188 = 5 blocks + 28
    const host::Matrix b = host_test::random_matrix(K, N, 5);
    const host::EncodedOperand e =
        host::encode_mx_operand(b, kV4, d, host::mx_layout(MxPerfMode::QUAD_ROW), tile, false);
    const num::Format f = *isa::element_format(kV4, d);
    EXPECT_EQ(e.mx_blocks, N * (16 + 6));
    for (std::size_t n = 0; n < N; ++n)
      for (std::size_t k0 = 0; k0 < K; k0 += 32) {
        const std::size_t end = std::min({K, k0 + 32, (k0 / tile + 1) * tile});
        std::vector<float> block;
        for (std::size_t k = k0; k < end; ++k) block.push_back(b.at(k, n));
        for (std::size_t k = k0; k < end; ++k)
          ASSERT_EQ(to_bits(e.quantized.at(k, n)), to_bits(ocp_dequantized(block, k - k0, f, host::mx_emax_elem(d))))
              << isa::name(d) << " k " << k << " n " << n;
      }
  }
}

TEST(MxLayout, RaggedKTileWordsAndScalesInSbuf) {
  // B is 6 x 1 in e4m3fn, QUAD_ROW: 2 partitions, partition 0 packs k = 0..3, partition 1 k = 4, 5 and two zero
  // codes; one block (both partitions are in scale group 0), its scale in partition 0.
  host::Matrix b(6, 1);
  b.data = {1.0f, 2.0f, 4.0f, 8.0f, -1.0f, 0.5f};  // max 8: X = 2^(3 - 8), the values x 32
  host::GemmOptions o;
  o.gen = kV4;
  o.dtype = Dtype::FP8_EXP4;
  o.mx = MxPerfMode::QUAD_ROW;
  const host::GemmPlan plan = host::plan_gemm({1, 6, 1}, o);
  ASSERT_EQ(plan.k_tile, 512u);
  const host::Matrix a(1, 6, 1.0f);
  const auto layout = host::mx_layout(MxPerfMode::QUAD_ROW);
  const auto ea = host::encode_mx_operand(a, kV4, o.dtype, layout, plan.k_tile, true);
  const auto eb = host::encode_mx_operand(b, kV4, o.dtype, layout, plan.k_tile, false);
  std::vector<std::uint8_t> words, scales;
  for (const host::SbufLoad& l : plan.steps.at(0).loads) {
    if (l.operand != host::Operand::B) continue;
    (l.content == host::SbufContent::MxWords ? words : scales) = host::load_payload(l, ea, eb);
  }
  // 32 = e4m3fn 0x60, 64 0x68, 128 0x70, 256 0x78, -32 0xE0, 16 0x58.
  EXPECT_EQ(words, (std::vector<std::uint8_t>{0x60, 0x68, 0x70, 0x78, 0xE0, 0x58, 0x00, 0x00}));
  EXPECT_EQ(scales, (std::vector<std::uint8_t>{127 - 5}));
}

// ---- the plan ---------------------------------------------------------------------------------------------------------

host::GemmOptions mx_options(Generation g, Dtype d, MxPerfMode mode) {
  host::GemmOptions o;
  o.gen = g;
  o.dtype = d;
  o.mx = mode;
  return o;
}

TEST(MxPlan, V4UsesTheSeparateMxOpcodesAndMavericksTheMxTensorMember) {
  const host::GemmShape shape{130, 1300, 70};  // ragged in every dimension
  const host::GemmPlan v4 = host::plan_gemm(shape, mx_options(kV4, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW));
  EXPECT_EQ(v4.k_tile, 512u);
  EXPECT_EQ(v4.stats.instructions.count(isa::Opcode::LDWEIGHTS), 0u);
  EXPECT_EQ(v4.stats.instructions.at(isa::Opcode::LDWEIGHTS_MX), 2u * 3);  // 2 m-blocks x 3 k-tiles
  EXPECT_EQ(v4.stats.instructions.at(isa::Opcode::MATMUL_MX), 2u * 3);
  EXPECT_EQ(v4.stats.macs, std::uint64_t{130} * 1300 * 70);  // the logical contraction rows, not the padding
  const isa::Decoded first = isa::decode(kV4, v4.steps[0].program[0]);
  EXPECT_EQ(first.opcode, isa::Opcode::LDWEIGHTS_MX);

  const Generation g5 = Generation::MAVERICK;
  const host::GemmPlan v5 = host::plan_gemm(shape, mx_options(g5, Dtype::FP4_EXP2, MxPerfMode::OCT_ROW));
  EXPECT_EQ(v5.k_tile, 1024u);
  EXPECT_EQ(v5.stats.instructions.count(isa::Opcode::LDWEIGHTS_MX), 0u);
  EXPECT_EQ(v5.stats.instructions.at(isa::Opcode::MATMUL), 2u);  // one folded c256 m-block x 2 k-tiles
  for (const auto& raw : v5.steps[0].program) {
    const isa::Decoded d = isa::decode(g5, raw);
    const auto* mm = std::get_if<isa::Matmul>(&d.instr);
    const auto* lw = std::get_if<isa::Ldweights>(&d.instr);
    ASSERT_TRUE(mm || lw);
    const isa::AccessPattern& src = mm ? mm->src : lw->src;
    EXPECT_EQ(src.member, isa::PatternMember::MxTensorV2);
    EXPECT_EQ(mm ? mm->perf_mode : lw->perf_mode, static_cast<std::int64_t>(MxPerfMode::OCT_ROW));
  }
}

TEST(MxPlan, RefusesCaymanOtherDtypesAndDoubleRow) {
  const host::GemmShape shape{8, 8, 8};
  try {
    host::validate_gemm(shape, mx_options(Generation::CAYMAN, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW));
    FAIL() << "CAYMAN has no MX";
  } catch (const host::PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("CAYMAN has no MX matmul"), std::string::npos) << e.what();
  }
  EXPECT_THROW(host::validate_gemm(shape, mx_options(kV4, Dtype::INT4, MxPerfMode::QUAD_ROW)), host::PlanError);
  EXPECT_THROW(host::validate_gemm(shape, mx_options(kV4, Dtype::BFLOAT16, MxPerfMode::QUAD_ROW)), host::PlanError);
  auto o = mx_options(kV4, Dtype::FP8_EXP5, MxPerfMode::QUAD_ROW);
  o.double_row = true;
  EXPECT_THROW(host::validate_gemm(shape, o), host::PlanError);
}

TEST(MxPlan, OperandsQuantizedForAnotherModeAreRefused) {
  const host::GemmShape shape{4, 40, 4};
  const host::GemmPlan plan = host::plan_gemm(shape, mx_options(kV4, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW));
  const host::Matrix a = host_test::random_matrix(4, 40, 1), b = host_test::random_matrix(40, 4, 2);
  const auto oct = host::mx_layout(MxPerfMode::OCT_ROW);
  const auto ea = host::encode_mx_operand(a, kV4, Dtype::FP8_EXP4, oct, 1024, true);
  const auto eb = host::encode_mx_operand(b, kV4, Dtype::FP8_EXP4, oct, 1024, false);
  EXPECT_THROW(host::execute_plan(plan, ea, eb), host::HostError);
  const auto dense = host::encode_operand(a, kV4, Dtype::FP8_EXP4);
  EXPECT_THROW(host::check_operands(plan, dense, eb), host::HostError);
}

// ---- the executor (no SystemC) against the defined-order reference -------------------------------------------------

struct RunCase {
  Generation gen;
  Dtype dtype;
  MxPerfMode mode;
  std::size_t m, k, n;
};

class MxExecute : public testing::TestWithParam<RunCase> {};

TEST_P(MxExecute, BitExactAgainstTheDefinedOrderReferenceOnTheDequantizedOperands) {
  const RunCase& c = GetParam();
  auto o = mx_options(c.gen, c.dtype, c.mode);
  o.tile_n = 128;
  const host::GemmPlan plan = host::plan_gemm({c.m, c.k, c.n}, o);
  const host::Matrix a = host_test::random_matrix(c.m, c.k, 7), b = host_test::random_matrix(c.k, c.n, 8);
  const auto layout = host::mx_layout(c.mode);
  const auto ea = host::encode_mx_operand(a, c.gen, c.dtype, layout, plan.k_tile, true);
  const auto eb = host::encode_mx_operand(b, c.gen, c.dtype, layout, plan.k_tile, false);
  const host::Matrix got = host::execute_plan(plan, ea, eb);
  // The reference written out: per k-tile of R x 128 rows, s = +0, s = s + a' b' in k order, C = C + s.
  host::Matrix want(c.m, c.n);
  for (std::size_t i = 0; i < c.m; ++i)
    for (std::size_t j = 0; j < c.n; ++j) {
      float acc = 0.0f;
      for (std::size_t k0 = 0; k0 < c.k; k0 += plan.k_tile) {
        float s = 0.0f;
        for (std::size_t k = k0; k < std::min(c.k, k0 + plan.k_tile); ++k)
          s = s + ea.quantized.at(i, k) * eb.quantized.at(k, j);
        acc = k0 == 0 ? s : acc + s;
      }
      want.at(i, j) = acc;
    }
  EXPECT_EQ(host::count_bit_mismatches(got, want), 0u);
  EXPECT_EQ(host::count_bit_mismatches(got, host::reference_defined_order(plan, ea, eb)), 0u);
}

std::vector<RunCase> run_cases() {
  std::vector<RunCase> v;
  for (Generation g : {Generation::MARIANA, Generation::MARIANA_PLUS, Generation::MAVERICK})
    for (Dtype d : {Dtype::FP8_EXP4, Dtype::FP8_EXP5, Dtype::FP4_EXP2}) v.push_back({g, d, MxPerfMode::QUAD_ROW, 40, 600, 30});
  for (unsigned m = 0; m <= static_cast<unsigned>(MxPerfMode::OCT_ROW_TILED); ++m) {
    v.push_back({Generation::MARIANA, Dtype::FP8_EXP4, static_cast<MxPerfMode>(m), 33, 1100, 20});
    v.push_back({Generation::MAVERICK, Dtype::FP4_EXP2, static_cast<MxPerfMode>(m), 150, 1300, 17});
  }
  return v;
}

std::string run_name(const testing::TestParamInfo<RunCase>& i) {
  return std::string(isa::name(i.param.gen)) + "_" + std::string(isa::name(i.param.dtype)) + "_" +
         host::mx_perf_mode_name(i.param.mode) + "_" + std::to_string(i.index);
}

INSTANTIATE_TEST_SUITE_P(Modes, MxExecute, testing::ValuesIn(run_cases()), run_name);


// ---- OCP blocks at the end of a k-tile ------------------------------------------------------------------------------

// The k-tile a perf mode's plan uses on MARIANA's 128 rows: R x 128.
std::size_t k_tile_of(MxPerfMode mode) { return std::size_t{host::mx_layout(mode).rows} * 128; }

// A row of 256 at k = 1024 and 240 at k = 1028 (K = 1032, zeros elsewhere) times a B of 1 at those rows: in OCP MX
// the eight values of the last k-tile are one block (max 256: X = 2^(8 - 8), both values exact), so C = 496 in every
// perf mode. Two blocks of four would give 240 the scale 2^(7 - 8), 480 clamped to 448, 224: C = 480.
TEST(MxOcpBlocks, TheRaggedLastKTileOfEightValuesIsOneBlockInEveryPerfMode) {
  constexpr std::size_t K = 1032;
  host::Matrix a(1, K), b(K, 1);
  a.at(0, 1024) = 256.0f;
  a.at(0, 1028) = 240.0f;
  b.at(1024, 0) = 1.0f;
  b.at(1028, 0) = 1.0f;
  for (unsigned m = 0; m <= static_cast<unsigned>(MxPerfMode::OCT_ROW_TILED); ++m) {
    const auto mode = static_cast<MxPerfMode>(m);
    SCOPED_TRACE(host::mx_perf_mode_name(mode));
    const auto layout = host::mx_layout(mode);
    const auto ea = host::encode_mx_operand(a, kV4, Dtype::FP8_EXP4, layout, k_tile_of(mode), true);
    EXPECT_EQ(ea.quantized.at(0, 1024), 256.0f);
    EXPECT_EQ(ea.quantized.at(0, 1028), 240.0f);
    EXPECT_EQ(ea.mx_scales[1024], ea.mx_scales[1028]);
    auto o = mx_options(kV4, Dtype::FP8_EXP4, mode);
    const host::GemmPlan plan = host::plan_gemm({1, K, 1}, o);
    ASSERT_EQ(plan.k_tile, k_tile_of(mode));
    const auto eb = host::encode_mx_operand(b, kV4, Dtype::FP8_EXP4, layout, plan.k_tile, false);
    EXPECT_EQ(host::execute_plan(plan, ea, eb).at(0, 0), 496.0f);
  }
}

// Where the layout lets every scale slot lie inside one OCP block, the quantized operand is OCP's: 32 consecutive
// contraction indices from a multiple of 32 in the k-tile share a scale, a shorter last one too. That holds for
// every k-tile under NONE, QUAD_ROW and the *_TILED modes except an OCT_ROW_TILED last group of 5 to 7 partitions
// (40 to 56 rows, two words of 20 to 28: the second straddles), and in every mode for a last k-tile of at most 32
// rows (one block).
TEST(MxOcpBlocks, BlocksAreOcpsWhereverTheLayoutAllowsIt) {
  const std::vector<std::size_t> short_tails = {1, 3, 8, 13, 32};
  for (unsigned m = 0; m <= static_cast<unsigned>(MxPerfMode::OCT_ROW_TILED); ++m) {
    const auto mode = static_cast<MxPerfMode>(m);
    const auto layout = host::mx_layout(mode);
    const std::size_t tile = k_tile_of(mode);
    const bool tiled_or_packed_quad =
        layout.order == host::MxRowOrder::Tiled || (layout.order == host::MxRowOrder::Packed && layout.rows == 4);
    std::vector<std::size_t> tails = short_tails;
    // Longer tails: a last group of 1..4 partitions after whole groups (OCT: 8 rows each) or any (QUAD).
    if (tiled_or_packed_quad) tails.insert(tails.end(), {64 + 8, 128 + 24, 192 + 32, 511});
    if (tiled_or_packed_quad && layout.rows == 4) tails.push_back(300);
    for (std::size_t tail : tails) {
      if (tail >= tile) continue;
      const std::size_t K = tile + tail, N = 3;
      const host::Matrix b = host_test::random_matrix(K, N, static_cast<std::uint32_t>(K + m));
      const host::EncodedOperand e = host::encode_mx_operand(b, kV4, Dtype::FP8_EXP4, layout, tile, false);
      const num::Format f = *isa::element_format(kV4, Dtype::FP8_EXP4);
      // The last k-tile always; the first too where the mode's full groups are OCP's.
      const std::size_t from = tiled_or_packed_quad ? 0 : tile;
      for (std::size_t n = 0; n < N; ++n)
        for (std::size_t k0 = from; k0 < K; k0 += 32) {
          const std::size_t end = std::min({K, k0 + 32, (k0 / tile + 1) * tile});
          std::vector<float> block;
          for (std::size_t k = k0; k < end; ++k) block.push_back(b.at(k, n));
          for (std::size_t k = k0; k < end; ++k)
            ASSERT_EQ(to_bits(e.quantized.at(k, n)), to_bits(ocp_dequantized(block, k - k0, f, 8)))
                << host::mx_perf_mode_name(mode) << " tail " << tail << " k " << k << " n " << n;
        }
    }
  }
}

}  // namespace
