// Structured sparsity on the executor (spec 000 section 9; pevp/pe_array/sparse.h): LdTags, Ldweights tag_weight_mode
// TAG_WEIGHT and MatmulSparse, built as instructions and lowered by the firmware, on every generation. The expected
// values come from an independent reference written here: a dense bf16 operand is pruned N:M along K on the test's
// side (the N largest magnitudes of every M rows, ties to the lower row), and the result is the plain dense sum of
// the pruned operand in row order from +0 -- zeros included -- so the sparse path must reproduce the defined dense
// order bit for bit. The tags, the packing and the moving layout are derived here from the documented formulas
// (D-SPARSE-TAGS, D-SPARSE-SELECT, D-SPARSE-ORDER), not from the library's helpers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "executor_test_util.h"
#include "pevp/isa/encode.h"
#include "pevp/isa/layout.h"
#include "pevp/pe_array/sparse.h"

namespace {

using namespace pe_test;

constexpr unsigned kGroupRows = 32;  // the presets' row groups: 128 rows / 4
constexpr unsigned kRowGroups = 4;

// ---- the instructions -------------------------------------------------------------------------------------------

// The whole 128 x 128 tile (MAVERICK: R128 x C128 at tile_sel 0), or one row group `rg` of it.
void set_tile(isa::Encoder& e, Generation g, unsigned k, unsigned m, int rg = -1) {
  e.set("num_active_rows", k).set("num_active_cols", m);
  if (isa::is_maverick(g))
    e.set("tile_size.row", isa::tile_size::R128).set("tile_size.col", isa::tile_size::C128);
  else
    e.set("row_grp", rg < 0 ? 0xF : 1 << rg).set("col_grp", 0xF);
}

void set_row(isa::Encoder& e, const char* pat, std::uint32_t addr, unsigned n) {
  const std::string p(pat);
  e.set(p + ".start_addr", addr).set(p + ".step_elem[0]", 1).set(p + ".num_elem[0]", n);
  e.set(p + ".num_elem[1]", 1).set(p + ".num_elem[2]", 1);
}

isa::RawInstruction ldtags(Generation g, std::uint32_t addr, unsigned k, unsigned m, unsigned force = 0, int rg = -1) {
  isa::Encoder e(g, isa::Opcode::LDTAGS);
  set_row(e, "src_mem_pattern", addr, (m + 3) / 4);
  e.set("in_dtype", static_cast<int>(Dtype::UINT16)).set("force_tag_bits", force);
  set_tile(e, g, k, m, rg);
  return e.bytes();
}

isa::RawInstruction ldweights(Generation g, Dtype d, std::uint32_t addr, unsigned k, unsigned m, bool tagged,
                              int rg = -1) {
  isa::Encoder e(g, isa::Opcode::LDWEIGHTS);
  set_row(e, "src_mem_pattern", addr, m);
  e.set("in_dtype", static_cast<int>(d)).set("tag_weight_mode", tagged ? 1 : 0);
  set_tile(e, g, k, m, rg);
  return e.bytes();
}

isa::RawInstruction matmul_sparse(Generation g, Dtype d, std::uint32_t addr, unsigned fmaps, unsigned n, unsigned k,
                                  unsigned m, int rg = -1) {
  isa::Encoder e(g, isa::Opcode::MATMUL_SPARSE);
  set_row(e, "src_mem_pattern", addr, n);
  e.set("src_mem_pattern.step_elem[3]", n).set("src_mem_pattern.num_elem[3]", fmaps);
  set_row(e, "dst_mem_pattern", kPsum, n);
  e.set("in_dtype", static_cast<int>(d));
  e.set("psum_accumulate_flags", pf::SINGLE);  // S4D3_MM keeps the group flags on every generation (D-LAYOUT)
  if (isa::is_v4_plus(g)) e.set("flags.accumulate_flag", 0);
  set_tile(e, g, k, m, rg);
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
    return run(dec(g, raw));
  }
  pe::ExecResult run(const pe::MicroOp& op) {
    return op.kind == pe::MicroOpKind::WeightLoad
               ? ex.ldweights(op, mem.sbuf.data(), mem.sbuf.size())
               : ex.matmul(op, mem.sbuf.data(), mem.sbuf.size(), mem.psum.data(), mem.psum.size());
  }
  float psum_f32(std::size_t p, std::size_t j) const { return from_bits(psum_u32(mem, p, j * 4)); }
};

