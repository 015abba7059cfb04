// ArrayExecutor: LDWEIGHTS/MATMUL against SBUF/PSUM buffers, compared bit for bit with plain loops in the defined
// order (decoding with pevp::num), the PSUM group semantics and every error path (nothing written on error).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "pevp/isa/builders.h"
#include "pevp/isa/decode.h"
#include "pevp/firmware/firmware.h"
#include "pevp/pe_array/executor.h"
#include "executor_test_util.h"

namespace {

using namespace pe_test;
using isa::Dtype;
using isa::Fp32Mode;
using isa::Generation;
namespace pf = isa::psum_flags;

TEST(Executor, RandomOperandsEveryDtypeBitExact) {
  for (Generation g : {Generation::CAYMAN, Generation::MARIANA, Generation::MAVERICK}) {
    for (auto [dt, mode] : {std::pair{Dtype::BFLOAT16, Fp32Mode::None}, {Dtype::FP16, Fp32Mode::None},
                            {Dtype::FP8_EXP4, Fp32Mode::None}, {Dtype::FP8_EXP5, Fp32Mode::None},
                            {Dtype::FP32, Fp32Mode::High}}) {
      SCOPED_TRACE(std::string(isa::name(g)) + " " + std::string(isa::name(dt)));
      const pe::OperandType t{g, dt, mode};
      const unsigned K = 128, M = 128, N = 96;
      std::mt19937 rng(42);
      Mem mem(g);
      const auto st = random_operand(t, K * M, rng, 0.002);
      const auto mv = random_operand(t, K * N, rng, 0.002);
      mem.put(0, 0, st, K);
      mem.put(0, 8192, mv, K);
      pe::ArrayExecutor ex(isa::preset_geometry(g));
      expect_ok(ex.ldweights(dec(g, isa::encode_ldweights(g, ldw(t, 0, K, M))), mem.sbuf.data(), mem.sbuf.size()));
      EXPECT_EQ(ex.last_stats().k, K);
      auto a = mm(t, mem.addr(0, 8192), kPsum + kBank, K, M, N, pf::SINGLE);
      expect_ok(ex.matmul(dec(g, isa::encode_matmul(g, a)), mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(),
                          mem.psum.size()));
      EXPECT_EQ(ex.last_stats().macs, std::uint64_t{K} * M * N);
      const auto ref = ref_sum(t, st, mv, K, M, N);
      int bad = 0;
      for (unsigned m = 0; m < M; ++m)
        for (unsigned n = 0; n < N; ++n)
          if (psum_u32(mem, m, kBank + 4 * n) != bits(canon(ref[m * N + n])) && ++bad < 4)
            ADD_FAILURE() << "m " << m << " n " << n;
    }
  }
}

TEST(Executor, KTiledGroupIsSumOfPerMatmulSums) {
  const Generation g = Generation::CAYMAN;
  const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
  const unsigned K = 128, M = 64, N = 40;
  std::mt19937 rng(1);
  Mem mem(g);
  const std::vector<std::uint8_t> psum_before = mem.psum;
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  std::vector<float> expect(M * N);
  const std::uint8_t flags[3] = {pf::MULTI_START, pf::MULTI_MID, pf::MULTI_END};
  for (int kt = 0; kt < 3; ++kt) {
    const auto st = random_operand(t, K * M, rng, 0.0);
    const auto mv = random_operand(t, K * N, rng, 0.0);
    mem.put(0, 0, st, K);
    mem.put(0, 4096, mv, K);
    auto l = ldw(t, 0, K, M);
    expect_ok(ex.ldweights(dec(g, isa::encode_ldweights(g, l)), mem.sbuf.data(), mem.sbuf.size()));
    auto a = mm(t, mem.addr(0, 4096), kPsum + kBank + 64, K, M, N, flags[kt]);
    a.zero_region = isa::ZeroRegion::BANKS_2;
    expect_ok(ex.matmul(dec(g, isa::encode_matmul(g, a)), mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(),
                        mem.psum.size()));
    const auto s = ref_sum(t, st, mv, K, M, N);
    for (std::size_t i = 0; i < s.size(); ++i) expect[i] = kt == 0 ? s[i] : expect[i] + s[i];
    EXPECT_EQ(ex.group_open(1), kt < 2);
  }
  for (unsigned m = 0; m < M; ++m)
    for (unsigned n = 0; n < N; ++n) ASSERT_EQ(psum_u32(mem, m, kBank + 64 + 4 * n), bits(expect[m * N + n]));
  // The zero region (banks 0-1, the M dst partitions) was cleared; bank 2 and partition M were not touched.
  EXPECT_EQ(psum_u32(mem, 0, 0), 0u);
  EXPECT_EQ(psum_u32(mem, M - 1, 2 * kBank - 4), 0u);
  EXPECT_EQ(psum_u32(mem, 0, 2 * kBank), [&] { std::uint32_t u; std::memcpy(&u, &psum_before[2 * kBank], 4); return u; }());
  EXPECT_EQ(mem.psum[M * kPsumPart], psum_before[M * kPsumPart]);
}

TEST(Executor, IndependentTilesKeepIndependentStationaries) {
  const Generation g = Generation::MARIANA;
  const pe::OperandType t{g, Dtype::FP16, Fp32Mode::None};
  const unsigned K = 64, M = 64, N = 32;
  std::mt19937 rng(3);
  Mem mem(g);
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  const isa::Placement tiles[2] = {{0, 64, 0, 64}, {64, 64, 64, 64}};
  std::vector<std::uint8_t> st[2], mv[2];
  for (int i = 0; i < 2; ++i) {
    st[i] = random_operand(t, K * M, rng, 0.0);
    mv[i] = random_operand(t, K * N, rng, 0.0);
    mem.put(64 * i, 0, st[i], K);
    mem.put(64 * i, 2048, mv[i], K);
    auto l = ldw(t, mem.addr(64 * i, 0), K, M);
    l.tile = tiles[i];
    expect_ok(ex.ldweights(dec(g, isa::encode_ldweights(g, l)), mem.sbuf.data(), mem.sbuf.size()));
  }
  EXPECT_EQ(ex.stationary_count(), 2u);
  for (int i = 0; i < 2; ++i) {
    auto a = mm(t, mem.addr(64 * i, 2048), kPsum + i * kBank, K, M, N, pf::SINGLE);
    a.tile = tiles[i];
    expect_ok(ex.matmul(dec(g, isa::encode_matmul(g, a)), mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(),
                        mem.psum.size()));
    EXPECT_EQ(ex.last_stats().tile.row0, tiles[i].row0);
    const auto ref = ref_sum(t, st[i], mv[i], K, M, N);
    for (unsigned m = 0; m < M; ++m)
      for (unsigned n = 0; n < N; ++n) ASSERT_EQ(psum_u32(mem, m, i * kBank + 4 * n), bits(ref[m * N + n]));
  }
  // A full-array load replaces both.
  auto l = ldw(t, 0, 128, 128);
  expect_ok(ex.ldweights(dec(g, isa::encode_ldweights(g, l)), mem.sbuf.data(), mem.sbuf.size()));
  EXPECT_EQ(ex.stationary_count(), 1u);
}

TEST(Executor, XposeCopiesNanInfBitsAndMatchesPreTransposedLoad) {
  for (Generation g : {Generation::CAYMAN, Generation::MARIANA}) {
    SCOPED_TRACE(std::string(isa::name(g)));
    const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
    const unsigned K = 128, M = 128, N = 32;
    std::mt19937 rng(5);
    Mem mem(g);
    auto tileb = random_operand(t, M * K, rng, 0.0);  // SBUF tile [M][K]
    const std::uint16_t specials[] = {0x7F81, 0xFFC3, 0x7F80, 0xFF80, 0x7FFF};
    constexpr int kSpecials = 5;
    for (int i = 0; i < kSpecials; ++i) {
      const std::size_t e = static_cast<std::size_t>(i * 1000 + 17);
      tileb[2 * e] = static_cast<std::uint8_t>(specials[i]);
      tileb[2 * e + 1] = static_cast<std::uint8_t>(specials[i] >> 8);
    }
    std::vector<std::uint8_t> pre(K * M * 2);  // the same tile transposed: [K][M]
    for (unsigned m = 0; m < M; ++m)
      for (unsigned k = 0; k < K; ++k) std::memcpy(&pre[2 * (k * M + m)], &tileb[2 * (m * K + k)], 2);
    mem.put(0, 0, tileb, M);
    mem.put(0, 1024, pre, K);
    const auto mv = random_operand(t, K * N, rng, 0.0);
    mem.put(0, 4096, mv, K);
    pe::ArrayExecutor ex(isa::preset_geometry(g));
    auto lx = ldw(t, 0, K, M);
    lx.src = isa::Pattern::row(0, static_cast<std::uint16_t>(K));
    lx.xpose = true;
    expect_ok(ex.ldweights(dec(g, isa::encode_ldweights(g, lx)), mem.sbuf.data(), mem.sbuf.size()));
    // A matmul on the transposed stationary equals the reference on the [K][M] tile.
    auto a = mm(t, mem.addr(0, 4096), kPsum, K, M, N, pf::SINGLE);
    expect_ok(ex.matmul(dec(g, isa::encode_matmul(g, a)), mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(),
                        mem.psum.size()));
    const auto ref = ref_sum(t, pre, mv, K, M, N);
    for (unsigned m = 0; m < M; ++m)
      for (unsigned n = 0; n < N; ++n) ASSERT_EQ(psum_u32(mem, m, 4 * n), bits(canon(ref[m * N + n]))) << m << "," << n;
    const pe::Stationary* s = ex.stationary({0, 128, 0, 128});
    ASSERT_NE(s, nullptr);
    for (unsigned m = 0; m < M; ++m)
      for (unsigned k = 0; k < K; ++k) {
        const std::uint16_t h = static_cast<std::uint16_t>(tileb[2 * (m * K + k)] | tileb[2 * (m * K + k) + 1] << 8);
        ASSERT_EQ(bits(s->values[k * M + m]), std::uint32_t{h} << 16) << "m " << m << " k " << k;
      }
    // The same tile pre-transposed in SBUF and loaded without xpose gives the same stationary bits.
    const std::vector<float> via_xpose = s->values;
    expect_ok(ex.ldweights(dec(g, isa::encode_ldweights(g, ldw(t, 1024, K, M))), mem.sbuf.data(), mem.sbuf.size()));
    s = ex.stationary({0, 128, 0, 128});
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(std::memcmp(via_xpose.data(), s->values.data(), via_xpose.size() * 4), 0);
  }
}

TEST(Executor, Bf16OutputOnMarianaRoundsAndAccumulatesInFp32) {
  const Generation g = Generation::MARIANA;
  const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
  const unsigned K = 128, M = 32, N = 64;
  std::mt19937 rng(9);
  Mem mem(g);
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  const auto st = random_operand(t, K * M, rng, 0.0);
  mem.put(0, 0, st, K);
  expect_ok(ex.ldweights(dec(g, isa::encode_ldweights(g, ldw(t, 0, K, M))), mem.sbuf.data(), mem.sbuf.size()));
  std::vector<std::uint16_t> expect(M * N);
  for (int i = 0; i < 2; ++i) {
    const auto mv = random_operand(t, K * N, rng, 0.0);
    mem.put(0, 4096, mv, K);
    auto a = mm(t, mem.addr(0, 4096), kPsum + 3 * kBank, K, M, N, i == 0 ? pf::MULTI_START : pf::MULTI_END);
    a.out_dtype = Dtype::BFLOAT16;
    a.accumulate = i == 1;
    expect_ok(ex.matmul(dec(g, isa::encode_matmul(g, a)), mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(),
                        mem.psum.size()));
    const auto s = ref_sum(t, st, mv, K, M, N);
    for (std::size_t j = 0; j < s.size(); ++j)
      expect[j] = num::to_bf16(i == 0 ? s[j] : num::from_bf16(expect[j]) + s[j]);
  }
  for (unsigned m = 0; m < M; ++m)
    for (unsigned n = 0; n < N; ++n) {
      std::uint16_t h;
      std::memcpy(&h, &mem.psum[m * kPsumPart + 3 * kBank + 2 * n], 2);
      ASSERT_EQ(h, expect[m * N + n]);
    }
}

TEST(Executor, MaverickAccumulateFlag) {
  const Generation g = Generation::MAVERICK;
  const pe::OperandType t{g, Dtype::FP8_EXP4, Fp32Mode::None};
  const unsigned K = 128, M = 128, N = 48;
  std::mt19937 rng(11);
  Mem mem(g);
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  const auto st = random_operand(t, K * M, rng, 0.0);
  const auto mv = random_operand(t, K * N, rng, 0.0);
  mem.put(0, 0, st, K);
  mem.put(0, 4096, mv, K);
  expect_ok(ex.ldweights(dec(g, isa::encode_ldweights(g, ldw(t, 0, K, M))), mem.sbuf.data(), mem.sbuf.size()));
  const auto s = ref_sum(t, st, mv, K, M, N);
  for (bool acc : {false, true, true}) {
    auto a = mm(t, mem.addr(0, 4096), kPsum + 5 * kBank, K, M, N, pf::SINGLE);
    a.accumulate = acc;
    expect_ok(ex.matmul(dec(g, isa::encode_matmul(g, a)), mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(),
                        mem.psum.size()));
  }
  for (unsigned m = 0; m < M; ++m)
    for (unsigned n = 0; n < N; ++n) {
      const float x = s[m * N + n];
      ASSERT_EQ(psum_u32(mem, m, 5 * kBank + 4 * n), bits((x + x) + x));
    }
}

// Runs `f` and checks it failed with `rule` (and `needle` in the message) without touching PSUM.
template <typename F>
void expect_error(Mem& mem, const char* rule, const char* needle, F f) {
  const std::vector<std::uint8_t> before = mem.psum;
  const pe::ExecResult r = f();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.rule, rule) << r.describe();
  EXPECT_NE(r.message.find(needle), std::string::npos) << r.describe();
  EXPECT_TRUE(before == mem.psum) << "PSUM written on error " << rule;
}

