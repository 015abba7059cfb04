// The energy section of a run's statistics (docs/energy.md) on small GEMMs whose actions are counted by hand: the
// MACs of each kind, the array's SBUF reads and PSUM traffic, the DMA path's SBUF writes and device-memory bytes,
// the leakage of every PE over the run's cycles -- each times its energy.* price (the 45 nm defaults, or a price set
// on the command line), and the totals, power and TOPS/W that follow.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "pevp/platform/config.h"
#include "pevp/platform/gemm.h"
#include "gemm_test_util.h"

namespace {

using namespace pevp;
namespace fs = std::filesystem;
using nlohmann::json;

struct GemmRun {
  json stats;
  std::string out;
};

// `pe-vp gemm` timing-only on MARIANA's preset (128 x 128, 2.4 GHz) with the statistics written as JSON.
GemmRun gemm(std::size_t m, std::size_t k, std::size_t n, const std::string& dtype, bool double_row,
         platform::DataPath path, const std::vector<std::string>& sets = {}) {
  const fs::path stats = gemm_test::scratch("pevp_energy_test_", "stats.json");
  platform::GemmCommand cmd;
  cmd.gen = isa::Generation::MARIANA;
  platform::VpConfig c = platform::preset(cmd.gen);
  platform::apply_overrides(c, sets);
  cmd.config = c;
  cmd.dtype = dtype;
  cmd.double_row = double_row;
  cmd.mode = platform::SimMode::Timing;
  cmd.data_path = path;
  cmd.m = m, cmd.k = k, cmd.n = n;
  cmd.outputs.stats_json_path = stats.string();
  std::ostringstream out, err;
  EXPECT_EQ(platform::run_gemm(cmd, out, err), 0) << out.str() << err.str();
  std::ifstream in(stats);
  GemmRun r{json::parse(in), out.str()};
  fs::remove_all(stats.parent_path());
  return r;
}

constexpr double kPes = 128.0 * 128.0;
constexpr double kLeakPerCycle = kPes * 0.2;  // energy.static_pj_per_pe_cycle: 3276.8 pJ per cycle on 128 x 128

// The totals every section must satisfy whatever its counts: the components sum to the total, power is the total
// over the run's time, TOPS/W is 2 x MACs per pJ.
void expect_consistent(const json& e, const json& s) {
  const json& c = e["components_pj"];
  double sum = 0;
  for (const auto& [k, v] : c.items()) sum += v.get<double>();
  EXPECT_NEAR(e["total_pj"].get<double>(), sum, 1e-6 * sum);
  const double seconds = s["simulated_time_ns"].get<double>() * 1e-9;
  EXPECT_NEAR(e["average_power_w"].get<double>(), e["total_pj"].get<double>() * 1e-12 / seconds, 1e-9);
  EXPECT_NEAR(e["tops_per_w"].get<double>(), 2.0 * s["macs"].get<double>() / e["total_pj"].get<double>(), 1e-12);
  EXPECT_NEAR(e["edp_pj_s"].get<double>(), e["total_pj"].get<double>() * seconds, 1e-9);
}

// One 128 x 128 tile, host path: A [128 x 128] stationary, B [128 x 64] streamed.
//   MACs 128 x 128 x 64 = 1048576 bf16 x 2.0 pJ = 2097152 pJ
//   SBUF read: the weights 128 partitions x 128 x 2 B = 32768 B, the moving 128 x 64 x 2 B = 16384 B;
//              49152 B x 2.5 pJ = 122880 pJ
//   PSUM: 128 partitions x 64 fp32 written = 32768 B x 1.25 pJ = 40960 pJ
//   no device memory, no DMA; leakage = cycles x 16384 PEs x 0.2 pJ.
TEST(Energy, OneTileByHand) {
  const GemmRun r = gemm(128, 128, 64, "bf16", false, platform::DataPath::Host);
  const json& e = r.stats["energy"];
  const double cycles = r.stats["cycles"].get<double>();
  EXPECT_EQ(e["counts"]["macs_by_dtype"]["bf16"], 1048576);
  EXPECT_EQ(e["counts"]["sbuf_read_bytes"], 49152);
  EXPECT_EQ(e["counts"]["psum_bytes"], 32768);
  for (const char* zero : {"sbuf_write_bytes", "hbm_bytes", "dma_bytes"}) EXPECT_EQ(e["counts"][zero], 0) << zero;
  EXPECT_DOUBLE_EQ(e["components_pj"]["mac"].get<double>(), 2097152.0);
  EXPECT_DOUBLE_EQ(e["components_pj"]["sbuf_read"].get<double>(), 122880.0);
  EXPECT_DOUBLE_EQ(e["components_pj"]["psum"].get<double>(), 40960.0);
  EXPECT_DOUBLE_EQ(e["components_pj"]["leakage"].get<double>(), cycles * kLeakPerCycle);
  EXPECT_NEAR(e["total_pj"].get<double>(), 2260992.0 + cycles * kLeakPerCycle, 1e-6);
  expect_consistent(e, r.stats);
  EXPECT_NE(r.out.find("TOPS/W"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("average power"), std::string::npos) << r.out;
}

// Two k-tiles accumulating into one PSUM group: K = 256 on 128 rows.
//   MACs 128 x 256 x 64 = 2097152 x 2.0 = 4194304 pJ
//   SBUF read: 2 x (32768 + 16384) = 98304 B x 2.5 = 245760 pJ
//   PSUM: the first k-tile writes 32768 B, the second reads and writes them (65536 B): 98304 B x 1.25 = 122880 pJ
TEST(Energy, AccumulationReadsPsumToo) {
  const GemmRun r = gemm(128, 256, 64, "bf16", false, platform::DataPath::Host);
  const json& e = r.stats["energy"];
  EXPECT_EQ(e["counts"]["macs_by_dtype"]["bf16"], 2097152);
  EXPECT_EQ(e["counts"]["sbuf_read_bytes"], 98304);
  EXPECT_EQ(e["counts"]["psum_bytes"], 98304);
  EXPECT_DOUBLE_EQ(e["components_pj"]["mac"].get<double>(), 4194304.0);
  EXPECT_DOUBLE_EQ(e["components_pj"]["sbuf_read"].get<double>(), 245760.0);
  EXPECT_DOUBLE_EQ(e["components_pj"]["psum"].get<double>(), 122880.0);
  expect_consistent(e, r.stats);
}

// The MAC's price follows its dtype and mode. fp32: 1048576 MACs x 4.6 pJ = 4823449.6 pJ, and SBUF bytes of 4 B
// elements: (128 x 128 + 128 x 64) x 4 = 98304 B. fp8 double_row: 256 contraction rows in one k-tile of 128 PE
// rows, 128 x 256 x 64 = 2097152 MACs x 0.65 pJ = 1363148.8 pJ; SBUF: the weights' 128 partitions x 128 columns x
// 2 rows of 1 B = 32768 B, the moving 128 x 64 x 2 B = 16384 B.
// (One run per test: SystemC elaborates one platform per process.)
TEST(Energy, AnFp32MacCostsFp32Energy) {
  const GemmRun f = gemm(128, 128, 64, "fp32", false, platform::DataPath::Host);
  const json& fe = f.stats["energy"];
  EXPECT_EQ(fe["counts"]["macs_by_dtype"]["fp32"], 1048576);
  EXPECT_EQ(fe["counts"]["macs_by_dtype"]["bf16"], 0);
  EXPECT_NEAR(fe["components_pj"]["mac"].get<double>(), 4823449.6, 1e-6);
  EXPECT_EQ(fe["counts"]["sbuf_read_bytes"], 98304);
  expect_consistent(fe, f.stats);
}

TEST(Energy, AnFp8DoubleRowMacCostsItsModesEnergy) {
  const GemmRun d = gemm(128, 256, 64, "fp8_e4m3fn", true, platform::DataPath::Host);
  const json& de = d.stats["energy"];
  EXPECT_EQ(de["counts"]["macs_by_dtype"]["fp8_double_row"], 2097152);
  EXPECT_EQ(de["counts"]["macs_by_dtype"]["fp8"], 0);
  EXPECT_NEAR(de["components_pj"]["mac"].get<double>(), 1363148.8, 1e-6);
  EXPECT_EQ(de["counts"]["sbuf_read_bytes"], 49152);
  expect_consistent(de, d.stats);
}

// The prices are configuration keys: a MAC priced at 1 pJ and nothing else priced gives exactly the MAC count.
TEST(Energy, PricesAreConfigurationKeys) {
  const GemmRun r = gemm(128, 128, 64, "bf16", false, platform::DataPath::Host,
                     {"energy.mac_bf16_pj=1", "energy.sbuf_read_pj_per_byte=0", "energy.psum_pj_per_byte=0",
                      "energy.static_pj_per_pe_cycle=0"});
  const json& e = r.stats["energy"];
  EXPECT_DOUBLE_EQ(e["total_pj"].get<double>(), 1048576.0);
  EXPECT_DOUBLE_EQ(e["tops_per_w"].get<double>(), 2.0);  // 2 operations per pJ
}

// The DMA path: A (128 x 128 bf16, 32768 B) and B (128 x 64 bf16, 16384 B) come from device memory into SBUF, C
// (128 x 64 fp32, 32768 B) goes from PSUM back to device memory. The array's counts are as in OneTileByHand; the
// DMA engines add SBUF writes of 49152 B and PSUM reads of 32768 B, and write 81920 B in all. Device memory is
// written C's 32768 B and read the operands' 49152 B plus the engines' 64-byte descriptors; its bytes are the
// memory section's own counters.
TEST(Energy, TheDmaPathAddsDeviceMemoryAndTransfers) {
  const GemmRun r = gemm(128, 128, 64, "bf16", false, platform::DataPath::Dma);
  const json& e = r.stats["energy"];
  const json& hbm = r.stats["memory"]["hbm"];
  const std::uint64_t read = hbm["bytes_read"], written = hbm["bytes_written"];
  EXPECT_EQ(written, 32768u);
  ASSERT_GE(read, 49152u);
  EXPECT_EQ((read - 49152) % 64, 0u) << "the operands and whole descriptors";
  EXPECT_EQ(e["counts"]["hbm_bytes"], read + written);
  EXPECT_EQ(e["counts"]["sbuf_write_bytes"], 49152);
  EXPECT_EQ(e["counts"]["sbuf_read_bytes"], 49152);
  EXPECT_EQ(e["counts"]["psum_bytes"], 32768 + 32768);
  EXPECT_EQ(e["counts"]["dma_bytes"], 81920);
  // Device memory at 31.76 pJ a byte; 81920 B x 2.5 pJ = 204800 pJ of DMA; 49152 B x 2.5 pJ = 122880 pJ of SBUF
  // writes; (32768 + 32768) B x 1.25 pJ = 81920 pJ of PSUM.
  EXPECT_NEAR(e["components_pj"]["hbm"].get<double>(), static_cast<double>(read + written) * 31.76, 1e-6);
  EXPECT_DOUBLE_EQ(e["components_pj"]["dma"].get<double>(), 204800.0);
  EXPECT_DOUBLE_EQ(e["components_pj"]["sbuf_write"].get<double>(), 122880.0);
  EXPECT_DOUBLE_EQ(e["components_pj"]["psum"].get<double>(), 81920.0);
  expect_consistent(e, r.stats);
}

// A price outside 0 .. 10^6 pJ is refused naming the key.
TEST(Energy, APriceOutOfRangeIsRefused) {
  platform::VpConfig c = platform::preset(isa::Generation::MARIANA);
  try {
    platform::apply_overrides(c, {"energy.hbm_pj_per_byte=-1"});
    ADD_FAILURE() << "accepted";
  } catch (const platform::ConfigError& e) {
    EXPECT_EQ(e.key(), "energy.hbm_pj_per_byte");
    EXPECT_EQ(std::string(e.what()), "energy.hbm_pj_per_byte = \"-1\": out of range (0 .. 1000000 pJ)");
  }
}

}  // namespace
