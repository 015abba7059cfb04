// The transposing Matmul on the whole platform, on every generation: an identity stationary and an fp32 moving tile
// whose words include NaN payloads, both zeros, infinities and subnormals; PSUM must hold the tile transposed, every
// word as it was (the move is not arithmetic), and the stream must take the transpose's time, max(K, min(64, N)) x 2
// for fp32.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "pevp/isa/builders.h"
#include "pevp/platform/config.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/virtual_platform.h"

namespace {

using namespace pevp;
constexpr unsigned K = 64, N = 48;  // moving: K partitions x N words; out: N partitions x K words
constexpr std::uint32_t kPsumPart = 16 * 1024;

std::uint32_t word(unsigned k, unsigned n) {
  static const std::uint32_t special[] = {0x7FC00001u, 0xFFA0BEEFu, 0x7F800000u, 0xFF800000u,
                                          0x80000000u, 0x00000000u, 0x00000003u, 0x807FFFFFu};
  const unsigned i = k * N + n;
  return i % 11 == 0 ? special[(i / 11) % 8] : 0x3F800000u + i * 0x9E37u;
}

class TransposePlatform : public ::testing::TestWithParam<isa::Generation> {};

TEST_P(TransposePlatform, MovesEveryWordAndTakesTheTransposeTime) {
  const isa::Generation g = GetParam();
  platform::VpConfig cfg = platform::preset(g);
  platform::VirtualPlatform vp(cfg);
  std::uint64_t stream_cycles = 0;
  vp.platform().arr_seq.observer = [&](const pe::MicroOp& op, const arrseq::Slot& s) {
    if (op.kind == pe::MicroOpKind::Matmul) stream_cycles = s.end - s.start;
  };
  std::vector<std::uint32_t> out(N * K);
  vp.run([&](platform::Driver& d) {
    d.arm();
    const std::uint32_t part = cfg.geometry.sbuf_partition_bytes;
    for (unsigned k = 0; k < K; ++k) {
      std::vector<std::uint32_t> identity(K, 0), mv(N);
      identity[k] = 0x3F800000u;  // 1.0f
      for (unsigned n = 0; n < N; ++n) mv[n] = word(k, n);
      d.write(d.map().sbuf + k * part, identity.data(), K * 4);
      d.write(d.map().sbuf + k * part + 0x1000, mv.data(), N * 4);
    }
    const bool v5 = isa::is_maverick(g);
    const isa::Placement tile = v5 ? isa::Placement{0, 64, 0, 128} : isa::Placement{0, 64, 0, 64};
    isa::LdweightsArgs l;
    l.src = isa::Pattern::row(0, K);
    l.in_dtype = isa::Dtype::FP32;
    l.fp32_mode = isa::Fp32Mode::High;
    l.num_active_rows = K;
    l.num_active_cols = K;
    l.tile = tile;
    isa::MatmulArgs m;
    m.src = isa::Pattern::row(0x1000, N);
    m.dst = isa::Pattern::row(isa::ArrayGeometry::kPsumBase, K);  // N partitions of K words
    m.in_dtype = isa::Dtype::FP32;
    m.fp32_mode = isa::Fp32Mode::High;
    m.num_active_rows = K;
    m.num_active_cols = K;
    m.tile = tile;
    m.xpose = true;
    d.submit({isa::encode_ldweights(g, l), isa::encode_matmul(g, m)});
    const platform::Completion c = d.wait_idle();
    ASSERT_TRUE(c.done && !c.error) << (d.error_record() ? d.error_record()->describe() : "timeout");
    for (unsigned n = 0; n < N; ++n) d.read(d.map().psum + n * kPsumPart, &out[n * K], K * 4);
  });
  for (unsigned n = 0; n < N; ++n)
    for (unsigned k = 0; k < K; ++k) ASSERT_EQ(out[n * K + k], word(k, n)) << "dst[" << n << "][" << k << "]";
  EXPECT_EQ(stream_cycles, 2u * std::max(K, std::min(64u, N))) << "fp32 transpose: max(K, min(64, N)) x 2";
}

INSTANTIATE_TEST_SUITE_P(Gen, TransposePlatform,
                         ::testing::Values(isa::Generation::CAYMAN, isa::Generation::MARIANA,
                                           isa::Generation::MARIANA_PLUS, isa::Generation::MAVERICK),
                         [](const ::testing::TestParamInfo<isa::Generation>& i) {
                           return std::string(isa::name(i.param));
                         });

}  // namespace
