// Hand-computed matmuls in the defined order, NaN/Inf/signed-zero rules, the Low_High passes and an fp64
// cross-check of the error bound. Every case runs on both kernels and asserts they agree bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "test_util.h"

namespace {

using namespace pe_test;
using isa::Fp32Mode;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Runs the matmul on both kernels from the same starting dst and returns the result once they agree.
std::vector<float> run(const std::vector<float>& st, const std::vector<float>& mv, std::vector<float> dst,
                       const pe::MatmulShape& s, bool accumulate, Fp32Mode mode = Fp32Mode::None) {
  dst.resize(s.m * s.n);
  std::vector<float> fast = dst;
  pe::matmul(pe::Kernel::Reference, mode, st.data(), mv.data(), dst.data(), s, accumulate);
  pe::matmul(pe::Kernel::Fast, mode, st.data(), mv.data(), fast.data(), s, accumulate);
  EXPECT_EQ(first_bit_mismatch(dst, fast), -1);
  return dst;
}

TEST(pe_array_Matmul, TwoByTwoByTwoInDefinedOrder) {
  // stationary[k][m], moving[k][n]; dst[m][n] = sum_k stationary[k][m] * moving[k][n].
  const float big = 0x1p27f;  // fp32 ulp at 2^27 is 16, at 2^28 is 32
  const std::vector<float> st = {big, 1.0f,   // k = 0
                                 1.0f, 3.0f};  // k = 1
  const std::vector<float> mv = {1.0f, 2.0f,   // k = 0
                                 -big, 1.0f};  // k = 1
  const pe::MatmulShape s{2, 2, 2};
  const std::vector<float> over = run(st, mv, {}, s, false);
  EXPECT_EQ(over[0], 0.0f);                // 2^27 - 2^27
  EXPECT_EQ(over[1], 0x1p28f);             // 2^28 + 1 rounds to 2^28
  EXPECT_EQ(over[2], -402653184.0f);       // 1 - 3 * 2^27 = -402653183 rounds to -3 * 2^27
  EXPECT_EQ(over[3], 5.0f);                // 2 + 3
  // Accumulate adds the finished sum to dst in one add: 1 + (2^27 - 2^27) = 1, not (1 + 2^27) - 2^27 = 0; and
  // -2^28 + (2^28 + 1 -> 2^28) = 0, not (-2^28 + 2^28) + 1 = 1.
  const std::vector<float> acc = run(st, mv, {1.0f, -0x1p28f, 2.0f, 0.5f}, s, true);
  EXPECT_EQ(acc[0], 1.0f);
  EXPECT_EQ(acc[1], 0.0f);
  EXPECT_EQ(acc[2], -402653184.0f);  // 2 + -3 * 2^27 rounds back to -3 * 2^27
  EXPECT_EQ(acc[3], 5.5f);
}

TEST(pe_array_Matmul, SumsInRowOrderNotReassociated) {
  // 1e8 + 1 - 1e8 in k order is 0 (1e8 + 1 rounds back to 1e8); any other order would give 1.
  const pe::MatmulShape s{3, 1, 1};
  EXPECT_EQ(run({1e8f, 1.0f, -1e8f}, {1.0f, 1.0f, 1.0f}, {}, s, false, Fp32Mode::High)[0], 0.0f);
  EXPECT_EQ(run({1e8f, -1e8f, 1.0f}, {1.0f, 1.0f, 1.0f}, {}, s, false, Fp32Mode::High)[0], 1.0f);
  // Wide N and M so the fast kernel's vector blocks (not only its scalar tail) see the same thing.
  const pe::MatmulShape w{3, 13, 37};
  std::vector<float> st(3 * 13), mv(3 * 37);
  for (std::size_t m = 0; m < 13; ++m) st[m] = 1e8f, st[13 + m] = 1.0f, st[26 + m] = -1e8f;
  for (float& v : mv) v = 1.0f;
  for (float v : run(st, mv, {}, w, false)) ASSERT_EQ(v, 0.0f);
}

TEST(pe_array_Matmul, FullFp32ProductsRoundBeforeTheAdd) {
  // a * a = (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 rounds (tie to even) to 1 + 2^-11 before the add, so
  // -(1 + 2^-11) + a * a is exactly 0; an FMA would keep the 2^-24.
  const float a = 1.0f + 0x1p-12f;
  const float c = -(1.0f + 0x1p-11f);
  const pe::MatmulShape s{2, 1, 1};
  EXPECT_EQ(bits(run({c, a}, {1.0f, a}, {}, s, false, Fp32Mode::High)[0]), 0u);
  // The same wide enough to use the vector blocks.
  const pe::MatmulShape w{2, 8, 16};
  std::vector<float> st(16), mv(32);
  for (std::size_t m = 0; m < 8; ++m) st[m] = c, st[8 + m] = a;
  for (std::size_t n = 0; n < 16; ++n) mv[n] = 1.0f, mv[16 + n] = a;
  for (float v : run(st, mv, {}, w, false, Fp32Mode::High)) ASSERT_EQ(bits(v), 0u);
}

TEST(pe_array_Matmul, NanAndInfPropagation) {
  const float nan_payload = from_bits(0xFFC01234u);  // negative, with a payload
  const pe::MatmulShape s{2, 1, 1};
  auto one = [&](float a0, float a1, float b0, float b1, float d, bool acc) {
    return bits(run({a0, a1}, {b0, b1}, {d}, s, acc)[0]);
  };
  EXPECT_EQ(one(kInf, 1.0f, 2.0f, 3.0f, 0.0f, false), bits(kInf));
  EXPECT_EQ(one(-kInf, 1.0f, 2.0f, 3.0f, 0.0f, false), bits(-kInf));
  EXPECT_EQ(one(kInf, 0.0f, 0.0f, 3.0f, 0.0f, false), pe::kCanonicalNan);    // Inf * 0
  EXPECT_EQ(one(kInf, kInf, 1.0f, -1.0f, 0.0f, false), pe::kCanonicalNan);   // Inf - Inf (x86 default NaN is
                                                                             // 0xFFC00000; stored canonical)
  EXPECT_EQ(one(nan_payload, 1.0f, 1.0f, 1.0f, 0.0f, false), pe::kCanonicalNan);
  EXPECT_EQ(one(1.0f, 1.0f, 1.0f, 1.0f, nan_payload, true), pe::kCanonicalNan);  // NaN already in PSUM
  EXPECT_EQ(one(1.0f, 1.0f, 1.0f, 1.0f, nan_payload, false), bits(2.0f));       // overwrite ignores it
  EXPECT_EQ(one(1.0f, 1.0f, 1.0f, 1.0f, -kInf, true), bits(-kInf));
  EXPECT_EQ(one(kInf, 1.0f, 1.0f, 1.0f, -kInf, true), pe::kCanonicalNan);
  EXPECT_EQ(one(0x1p127f, 0x1p127f, 2.0f, 2.0f, 0.0f, false), bits(kInf));  // overflow
}

TEST(pe_array_Matmul, SignedZeroAndEmptyK) {
  const pe::MatmulShape s{2, 1, 1};
  // The sum starts at +0, so products that are all -0 give +0.
  EXPECT_EQ(bits(run({-0.0f, 0.0f}, {1.0f, -1.0f}, {}, s, false)[0]), 0u);
  EXPECT_EQ(bits(run({-0.0f, 0.0f}, {1.0f, -1.0f}, {-0.0f}, s, true)[0]), 0u);  // -0 + +0 = +0
  // K == 0: sum = +0; overwrite stores +0, accumulate adds it.
  const pe::MatmulShape e{0, 2, 3};
  const std::vector<float> d0 = run({}, {}, {5, 5, 5, 5, 5, 5}, e, false);
  for (float v : d0) EXPECT_EQ(bits(v), 0u);
  const std::vector<float> d1 = run({}, {}, {5, -0.0f, 5, 5, 5, 5}, e, true);
  EXPECT_EQ(d1[0], 5.0f);
  EXPECT_EQ(bits(d1[1]), 0u);
}

TEST(pe_array_Matmul, LowHighIsThreeAccumulatingPasses) {
  // 1 + 2^-12 is not a tf32 value: hi = 1, lo = 2^-12.
  const float x = 1.0f + 0x1p-12f;
  const pe::MatmulShape s{1, 1, 1};
  // hi*hi = 1, hi*lo' = 2^-12, lo*hi' = 2^-12; lo*lo' = 2^-24 is dropped.
  EXPECT_EQ(run({x}, {x}, {}, s, false, Fp32Mode::Low_High)[0], 1.0f + 0x1p-11f);
  // Low (tf32 operands, already rounded by decode) sees only 1 * 1.
  EXPECT_EQ(run({num::to_tf32(x)}, {num::to_tf32(x)}, {}, s, false, Fp32Mode::Low)[0], 1.0f);
  // The passes add into dst one after the other: -1 + 1 = 0, then + 2^-12 + 2^-12.
  EXPECT_EQ(run({x}, {x}, {-1.0f}, s, true, Fp32Mode::Low_High)[0], 0x1p-11f);
  // Pass order is fixed: 2^24 + hi*hi (= 1) rounds to 2^24 (tie to even), then each 2^-12 is lost too.
  EXPECT_EQ(run({x}, {x}, {0x1p24f}, s, true, Fp32Mode::Low_High)[0], 0x1p24f);
  // Low_High recovers full fp32 products far better than Low.
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  const pe::MatmulShape w{64, 9, 21};
  std::vector<float> st(64 * 9), mv(64 * 21);
  for (float& v : st) v = u(rng);
  for (float& v : mv) v = u(rng);
  const std::vector<float> lh = run(st, mv, {}, w, false, Fp32Mode::Low_High);
  const std::vector<float> hi = run(st, mv, {}, w, false, Fp32Mode::High);
  for (std::size_t i = 0; i < lh.size(); ++i) EXPECT_NEAR(lh[i], hi[i], 64 * 4 * 0x1p-21) << i;
}

// fp64 cross-check: |dst - exact| <= gamma * (|dst0| + sum |products|) with gamma = (K + 1) u for the narrow dtypes
// and High (K adds plus one accumulate add; High's K product roundings fit in the same budget twice over), and an
// extra 3 * 2^-22 * sum |a b| for the dropped and rounded split terms of Low_High.
struct BoundCase {
  const char* name;
  isa::Dtype dtype;
  Fp32Mode mode;
};

TEST(pe_array_Matmul, ErrorWithinBoundAgainstFp64) {
  const BoundCase cases[] = {{"bf16", isa::Dtype::BFLOAT16, Fp32Mode::None},
                             {"fp16", isa::Dtype::FP16, Fp32Mode::None},
                             {"e4m3fn", isa::Dtype::FP8_EXP4, Fp32Mode::None},
                             {"e5m2", isa::Dtype::FP8_EXP5, Fp32Mode::None},
                             {"tf32", isa::Dtype::FP32, Fp32Mode::Low},
                             {"fp32 High", isa::Dtype::FP32, Fp32Mode::High},
                             {"fp32 Low_High", isa::Dtype::FP32, Fp32Mode::Low_High}};
  std::mt19937 rng(2024);
  const double u = 0x1p-24;
  for (const BoundCase& c : cases) {
    const pe::OperandType t{isa::Generation::MARIANA, c.dtype, c.mode};
    const pe::MatmulShape s{128, 16, 40};
    const std::vector<float> st = decode(t, random_operand(t, s.k * s.m, rng, 0.0));
    const std::vector<float> mv = decode(t, random_operand(t, s.k * s.n, rng, 0.0));
    // For Low the exact reference uses the operands as decoded (tf32-rounded): the bound is on the summation.
    std::vector<float> dst0(s.m * s.n);
    for (float& v : dst0) v = std::ldexp(std::uniform_real_distribution<float>(-1, 1)(rng), 3);
    for (bool accumulate : {false, true}) {
      const std::vector<float> got = run(st, mv, dst0, s, accumulate, c.mode);
      double worst = 0.0;
      for (std::size_t m = 0; m < s.m; ++m) {
        for (std::size_t n = 0; n < s.n; ++n) {
          double exact = accumulate ? dst0[m * s.n + n] : 0.0;
          double mag = std::fabs(exact);
          for (std::size_t k = 0; k < s.k; ++k) {
            const double p = static_cast<double>(st[k * s.m + m]) * mv[k * s.n + n];
            exact += p;
            mag += std::fabs(p);
          }
          double bound = (s.k + 3) * u * mag * 1.0001;
          if (c.mode == Fp32Mode::Low_High) bound += 4 * 0x1p-22 * mag;
          const double err = std::fabs(got[m * s.n + n] - exact);
          ASSERT_LE(err, bound) << c.name << " m " << m << " n " << n;
          if (mag > 0) worst = std::max(worst, err / mag);
        }
      }
      ::testing::Test::RecordProperty(std::string(c.name) + (accumulate ? " acc" : " over"), std::to_string(worst));
    }
  }
}

}  // namespace
