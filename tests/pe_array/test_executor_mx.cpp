// The MX path of the executor (spec 000 section 7; pevp/pe_array/mx.h): LdweightsMX / MatmulMX on v4 and the
// MXTENSOR_V2 member on v5, built as instructions and lowered by the firmware. The expected values come from an
// independent reference written here: the contraction row of every packed value by the documented formulas
// (D-MX-PUMP), each value decoded by the numerics library's generic decoder and scaled with std::ldexp (not the
// executor's table-times-scale product), then summed in fp32 in row order from +0.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "executor_test_util.h"
#include "pevp/isa/encode.h"
#include "pevp/isa/layout.h"
#include "pevp/pe_array/mx.h"

namespace {

using namespace pe_test;
using isa::MxPerfMode;

// ---- the reference ----------------------------------------------------------------------------------------------

bool nibbles(Dtype d) { return d == Dtype::FP4_EXP2 || d == Dtype::INT4; }
unsigned word_bytes(Dtype d) { return nibbles(d) ? 2 : 4; }
unsigned rows_per_partition(MxPerfMode m) { return m >= MxPerfMode::OCT_ROW ? 8 : 4; }

// The documented row of value i of partition p (k partitions): packed R*p + i; interleaved i*k + p; tiled per group
// of 8 partitions (fewer at the end), value-major.
std::size_t row_of(MxPerfMode mode, std::size_t p, unsigned i, std::size_t k) {
  const unsigned r = rows_per_partition(mode);
  switch (mode) {
    case MxPerfMode::QUAD_ROW_INTERLEAVE:
    case MxPerfMode::OCT_ROW_INTERLEAVE: return i * k + p;
    case MxPerfMode::QUAD_ROW_TILED:
    case MxPerfMode::OCT_ROW_TILED: {
      const std::size_t g0 = p - p % 8, size = std::min<std::size_t>(8, k - g0);
      return r * g0 + i * size + p % 8;
    }
    default: return r * p + i;
  }
}

float dequant(Dtype d, unsigned code, std::uint8_t scale) {
  if (scale == 0xFF) return std::nanf("");
  const float v = num::decode(*isa::element_format(Generation::MARIANA, d), code);
  return std::ldexp(v, static_cast<int>(scale) - 127);
}

// An MX operand as the test builds it: k partitions x `words` x4 words of codes, and the scales per group and word.
struct MxData {
  Dtype dtype = Dtype::FP8_EXP4;
  std::size_t k = 0, words = 0;
  std::vector<std::uint8_t> codes;   // [k][words][4], one code per value
  std::vector<std::uint8_t> scales;  // [ceil(k/8)][words]

  static MxData random(Dtype d, std::size_t k, std::size_t words, std::mt19937& rng, int scale_lo, int scale_hi) {
    MxData x{d, k, words, std::vector<std::uint8_t>(k * words * 4), std::vector<std::uint8_t>((k + 7) / 8 * words)};
    const unsigned mask = nibbles(d) ? 0xF : 0xFF;
    for (auto& c : x.codes) c = static_cast<std::uint8_t>(rng() & mask);
    std::uniform_int_distribution<int> s(scale_lo, scale_hi);
    for (auto& c : x.scales) c = static_cast<std::uint8_t>(s(rng));
    return x;
  }
  // The packed bytes of partition-major words (fp8: byte v = value v; fp4 / int4: nibble v, low nibble first).
  std::vector<std::uint8_t> packed() const {
    const unsigned wb = word_bytes(dtype);
    std::vector<std::uint8_t> b(k * words * wb, 0);
    for (std::size_t w = 0; w < k * words; ++w)
      for (unsigned v = 0; v < 4; ++v) {
        const std::uint8_t c = codes[w * 4 + v];
        if (nibbles(dtype))
          b[w * wb + v / 2] |= static_cast<std::uint8_t>(c << (4 * (v % 2)));
        else
          b[w * wb + v] = c;
      }
    return b;
  }
  // The logical [rows][columns] matrix: column c takes words c*W .. c*W + W-1 (W = R / 4).
  std::vector<float> logical(MxPerfMode mode) const {
    const unsigned r = rows_per_partition(mode), per = r / 4;
    const std::size_t cols = words / per;
    std::vector<float> out(k * r * cols);
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t c = 0; c < cols; ++c)
        for (unsigned w = 0; w < per; ++w)
          for (unsigned v = 0; v < 4; ++v) {
            const std::size_t e = c * per + w;
            out[row_of(mode, p, w * 4 + v, k) * cols + c] =
                dequant(dtype, codes[(p * words + e) * 4 + v], scales[p / 8 * words + e]);
          }
    return out;
  }
};

