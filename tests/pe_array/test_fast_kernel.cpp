// The fast kernel (Highway SIMD, runtime dispatch) on every SIMD target it was compiled for that this host can run
// -- each forced in turn with hwy::SetSupportedTargetsForTest, so the AVX2 and SSE paths are tested on an AVX-512
// host too:
// - dispatch reaches each target, and the library was built with the targets the CPU has;
// - hand-computed values (unfused products, summation order, dst only in the final add, +0 start, canonical NaN,
//   subnormals, overflow) over shapes whose M and N cut the register blocks and vectors at every offset;
// - bit-identical to the reference loop over a K x M x N sweep (K 0..128, M 1..128, N 1..512 around every vector
//   and block width) with full-fp32 operands whose products round, and raw codes (NaN, Inf, subnormals) mixed in;
// - bit-identical to the reference for every input dtype and fp32_mode on random shapes.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <sstream>

#include "pevp/pe_array/fast_kernel.h"
#include "force_target.h"
#include "test_util.h"

namespace {

using namespace pe_test;
using isa::Dtype;
using isa::Fp32Mode;
using isa::Generation;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Every compiled-in target this CPU supports, best first.
std::vector<std::int64_t> kernel_targets() { return hwy::SupportedAndGeneratedTargets(); }

std::string hex(std::uint32_t u) {
  std::ostringstream os;
  os << "0x" << std::hex << u;
  return os.str();
}

TEST(pe_array_FastKernelTargets, DispatchReachesEveryTargetTheHostRuns) {
  const std::vector<std::int64_t> targets = kernel_targets();
  ASSERT_FALSE(targets.empty());
  // Unforced, Highway picks the best target (lowest bit first in the list).
  EXPECT_STREQ(pe::matmul_fast_target(), hwy::TargetName(targets.front()));
  for (const std::int64_t t : targets) {
    ForceTarget force(t);
    EXPECT_STREQ(pe::matmul_fast_target(), hwy::TargetName(t));
  }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // The CPU's own report, independent of Highway's detection: every SIMD level it has must have been compiled in
  // and be reachable, so a build that silently lost a target fails here rather than testing fewer paths.
  auto has = [&](std::int64_t t) {
    for (const std::int64_t x : targets)
      if (x == t) return true;
    return false;
  };
  if (__builtin_cpu_supports("ssse3")) {
    EXPECT_TRUE(has(HWY_SSSE3));
  }
  if (__builtin_cpu_supports("sse4.2")) {
    EXPECT_TRUE(has(HWY_SSE4));
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_TRUE(has(HWY_AVX2));
  }
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    EXPECT_TRUE(has(HWY_AVX3));
  }
#endif
}

// One column pattern of the hand-computed test: the K = 4 moving values of a column, dst's starting value, and the
// expected result for overwrite and for accumulate, worked out by hand in the defined order against the fixed
// stationary column {1, 1 + 2^-12, 0, 1}.
struct Column {
  const char* what;
  float mv[4];
  float dst;
  std::uint32_t over, acc;
};

std::uint32_t b(float f) { return bits(f); }

