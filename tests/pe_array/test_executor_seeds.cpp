// The PSUM stochastic-rounding state on NeuronCore-v4 and PeManageSeed, on the executor (the firmware's micro-ops
// from built instructions): the bf16 drain's exact bits against the documented generator re-implemented here
// (MurmurHash3's finaliser for the reset state, xorshift32 (13, 17, 5), the high 16 bits added below the bf16 cut,
// seed = partition x 16 + bank x 2 + the element's bf16 position mod 2), unbiasedness against RNE on a biased input,
// SaveSeed's layout, the save -> transpose -> load round trip that makes a rerun bit-identical, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "executor_test_util.h"

namespace {

using namespace pe_test;

// ---- the documented generator, written independently of the executor ----
std::uint32_t reset_state(std::uint32_t i) {
  std::uint32_t x = i + 1;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  x ^= x >> 16;
  return x == 0 ? 1 : x;
}
std::uint32_t step(std::uint32_t x) {
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}
// Stochastic rounding of a finite fp32 value to bf16 with 16 random bits r: add r below the cut, truncate.
std::uint16_t sr(float v, std::uint32_t r) { return static_cast<std::uint16_t>((bits(v) + r) >> 16); }

constexpr unsigned kPerPartition = 16;  // 8 banks x 2

struct Rig {
  Generation g = Generation::MARIANA;
  Mem mem{Generation::MARIANA};
  pe::ArrayExecutor ex;
  explicit Rig(pe::Bf16Rounding r) : ex(isa::preset_geometry(Generation::MARIANA), 1, r) {}