// out[m][n] = sum over rows of st[row][m] * mv[row][n], fp32, row order, from +0.
std::vector<float> reference(const std::vector<float>& st, const std::vector<float>& mv, std::size_t rows,
                             std::size_t m, std::size_t n) {
  std::vector<float> out(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      float s = 0.0f;
      for (std::size_t r = 0; r < rows; ++r) s = s + st[r * m + i] * mv[r * n + j];
      out[i * n + j] = s;
    }
  return out;
}

// ---- the instructions -------------------------------------------------------------------------------------------

struct Where {
  std::uint32_t data = 0, scales = 0;
  std::uint16_t words = 0;
};

void set_tile(isa::Encoder& e, Generation g, unsigned k, unsigned m) {
  e.set("num_active_rows", k).set("num_active_cols", m);
  if (isa::is_maverick(g))
    e.set("tile_size.row", isa::tile_size::R128).set("tile_size.col", isa::tile_size::C128);
  else
    e.set("row_grp", 0xF).set("col_grp", 0xF);
}

// The source fields: v4's MXMEM_PATTERN1D, or v5's MXTENSOR_V2 member (2-D: words as num_elem[0] x 1).
void set_source(isa::Encoder& e, Generation g, const Where& w, std::uint32_t index_addr = 0) {
  if (isa::is_maverick(g)) {
    e.set("src_mem_pattern.start_addr", w.data | isa::ADDR4MARKER_MXTENSOR_V2)
        .set("src_mem_pattern.scale_addr", w.scales)
        .set("src_mem_pattern.step_elem[0]", 1)
        .set("src_mem_pattern.num_elem[0]", w.words)
        .set("src_mem_pattern.num_elem[1]", 1);
  } else {
    e.set("src_mem_pattern.start_addr", w.data)
        .set("src_mem_pattern.scale_addr", w.scales)
        .set("src_mem_pattern.step_elem", 1)
        .set("src_mem_pattern.num_elem", w.words)
        .set("src_mem_pattern.index_addr", index_addr);
  }
}

isa::RawInstruction load_mx(Generation g, Dtype d, MxPerfMode mode, const Where& w, unsigned k, unsigned m,
                            std::uint32_t index_addr = 0) {
  isa::Encoder e(g, isa::is_maverick(g) ? isa::Opcode::LDWEIGHTS : isa::Opcode::LDWEIGHTS_MX);
  set_source(e, g, w, index_addr);
  e.set("in_dtype", static_cast<int>(d)).set("perf_mode", static_cast<int>(mode));
  set_tile(e, g, k, m);
  return e.bytes();
}