std::vector<std::uint8_t> u16_bytes(const std::vector<std::uint16_t>& v) {
  std::vector<std::uint8_t> b(v.size() * 2);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// ---- the reference: N:M pruning on the dense operand and the dense sum ------------------------------------------

struct Pattern {
  unsigned n, m;  // N kept of every M
  unsigned fmaps;  // F: the model's 4 kept of every 4F rows (D-SPARSE-SELECT)
};
// Every published pattern on the fmap count that carries it (4:4F natively; the others as subsets of it).
constexpr Pattern kPatterns[] = {{4, 16, 4}, {4, 12, 3}, {4, 8, 2}, {2, 8, 4}, {2, 4, 2}, {1, 4, 4}, {1, 2, 2}};

std::uint16_t random_bf16(std::mt19937& rng) {
  std::uniform_real_distribution<float> v(-4.0f, 4.0f);
  return num::to_bf16(v(rng));
}

// A K x M bf16 stationary pruned N:M along K (per column: the N largest |w| of each M rows, ties to the lower row).
std::vector<std::uint16_t> pruned(std::size_t K, std::size_t M, const Pattern& p, std::mt19937& rng) {
  std::vector<std::uint16_t> w(K * M);
  for (auto& x : w) x = random_bf16(rng);
  for (std::size_t c = 0; c < M; ++c)
    for (std::size_t g0 = 0; g0 < K; g0 += p.m) {
      std::vector<std::size_t> rows(p.m);
      std::iota(rows.begin(), rows.end(), g0);
      std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
        return std::fabs(num::from_bf16(w[a * M + c])) > std::fabs(num::from_bf16(w[b * M + c]));
      });
      for (std::size_t i = p.n; i < p.m; ++i) w[rows[i] * M + c] = 0;
    }
  return w;
}

// The dense defined order on the pruned operand: out[c][j] = sum_d w[d][c] * x[d][j], d = 0..K-1, from +0.
std::vector<float> dense_reference(const std::vector<std::uint16_t>& w, const std::vector<std::uint16_t>& x,
                                   std::size_t K, std::size_t M, std::size_t N) {
  std::vector<float> out(M * N);
  for (std::size_t c = 0; c < M; ++c)
    for (std::size_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (std::size_t d = 0; d < K; ++d) s = s + num::from_bf16(w[d * M + c]) * num::from_bf16(x[d * N + j]);
      out[c * N + j] = s;
    }
  return out;
}

// The sparse operands of a full 128-row tile: dense row d = q * 4F + g * F + f is fmap f of PE row g * 32 + q; the
// kept rows of each 4F block go, in row order, to the block's PE rows q, 32 + q, 64 + q, 96 + q with tag
// (row group << 2) | fmap.
struct Compressed {
  std::vector<std::uint16_t> values;  // [128][M]
  std::vector<std::uint8_t> tags;     // [128][M]
  std::vector<std::uint16_t> moving;  // [128][F][N]
};

Compressed compress(const std::vector<std::uint16_t>& w, const std::vector<std::uint16_t>& x, std::size_t M,
                    std::size_t N, unsigned F) {
  const std::size_t rows = kGroupRows * kRowGroups, block = kRowGroups * F;
  Compressed c{std::vector<std::uint16_t>(rows * M), std::vector<std::uint8_t>(rows * M),
               std::vector<std::uint16_t>(rows * F * N)};
  for (std::size_t q = 0; q < kGroupRows; ++q) {
    for (std::size_t g = 0; g < kRowGroups; ++g)
      for (std::size_t f = 0; f < F; ++f)
        for (std::size_t j = 0; j < N; ++j)
          c.moving[((g * kGroupRows + q) * F + f) * N + j] = x[(q * block + g * F + f) * N + j];
    for (std::size_t col = 0; col < M; ++col) {
      std::size_t slot = 0;
      for (std::size_t pos = 0; pos < block; ++pos) {
        const std::uint16_t v = w[(q * block + pos) * M + col];
        if (v == 0) continue;
        const std::size_t cell = slot++ * kGroupRows + q;
        c.values[cell * M + col] = v;
        c.tags[cell * M + col] = static_cast<std::uint8_t>((pos / F) << 2 | pos % F);
      }
      EXPECT_LE(slot, kRowGroups) << "more than 4 kept in a block: the pattern does not fit F = " << F;
    }
  }
  return c;
}