TEST(pe_array_FastKernelTargets, HandComputedValuesOnEveryTarget) {
  const float a = 1.0f + 0x1p-12f;  // a * a = 1 + 2^-11 + 2^-24, rounds (tie to even) to 1 + 2^-11
  const float st_col[4] = {1.0f, a, 0.0f, 1.0f};
  const float max = std::numeric_limits<float>::max();
  const float snan = from_bits(0xFFA00001u);  // negative signalling NaN with a payload
  const Column cols[] = {
      // -(1 + 2^-11) + round(a * a) = +0; an FMA would leave 2^-24. 0 * 5 adds +0.
      {"product rounds before the add", {-(1.0f + 0x1p-11f), a, 5.0f, 0.0f}, 3.0f, 0u, b(3.0f)},
      // 2^25 + (1 + 2^-12) = 2^25 (ulp 4), then - 2^25 = 0; reassociated it would be 1 + 2^-12.
      {"k order, not reassociated", {0x1p25f, 1.0f, 3.0f, -0x1p25f}, 0.5f, 0u, b(0.5f)},
      // dst joins only at the end: 1 + (2^27 - 2^27) = 1; folded in first it would be 0.
      {"dst only in the final add", {0x1p27f, 0.0f, 0.0f, -0x1p27f}, 1.0f, 0u, b(1.0f)},
      // All products -0; the sum starts at +0 and stays +0; -0 + +0 = +0.
      {"sum starts at +0", {-0.0f, -0.0f, -0.0f, -0.0f}, -0.0f, 0u, 0u},
      {"Inf * 0 is the canonical NaN", {1.0f, 1.0f, kInf, 1.0f}, 2.0f, pe::kCanonicalNan, pe::kCanonicalNan},
      // x86 produces the negative default NaN 0xFFC00000 here; stored canonical.
      {"Inf - Inf is the canonical NaN", {kInf, 0.0f, 0.0f, -kInf}, 2.0f, pe::kCanonicalNan, pe::kCanonicalNan},
      {"NaN operand payload dropped", {snan, 1.0f, 1.0f, 1.0f}, 2.0f, pe::kCanonicalNan, pe::kCanonicalNan},
      // Subnormals, no FTZ/DAZ: a * 2^-138 = 2^-138 + 2^-150, a tie between 2048 and 2049 x 2^-149 -> 2048; sum
      // 512 + 2048 + 0 + 1 = 2561 x 2^-149; plus dst 2^-149 = 2562 x 2^-149.
      {"subnormal products round, no flush",
       {0x1p-140f, 0x1p-138f, 0.0f, 0x1p-149f},
       0x1p-149f,
       b(std::ldexp(2561.0f, -149)),
       b(std::ldexp(2562.0f, -149))},
      // 1.5 + 2a = 3.5 + 2^-11, + 0, - 0.25 = 3.25 + 2^-11; + 0.75 = 4 + 2^-11.
      {"ordinary values", {1.5f, 2.0f, 1000.0f, -0.25f}, 0.75f, b(3.25f + 0x1p-11f), b(4.0f + 0x1p-11f)},
      // max * a overflows to Inf; Inf + dst (-Inf) is NaN.
      {"overflow to Inf", {max, max, 0.0f, 0.0f}, -kInf, b(kInf), pe::kCanonicalNan},
  };
  constexpr std::size_t kCols = sizeof cols / sizeof cols[0];
  for (const std::int64_t t : kernel_targets()) {
    ForceTarget force(t);
    for (const std::size_t m : {1u, 3u, 4u, 5u, 7u, 33u})
      for (const std::size_t n : {1u, 10u, 17u, 31u, 63u, 65u, 100u}) {
        const pe::MatmulShape s{4, m, n};
        std::vector<float> st(4 * m), mv(4 * n), init(m * n);
        for (std::size_t k = 0; k < 4; ++k)
          for (std::size_t i = 0; i < m; ++i) st[k * m + i] = st_col[k];
        // Column j gets pattern j % 10: as N varies, every pattern lands in vector tails and block edges.
        for (std::size_t j = 0; j < n; ++j)
          for (std::size_t k = 0; k < 4; ++k) mv[k * n + j] = cols[j % kCols].mv[k];
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t j = 0; j < n; ++j) init[i * n + j] = cols[j % kCols].dst;
        for (const bool accumulate : {false, true}) {
          std::vector<float> dst = init;
          pe::matmul_pass_fast(st.data(), mv.data(), dst.data(), s, accumulate);
          for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
              const Column& c = cols[j % kCols];
              const std::uint32_t want = accumulate ? c.acc : c.over;
              const std::uint32_t got = bits(dst[i * n + j]);
              ASSERT_EQ(got, want) << hwy::TargetName(t) << " M " << m << " N " << n << " m " << i << " n " << j
                                   << (accumulate ? " acc" : " over") << ": " << c.what << ", got " << hex(got)
                                   << " want " << hex(want);
            }
        }
      }
  }
}

