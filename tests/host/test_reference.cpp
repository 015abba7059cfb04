// The host references themselves, against plain loops written here as the independent expectation:
//   - reference_defined_order (blocked, vectorised, threaded) is bit-identical to the plain per-element loop it
//     replaced, on odd and block-sized shapes, k-tiles from 1 to beyond K, every dtype's quantized operands, the three
//     fp32 modes, NaN / infinity / subnormal / signed-zero / overflowing inputs, on every vector code this CPU runs and
//     at several thread counts;
//   - reference_fp64 and abs_product_sums (OpenBLAS dgemm) agree with a k-order fp64 triple loop within 1e-12 of
//     sum |a||b| on random and on cancelling inputs, and exactly on the elements a NaN or an infinity reaches.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "host_test_util.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/gemm_reference.h"
#include "pevp/host/operands.h"
#include "pevp/numerics/convert.h"
#include "pevp/pe_array/compute.h"

namespace {

using namespace host_test;
namespace isa = pevp::isa;
namespace num = pevp::num;
namespace pe = pevp::pe;
using host::ReferenceIsa;
using isa::Dtype;
using isa::Fp32Mode;
using isa::Generation;

// ---- the expectations: the plain loops (this file is built with -ffp-contract=off, tests/host/CMakeLists.txt) ----

// reference_defined_order as it was written before it was blocked: per (m, n), per k-tile, s = +0, s = s + a * b in
// k order, C = canonical(first ? s : C + s), Low_High's two extra passes after each tile.
float canonical(float v) { return v != v ? from_bits(pe::kCanonicalNan) : v; }

float dot_in_order(const float* x, const float* y, std::size_t len) {
  float s = 0.0f;
  for (std::size_t i = 0; i < len; ++i) s = s + x[i] * y[i];
  return s;
}

host::Matrix naive_defined_order(const host::Matrix& a, const host::Matrix& b, Fp32Mode mode, std::size_t k_tile) {
  const std::size_t M = a.rows, K = a.cols, N = b.cols;
  std::vector<float> a_hi = a.data, b_hi(K * N), a_lo, b_lo;
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t n = 0; n < N; ++n) b_hi[n * K + k] = b.at(k, n);
  if (mode == Fp32Mode::Low) {
    for (float& v : a_hi) v = num::to_tf32(v);
    for (float& v : b_hi) v = num::to_tf32(v);
  } else if (mode == Fp32Mode::Low_High) {
    a_lo.resize(a_hi.size());
    b_lo.resize(b_hi.size());
    for (std::size_t i = 0; i < a_hi.size(); ++i) std::tie(a_hi[i], a_lo[i]) = pe::split_tf32(a_hi[i]);
    for (std::size_t i = 0; i < b_hi.size(); ++i) std::tie(b_hi[i], b_lo[i]) = pe::split_tf32(b_hi[i]);
  }
  const bool three_pass = mode == Fp32Mode::Low_High;
  host::Matrix c(M, N);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (std::size_t t0 = 0; t0 < K; t0 += k_tile) {
        const std::size_t len = std::min(k_tile, K - t0);
        const std::size_t ai = m * K + t0, bi = n * K + t0;
        acc = canonical(t0 == 0 ? dot_in_order(&a_hi[ai], &b_hi[bi], len)
                                : acc + dot_in_order(&a_hi[ai], &b_hi[bi], len));
        if (three_pass) {
          acc = canonical(acc + dot_in_order(&a_hi[ai], &b_lo[bi], len));
          acc = canonical(acc + dot_in_order(&a_lo[ai], &b_hi[bi], len));
        }
      }
      c.at(m, n) = acc;
    }
  return c;
}

// sum_k a * b (or |a| * |b|) in fp64, in k order from +0.
host::MatrixF64 naive_fp64(const host::Matrix& a, const host::Matrix& b, bool abs) {
  host::MatrixF64 c(a.rows, b.cols);
  for (std::size_t m = 0; m < a.rows; ++m)
    for (std::size_t n = 0; n < b.cols; ++n) {
      double s = 0.0;
      for (std::size_t k = 0; k < a.cols; ++k) {
        const double x = a.at(m, k), y = b.at(k, n);
        s = s + (abs ? std::fabs(x) * std::fabs(y) : x * y);
      }
      c.at(m, n) = s;
    }
  return c;
}