// MAVERICK's whole-array c256 Matmul folds 256 columns into 128 PSUM partitions (its dst's upper dimension of 2):
// valid ISA, not executed yet -- refused as not modelled, naming the fold, with nothing written.
TEST(Executor, ErrorsWriteNothing) {
  const Generation g = Generation::CAYMAN;
  const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
  const unsigned K = 128, M = 128, N = 32;
  std::mt19937 rng(13);
  Mem mem(g);
  mem.put(0, 0, random_operand(t, K * M, rng, 0.0), K);
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  auto sb = mem.sbuf.data();
  const auto sz = mem.sbuf.size();
  auto run_mm = [&](const isa::MatmulArgs& a, std::size_t psum_bytes) {
    return ex.matmul(dec(g, isa::encode_matmul(g, a)), sb, sz, mem.psum.data(), psum_bytes);
  };
  const auto ok_mm = mm(t, mem.addr(0, 4096), kPsum + kBank, K, M, N, pf::SINGLE);
  expect_error(mem, "exec.no_stationary", "no stationary", [&] { return run_mm(ok_mm, mem.psum.size()); });
  // Pattern element count mismatch on LDWEIGHTS: the stationary is not loaded.
  auto bad_l = ldw(t, 0, K, M);
  bad_l.src = isa::Pattern::row(0, 100);
  expect_error(mem, "exec.pattern_count", "num_active_cols", [&] {
    return ex.ldweights(dec(g, isa::encode_ldweights(g, bad_l)), sb, sz);
  });
  EXPECT_EQ(ex.stationary_count(), 0u);
  expect_ok(ex.ldweights(dec(g, isa::encode_ldweights(g, ldw(t, 0, K, M))), sb, sz));
  // K mismatch.
  auto k_mm = ok_mm;
  k_mm.num_active_rows = 64;
  expect_error(mem, "exec.k_mismatch", "num_active_rows = 64", [&] { return run_mm(k_mm, mem.psum.size()); });
  // Accumulate into an unopened group.
  auto mid = ok_mm;
  mid.psum_flags = pf::MULTI_MID;
  expect_error(mem, "exec.psum_group_unopened", "accumulate into an unopened group (PSUM bank 1)",
               [&] { return run_mm(mid, mem.psum.size()); });
  // dst count differs from N.
  auto cnt = ok_mm;
  cnt.dst = isa::Pattern::row(kPsum + kBank, 16);
  expect_error(mem, "exec.pattern_count", "dst_mem_pattern", [&] { return run_mm(cnt, mem.psum.size()); });
  // Out of buffer: the PSUM buffer holds only 64 partitions; M = 128.
  expect_error(mem, "exec.buffer_bounds", "beyond", [&] { return run_mm(ok_mm, 64 * kPsumPart); });
  // Out of SBUF buffer.
  expect_error(mem, "exec.buffer_bounds", "SBUF", [&] {
    return ex.ldweights(dec(g, isa::encode_ldweights(g, ldw(t, 0, K, M))), sb, 1000);
  });
  // After all that, a SINGLE still works and no group stayed open.
  expect_ok(run_mm(ok_mm, mem.psum.size()));
  EXPECT_FALSE(ex.group_open(1));
}

}  // namespace
