// The first end-to-end path: one Ldweights + Matmul through the driver, checked
// against plain loops; one rejected instruction read back from the error CSRs.
#include <gtest/gtest.h>

#include <random>

#include "pevp/isa/builders.h"
#include "pevp/isa/rules.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/virtual_platform.h"
#include "test_util.h"

namespace {

using namespace pevp;
using pe_test::bits;

TEST(Smoke, SingleMatmulBf16) {
  platform::PlatformConfig cfg;
  cfg.gen = isa::Generation::MARIANA;
  platform::VirtualPlatform vp(cfg);
  const std::size_t K = 64, M = 32, N = 40;
  const pe::OperandType t{cfg.gen, isa::Dtype::BFLOAT16, isa::Fp32Mode::None};
  std::mt19937 rng(1);
  const auto st = pe_test::random_operand(t, K * M, rng, 0.0);
  const auto mv = pe_test::random_operand(t, K * N, rng, 0.0);
  const std::uint32_t part = isa::preset_geometry(cfg.gen).sbuf_partition_bytes;
  std::vector<float> out(M * N);
  platform::Completion c;
  vp.run([&](platform::Driver& d) {
    d.arm();
    for (std::size_t k = 0; k < K; ++k) {
      d.write(k * part + 0, &st[k * M * 2], M * 2);
      d.write(k * part + 4096, &mv[k * N * 2], N * 2);
    }
    isa::LdweightsArgs lw;
    lw.src = isa::Pattern::row(0, M);
    lw.num_active_rows = K;
    lw.num_active_cols = M;
    lw.tile = {0, 64, 0, 32};
    isa::MatmulArgs mm;
    mm.src = isa::Pattern::row(4096, N);
    mm.dst = isa::Pattern::row(isa::ArrayGeometry::kPsumBase, N);
    mm.num_active_rows = K;
    mm.num_active_cols = M;
    mm.tile = lw.tile;
    d.submit({isa::encode_ldweights(cfg.gen, lw), isa::encode_matmul(cfg.gen, mm)});
    c = d.wait_idle();
    for (std::size_t m = 0; m < M; ++m) d.read(d.map().psum + m * 16384, &out[m * N], N * 4);
  });
  ASSERT_TRUE(c.done) << "error: " << c.error;
  EXPECT_EQ(c.retired, 2u);
  const auto a = pe_test::decode(t, st), b = pe_test::decode(t, mv);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      float s = 0.0f;
      for (std::size_t k = 0; k < K; ++k) s = s + a[k * M + m] * b[k * N + n];
      ASSERT_EQ(bits(out[m * N + n]), bits(s)) << m << "," << n;
    }
  EXPECT_EQ(vp.platform().seq.firmware_log().size(), 2u);
  EXPECT_EQ(vp.platform().seq.firmware_log()[0], "S: Ldweights");
  EXPECT_EQ(vp.platform().seq.firmware_log()[1], "S: Matmul");
}

TEST(Smoke, NotModelledOpcodeStopsTheQueue) {
  platform::PlatformConfig cfg;
  cfg.gen = isa::Generation::MARIANA;
  platform::VirtualPlatform vp(cfg);
  std::optional<platform::ErrorInfo> e;
  platform::Completion c;
  vp.run([&](platform::Driver& d) {
    d.arm();
    isa::Encoder enc(cfg.gen, isa::Opcode::LDTAGS);
    d.submit({enc.bytes()});
    c = d.wait_idle();
    e = d.error_record();
  });
  ASSERT_TRUE(c.error);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->index, 0u);
  EXPECT_EQ(e->opcode, 0x06);
}

}  // namespace
