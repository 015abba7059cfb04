// The ISA on a non-default ArrayGeometry (model decision D-GEOMETRY): the tile
// fields address fractions of the array, one-byte active counts encode 256 as
// 0, addresses and PSUM banks are checked against the configured memories, and
// the per-tile counter names count the same fractions of any array.
#include <gtest/gtest.h>

#include "isa_test_util.h"
#include "pevp/isa/builders.h"
#include "pevp/isa/geometry.h"
#include "pevp/isa/instruction.h"
#include "pevp/isa/tiles.h"

namespace pevp::isa::test {
namespace {

ArrayGeometry array(Generation g, unsigned rows, unsigned cols, unsigned partitions = 128,
                    unsigned sbuf_bytes = 128 * 1024) {
  ArrayGeometry geo = preset_geometry(g);
  geo.pe_rows = rows;
  geo.pe_cols = cols;
  geo.partitions = partitions;
  geo.sbuf_partition_bytes = sbuf_bytes;
  EXPECT_FALSE(check_geometry(geo, g).has_value()) << check_geometry(geo, g)->describe();
  return geo;
}

LdweightsArgs load(unsigned k, unsigned m, Placement tile) {
  LdweightsArgs a;
  a.src = Pattern::row(0, static_cast<std::uint16_t>(m));
  a.num_active_rows = k;
  a.num_active_cols = m;
  a.tile = tile;
  return a;
}

TEST(Geometry, GroupMasksAddressQuartersOfAnyArray) {
  const ArrayGeometry geo = array(G::CAYMAN, 64, 256, 256);
  // row_grp 0xC = groups 2 and 3 = rows 32..63 of 64; col_grp 0x2 = group 1 = columns 64..127 of 256.
  const RawInstruction raw = encode_ldweights(G::CAYMAN, geo, load(32, 64, {32, 32, 64, 64}));
  const Decoded d = decode(G::CAYMAN, geo, raw);
  EXPECT_TRUE(d.valid()) << dump(d);
  EXPECT_EQ(d.get("row_grp"), 0xC);
  EXPECT_EQ(d.get("col_grp"), 0x2);
  EXPECT_EQ(tile_of(d), (TileRect{32, 32, 64, 64}));
  // The same bytes on the preset are rows 64..127 and columns 32..63.
  EXPECT_EQ(tile_of(decode(G::CAYMAN, raw)), (TileRect{64, 64, 32, 32}));
  // A rectangle off the grid cannot be encoded; the message names the group size.
  try {
    encode_ldweights(G::CAYMAN, geo, load(8, 64, {0, 8, 0, 64}));
    FAIL() << "no EncodeError";
  } catch (const EncodeError& e) {
    EXPECT_EQ(std::string(e.what()), "row_grp: a tile of 8 at 0 is not an aligned 16/32/64 group") << e.what();
  }
}

TEST(Geometry, ActiveRowsAreCheckedAgainstTheTileOfTheGeometry) {
  const ArrayGeometry geo = array(G::MARIANA, 32, 32);
  const Decoded full = decode(G::MARIANA, geo, encode_ldweights(G::MARIANA, geo, load(32, 32, {0, 32, 0, 32})));
  EXPECT_TRUE(full.valid()) << dump(full);
  const Decoded over = decode(G::MARIANA, geo, encode_ldweights(G::MARIANA, load(33, 32, {0, 128, 0, 128})));
  EXPECT_TRUE(has_violation(over.violations, "tile.num_active_rows", "num_active_rows")) << dump(over);
  EXPECT_NE(dump(over).find("num_active_rows must be 1..32 (the tile's rows)"), std::string::npos) << dump(over);
}

TEST(Geometry, ZeroActiveMeans256OnA256WideTile) {
  const ArrayGeometry geo = array(G::MARIANA_PLUS, 256, 256, 256);
  const RawInstruction raw = encode_ldweights(G::MARIANA_PLUS, geo, load(256, 256, {0, 256, 0, 256}));
  const Decoded d = decode(G::MARIANA_PLUS, geo, raw);
  EXPECT_EQ(d.get("num_active_rows"), 0);
  EXPECT_EQ(d.get("num_active_cols"), 0);
  EXPECT_TRUE(d.valid()) << dump(d);
  EXPECT_EQ(std::get<Ldweights>(typed(d)).tile.active_rows, 256u);
  EXPECT_EQ(std::get<Ldweights>(typed(d)).tile.active_cols, 256u);
  // On a 128-row tile, 0 is no count at all.
  const Decoded preset_d = decode(G::MARIANA_PLUS, raw);
  EXPECT_TRUE(has_rule(preset_d.violations, "tile.num_active_rows")) << dump(preset_d);
  EXPECT_EQ(std::get<Ldweights>(typed(preset_d)).tile.active_rows, 0u);
}

TEST(Geometry, MaverickTileSizesAreWholeAndHalfArrays) {
  const ArrayGeometry geo = array(G::MAVERICK, 64, 128);
  // R128 / C256 = the whole 64 x 128 array; R64 / C128 = half of it.
  const Decoded whole = decode(G::MAVERICK, geo, encode_ldweights(G::MAVERICK, geo, load(64, 128, {0, 64, 0, 128})));
  EXPECT_TRUE(whole.valid()) << dump(whole);
  EXPECT_EQ(whole.get("tile_size.row"), tile_size::R128);
  EXPECT_EQ(whole.get("tile_size.col"), tile_size::C256);
  // 128 columns fit 128 partitions: a c256 tile of this array does not fold (no dst upper dimension of 2).
  const Decoded half = decode(G::MAVERICK, geo, encode_ldweights(G::MAVERICK, geo, load(32, 64, {32, 32, 64, 64})));
  EXPECT_TRUE(half.valid()) << dump(half);
  EXPECT_EQ(tile_of(half), (TileRect{32, 32, 64, 64}));
  EXPECT_EQ(half.get("tile_sel.row_sel"), 1);
  EXPECT_EQ(half.get("tile_sel.col_sel"), 1);
}

// MAVERICK's seed micro-ops (spec 5.1) use the whole C256 tile: 0 columns on the preset's 256, the tile's column
// count on a narrower array, where 0 (= 256) cannot be.
TEST(Geometry, MaverickSeedContractOnANarrowArray) {
  const ArrayGeometry geo = array(G::MAVERICK, 64, 128);
  LdweightsArgs seed;
  seed.src = {0x100, {1, 0, 0}, {1, 1, 1}};
  seed.in_dtype = Dtype::FP32;
  seed.fp32_mode = Fp32Mode::High;
  seed.xpose = true;
  seed.seed_mode = PeSeedMode::LOAD_SEED;
  seed.num_active_rows = 1;
  seed.num_active_cols = 128;
  seed.tile = {0, 32, 0, 128};  // R64 (half the rows), C256 (every column)
  const Decoded d = decode(G::MAVERICK, geo, encode_ldweights(G::MAVERICK, geo, seed));
  EXPECT_TRUE(d.valid()) << dump(d);
  RawInstruction zero = encode_ldweights(G::MAVERICK, geo, seed);
  patch(G::MAVERICK, zero, "num_active_cols", 0);
  const Decoded z = decode(G::MAVERICK, geo, zero);
  EXPECT_TRUE(has_violation(z.violations, "tile.num_active_cols", "num_active_cols")) << dump(z);
  EXPECT_NE(dump(z).find("needs a 256-column tile (tile_size.col C256 is 128 columns on this array)"),
            std::string::npos)
      << dump(z);
}

// A c256 Matmul folds its columns into the destination's third dimension only where they outnumber the partitions.
TEST(Geometry, AC256TileFoldsOnlyWhenWiderThanThePartitions) {
  MatmulArgs mm;
  mm.src = Pattern::row(0, 64);
  mm.dst = Pattern::row(kPsum, 64);  // upper dimension 1
  mm.num_active_rows = 64;
  mm.num_active_cols = 128;
  mm.tile = {0, 64, 0, 128};
  const ArrayGeometry narrow = array(G::MAVERICK, 64, 128);
  const Decoded d = decode(G::MAVERICK, narrow, encode_matmul(G::MAVERICK, narrow, mm));
  EXPECT_TRUE(d.valid()) << dump(d);
  // On the preset (256 columns over 128 partitions) the whole-array tile needs the fold.
  mm.num_active_cols = 256;
  mm.tile = {0, 128, 0, 256};
  mm.num_active_rows = 128;
  mm.src = Pattern::row(0, 64);
  const Decoded p = decode(G::MAVERICK, encode_matmul(G::MAVERICK, mm));
  EXPECT_TRUE(has_rule(p.violations, "mm.c256_dst_upper_dim")) << dump(p);
}

TEST(Geometry, AddressesAreCheckedAgainstTheConfiguredMemories) {
  // 256 partitions of 128 KiB: partition 200 exists, byte 200 x 128 KiB is in SBUF.
  const ArrayGeometry geo = array(G::MARIANA, 128, 128, 256);
  LdweightsArgs a = load(32, 32, {0, 128, 0, 128});
  a.src.start_addr = 200 * 128 * 1024;
  EXPECT_TRUE(decode(G::MARIANA, geo, encode_ldweights(G::MARIANA, geo, a)).valid());
  // On the preset, the same address is partition 100 and 32 rows from it leave the 128 partitions.
  const Decoded d = decode(G::MARIANA, encode_ldweights(G::MARIANA, a));
  EXPECT_TRUE(has_rule(d.violations, "mempattern.partitions")) << dump(d);
  // Beyond 256 x 128 KiB there is no SBUF on the configured machine.
  a.src.start_addr = 256 * 128 * 1024;
  const Decoded out = decode(G::MARIANA, geo, encode_ldweights(G::MARIANA, geo, a));
  EXPECT_TRUE(has_rule(out.violations, "mempattern.src_sbuf")) << dump(out);
}

TEST(Geometry, CounterNamesCountFractionsOfTheArray) {
  const ArrayGeometry small = array(G::MARIANA, 64, 64);
  // Cells of 16 x 16: the whole array is the spec's tile_128x128_tile0, a quarter of it tile_64x64.
  EXPECT_EQ(counter_tile_name({0, 64, 0, 64}, small), "tile_128x128_tile0");
  EXPECT_EQ(counter_tile_name({32, 32, 32, 32}, small), "tile_64x64_tile10");
  EXPECT_EQ(counter_tile_name({48, 16, 0, 16}, small), "tile_32x32_tile12");
  EXPECT_EQ(counter_tile_name({0, 8, 0, 16}, small), "");  // smaller than a cell
  // The preset's names are the spec's, in PEs.
  EXPECT_EQ(counter_tile_name({64, 64, 32, 32}, preset_geometry(G::MARIANA)), "tile_64x32_tile9");
  // MAVERICK's 4 x 4 counter cells are 32 x 64 PEs: the whole 128 x 256 array is tile_128x128_tile0, each C128
  // half a tile_128x64 (columns 128-255 counted too).
  EXPECT_EQ(counter_tile_name({0, 128, 0, 256}, preset_geometry(G::MAVERICK)), "tile_128x128_tile0");
  EXPECT_EQ(counter_tile_name({0, 128, 0, 128}, preset_geometry(G::MAVERICK)), "tile_128x64_tile0");
  EXPECT_EQ(counter_tile_name({0, 128, 128, 128}, preset_geometry(G::MAVERICK)), "tile_128x64_tile2");
  EXPECT_EQ(counter_tile_name({64, 64, 128, 128}, preset_geometry(G::MAVERICK)), "tile_64x64_tile10");
}

TEST(Geometry, StreamRuleTracksCellsOfTheGrid) {
  // fp32 weights in the left half of a 64 x 64 array, then a bf16 Matmul over the whole array: the no-mix rule
  // (spec 8) sees the fp32 cells under it.
  const ArrayGeometry geo = array(G::MARIANA, 64, 64);
  LdweightsArgs lw = load(64, 32, {0, 64, 0, 32});
  lw.in_dtype = Dtype::FP32;
  lw.fp32_mode = Fp32Mode::High;
  MatmulArgs mm;
  mm.src = Pattern::row(0, 8);
  mm.dst = Pattern::row(kPsum, 8);
  mm.num_active_rows = 64;
  mm.num_active_cols = 64;
  mm.tile = {0, 64, 0, 64};
  StreamChecker stream;
  EXPECT_TRUE(stream.check(decode(G::MARIANA, geo, encode_ldweights(G::MARIANA, geo, lw))).empty());
  const auto v = stream.check(decode(G::MARIANA, geo, encode_matmul(G::MARIANA, geo, mm)));
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().rule, "mm.fp32_no_mix") << v.front().describe();
}

}  // namespace
}  // namespace pevp::isa::test
