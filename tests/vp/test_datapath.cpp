// Driver-level datapath programs (issue 4 section 7): random operands written into SBUF over the bus, the arm
// sequence, instruction streams (GEMMs tiled over K with accumulate groups, eight PSUM banks open at once,
// parallel tiles with their own stationaries, transposed loads, strided patterns, zero regions), and all of PSUM
// read back and compared bit for bit with the independent reference of vp_test_util.h.
#include <gtest/gtest.h>

#include "vp_test_util.h"

namespace {

using namespace vpt;

platform::PlatformConfig config(Generation g) {
  platform::PlatformConfig c;
  c.gen = g;
  return c;
}
std::string gen_name(Generation g) { return std::string(isa::name(g)); }
unsigned seed_of(Generation g, DtypeCase c, unsigned salt = 0) {
  return 1000u * static_cast<unsigned>(g) + 10u * static_cast<unsigned>(c.dtype) + static_cast<unsigned>(c.mode) +
         salt;
}

void expect_clean(const platform::Completion& c, std::size_t instructions) {
  EXPECT_TRUE(c.done);
  EXPECT_FALSE(c.error);
  EXPECT_FALSE(c.timed_out);
  EXPECT_EQ(c.retired, instructions);
}

// ---- GEMM tiled over K, eight accumulate groups open at once ---------------------------------------------------
struct GemmParam {
  Generation g;
  DtypeCase c;
  bool out_bf16;
};
std::vector<GemmParam> gemm_params() {
  std::vector<GemmParam> v;
  for (Generation g : isa::kAllGenerations)
    for (DtypeCase c : dtype_cases(g)) v.push_back({g, c, false});
  for (Generation g : {Generation::MARIANA, Generation::MARIANA_PLUS, Generation::MAVERICK})
    for (DtypeCase c : {DtypeCase{Dtype::BFLOAT16, Fp32Mode::None}, DtypeCase{Dtype::FP8_EXP4, Fp32Mode::None},
                        DtypeCase{Dtype::FP32, Fp32Mode::Low_High}})
      v.push_back({g, c, true});
  return v;
}
std::string gemm_name(const ::testing::TestParamInfo<GemmParam>& i) {
  return gen_name(i.param.g) + "_" + case_name(i.param.c) + (i.param.out_bf16 ? "_outBF16" : "");
}

void PrintTo(const GemmParam& p, std::ostream* os) {
  *os << gen_name(p.g) << "_" << case_name(p.c) << (p.out_bf16 ? "_outBF16" : "");
}

class Gemm : public ::testing::TestWithParam<GemmParam> {};

// C[128 x 352] = sum over three k-tiles of A_kt[128 x 128].T @ B_kt[128 x 352], the 352 columns split over the
// eight PSUM banks (16, 24, ..., 72 columns). Per k-tile: one Ldweights, then one Matmul per bank -- MULTI_START on
// the first k-tile, MULTI_MID, MULTI_END on the last (MAVERICK: accumulate_flag 0, 1, 1) -- so all eight groups
// are open together and the stationary is replaced while the previous k-tile's matmuls may still be queued.
TEST_P(Gemm, KTiledGroupsInEightBanks) {
  const auto p = GetParam();
  const Generation g = p.g;
  platform::VirtualPlatform vp(config(g));
  const unsigned KT = 3, K = 128, M = 128, B = 8;
  std::vector<unsigned> n(B), col(B);
  unsigned total = 0;
  for (unsigned b = 0; b < B; ++b) {
    n[b] = 16 + 8 * b;
    col[b] = total;
    total += n[b];
  }
  const unsigned eb = elem_bytes(p.c.dtype);
  platform::Completion c;
  std::size_t count = 0;
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(seed_of(g, p.c, p.out_bf16));
    bench.garbage_psum(rng);
    std::vector<Step> steps;
    for (unsigned kt = 0; kt < KT; ++kt) {
      const unsigned st_off = kt * 0x200, mv_off = 0x1000 + kt * 0x800;
      bench.put_rows(0, st_off, random_elems(g, p.c, K * M, rng), K);
      bench.put_rows(0, mv_off, random_elems(g, p.c, std::size_t{K} * total, rng), K);
      steps.push_back(lw_step(g, ldw(p.c, bench.sbuf_addr(0, st_off), K, M)));
      const std::uint8_t flags = kt == 0 ? pf::MULTI_START : kt == KT - 1 ? pf::MULTI_END : pf::MULTI_MID;
      for (unsigned b = 0; b < B; ++b) {
        auto a = mmul(p.c, bench.sbuf_addr(0, mv_off + col[b] * eb), psum_addr(0, b * kBank + 16 * b), K, M, n[b],
                      flags);
        if (p.out_bf16) a.out_dtype = Dtype::BFLOAT16;
        steps.push_back(mm_step(g, a));
      }
    }
    count = steps.size();
    c = bench.run(steps);
    bench.expect_psum_matches("GEMM");
  });
  expect_clean(c, count);
  EXPECT_EQ(vp.platform().arr_seq.stats().faults, 0u);
}