  pe::ExecResult run_all(const isa::RawInstruction& raw) {
    const pevp::fw::Prepared p = pevp::fw::prepare(std::make_shared<const isa::Decoded>(isa::decode(g, raw)));
    if (p.fault) return pe::ExecResult::error(p.fault->rule, p.fault->describe());
    for (const pe::MicroOp& op : p.ops) {
      const pe::ExecResult r = op.kind == pe::MicroOpKind::WeightLoad
                                   ? ex.ldweights(op, mem.sbuf.data(), mem.sbuf.size())
                                   : ex.matmul(op, mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(), mem.psum.size());
      if (!r.ok) return r;
    }
    return pe::ExecResult::success();
  }
  // The 16 x 16 identity in bf16 at SBUF partitions 0..15, byte `off`.
  void put_identity(std::uint32_t off, float diagonal = 1.0f) {
    std::vector<std::uint8_t> b(16 * 16 * 2, 0);
    for (unsigned i = 0; i < 16; ++i) {
      const std::uint16_t one = num::to_bf16(diagonal);
      std::memcpy(&b[(i * 16 + i) * 2], &one, 2);
    }
    mem.put(0, off, b, 16);
  }
};

isa::RawInstruction seed_instr(isa::PeSeedMode mode, std::uint32_t identity = 0x1000) {
  isa::PeSeedArgs a;
  a.mode = mode;
  a.identity = isa::Pattern::row(identity, 16);
  a.identity_dtype = Dtype::BFLOAT16;
  if (mode == isa::PeSeedMode::LOAD_SEED)
    a.src_seed = {0x2000, {1, 0}, {128, 1}};  // 128 seeds per partition, partitions 0-15
  else
    a.dst_seed = {kPsum, {1, 512}, {2, 8}};   // spec 5.2
  return isa::encode_pe_seed(Generation::MARIANA, a);
}

// An fp32 (High) K x M stationary and K x N moving at SBUF 0x8000 / 0x9000 and a Matmul with bf16 output at PSUM
// partition 0, bank `bank`.
struct SrMatmul {
  unsigned K, M, N;
  std::vector<std::uint8_t> st, mv;
};
SrMatmul sr_operands(unsigned K, unsigned M, unsigned N, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const pe::OperandType t{Generation::MARIANA, Dtype::FP32, Fp32Mode::High};
  return {K, M, N, random_operand(t, K * M, rng, 0.0), random_operand(t, K * N, rng, 0.0)};
}
pe::ExecResult run_sr(Rig& r, const SrMatmul& s, unsigned bank = 0) {
  const pe::OperandType t{Generation::MARIANA, Dtype::FP32, Fp32Mode::High};
  r.mem.put(0, 0x8000, s.st, s.K);
  r.mem.put(0, 0x9000, s.mv, s.K);
  auto l = ldw(t, 0x8000, s.K, s.M);
  if (auto e = r.ex.ldweights(dec(r.g, isa::encode_ldweights(r.g, l)), r.mem.sbuf.data(), r.mem.sbuf.size()); !e.ok)
    return e;
  auto a = mm(t, 0x9000, kPsum + bank * kBank, s.K, s.M, s.N, pf::SINGLE);
  a.out_dtype = Dtype::BFLOAT16;
  return r.ex.matmul(dec(r.g, isa::encode_matmul(r.g, a)), r.mem.sbuf.data(), r.mem.sbuf.size(), r.mem.psum.data(),
                     r.mem.psum.size());
}
std::vector<std::uint16_t> read_bf16(const Mem& mem, unsigned parts, unsigned n, unsigned bank = 0) {
  std::vector<std::uint16_t> out(parts * n);
  for (unsigned p = 0; p < parts; ++p)
    for (unsigned i = 0; i < n; ++i) std::memcpy(&out[p * n + i], &mem.psum[p * kPsumPart + bank * kBank + i * 2], 2);
  return out;
}

TEST(StochasticRounding, TheDrainMatchesTheDocumentedGeneratorBitForBit) {
  Rig r(pe::Bf16Rounding::Stochastic);
  const SrMatmul s = sr_operands(32, 8, 40, 3);
  const unsigned bank = 2;
  pe::ExecResult e = run_sr(r, s, bank);
  ASSERT_TRUE(e.ok) << e.describe();
  const pe::OperandType t{Generation::MARIANA, Dtype::FP32, Fp32Mode::High};
  const auto exact = ref_sum(t, s.st, s.mv, s.K, s.M, s.N);
  const auto got = read_bf16(r.mem, s.M, s.N, bank);
  unsigned differs_from_rne = 0;
  for (unsigned p = 0; p < s.M; ++p) {
    std::uint32_t state[2] = {reset_state(p * kPerPartition + bank * 2), reset_state(p * kPerPartition + bank * 2 + 1)};
    for (unsigned i = 0; i < s.N; ++i) {
      std::uint32_t& seed = state[i % 2];  // element i is at bf16 position i of the bank
      seed = step(seed);
      const float v = exact[p * s.N + i];
      ASSERT_EQ(got[p * s.N + i], sr(v, seed >> 16)) << "partition " << p << " element " << i;
      differs_from_rne += got[p * s.N + i] != num::to_bf16(v);
    }
    // The seeds advanced once per element they rounded.
    EXPECT_EQ(r.ex.seed(p, bank * 2), state[0]);
    EXPECT_EQ(r.ex.seed(p, bank * 2 + 1), state[1]);
  }
  EXPECT_GT(differs_from_rne, 0u) << "stochastic rounding must differ from RNE somewhere";
  // Untouched banks and partitions keep their reset seeds.
  EXPECT_EQ(r.ex.seed(0, 0), reset_state(0));
  EXPECT_EQ(r.ex.seed(100, bank * 2), reset_state(100 * kPerPartition + bank * 2));
}

TEST(StochasticRounding, UnbiasedWhereNearestEvenIsNot) {
  // out = 1 x x with x = 1 + 2^-9: a quarter of the way from 1 to the next bf16 (1 + 2^-7). RNE always rounds down
  // (error -2^-9); SR rounds up with probability 1/4, so its mean error is 0 within the sampling noise.
  const unsigned N = 512, M = 128;
  const float x = 1.0f + std::ldexp(1.0f, -9);
  for (const auto mode : {pe::Bf16Rounding::NearestEven, pe::Bf16Rounding::Stochastic}) {
    Rig r(mode);
    const pe::OperandType t{Generation::MARIANA, Dtype::FP32, Fp32Mode::High};
    std::vector<std::uint8_t> st(M * 4), mv(N * 4);
    for (unsigned m = 0; m < M; ++m) encode_value(t, 1.0f, &st[m * 4]);
    for (unsigned i = 0; i < N; ++i) encode_value(t, x, &mv[i * 4]);
    SrMatmul s{1, M, N, st, mv};
    ASSERT_TRUE(run_sr(r, s).ok);
    double sum = 0;
    unsigned up = 0;
    for (const std::uint16_t h : read_bf16(r.mem, M, N)) {
      const float v = num::from_bf16(h);
      ASSERT_TRUE(v == 1.0f || v == 1.0f + std::ldexp(1.0f, -7)) << v;
      sum += static_cast<double>(v) - x;
      up += v > 1.0f;
    }
    const double n = double{M} * N, mean = sum / n;
    if (mode == pe::Bf16Rounding::NearestEven) {
      EXPECT_EQ(mean, -std::ldexp(1.0, -9));
    } else {
      const double sigma = std::ldexp(1.0, -9) * std::sqrt(3.0) / std::sqrt(n);  // per-element std 2^-9 sqrt(3)
      EXPECT_LT(std::fabs(mean), 5 * sigma) << "mean error " << mean;
      EXPECT_NEAR(up / n, 0.25, 5 * std::sqrt(0.25 * 0.75 / n));
    }
  }
}

TEST(PeManageSeed, SaveWritesTheStateInTheSpecsLayout) {
  Rig r(pe::Bf16Rounding::NearestEven);  // the state exists whatever the drain does
  r.put_identity(0x1000);
  const std::vector<std::uint8_t> before = r.mem.psum;
  const pe::ExecResult e = r.run_all(seed_instr(isa::PeSeedMode::SAVE_SEED));
  ASSERT_TRUE(e.ok) << e.describe();
  for (unsigned p = 0; p < 128; ++p)
    for (unsigned b = 0; b < 8; ++b) {
      for (unsigned i = 0; i < 2; ++i)
        ASSERT_EQ(psum_u32(r.mem, p, b * kBank + i * 4), reset_state(p * kPerPartition + b * 2 + i)) << p << "," << b;
      // Only the two words of each bank are written.
      ASSERT_EQ(std::memcmp(&r.mem.psum[p * kPsumPart + b * kBank + 8], &before[p * kPsumPart + b * kBank + 8],
                            kBank - 8),
                0);
    }
  // The identity is the tile's stationary afterwards (the array held it).
  ASSERT_NE(r.ex.stationary({0, 16, 0, 16}), nullptr);
}

TEST(PeManageSeed, SaveTransposeLoadMakesAStochasticRerunBitIdentical) {
  Rig r(pe::Bf16Rounding::Stochastic);
  r.put_identity(0x1000);
  const SrMatmul s = sr_operands(64, 128, 96, 9);
  // Advance the state a little first, so the checkpoint is not the reset state.
  ASSERT_TRUE(run_sr(r, s, 3).ok);
  ASSERT_TRUE(r.run_all(seed_instr(isa::PeSeedMode::SAVE_SEED)).ok);
  // The saved layout is 128 partitions x 16 (at bank starts); LoadSeed reads 16 partitions x 128: transpose it.
  std::vector<std::uint8_t> src(16 * 128 * 4);
  for (unsigned p = 0; p < 128; ++p)
    for (unsigned sd = 0; sd < 16; ++sd) {
      const std::uint32_t w = psum_u32(r.mem, p, (sd / 2) * kBank + (sd % 2) * 4);
      std::memcpy(&src[(sd * 128 + p) * 4], &w, 4);
    }
  ASSERT_TRUE(run_sr(r, s, 3).ok);
  const auto first = read_bf16(r.mem, s.M, s.N, 3);
  ASSERT_TRUE(run_sr(r, s, 3).ok);
  const auto advanced = read_bf16(r.mem, s.M, s.N, 3);
  EXPECT_NE(first, advanced) << "the state moved on: a second run rounds differently";
  r.mem.put(0, 0x2000, src, 16);
  ASSERT_TRUE(r.run_all(seed_instr(isa::PeSeedMode::LOAD_SEED)).ok);
  ASSERT_TRUE(run_sr(r, s, 3).ok);
  EXPECT_EQ(read_bf16(r.mem, s.M, s.N, 3), first) << "the restored seeds round exactly as the checkpoint did";
  // Loading the saved layout untransposed restores nothing (the header's warning).
  ASSERT_TRUE(r.run_all(seed_instr(isa::PeSeedMode::SAVE_SEED)).ok);
  std::vector<std::uint8_t> raw(16 * 128 * 4);
  for (unsigned q = 0; q < 16; ++q)
    for (unsigned i = 0; i < 128; ++i) {
      const std::uint32_t w = psum_u32(r.mem, i, (q / 2) * kBank + (q % 2) * 4) ^ (q * 0x01010101u + i);
      std::memcpy(&raw[(q * 128 + i) * 4], &w, 4);
    }
  r.mem.put(0, 0x2000, raw, 16);
  ASSERT_TRUE(r.run_all(seed_instr(isa::PeSeedMode::LOAD_SEED)).ok);
  for (unsigned p = 0; p < 16; ++p) {
    std::uint32_t w;
    std::memcpy(&w, &raw[(3 * 128 + p) * 4], 4);
    EXPECT_EQ(r.ex.seed(p, 3), w) << "LoadSeed: state[p][s] = SBUF partition s, element p";
  }
}

TEST(PeManageSeed, TheIdentityIsCheckedAndAFaultChangesNothing) {
  Rig r(pe::Bf16Rounding::Stochastic);
  const pe::OperandType t{Generation::MARIANA, Dtype::BFLOAT16, Fp32Mode::None};
  // A stationary the seed move must not disturb when it faults.
  expect_ok(r.ex.ldweights(dec(r.g, isa::encode_ldweights(r.g, ldw(t, 0x4000, 128, 128))), r.mem.sbuf.data(),
                           r.mem.sbuf.size()));
  for (const float diagonal : {2.0f, 0.0f}) {
    r.put_identity(0x1000, diagonal);
    const std::vector<std::uint8_t> before = r.mem.psum;
    const pe::ExecResult e = r.run_all(seed_instr(isa::PeSeedMode::SAVE_SEED));
    EXPECT_EQ(e.rule, "exec.seed_identity");
    EXPECT_NE(e.message.find(diagonal == 2.0f ? "stationary[0][0] = 2" : "column 0 holds 0 ones"), std::string::npos)
        << e.message;
    EXPECT_EQ(r.mem.psum, before);
    EXPECT_NE(r.ex.stationary({0, 128, 0, 128}), nullptr) << "the faulting seed move replaced the stationary";
  }
  // SaveSeed into a PSUM with an open accumulation group: PSUM must be evicted first.
  r.put_identity(0x1000);
  auto a = mm(t, 0x6000, kPsum + 5 * kBank, 128, 128, 16, pf::MULTI_START);
  expect_ok(r.ex.matmul(dec(r.g, isa::encode_matmul(r.g, a)), r.mem.sbuf.data(), r.mem.sbuf.size(),
                        r.mem.psum.data(), r.mem.psum.size()));
  const pe::ExecResult e = r.run_all(seed_instr(isa::PeSeedMode::SAVE_SEED));
  EXPECT_EQ(e.rule, "exec.psum_group_open");
  EXPECT_NE(e.message.find("PSUM bank 5"), std::string::npos) << e.message;
}

TEST(SeedMode, MaverickSeedMicroOpsAndScalarModeAreRefusedNamingTheField) {
  const Generation g = Generation::MAVERICK;
  Mem mem(g);
  pe::ArrayExecutor ex(isa::preset_geometry(g));
  isa::LdweightsArgs l;
  l.src = isa::Pattern{0, {1, 1, 1}, {1, 1, 1}};
  l.in_dtype = Dtype::FP32;
  l.fp32_mode = Fp32Mode::High;
  l.num_active_rows = 1;
  l.num_active_cols = 256;
  l.tile = {0, 64, 0, 256};
  l.xpose = true;
  l.seed_mode = isa::PeSeedMode::LOAD_SEED;
  const float one = 1.0f;  // the single identity element (spec 5.1), so that only the move itself is refused
  std::memcpy(mem.sbuf.data(), &one, sizeof one);
  const auto r = ex.ldweights(dec(g, isa::encode_ldweights(g, l)), mem.sbuf.data(), mem.sbuf.size());
  EXPECT_EQ(r.rule, "exec.not_modelled");
  EXPECT_NE(r.message.find("flags.seed_mode = 1"), std::string::npos) << r.message;
  pe::MicroOp op = dec(Generation::MARIANA, isa::encode_ldweights(Generation::MARIANA, ldw({Generation::MARIANA,
                                                                                            Dtype::BFLOAT16,
                                                                                            Fp32Mode::None},
                                                                                           0, 128, 128)));
  op.unmodelled.scalar_mode = 2;
  pe::ArrayExecutor v4(isa::preset_geometry(Generation::MARIANA));
  Mem m4(Generation::MARIANA);
  const auto s = v4.ldweights(op, m4.sbuf.data(), m4.sbuf.size());
  EXPECT_EQ(s.rule, "exec.not_modelled");
  EXPECT_NE(s.message.find("flags.scalar_mode = 2"), std::string::npos) << s.message;
}


// MAVERICK's seed micro-ops (spec 000 section 5.1): the Ldweights and the Matmul of LoadSeed and SaveSeed, each with
// the contract's shape. The single source element must be 1 (exec.seed_identity names what it is, and where an
// element count or address is wrong the access rules say so); with 1 the move itself is refused, naming the fact the
// spec leaves out (exec.not_modelled, D-SEED-V5-EXEC). Nothing is written either way.
struct MaverickSeed {
  static constexpr Generation g = Generation::MAVERICK;
  static constexpr std::uint32_t kIdentityAt = 0x40;  // SBUF partition 0
  Mem mem{g};
  pe::ArrayExecutor ex{isa::preset_geometry(g)};