// Packs [k][m] tags four per u16: nibble i of a row (word i / 4, from the LSB) is column m - 1 - i.
std::vector<std::uint16_t> pack_tags(const std::vector<std::uint8_t>& tags, std::size_t k, std::size_t m) {
  const std::size_t words = (m + 3) / 4;
  std::vector<std::uint16_t> out(k * words, 0);
  for (std::size_t p = 0; p < k; ++p)
    for (std::size_t i = 0; i < m; ++i)
      out[p * words + i / 4] |= static_cast<std::uint16_t>(tags[p * m + (m - 1 - i)] << (4 * (i % 4)));
  return out;
}

constexpr std::uint32_t kWeights = 0x0000, kTags = 0x2000, kMoving = 0x4000;

// Runs one pattern end to end (tags by LdTags or by TAG_WEIGHT) and compares every output bit.
void run_pattern(Generation g, const Pattern& p, bool tag_weight, unsigned seed) {
  SCOPED_TRACE(std::string(isa::name(g)) + " " + std::to_string(p.n) + ":" + std::to_string(p.m) +
               (tag_weight ? " TAG_WEIGHT" : " LdTags"));
  constexpr std::size_t k = 128, M = 128, N = 24;
  const std::size_t K = k * p.fmaps;
  std::mt19937 rng(seed);
  const auto w = pruned(K, M, p, rng);
  std::vector<std::uint16_t> x(K * N);
  for (auto& v : x) v = random_bf16(rng);
  const Compressed c = compress(w, x, M, N, p.fmaps);
  Rig rig(g);
  if (tag_weight) {
    std::vector<std::uint16_t> pairs(k * M * 2);
    for (std::size_t i = 0; i < k * M; ++i) pairs[2 * i] = c.values[i], pairs[2 * i + 1] = c.tags[i];
    rig.mem.put(0, kWeights, u16_bytes(pairs), k);
    expect_ok(rig.run(ldweights(g, Dtype::BFLOAT16, kWeights, k, M, true)));
  } else {
    rig.mem.put(0, kWeights, u16_bytes(c.values), k);
    rig.mem.put(0, kTags, u16_bytes(pack_tags(c.tags, k, M)), k);
    expect_ok(rig.run(ldweights(g, Dtype::BFLOAT16, kWeights, k, M, false)));
    expect_ok(rig.run(ldtags(g, kTags, k, M)));
  }
  rig.mem.put(0, kMoving, u16_bytes(c.moving), k);
  expect_ok(rig.run(matmul_sparse(g, Dtype::BFLOAT16, kMoving, p.fmaps, N, k, M)));
  const auto want = dense_reference(w, x, K, M, N);
  unsigned bad = 0;
  for (std::size_t col = 0; col < M; ++col)
    for (std::size_t j = 0; j < N; ++j)
      if (bits(rig.psum_f32(col, j)) != bits(want[col * N + j]) && bad++ < 5)
        ADD_FAILURE() << "out[" << col << "][" << j << "] = " << rig.psum_f32(col, j) << ", reference "
                      << want[col * N + j];
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(rig.ex.last_stats().macs, std::uint64_t{k} * M * N) << "MACs count the kept products";
}

constexpr Generation kGens[] = {Generation::CAYMAN, Generation::MARIANA, Generation::MARIANA_PLUS,
                                Generation::MAVERICK};

// ---- the tags by hand -------------------------------------------------------------------------------------------

