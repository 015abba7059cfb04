// The figures a user reads -- utilisation, peak and achieved TFLOPS, where the PE-cycles went -- against values
// derived by hand from docs/timing.md ("Figures"): the Timeline's accounting for single Matmuls, then the whole
// platform through `pe-vp gemm --stats-json`, where tflops = utilisation x peak_tflops must hold for every dtype,
// mode and bottleneck, and the accounting must sum to the whole array.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "pevp/arr_seq/timeline.h"

namespace {

using namespace pevp;
using arrseq::OpShape;
using arrseq::Stall;
using arrseq::Timeline;
using arrseq::TimingCsrs;

constexpr isa::TileRect kFull{0, 128, 0, 128};

OpShape matmul(isa::TileRect t, unsigned k, unsigned m, std::uint64_t n, unsigned bytes = 2) {
  OpShape s;
  s.kind = pe::MicroOpKind::Matmul;
  s.tile = t;
  s.k = k;
  s.m = m;
  s.n = n;
  s.elem_bytes = bytes;
  s.fp32 = bytes == 4;
  s.banks = 0x01;
  s.macs = std::uint64_t{k} * m * n;
  arrseq::place_on(s, isa::ArrayGeometry{});
  return s;
}

TimingCsrs reset_csrs() {
  TimingCsrs c;
  c.cluster.inter_instr_dly_cnt = 8;
  c.cluster.p2fifo_af = 12;
  c.cluster.stagger_idle_limit = {0xffff, 0xffff, 0xffff, 0xffff};
  return c;
}

// One Matmul on the full 128 x 128 tile; its accounting in PE-cycles.
arrseq::ArrayAccounting account_one(const OpShape& s, arrseq::TimingParams p = {}) {
  Timeline t(arrseq::CostModel{p}, 16);
  t.schedule(s, 0, reset_csrs());
  return t.stats().pe_cycles;
}

TEST(Accounting, AFullBf16MatmulIsAllUseful) {
  const auto a = account_one(matmul(kFull, 128, 128, 512));
  EXPECT_DOUBLE_EQ(a.useful, 128.0 * 128 * 512);
  EXPECT_DOUBLE_EQ(a.short_stream + a.sbuf_bandwidth + a.throttle + a.mapping + a.transpose, 0.0);
}

TEST(Accounting, AShortStreamPaysTheIiFloor) {
  // N = 32 < MM_INIT_LATENCY 64: the stream holds the tile 64 cycles for 32 cycles of data.
  const auto a = account_one(matmul(kFull, 128, 128, 32));
  EXPECT_DOUBLE_EQ(a.useful, 128.0 * 128 * 32);
  EXPECT_DOUBLE_EQ(a.short_stream, 128.0 * 128 * 32);
}

TEST(Accounting, InactiveRowsAndColumnsAreMapping) {
  // K = 100, M = 40 on the full tile for N = 512 cycles: 128 x 128 - 100 x 40 PEs idle the whole occupancy.
  const auto a = account_one(matmul(kFull, 100, 40, 512));
  EXPECT_DOUBLE_EQ(a.useful, 100.0 * 40 * 512);
  EXPECT_DOUBLE_EQ(a.mapping, (128.0 * 128 - 100 * 40) * 512);
}

TEST(Accounting, AnSbufReadSlowerThanTheIiIsSbufBandwidth) {
  // 1 byte per cycle: N = 512 bf16 elements take 1024 cycles to read, the II is 512.
  arrseq::TimingParams p;
  p.sbuf_read_bytes_per_cycle = 1;
  Timeline t(arrseq::CostModel{p}, 16);
  const arrseq::Slot s = t.schedule(matmul(kFull, 128, 128, 512), 0, reset_csrs());
  EXPECT_EQ(s.stalls[static_cast<unsigned>(Stall::SbufBandwidth)], 512u);
  const auto& a = t.stats().pe_cycles;
  EXPECT_DOUBLE_EQ(a.useful, 128.0 * 128 * 512);
  EXPECT_DOUBLE_EQ(a.sbuf_bandwidth, 128.0 * 128 * 512);
}

TEST(Accounting, Fp32CountsItsOwnRate) {
  // fp32 inputs: c = 4, so N = 128 needs 512 data cycles -- all useful at fp32's peak, none short.
  const auto a = account_one(matmul(kFull, 128, 128, 128, 4));
  EXPECT_DOUBLE_EQ(a.useful, 128.0 * 128 * 512);
  EXPECT_DOUBLE_EQ(a.short_stream, 0.0);
}

// ---- the whole platform --------------------------------------------------------------------------------------

std::string scratch() {
  const std::string dir = ::testing::TempDir() + "/pevp_figures_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

nlohmann::json gemm_stats(const std::string& args) {
  static int n = 0;
  const std::string path = scratch() + "/s" + std::to_string(n++) + ".json";
  const std::string cmd = std::string(PEVP_CLI) + " gemm --quiet --mode timing --stats-json " + path + " " + args +
                          " > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

constexpr double kBf16Peak = 2.0 * 128 * 128 * 2.4 / 1e3;  // TFLOPS: R x C MACs per cycle at 2.4 GHz

struct FigureCase {
  const char* name;
  const char* args;
  double peak;  // the dtype and mode's peak, by hand
};

class Figures : public ::testing::TestWithParam<FigureCase> {};

TEST_P(Figures, TflopsIsUtilisationTimesTheDtypesPeakAndTheAccountingSumsToOne) {
  const nlohmann::json s = gemm_stats(GetParam().args);
  const double util = s["utilisation"], tflops = s["tflops"], peak = s["peak_tflops"];
  EXPECT_NEAR(peak, GetParam().peak, 1e-9 * GetParam().peak);
  EXPECT_NEAR(tflops, util * peak, 1e-9 * tflops);
  // Achieved TFLOPS from the run's own MACs and time, independently of the accounting.
  const double seconds = s["simulated_time_ns"].get<double>() * 1e-9;
  EXPECT_NEAR(tflops, 2.0 * s["macs"].get<double>() / seconds / 1e12, 1e-9 * tflops);
  double sum = 0;
  for (const auto& [k, v] : s["array_accounting"].items()) {
    EXPECT_GE(v.get<double>(), 0.0) << k;
    sum += v.get<double>();
  }
  EXPECT_NEAR(sum, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(s["array_accounting"]["useful"].get<double>(), util);
}

INSTANTIATE_TEST_SUITE_P(
    DtypesModesBottlenecks, Figures,
    ::testing::Values(FigureCase{"bf16", "--m 512 --k 512 --n 2048", kBf16Peak},
                      FigureCase{"fp32", "--dtype fp32 --m 256 --k 256 --n 1024", kBf16Peak / 4},
                      FigureCase{"tf32", "--dtype tf32 --m 256 --k 256 --n 1024", kBf16Peak / 4},
                      FigureCase{"fp8_double_row", "--gen CAYMAN --dtype fp8_e4m3 --double-row --m 256 --k 1024 --n 1024",
                                 2 * kBf16Peak},
                      FigureCase{"sbuf_bound", "--set timing.sbuf_read_bytes_per_cycle=1 --m 512 --k 512 --n 2048",
                                 kBf16Peak},
                      FigureCase{"ragged", "--m 100 --k 300 --n 70", kBf16Peak}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Figures, HalvingSbufBandwidthHalvesUtilisationWithTflops) {
  // bf16 at N = 512: 8 B per cycle reads a tile's 1 KiB per partition in 128 cycles (hidden under the II of 512);
  // 1 B per cycle takes 1024 -- twice the II, so the array does the same work in about twice the time. On the host
  // data path: through DMA this shape waits for device memory, which hides the array's own SBUF read.
  const nlohmann::json fast = gemm_stats("--data-path host --m 512 --k 512 --n 2048");
  const nlohmann::json slow =
      gemm_stats("--data-path host --set timing.sbuf_read_bytes_per_cycle=1 --m 512 --k 512 --n 2048");
  const double ratio_tflops = slow["tflops"].get<double>() / fast["tflops"].get<double>();
  const double ratio_util = slow["utilisation"].get<double>() / fast["utilisation"].get<double>();
  EXPECT_NEAR(ratio_util, ratio_tflops, 1e-9);
  EXPECT_LT(ratio_util, 0.55);
  EXPECT_GT(slow["array_accounting"]["sbuf_bandwidth"].get<double>(), 0.4);
  EXPECT_GT(slow["stall_cycles"]["sbuf_bandwidth"].get<std::uint64_t>(), 0u);
}

}  // namespace
