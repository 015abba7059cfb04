// ArrayExecutor's modes beyond the plain matmul, each against an independent expectation written here: MAVERICK's
// folded c256 tile (columns 128-255 in the destination's upper half), outputs spanning PSUM banks (v4+), the
// transposing matmul (a bit-exact data move through a 0/1 stationary) and fp8 double_row (two contraction rows per
// partition), with the errors each mode adds.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "executor_test_util.h"

namespace {

using namespace pe_test;

pe::ExecResult load(pe::ArrayExecutor& ex, Mem& mem, const isa::LdweightsArgs& a) {
  return ex.ldweights(dec(mem.g, isa::encode_ldweights(mem.g, a)), mem.sbuf.data(), mem.sbuf.size());
}
pe::ExecResult run(pe::ArrayExecutor& ex, Mem& mem, const isa::MatmulArgs& a) {
  return ex.matmul(dec(mem.g, isa::encode_matmul(mem.g, a)), mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(),
                   mem.psum.size());
}
std::uint16_t psum_u16(const Mem& mem, std::size_t p, std::size_t off) {
  std::uint16_t h;
  std::memcpy(&h, &mem.psum[p * kPsumPart + off], 2);
  return h;
}

// ---- MAVERICK c256: the two column halves fold into the destination's upper dimension ----------------------------

TEST(ExecutorC256, ColumnsBeyondThePartitionsLandInTheUpperHalfBitExact) {
  const Generation g = Generation::MAVERICK;
  for (const unsigned M : {256u, 200u}) {
    SCOPED_TRACE("M = " + std::to_string(M));
    const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
    const unsigned K = 128, N = 64;
    std::mt19937 rng(31 + M);
    Mem mem(g);
    const auto st = random_operand(t, K * M, rng, 0.0), mv = random_operand(t, K * N, rng, 0.0);
    mem.put(0, 0, st, K);
    mem.put(0, 4096, mv, K);
    const std::vector<std::uint8_t> before = mem.psum;
    pe::ArrayExecutor ex(isa::preset_geometry(g));
    auto l = ldw(t, 0, K, M);
    l.tile = {0, 128, 0, 256};
    expect_ok(load(ex, mem, l));
    auto a = mm(t, mem.addr(0, 4096), kPsum, K, M, N, pf::SINGLE);
    a.tile = {0, 128, 0, 256};
    a.dst = {kPsum, {1, 0, 256}, {N, 1, 2}};  // half h at element h * 256 of each partition
    expect_ok(run(ex, mem, a));
    const auto ref = ref_sum(t, st, mv, K, M, N);
    for (unsigned m = 0; m < M; ++m)
      for (unsigned n = 0; n < N; ++n)
        ASSERT_EQ(psum_u32(mem, m % 128, (m / 128) * 256 * 4 + n * 4), bits(canon(ref[m * N + n])))
            << "column " << m << ", element " << n;
    // Partitions without a column in the upper half keep what they held.
    for (unsigned p = M - 128; p < 128; ++p)
      ASSERT_EQ(std::memcmp(&mem.psum[p * kPsumPart + 256 * 4], &before[p * kPsumPart + 256 * 4], N * 4), 0) << p;
    EXPECT_EQ(ex.last_stats().macs, std::uint64_t{K} * M * N);
  }
}

TEST(ExecutorC256, Bf16OutputFoldsTheSameWay) {
  const Generation g = Generation::MAVERICK;
  const pe::OperandType t{g, Dtype::FP8_EXP4, Fp32Mode::None};
  const unsigned K = 64, M = 256, N = 48;
  std::mt19937 rng(5);
  Mem mem(g);
  const auto st = random_operand(t, K * M, rng, 0.0), mv = random_operand(t, K * N, rng, 0.0);
  mem.put(0, 0, st, K);
  mem.put(0, 1024, mv, K);
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  auto l = ldw(t, 0, K, M);
  l.tile = {0, 64, 0, 256};
  expect_ok(load(ex, mem, l));
  auto a = mm(t, mem.addr(0, 1024), kPsum + 64, K, M, N, pf::SINGLE);
  a.tile = {0, 64, 0, 256};
  a.out_dtype = Dtype::BFLOAT16;
  a.dst = {kPsum + 64, {1, 0, 100}, {N, 1, 2}};  // halves 100 bf16 elements apart
  expect_ok(run(ex, mem, a));
  const auto ref = ref_sum(t, st, mv, K, M, N);
  for (unsigned m = 0; m < M; ++m)
    for (unsigned n = 0; n < N; ++n)
      ASSERT_EQ(psum_u16(mem, m % 128, 64 + ((m / 128) * 100 + n) * 2), num::to_bf16(ref[m * N + n]))
          << "column " << m << ", element " << n;
}

TEST(ExecutorC256, AFoldedTileNeedsBothHalvesInTheDestination) {
  const Generation g = Generation::MAVERICK;
  const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
  Mem mem(g);
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  auto l = ldw(t, 0, 128, 256);
  l.tile = {0, 128, 0, 256};
  expect_ok(load(ex, mem, l));
  // A micro-op built by hand (the validator demands num_elem[2] = 2): a one-half destination is refused.
  auto a = mm(t, mem.addr(0, 4096), kPsum, 128, 256, 64, pf::SINGLE);
  a.tile = {0, 128, 0, 256};
  a.dst = {kPsum, {1, 0, 256}, {64, 1, 2}};
  pe::MicroOp op = dec(g, isa::encode_matmul(g, a));
  op.dst.num[2] = 1;
  const std::vector<std::uint8_t> before = mem.psum;
  const auto r = ex.matmul(op, mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(), mem.psum.size());
  EXPECT_EQ(r.rule, "exec.pattern_count");
  EXPECT_NE(r.message.find("c256 halves"), std::string::npos) << r.message;
  EXPECT_EQ(mem.psum, before);
}

// ---- outputs spanning PSUM banks (v4+) ------------------------------------------------------------------------

TEST(ExecutorMultiBank, AnOutputOverEveryBankIsBitExact) {
  const Generation g = Generation::MAVERICK;
  const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
  const unsigned K = 32, M = 16, N = 4096;  // 4096 fp32 outputs: all 8 banks of a partition
  std::mt19937 rng(17);
  Mem mem(g);
  const auto st = random_operand(t, K * M, rng, 0.0), mv = random_operand(t, K * N, rng, 0.0);
  mem.put(0, 0, st, K);
  mem.put(0, 1024, mv, K);
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  auto l = ldw(t, 0, K, M);
  l.tile = {0, 64, 0, 128};
  expect_ok(load(ex, mem, l));
  auto a = mm(t, mem.addr(0, 1024), kPsum, K, M, N, pf::SINGLE);
  a.tile = {0, 64, 0, 128};
  a.dst = {kPsum, {1}, {N}};
  a.src = {mem.addr(0, 1024), {1}, {N}};
  expect_ok(run(ex, mem, a));
  const auto ref = ref_sum(t, st, mv, K, M, N);
  for (unsigned m = 0; m < M; ++m)
    for (unsigned n = 0; n < N; ++n)
      ASSERT_EQ(psum_u32(mem, m, n * 4), bits(canon(ref[m * N + n]))) << m << "," << n;
}

TEST(ExecutorMultiBank, GroupsOpenZeroAndCloseInEveryTouchedBank) {
  const Generation g = Generation::MARIANA;
  const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
  const unsigned K = 64, M = 32, N = 1024;  // 4 KiB of fp32 per partition: banks 2 and 3
  std::mt19937 rng(23);
  Mem mem(g);
  const auto st = random_operand(t, K * M, rng, 0.0);
  const auto mv1 = random_operand(t, K * N, rng, 0.0), mv2 = random_operand(t, K * N, rng, 0.0);
  mem.put(0, 0, st, K);
  mem.put(0, 4096, mv1, K);
  mem.put(0, 8192, mv2, K);
  const std::vector<std::uint8_t> before = mem.psum;
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  auto l = ldw(t, 0, K, M);
  l.tile = {0, 64, 0, 32};
  expect_ok(load(ex, mem, l));
  auto start = mm(t, mem.addr(0, 4096), kPsum + 2 * kBank, K, M, N, pf::MULTI_START);
  start.tile = l.tile;
  start.src = {mem.addr(0, 4096), {1}, {N}};
  start.dst = {kPsum + 2 * kBank, {1}, {N}};
  start.zero_region = isa::ZeroRegion::BANKS_2;
  expect_ok(run(ex, mem, start));
  EXPECT_TRUE(ex.group_open(2));
  EXPECT_TRUE(ex.group_open(3));
  EXPECT_FALSE(ex.group_open(1));
  // A BEGIN reaching bank 3 while its group is open names that bank.
  auto again = start;
  again.dst = {kPsum + 3 * kBank, {1}, {16}};
  again.src = {mem.addr(0, 4096), {1}, {16}};
  const auto r = run(ex, mem, again);
  EXPECT_EQ(r.rule, "exec.psum_group_open");
  EXPECT_NE(r.message.find("bank 3"), std::string::npos) << r.message;
  // A continuation that also reaches the unopened bank 4 names it.
  auto wide = start;
  wide.psum_flags = pf::MULTI_END;
  wide.dst = {kPsum + 3 * kBank, {1}, {N}};
  const auto r2 = run(ex, mem, wide);
  EXPECT_EQ(r2.rule, "exec.psum_group_unopened");
  EXPECT_NE(r2.message.find("bank 4"), std::string::npos) << r2.message;
  auto end = start;
  end.psum_flags = pf::MULTI_END;
  end.src = {mem.addr(0, 8192), {1}, {N}};
  expect_ok(run(ex, mem, end));
  EXPECT_FALSE(ex.group_open(2));
  EXPECT_FALSE(ex.group_open(3));
  const auto s1 = ref_sum(t, st, mv1, K, M, N), s2 = ref_sum(t, st, mv2, K, M, N);
  for (unsigned m = 0; m < M; ++m) {
    for (unsigned n = 0; n < N; ++n)
      ASSERT_EQ(psum_u32(mem, m, 2 * kBank + n * 4), bits(canon(s1[m * N + n] + s2[m * N + n]))) << m << "," << n;
    // Banks outside the output and its zero block are untouched.
    ASSERT_EQ(std::memcmp(&mem.psum[m * kPsumPart], &before[m * kPsumPart], 2 * kBank), 0) << m;
    ASSERT_EQ(std::memcmp(&mem.psum[m * kPsumPart + 4 * kBank], &before[m * kPsumPart + 4 * kBank], 4 * kBank), 0);
  }
}

// ---- the transposing matmul -----------------------------------------------------------------------------------

// A K x M 0/1 stationary in `t`'s encoding whose column m has its 1 at row row_of(m).
template <typename RowOf>
std::vector<std::uint8_t> one_hot(const pe::OperandType& t, unsigned K, unsigned M, RowOf row_of) {
  const std::size_t eb = pe::operand_bytes(t.dtype);
  std::vector<std::uint8_t> b(std::size_t{K} * M * eb);
  for (unsigned k = 0; k < K; ++k)
    for (unsigned m = 0; m < M; ++m) encode_value(t, row_of(m) == k ? 1.0f : 0.0f, &b[(std::size_t{k} * M + m) * eb]);
  return b;
}

isa::MatmulArgs xpose_mm(const pe::OperandType& t, std::uint32_t src, unsigned K, unsigned M, unsigned N) {
  auto a = mm(t, src, kPsum, K, M, N, pf::SINGLE);
  a.dst = isa::Pattern::row(kPsum, static_cast<std::uint16_t>(M));  // N partitions of M
  a.xpose = true;
  return a;
}

TEST(ExecutorTranspose, Fp32MovesEveryBitPatternThroughTheIdentity) {
  for (Generation g : {Generation::CAYMAN, Generation::MARIANA, Generation::MAVERICK}) {
    SCOPED_TRACE(std::string(isa::name(g)));
    const pe::OperandType t{g, Dtype::FP32, Fp32Mode::Low};  // Low would round a product; a transpose moves bits
    const unsigned K = 128, M = 128, N = 64;
    std::mt19937 rng(3);
    Mem mem(g);
    mem.put(0, 0, one_hot(t, K, M, [](unsigned m) { return m; }), K);
    std::vector<std::uint8_t> mv = random_operand(t, K * N, rng, 0.3);
    const std::uint32_t specials[] = {0x7FC00001u, 0xFFBFFFFFu, 0x7F800000u, 0x80000000u, 0x00000001u, 0x807FFFFFu};
    for (unsigned i = 0; i < 6; ++i) std::memcpy(&mv[(i * 37 % (K * N)) * 4], &specials[i], 4);
    mem.put(0, 65536, mv, K);
    pe::ArrayExecutor ex(isa::preset_geometry(g));
    expect_ok(load(ex, mem, ldw(t, 0, K, M)));
    expect_ok(run(ex, mem, xpose_mm(t, mem.addr(0, 65536), K, M, N)));
    for (unsigned n = 0; n < N; ++n)
      for (unsigned m = 0; m < M; ++m) {
        std::uint32_t want;
        std::memcpy(&want, &mv[(std::size_t{m} * N + n) * 4], 4);
        ASSERT_EQ(psum_u32(mem, n, m * 4), want) << "dst[" << n << "][" << m << "]";
      }
    EXPECT_EQ(ex.last_stats().macs, 0u);  // a data move
  }
}

TEST(ExecutorTranspose, NarrowInputsWidenExactlyAndBf16StaysBf16) {
  const Generation g = Generation::MARIANA;
  const unsigned K = 32, M = 32, N = 16;
  for (const Dtype d : {Dtype::BFLOAT16, Dtype::FP16, Dtype::FP8_EXP4}) {
    for (const Dtype out : {Dtype::FP32, Dtype::BFLOAT16}) {
      SCOPED_TRACE(std::string(isa::name(d)) + " -> " + std::string(isa::name(out)));
      const pe::OperandType t{g, d, Fp32Mode::None};
      std::mt19937 rng(11);
      Mem mem(g);
      // A permutation, not the identity: column m selects row K - 1 - m.
      mem.put(0, 0, one_hot(t, K, M, [&](unsigned m) { return K - 1 - m; }), K);
      const auto mv = random_operand(t, K * N, rng, d == Dtype::BFLOAT16 ? 0.3 : 0.0);
      mem.put(0, 8192, mv, K);
      pe::ArrayExecutor ex(isa::preset_geometry(g));
      auto l = ldw(t, 0, K, M);
      l.tile = {0, 32, 0, 32};
      expect_ok(load(ex, mem, l));
      auto a = xpose_mm(t, mem.addr(0, 8192), K, M, N);
      a.tile = l.tile;
      a.out_dtype = out;
      expect_ok(run(ex, mem, a));
      const std::size_t eb = pe::operand_bytes(d);
      for (unsigned n = 0; n < N; ++n)
        for (unsigned m = 0; m < M; ++m) {
          const std::size_t i = std::size_t{K - 1 - m} * N + n;
          std::uint32_t raw = 0;
          std::memcpy(&raw, &mv[i * eb], eb);
          if (out == Dtype::FP32) {
            const std::uint32_t want = d == Dtype::BFLOAT16 ? raw << 16 : bits(ref_decode(t, mv, i));
            ASSERT_EQ(psum_u32(mem, n, m * 4), want) << n << "," << m;
          } else {
            const std::uint16_t want = d == Dtype::BFLOAT16 ? static_cast<std::uint16_t>(raw)
                                                            : num::to_bf16(ref_decode(t, mv, i));
            ASSERT_EQ(psum_u16(mem, n, m * 2), want) << n << "," << m;
          }
        }
    }
  }
}

TEST(ExecutorTranspose, AccumulateAddsTheMovedValuesInFp32) {
  const Generation g = Generation::MAVERICK;
  const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
  const unsigned K = 64, M = 64, N = 32;
  std::mt19937 rng(19);
  Mem mem(g);
  mem.put(0, 0, one_hot(t, K, M, [](unsigned m) { return m; }), K);
  const auto mv = random_operand(t, K * N, rng, 0.0);
  mem.put(0, 4096, mv, K);
  const std::vector<std::uint8_t> before = mem.psum;  // the garbage PSUM held is what the values add onto
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  auto l = ldw(t, 0, K, M);
  l.tile = {0, 64, 0, 128};
  expect_ok(load(ex, mem, l));
  auto a = xpose_mm(t, mem.addr(0, 4096), K, M, N);
  a.tile = l.tile;
  a.accumulate = true;
  expect_ok(run(ex, mem, a));
  for (unsigned n = 0; n < N; ++n)
    for (unsigned m = 0; m < M; ++m) {
      std::uint32_t old;
      std::memcpy(&old, &before[n * kPsumPart + m * 4], 4);
      ASSERT_EQ(psum_u32(mem, n, m * 4), bits(canon(from_bits(old) + ref_decode(t, mv, std::size_t{m} * N + n))));
    }
}

TEST(ExecutorTranspose, AStationaryThatIsNotOneHotIsRefusedNamingTheElement) {
  const Generation g = Generation::MARIANA;
  const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
  const unsigned K = 32, M = 32, N = 8;
  struct Bad {
    float value;
    unsigned k, m;
    const char* says;
  };
  for (const Bad bad : {Bad{2.0f, 5, 5, "stationary[5][5] = 2"}, Bad{1.0f, 7, 3, "column 3 holds 2 ones"},
                        Bad{0.0f, 9, 9, "column 9 holds 0 ones"}}) {
    SCOPED_TRACE(bad.says);
    Mem mem(g);
    auto st = one_hot(t, K, M, [](unsigned m) { return m; });
    encode_value(t, bad.value, &st[(std::size_t{bad.k} * M + bad.m) * 2]);
    mem.put(0, 0, st, K);
    pe::ArrayExecutor ex(isa::preset_geometry(g));
    auto l = ldw(t, 0, K, M);
    l.tile = {0, 32, 0, 32};
    expect_ok(load(ex, mem, l));
    auto a = xpose_mm(t, mem.addr(0, 4096), K, M, N);
    a.tile = l.tile;
    const std::vector<std::uint8_t> before = mem.psum;
    const auto r = run(ex, mem, a);
    EXPECT_EQ(r.rule, "exec.xpose_stationary");
    EXPECT_NE(r.message.find(bad.says), std::string::npos) << r.message;
    EXPECT_EQ(mem.psum, before);
  }
}

// ---- background transpose (MARIANA bg_xpose_mode) ----------------------------------------------------------------

TEST(ExecutorBgXpose, LoadsTheSameStationaryAsXpose) {
  const Generation g = Generation::MARIANA;
  const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
  std::mt19937 rng(29);
  Mem mem(g);
  mem.put(0, 0, random_operand(t, 64 * 128, rng, 0.2), 128);  // [M = 128 partitions][K = 64]
  // The same [M][K] tile loaded with flags.xpose_mode = 1 and with bg_xpose_mode = 1, through the firmware.
  const auto load = [&](const char* field) {
    isa::Encoder e(g, isa::Opcode::LDWEIGHTS);
    e.set("src_mem_pattern.start_addr", 0).set("src_mem_pattern.step_elem[0]", 1);
    e.set("src_mem_pattern.num_elem[0]", 64).set("src_mem_pattern.num_elem[1]", 1);
    e.set("src_mem_pattern.num_elem[2]", 1).set("in_dtype", static_cast<int>(Dtype::BFLOAT16));
    e.set("num_active_rows", 64).set("num_active_cols", 128).set("row_grp", 0xF).set("col_grp", 0xF);
    e.set(field, 1);
    const pe::MicroOp op = dec(g, e.bytes());
    EXPECT_TRUE(op.transpose);
    EXPECT_EQ(op.background_transpose, std::string(field) == "bg_xpose_mode");
    pe::ArrayExecutor ex(isa::preset_geometry(g));
    expect_ok(ex.ldweights(op, mem.sbuf.data(), mem.sbuf.size()));
    return ex.stationary({0, 128, 0, 128})->values;
  };
  const auto xposed = load("flags.xpose_mode"), background = load("bg_xpose_mode");
  ASSERT_EQ(xposed.size(), std::size_t{64} * 128);
  ASSERT_EQ(background.size(), xposed.size());
  EXPECT_EQ(std::memcmp(xposed.data(), background.data(), xposed.size() * 4), 0);
}

// ---- the indirect source member (D-INDIRECT) --------------------------------------------------------------------

// An INDIRECT16B source: index vector {5, 0, 9} at SBUF 0x3000 (u32), 2 elements per index, step 1 -> elements
// 5, 6, 0, 1, 9, 10 of each partition's row at the start.
pe::MicroOp indirect(pe::MicroOp op, std::uint32_t start, std::uint32_t index_addr, std::uint32_t num_index,
                     std::int32_t per_index) {
  op.src.member = isa::PatternMember::Indirect16B;
  op.src.start = op.src.start_raw = start;
  op.src.index_addr = index_addr;
  op.src.num_index = num_index;
  op.src.dims = 1;
  op.src.step = {1, 0, 0, 0};
  op.src.num = {per_index, 0, 0, 0};
  return op;
}

TEST(ExecutorIndirect, GathersTheIndexedElementsOfEveryPartition) {
  const Generation g = Generation::MARIANA;
  const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
  const unsigned K = 32, M = 6, N = 6;
  std::mt19937 rng(37);
  Mem mem(g);
  const auto rows = random_operand(t, K * 16, rng, 0.0);  // 16 elements per partition at 0x100 and at 0x200
  mem.put(0, 0x100, rows, K);
  mem.put(0, 0x200, rows, K);
  const std::uint32_t indices[] = {5, 0, 9};
  std::memcpy(&mem.sbuf[0x3000], indices, sizeof indices);
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  auto l = ldw(t, 0x100, K, M);
  l.tile = {0, 32, 0, 32};
  expect_ok(ex.ldweights(indirect(dec(g, isa::encode_ldweights(g, l)), 0x100, 0x3000, 3, 2), mem.sbuf.data(),
                         mem.sbuf.size()));
  auto a = mm(t, 0x200, kPsum, K, M, N, pf::SINGLE);
  a.tile = l.tile;
  expect_ok(ex.matmul(indirect(dec(g, isa::encode_matmul(g, a)), 0x200, 0x3000, 3, 2), mem.sbuf.data(),
                      mem.sbuf.size(), mem.psum.data(), mem.psum.size()));
  // The same GEMM on the gathered tiles, laid out plainly.
  const unsigned picked[] = {5, 6, 0, 1, 9, 10};
  std::vector<std::uint8_t> st(K * M * 2), mv(K * N * 2);
  for (unsigned k = 0; k < K; ++k)
    for (unsigned j = 0; j < 6; ++j) {
      std::memcpy(&st[(k * M + j) * 2], &rows[(k * 16 + picked[j]) * 2], 2);
      std::memcpy(&mv[(k * N + j) * 2], &rows[(k * 16 + picked[j]) * 2], 2);
    }
  const auto ref = ref_sum(t, st, mv, K, M, N);
  for (unsigned m = 0; m < M; ++m)
    for (unsigned n = 0; n < N; ++n) ASSERT_EQ(psum_u32(mem, m, n * 4), bits(canon(ref[m * N + n]))) << m << "," << n;
}

TEST(ExecutorIndirect, BadIndicesAndIndexVectorsAreNamed) {
  const Generation g = Generation::MARIANA;
  const pe::OperandType t{g, Dtype::BFLOAT16, Fp32Mode::None};
  Mem mem(g);
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  auto l = ldw(t, 0x100, 32, 4);
  l.tile = {0, 32, 0, 32};
  const pe::MicroOp plain = dec(g, isa::encode_ldweights(g, l));
  const std::uint32_t far[] = {1, 200000};  // element 200000 of a bf16 row: byte 400256, past the 256 KiB partition
  std::memcpy(&mem.sbuf[0x3000], far, sizeof far);
  const auto r1 = ex.ldweights(indirect(plain, 0x100, 0x3000, 2, 2), mem.sbuf.data(), mem.sbuf.size());
  EXPECT_EQ(r1.rule, "exec.pattern_partition_bounds");
  EXPECT_NE(r1.message.find("index 1 = 200000"), std::string::npos) << r1.message;
  const std::uint32_t last_word = mem.part() - 4;  // an 8-byte vector starting 4 bytes before the partition's end
  const auto r2 = ex.ldweights(indirect(plain, 0x100, last_word, 2, 2), mem.sbuf.data(), mem.sbuf.size());
  EXPECT_EQ(r2.rule, "exec.pattern_region");
  EXPECT_NE(r2.message.find("index vector is not inside one SBUF partition"), std::string::npos) << r2.message;
  EXPECT_EQ(ex.stationary_count(), 0u);
}

// ---- fp8 double_row --------------------------------------------------------------------------------------------

// Partition p's element pair (x[2i], x[2i+1]) as logical rows 2p and 2p + 1: [K][2C] bytes -> [2K][C].
std::vector<std::uint8_t> unpair(const std::vector<std::uint8_t>& b, unsigned K, unsigned C) {
  std::vector<std::uint8_t> out(b.size());
  for (unsigned p = 0; p < K; ++p)
    for (unsigned j = 0; j < 2; ++j)
      for (unsigned c = 0; c < C; ++c) out[(2 * p + j) * C + c] = b[p * 2 * C + 2 * c + j];
  return out;
}

TEST(ExecutorDoubleRow, TwoContractionRowsPerPartitionSummedInLogicalRowOrder) {
  for (Generation g : {Generation::CAYMAN, Generation::MARIANA}) {
    for (const Dtype d : {Dtype::FP8_EXP4, Dtype::FP8_EXP5}) {
      SCOPED_TRACE(std::string(isa::name(g)) + " " + std::string(isa::name(d)));
      const pe::OperandType t{g, d, Fp32Mode::None};
      const unsigned K = 128, M = 128, N = 64;  // 256 logical rows
      std::mt19937 rng(41);
      Mem mem(g);
      const auto st = random_operand(t, K * 2 * M, rng, 0.0), mv = random_operand(t, K * 2 * N, rng, 0.0);
      mem.put(0, 0, st, K);
      mem.put(0, 4096, mv, K);
      pe::ArrayExecutor ex(isa::preset_geometry(g));
      auto l = ldw(t, 0, K, M);
      l.src = isa::Pattern::row(0, 2 * M);
      l.perf = isa::perf_opt::FP8_DOUBLE_ROW;
      expect_ok(load(ex, mem, l));
      EXPECT_EQ(ex.last_stats().k, 2u * K);
      auto a = mm(t, mem.addr(0, 4096), kPsum, K, M, N, pf::SINGLE);
      a.src = isa::Pattern::row(mem.addr(0, 4096), 2 * N);
      a.perf = isa::perf_opt::FP8_DOUBLE_ROW;
      expect_ok(run(ex, mem, a));
      const auto ref = ref_sum(t, unpair(st, K, M), unpair(mv, K, N), 2 * K, M, N);
      for (unsigned m = 0; m < M; ++m)
        for (unsigned n = 0; n < N; ++n) ASSERT_EQ(psum_u32(mem, m, n * 4), bits(canon(ref[m * N + n]))) << m << "," << n;
      EXPECT_EQ(ex.last_stats().macs, std::uint64_t{2} * K * M * N);
    }
  }
}

TEST(ExecutorDoubleRow, ModesMustMatchAndPairsMustBeWhole) {
  const Generation g = Generation::CAYMAN;
  const pe::OperandType t{g, Dtype::FP8_EXP4, Fp32Mode::None};
  Mem mem(g);
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  // A double_row load whose source yields M elements, not M pairs.
  auto short_load = ldw(t, 0, 128, 128);
  short_load.perf = isa::perf_opt::FP8_DOUBLE_ROW;
  const auto r0 = load(ex, mem, short_load);
  EXPECT_EQ(r0.rule, "exec.pattern_count");
  EXPECT_NE(r0.message.find("2 x num_active_cols"), std::string::npos) << r0.message;
  // A double_row matmul on a plain stationary, and a plain matmul on a double_row one.
  expect_ok(load(ex, mem, ldw(t, 0, 128, 128)));
  auto dr = mm(t, mem.addr(0, 4096), kPsum, 128, 128, 32, pf::SINGLE);
  dr.src = isa::Pattern::row(mem.addr(0, 4096), 64);
  dr.perf = isa::perf_opt::FP8_DOUBLE_ROW;
  const std::vector<std::uint8_t> before = mem.psum;
  const auto r1 = run(ex, mem, dr);
  EXPECT_EQ(r1.rule, "exec.double_row_mix");
  EXPECT_NE(r1.message.find("stationary was not loaded double_row"), std::string::npos) << r1.message;
  auto pair_load = ldw(t, 0, 128, 128);
  pair_load.src = isa::Pattern::row(0, 256);
  pair_load.perf = isa::perf_opt::FP8_DOUBLE_ROW;
  expect_ok(load(ex, mem, pair_load));
  const auto r2 = run(ex, mem, mm(t, mem.addr(0, 4096), kPsum, 128, 128, 32, pf::SINGLE));
  EXPECT_EQ(r2.rule, "exec.double_row_mix");
  // An odd moving count cannot be pairs.
  dr.src = isa::Pattern::row(mem.addr(0, 4096), 63);
  dr.dst = isa::Pattern::row(kPsum, 31);
  const auto r3 = run(ex, mem, dr);
  EXPECT_EQ(r3.rule, "exec.pattern_count");
  EXPECT_NE(r3.message.find("element pairs"), std::string::npos) << r3.message;
  EXPECT_EQ(mem.psum, before);
}

}  // namespace