// Full-fp32 operand values: random 24-bit mantissas over a few binades, so products round and sums round; with
// probability 1/64 a raw random code (NaN, Inf, subnormal, huge) and with 1/64 a special from the list.
float random_fp32(std::mt19937& rng) {
  static const float specials[] = {0.0f, -0.0f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(),
                                   0x1p-149f, -0x1p-140f, 0x1p100f, -0x1p100f};
  const std::uint32_t r = rng();
  if ((r & 63u) == 0) return from_bits(rng());
  if ((r & 63u) == 1) return specials[(r >> 6) % (sizeof specials / sizeof specials[0])];
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  const float x = std::ldexp(mant(rng), static_cast<int>((r >> 6) % 9) - 4);
  return (r >> 16) & 1u ? -x : x;
}

TEST(pe_array_FastKernelTargets, ShapeSweepBitIdenticalToReferenceOnEveryTarget) {
  const std::vector<std::int64_t> targets = kernel_targets();
  std::mt19937 rng(12345);
  int compared = 0;
  for (const std::size_t k : {0u, 1u, 2u, 3u, 31u, 128u})
    for (const std::size_t m : {1u, 5u, 31u, 32u, 33u, 128u})
      for (const std::size_t n : {1u, 3u, 7u, 8u, 15u, 16u, 17u, 63u, 64u, 65u, 511u, 512u}) {
        const pe::MatmulShape s{k, m, n};
        std::vector<float> st(k * m), mv(k * n), init(m * n);
        for (float& v : st) v = random_fp32(rng);
        for (float& v : mv) v = random_fp32(rng);
        for (float& v : init) v = random_fp32(rng);
        for (const bool accumulate : {false, true}) {
          std::vector<float> ref = init;
          pe::matmul_pass_reference(st.data(), mv.data(), ref.data(), s, accumulate);
          for (const std::int64_t t : targets) {
            ForceTarget force(t);
            std::vector<float> fast = init;
            pe::matmul_pass_fast(st.data(), mv.data(), fast.data(), s, accumulate);
            const long bad = first_bit_mismatch(ref, fast);
            ASSERT_EQ(bad, -1) << hwy::TargetName(t) << " K " << k << " M " << m << " N " << n
                               << (accumulate ? " acc" : " over") << " at m " << bad / static_cast<long>(n)
                               << " n " << bad % static_cast<long>(n) << ": ref "
                               << hex(bits(ref[static_cast<std::size_t>(bad)])) << " fast "
                               << hex(bits(fast[static_cast<std::size_t>(bad)]));
            ++compared;
          }
        }
      }
  EXPECT_EQ(compared, static_cast<int>(6 * 6 * 12 * 2 * targets.size()));
}

struct KernelCase {
  const char* name;
  pe::OperandType type;
  bool accumulate;
};

void PrintTo(const KernelCase& c, std::ostream* os) { *os << c.name << (c.accumulate ? " acc" : " over"); }

std::string case_name(const ::testing::TestParamInfo<KernelCase>& info) {
  return std::string(info.param.name) + (info.param.accumulate ? "_acc" : "_over");
}

class pe_array_FastKernel : public ::testing::TestWithParam<KernelCase> {};