INSTANTIATE_TEST_SUITE_P(AllGenerationsAndDtypes, Gemm, ::testing::ValuesIn(gemm_params()), gemm_name);

// ---- per-generation programs ---------------------------------------------------------------------------------
class PerGen : public ::testing::TestWithParam<Generation> {};
std::string per_gen_name(const ::testing::TestParamInfo<Generation>& i) { return gen_name(i.param); }

// Parallel tiles, each with its own stationary and dtype, their instructions interleaved, each accumulating into its
// own bank. v3/v4: four 32x128 row groups (K = 32 each), then 2x2 64x64 tiles that replace them; MAVERICK: the four
// r64 x c128 tiles of the 128 x 256 array (tile_sel row 0/1, col 0/1).
TEST_P(PerGen, ParallelTilesInterleaved) {
  const Generation g = GetParam();
  platform::VirtualPlatform vp(config(g));
  const DtypeCase types[4] = {{Dtype::BFLOAT16, Fp32Mode::None},
                              {Dtype::FP16, Fp32Mode::None},
                              {Dtype::FP8_EXP5, Fp32Mode::None},
                              {Dtype::FP32, Fp32Mode::High}};
  // Tile 2's moving operand is bf16 against its fp8 stationary: narrow dtypes may mix (spec 8).
  const DtypeCase moving_types[4] = {types[0], types[1], {Dtype::BFLOAT16, Fp32Mode::None}, types[3]};
  std::vector<platform::Completion> done;
  std::vector<std::size_t> counts;
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(77 + static_cast<unsigned>(g));
    bench.garbage_psum(rng);
    struct Tile {
      isa::Placement place;
      unsigned K, M, dst_partition;
    };
    std::vector<std::vector<Tile>> rounds;
    if (isa::is_maverick(g)) {
      rounds.push_back({{{0, 64, 0, 128}, 64, 128, 0},
                        {{64, 64, 0, 128}, 64, 96, 0},
                        {{0, 64, 128, 128}, 48, 128, 0},
                        {{64, 64, 128, 128}, 64, 64, 64}});
    } else {
      rounds.push_back({{{0, 32, 0, 128}, 32, 128, 0},
                        {{32, 32, 0, 128}, 32, 96, 0},
                        {{64, 32, 0, 128}, 24, 128, 0},
                        {{96, 32, 0, 128}, 32, 128, 0}});
      rounds.push_back({{{0, 64, 0, 64}, 64, 64, 0},
                        {{0, 64, 64, 64}, 64, 64, 64},
                        {{64, 64, 0, 64}, 48, 64, 0},
                        {{64, 64, 64, 64}, 64, 32, 64}});
    }
    unsigned round_no = 0;
    for (const auto& tiles : rounds) {
      std::vector<Step> steps;
      const unsigned N = 40;
      // All four stationaries first, then two matmuls per tile (START then END), interleaved across tiles.
      for (unsigned t = 0; t < 4; ++t) {
        const Tile& tl = tiles[t];
        const unsigned p0 = tl.place.row0;  // the tile's operands sit in the SBUF partitions of its rows
        bench.put_rows(p0, 0, random_elems(g, types[t], tl.K * tl.M, rng), tl.K);
        steps.push_back(lw_step(g, ldw(types[t], bench.sbuf_addr(p0, 0), tl.K, tl.M, tl.place)));
      }
      for (unsigned half = 0; half < 2; ++half)
        for (unsigned t = 0; t < 4; ++t) {
          const Tile& tl = tiles[t];
          const unsigned p0 = tl.place.row0, off = 0x800 + half * 0x400;
          bench.put_rows(p0, off, random_elems(g, moving_types[t], tl.K * N, rng), tl.K);
          const unsigned bank = round_no * 4 + t;
          auto a = mmul(moving_types[t], bench.sbuf_addr(p0, off), psum_addr(tl.dst_partition, bank * kBank), tl.K,
                        tl.M, N, half == 0 ? pf::MULTI_START : pf::MULTI_END, tl.place);
          steps.push_back(mm_step(g, a));
        }
      counts.push_back(steps.size());
      done.push_back(bench.run(steps));
      bench.expect_psum_matches("round " + std::to_string(round_no));
      d.clear_done();
      ++round_no;
    }
  });
  ASSERT_FALSE(done.empty());
  std::size_t total = 0;
  for (std::size_t i = 0; i < done.size(); ++i) {
    total += counts[i];
    expect_clean(done[i], total);
  }
}

