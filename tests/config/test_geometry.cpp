// geometry.*: the array, its memories and the rules that relate them
// (isa::check_geometry), reached through --set and JSON like every other key.
// Each rule is tested at its boundary: the last value accepted and the first
// refused, with the key, the value and what is allowed in the message.
#include <gtest/gtest.h>

#include "config_test_util.h"
#include "pevp/isa/geometry.h"

namespace pevp::platform {
namespace {

using isa::Generation;
using test::config_error;

VpConfig with(Generation g, const std::vector<std::string>& sets) {
  VpConfig c = preset(g);
  apply_overrides(c, sets);
  return c;
}
std::string refused(Generation g, const std::vector<std::string>& sets, const std::string& key) {
  VpConfig c = preset(g);
  const std::string e = config_error([&] { apply_overrides(c, sets); }, key);
  test::expect_same(c, preset(g));  // untouched by the failed apply
  return e;
}

TEST(Geometry, PresetsAreTheGenerationsPublicShapes) {
  for (Generation g : isa::kAllGenerations) {
    const isa::ArrayGeometry& geo = preset(g).geometry;
    EXPECT_EQ(geo, isa::preset_geometry(g));
    EXPECT_FALSE(isa::check_geometry(geo, g).has_value()) << isa::name(g);
    EXPECT_EQ(geo.pe_rows, 128u);
    EXPECT_EQ(geo.pe_cols, g == Generation::MAVERICK ? 256u : 128u);
    EXPECT_EQ(geo.group_rows(), 32u);  // FACTS.md: PE tiling 4 x 32
    EXPECT_EQ(geo.group_cols(), 32u);
    EXPECT_EQ(geo.psum_partition_bytes(), 16384u);
    EXPECT_EQ(geo.partitions_per_xbus(), 16u);  // D-XBUS
    EXPECT_EQ(geo.xbus_ports(), 9u);            // throttle_cfg.disable_throttle[8:0]
  }
}

TEST(Geometry, EverySideFrom32To256) {
  for (unsigned side : {32u, 64u, 128u, 256u}) {
    const std::string s = std::to_string(side);
    const VpConfig c = with(Generation::MARIANA, {"geometry.pe_rows=" + s, "geometry.pe_cols=" + s,
                                                  "geometry.partitions=256", "geometry.sbuf_partition_bytes=131072"});
    EXPECT_EQ(c.geometry.pe_rows, side);
    EXPECT_EQ(c.geometry.group_rows(), side / 4);
  }
}

TEST(Geometry, SidesOutsideThePowersOfTwoFrom32To256AreRefused) {
  const std::string allowed = "must be a power of two in 32..256 (num_active_rows is one byte, 0 meaning 256)";
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.pe_rows=16"}, "geometry.pe_rows"), "geometry.pe_rows = 16: " + allowed);
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.pe_rows=96"}, "geometry.pe_rows"), "geometry.pe_rows = 96: " + allowed);
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.pe_rows=0"}, "geometry.pe_rows"),
            "geometry.pe_rows = 0: out of range (1..256)");
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.pe_rows=512"}, "geometry.pe_rows"),
            "geometry.pe_rows = 512: out of range (1..256)");
  EXPECT_EQ(refused(Generation::CAYMAN, {"geometry.pe_cols=48"}, "geometry.pe_cols"),
            "geometry.pe_cols = 48: must be a power of two in 32..256 (num_active_cols is one byte, 0 meaning 256)");
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.partitions=100"}, "geometry.partitions"),
            "geometry.partitions = 100: must be a power of two in 32..256");
}

TEST(Geometry, RowsNeedPartitionsAndColumnsNeedPsumPartitions) {
  // Explicit partitions below what the array needs: refused, naming both keys.
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.pe_rows=256", "geometry.partitions=128"}, "geometry.pe_rows"),
            "geometry.pe_rows = 256: exceeds geometry.partitions (128): each PE row reads one SBUF partition");
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.partitions=64"}, "geometry.pe_rows"),
            "geometry.pe_rows = 128: exceeds geometry.partitions (64): each PE row reads one SBUF partition");
  EXPECT_EQ(refused(Generation::CAYMAN, {"geometry.pe_cols=256", "geometry.partitions=128"}, "geometry.pe_cols"),
            "geometry.pe_cols = 256: exceeds geometry.partitions (128): each PE column writes one PSUM partition");
  // MAVERICK's c256 folds two halves of the columns into one set of partitions.
  EXPECT_NO_THROW(with(Generation::MAVERICK, {"geometry.partitions=128"}));
  EXPECT_EQ(refused(Generation::MAVERICK, {"geometry.partitions=64", "geometry.pe_rows=64"}, "geometry.pe_cols"),
            "geometry.pe_cols = 256: exceeds 2 x geometry.partitions (64): each PE column writes one PSUM partition "
            "(c256 folds two halves)");
}

