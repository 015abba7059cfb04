// The platform on arrays other than the presets' (ArrayGeometry, D-GEOMETRY):
// 32 x 32, 64 x 64, 128 x 256 and 256 x 256. A GEMM through the driver path
// must be bit-exact against the defined-order reference summed in the
// geometry's k-tiles and against the plan on the bare executor; its cycles
// must be what the cost model gives for the tiles the geometry allows.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "pevp/host/execute_plan.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/gemm_reference.h"
#include "pevp/host/npy.h"
#include "pevp/host/operands.h"
#include "pevp/platform/config.h"
#include "pevp/platform/gemm.h"
#include "gemm_test_util.h"

namespace {

using namespace pevp;
namespace fs = std::filesystem;

struct Shape {
  const char* name;
  isa::Generation gen;
  std::vector<std::string> sets;  // --set assignments
  unsigned rows, cols;            // what they make of the array
};

const Shape kShapes[] = {
    {"128x128_preset", isa::Generation::MARIANA, {}, 128, 128},  // the anchor the others scale from
    {"32x32", isa::Generation::MARIANA, {"geometry.pe_rows=32", "geometry.pe_cols=32"}, 32, 32},
    {"64x64", isa::Generation::CAYMAN, {"geometry.pe_rows=64", "geometry.pe_cols=64"}, 64, 64},
    // 256 output columns need 256 PSUM partitions; they follow the array, as do 256 SBUF partitions of 128 KiB, the
    // preset's 32 MiB below PSUM (D-GEOMETRY-FOLLOW).
    {"128x256",
     isa::Generation::MARIANA,
     {"geometry.pe_rows=128", "geometry.pe_cols=256"},
     128,
     256},
    {"256x256",
     isa::Generation::MARIANA_PLUS,
     {"geometry.pe_rows=256", "geometry.pe_cols=256", "geometry.partitions=256",
      "geometry.sbuf_partition_bytes=131072"},
     256,
     256},
    // MAVERICK's R128/C256 tiles are the whole array on any geometry.
    {"maverick_64x128", isa::Generation::MAVERICK, {"geometry.pe_rows=64", "geometry.pe_cols=128"}, 64, 128},
    // Four 1 KiB PSUM banks: n-tiles of 256 fp32, rounds of four output tiles.
    {"64x64_four_1k_banks",
     isa::Generation::CAYMAN,
     {"geometry.pe_rows=64", "geometry.pe_cols=64", "geometry.psum_banks=4", "geometry.psum_bank_bytes=1024"},
     64,
     64},
};

std::string shape_name(const testing::TestParamInfo<Shape>& i) { return i.param.name; }

platform::VpConfig config_of(const Shape& s) {
  platform::VpConfig c = platform::preset(s.gen);
  platform::apply_overrides(c, s.sets);
  return c;
}

fs::path scratch(const std::string& name) { return gemm_test::scratch("pevp_geometry_test_", name); }
using gemm_test::random_matrix;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

class Geometry : public testing::TestWithParam<Shape> {};

TEST_P(Geometry, ConfigurationHoldsTheArray) {
  const Shape& s = GetParam();
  const platform::VpConfig c = config_of(s);
  EXPECT_EQ(c.geometry.pe_rows, s.rows);
  EXPECT_EQ(c.geometry.pe_cols, s.cols);
  // The memories follow the geometry.
  EXPECT_EQ(c.sbuf.partitions, c.geometry.partitions);
  EXPECT_EQ(c.psum.partitions, c.geometry.partitions);
  EXPECT_EQ(c.sbuf.partition_bytes, c.geometry.sbuf_partition_bytes);
  // The order of the --sets does not matter: they are validated together.
  std::vector<std::string> reversed(s.sets.rbegin(), s.sets.rend());
  platform::VpConfig r = platform::preset(s.gen);
  platform::apply_overrides(r, reversed);
  EXPECT_EQ(r.geometry, c.geometry);
}

TEST_P(Geometry, GemmIsBitExactThroughTheDriverPath) {
  const Shape& s = GetParam();
  // Not a multiple of any tile: partial k-tiles, m-blocks and n-tiles on every geometry.
  const std::size_t m = s.cols + 37, k = 2 * s.rows + 19, n = 300;
  const host::Matrix a = random_matrix(m, k, 21), b = random_matrix(k, n, 22);
  const fs::path pa = scratch(std::string(s.name) + "_a.npy"), pb = scratch(std::string(s.name) + "_b.npy"),
                 pc = scratch(std::string(s.name) + "_c.npy");
  host::write_npy(pa.string(), a);
  host::write_npy(pb.string(), b);

  platform::GemmCommand cmd;
  cmd.gen = s.gen;
  cmd.config = config_of(s);
  cmd.a_path = pa.string();
  cmd.b_path = pb.string();
  cmd.out_path = pc.string();
  std::ostringstream out, err;
  ASSERT_EQ(platform::run_gemm(cmd, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("bit-exact"), std::string::npos) << out.str();
  const host::Matrix got = host::read_npy_matrix(pc.string());

  // Independent of the platform: the defined order summed over k-tiles of the array's rows, and the plan on the
  // bare executor.
  host::GemmOptions o;
  o.gen = s.gen;
  o.geometry = cmd.config->geometry;
  o.tile_n = host::tile_limits(*o.geometry, o.gen).n_default;
  const host::GemmPlan plan = host::plan_gemm({m, k, n}, o);
  EXPECT_EQ(plan.k_tile, s.rows);
  const auto ea = host::encode_operand(a, s.gen, o.dtype), eb = host::encode_operand(b, s.gen, o.dtype);
  EXPECT_EQ(host::count_bit_mismatches(got, host::reference_defined_order(ea.quantized, eb.quantized, o.fp32_mode,
                                                                          s.rows)),
            0u);
  EXPECT_EQ(host::count_bit_mismatches(got, host::execute_plan(plan, ea, eb)), 0u);
  fs::remove_all(pa.parent_path());
}

// Timing-only, a GEMM of whole tiles: every Matmul streams the n-tile of one PSUM bank (512 bf16 columns on 2 KiB
// banks), II = max(N, 64) cycles (docs/timing.md), and the geometry decides how many there are: ceil(M / tile M) x
// ceil(K / rows) x ceil(N / n-tile) -- 16 on the 128 x 128 preset, 4 x as many on 64 x 64, 16 x on 32 x 32, a
// quarter on 256 x 256.
TEST_P(Geometry, CyclesScaleWithTheTilesTheArrayHolds) {
  const Shape& s = GetParam();
  const platform::VpConfig c = config_of(s);
  const std::size_t tile_m = std::min(s.cols, c.geometry.partitions);
  const std::uint64_t tile_n = c.geometry.psum_bank_bytes / 4, ii = std::max<std::uint64_t>(tile_n, 64);
  const std::size_t m = 512, k = 512, n = 1024;
  const fs::path stats = scratch(std::string(s.name) + "_stats.json");
  platform::GemmCommand cmd;
  cmd.gen = s.gen;
  cmd.config = c;
  cmd.mode = platform::SimMode::Timing;
  cmd.data_path = platform::DataPath::Host;  // the array's cycles, without device memory
  cmd.m = m, cmd.k = k, cmd.n = n;
  cmd.outputs.stats_json_path = stats.string();
  std::ostringstream out, err;
  ASSERT_EQ(platform::run_gemm(cmd, out, err), 0) << out.str() << err.str();
  const nlohmann::json j = read_json(stats);
  const std::uint64_t matmuls = (m + tile_m - 1) / tile_m * ((k + s.rows - 1) / s.rows) * (n / tile_n);
  EXPECT_EQ(j["micro_ops"]["matmul"], matmuls);
  EXPECT_EQ(j["busy_cycles"]["matmul"], matmuls * ii);
  EXPECT_EQ(j["macs"], std::uint64_t{m} * k * n);
  EXPECT_EQ(j["geometry"]["pe_rows"], s.rows);
  EXPECT_EQ(j["geometry"]["pe_cols"], s.cols);
  // The stream is the bottleneck: the span is its busy time plus at most one fill, drain and commit per
  // dependency on the stationary of the next k-tile.
  const std::uint64_t cycles = j["cycles"];
  EXPECT_GE(cycles, matmuls * ii);
  EXPECT_LE(cycles, matmuls * ii * 11 / 10 + 1000) << "more than 10% beyond the stream's busy time";
  // Peak and utilisation are of this array: 2 x rows x cols flops per cycle.
  EXPECT_DOUBLE_EQ(j["peak_tflops_bf16"].get<double>(), 2.0 * s.rows * s.cols * 2.4 / 1e3);
  const double pe_stream = static_cast<double>(matmuls) * ii * std::min<std::size_t>(s.rows, k) * tile_m;
  EXPECT_NEAR(j["utilisation"].get<double>(), pe_stream / (static_cast<double>(cycles) * s.rows * s.cols), 1e-9);
  fs::remove_all(stats.parent_path());
}

INSTANTIATE_TEST_SUITE_P(Arrays, Geometry, testing::ValuesIn(kShapes), shape_name);

// A geometry whose SBUF partition cannot hold one k-tile of one output tile is refused before planning, naming the
// key and what the tile needs (the planner divided by zero before it checked).
TEST(GeometryPlan, AnSbufTooSmallForOneTileIsAPreciseError) {
  platform::VpConfig c = platform::preset(isa::Generation::MARIANA);
  platform::apply_overrides(c, {"geometry.sbuf_partition_bytes=4096", "geometry.psum_bank_bytes=8192"});
  platform::GemmCommand cmd;
  cmd.config = c;
  cmd.m = 10, cmd.k = 10, cmd.n = 2048;
  std::ostringstream out, err;
  EXPECT_EQ(platform::run_gemm(cmd, out, err), 2) << out.str() << err.str();
  EXPECT_NE(err.str().find("geometry.sbuf_partition_bytes = 4096: one k-tile of one output tile needs 4116 bytes"),
            std::string::npos)
      << err.str();
  // A smaller n-tile fits.
  cmd.tile_n = 1024;
  std::ostringstream out2, err2;
  EXPECT_EQ(platform::run_gemm(cmd, out2, err2), 0) << out2.str() << err2.str();
}

}  // namespace
