// The fast kernel on several host threads and its in-place entry point (matmul_pass_fast_rows), on every SIMD
// target the host runs:
// - the result is the same bits for every thread count (1 .. 16, more than the panels of some shapes) and equal to
//   the reference loop, for shapes large enough that the threads really split the work;
// - matmul_pass_fast_rows (the moving operand decoded from strided encoded rows, dst written through its own row
//   stride) gives the bits of decode_operands + matmul_pass_fast for every dense dtype, writes nothing outside the
//   N columns of each dst row, and refuses (touching nothing) what it cannot compute.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "pevp/pe_array/fast_kernel.h"
#include "force_target.h"
#include "test_util.h"

namespace {

using namespace pe_test;
using isa::Dtype;
using isa::Fp32Mode;
using isa::Generation;

const pe::OperandType kBf16{Generation::MARIANA, Dtype::BFLOAT16, Fp32Mode::None};

TEST(pe_array_Threads, EveryThreadCountGivesTheReferenceBitsOnEveryTarget) {
  std::mt19937 rng(7);
  // 8.4 M MACs (8 panels of 64 columns on AVX-512), an N that cuts the last panel, and a shape just big enough
  // for two threads.
  for (const pe::MatmulShape s : {pe::MatmulShape{128, 128, 512}, pe::MatmulShape{128, 100, 1000},
                                  pe::MatmulShape{64, 128, 260}}) {
    SCOPED_TRACE(::testing::Message() << "K " << s.k << " M " << s.m << " N " << s.n);
    const std::vector<float> st = decode(kBf16, random_operand(kBf16, s.k * s.m, rng, 0.001));
    const std::vector<float> mv = decode(kBf16, random_operand(kBf16, s.k * s.n, rng, 0.001));
    std::vector<float> init(s.m * s.n);
    for (float& v : init) v = decode(kBf16, random_operand(kBf16, 1, rng, 0.01))[0];
    for (const bool accumulate : {false, true}) {
      std::vector<float> ref = init;
      pe::matmul_pass_reference(st.data(), mv.data(), ref.data(), s, accumulate);
      for (const std::int64_t t : hwy::SupportedAndGeneratedTargets()) {
        ForceTarget force(t);
        for (const unsigned threads : {1u, 2u, 3u, 4u, 7u, 16u}) {
          std::vector<float> fast = init;
          pe::matmul_pass_fast(st.data(), mv.data(), fast.data(), s, accumulate, threads);
          const long bad = first_bit_mismatch(ref, fast);
          ASSERT_EQ(bad, -1) << hwy::TargetName(t) << ", " << threads << " threads"
                             << (accumulate ? ", accumulate" : "") << ": first difference at element " << bad;
        }
      }
    }
  }
}

// K rows of N elements of `t` at a row stride of `stride` bytes (>= N elements), the gaps filled with 0xFF (NaN or
// a large value in every format), as a moving tile sits in SBUF partitions.
std::vector<std::uint8_t> strided_rows(const pe::OperandType& t, const std::vector<std::uint8_t>& packed,
                                       std::size_t k, std::size_t n, std::size_t stride) {
  const std::size_t row = n * pe::operand_bytes(t.dtype);
  std::vector<std::uint8_t> out(k * stride, 0xFF);
  for (std::size_t r = 0; r < k; ++r) std::memcpy(out.data() + r * stride, packed.data() + r * row, row);
  return out;
}

// bf16 codes (little-endian) as fp32 by hand: a bf16 value is the high half of its fp32 bits.
std::vector<float> bf16_by_hand(const std::vector<std::uint8_t>& bytes) {
  std::vector<float> out(bytes.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = from_bits(static_cast<std::uint32_t>(bytes[2 * i] | bytes[2 * i + 1] << 8) << 16);
  return out;
}

TEST(pe_array_Threads, RowsEntryMatchesDecodeThenKernelForEveryDtype) {
  const std::pair<const char*, pe::OperandType> types[] = {
      {"bf16", kBf16},
      {"fp16", {Generation::MARIANA, Dtype::FP16, Fp32Mode::None}},
      {"e4m3 (CAYMAN)", {Generation::CAYMAN, Dtype::FP8_EXP4, Fp32Mode::None}},
      {"e4m3fn", {Generation::MARIANA, Dtype::FP8_EXP4, Fp32Mode::None}},
      {"e5m2", {Generation::MARIANA, Dtype::FP8_EXP5, Fp32Mode::None}},
      {"e3m4", {Generation::MARIANA, Dtype::FP8_EXP3, Fp32Mode::None}},
      {"e2m5", {Generation::MARIANA, Dtype::FP8_EXP2, Fp32Mode::None}},
      {"tf32", {Generation::MARIANA, Dtype::FP32, Fp32Mode::Low}},
      {"fp32 High", {Generation::MARIANA, Dtype::FP32, Fp32Mode::High}},
  };
  std::mt19937 rng(11);
  const float kSentinel = from_bits(0x7F800001u);  // a signalling NaN the kernel never writes
  for (const auto& [name, t] : types) {
    for (const pe::MatmulShape s : {pe::MatmulShape{128, 128, 512}, pe::MatmulShape{33, 17, 77},
                                    pe::MatmulShape{1, 1, 1}}) {
      SCOPED_TRACE(::testing::Message() << name << ", K " << s.k << " M " << s.m << " N " << s.n);
      const std::vector<float> st = decode(t, random_operand(t, s.k * s.m, rng, 0.002));
      const std::vector<std::uint8_t> packed = random_operand(t, s.k * s.n, rng, 0.002);
      // bf16 decodes through the same widening as the entry point under test, so its values are made by hand.
      const std::vector<float> mv = t.dtype == Dtype::BFLOAT16 ? bf16_by_hand(packed) : decode(t, packed);
      const std::size_t stride = s.n * pe::operand_bytes(t.dtype) + 96;  // rows apart, as SBUF partitions are
      const std::vector<std::uint8_t> rows = strided_rows(t, packed, s.k, s.n, stride);
      const std::size_t ldd = s.n + 5;
      for (const bool accumulate : {false, true}) {
        std::vector<float> init(s.m * s.n);
        for (float& v : init) v = decode(kBf16, random_operand(kBf16, 1, rng, 0.01))[0];
        std::vector<float> want = init;
        pe::matmul_pass_fast(st.data(), mv.data(), want.data(), s, accumulate);
        for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
          ForceTarget force(target);
          for (const unsigned threads : {1u, 2u}) {
            std::vector<float> dst(s.m * ldd, kSentinel);
            for (std::size_t m = 0; m < s.m; ++m) std::memcpy(&dst[m * ldd], &init[m * s.n], s.n * sizeof(float));
            ASSERT_TRUE(pe::matmul_pass_fast_rows(st.data(), {rows.data(), stride, t}, {dst.data(), ldd}, s,
                                                  accumulate, threads));
            std::vector<float> got(s.m * s.n);
            for (std::size_t m = 0; m < s.m; ++m) {
              std::memcpy(&got[m * s.n], &dst[m * ldd], s.n * sizeof(float));
              for (std::size_t j = s.n; j < ldd; ++j)
                ASSERT_EQ(bits(dst[m * ldd + j]), bits(kSentinel)) << "wrote past row " << m;
            }
            const long bad = first_bit_mismatch(want, got);
            ASSERT_EQ(bad, -1) << hwy::TargetName(target) << ", " << threads << " threads"
                               << (accumulate ? ", accumulate" : "") << ": first difference at element " << bad;
          }
        }
      }
    }
  }
}

// bf16 rows are widened a vector at a time in the pack (and element by element from an odd address, which no u16
// load may read): every one of the 65,536 bf16 patterns, and 13 more so that every target's last panel ends in a
// partial vector, as a moving row times a stationary of 1 and of -3 gives the bits of matmul_pass_fast on the values
// decoded by hand, on every target, at an even and an odd address. (The kernel stores every NaN as the canonical NaN
// and sums from +0, so NaN payloads and -0 are checked by pe_array_Decode.Bf16EveryCodeOnEveryTargetAtAnyAddress.)
TEST(pe_array_Threads, RowsEntryWidensEveryBf16PatternAtAnyAddress) {
  const std::size_t n = 65536 + 13;
  std::vector<std::uint8_t> buffer(2 * n + 1);
  for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto h = static_cast<std::uint16_t>(i);
      std::memcpy(buffer.data() + offset + 2 * i, &h, 2);
    }
    const std::uint8_t* row = buffer.data() + offset;
    const std::vector<float> mv = bf16_by_hand(std::vector<std::uint8_t>(row, row + 2 * n));
    for (const float scale : {1.0f, -3.0f}) {
      SCOPED_TRACE(::testing::Message() << "offset " << offset << ", stationary " << scale);
      const pe::MatmulShape s{1, 1, n};
      std::vector<float> want(n);
      pe::matmul_pass_fast(&scale, mv.data(), want.data(), s, false);
      for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
        ForceTarget force(target);
        std::vector<float> got(n);
        ASSERT_TRUE(pe::matmul_pass_fast_rows(&scale, {row, 2 * n, kBf16}, {got.data(), n}, s, false));
        const long bad = first_bit_mismatch(want, got);
        ASSERT_EQ(bad, -1) << hwy::TargetName(target) << ": first difference at element " << bad;
      }
    }
  }
}