isa::RawInstruction matmul_mx(Generation g, Dtype d, MxPerfMode mode, const Where& w, unsigned k, unsigned m,
                              unsigned n, Dtype out = Dtype::FP32) {
  isa::Encoder e(g, isa::is_maverick(g) ? isa::Opcode::MATMUL : isa::Opcode::MATMUL_MX);
  set_source(e, g, w);
  e.set("in_dtype", static_cast<int>(d))
      .set("perf_mode", static_cast<int>(mode))
      .set("out_dtype", static_cast<int>(out))
      .set("dst_mem_pattern.start_addr", kPsum)
      .set("dst_mem_pattern.step_elem[0]", 1)
      .set("dst_mem_pattern.num_elem[0]", n)
      .set("dst_mem_pattern.num_elem[1]", 1)
      .set("dst_mem_pattern.num_elem[2]", 1);
  if (isa::is_maverick(g))
    e.set("flags.accumulate_flag", 0);
  else
    e.set("psum_accumulate_flags", pf::SINGLE);
  set_tile(e, g, k, m);
  return e.bytes();
}

struct Rig {
  Generation g;
  Mem mem;
  pe::ArrayExecutor ex;
  explicit Rig(Generation gen) : g(gen), mem(gen), ex(isa::preset_geometry(gen)) {}

  pe::ExecResult run(const isa::RawInstruction& raw) {
    const isa::Decoded d = isa::decode(g, raw);
    for (const auto& v : d.violations) ADD_FAILURE() << "test bug, invalid instruction: " << v.describe();
    const pe::MicroOp op = dec(g, raw);
    return op.kind == pe::MicroOpKind::WeightLoad
               ? ex.ldweights(op, mem.sbuf.data(), mem.sbuf.size())
               : ex.matmul(op, mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(), mem.psum.size());
  }
  void put(const MxData& x, const Where& w) {
    mem.put(w.data / mem.part(), w.data % mem.part(), x.packed(), x.k);
    mem.put(w.scales / mem.part(), w.scales % mem.part(), x.scales, (x.k + 7) / 8);
  }
  float psum_f32(std::size_t p, std::size_t j) const { return from_bits(psum_u32(mem, p, j * 4)); }
};

constexpr Where kStationary{0x0000, 0x4000, 0}, kMoving{0x8000, 0xC000, 0};

// ---- pure decode: hand-derived values --------------------------------------------------------------------------

TEST(MxDecode, PackingOfEveryPerfMode) {
  EXPECT_FALSE(pe::mx_packing(7).has_value());
  EXPECT_FALSE(pe::mx_packing(-1).has_value());
  const auto none = *pe::mx_packing(0), quad = *pe::mx_packing(1), oct_t = *pe::mx_packing(6);
  EXPECT_EQ(none.rows, 4u);
  EXPECT_EQ(none.passes(), 4u) << "NONE: the 4 packed rows one per cycle";
  EXPECT_EQ(quad.passes(), 1u);
  EXPECT_EQ(oct_t.rows, 8u);
  EXPECT_EQ(oct_t.words(), 2u);
  EXPECT_EQ(oct_t.order, pe::MxOrder::Tiled);
  EXPECT_EQ(pe::mx_word_bytes(Dtype::FP8_EXP5), 4u);
  EXPECT_EQ(pe::mx_word_bytes(Dtype::INT4), 2u);
  EXPECT_EQ(pe::mx_word_bytes(Dtype::BFLOAT16), 0u);
  EXPECT_NE(pe::mx_operand_error(Dtype::BFLOAT16).find("not an MX source dtype"), std::string::npos);
}

TEST(MxDecode, RowsOfTheThreeOrdersByHand) {
  // k = 20 partitions: groups of 8, 8 and 4.
  const auto quad = *pe::mx_packing(1), inter = *pe::mx_packing(2), tiled = *pe::mx_packing(3);
  EXPECT_EQ(pe::mx_row(quad, 17, 2, 20), 70u);   // 4 * 17 + 2
  EXPECT_EQ(pe::mx_row(inter, 17, 2, 20), 57u);  // 2 * 20 + 17
  EXPECT_EQ(pe::mx_row(tiled, 17, 2, 20), 73u);  // 4 * 16 + 2 * 4 + 1: the last group has 4 partitions
  EXPECT_EQ(pe::mx_row(tiled, 9, 3, 20), 57u);   // 4 * 8 + 3 * 8 + 1
  const auto oct_t = *pe::mx_packing(6);
  EXPECT_EQ(pe::mx_row(oct_t, 9, 7, 20), 121u);  // 8 * 8 + 7 * 8 + 1
}