// A transposed Ldweights (D-EXEC-XPOSE): the SBUF tile is [M partitions][K elements] and the stationary is its
// transpose. NaN payloads and Inf are mixed into the tile. The same tile pre-transposed and loaded plainly onto a
// second tile gives the same PSUM bits (both against the reference).
TEST_P(PerGen, TransposedLdweights) {
  const Generation g = GetParam();
  platform::VirtualPlatform vp(config(g));
  const DtypeCase c{Dtype::BFLOAT16, Fp32Mode::None};
  const unsigned K = 96, M = 64, N = 40;
  const isa::Placement t1 = isa::is_maverick(g) ? isa::Placement{0, 128, 0, 128} : isa::Placement{0, 128, 0, 64};
  const isa::Placement t2 = isa::is_maverick(g) ? isa::Placement{0, 128, 128, 128} : isa::Placement{0, 128, 64, 64};
  platform::Completion done;
  std::vector<std::uint8_t> bank0, bank1;
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(5 + static_cast<unsigned>(g));
    bench.garbage_psum(rng);
    auto tile = random_elems(g, c, std::size_t{M} * K, rng, 0.0);  // [M][K]
    const std::uint16_t specials[] = {0x7F81, 0xFFC3, 0x7F80, 0xFF80, 0x0001};
    for (int i = 0; i < 5; ++i) {
      const std::size_t e = static_cast<std::size_t>(i) * 997 + 13;
      tile[2 * e] = static_cast<std::uint8_t>(specials[i]);
      tile[2 * e + 1] = static_cast<std::uint8_t>(specials[i] >> 8);
    }
    std::vector<std::uint8_t> pre(tile.size());  // [K][M]
    for (unsigned m = 0; m < M; ++m)
      for (unsigned k = 0; k < K; ++k) std::memcpy(&pre[2 * (k * M + m)], &tile[2 * (m * K + k)], 2);
    bench.put_rows(0, 0, tile, M);
    bench.put_rows(0, 0x400, pre, K);
    bench.put_rows(0, 0x800, random_elems(g, c, std::size_t{K} * N, rng), K);
    auto lx = ldw(c, bench.sbuf_addr(0, 0), K, M, t1);
    lx.src = isa::Pattern::row(bench.sbuf_addr(0, 0), K);
    lx.xpose = true;
    const auto lp = ldw(c, bench.sbuf_addr(0, 0x400), K, M, t2);
    const auto m1 = mmul(c, bench.sbuf_addr(0, 0x800), psum_addr(0, 0), K, M, N, pf::SINGLE, t1);
    const auto m2 = mmul(c, bench.sbuf_addr(0, 0x800), psum_addr(0, kBank), K, M, N, pf::SINGLE, t2);
    done = bench.run({lw_step(g, lx), lw_step(g, lp), mm_step(g, m1), mm_step(g, m2)});
    bench.expect_psum_matches("transposed load");
    const auto got = bench.read_psum();
    for (unsigned m = 0; m < M; ++m) {
      bank0.insert(bank0.end(), &got[m * kPsumPart], &got[m * kPsumPart] + 4 * N);
      bank1.insert(bank1.end(), &got[m * kPsumPart + kBank], &got[m * kPsumPart + kBank] + 4 * N);
    }
  });
  expect_clean(done, 4);
  EXPECT_TRUE(bank0 == bank1) << "transposed load and pre-transposed load differ";
  // The canonical NaN shows up (the NaN payloads of the tile reach the output).
  bool canonical_nan = false;
  for (std::size_t i = 0; i + 4 <= bank0.size(); i += 4) {
    std::uint32_t u;
    std::memcpy(&u, &bank0[i], 4);
    if (u == kCanonicalNan) canonical_nan = true;
    if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu)) {
      EXPECT_EQ(u, kCanonicalNan);
    }
  }
  EXPECT_TRUE(canonical_nan);
}