  pe::MicroOp op(bool matmul, isa::PeSeedMode mode) const {
    const isa::Pattern one{kIdentityAt, {1, 1, 1}, {1, 1, 1}};
    if (!matmul) {
      isa::LdweightsArgs l;
      l.src = one;
      l.in_dtype = Dtype::FP32;
      l.fp32_mode = Fp32Mode::High;
      l.num_active_rows = 1;
      l.num_active_cols = 256;
      l.tile = {0, 64, 0, 256};
      l.xpose = true;
      l.seed_mode = mode;
      return dec(g, isa::encode_ldweights(g, l));
    }
    isa::MatmulArgs m;
    m.src = one;
    m.dst = isa::Pattern{kPsum, {1, 1, 1}, {1, 1, 2}};  // SaveSeed's 1x1x2 PSUM tensor
    m.in_dtype = Dtype::FP32;
    m.fp32_mode = Fp32Mode::High;
    m.out_dtype = Dtype::FP32;
    m.num_active_rows = 1;
    m.num_active_cols = 256;
    m.tile = {0, 64, 0, 256};
    m.xpose = true;
    m.seed_mode = mode;
    return dec(g, isa::encode_matmul(g, m));
  }
  pe::ExecResult run(const pe::MicroOp& o) {
    return o.kind == pe::MicroOpKind::WeightLoad
               ? ex.ldweights(o, mem.sbuf.data(), mem.sbuf.size())
               : ex.matmul(o, mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(), mem.psum.size());
  }
  void put(float v) { std::memcpy(mem.sbuf.data() + kIdentityAt, &v, sizeof v); }
};

TEST(MaverickSeedMode, TheSingleSourceElementMustBeOne) {
  for (bool matmul : {false, true})
    for (isa::PeSeedMode mode : {isa::PeSeedMode::LOAD_SEED, isa::PeSeedMode::SAVE_SEED})
      for (float wrong : {0.0f, 2.0f, -1.0f}) {
        MaverickSeed s;
        s.put(wrong);
        const pe::MicroOp o = s.op(matmul, mode);
        const auto psum = s.mem.psum;
        const pe::ExecResult r = s.run(o);
        SCOPED_TRACE(std::string(matmul ? "Matmul" : "Ldweights") + (mode == isa::PeSeedMode::LOAD_SEED ? " load" : " save"));
        EXPECT_EQ(r.rule, "exec.seed_identity");
        EXPECT_NE(r.message.find("single source element is " + std::to_string(wrong)), std::string::npos) << r.message;
        EXPECT_EQ(s.mem.psum, psum);
        EXPECT_EQ(s.ex.stationary({0, 64, 0, 256}), nullptr);
      }
}

TEST(MaverickSeedMode, WithItsIdentityTheMoveIsRefusedNamingWhatTheSpecLeavesOut) {
  for (bool matmul : {false, true})
    for (isa::PeSeedMode mode : {isa::PeSeedMode::LOAD_SEED, isa::PeSeedMode::SAVE_SEED}) {
      MaverickSeed s;
      s.put(1.0f);
      const auto psum = s.mem.psum;
      const pe::ExecResult r = s.run(s.op(matmul, mode));
      const bool load = mode == isa::PeSeedMode::LOAD_SEED;
      EXPECT_EQ(r.rule, "exec.not_modelled");
      EXPECT_NE(r.message.find(load ? "(LOAD_SEED)" : "(SAVE_SEED)"), std::string::npos) << r.message;
      EXPECT_NE(r.message.find(load ? "where the seeds it loads come from" : "which seeds it saves"), std::string::npos)
          << r.message;
      EXPECT_NE(r.message.find("D-SEED-V5-EXEC"), std::string::npos) << r.message;
      EXPECT_EQ(s.mem.psum, psum);
    }
}

TEST(MaverickSeedMode, AnIdentityOutsideSbufIsNamed) {
  MaverickSeed s;
  pe::MicroOp o = s.op(true, isa::PeSeedMode::SAVE_SEED);
  o.src.start_raw = kPsum;  // the identity must be read from SBUF
  EXPECT_EQ(s.run(o).rule, "exec.pattern_region");
}

}  // namespace