// Every dtype and fp32_mode (through matmul(), so Low_High's three passes too), random shapes, on every target.
TEST_P(pe_array_FastKernel, BitIdenticalToReference) {
  const KernelCase& c = GetParam();
  std::mt19937 rng(static_cast<unsigned>(static_cast<unsigned>(c.type.dtype) * 131 +
                                         static_cast<unsigned>(c.type.fp32_mode) * 7 + c.accumulate));
  std::vector<pe::MatmulShape> shapes = {{1, 1, 1},   {128, 128, 512}, {1, 127, 511}, {128, 7, 13},
                                         {3, 6, 8},   {5, 5, 7},       {17, 12, 64},  {64, 1, 512},
                                         {2, 128, 1}, {33, 13, 65},    {0, 9, 33}};
  std::uniform_int_distribution<std::size_t> dk(1, 128), dm(1, 128), dn(1, 512);
  for (int i = 0; i < 8; ++i) shapes.push_back({dk(rng), dm(rng), dn(rng)});
  std::uniform_real_distribution<float> dval(-100.0f, 100.0f);
  std::uniform_int_distribution<int> special(0, 199);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf, -0.0f};
  for (const pe::MatmulShape& s : shapes) {
    SCOPED_TRACE(::testing::Message() << "K " << s.k << " M " << s.m << " N " << s.n);
    const std::vector<float> st = decode(c.type, random_operand(c.type, s.k * s.m, rng, 0.002));
    const std::vector<float> mv = decode(c.type, random_operand(c.type, s.k * s.n, rng, 0.002));
    ASSERT_EQ(st.size(), s.k * s.m);
    std::vector<float> init(s.m * s.n);
    for (float& v : init) {
      const int r = special(rng);
      v = r < 4 ? specials[r] : dval(rng);
    }
    std::vector<float> ref = init;
    pe::matmul(pe::Kernel::Reference, c.type.fp32_mode, st.data(), mv.data(), ref.data(), s, c.accumulate);
    for (const std::int64_t t : kernel_targets()) {
      ForceTarget force(t);
      std::vector<float> fast = init;
      pe::matmul(pe::Kernel::Fast, c.type.fp32_mode, st.data(), mv.data(), fast.data(), s, c.accumulate);
      const long bad = first_bit_mismatch(ref, fast);
      ASSERT_EQ(bad, -1) << hwy::TargetName(t) << ": ref " << hex(bits(ref[static_cast<std::size_t>(bad)]))
                         << " fast " << hex(bits(fast[static_cast<std::size_t>(bad)]));
      // Same bits on a second run: the per-thread scratch carries nothing over.
      std::vector<float> again = init;
      pe::matmul(pe::Kernel::Fast, c.type.fp32_mode, st.data(), mv.data(), again.data(), s, c.accumulate);
      ASSERT_EQ(first_bit_mismatch(fast, again), -1) << hwy::TargetName(t);
    }
  }
}

std::vector<KernelCase> all_cases() {
  const std::pair<const char*, pe::OperandType> types[] = {
      {"bf16", {Generation::MARIANA, Dtype::BFLOAT16, Fp32Mode::None}},
      {"fp16", {Generation::MARIANA, Dtype::FP16, Fp32Mode::None}},
      {"e4m3", {Generation::CAYMAN, Dtype::FP8_EXP4, Fp32Mode::None}},
      {"e4m3fn", {Generation::MARIANA, Dtype::FP8_EXP4, Fp32Mode::None}},
      {"e5m2", {Generation::MARIANA, Dtype::FP8_EXP5, Fp32Mode::None}},
      {"e3m4", {Generation::MARIANA, Dtype::FP8_EXP3, Fp32Mode::None}},
      {"e2m5", {Generation::MARIANA, Dtype::FP8_EXP2, Fp32Mode::None}},
      {"tf32_Low", {Generation::MARIANA, Dtype::FP32, Fp32Mode::Low}},
      {"fp32_High", {Generation::MARIANA, Dtype::FP32, Fp32Mode::High}},
      {"fp32_LowHigh", {Generation::MARIANA, Dtype::FP32, Fp32Mode::Low_High}},
  };
  std::vector<KernelCase> out;
  for (const auto& [name, t] : types)
    for (bool acc : {false, true}) out.push_back({name, t, acc});
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, pe_array_FastKernel, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
