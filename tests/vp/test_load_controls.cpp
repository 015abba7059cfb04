// What controls a weight load besides its operands, on the whole platform, against sums of small integers (exact in
// bf16 and fp32): flags.load_order (FIRST_COL_FIRST puts SBUF element j in column M - 1 - j; the default keeps it in
// column j), the cluster CSR enable_wl_last_active_col / wl_last_active_col (the load stops at that column: the
// columns past it hold 0, and the load takes the time of the columns it filled), and the transposed load in the
// foreground (flags.xpose_mode) and in the background (bg_xpose_mode): one stationary, two times.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "pevp/isa/builders.h"
#include "pevp/numerics/convert.h"
#include "pevp/platform/config.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/virtual_platform.h"

namespace {

using namespace pevp;
constexpr unsigned K = 32, M = 128, N = 16;
constexpr std::uint32_t kPsumPart = 16 * 1024;

float st_value(unsigned k, unsigned j) { return static_cast<float>(static_cast<int>((k * 3 + j * 5) % 7) - 3); }
float mv_value(unsigned k, unsigned n) { return static_cast<float>(static_cast<int>((k * 2 + n) % 5) - 2); }

struct Outcome {
  std::vector<float> c;     // M x N
  std::uint64_t load_cycles = 0;
};

Outcome run(isa::Generation g, bool first_col_first, std::optional<unsigned> last_col) {
  platform::VirtualPlatform vp(platform::preset(g));
  Outcome o;
  vp.platform().arr_seq.observer = [&](const pe::MicroOp& op, const arrseq::Slot& s) {
    if (op.kind == pe::MicroOpKind::WeightLoad) o.load_cycles = s.end - s.start;
  };
  vp.run([&](platform::Driver& d) {
    d.arm();
    if (last_col) {
      d.write_field("cluster", "arr_cluster_cfg", "enable_wl_last_active_col", 1);
      d.write_field("cluster", "arr_cluster_cfg", "wl_last_active_col", *last_col);
    }
    const std::uint32_t part = vp.platform().sbuf.config().partition_bytes;
    for (unsigned k = 0; k < K; ++k) {
      std::vector<std::uint16_t> st(M), mv(N);
      for (unsigned j = 0; j < M; ++j) st[j] = num::to_bf16(st_value(k, j));
      for (unsigned n = 0; n < N; ++n) mv[n] = num::to_bf16(mv_value(k, n));
      d.write(d.map().sbuf + k * part, st.data(), M * 2);
      d.write(d.map().sbuf + k * part + 0x1000, mv.data(), N * 2);
    }
    isa::LdweightsArgs l;
    l.src = isa::Pattern::row(0, M);
    l.num_active_rows = K;
    l.num_active_cols = M;
    l.load_order = first_col_first ? isa::PeLwOrder::FIRST_COL_FIRST : isa::PeLwOrder::LAST_COL_FIRST;
    isa::MatmulArgs m;
    m.src = isa::Pattern::row(0x1000, N);
    m.dst = isa::Pattern::row(isa::ArrayGeometry::kPsumBase, N);
    m.num_active_rows = K;
    m.num_active_cols = M;
    d.submit({isa::encode_ldweights(g, l), isa::encode_matmul(g, m)});
    const platform::Completion c = d.wait_idle();
    ASSERT_TRUE(c.done && !c.error) << (d.error_record() ? d.error_record()->describe() : "timeout");
    o.c.resize(M * N);
    for (unsigned p = 0; p < M; ++p) d.read(d.map().psum + p * kPsumPart, &o.c[p * N], N * 4);
  });
  return o;
}

float expected(unsigned column_source, unsigned n) {
  float s = 0;
  for (unsigned k = 0; k < K; ++k) s += st_value(k, column_source) * mv_value(k, n);
  return s;
}

class LoadControls : public ::testing::TestWithParam<isa::Generation> {};

TEST_P(LoadControls, LastColFirstKeepsElementJInColumnJ) {
  const Outcome o = run(GetParam(), false, std::nullopt);
  for (unsigned p = 0; p < M; ++p)
    for (unsigned n = 0; n < N; ++n) ASSERT_EQ(o.c[p * N + n], expected(p, n)) << p << "," << n;
  EXPECT_EQ(o.load_cycles, 32u) << "128 bf16 columns: max(128 / 4, 256 / 8)";
}

TEST_P(LoadControls, FirstColFirstReversesTheColumns) {
  const Outcome o = run(GetParam(), true, std::nullopt);
  for (unsigned p = 0; p < M; ++p)
    for (unsigned n = 0; n < N; ++n) ASSERT_EQ(o.c[p * N + n], expected(M - 1 - p, n)) << p << "," << n;
  EXPECT_EQ(o.load_cycles, 32u) << "the order costs nothing";
}

TEST_P(LoadControls, WlLastActiveColStopsTheLoadInDataAndInTime) {
  const unsigned last = 9;  // columns 0..9 loaded
  const Outcome o = run(GetParam(), false, last);
  for (unsigned p = 0; p < M; ++p)
    for (unsigned n = 0; n < N; ++n) {
      const float want = p <= last ? expected(p, n) : 0.0f;
      ASSERT_EQ(o.c[p * N + n], want) << p << "," << n;
      if (p > last) {
        ASSERT_FALSE(std::signbit(o.c[p * N + n])) << "+0: the sum starts at +0";
      }
    }
  EXPECT_EQ(o.load_cycles, 3u) << "10 columns: max(ceil(10 / 4), ceil(20 / 8))";
}

// bg_xpose_mode (v4): the same transposed stationary as flags.xpose_mode, loaded in the background, so without the
// foreground transpose pass: bf16 [M = 128 partitions][K = 32] -> 32 cycles instead of 32 + max(128, min(64, 32)).
struct XposeCase {
  isa::Generation gen;
  bool background;
};
class BackgroundTranspose : public ::testing::TestWithParam<XposeCase> {};

TEST_P(BackgroundTranspose, SameStationaryAsXposeWithoutTheTransposePass) {
  const isa::Generation g = GetParam().gen;
  const bool background = GetParam().background;
  std::vector<float> result(M * N);
  std::uint64_t cycles = 0;
  platform::VirtualPlatform vp(platform::preset(g));  // one platform per test process (SystemC elaborates once)
  vp.platform().arr_seq.observer = [&](const pe::MicroOp& op, const arrseq::Slot& s) {
    if (op.kind == pe::MicroOpKind::WeightLoad) cycles = s.end - s.start;
  };
  vp.run([&](platform::Driver& d) {
    d.arm();
    const std::uint32_t part = vp.platform().sbuf.config().partition_bytes;
    for (unsigned p = 0; p < M; ++p) {  // the [M][K] tile: partition p holds column p's K weights
      std::vector<std::uint16_t> row(K);
      for (unsigned k = 0; k < K; ++k) row[k] = num::to_bf16(st_value(k, p));
      d.write(d.map().sbuf + p * part, row.data(), K * 2);
    }
    for (unsigned k = 0; k < K; ++k) {
      std::vector<std::uint16_t> mv(N);
      for (unsigned n = 0; n < N; ++n) mv[n] = num::to_bf16(mv_value(k, n));
      d.write(d.map().sbuf + k * part + 0x1000, mv.data(), N * 2);
    }
    isa::LdweightsArgs l;
    l.src = isa::Pattern::row(0, K);
    l.num_active_rows = K;
    l.num_active_cols = M;
    l.xpose = !background;
    isa::RawInstruction lw = isa::encode_ldweights(g, l);
    if (background) {
      const isa::Encoder e(g, isa::Opcode::LDWEIGHTS);
      lw[e.leaf("bg_xpose_mode")->offset] = 1;
    }
    isa::MatmulArgs m;
    m.src = isa::Pattern::row(0x1000, N);
    m.dst = isa::Pattern::row(isa::ArrayGeometry::kPsumBase, N);
    m.num_active_rows = K;
    m.num_active_cols = M;
    d.submit({lw, isa::encode_matmul(g, m)});
    const platform::Completion c = d.wait_idle();
    ASSERT_TRUE(c.done && !c.error) << (d.error_record() ? d.error_record()->describe() : "timeout");
    for (unsigned p = 0; p < M; ++p) d.read(d.map().psum + p * kPsumPart, &result[p * N], N * 4);
  });
  for (unsigned p = 0; p < M; ++p)
    for (unsigned n = 0; n < N; ++n) ASSERT_EQ(result[p * N + n], expected(p, n)) << p << "," << n;
  if (background)
    EXPECT_EQ(cycles, 32u) << "in the background: the load alone";
  else
    EXPECT_EQ(cycles, 32u + 128u) << "a foreground transposed load: the load and a transpose pass";
}

INSTANTIATE_TEST_SUITE_P(V4, BackgroundTranspose,
                         ::testing::Values(XposeCase{isa::Generation::MARIANA, false},
                                           XposeCase{isa::Generation::MARIANA, true},
                                           XposeCase{isa::Generation::MARIANA_PLUS, false},
                                           XposeCase{isa::Generation::MARIANA_PLUS, true}),
                         [](const ::testing::TestParamInfo<XposeCase>& i) {
                           return std::string(isa::name(i.param.gen)) + (i.param.background ? "_bg_xpose" : "_xpose");
                         });

// load_order exists from v4 (CAYMAN has no flags byte); the cluster CSR on every generation, tested with it here.
INSTANTIATE_TEST_SUITE_P(V4Plus, LoadControls,
                         ::testing::Values(isa::Generation::MARIANA, isa::Generation::MARIANA_PLUS,
                                           isa::Generation::MAVERICK),
                         [](const ::testing::TestParamInfo<isa::Generation>& i) {
                           return std::string(isa::name(i.param));
                         });

}  // namespace