TEST(Geometry, SbufStaysBelowPsum) {
  // 128 x 256 KiB is exactly 32 MiB: the preset already fills the space below PSUM at 0x2000000 (D-ADDR).
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.sbuf_partition_bytes=266240"}, "geometry.sbuf_partition_bytes"),
            "geometry.sbuf_partition_bytes = 266240: geometry.partitions x geometry.sbuf_partition_bytes must fit "
            "below PSUM at 0x2000000 (32 MiB; D-ADDR): at most 262144 with 128 partitions");
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.partitions=256", "geometry.sbuf_partition_bytes=262144"},
                    "geometry.sbuf_partition_bytes"),
            "geometry.sbuf_partition_bytes = 262144: geometry.partitions x geometry.sbuf_partition_bytes must fit "
            "below PSUM at 0x2000000 (32 MiB; D-ADDR): at most 131072 with 256 partitions");
  EXPECT_NO_THROW(with(Generation::MARIANA, {"geometry.partitions=256", "geometry.sbuf_partition_bytes=131072"}));
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.sbuf_partition_bytes=6000"}, "geometry.sbuf_partition_bytes"),
            "geometry.sbuf_partition_bytes = 6000: must be a multiple of 4096, at least 4096");
  EXPECT_NO_THROW(with(Generation::MARIANA, {"geometry.sbuf_partition_bytes=4096"}));
}

TEST(Geometry, PsumBanks) {
  const VpConfig c = with(Generation::CAYMAN, {"geometry.psum_banks=4", "geometry.psum_bank_bytes=4096"});
  EXPECT_EQ(c.geometry.psum_partition_bytes(), 16384u);
  EXPECT_EQ(c.psum.partition_bytes, 16384u);
  EXPECT_EQ(c.psum.bank_bytes, 4096u);
  EXPECT_EQ(to_json(c)["geometry"]["psum_partition_bytes"], 16384);
  EXPECT_EQ(refused(Generation::CAYMAN, {"geometry.psum_banks=9"}, "geometry.psum_banks"),
            "geometry.psum_banks = 9: out of range (1..8)");
  EXPECT_EQ(refused(Generation::CAYMAN, {"geometry.psum_banks=0"}, "geometry.psum_banks"),
            "geometry.psum_banks = 0: out of range (1..8)");
  // A zero region's aligned blocks of 1, 2, 4 or 8 banks must not run past the last bank.
  for (unsigned banks : {3u, 5u, 6u, 7u})
    EXPECT_EQ(refused(Generation::CAYMAN, {"geometry.psum_banks=" + std::to_string(banks)}, "geometry.psum_banks"),
              "geometry.psum_banks = " + std::to_string(banks) +
                  ": must be 1, 2, 4 or 8 (bank masks are one byte; psum_zero_region zeroes aligned blocks of 1, 2, "
                  "4 or 8 banks)");
  for (unsigned banks : {1u, 2u, 4u}) EXPECT_NO_THROW(with(Generation::CAYMAN, {"geometry.psum_banks=" + std::to_string(banks)}));
  EXPECT_EQ(refused(Generation::CAYMAN, {"geometry.psum_bank_bytes=100"}, "geometry.psum_bank_bytes"),
            "geometry.psum_bank_bytes = 100: must be a multiple of 64 in 64..65536");
  EXPECT_NO_THROW(with(Generation::CAYMAN, {"geometry.psum_bank_bytes=64"}));
}

TEST(Geometry, DerivedMembersAreFixed) {
  EXPECT_EQ(refused(Generation::MAVERICK, {"geometry.col_groups=4"}, "geometry.col_groups"),
            "geometry.col_groups = 4: fixed by the generation in this model (MAVERICK: 8)");
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.row_groups=8"}, "geometry.row_groups"),
            "geometry.row_groups = 8: fixed by the generation in this model (MARIANA: 4)");
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.sbuf_xbus_ports=4"}, "geometry.sbuf_xbus_ports"),
            "geometry.sbuf_xbus_ports = 4: fixed by the generation in this model (MARIANA: 8)");
  // Stating the value they have is fine (a dump loads back).
  EXPECT_NO_THROW(with(Generation::MARIANA, {"geometry.queues=16", "geometry.row_groups=4"}));
}

TEST(Geometry, OverridesAreValidatedTogetherInAnyOrder) {
  const std::vector<std::string> sets = {"geometry.partitions=64", "geometry.pe_rows=64", "geometry.pe_cols=64"};
  const VpConfig a = with(Generation::MARIANA, sets);
  const VpConfig b = with(Generation::MARIANA, {sets[2], sets[0], sets[1]});
  test::expect_same(a, b);
  EXPECT_EQ(a.geometry.partitions, 64u);
  // One at a time, the first already breaks a rule the later ones would repair.
  VpConfig c = preset(Generation::MARIANA);
  EXPECT_THROW(apply_override(c, sets[0]), ConfigError);
}

