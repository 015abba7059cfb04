// PeManageSeed on the whole platform, as a driver checkpoints a stochastic-rounding training step (MARIANA with
// tensor_engine.psum_rounding = stochastic): save the seeds, read the 128 x 16 PSUM layout back over the bus,
// transpose it on the host into the 16 x 128 SBUF layout LoadSeed reads, run a bf16 matmul, load the seeds back and
// run it again: the same bits. The seed instruction's two micro-ops are timed like a 16-row transpose.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "pevp/isa/builders.h"
#include "pevp/platform/config.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/virtual_platform.h"

namespace {

using namespace pevp;
using isa::Dtype;

constexpr std::uint32_t kPsumPart = 16 * 1024, kBank = 2048;

isa::RawInstruction seed(isa::Generation g, isa::PeSeedMode mode) {
  isa::PeSeedArgs a;
  a.mode = mode;
  a.identity = isa::Pattern::row(0x1000, 16);
  a.identity_dtype = Dtype::BFLOAT16;
  if (mode == isa::PeSeedMode::LOAD_SEED)
    a.src_seed = {0x2000, {1, 0}, {128, 1}};
  else
    a.dst_seed = {isa::ArrayGeometry::kPsumBase, {1, 512}, {2, 8}};
  return isa::encode_pe_seed(g, a);
}

// A 64 x 128 x 96 fp32 -> bf16 matmul into PSUM bank 4.
std::vector<isa::RawInstruction> bf16_matmul(isa::Generation g) {
  isa::LdweightsArgs l;
  l.src = isa::Pattern::row(0x8000, 128);
  l.in_dtype = Dtype::FP32;
  l.fp32_mode = isa::Fp32Mode::High;
  l.num_active_rows = 64;
  l.num_active_cols = 128;
  isa::MatmulArgs m;
  m.src = isa::Pattern::row(0x9000, 96);
  m.dst = isa::Pattern::row(isa::ArrayGeometry::kPsumBase + 4 * kBank, 96);
  m.in_dtype = Dtype::FP32;
  m.fp32_mode = isa::Fp32Mode::High;
  m.out_dtype = Dtype::BFLOAT16;
  m.num_active_rows = 64;
  m.num_active_cols = 128;
  return {isa::encode_ldweights(g, l), isa::encode_matmul(g, m)};
}

class PeManageSeedPlatform : public ::testing::TestWithParam<isa::Generation> {};

TEST_P(PeManageSeedPlatform, ACheckpointedStochasticStepReplaysBitForBit) {
  const isa::Generation g = GetParam();
  platform::VpConfig cfg = platform::preset(g);
  platform::apply_override(cfg, "tensor_engine.psum_rounding=stochastic");
  platform::VirtualPlatform vp(cfg);
  const std::uint32_t part = cfg.geometry.sbuf_partition_bytes;
  std::vector<std::uint16_t> first, second, replay;
  std::vector<std::uint64_t> seed_cycles;
  vp.platform().arr_seq.observer = [&](const pe::MicroOp& op, const arrseq::Slot& s) {
    if (op.seed != pe::SeedMove::None && op.kind == pe::MicroOpKind::Matmul) seed_cycles.push_back(s.end - s.start);
  };
  vp.run([&](platform::Driver& d) {
    d.arm();
    // The identity (bf16 ones on the diagonal) and the operands: values with bits below bf16's precision.
    for (std::uint32_t p = 0; p < 16; ++p) {
      std::uint16_t row[16] = {};
      row[p] = 0x3F80;
      d.write(d.map().sbuf + p * part + 0x1000, row, sizeof row);
    }
    for (std::uint32_t p = 0; p < 64; ++p) {
      std::vector<float> st(128), mv(96);
      for (unsigned i = 0; i < 128; ++i) st[i] = 1.0f + static_cast<float>((p * 131 + i * 7) % 1000) / 997.0f;
      for (unsigned i = 0; i < 96; ++i) mv[i] = 0.5f + static_cast<float>((p * 17 + i * 29) % 1000) / 1013.0f;
      d.write(d.map().sbuf + p * part + 0x8000, st.data(), st.size() * 4);
      d.write(d.map().sbuf + p * part + 0x9000, mv.data(), mv.size() * 4);
    }
    const auto run = [&](const std::vector<isa::RawInstruction>& program) {
      d.submit(program);
      const platform::Completion c = d.wait_idle();
      ASSERT_TRUE(c.done && !c.error) << (d.error_record() ? d.error_record()->describe() : "timeout");
      d.clear_done();
    };
    const auto result = [&] {
      std::vector<std::uint16_t> out(128 * 96);
      for (std::uint32_t p = 0; p < 128; ++p)
        d.read(d.map().psum + p * kPsumPart + 4 * kBank, &out[p * 96], 96 * 2);
      return out;
    };
    run({seed(g, isa::PeSeedMode::SAVE_SEED)});
    // The saved layout: partition p, bank b, word i = seed 2b + i of partition p. Transposed for LoadSeed.
    std::vector<std::uint32_t> sbuf_seeds(16 * 128);
    for (std::uint32_t p = 0; p < 128; ++p)
      for (std::uint32_t s = 0; s < 16; ++s)
        d.read(d.map().psum + p * kPsumPart + (s / 2) * kBank + (s % 2) * 4, &sbuf_seeds[s * 128 + p], 4);
    for (std::uint32_t s = 0; s < 16; ++s) d.write(d.map().sbuf + s * part + 0x2000, &sbuf_seeds[s * 128], 128 * 4);
    run(bf16_matmul(g));
    first = result();
    run(bf16_matmul(g));
    second = result();
    run({seed(g, isa::PeSeedMode::LOAD_SEED)});
    run(bf16_matmul(g));
    replay = result();
  });
  EXPECT_NE(first, second) << "the seeds advance: the same matmul rounds differently the second time";
  EXPECT_EQ(first, replay) << "the restored seeds reproduce the checkpointed step";
  // Two seed moves (save, load), each max(K = 16, min(64, N = 128)) x 2 (fp32) = 128 cycles on the stream.
  ASSERT_EQ(seed_cycles.size(), 2u);
  EXPECT_EQ(seed_cycles[0], 128u);
  EXPECT_EQ(seed_cycles[1], 128u);
}

// Both NeuronCore-v4 generations have the PSUM seeds (PeManageSeed is v4 only).
INSTANTIATE_TEST_SUITE_P(V4, PeManageSeedPlatform,
                         ::testing::Values(isa::Generation::MARIANA, isa::Generation::MARIANA_PLUS),
                         [](const ::testing::TestParamInfo<isa::Generation>& i) {
                           return std::string(isa::name(i.param));
                         });

}  // namespace