TEST(pe_array_Threads, RowsEntryRefusesWhatItCannotComputeAndTouchesNothing) {
  const pe::MatmulShape s{4, 4, 8};
  const std::vector<std::uint8_t> rows(4 * 8 * 4, 0);
  const std::vector<float> st(16, 1.0f);
  std::vector<float> dst(4 * 8, 5.0f);
  const std::vector<float> before = dst;
  // Low_High needs the whole operands split (matmul() does it in three passes).
  EXPECT_FALSE(pe::matmul_pass_fast_rows(st.data(), {rows.data(), 32, {Generation::MARIANA, Dtype::FP32,
                                                                       Fp32Mode::Low_High}},
                                         {dst.data(), 8}, s, true));
  // No dense operand: INT8 is no matmul input; FP32 without an fp32_mode is not either.
  EXPECT_FALSE(pe::matmul_pass_fast_rows(st.data(), {rows.data(), 8, {Generation::MARIANA, Dtype::INT8,
                                                                      Fp32Mode::None}},
                                         {dst.data(), 8}, s, true));
  EXPECT_FALSE(pe::matmul_pass_fast_rows(st.data(), {rows.data(), 32, {Generation::MARIANA, Dtype::FP32,
                                                                       Fp32Mode::None}},
                                         {dst.data(), 8}, s, true));
  // dst rows closer together than N would overlap.
  EXPECT_FALSE(pe::matmul_pass_fast_rows(st.data(), {rows.data(), 16, kBf16}, {dst.data(), 7}, s, true));
  EXPECT_EQ(first_bit_mismatch(before, dst), -1);
}