// ---- helpers ------------------------------------------------------------------------------------------------------

std::vector<ReferenceIsa> supported_isas() {
  std::vector<ReferenceIsa> out;
  for (ReferenceIsa i : {ReferenceIsa::Baseline, ReferenceIsa::Avx2, ReferenceIsa::Avx512})
    if (host::reference_isa_supported(i)) out.push_back(i);
  return out;
}

const char* isa_name(ReferenceIsa i) {
  switch (i) {
    case ReferenceIsa::Auto: return "Auto";
    case ReferenceIsa::Baseline: return "Baseline";
    case ReferenceIsa::Avx2: return "Avx2";
    case ReferenceIsa::Avx512: return "Avx512";
  }
  return "?";
}

// The first few differing elements, as bit patterns.
void expect_same_bits(const host::Matrix& got, const host::Matrix& want) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.cols, want.cols);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.data.size(); ++i) {
    if (to_bits(got.data[i]) == to_bits(want.data[i])) continue;
    if (++bad <= 3)
      ADD_FAILURE() << "C[" << i / want.cols << "][" << i % want.cols << "] = 0x" << std::hex << to_bits(got.data[i])
                    << ", the plain loop gives 0x" << to_bits(want.data[i]) << std::dec;
  }
  EXPECT_EQ(bad, 0u) << "of " << want.data.size() << " elements";
}

// Every vector code this CPU runs, at 1, 2 and 3 threads (and Auto at the default), against the plain loop.
void expect_defined_order_exact(const host::Matrix& a, const host::Matrix& b, Fp32Mode mode, std::size_t k_tile) {
  const host::Matrix want = naive_defined_order(a, b, mode, k_tile);
  {
    SCOPED_TRACE("default options");
    expect_same_bits(host::reference_defined_order(a, b, mode, k_tile), want);
  }
  for (ReferenceIsa i : supported_isas())
    for (unsigned threads : {1u, 2u, 3u}) {
      SCOPED_TRACE(std::string(isa_name(i)) + ", " + std::to_string(threads) + " threads");
      host::DefinedOrderOptions o;
      o.isa = i;
      o.threads = threads;
      expect_same_bits(host::reference_defined_order(a, b, mode, k_tile, o), want);
    }
}

// rows x cols values of random_matrix with a fraction of special values mixed in: NaNs (quiet, signalling, either
// sign, odd payloads), infinities, subnormals, signed zeros and values large enough that products and sums
// overflow fp32 (and small enough that products underflow into and below the subnormals).
host::Matrix special_matrix(std::size_t rows, std::size_t cols, std::uint32_t seed, double fraction) {
  host::Matrix m = random_matrix(rows, cols, seed);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            from_bits(0x7F800001u),  // signalling NaN
                            from_bits(0xFFC12345u),  // negative quiet NaN with a payload
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            from_bits(0x007FFFFFu),  // largest subnormal
                            from_bits(0x80400000u),  // -2^-127
                            0x1p-126f,
                            0.0f,
                            -0.0f,
                            std::numeric_limits<float>::max(),
                            -0x1.8p127f,
                            0x1p100f,
                            -0x1p-100f,
                            0x1.fffffep63f};
  std::mt19937 rng(seed * 7919u + 1u);
  std::bernoulli_distribution pick(fraction);
  std::uniform_int_distribution<std::size_t> which(0, std::size(specials) - 1);
  for (float& v : m.data)
    if (pick(rng)) v = specials[which(rng)];
  return m;
}