// Strided source patterns (2-D, every other element), a reversed destination (negative step), a 3-D destination,
// and operands starting in the middle of SBUF (partitions 17 and 50) and of PSUM (partition 30).
TEST_P(PerGen, StridedAndReversedPatterns) {
  const Generation g = GetParam();
  platform::VirtualPlatform vp(config(g));
  const DtypeCase c{Dtype::FP16, Fp32Mode::None};
  const unsigned K = 64, M = 48;
  platform::Completion done;
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(31 + static_cast<unsigned>(g));
    bench.garbage_psum(rng);
    // Stationary: M elements at stride 3 inside a 3M-element row, partitions 50..113.
    bench.put_rows(50, 0x100, random_elems(g, c, std::size_t{K} * 3 * M, rng), K);
    auto l = ldw(c, bench.sbuf_addr(50, 0x100), K, M);
    l.src = isa::Pattern{bench.sbuf_addr(50, 0x100), {3}, {static_cast<std::uint16_t>(M)}};
    // Moving: partitions 17..80, 2-D: 3 runs of 16 elements, every other element, runs 40 elements apart.
    bench.put_rows(17, 0x1000, random_elems(g, c, std::size_t{K} * 160, rng), K);
    isa::MatmulArgs a = mmul(c, 0, 0, K, M, 48);
    a.src = isa::Pattern{bench.sbuf_addr(17, 0x1000), {2, 40}, {16, 3}};
    // dst: reversed inside bank 2 of partitions 30..77.
    a.dst = isa::Pattern{psum_addr(30, 2 * kBank + 4 * 47 + 64), {-1}, {48}};
    // A second matmul: 3-D destination (4 x 3 x 4 elements with gaps) in bank 6, accumulated onto a SINGLE.
    isa::MatmulArgs b = a;
    b.dst = isa::Pattern{psum_addr(30, 6 * kBank + 8), {1, 8, 32}, {4, 3, 4}};
    b.psum_flags = pf::MULTI_START;
    isa::MatmulArgs b2 = b;
    b2.psum_flags = pf::MULTI_END;
    done = bench.run({lw_step(g, l), mm_step(g, a), mm_step(g, b), mm_step(g, b2)});
    bench.expect_psum_matches("strided patterns");
  });
  expect_clean(done, 4);
}