TEST(SparseTags, UnpackReversesTheRowAndOrsForce) {
  // Nibbles 1..8 from the LSB of word 0 on: nibble i is column 7 - i.
  const std::uint16_t words[] = {0x4321, 0x8765};
  std::uint8_t row[8];
  pe::unpack_tag_row(words, 8, 0, row);
  EXPECT_EQ(std::vector<int>(row, row + 8), (std::vector<int>{8, 7, 6, 5, 4, 3, 2, 1}));
  pe::unpack_tag_row(words, 8, 0x4, row);
  EXPECT_EQ(std::vector<int>(row, row + 8), (std::vector<int>{12, 7, 6, 5, 4, 7, 6, 5}));
  // Six columns: the last word's two high nibbles are ignored.
  const std::uint16_t six[] = {0x3210, 0xFF54};
  pe::unpack_tag_row(six, 6, 0, row);
  EXPECT_EQ(std::vector<int>(row, row + 6), (std::vector<int>{5, 4, 3, 2, 1, 0}));
  EXPECT_TRUE(pe::valid_force_tag_bits(0xC));
  EXPECT_FALSE(pe::valid_force_tag_bits(0x2));
  EXPECT_FALSE(pe::valid_force_tag_bits(0x10));
}

TEST(SparseTags, LdTagsPackingAndForceOnEveryGeneration) {
  for (Generation g : kGens) {
    SCOPED_TRACE(isa::name(g));
    Rig rig(g);
    // Partition 0: 0x4321 0x8765 (columns 7..0 = 1..8); partition 1: all zero, forced to 0x8.
    rig.mem.put(0, kTags, u16_bytes({0x4321, 0x8765}), 1);
    rig.mem.put(1, kTags, u16_bytes({0, 0}), 1);
    expect_ok(rig.run(ldtags(g, kTags, 2, 8, 0x8)));
    const isa::TileRect tile = dec(g, ldtags(g, kTags, 2, 8, 0x8)).tile;
    const pe::TagTile* t = rig.ex.tags(tile);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(std::vector<int>(t->tags.begin(), t->tags.begin() + 8),
              (std::vector<int>{8, 15, 14, 13, 12, 11, 10, 9}));
    EXPECT_EQ(std::vector<int>(t->tags.begin() + 8, t->tags.end()), std::vector<int>(8, 8));
    EXPECT_EQ(rig.ex.last_stats().elements_loaded, 16u);
  }
}

// force_tag_bits names the row group: 2-bit tags on row group 2's tile select their own rows' fmaps only when 0x8
// is forced in; without it they name row group 0, which the tile does not have.
TEST(SparseTags, ForceTagBitsSelectTheRowGroup) {
  const Generation g = Generation::MARIANA;
  constexpr unsigned k = kGroupRows, M = 32, N = 8, F = 2;
  std::mt19937 rng(3);
  std::vector<std::uint16_t> w(k * M), x(k * F * N);
  std::vector<std::uint8_t> sel(k * M);
  for (auto& v : w) v = random_bf16(rng);
  for (auto& v : x) v = random_bf16(rng);
  for (auto& v : sel) v = static_cast<std::uint8_t>(rng() % F);
  Rig rig(g);
  const std::uint32_t base = 64 * rig.mem.part();  // partitions 64..95: row group 2
  rig.mem.put(64, kWeights, u16_bytes(w), k);
  rig.mem.put(64, kTags, u16_bytes(pack_tags(sel, k, M)), k);
  rig.mem.put(64, kMoving, u16_bytes(x), k);
  expect_ok(rig.run(ldweights(g, Dtype::BFLOAT16, base + kWeights, k, M, false, 2)));
  expect_ok(rig.run(ldtags(g, base + kTags, k, M, 0x0, 2)));
  const pe::ExecResult wrong = rig.run(matmul_sparse(g, Dtype::BFLOAT16, base + kMoving, F, N, k, M, 2));
  EXPECT_EQ(wrong.rule, "exec.sparse_tag") << wrong.describe();
  EXPECT_NE(wrong.message.find("row group 0"), std::string::npos) << wrong.message;
  expect_ok(rig.run(ldtags(g, base + kTags, k, M, 0x8, 2)));
  expect_ok(rig.run(matmul_sparse(g, Dtype::BFLOAT16, base + kMoving, F, N, k, M, 2)));
  // Each cell's own row: dense rows p * F + f in partition order.
  for (std::size_t c = 0; c < M; ++c)
    for (std::size_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (std::size_t p = 0; p < k; ++p)
        s = s + num::from_bf16(w[p * M + c]) * num::from_bf16(x[(p * F + sel[p * M + c]) * N + j]);
      EXPECT_EQ(bits(rig.psum_f32(c, j)), bits(s)) << c << "," << j;
    }
}