TEST(pe_array_Threads, AvailableHostThreadsIsWithinTheMachine) {
  const unsigned n = pe::available_host_threads();
  EXPECT_GE(n, 1u);
  const unsigned hw = std::thread::hardware_concurrency();
  if (hw > 0) {
    EXPECT_LE(n, hw);
  }
}

}  // namespace

// for_each_share: contiguous shares that cover [0, count) exactly once, no more of them than the threads asked for
// nor than give each at least min_share items, and all returned when it returns.
TEST(pe_array_Threads, ForEachShareCoversEveryItemOnceInLargeEnoughShares) {
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000}})
    for (const std::size_t min_share : {std::size_t{0}, std::size_t{1}, std::size_t{100}, std::size_t{5000}})
      for (const unsigned threads : {0u, 1u, 2u, 3u, 16u}) {
        SCOPED_TRACE(::testing::Message() << "count " << count << " min_share " << min_share << " threads " << threads);
        std::mutex m;
        std::vector<std::pair<std::size_t, std::size_t>> shares;
        std::vector<int> seen(count, 0);
        pe::for_each_share(count, min_share, threads, [&](std::size_t begin, std::size_t end) {
          const std::lock_guard<std::mutex> lock(m);
          shares.emplace_back(begin, end);
          for (std::size_t i = begin; i < end && i < count; ++i) ++seen[i];
        });
        EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
        if (count == 0) {
          EXPECT_TRUE(shares.empty());
          continue;
        }
        const std::size_t worth = std::max<std::size_t>(1, count / std::max<std::size_t>(min_share, 1));
        const std::size_t most = std::min<std::size_t>(std::max(threads, 1u), worth);
        EXPECT_GE(shares.size(), 1u);
        EXPECT_LE(shares.size(), most);
        for (const auto& [begin, end] : shares) {
          EXPECT_LT(begin, end);
          if (shares.size() > 1) {
            EXPECT_GE(end - begin, std::max<std::size_t>(min_share, 1));
          }
        }
      }
}