TEST(MxDecode, ValuesNibblesAndScalesByHand) {
  // e4m3fn codes 0x38 = 1.0, 0x7E = 448, 0xB8 = -1.0, 0x00 = 0; scale 128 = 2, so 2, 896, -2, 0.
  const std::uint8_t fp8[4] = {0x38, 0x7E, 0xB8, 0x00};
  std::uint8_t scale = 128;
  std::vector<float> out(4);
  pe::MxOperand op{Generation::MARIANA, Dtype::FP8_EXP4, *pe::mx_packing(0), 1, 1, fp8, &scale};
  pe::decode_mx(op, out.data());
  EXPECT_EQ(out, (std::vector<float>{2.0f, 896.0f, -2.0f, 0.0f}));
  // fp4 e2m1 nibbles, low first: 0x2 = 1.0, 0x7 = 6.0, 0xF = -6.0, 0x1 = 0.5; scale 126 = 0.5.
  const std::uint8_t fp4[2] = {0x72, 0x1F};
  scale = 126;
  op = {Generation::MARIANA, Dtype::FP4_EXP2, *pe::mx_packing(0), 1, 1, fp4, &scale};
  pe::decode_mx(op, out.data());
  EXPECT_EQ(out, (std::vector<float>{0.5f, 3.0f, -3.0f, 0.25f}));
  // int4: 0x8 = -8, 0x7 = 7; scale 127 = 1.
  const std::uint8_t i4[2] = {0x78, 0x0F};
  scale = 127;
  op = {Generation::MARIANA, Dtype::INT4, *pe::mx_packing(0), 1, 1, i4, &scale};
  pe::decode_mx(op, out.data());
  EXPECT_EQ(out, (std::vector<float>{-8.0f, 7.0f, -1.0f, 0.0f}));
  // Scale 0xFF is NaN; 448 x 2^127 overflows fp32 to Inf; scale 0 (2^-127) times 1.0 is the subnormal 2^-127.
  scale = 0xFF;
  op = {Generation::MARIANA, Dtype::FP8_EXP4, *pe::mx_packing(0), 1, 1, fp8, &scale};
  pe::decode_mx(op, out.data());
  EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[3]));
  scale = 254;
  pe::decode_mx(op, out.data());
  EXPECT_EQ(out[1], INFINITY);
  EXPECT_EQ(out[0], std::ldexp(1.0f, 127));
  scale = 0;
  pe::decode_mx(op, out.data());
  EXPECT_EQ(out[0], std::ldexp(1.0f, -127));
}

// ---- end to end through instructions ---------------------------------------------------------------------------

struct ModeCase {
  Generation g;
  Dtype st, mv;
  MxPerfMode mode;
  unsigned k;
};

std::string case_name(const ::testing::TestParamInfo<ModeCase>& i) {
  const ModeCase& c = i.param;
  return std::string(isa::name(c.g)) + "_" + std::string(isa::name(c.st)) + "_" + std::string(isa::name(c.mv)) +
         "_" + std::string(isa::name(c.mode)) + "_k" + std::to_string(c.k);
}

class MxMatmul : public ::testing::TestWithParam<ModeCase> {};