// ---- every published pattern, every fmap count, every generation, both tag paths ----------------------------------

TEST(SparseMatmul, EveryPatternMatchesTheDenseReferenceOnEveryGeneration) {
  unsigned seed = 100;
  for (Generation g : kGens)
    for (const Pattern& p : kPatterns) run_pattern(g, p, false, seed++);
}

TEST(SparseMatmul, TagWeightModeMatchesTheDenseReference) {
  unsigned seed = 200;
  for (Generation g : kGens)
    for (const Pattern& p : kPatterns) run_pattern(g, p, true, seed++);
}

// Two cells selecting one fmap are both summed, the lower PE row first; FP16 weights through TAG_WEIGHT.
TEST(SparseMatmul, CellsSharingAnFmapAndFp16) {
  const Generation g = Generation::CAYMAN;
  constexpr unsigned k = 64, M = 4, N = 4, F = 3;  // rows 0..63: row groups 0 and 1
  Rig rig(g);
  std::vector<std::uint16_t> pairs(k * M * 2), x(k * F * N);
  std::mt19937 rng(9);
  for (auto& v : x) v = random_bf16(rng);
  for (std::size_t p = 0; p < k; ++p)
    for (std::size_t c = 0; c < M; ++c) {
      pairs[2 * (p * M + c)] = num::to_fp16(0.25f * static_cast<float>(p % 7 + c));
      const unsigned group = p % kGroupRows == 0 ? 0 : p / kGroupRows;  // q = 0: PE row 32 reads row group 0 too
      pairs[2 * (p * M + c) + 1] = static_cast<std::uint16_t>(group << 2 | c % F);
    }
  rig.mem.put(0, kWeights, u16_bytes(pairs), k);
  rig.mem.put(0, kMoving, u16_bytes(x), k);
  expect_ok(rig.run(ldweights(g, Dtype::FP16, kWeights, k, M, true, -1)));
  expect_ok(rig.run(matmul_sparse(g, Dtype::BFLOAT16, kMoving, F, N, k, M)));
  // PE row 32 (row group 1, q = 0) selects row group 0 like PE row 0: both read partition 0's fmap.
  for (std::size_t c = 0; c < M; ++c)
    for (std::size_t j = 0; j < N; ++j) {
      // Order: q ascending, then the selected (row group, fmap), ties by cell row.
      struct T { std::size_t key, cell, src; };
      std::vector<T> terms;
      for (std::size_t cell = 0; cell < k; ++cell) {
        const unsigned tag = pairs[2 * (cell * M + c) + 1];
        const std::size_t src = (tag >> 2) * kGroupRows + cell % kGroupRows, f = tag & 3;
        terms.push_back({(src % kGroupRows) * 2 * F + (src / kGroupRows) * F + f, cell, src * F + f});
      }
      std::stable_sort(terms.begin(), terms.end(), [](const T& a, const T& b) { return a.key < b.key; });
      float s = 0.0f;
      for (const T& t : terms)
        s = s + num::decode(num::Format::FP16, pairs[2 * (t.cell * M + c)]) * num::from_bf16(x[t.src * N + j]);
      EXPECT_EQ(bits(rig.psum_f32(c, j)), bits(s)) << c << "," << j;
    }
}

// ---- the rules -----------------------------------------------------------------------------------------------------