// The fp64 references against the k-order loop: within rel * sum |a||b| where finite, equal where not.
void expect_fp64_close(const host::MatrixF64& got, const host::MatrixF64& want, const host::MatrixF64& scale,
                       double rel) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.cols, want.cols);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.data.size(); ++i) {
    const double g = got.data[i], w = want.data[i];
    bool ok;
    if (std::isnan(w) || std::isnan(g))
      ok = std::isnan(w) && std::isnan(g);
    else if (std::isinf(w) || std::isinf(g))
      ok = g == w;
    else
      ok = std::fabs(g - w) <= rel * scale.data[i];
    if (!ok && ++bad <= 3)
      ADD_FAILURE() << "C[" << i / want.cols << "][" << i % want.cols << "] = " << g << ", the k-order loop gives "
                    << w << " (scale " << scale.data[i] << ")";
  }
  EXPECT_EQ(bad, 0u) << "of " << want.data.size() << " elements";
}

void expect_fp64_references(const host::Matrix& a, const host::Matrix& b) {
  const host::MatrixF64 want = naive_fp64(a, b, false), want_abs = naive_fp64(a, b, true);
  {
    SCOPED_TRACE("reference_fp64");
    expect_fp64_close(host::reference_fp64(a, b), want, want_abs, 1e-12);
  }
  {
    SCOPED_TRACE("abs_product_sums");
    expect_fp64_close(host::abs_product_sums(a, b), want_abs, want_abs, 1e-12);
  }
}

struct Shape {
  std::size_t m, k, n;
};
// Single elements, a row or a column, odd sizes on every side of the register blocks (4 or 6 rows, 12 / 24 / 64
// columns) and k-tiles, and blocks that fit exactly.
constexpr Shape kShapes[] = {{1, 1, 1},   {1, 300, 1},   {5, 1, 97},    {7, 13, 5},   {6, 128, 64},
                             {12, 256, 48}, {33, 70, 129}, {13, 257, 67}, {130, 300, 1030}, {64, 1000, 3}};

// ---- defined order ------------------------------------------------------------------------------------------------

TEST(HostReference, DefinedOrderMatchesPlainLoopOnShapesAndKTiles) {
  std::uint32_t seed = 10;
  for (const Shape& s : kShapes) {
    const host::Matrix a = random_matrix(s.m, s.k, seed++), b = random_matrix(s.k, s.n, seed++);
    for (std::size_t k_tile : {std::size_t{1}, std::size_t{3}, std::size_t{128}, std::size_t{256}, s.k + 5}) {
      SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n) + ", k_tile " +
                   std::to_string(k_tile));
      expect_defined_order_exact(a, b, Fp32Mode::None, k_tile);
    }
  }
}

TEST(HostReference, DefinedOrderMatchesPlainLoopOnEveryDtypeAndMode) {
  const host::Matrix a = random_matrix(37, 300, 21, -12, 10), b = random_matrix(300, 133, 22, -12, 10);
  for (Generation g : {Generation::CAYMAN, Generation::MARIANA})
    for (auto [d, mode] : {std::pair{Dtype::BFLOAT16, Fp32Mode::None}, {Dtype::FP16, Fp32Mode::None},
                           {Dtype::FP8_EXP2, Fp32Mode::None}, {Dtype::FP8_EXP3, Fp32Mode::None},
                           {Dtype::FP8_EXP4, Fp32Mode::None}, {Dtype::FP8_EXP5, Fp32Mode::None},
                           {Dtype::FP32, Fp32Mode::Low}, {Dtype::FP32, Fp32Mode::High},
                           {Dtype::FP32, Fp32Mode::Low_High}}) {
      SCOPED_TRACE(std::string(isa::name(g)) + " " + std::string(isa::name(d)) + " " + std::string(isa::name(mode)));
      const host::EncodedOperand ea = host::encode_operand(a, g, d), eb = host::encode_operand(b, g, d);
      expect_defined_order_exact(ea.quantized, eb.quantized, mode, 128);
      // The plan overload: the plan's k-tile (256 with fp8 double_row) and fp32_mode.
      host::GemmOptions o;
      o.gen = g;
      o.dtype = d;
      o.fp32_mode = mode;
      const host::GemmPlan plan = host::plan_gemm({a.rows, a.cols, b.cols}, o);
      expect_same_bits(host::reference_defined_order(plan, ea, eb),
                       naive_defined_order(ea.quantized, eb.quantized, mode, plan.k_tile));
    }
}

