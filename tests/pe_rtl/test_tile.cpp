// Whole RTL tiles (models/pe_rtl, RtlTile): results bit-identical to pevp::pe::matmul_pass_reference on operands
// decoded by pevp::num's decoders, the load and stream cycle counts against the skewed array's formula
// (docs/cosim.md "The RTL PE tile"), the broken-rounding variant on a case it must get wrong, waveforms, and every
// refusal.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "pevp/numerics/convert.h"
#include "pevp/pe_array/compute.h"
#include "pevp/pe_rtl/rtl_tile.h"

namespace {

using pevp::pe_rtl::RtlTile;
using pevp::pe_rtl::TileDtype;
using pevp::pe_rtl::Variant;

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float value(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

float decode(TileDtype dt, std::uint16_t raw) {
  return dt == TileDtype::Bf16 ? pevp::num::from_bf16(raw) : pevp::num::from_fp16(raw);
}

bool has_size(Variant v, unsigned rows, unsigned cols) {
  for (const auto& s : pevp::pe_rtl::built_sizes(v))
    if (s.rows == rows && s.cols == cols) return true;
  return false;
}

// Elements with something to round: values of a few binades around 1 (sums of products then need more than 24
// bits), plus raw codes of every class (NaN, Inf, subnormals, huge and tiny values whose bf16 products under- or
// overflow fp32), +-0 and exact opposites.
std::uint16_t random_element(std::mt19937& rng, TileDtype dt) {
  const unsigned pick = rng() % 32;
  const std::uint16_t sign = static_cast<std::uint16_t>((rng() & 1u) << 15);
  if (pick == 0) return static_cast<std::uint16_t>(rng());  // any code
  if (pick == 1) return sign;                                 // +-0
  if (dt == TileDtype::Bf16) {
    if (pick == 2) return static_cast<std::uint16_t>(sign | 0x7F80);  // +-Inf
    if (pick == 3) return static_cast<std::uint16_t>(sign | (rng() % 0x80));  // subnormal
    if (pick == 4) return static_cast<std::uint16_t>(sign | ((rng() % 8 + 1) << 7) | (rng() % 0x80));  // tiny
    if (pick == 5) return static_cast<std::uint16_t>(sign | ((0xF0 + rng() % 15) << 7) | (rng() % 0x80));  // huge
    return static_cast<std::uint16_t>(sign | ((120 + rng() % 14) << 7) | (rng() % 0x80));
  }
  if (pick == 2) return static_cast<std::uint16_t>(sign | 0x7C00);
  if (pick == 3) return static_cast<std::uint16_t>(sign | (rng() % 0x400));
  return static_cast<std::uint16_t>(sign | ((10 + rng() % 12) << 10) | (rng() % 0x400));
}

std::uint32_t random_psum(std::mt19937& rng) {
  const unsigned pick = rng() % 16;
  if (pick == 0) return rng();
  if (pick == 1) return 0x80000000u;  // -0 stays -0 only when the sum is -0, which it never is: becomes +0
  if (pick == 2) return 0x7F800000u | (rng() & 0x80000000u);
  return bits(static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 64.0f);
}

struct Case {
  TileDtype dt;
  unsigned k, m, n;
  bool accumulate;
  bool in_place;  // psum_in == out
};

// Runs one case through `tile` and through matmul_pass_reference; every loaded column's words must be bit-identical
// and the other columns' words untouched. Also checks the cycle counts against the formula.
void check_case(RtlTile& tile, std::mt19937& rng, const Case& c) {
  const std::string where = "tile " + std::to_string(tile.rows()) + "x" + std::to_string(tile.cols()) + ", " +
                            (c.dt == TileDtype::Bf16 ? "bf16" : "fp16") + ", k " + std::to_string(c.k) + " m " +
                            std::to_string(c.m) + " n " + std::to_string(c.n) +
                            (c.accumulate ? ", accumulate" : ", overwrite") + (c.in_place ? " in place" : "");
  SCOPED_TRACE(where);
  std::vector<std::uint16_t> w(std::size_t{c.k} * c.m), x(std::size_t{c.k} * c.n);
  for (auto& e : w) e = random_element(rng, c.dt);
  for (auto& e : x) e = random_element(rng, c.dt);
  // The tile's output buffer has all its columns; those past m hold a sentinel the tile must not touch.
  const std::uint32_t sentinel = 0xDEADBEEFu;
  std::vector<std::uint32_t> psum(std::size_t{tile.cols()} * c.n, sentinel);
  for (std::size_t i = 0; i < std::size_t{c.m} * c.n; ++i) psum[i] = random_psum(rng);

  // The reference: decoded operands, the defined order.
  std::vector<float> ws(w.size()), xs(x.size()), expected(std::size_t{c.m} * c.n);
  for (std::size_t i = 0; i < w.size(); ++i) ws[i] = decode(c.dt, w[i]);
  for (std::size_t i = 0; i < x.size(); ++i) xs[i] = decode(c.dt, x[i]);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = value(psum[i]);
  pevp::pe::matmul_pass_reference(ws.data(), xs.data(), expected.data(), {c.k, c.m, c.n}, c.accumulate);

  const std::uint64_t before_load = tile.cycle();
  const std::uint64_t load_cycles = tile.load_stationary(c.dt, w.data(), c.k, c.m);
  // One stationary row per cycle; k = 0 still takes the one clearing cycle.
  EXPECT_EQ(load_cycles, std::max(c.k, 1u));
  EXPECT_EQ(tile.cycle() - before_load, load_cycles);

  std::vector<std::uint32_t> separate(psum.size(), sentinel);
  std::uint32_t* out = c.in_place ? psum.data() : separate.data();
  const std::uint64_t before_stream = tile.cycle();
  const auto timing = tile.stream(c.dt, x.data(), c.n, c.accumulate ? psum.data() : nullptr, c.accumulate, out);
  // Vector j enters at cycle j, its row leaves the array rows + cols - 1 cycles later once the bottom's deskew
  // has aligned it, one cycle for the PSUM read, one for the accumulate adder: written rows + cols + 1 cycles after
  // it entered; the last of n vectors, n - 1 cycles after the first. cycle() also counts the edge that samples the
  // last write.
  EXPECT_EQ(timing.first_result, std::uint64_t{tile.rows()} + tile.cols() + 1);
  EXPECT_EQ(timing.cycles, std::uint64_t{c.n} + tile.rows() + tile.cols());
  EXPECT_EQ(tile.cycle() - before_stream, timing.cycles + 1);

  for (unsigned m = 0; m < tile.cols(); ++m) {
    for (unsigned j = 0; j < c.n; ++j) {
      const std::size_t i = std::size_t{m} * c.n + j;
      if (m < c.m)
        ASSERT_EQ(out[i], bits(expected[i])) << "out[m " << m << "][j " << j << "]" << std::hex << " (0x" << out[i]
                                             << " != 0x" << bits(expected[i]) << ")";
      else
        ASSERT_EQ(out[i], sentinel) << "column " << m << " is not loaded but was written";
    }
  }
}

// Returns the cycles the tile ran.
std::uint64_t sweep(unsigned rows, unsigned cols, unsigned cases, std::uint32_t seed) {
  EXPECT_TRUE(has_size(Variant::Exact, rows, cols));
  RtlTile tile(rows, cols);
  EXPECT_EQ(tile.rows(), rows);
  EXPECT_EQ(tile.cols(), cols);
  std::mt19937 rng(seed);
  for (unsigned i = 0; i < cases; ++i) {
    Case c;
    c.dt = i % 2 == 0 ? TileDtype::Bf16 : TileDtype::Fp16;
    // The full tile every fourth case, partial counts otherwise (k = 0 included: sums of +0).
    c.k = i % 4 == 0 ? rows : static_cast<unsigned>(rng() % (rows + 1));
    c.m = i % 4 == 0 ? cols : 1 + static_cast<unsigned>(rng() % cols);
    c.n = i % 7 == 0 ? 1 : i % 7 == 1 ? 100 : 1 + static_cast<unsigned>(rng() % 100);
    c.accumulate = (i / 2) % 2 == 1;
    c.in_place = c.accumulate && i % 3 == 0;
    check_case(tile, rng, c);
    if (::testing::Test::HasFatalFailure()) break;
  }
  return tile.cycle();
}

TEST(PeRtlTile, FourByFourBitIdenticalToTheReference) {
  if (!pevp::pe_rtl::available()) GTEST_SKIP() << "built without Verilator: no RTL PE tile";
  sweep(4, 4, 120, 1);
}
TEST(PeRtlTile, ThreeByFiveBitIdenticalToTheReference) {
  if (!pevp::pe_rtl::available()) GTEST_SKIP() << "built without Verilator: no RTL PE tile";
  sweep(3, 5, 120, 2);
}

// The integration size; also reports the simulation speed.
TEST(PeRtlTile, ThirtyTwoBitIdenticalToTheReference) {
  if (!pevp::pe_rtl::available()) GTEST_SKIP() << "built without Verilator: no RTL PE tile";
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t cycles = sweep(32, 32, 24, 3);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Simulation speed (reference computation and checking included): cycles/s, and PE MACs/s at 32 x 32 per cycle.
  std::printf("32x32: %llu cycles in %.3f s: %.0f cycles/s, %.3g MACs/s\n", static_cast<unsigned long long>(cycles),
              seconds, cycles / seconds, cycles * 1024.0 / seconds);
}

// Products that only exist in one row: Inf * 0 in a loaded row is NaN (stored canonical), while rows past k_count,
// whose weights and inputs are +0, leave a finite sum alone; a -0 product sum becomes +0.
TEST(PeRtlTile, HandComputedSpecials) {
  if (!pevp::pe_rtl::available()) GTEST_SKIP() << "built without Verilator: no RTL PE tile";
  RtlTile tile(4, 4);
  // k = 2, m = 3 (bf16): column 0 = [Inf, 1], column 1 = [2, 3], column 2 = [-0, -1].
  const std::uint16_t w[] = {0x7F80, 0x4000, 0x8000,   //
                             0x3F80, 0x4040, 0xBF80};  //
  // n = 2: x[0] = [0, 1], x[1] = [5, 0].
  const std::uint16_t x[] = {0x0000, 0x3F80,   //
                             0x40A0, 0x0000};  //
  std::vector<std::uint32_t> out(4 * 2, 0xDEADBEEFu);
  tile.load_stationary(TileDtype::Bf16, w, 2, 3);
  tile.stream(TileDtype::Bf16, x, 2, nullptr, false, out.data());
  // column 0: j 0: Inf * 0 = NaN, + 1 * 5 stays NaN -> 0x7FC00000; j 1: Inf * 1 + 1 * 0 = Inf.
  EXPECT_EQ(out[0], 0x7FC00000u);
  EXPECT_EQ(out[1], 0x7F800000u);
  // column 1: j 0: 2 * 0 + 3 * 5 = 15 (0x41700000); j 1: 2 * 1 + 3 * 0 = 2.
  EXPECT_EQ(out[2], 0x41700000u);
  EXPECT_EQ(out[3], 0x40000000u);
  // column 2: j 0: +0 + (-0 * 0 = -0) = +0, + (-1 * 5) = -5 (0xC0A00000); j 1: +0 + -0 * 1 + -1 * 0 = +0.
  EXPECT_EQ(out[4], 0xC0A00000u);
  EXPECT_EQ(out[5], 0x00000000u);
  EXPECT_EQ(out[6], 0xDEADBEEFu);  // column 3 not loaded
  // Accumulate into PSUM: -0 + (+0) = +0 (the sum, never -0); 1 + 15 = 16 (0x41800000).
  std::vector<std::uint32_t> psum = {0x3F800000u, 0x3F800000u, 0x3F800000u, 0x80000000u,
                                     0x3F800000u, 0x80000000u, 0, 0};
  tile.stream(TileDtype::Bf16, x, 2, psum.data(), true, psum.data());
  EXPECT_EQ(psum[0], 0x7FC00000u);
  EXPECT_EQ(psum[1], 0x7F800000u);  // 1 + Inf
  EXPECT_EQ(psum[2], 0x41800000u);  // 1 + 15
  EXPECT_EQ(psum[3], 0x40000000u);  // -0 + 2
  EXPECT_EQ(psum[4], 0xC0800000u);  // 1 + -5 = -4
  EXPECT_EQ(psum[5], 0x00000000u);  // -0 + +0 = +0
}

// The defined order is the hardware's: the sums run down each column k = 0, 1, ..., in row order. With products
// 2^20, 1, -2^20 (bf16 weights 2^20, 1, -2^20 times ones) row order gives (2^20 + 1) - 2^20 = 1, exactly (2^20 + 1
// fits in 24 bits); with 2^24, 1, -2^24 it gives 2^24 + 1 -> 2^24 (a tie to even), minus 2^24 = 0, where summing
// the small term last would give 1.
TEST(PeRtlTile, SumsInRowOrder) {
  if (!pevp::pe_rtl::available()) GTEST_SKIP() << "built without Verilator: no RTL PE tile";
  RtlTile tile(3, 5);
  // bf16: 2^20 = 0x4980, 2^24 = 0x4B80, 1 = 0x3F80, the negatives with 0x8000.
  const std::uint16_t w[] = {0x4980, 0x4B80,   //
                             0x3F80, 0x3F80,   //
                             0xC980, 0xCB80};  //
  const std::uint16_t x[] = {0x3F80, 0x3F80, 0x3F80};
  std::uint32_t out[5 * 1] = {};
  tile.load_stationary(TileDtype::Bf16, w, 3, 2);
  tile.stream(TileDtype::Bf16, x, 1, nullptr, false, out);
  EXPECT_EQ(out[0], 0x3F800000u);
  EXPECT_EQ(out[1], 0x00000000u);
}

// The broken variant's adders truncate. Column 0 sums 1 * 1 + 1 * (1.5 * 2^-24) = 1 + 1.5 * 2^-24: more than half
// an ulp of 1.0 above it, so the exact tile rounds up to 1 + 2^-23 (0x3F800001) and the broken one truncates to
// 1.0 (0x3F800000). bf16 1.5 * 2^-24 = exponent 103 (0x67), mantissa 0x40: 0x33C0.
void check_broken_case(unsigned rows, unsigned cols) {
  const std::uint16_t w[] = {0x3F80, 0x3F80};
  const std::uint16_t x[] = {0x3F80, 0x33C0};
  std::vector<std::uint32_t> exact(cols), broken(cols);
  RtlTile good(rows, cols, Variant::Exact), bad(rows, cols, Variant::BrokenRounding);
  good.load_stationary(TileDtype::Bf16, w, 2, 1);
  bad.load_stationary(TileDtype::Bf16, w, 2, 1);
  good.stream(TileDtype::Bf16, x, 1, nullptr, false, exact.data());
  bad.stream(TileDtype::Bf16, x, 1, nullptr, false, broken.data());
  EXPECT_EQ(exact[0], 0x3F800001u);
  EXPECT_EQ(broken[0], 0x3F800000u);
  // A sum that needs no rounding is the same in both: 1 * 1 + 1 * 1 = 2.
  const std::uint16_t ones[] = {0x3F80, 0x3F80};
  good.stream(TileDtype::Bf16, ones, 1, nullptr, false, exact.data());
  bad.stream(TileDtype::Bf16, ones, 1, nullptr, false, broken.data());
  EXPECT_EQ(exact[0], 0x40000000u);
  EXPECT_EQ(broken[0], 0x40000000u);
}

TEST(PeRtlTile, BrokenRoundingVariantTruncates) {
  if (!pevp::pe_rtl::available()) GTEST_SKIP() << "built without Verilator: no RTL PE tile";
  for (const auto& s : pevp::pe_rtl::built_sizes(Variant::BrokenRounding)) {
    SCOPED_TRACE(std::to_string(s.rows) + "x" + std::to_string(s.cols));
    ASSERT_TRUE(has_size(Variant::Exact, s.rows, s.cols));
    check_broken_case(s.rows, s.cols);
  }
  EXPECT_TRUE(has_size(Variant::BrokenRounding, 32, 32));
}

TEST(PeRtlTile, BuiltSizesIncludeTheIntegrationSize) {
  if (!pevp::pe_rtl::available()) {
    EXPECT_TRUE(pevp::pe_rtl::built_sizes().empty());
    EXPECT_THROW(RtlTile(32, 32), std::invalid_argument);
    GTEST_SKIP() << "built without Verilator: no RTL PE tile";
  }
  EXPECT_TRUE(has_size(Variant::Exact, 32, 32));
  EXPECT_TRUE(has_size(Variant::Exact, 4, 4));
}

TEST(PeRtlTile, RefusesWhatItCannotDo) {
  if (!pevp::pe_rtl::available()) GTEST_SKIP() << "built without Verilator: no RTL PE tile";
  try {
    RtlTile tile(7, 9);
    FAIL() << "a 7x9 tile was not built";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("7x9"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("32x32"), std::string::npos) << e.what();  // names what was built
  }
  RtlTile tile(4, 4);
  const std::uint16_t w[20] = {};
  std::uint32_t out[16] = {};
  try {
    tile.load_stationary(TileDtype::Bf16, w, 5, 4);
    FAIL() << "k_count 5 > 4 rows";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("5x4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tile.load_stationary(TileDtype::Bf16, w, 4, 5), std::invalid_argument);
  EXPECT_THROW(tile.load_stationary(TileDtype::Bf16, nullptr, 2, 2), std::invalid_argument);
  EXPECT_THROW(tile.load_stationary(static_cast<TileDtype>(7), w, 2, 2), std::invalid_argument);
  EXPECT_EQ(tile.load_stationary(TileDtype::Bf16, w, 4, 4), 4u);
  EXPECT_THROW(tile.stream(TileDtype::Bf16, w, 4, nullptr, true, out), std::invalid_argument);  // accumulate
  EXPECT_THROW(tile.stream(TileDtype::Bf16, nullptr, 4, nullptr, false, out), std::invalid_argument);
  EXPECT_THROW(tile.stream(TileDtype::Bf16, w, 4, nullptr, false, nullptr), std::invalid_argument);
  // n = 0 streams nothing and takes no cycle.
  const std::uint64_t before = tile.cycle();
  const auto timing = tile.stream(TileDtype::Bf16, w, 0, nullptr, false, out);
  EXPECT_EQ(timing.cycles, 0u);
  EXPECT_EQ(tile.cycle(), before);
  // After every refusal the tile still computes: 4 rows of 1 * 1 (w and x of ones) = 4.
  std::uint16_t ones[16];
  for (auto& e : ones) e = 0x3F80;
  tile.load_stationary(TileDtype::Bf16, ones, 4, 4);
  tile.stream(TileDtype::Bf16, ones, 4, nullptr, false, out);
  for (unsigned i = 0; i < 16; ++i) EXPECT_EQ(out[i], 0x40800000u) << i;
}

// A waveform: an FST file (its header block, type 0, first) that grows while the tile runs; "" closes it; an
// unwritable path is refused with the path in the message.
TEST(PeRtlTile, WritesAnFstWaveform) {
  if (!pevp::pe_rtl::available()) GTEST_SKIP() << "built without Verilator: no RTL PE tile";
  const std::string path = ::testing::TempDir() + "pe_rtl_tile_wave.fst";
  std::remove(path.c_str());
  {
    RtlTile tile(4, 4);
    tile.trace(path);
    const std::uint16_t w[16] = {0x3F80};
    std::uint32_t out[16] = {};
    tile.load_stationary(TileDtype::Bf16, w, 4, 4);
    tile.stream(TileDtype::Bf16, w, 4, nullptr, false, out);
    tile.trace("");
    EXPECT_EQ(out[0], 0x3F800000u);
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path;
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 100u);
  EXPECT_EQ(bytes[0], 0);  // FST_BL_HDR
  std::remove(path.c_str());
  RtlTile tile(4, 4);
  try {
    tile.trace("/nonexistent-directory/wave.fst");
    FAIL() << "an unwritable waveform path was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-directory/wave.fst"), std::string::npos) << e.what();
  }
}

}  // namespace