TEST(SparseRules, MatmulSparseWithoutTags) {
  Rig rig(Generation::MARIANA);
  expect_ok(rig.run(ldweights(rig.g, Dtype::BFLOAT16, kWeights, 128, 128, false)));
  const auto r = rig.run(matmul_sparse(rig.g, Dtype::BFLOAT16, kMoving, 2, 8, 128, 128));
  EXPECT_EQ(r.rule, "exec.sparse_no_tags") << r.describe();
  // Tags of another shape on the tile are no tags for it.
  expect_ok(rig.run(ldtags(rig.g, kTags, 64, 128)));
  EXPECT_EQ(rig.run(matmul_sparse(rig.g, Dtype::BFLOAT16, kMoving, 2, 8, 128, 128)).rule, "exec.sparse_no_tags");
}

TEST(SparseRules, TagSelectingAnFmapTheMatmulDoesNotSend) {
  Rig rig(Generation::CAYMAN);
  std::vector<std::uint8_t> tags(128 * 128, 0);
  tags[5 * 128 + 17] = 3;  // fmap 3 of its own row group
  rig.mem.put(0, kTags, u16_bytes(pack_tags(tags, 128, 128)), 128);
  expect_ok(rig.run(ldweights(rig.g, Dtype::BFLOAT16, kWeights, 128, 128, false)));
  expect_ok(rig.run(ldtags(rig.g, kTags, 128, 128)));
  const auto r = rig.run(matmul_sparse(rig.g, Dtype::BFLOAT16, kMoving, 3, 8, 128, 128));
  EXPECT_EQ(r.rule, "exec.sparse_tag") << r.describe();
  EXPECT_NE(r.message.find("tile row 5, column 17"), std::string::npos) << r.message;
  expect_ok(rig.run(matmul_sparse(rig.g, Dtype::BFLOAT16, kMoving, 4, 8, 128, 128)));
}

TEST(SparseRules, TagSelectingARowGroupOutsideTheActiveRows) {
  Rig rig(Generation::MAVERICK);
  std::vector<std::uint8_t> tags(64 * 128, 0);
  tags[3 * 128] = 0x8;  // row group 2: PE row 67, beyond the 64 active rows
  rig.mem.put(0, kTags, u16_bytes(pack_tags(tags, 64, 128)), 64);
  expect_ok(rig.run(ldweights(rig.g, Dtype::BFLOAT16, kWeights, 64, 128, false)));
  expect_ok(rig.run(ldtags(rig.g, kTags, 64, 128)));
  const auto r = rig.run(matmul_sparse(rig.g, Dtype::BFLOAT16, kMoving, 2, 8, 64, 128));
  EXPECT_EQ(r.rule, "exec.sparse_tag") << r.describe();
}

TEST(SparseRules, TagWeightTagWiderThanFourBits) {
  Rig rig(Generation::MARIANA_PLUS);
  std::vector<std::uint16_t> pairs(2 * 2 * 4, 0);
  pairs[2 * 6 + 1] = 0x10;  // partition 1, element 2
  rig.mem.put(0, kWeights, u16_bytes(pairs), 2);
  const auto r = rig.run(ldweights(rig.g, Dtype::BFLOAT16, kWeights, 2, 4, true, 0));
  EXPECT_EQ(r.rule, "exec.sparse_tag") << r.describe();
  EXPECT_NE(r.message.find("partition 1 element 2"), std::string::npos) << r.message;
  EXPECT_EQ(rig.ex.stationary_count(), 0u) << "a failed load leaves nothing";
}