TEST_P(MxMatmul, BitExactAgainstTheDequantizedReference) {
  const ModeCase& c = GetParam();
  Rig rig(c.g);
  std::mt19937 rng(static_cast<unsigned>(c.k * 131 + static_cast<unsigned>(c.mode) * 7 + static_cast<unsigned>(c.st)));
  constexpr unsigned M = 12, N = 10;
  const unsigned per = rows_per_partition(c.mode) / 4;
  // Scales within 2^-6 .. 2^6 keep every product finite, so the comparison sees the sums, not overflow.
  const MxData st = MxData::random(c.st, c.k, M * per, rng, 121, 133);
  const MxData mv = MxData::random(c.mv, c.k, N * per, rng, 121, 133);
  Where ws = kStationary, wm = kMoving;
  ws.words = static_cast<std::uint16_t>(M * per);
  wm.words = static_cast<std::uint16_t>(N * per);
  rig.put(st, ws);
  rig.put(mv, wm);
  expect_ok(rig.run(load_mx(c.g, c.st, c.mode, ws, c.k, M)));
  expect_ok(rig.run(matmul_mx(c.g, c.mv, c.mode, wm, c.k, M, N)));
  const std::size_t rows = std::size_t{c.k} * rows_per_partition(c.mode);
  const std::vector<float> want = reference(st.logical(c.mode), mv.logical(c.mode), rows, M, N);
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < N; ++j)
      ASSERT_EQ(bits(rig.psum_f32(i, j)), bits(canon(want[i * N + j]))) << "out[" << i << "][" << j << "]";
  const pe::ExecStats& s = rig.ex.last_stats();
  EXPECT_EQ(s.k, rows) << "logical contraction rows";
  EXPECT_EQ(s.macs, std::uint64_t{rows} * M * N);
}

std::vector<ModeCase> mode_cases() {
  std::vector<ModeCase> v;
  for (Generation g : {Generation::MARIANA, Generation::MAVERICK})
    for (int m = 0; m <= 6; ++m) v.push_back({g, Dtype::FP8_EXP4, Dtype::FP8_EXP4, static_cast<MxPerfMode>(m), 128});
  // Every MX dtype, mixed pairs, a ragged last scale group.
  const Dtype all[] = {Dtype::FP8_EXP2, Dtype::FP8_EXP3, Dtype::FP8_EXP4, Dtype::FP8_EXP5, Dtype::FP4_EXP2, Dtype::INT4};
  for (Dtype d : all) v.push_back({Generation::MARIANA_PLUS, d, d, MxPerfMode::QUAD_ROW, 64});
  v.push_back({Generation::MARIANA, Dtype::FP8_EXP4, Dtype::FP8_EXP5, MxPerfMode::QUAD_ROW, 128});
  v.push_back({Generation::MARIANA, Dtype::FP4_EXP2, Dtype::FP8_EXP4, MxPerfMode::OCT_ROW, 96});
  v.push_back({Generation::MARIANA, Dtype::INT4, Dtype::INT4, MxPerfMode::QUAD_ROW_TILED, 20});
  v.push_back({Generation::MAVERICK, Dtype::FP8_EXP5, Dtype::FP4_EXP2, MxPerfMode::OCT_ROW_TILED, 20});
  return v;
}

INSTANTIATE_TEST_SUITE_P(EveryModeAndDtype, MxMatmul, ::testing::ValuesIn(mode_cases()), case_name);

TEST(MxMatmulOutput, Bf16DrainRoundsTheFp32Sum) {
  Rig rig(Generation::MARIANA);
  std::mt19937 rng(5);
  constexpr unsigned K = 32, M = 8, N = 6;
  const MxData st = MxData::random(Dtype::FP8_EXP4, K, M, rng, 125, 129);
  const MxData mv = MxData::random(Dtype::FP8_EXP4, K, N, rng, 125, 129);
  Where ws = kStationary, wm = kMoving;
  ws.words = M;
  wm.words = N;
  rig.put(st, ws);
  rig.put(mv, wm);
  expect_ok(rig.run(load_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW, ws, K, M)));
  expect_ok(rig.run(matmul_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW, wm, K, M, N, Dtype::BFLOAT16)));
  const auto want = reference(st.logical(MxPerfMode::QUAD_ROW), mv.logical(MxPerfMode::QUAD_ROW), 4 * K, M, N);
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < N; ++j) {
      std::uint16_t h;
      std::memcpy(&h, &rig.mem.psum[i * kPsumPart + j * 2], 2);
      EXPECT_EQ(h, num::to_bf16(want[i * N + j])) << i << "," << j;
    }
}