// D-GEOMETRY-FOLLOW: partitions = max(the preset's 128, pe_rows, pe_cols (MAVERICK: pe_cols / 2)); SBUF bytes per
// partition = the preset's total SBUF / partitions (MARIANA 128 x 256 KiB = 32 MiB, CAYMAN 128 x 224 KiB = 28 MiB);
// PSUM keeps its 8 x 2 KiB per partition.
TEST(Geometry, TheArrayAloneSetsTheMembersThatFollowIt) {
  struct Case {
    Generation gen;
    std::vector<std::string> sets;
    std::uint32_t partitions, sbuf_partition_bytes;
  };
  const Case cases[] = {
      {Generation::MARIANA, {"geometry.pe_rows=256", "geometry.pe_cols=256"}, 256, 131072},  // 32 MiB / 256
      {Generation::MARIANA, {"geometry.pe_cols=256"}, 256, 131072},                          // 128 x 256
      {Generation::MARIANA, {"geometry.pe_rows=256"}, 256, 131072},                          // 256 x 128
      {Generation::CAYMAN, {"geometry.pe_rows=256", "geometry.pe_cols=256"}, 256, 114688},   // 28 MiB / 256 = 112 KiB
      {Generation::MAVERICK, {"geometry.pe_rows=256"}, 256, 131072},                         // 256 rows, c256 folded
      {Generation::MAVERICK, {"geometry.pe_cols=128"}, 128, 262144},                         // fewer: the preset's
      {Generation::MARIANA, {"geometry.pe_rows=32", "geometry.pe_cols=64"}, 128, 262144},    // never below the preset
      {Generation::MARIANA, {"geometry.partitions=256"}, 256, 131072},  // SBUF follows explicit partitions too
      {Generation::MARIANA, {"geometry.partitions=64", "geometry.pe_rows=64", "geometry.pe_cols=64"}, 64, 524288},
  };
  for (const Case& k : cases) {
    const VpConfig c = with(k.gen, k.sets);
    EXPECT_EQ(c.geometry.partitions, k.partitions) << k.sets[0];
    EXPECT_EQ(c.geometry.sbuf_partition_bytes, k.sbuf_partition_bytes) << k.sets[0];
    EXPECT_EQ(c.sbuf.partitions, k.partitions);
    EXPECT_EQ(c.psum.partitions, k.partitions);
    EXPECT_EQ(c.sbuf.size(), std::uint64_t{k.partitions} * k.sbuf_partition_bytes);
    EXPECT_EQ(c.geometry.psum_partition_bytes(), 16384u);
  }
}

TEST(Geometry, AnExplicitValueIsKeptAndAContradictionNamesEveryKey) {
  // Set beside the array: kept as given.
  const VpConfig a = with(Generation::MARIANA, {"geometry.pe_rows=256", "geometry.sbuf_partition_bytes=65536"});
  EXPECT_EQ(a.geometry.partitions, 256u);
  EXPECT_EQ(a.geometry.sbuf_partition_bytes, 65536u);
  // Set by an earlier document (a configuration file under --set): kept too.
  VpConfig b = load_config_text(R"({"geometry": {"sbuf_partition_bytes": 65536}})", "c.json", preset(Generation::MARIANA));
  apply_overrides(b, {"geometry.pe_cols=256"});
  EXPECT_EQ(b.geometry.partitions, 256u);
  EXPECT_EQ(b.geometry.sbuf_partition_bytes, 65536u);
  // An explicit SBUF the followed partitions cannot hold: the rule, then what followed what.
  EXPECT_EQ(refused(Generation::MARIANA, {"geometry.pe_rows=256", "geometry.sbuf_partition_bytes=262144"},
                    "geometry.sbuf_partition_bytes"),
            "geometry.sbuf_partition_bytes = 262144: geometry.partitions x geometry.sbuf_partition_bytes must fit "
            "below PSUM at 0x2000000 (32 MiB; D-ADDR): at most 131072 with 256 partitions (geometry.partitions = 256 "
            "follows geometry.pe_rows = 256, geometry.pe_cols = 128: D-GEOMETRY-FOLLOW)");
  // An earlier document's value that equals its rule's is not told apart from one that followed: a dump (every key
  // named) under --set still follows the array.
  VpConfig d = from_json(to_json(preset(Generation::MARIANA)), preset(Generation::MARIANA));
  apply_overrides(d, {"geometry.pe_cols=256"});
  EXPECT_EQ(d.geometry.partitions, 256u);
  EXPECT_EQ(d.geometry.sbuf_partition_bytes, 131072u);
}

TEST(Geometry, ADumpLoadsBack) {
  const VpConfig a = with(Generation::CAYMAN, {"geometry.pe_rows=64", "geometry.pe_cols=32", "geometry.psum_banks=2"});
  test::expect_same(from_json(to_json(a), preset(Generation::MARIANA)), a);
  const VpConfig wide = with(Generation::CAYMAN, {"geometry.pe_cols=256"});
  test::expect_same(from_json(to_json(wide), preset(Generation::MARIANA)), wide);
}

TEST(Geometry, TheGenerationKeyResetsTheGeometryToItsPreset) {
  const VpConfig a = with(Generation::MARIANA, {"geometry.pe_rows=64"});
  const VpConfig b = from_json(nlohmann::json::parse(R"({"generation": "MAVERICK"})"), a);
  EXPECT_EQ(b.geometry, isa::preset_geometry(Generation::MAVERICK));
}

}  // namespace
}  // namespace pevp::platform