// Exact bit patterns the defined order fixes (fp32 High, so nothing rounds at decode). Stationary columns
// m0 = (1e8, 1, -1e8), m1 = (2^27, -2^27, 0), m2 = (Inf, 0, 0), m3 = (Inf, Inf, 0), m4 = (0, 0, 0):
//   * 1e8 + 1 - 1e8 summed in k order is 0 (reassociation would give 1);
//   * PSUM takes part only in the final add: dst = 1, products 2^27 and -2^27 -> 1 (folding dst in gives 0);
//   * Inf * 0 and Inf - Inf store the canonical NaN 0x7FC00000, never x86's default NaN 0xFFC00000;
//   * a -0 in PSUM plus a zero sum stores +0 (the sum starts at +0).
TEST_P(PerGen, DefinedOrderExamples) {
  const Generation g = GetParam();
  platform::VirtualPlatform vp(config(g));
  const DtypeCase c{Dtype::FP32, Fp32Mode::High};
  const unsigned K = 3, M = 5;
  const float inf = std::numeric_limits<float>::infinity();
  const float st[K][M] = {{1e8f, 0x1p27f, inf, inf, 0.0f}, {1.0f, -0x1p27f, 0.0f, inf, 0.0f},
                          {-1e8f, 0.0f, 0.0f, 0.0f, 0.0f}};
  const float ones[K][1] = {{1.0f}, {1.0f}, {1.0f}};
  const float two[K][2] = {{0.0f, 1.0f}, {-1.0f, -1.0f}, {1.0f, 1.0f}};
  std::vector<std::uint32_t> acc_one(M), over0(M), over1(M), acc_negz(M);
  platform::Completion done;
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(9);
    bench.garbage_psum(rng);
    auto bytes = [](const void* p, std::size_t n) {
      std::vector<std::uint8_t> v(n);
      std::memcpy(v.data(), p, n);
      return v;
    };
    bench.put_rows(0, 0, bytes(st, sizeof st), K);
    bench.put_rows(0, 0x100, bytes(ones, sizeof ones), K);
    bench.put_rows(0, 0x200, bytes(two, sizeof two), K);
    for (unsigned m = 0; m < M; ++m) {
      bench.poke32(m, kBank, fbits(1.0f));
      bench.poke32(m, 2 * kBank, 0x80000000u);
    }
    // Accumulate onto what PSUM holds: BEGIN_ACCUM|END on v3/v4 (open without zeroing, close), accumulate_flag on v5.
    auto acc1 = mmul(c, bench.sbuf_addr(0, 0x100), psum_addr(0, kBank), K, M, 1,
                     pf::BEGIN_ACCUM_MATMUL_GROUP | pf::END_MATMUL_GROUP);
    acc1.accumulate = true;
    auto over = mmul(c, bench.sbuf_addr(0, 0x200), psum_addr(0, 3 * kBank), K, M, 2, pf::SINGLE);
    auto acc2 = acc1;
    acc2.src = isa::Pattern{bench.sbuf_addr(0, 0x200), {1}, {1}};
    acc2.dst = isa::Pattern::row(psum_addr(0, 2 * kBank), 1);
    done = bench.run({lw_step(g, ldw(c, 0, K, M)), mm_step(g, acc1), mm_step(g, over), mm_step(g, acc2)});
    bench.expect_psum_matches("defined order");
    for (unsigned m = 0; m < M; ++m) {
      acc_one[m] = d.read32(d.map().psum + m * kPsumPart + kBank);
      over0[m] = d.read32(d.map().psum + m * kPsumPart + 3 * kBank);
      over1[m] = d.read32(d.map().psum + m * kPsumPart + 3 * kBank + 4);
      acc_negz[m] = d.read32(d.map().psum + m * kPsumPart + 2 * kBank);
    }
  });
  expect_clean(done, 4);
  // Moving (1, 1, 1) accumulated onto 1.0:
  EXPECT_EQ(acc_one[0], fbits(1.0f)) << "1e8 + 1 - 1e8 must be 0 in k order";
  EXPECT_EQ(acc_one[1], fbits(1.0f)) << "PSUM joins only the final add";
  EXPECT_EQ(acc_one[2], 0x7F800000u);
  EXPECT_EQ(acc_one[3], 0x7F800000u);
  EXPECT_EQ(acc_one[4], fbits(1.0f));
  // Overwrite, moving column 0 = (0, -1, 1), column 1 = (1, -1, 1):
  EXPECT_EQ(over0[0], fbits(-1e8f));
  EXPECT_EQ(over0[2], kCanonicalNan) << "Inf * 0";
  EXPECT_EQ(over1[3], kCanonicalNan) << "Inf - Inf";
  EXPECT_EQ(over1[0], 0u) << "(1e8 - 1) - 1e8 rounds to +0";
  // Accumulate of moving (0, -1, 1) onto -0:
  EXPECT_EQ(acc_negz[4], 0x00000000u) << "-0 + (+0 sum) must store +0";
  EXPECT_EQ(acc_negz[1], fbits(0x1p27f));
}

// Raw random codes (NaN, Inf, subnormals) in both operands for every dtype of the generation: SINGLE matmuls
// into one bank after another, PSUM compared with the reference after each.
TEST_P(PerGen, RawCodesEveryDtype) {
  const Generation g = GetParam();
  platform::VirtualPlatform vp(config(g));
  const unsigned K = 64, M = 32, N = 24;
  std::size_t total = 0;
  platform::Completion last;
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(101 + static_cast<unsigned>(g));
    bench.garbage_psum(rng);
    unsigned i = 0;
    for (DtypeCase c : dtype_cases(g)) {
      SCOPED_TRACE(case_name(c));
      bench.put_rows(0, 0, random_elems(g, c, K * M, rng, 0.03), K);
      bench.put_rows(0, 0x400, random_elems(g, c, K * N, rng, 0.03), K);
      const auto a = mmul(c, bench.sbuf_addr(0, 0x400), psum_addr(32 * (i % 4), (i % 8) * kBank + 4 * i), K, M, N);
      last = bench.run({lw_step(g, ldw(c, 0, K, M)), mm_step(g, a)});
      total += 2;
      EXPECT_FALSE(last.error);
      bench.expect_psum_matches(case_name(c));
      d.clear_done();
      ++i;
    }
  });
  expect_clean(last, total);
}

INSTANTIATE_TEST_SUITE_P(Gen, PerGen, ::testing::ValuesIn(isa::kAllGenerations), per_gen_name);

// ---- PSUM group modes and zero regions (CAYMAN, MARIANA, MARIANA_PLUS) ------------------------------------
class Groups : public ::testing::TestWithParam<Generation> {};

