// Running plans on the plain-C++ executor: bit-exact agreement with the defined-order reference (uint32 patterns) on
// every generation and dtype, including plans that stream K across steps; a hand-computed case where the k-tile
// boundaries decide the bits; special values; the fp64 error of bf16 and full-fp32 GEMMs within their documented
// bounds; the error metrics; and the errors for operands that do not fit and for broken programs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <iostream>
#include <ostream>
#include <tuple>
#include <vector>
#include <string>

#include "host_test_util.h"
#include "pevp/host/execute_plan.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/gemm_reference.h"
#include "pevp/isa/builders.h"

namespace {

using namespace host_test;
namespace isa = pevp::isa;
using isa::Dtype;
using isa::Fp32Mode;
using isa::Generation;

struct GemmRun {
  host::GemmPlan plan;
  host::EncodedOperand a, b;
  host::Matrix c;
};

GemmRun run(const host::Matrix& a, const host::Matrix& b, const host::GemmOptions& o) {
  GemmRun r;
  r.plan = host::plan_gemm({a.rows, a.cols, b.cols}, o);
  r.a = host::encode_operand(a, o.gen, o.dtype);
  r.b = host::encode_operand(b, o.gen, o.dtype);
  r.c = host::execute_plan(r.plan, r.a, r.b);
  return r;
}

host::GemmOptions options(Generation g, Dtype d = Dtype::BFLOAT16, Fp32Mode mode = Fp32Mode::None) {
  host::GemmOptions o;
  o.gen = g;
  o.dtype = d;
  o.fp32_mode = mode;
  return o;
}

void expect_bit_exact(const GemmRun& r) {
  const host::Matrix ref = host::reference_defined_order(r.plan, r.a, r.b);
  const std::size_t bad = host::count_bit_mismatches(r.c, ref);
  EXPECT_EQ(bad, 0u);
  if (bad == 0) return;
  for (std::size_t i = 0, shown = 0; i < ref.data.size() && shown < 3; ++i) {
    if (to_bits(r.c.data[i]) == to_bits(ref.data[i])) continue;
    ++shown;
    ADD_FAILURE() << "C[" << i / ref.cols << "][" << i % ref.cols << "] = " << std::hex << to_bits(r.c.data[i])
                  << ", reference " << to_bits(ref.data[i]);
  }
}

// One bit-exact case: a generation and a shape. PrintTo keeps the ctest names readable.
struct BitExactCase {
  Generation gen;
  std::size_t m, k, n;
};
void PrintTo(const BitExactCase& c, std::ostream* os) {
  *os << isa::name(c.gen) << " " << c.m << "x" << c.k << "x" << c.n;
}

std::vector<BitExactCase> bit_exact_cases() {
  std::vector<BitExactCase> out;
  for (Generation g : isa::kAllGenerations)
    for (auto [m, k, n] : {std::tuple{1, 1, 1}, {33, 70, 129}, {128, 128, 512}, {130, 300, 1030}})
      out.push_back({g, static_cast<std::size_t>(m), static_cast<std::size_t>(k), static_cast<std::size_t>(n)});
  return out;
}

class BitExact : public ::testing::TestWithParam<BitExactCase> {};

TEST_P(BitExact, Bf16MatchesDefinedOrderReference) {
  const BitExactCase c = GetParam();
  expect_bit_exact(run(random_matrix(c.m, c.k, 1), random_matrix(c.k, c.n, 2), options(c.gen)));
}

INSTANTIATE_TEST_SUITE_P(Shapes, BitExact, ::testing::ValuesIn(bit_exact_cases()), [](const auto& info) {
  const BitExactCase& c = info.param;
  return std::string(isa::name(c.gen)) + "_" + std::to_string(c.m) + "x" + std::to_string(c.k) + "x" +
         std::to_string(c.n);
});

TEST(Execute, EveryDtypeBitExact) {
  const host::Matrix a = random_matrix(33, 200, 3), b = random_matrix(200, 129, 4);
  for (Generation g : {Generation::CAYMAN, Generation::MARIANA, Generation::MAVERICK})
    for (auto [d, mode] : {std::pair{Dtype::BFLOAT16, Fp32Mode::None}, {Dtype::FP16, Fp32Mode::None},
                           {Dtype::FP8_EXP2, Fp32Mode::None}, {Dtype::FP8_EXP3, Fp32Mode::None},
                           {Dtype::FP8_EXP4, Fp32Mode::None}, {Dtype::FP8_EXP5, Fp32Mode::None},
                           {Dtype::FP32, Fp32Mode::Low}, {Dtype::FP32, Fp32Mode::High},
                           {Dtype::FP32, Fp32Mode::Low_High}}) {
      SCOPED_TRACE(std::string(isa::name(g)) + " " + std::string(isa::name(d)) + " " + std::string(isa::name(mode)));
      expect_bit_exact(run(a, b, options(g, d, mode)));
    }
}

TEST(Execute, StreamingKAcrossStepsIsBitIdentical) {
  const host::Matrix a = random_matrix(130, 300, 5), b = random_matrix(300, 1030, 6);
  for (Generation g : {Generation::CAYMAN, Generation::MARIANA, Generation::MAVERICK}) {
    SCOPED_TRACE(std::string(isa::name(g)));
    const GemmRun whole = run(a, b, options(g));
    ASSERT_EQ(whole.plan.steps.size(), 1u);
    for (std::uint32_t cap : {4096u, 2000u}) {
      SCOPED_TRACE("cap " + std::to_string(cap));
      auto o = options(g);
      o.sbuf_bytes_per_partition = cap;
      const GemmRun streamed = run(a, b, o);
      EXPECT_GE(streamed.plan.stats.k_split_rounds, 1u);
      EXPECT_GT(streamed.plan.steps.size(), 1u);
      expect_bit_exact(streamed);
      EXPECT_EQ(host::count_bit_mismatches(streamed.c, whole.c), 0u);
    }
  }
}

TEST(Execute, KTileBoundariesDecideTheBits) {
  // C = sum of 256 products: 2^24, then 255 ones. Within the first k-tile each +1 to 2^24 is a tie that rounds back
  // to 2^24 (even), so that tile sums to 2^24; the second k-tile sums its 128 ones exactly to 128; C = 2^24 + 128.
  // One flat fp32 sum would give 2^24.
  host::Matrix a(1, 256, 1.0f), b(256, 1, 1.0f);
  b.at(0, 0) = 0x1p24f;
  for (Generation g : {Generation::CAYMAN, Generation::MAVERICK}) {
    const GemmRun r = run(a, b, options(g));
    EXPECT_EQ(r.c.at(0, 0), 0x1p24f + 128.0f) << isa::name(g);
  }
  EXPECT_EQ(host::reference_defined_order(a, b, Fp32Mode::None, 128).at(0, 0), 0x1p24f + 128.0f);
  EXPECT_EQ(host::reference_defined_order(a, b, Fp32Mode::None, 256).at(0, 0), 0x1p24f);
}

TEST(Execute, SpecialValuesGiveTheCanonicalNan) {
  host::Matrix a = random_matrix(40, 150, 7), b = random_matrix(150, 60, 8);
  a.at(3, 10) = from_bits(0x7FA00001);            // NaN with a payload
  a.at(5, 140) = HUGE_VALF;                        // Inf in the second k-tile
  b.at(140, 7) = 0.0f;                             // ... times 0 in one column: NaN
  b.at(20, 9) = -HUGE_VALF;
  for (auto [d, mode] : {std::pair{Dtype::FP32, Fp32Mode::High}, {Dtype::FP32, Fp32Mode::Low_High},
                         {Dtype::BFLOAT16, Fp32Mode::None}}) {
    SCOPED_TRACE(std::string(isa::name(d)) + " " + std::string(isa::name(mode)));
    const GemmRun r = run(a, b, options(Generation::MARIANA, d, mode));
    expect_bit_exact(r);
    EXPECT_EQ(to_bits(r.c.at(3, 0)), 0x7FC00000u);  // the NaN row
    EXPECT_EQ(to_bits(r.c.at(5, 7)), 0x7FC00000u);  // Inf * 0
    EXPECT_TRUE(std::isinf(r.c.at(0, 9)) || std::isnan(r.c.at(0, 9)));
  }
}

// u = 2^-24 (fp32 unit roundoff); gamma(n) = n u / (1 - n u) bounds n successive roundings (Higham, ch. 3).
double gamma_n(std::size_t n) {
  const double u = 0x1p-24;
  return n * u / (1 - n * u);
}

TEST(Execute, Bf16ErrorAgainstFp64WithinBound) {
  // bf16 products are exact in fp32 and the defined order makes K - 1 rounded additions per element (K - T inside
  // the T k-tiles, T - 1 between them), so |C - C64(Aq, Bq)| <= gamma(K - 1) sum|aq b q|. Against the fp64 product
  // of the unquantized inputs the bf16 rounding (u_b = 2^-8 per operand) adds (2 u_b + u_b^2) sum|a b|.
  const std::size_t M = 48, K = 1000, N = 80;
  const host::Matrix a = random_matrix(M, K, 9), b = random_matrix(K, N, 10);
  const GemmRun r = run(a, b, options(Generation::MARIANA));
  expect_bit_exact(r);
  const auto exact_q = host::reference_fp64(r.a.quantized, r.b.quantized);
  const auto scale_q = host::abs_product_sums(r.a.quantized, r.b.quantized);
  const auto exact = host::reference_fp64(a, b);
  const auto scale = host::abs_product_sums(a, b);
  const double ub = 0x1p-8;
  const double bound_q = gamma_n(K - 1);
  const double bound = 2 * ub + ub * ub + gamma_n(K - 1) * (1 + ub) * (1 + ub);
  double worst_q = 0, worst = 0;
  for (std::size_t i = 0; i < r.c.data.size(); ++i) {
    worst_q = std::max(worst_q, std::fabs(r.c.data[i] - exact_q.data[i]) / scale_q.data[i]);
    worst = std::max(worst, std::fabs(r.c.data[i] - exact.data[i]) / scale.data[i]);
  }
  EXPECT_LE(worst_q, bound_q);
  EXPECT_LE(worst, bound);
  const auto stats = host::compare(r.c, exact);
  std::cout << "bf16 " << M << "x" << K << "x" << N << ": |C - C64| / sum|ab| <= " << worst << " (bound " << bound
            << "); against fp64 of the bf16 operands " << worst_q << " (bound " << bound_q
            << "); max abs error " << stats.max_abs_error << ", max rel error " << stats.max_rel_error << "\n";
}

TEST(Execute, FullFp32ErrorAgainstFp64WithinBound) {
  // fp32_mode High: each product and each add rounds once: |C - C64| <= gamma(2K) sum|ab| (loose: K products + K - 1
  // adds). Low_High drops lo*lo' and runs three passes per k-tile: docs/numerics-matmul.md bounds it by about
  // (K + 3) 2^-24 + 2^-20 relative to sum|ab| for one matmul; with T k-tiles, 3T - 1 more adds join the K - 1:
  // the test uses gamma(K + 3T) + 2^-20.
  const std::size_t M = 20, K = 500, N = 30, T = 4;
  const host::Matrix a = random_matrix(M, K, 11), b = random_matrix(K, N, 12);
  const auto exact = host::reference_fp64(a, b);
  const auto scale = host::abs_product_sums(a, b);
  for (auto [mode, bound] : {std::pair{Fp32Mode::High, gamma_n(2 * K)}, {Fp32Mode::Low_High, gamma_n(K + 3 * T) + 0x1p-20}}) {
    const GemmRun r = run(a, b, options(Generation::CAYMAN, Dtype::FP32, mode));
    expect_bit_exact(r);
    double worst = 0;
    for (std::size_t i = 0; i < r.c.data.size(); ++i)
      worst = std::max(worst, std::fabs(r.c.data[i] - exact.data[i]) / scale.data[i]);
    EXPECT_LE(worst, bound) << isa::name(mode);
  }
}

TEST(Reference, ErrorMetrics) {
  host::Matrix c(1, 6);
  host::MatrixF64 ref(1, 6);
  const float nan = from_bits(0x7FC00000);
  c.data = {1.0f, 2.0f, nan, HUGE_VALF, 1e-3f, 0.0f};
  ref.data = {1.0, 2.5, std::nan(""), HUGE_VAL, 0.0, -HUGE_VAL};
  host::ErrorOptions o;
  o.tiny = 1e-3;
  o.rel_tolerance = 0.1;
  const auto s = host::compare(c, ref, o);
  EXPECT_EQ(s.elements, 6u);
  EXPECT_TRUE(std::isinf(s.max_abs_error));  // 0 against -Inf
  EXPECT_TRUE(std::isinf(s.max_rel_error));
  EXPECT_EQ(s.worst_col, 5u);
  // Mismatches: 2 vs 2.5 (rel 0.2), 1e-3 vs 0 (|1e-3| / tiny = 1), 0 vs -Inf.
  EXPECT_EQ(s.mismatches, 3u);
  EXPECT_EQ(s.non_finite_equal, 2u) << "NaN against NaN and Inf against Inf: equal, and counted apart";
  // All NaN where the reference is NaN: error 0, and the count says it is not an exact result.
  const auto all_nan = host::compare(host::Matrix(2, 2, nan), host::MatrixF64(2, 2, std::nan("")));
  EXPECT_EQ(all_nan.max_abs_error, 0.0);
  EXPECT_EQ(all_nan.non_finite_equal, 4u);
  const auto finite = host::compare(host::Matrix(1, 2, 3.0f), host::MatrixF64(1, 2, 4.0));
  EXPECT_EQ(finite.max_abs_error, 1.0);
  EXPECT_EQ(finite.max_rel_error, 0.25);
  EXPECT_EQ(finite.mismatches, 2u);
  EXPECT_THROW(host::compare(host::Matrix(1, 2), host::MatrixF64(2, 1)), host::HostError);
  EXPECT_EQ(host::count_bit_mismatches(host::Matrix(1, 1, 0.0f), host::Matrix(1, 1, -0.0f)), 1u);
  EXPECT_THROW(host::reference_fp64(host::Matrix(2, 3), host::Matrix(2, 3)), host::HostError);
}

TEST(Execute, OperandsThatDoNotFitThePlanAreErrors) {
  const auto o = options(Generation::MARIANA);
  const auto plan = host::plan_gemm({4, 5, 6}, o);
  const auto a = host::encode_operand(host::Matrix(4, 5), o.gen, o.dtype);
  const auto b = host::encode_operand(host::Matrix(5, 6), o.gen, o.dtype);
  auto expect_error = [&](const host::EncodedOperand& x, const host::EncodedOperand& y, const std::string& what) {
    try {
      host::execute_plan(plan, x, y);
      ADD_FAILURE() << what << ": accepted";
    } catch (const host::HostError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error(b, b, "operand A is (5, 6) but the plan needs M x K = (4, 5)");
  expect_error(a, a, "operand B is (4, 5) but the plan needs K x N = (5, 6)");
  expect_error(a, host::encode_operand(host::Matrix(5, 6), o.gen, Dtype::FP16),
               "operand B is FP16 for MARIANA but the plan is BFLOAT16 for MARIANA");
  expect_error(host::encode_operand(host::Matrix(4, 5), Generation::CAYMAN, o.dtype), b, "operand A is BFLOAT16 for CAYMAN");
}

TEST(Execute, BrokenProgramsNameStepInstructionAndRule) {
  const auto o = options(Generation::MARIANA);
  const auto a = host::encode_operand(random_matrix(4, 5, 13), o.gen, o.dtype);
  const auto b = host::encode_operand(random_matrix(5, 6, 14), o.gen, o.dtype);
  const auto good = host::plan_gemm({4, 5, 6}, o);
  ASSERT_EQ(good.steps.size(), 1u);
  ASSERT_EQ(good.steps[0].program.size(), 2u);
  auto expect_error = [&](const host::GemmPlan& p, const std::string& what) {
    try {
      host::execute_plan(p, a, b);
      ADD_FAILURE() << what << ": accepted";
    } catch (const host::ExecuteError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto swapped = good;
  std::swap(swapped.steps[0].program[0], swapped.steps[0].program[1]);
  expect_error(swapped, "step 0, instruction 0 (MATMUL): no stationary loaded");

  auto unopened = good;
  isa::MatmulArgs mm;
  mm.src = isa::Pattern::row(0, 6);
  mm.dst = isa::Pattern::row(isa::ArrayGeometry::kPsumBase, 6);
  mm.num_active_rows = 5;
  mm.num_active_cols = 4;
  mm.psum_flags = isa::psum_flags::MULTI_END;
  unopened.steps[0].program[1] = isa::encode_matmul(o.gen, mm);
  expect_error(unopened, "step 0, instruction 1 (MATMUL): psum_accumulate_flags = MULTI_END: accumulate into an "
                         "unopened group (PSUM bank 0) [exec.psum_group_unopened]");

  auto invalid = good;
  isa::LdweightsArgs lw;
  lw.src = isa::Pattern::row(0, 4);
  lw.in_dtype = Dtype::INT8;
  lw.num_active_rows = 5;
  lw.num_active_cols = 4;
  invalid.steps[0].program[0] = isa::encode_ldweights(o.gen, lw);
  expect_error(invalid, "step 0, instruction 0 (LDWEIGHTS): in_dtype = 2");

  auto bad_read = good;
  bad_read.steps[0].reads[0].bank = 8;
  expect_error(bad_read, "step 0: a PSUM read");

  auto bad_load = good;
  bad_load.steps[0].loads[1].f_count = 7;  // B has 6 columns
  try {
    host::execute_plan(bad_load, a, b);
    ADD_FAILURE() << "a load past B accepted";
  } catch (const host::HostError& e) {
    EXPECT_NE(std::string(e.what()).find("SBUF load of operand B (k 0+5, free 0+7, 2-byte elements, 1 row(s) per "
                                         "partition) does not fit the 5 x 6 operand"),
              std::string::npos)
        << e.what();
  }
  host::Matrix c(4, 6);
  host::PsumRead past{0, 4, 0, 6, 1, 0};  // rows 1..4 of a 4-row C
  const std::vector<std::uint8_t> bytes(4 * 6 * 4);
  EXPECT_THROW(host::store_read(past, bytes.data(), c), host::HostError);

  // The good plan still runs.
  EXPECT_EQ(host::count_bit_mismatches(host::execute_plan(good, a, b), host::reference_defined_order(good, a, b)), 0u);
}

}  // namespace

// The GEMM driver's bulk copies share the arithmetic's host threads (D-HOST-COPIES): A's transposing gather and the
// read-back into C give the same bytes for every thread count, equal to an element-by-element expectation.
TEST(host_Execute, LoadRowsAndStoreReadGiveTheSameBytesOnEveryThreadCount) {
  std::mt19937 rng(11);
  for (const std::size_t es : {std::size_t{1}, std::size_t{2}, std::size_t{4}}) {
    SCOPED_TRACE(::testing::Message() << es << "-byte elements");
    host::EncodedOperand a, b;
    a.rows = 300, a.cols = 700, a.element_bytes = es;  // M x K; a 640-row gather is several 64 KiB shares
    a.bytes.resize(a.rows * a.cols * es);
    for (std::uint8_t& v : a.bytes) v = static_cast<std::uint8_t>(rng());
    b.rows = 1, b.cols = 1, b.element_bytes = es, b.bytes.resize(es);
    host::SbufLoad l;
    l.operand = host::Operand::A, l.k0 = 37, l.k_count = 640, l.f0 = 5, l.f_count = 290, l.element_bytes = es;
    std::vector<std::uint8_t> expected(l.k_count * l.f_count * es);
    for (std::size_t i = 0; i < l.k_count; ++i)
      for (std::size_t j = 0; j < l.f_count; ++j)
        for (std::size_t x = 0; x < es; ++x)
          expected[(i * l.f_count + j) * es + x] = a.bytes[((l.f0 + j) * a.cols + l.k0 + i) * es + x];
    EXPECT_EQ(host::load_payload(l, a, b), expected);
    for (const unsigned threads : {1u, 2u, 3u, 16u}) {
      std::vector<std::uint8_t> scratch;
      const host::LoadRows rows = host::load_rows(l, a, b, scratch, threads);
      ASSERT_EQ(rows.stride, l.f_count * es) << threads << " threads";
      EXPECT_EQ(std::vector<std::uint8_t>(rows.data, rows.data + expected.size()), expected) << threads << " threads";
    }
  }

  // A read-back of 128 partitions x 512 fp32 values from rows 2 KiB + 64 apart into a 200 x 600 C at (50, 70).
  const host::PsumRead rd{0, 128, 0, 512, 50, 70, 0};
  const std::size_t stride = 512 * 4 + 64;
  std::vector<std::uint8_t> psum(rd.partitions * stride);
  for (std::uint8_t& v : psum) v = static_cast<std::uint8_t>(rng());
  host::Matrix expected(200, 600);
  for (std::size_t p = 0; p < rd.partitions; ++p)
    for (std::size_t j = 0; j < rd.elements; ++j) {
      std::uint32_t u = 0;
      for (unsigned x = 0; x < 4; ++x) u |= static_cast<std::uint32_t>(psum[p * stride + j * 4 + x]) << (8 * x);
      std::memcpy(&expected.at(rd.row0 + p, rd.col0 + j), &u, 4);
    }
  for (const unsigned threads : {1u, 2u, 3u, 16u}) {
    host::Matrix c(200, 600);
    host::store_read(rd, psum.data(), stride, c, threads);
    EXPECT_EQ(std::memcmp(c.data.data(), expected.data.data(), c.data.size() * sizeof(float)), 0)
        << threads << " threads";
  }
}