TEST(HostReference, DefinedOrderMatchesPlainLoopOnSpecialValues) {
  // NaNs, infinities, subnormals, signed zeros and overflow, dense (10 %) and sparse (0.5 %: most elements finite,
  // some reached by one special value), in every fp32 mode; a wide exponent range so products under- and overflow.
  std::uint32_t seed = 40;
  for (double fraction : {0.1, 0.005})
    for (const Shape& s : {Shape{7, 13, 5}, Shape{33, 260, 129}, Shape{13, 257, 67}}) {
      const host::Matrix a = special_matrix(s.m, s.k, seed++, fraction),
                         b = special_matrix(s.k, s.n, seed++, fraction);
      for (Fp32Mode mode : {Fp32Mode::High, Fp32Mode::Low, Fp32Mode::Low_High, Fp32Mode::None})
        for (std::size_t k_tile : {std::size_t{1}, std::size_t{128}}) {
          SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n) + ", " +
                       std::string(isa::name(mode)) + ", k_tile " + std::to_string(k_tile) + ", specials " +
                       std::to_string(fraction));
          expect_defined_order_exact(a, b, mode, k_tile);
        }
    }
  // Only subnormals and tiny normals: every product underflows, sums of subnormals are exact or round.
  const host::Matrix tiny_a = random_matrix(19, 150, 50, -140, -120), tiny_b = random_matrix(150, 70, 51, -10, 5);
  for (Fp32Mode mode : {Fp32Mode::High, Fp32Mode::Low, Fp32Mode::Low_High}) {
    SCOPED_TRACE(std::string("subnormal products, ") + std::string(isa::name(mode)));
    expect_defined_order_exact(tiny_a, tiny_b, mode, 128);
  }
}

TEST(HostReference, DefinedOrderKeepsNegativeZeroRules) {
  // Every tile starts from +0, so -0 products sum to +0 (+0 + -0 = +0): the result is +0, not -0.
  host::Matrix a(3, 5, -0.0f), b(5, 70, 1.0f);
  const host::Matrix c = host::reference_defined_order(a, b, Fp32Mode::High, 2);
  for (float v : c.data) EXPECT_EQ(to_bits(v), 0u);
  expect_defined_order_exact(a, b, Fp32Mode::High, 2);
}

TEST(HostReference, DefinedOrderEmptyAndErrors) {
  // K = 0: no k-tile, C stays +0 (as the plain loop leaves it).
  expect_same_bits(host::reference_defined_order(host::Matrix(3, 0), host::Matrix(0, 4), Fp32Mode::None, 128),
                   host::Matrix(3, 4));
  EXPECT_EQ(host::reference_defined_order(host::Matrix(0, 5), host::Matrix(5, 4), Fp32Mode::None, 128).data.size(),
            0u);
  EXPECT_THROW(host::reference_defined_order(host::Matrix(2, 3), host::Matrix(2, 3), Fp32Mode::None, 128),
               host::HostError);
  EXPECT_THROW(host::reference_defined_order(host::Matrix(2, 3), host::Matrix(3, 3), Fp32Mode::None, 0),
               host::HostError);
  EXPECT_TRUE(host::reference_isa_supported(ReferenceIsa::Auto));
  EXPECT_TRUE(host::reference_isa_supported(ReferenceIsa::Baseline));
  for (ReferenceIsa i : {ReferenceIsa::Avx2, ReferenceIsa::Avx512})
    if (!host::reference_isa_supported(i)) {
      host::DefinedOrderOptions o;
      o.isa = i;
      EXPECT_THROW(host::reference_defined_order(host::Matrix(2, 3), host::Matrix(3, 3), Fp32Mode::None, 128, o),
                   host::HostError);
    }
}

// ---- fp64 ---------------------------------------------------------------------------------------------------------