// SINGLE with zero regions of 4 and 8 banks, BEGIN_ACCUM (open without zeroing) continued by MID and END,
// BEGIN_ACCUM|END, MULTI_START with a 2-bank region; on MARIANA also accumulate_flag against the group bits
// (BEGIN with accumulate = 1 zeroes and accumulates onto +0; MID with accumulate = 0 overwrites inside the group).
TEST_P(Groups, ZeroRegionsAndBeginAccum) {
  const Generation g = GetParam();
  platform::VirtualPlatform vp(config(g));
  const DtypeCase c{Dtype::BFLOAT16, Fp32Mode::None};
  const unsigned K = 64, M = 40, N = 20;
  const isa::Placement t{0, 64, 0, 64};
  platform::Completion done;
  std::size_t count = 0;
  vp.run([&](platform::Driver& d) {
    d.arm();
    Bench bench(d, g);
    std::mt19937 rng(55 + static_cast<unsigned>(g));
    bench.garbage_psum(rng);
    bench.put_rows(0, 0, random_elems(g, c, K * M, rng), K);
    for (unsigned i = 0; i < 8; ++i) bench.put_rows(0, 0x200 + 0x100 * i, random_elems(g, c, K * N, rng), K);
    auto mv = [&](unsigned i) { return bench.sbuf_addr(0, 0x200 + 0x100 * i); };
    std::vector<Step> s;
    s.push_back(lw_step(g, ldw(c, 0, K, M, t)));
    // SINGLE, zero region 4 banks: bank 5 of partitions 10..49 -> banks 4..7 of those partitions cleared.
    auto a = mmul(c, mv(0), psum_addr(10, 5 * kBank + 100 * 4), K, M, N, pf::SINGLE, t);
    a.zero_region = isa::ZeroRegion::BANKS_4;
    s.push_back(mm_step(g, a));
    // BEGIN_ACCUM onto that output (no zeroing), then MID, then END.
    for (std::uint8_t f : {pf::BEGIN_ACCUM_MATMUL_GROUP, pf::MULTI_MID, pf::MULTI_END}) {
      auto b = mmul(c, mv(1 + (f & 3)), psum_addr(10, 5 * kBank + 100 * 4), K, M, N, f, t);
      s.push_back(mm_step(g, b));
    }
    // BEGIN_ACCUM|END onto the PSUM garbage of bank 1 (one-shot accumulate).
    s.push_back(mm_step(g, mmul(c, mv(4), psum_addr(3, kBank + 8), K, M, N,
                                pf::BEGIN_ACCUM_MATMUL_GROUP | pf::END_MATMUL_GROUP, t)));
    // MULTI_START with a 2-bank zero region at bank 3 (clears banks 2..3), then MULTI_END.
    auto st2 = mmul(c, mv(5), psum_addr(60, 3 * kBank + 40), K, M, N, pf::MULTI_START, t);
    st2.zero_region = isa::ZeroRegion::BANKS_2;
    s.push_back(mm_step(g, st2));
    s.push_back(mm_step(g, mmul(c, mv(6), psum_addr(60, 3 * kBank + 40), K, M, N, pf::MULTI_END, t)));
    if (g != Generation::CAYMAN) {
      // BEGIN with accumulate_flag = 1: zero, then accumulate onto +0.
      auto z = mmul(c, mv(7), psum_addr(70, 0), K, M, N, pf::MULTI_START, t);
      z.accumulate = true;
      s.push_back(mm_step(g, z));
      // MID with accumulate_flag = 0: overwrite inside the open group.
      auto o = mmul(c, mv(2), psum_addr(70, 0), K, M, N, pf::MULTI_MID, t);
      o.accumulate = false;
      s.push_back(mm_step(g, o));
      s.push_back(mm_step(g, mmul(c, mv(3), psum_addr(70, 0), K, M, N, pf::MULTI_END, t)));
    }
    // Last: SINGLE with an 8-bank zero region: the whole 16 KiB of partitions 80..119 except the output.
    auto all = mmul(c, mv(0), psum_addr(80, 7 * kBank + 12), K, M, N, pf::SINGLE, t);
    all.zero_region = isa::ZeroRegion::BANKS_8;
    s.push_back(mm_step(g, all));
    count = s.size();
    done = bench.run(s);
    bench.expect_psum_matches("groups");
  });
  expect_clean(done, count);
}

INSTANTIATE_TEST_SUITE_P(GroupGenerations, Groups,
                         ::testing::Values(Generation::CAYMAN, Generation::MARIANA, Generation::MARIANA_PLUS),
                         per_gen_name);

}  // namespace
