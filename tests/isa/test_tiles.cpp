// tiles.h: the PE-array rectangle of an instruction (row_grp/col_grp masks on
// CAYMAN/MARIANA, tile_size/tile_sel on MAVERICK) and the 003 section 4.1
// per-tile perf-counter names.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "isa_test_util.h"
#include "pevp/isa/tiles.h"

namespace pevp::isa::test {
namespace {

struct Span {
  unsigned start, size;
};
// Model D-GRP, typed independently: bit g = rows/cols 32g..32g+31.
const std::map<int, Span> kMasks{{0x1, {0, 32}}, {0x2, {32, 32}}, {0x4, {64, 32}}, {0x8, {96, 32}},
                                 {0x3, {0, 64}}, {0xC, {64, 64}}, {0xF, {0, 128}}};

TEST(Tiles, GroupMasksOnCaymanAndMariana) {
  for (G g : {G::CAYMAN, G::MARIANA, G::MARIANA_PLUS}) {
    for (Opcode op : {Opcode::LDWEIGHTS, Opcode::MATMUL, Opcode::MATMUL_SPARSE, Opcode::LDTAGS, Opcode::PE_REG_WRITE}) {
      RawInstruction raw = base_of(g, op);
      for (const auto& [rm, rs] : kMasks)
        for (const auto& [cm, cs] : kMasks) {
          patch(g, raw, "row_grp", rm);
          patch(g, raw, "col_grp", cm);
          const auto t = tile_of(decode(g, raw));
          ASSERT_TRUE(t.has_value()) << gen_name(g) << " " << name(op) << " " << rm << "/" << cm;
          EXPECT_EQ(*t, (TileRect{rs.start, rs.size, cs.start, cs.size})) << rm << "/" << cm;
        }
      for (int bad : {0x0, 0x5, 0x6, 0x7, 0x10, 0xFF}) {
        patch(g, raw, "row_grp", bad);
        patch(g, raw, "col_grp", 0xF);
        EXPECT_FALSE(tile_of(decode(g, raw)).has_value()) << bad;
        patch(g, raw, "row_grp", 0xF);
        patch(g, raw, "col_grp", bad);
        EXPECT_FALSE(tile_of(decode(g, raw)).has_value()) << bad;
      }
    }
  }
  // the v4 MX ops tile too
  RawInstruction mx = mx_mm_base(G::MARIANA);
  patch(G::MARIANA, mx, "row_grp", 0x8);
  EXPECT_EQ(tile_of(decode(G::MARIANA, mx)), (TileRect{96, 32, 0, 128}));
}

// MAVERICK (spec 11): R64 = 64 rows, R128; C128, C256; sel <= 1 inside the 128 x 256 array.
TEST(Tiles, MaverickTileSizeAndSelect) {
  struct T {
    int row, col, row_sel, col_sel;
    bool ok;
    TileRect rect;
  };
  const T cases[] = {
      {6, 7, 0, 0, true, {0, 64, 0, 128}},     {6, 7, 1, 0, true, {64, 64, 0, 128}},
      {6, 7, 0, 1, true, {0, 64, 128, 128}},   {6, 7, 1, 1, true, {64, 64, 128, 128}},
      {7, 7, 0, 0, true, {0, 128, 0, 128}},    {7, 7, 0, 1, true, {0, 128, 128, 128}},
      {6, 8, 1, 0, true, {64, 64, 0, 256}},    {7, 8, 0, 0, true, {0, 128, 0, 256}},
      {7, 7, 1, 0, false, {}},                 {7, 8, 0, 1, false, {}},
      {6, 7, 2, 0, false, {}},                 {6, 7, 0, 2, false, {}},
      {5, 7, 0, 0, false, {}},                 {7, 9, 0, 0, false, {}},
      {8, 7, 0, 0, false, {}},                 {7, 6, 0, 0, false, {}},
  };
  for (Opcode op : {Opcode::LDWEIGHTS, Opcode::MATMUL, Opcode::MATMUL_SPARSE, Opcode::LDTAGS, Opcode::PE_REG_WRITE}) {
    for (const T& c : cases) {
      RawInstruction raw = base_of(G::MAVERICK, op);
      patch(G::MAVERICK, raw, "tile_size.row", c.row);
      patch(G::MAVERICK, raw, "tile_size.col", c.col);
      patch(G::MAVERICK, raw, "tile_sel.row_sel", c.row_sel);
      patch(G::MAVERICK, raw, "tile_sel.col_sel", c.col_sel);
      const auto t = tile_of(decode(G::MAVERICK, raw));
      EXPECT_EQ(t.has_value(), c.ok) << name(op) << " " << c.row << "/" << c.col << "/" << c.row_sel << "/" << c.col_sel;
      if (t && c.ok) {
        EXPECT_EQ(*t, c.rect) << name(op) << " " << c.row << "/" << c.col << "/" << c.row_sel << "/" << c.col_sel;
      }
    }
  }
}

TEST(Tiles, InstructionsWithoutATile) {
  for (G g : kAllGenerations) {
    RawInstruction unknown{};
    unknown[0] = 0x04;
    EXPECT_FALSE(tile_of(decode(g, unknown)).has_value());
  }
  EXPECT_FALSE(tile_of(decode(G::MARIANA, load_seed_base(G::MARIANA))).has_value());
  EXPECT_FALSE(tile_of(decode(G::MARIANA, convlut_base(G::MARIANA))).has_value());
}

TEST(Tiles, BuildersPlaceTheTile) {
  MatmulArgs a = mm_args();
  a.tile = {64, 64, 32, 32};
  a.num_active_rows = 64;
  a.num_active_cols = 32;
  const Decoded d = decode(G::MARIANA, encode_matmul(G::MARIANA, a));
  EXPECT_EQ(d.get("row_grp"), 0xC);
  EXPECT_EQ(d.get("col_grp"), 0x2);
  EXPECT_EQ(tile_of(d), (TileRect{64, 64, 32, 32}));
  a.tile = {64, 64, 128, 128};
  a.num_active_cols = 128;
  const Decoded m = decode(G::MAVERICK, encode_matmul(G::MAVERICK, a));
  EXPECT_EQ(m.get("tile_size.row"), 6);
  EXPECT_EQ(m.get("tile_size.col"), 7);
  EXPECT_EQ(m.get("tile_sel.row_sel"), 1);
  EXPECT_EQ(m.get("tile_sel.col_sel"), 1);
  EXPECT_EQ(tile_of(m), (TileRect{64, 64, 128, 128}));
}

TEST(Tiles, Overlaps) {
  const TileRect full{0, 128, 0, 128}, q0{0, 32, 0, 32}, q15{96, 32, 96, 32}, right{0, 128, 64, 64};
  EXPECT_TRUE(full.overlaps(q0));
  EXPECT_TRUE(q0.overlaps(full));
  EXPECT_FALSE(q0.overlaps(q15));
  EXPECT_FALSE(q0.overlaps(right));
  EXPECT_TRUE(q15.overlaps(right));
  EXPECT_FALSE((TileRect{0, 32, 0, 32}).overlaps(TileRect{32, 32, 0, 32}));  // edge-adjacent
}

// 003 section 4.1: "index = quadrant_row*4 + quadrant_col", named by the top-left quadrant.
TEST(Tiles, CounterNamesPer003) {
  const std::map<std::string, std::set<unsigned>> verified{
      {"128x128", {0}},
      {"128x64", {0, 2}},
      {"128x32", {0, 1, 2, 3}},
      {"64x128", {0, 8}},
      {"64x64", {0, 2, 8, 10}},
      {"64x32", {0, 1, 2, 3, 8, 9, 10, 11}},
      {"32x128", {0, 4, 8, 12}},
      {"32x64", {0, 2, 4, 6, 8, 10, 12, 14}},
      {"32x32", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
  };
  std::set<std::string> all;
  for (unsigned rows : {128u, 64u, 32u})
    for (unsigned cols : {128u, 64u, 32u}) {
      const std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
      std::set<unsigned> got;
      unsigned count = 0;
      for (unsigned r0 = 0; r0 < 128; r0 += rows)
        for (unsigned c0 = 0; c0 < 128; c0 += cols) {
          const std::string n = counter_tile_name(TileRect{r0, rows, c0, cols}, ArrayGeometry{});
          const std::string prefix = "tile_" + shape + "_tile";
          ASSERT_EQ(n.rfind(prefix, 0), 0u) << n;
          got.insert(static_cast<unsigned>(std::stoul(n.substr(prefix.size()))));
          all.insert(n);
          ++count;
        }
      EXPECT_EQ(got, verified.at(shape)) << shape;
      EXPECT_EQ(count, (128 / rows) * (128 / cols)) << shape;
    }
  EXPECT_EQ(all.size(), 49u);  // 003: "SUM = 49"
  EXPECT_EQ(counter_tile_name({64, 64, 32, 32}, ArrayGeometry{}), "tile_64x32_tile9");
  EXPECT_EQ(counter_tile_name({64, 64, 64, 64}, ArrayGeometry{}), "tile_64x64_tile10");
  EXPECT_EQ(counter_tile_name({0, 128, 0, 128}, ArrayGeometry{}), "tile_128x128_tile0");
  EXPECT_EQ(counter_tile_name({96, 32, 96, 32}, ArrayGeometry{}), "tile_32x32_tile15");
  EXPECT_EQ(counter_tile_name({0, 128, 64, 32}, ArrayGeometry{}), "tile_128x32_tile2");  // 003 anomaly A1: the name is right
  // shapes the banks do not count
  EXPECT_EQ(counter_tile_name({0, 128, 0, 256}, ArrayGeometry{}), "");
  EXPECT_EQ(counter_tile_name({0, 128, 128, 128}, ArrayGeometry{}), "");
  EXPECT_EQ(counter_tile_name({0, 16, 0, 32}, ArrayGeometry{}), "");
  EXPECT_EQ(counter_tile_name({32, 64, 0, 64}, ArrayGeometry{}), "");  // misaligned
  EXPECT_EQ(counter_tile_name({0, 96, 0, 32}, ArrayGeometry{}), "");
}

// group_mask() is the inverse of decode_group_mask() for the aligned spans it can describe;
// for spans it cannot it should say so (0) rather than hand out a mask decode rejects.
TEST(Tiles, GroupMaskInverse) {
  std::vector<std::string> bad;
  for (unsigned first = 0; first < 5; ++first)
    for (unsigned count = 0; count < 5; ++count) {
      const std::uint8_t m = group_mask(first, count);
      const bool aligned = (count == 1 || count == 2 || count == 4) && first % count == 0 && first + count <= 4;
      if (aligned) {
        const auto s = decode_group_mask(m);
        ASSERT_TRUE(s.has_value()) << first << "," << count;
        EXPECT_EQ(s->first, first);
        EXPECT_EQ(s->count, count);
      } else if (m != 0) {
        bad.push_back("group_mask(" + std::to_string(first) + "," + std::to_string(count) + ")=" + std::to_string(m));
      }
    }
  if (!bad.empty()) {
    std::string list;
    for (const auto& b : bad) list += b + " ";
    FAIL() << "enums.cpp group_mask() returns masks decode_group_mask() rejects for misaligned or 3-group "
                    "spans (" << list << "); return 0 unless count is 1/2/4 and first % count == 0";
  }
}

}  // namespace
}  // namespace pevp::isa::test