TEST(MxMatmulOutput, AnIndexedSourceGathersItsWords) {
  // MXMEM_PATTERN1D with index_addr: word j of the source is word index[j] from the start (D-MX-INDEX); its scales
  // follow the gathered order.
  Rig rig(Generation::MARIANA);
  std::mt19937 rng(9);
  constexpr unsigned K = 16, M = 4, N = 3;
  const MxData st = MxData::random(Dtype::FP8_EXP4, K, M, rng, 126, 128);
  Where ws = kStationary;
  ws.words = M;
  rig.put(st, ws);
  // The stationary's words stored reversed at 0x2000; index = {3, 2, 1, 0} brings them back in order.
  MxData reversed = st;
  for (std::size_t p = 0; p < K; ++p)
    for (unsigned e = 0; e < M; ++e)
      std::memcpy(&reversed.codes[(p * M + e) * 4], &st.codes[(p * M + (M - 1 - e)) * 4], 4);
  rig.mem.put(0, 0x2000, reversed.packed(), K);
  const std::uint32_t index[M] = {3, 2, 1, 0};
  std::vector<std::uint8_t> ib(sizeof index);
  std::memcpy(ib.data(), index, sizeof index);
  rig.mem.put(0, 0x3000, ib, 1);
  Where gathered = ws;
  gathered.data = 0x2000;
  expect_ok(rig.run(load_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW, gathered, K, M, 0x3000)));
  const MxData mv = MxData::random(Dtype::FP8_EXP4, K, N, rng, 126, 128);
  Where wm = kMoving;
  wm.words = N;
  rig.put(mv, wm);
  expect_ok(rig.run(matmul_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW, wm, K, M, N)));
  const auto want = reference(st.logical(MxPerfMode::QUAD_ROW), mv.logical(MxPerfMode::QUAD_ROW), 4 * K, M, N);
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < N; ++j) EXPECT_EQ(bits(rig.psum_f32(i, j)), bits(want[i * N + j])) << i << "," << j;
}

// ---- errors: each refused with its rule, nothing written ----------------------------------------------------------

struct ErrorRig : Rig {
  ErrorRig() : Rig(Generation::MARIANA) {
    std::mt19937 rng(1);
    st = MxData::random(Dtype::FP8_EXP4, 32, 8, rng, 127, 127);
    Where w = kStationary;
    w.words = 8;
    put(st, w);
    mv = MxData::random(Dtype::FP8_EXP4, 32, 8, rng, 127, 127);
    w = kMoving;
    w.words = 8;
    put(mv, w);
  }
  MxData st, mv;
  void expect_refused(const isa::RawInstruction& raw, const std::string& rule, const std::string& text) {
    const std::vector<std::uint8_t> before = mem.psum;
    const std::size_t loaded = ex.stationary_count();
    const pe::ExecResult r = run(raw);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.rule, rule) << r.describe();
    EXPECT_NE(r.message.find(text), std::string::npos) << r.message;
    EXPECT_EQ(mem.psum, before) << "PSUM untouched";
    EXPECT_EQ(ex.stationary_count(), loaded) << "no stationary installed";
  }
};

TEST(MxErrors, ScalesThatLeaveSbufOrTheirPartition) {
  ErrorRig rig;
  Where w = kStationary;
  w.words = 8;
  // 4 groups (32 partitions) from partition 126 leave the 128 partitions.
  w.scales = rig.mem.addr(126, 0);
  rig.expect_refused(load_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW, w, 32, 8), "exec.mx_scales",
                     "partitions 126..129");
  // 8 scale bytes from 4 bytes before the partition's end leave it.
  w.scales = rig.mem.addr(0, rig.mem.part() - 4);
  rig.expect_refused(load_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW, w, 32, 8), "exec.mx_scales", "bytes");
}