TEST(SparseRules, MixingWithDoubleRowAndMx) {
  Rig rig(Generation::MARIANA);
  isa::Encoder e(rig.g, isa::Opcode::LDWEIGHTS);
  set_row(e, "src_mem_pattern", kWeights, 256);
  e.set("in_dtype", static_cast<int>(Dtype::FP8_EXP4)).set("perf_opt", isa::perf_opt::FP8_DOUBLE_ROW);
  set_tile(e, rig.g, 128, 128);
  expect_ok(rig.run(e.bytes()));
  expect_ok(rig.run(ldtags(rig.g, kTags, 128, 128)));
  const auto r = rig.run(matmul_sparse(rig.g, Dtype::FP8_EXP4, kMoving, 2, 8, 128, 128));
  EXPECT_EQ(r.rule, "exec.sparse_mix") << r.describe();
  // A TAG_WEIGHT micro-op that is also MX or transposed (the ISA refuses the instruction; the executor the op).
  pe::MicroOp op = dec(rig.g, ldweights(rig.g, Dtype::BFLOAT16, kWeights, 128, 128, true));
  op.transpose = true;
  EXPECT_EQ(rig.run(op).rule, "exec.sparse_mix");
}

TEST(SparseRules, FmapsOutsideTwoToFourAndFmapsLeavingThePartition) {
  Rig rig(Generation::CAYMAN);
  expect_ok(rig.run(ldweights(rig.g, Dtype::BFLOAT16, kWeights, 128, 128, false)));
  expect_ok(rig.run(ldtags(rig.g, kTags, 128, 128)));
  for (unsigned f : {1u, 5u}) {
    const isa::Decoded d = isa::decode(rig.g, matmul_sparse(rig.g, Dtype::BFLOAT16, kMoving, f, 8, 128, 128));
    ASSERT_FALSE(d.violations.empty());
    EXPECT_EQ(d.violations.front().rule, "sparse.fmaps");
    pe::MicroOp op = dec(rig.g, matmul_sparse(rig.g, Dtype::BFLOAT16, kMoving, 2, 8, 128, 128));
    op.src.num[3] = static_cast<std::int32_t>(f);
    EXPECT_EQ(rig.run(op).rule, "exec.pattern_count") << f;
  }
  pe::MicroOp op = dec(rig.g, matmul_sparse(rig.g, Dtype::BFLOAT16, kMoving, 4, 8, 128, 128));
  op.src.step[3] = 60000;  // 120000 bytes per fmap (a micro-op built by hand): fmap 2 leaves the 224 KiB partition
  const auto r = rig.run(op);
  EXPECT_EQ(r.rule, "exec.pattern_partition_bounds") << r.describe();
}

TEST(SparseRules, IsaRulesOfTheNewFields) {
  const Generation g = Generation::MARIANA;
  auto first_rule = [&](const isa::RawInstruction& raw) {
    const isa::Decoded d = isa::decode(g, raw);
    for (const auto& v : d.violations)
      if (v.rule == "ldweights.tag_weight_mode") return v.rule;
    return d.violations.empty() ? std::string() : d.violations.front().describe();
  };
  isa::Encoder bad_mode(g, isa::Opcode::LDWEIGHTS);
  set_row(bad_mode, "src_mem_pattern", kWeights, 128);
  bad_mode.set("in_dtype", static_cast<int>(Dtype::BFLOAT16)).set("tag_weight_mode", 2);
  set_tile(bad_mode, g, 128, 128);
  EXPECT_EQ(first_rule(bad_mode.bytes()), "ldweights.tag_weight_mode");
  EXPECT_EQ(first_rule(ldweights(g, Dtype::FP32, kWeights, 128, 128, true)), "ldweights.tag_weight_mode");
  EXPECT_EQ(first_rule(ldweights(g, Dtype::FP8_EXP4, kWeights, 128, 128, true)), "ldweights.tag_weight_mode");
  EXPECT_EQ(isa::decode(g, ldtags(g, kTags, 128, 128, 0x2)).violations.at(0).rule, "ldtags.force_tag_bits");
  for (Generation gen : kGens) {
    const isa::Decoded d = isa::decode(gen, ldweights(gen, Dtype::BFLOAT16, kWeights, 128, 128, true));
    EXPECT_TRUE(d.violations.empty()) << isa::name(gen) << ": " << d.violations.front().describe();
    EXPECT_EQ(isa::decode(gen, ldweights(gen, Dtype::BFLOAT16, kWeights, 128, 128, true)).get_or("tag_weight_mode", 0),
              1)
        << isa::name(gen);
  }
}

}  // namespace