TEST(HostReference, Fp64MatchesPlainLoopOnRandomInputs) {
  std::uint32_t seed = 60;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n));
    expect_fp64_references(random_matrix(s.m, s.k, seed, -20, 20), random_matrix(s.k, s.n, seed + 1, -20, 20));
    seed += 2;
  }
}

TEST(HostReference, Fp64MatchesPlainLoopOnCancellingInputs) {
  // Each row of A holds huge values x at k < K/2 and -x at k + K/2, against B rows k and k + K/2 that are equal, plus
  // small terms: the exact result is the small terms' sum, some 2^-130 of sum |a||b|, and what either fp64 order
  // returns is its rounding error of the huge partial sums (~2^-53 of the scale each), which differs between the
  // k-order loop and dgemm's blocked order: the case where the summation order shows most.
  const std::size_t M = 40, K = 512, N = 75, H = K / 2;
  std::mt19937 rng(70);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  host::Matrix a(M, K), b(K, N);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t k = 0; k < H; ++k) {
      const bool huge = k % 4 != 3;
      const float x = huge ? std::ldexp(u(rng), 60) : std::ldexp(u(rng), -30);
      a.at(m, k) = x;
      a.at(m, k + H) = huge ? -x : std::ldexp(u(rng), -30);
    }
  for (std::size_t k = 0; k < H; ++k)
    for (std::size_t n = 0; n < N; ++n) {
      const float y = std::ldexp(u(rng), k % 16 == 0 ? 40 : 0);
      b.at(k, n) = y;
      b.at(k + H, n) = y;
    }
  expect_fp64_references(a, b);
  // And random terms over 160 binades (+- 2^-40 .. 2^42 per operand): a few dominate, the rest round away.
  expect_fp64_references(random_matrix(31, 777, 71, -40, 40), random_matrix(777, 29, 72, -40, 40));
}

TEST(HostReference, Fp64NonFiniteInputsAreExactlyThePlainLoops) {
  // NaN / infinity rows and columns take the k-order loop: NaN from inf * 0 and inf - inf, infinities elsewhere;
  // the finite elements stay within the tolerance.
  std::uint32_t seed = 80;
  for (double fraction : {0.002, 0.05})
    for (const Shape& s : {Shape{7, 13, 5}, Shape{33, 260, 129}, Shape{64, 1000, 3}}) {
      SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n) + ", specials " +
                   std::to_string(fraction));
      const host::Matrix a = special_matrix(s.m, s.k, seed++, fraction), b = special_matrix(s.k, s.n, seed++, fraction);
      expect_fp64_references(a, b);
    }
  // One infinity in A against a zero in B: exactly NaN in that element, +inf in its others.
  host::Matrix a(2, 3, 1.0f), b(3, 2, 1.0f);
  a.at(0, 1) = std::numeric_limits<float>::infinity();
  b.at(1, 0) = 0.0f;
  const host::MatrixF64 c = host::reference_fp64(a, b);
  EXPECT_TRUE(std::isnan(c.at(0, 0)));
  EXPECT_EQ(c.at(0, 1), HUGE_VAL);
  EXPECT_EQ(c.at(1, 0), 2.0);
  EXPECT_EQ(c.at(1, 1), 3.0);
  EXPECT_TRUE(std::isnan(host::abs_product_sums(a, b).at(0, 0)));
}

TEST(HostReference, Fp64EmptyAndErrors) {
  const host::MatrixF64 c = host::reference_fp64(host::Matrix(3, 0), host::Matrix(0, 4));
  ASSERT_EQ(c.data.size(), 12u);
  for (double v : c.data) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(host::abs_product_sums(host::Matrix(0, 3), host::Matrix(3, 5)).data.size(), 0u);
  EXPECT_THROW(host::reference_fp64(host::Matrix(2, 3), host::Matrix(2, 3)), host::HostError);
  EXPECT_THROW(host::abs_product_sums(host::Matrix(2, 3), host::Matrix(2, 3)), host::HostError);
}

}  // namespace