TEST(MxErrors, OctRowNeedsWholeWordPairs) {
  ErrorRig rig;
  Where w = kStationary;
  w.words = 7;
  rig.expect_refused(load_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::OCT_ROW, w, 32, 4), "exec.pattern_count",
                     "takes 2 per column");
}

TEST(MxErrors, SourceAndStationaryMustAgree) {
  ErrorRig rig;
  Where ws = kStationary, wm = kMoving;
  ws.words = wm.words = 8;
  // An MX matmul on a dense stationary.
  expect_ok(rig.run(isa::encode_ldweights(rig.g, ldw({rig.g, Dtype::BFLOAT16, Fp32Mode::None}, 0x20000, 128, 128))));
  rig.expect_refused(matmul_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW, wm, 32, 8, 8), "exec.mx_mix",
                     "the matmul's source is MX, the tile's stationary was loaded dense");
  // A packing that maps rows differently (QUAD_ROW_INTERLEAVE after a QUAD_ROW load).
  expect_ok(rig.run(load_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW, ws, 32, 8)));
  rig.expect_refused(matmul_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW_INTERLEAVE, wm, 32, 8, 8), "exec.mx_mix",
                     "packs its rows differently");
  // Different K (num_active_rows).
  rig.expect_refused(matmul_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW, wm, 16, 8, 8), "exec.k_mismatch",
                     "MX: 4 rows per partition");
  // NONE and QUAD_ROW pack alike: only the pump differs, so they pair.
  expect_ok(rig.run(matmul_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::NONE, wm, 32, 8, 8)));
}

TEST(MxErrors, MicroOpsBuiltByHand) {
  // What no valid instruction lowers to, refused by the executor all the same.
  ErrorRig rig;
  Where w = kStationary;
  w.words = 8;
  pe::MicroOp op = dec(rig.g, load_mx(rig.g, Dtype::FP8_EXP4, MxPerfMode::QUAD_ROW, w, 32, 8));
  pe::MicroOp bad = op;
  bad.in_dtype = Dtype::BFLOAT16;
  bad.in_dtype_raw = static_cast<int>(Dtype::BFLOAT16);
  auto r = rig.ex.ldweights(bad, rig.mem.sbuf.data(), rig.mem.sbuf.size());
  EXPECT_EQ(r.rule, "exec.in_dtype") << r.describe();
  bad = op;
  bad.mx_mode = 7;
  r = rig.ex.ldweights(bad, rig.mem.sbuf.data(), rig.mem.sbuf.size());
  EXPECT_EQ(r.rule, "exec.mx_mix") << r.describe();
  bad = op;
  bad.fp32_mode = Fp32Mode::Low_High;
  r = rig.ex.ldweights(bad, rig.mem.sbuf.data(), rig.mem.sbuf.size());
  EXPECT_EQ(r.rule, "exec.mx_mix") << r.describe();
  bad = op;
  bad.double_row = true;
  r = rig.ex.ldweights(bad, rig.mem.sbuf.data(), rig.mem.sbuf.size());
  EXPECT_EQ(r.rule, "exec.mx_mix") << r.describe();
  // A dense micro-op with a perf mode.
  pe::MicroOp dense = dec(rig.g, isa::encode_ldweights(rig.g, ldw({rig.g, Dtype::BFLOAT16, Fp32Mode::None}, 0, 8, 8)));
  dense.mx_mode = 1;
  r = rig.ex.ldweights(dense, rig.mem.sbuf.data(), rig.mem.sbuf.size());
  EXPECT_EQ(r.rule, "exec.mx_mix") << r.describe();
  EXPECT_EQ(rig.ex.stationary_count(), 0u);
}

}  // namespace
