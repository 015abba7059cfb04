// `pe-vp gemm --data-path dma` against the host data path and hand-derived expectations: the same bits for every
// operand kind, device-memory traffic that adds up, a roofline no run beats, time that follows device memory when it
// binds and not when the array does, and a precise error when the operands do not fit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {

std::string scratch() {
  const std::string dir = ::testing::TempDir() + "/pevp_gemm_dma_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

struct CliRun {
  int status = -1;
  std::string out;
};

CliRun pe_vp(const std::string& args) {
  static int n = 0;
  const std::string log = scratch() + "/log" + std::to_string(n++) + ".txt";
  const std::string cmd = std::string(PEVP_CLI) + " " + args + " > " + log + " 2>&1";
  CliRun r;
  const int raw = std::system(cmd.c_str());
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream f(log);
  r.out.assign(std::istreambuf_iterator<char>(f), {});
  return r;
}

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

nlohmann::json timing_stats(const std::string& args) {
  static int n = 0;
  const std::string path = scratch() + "/s" + std::to_string(n++) + ".json";
  const CliRun r = pe_vp("gemm --quiet --mode timing --stats-json " + path + " " + args);
  EXPECT_EQ(r.status, 0) << args << "\n" << r.out;
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

struct Case {
  const char* name;
  const char* args;
};

class DataPaths : public ::testing::TestWithParam<Case> {};

// C through DMA equals C through the host path byte for byte, and both equal the defined-order reference.
TEST_P(DataPaths, TheDmaPathGivesTheHostPathsBits) {
  const std::string dir = scratch();
  const std::string name = GetParam().name;
  const std::string dma = dir + "/" + name + "_dma.npy", host = dir + "/" + name + "_host.npy";
  const CliRun a = pe_vp(std::string("gemm --quiet --data-path dma --out ") + dma + " " + GetParam().args);
  const CliRun b = pe_vp(std::string("gemm --quiet --data-path host --out ") + host + " " + GetParam().args);
  ASSERT_EQ(a.status, 0) << a.out;
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_NE(a.out.find("bit-exact"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("memory: HBM read"), std::string::npos) << "the DMA run reports its memory figures\n" << a.out;
  const std::string c = file_bytes(dma);
  ASSERT_GT(c.size(), 128u);
  EXPECT_TRUE(c == file_bytes(host)) << name << ": C differs between the data paths";
}

// Every kind of SBUF content a plan loads: dense elements (several steps, a ragged shape), fp8 element pairs, MX words
// and scales, sparse weights and fmaps (3-D descriptors), MAVERICK's folded m-blocks, and fp32's Low_High pair.
INSTANTIATE_TEST_SUITE_P(
    Kinds, DataPaths,
    ::testing::Values(Case{"bf16_streamed", "--m 300 --k 700 --n 520 --sbuf-budget 16384"},
                      Case{"fp8_double_row", "--gen CAYMAN --dtype fp8_e4m3 --double-row --m 130 --k 600 --n 200"},
                      Case{"mxfp8", "--dtype mxfp8_e4m3 --m 160 --k 1100 --n 96"},
                      Case{"sparse_2_4", "--sparsity 2:4 --m 200 --k 520 --n 140"},
                      Case{"maverick_fold", "--gen MAVERICK --m 256 --k 384 --n 300"},
                      Case{"fp32_low_high", "--dtype fp32 --fp32-mode low_high --m 100 --k 300 --n 250"},
                      // Double-buffered B panels (D-GEMM-DMA-PANELS) with ragged chunks of the images at both ends.
                      Case{"bf16_panels", "--m 600 --k 1100 --n 1300 --tile-n 128 --sbuf-budget 12288"},
                      Case{"fp8_panels", "--gen CAYMAN --dtype fp8_e4m3 --double-row --m 520 --k 700 --n 1100 "
                                         "--tile-n 128 --sbuf-budget 12288"},
                      Case{"mxfp8_panels", "--dtype mxfp8_e4m3 --m 300 --k 1100 --n 1100 --tile-n 128 "
                                           "--sbuf-budget 16384"},
                      Case{"sparse_panels", "--sparsity 2:4 --m 520 --k 1040 --n 1100 --tile-n 128 "
                                            "--sbuf-budget 16384"},
                      Case{"maverick_panels", "--gen MAVERICK --m 600 --k 384 --n 1300 --tile-n 128 "
                                              "--sbuf-budget 8192"}),
    [](const auto& info) { return std::string(info.param.name); });

// Device-memory traffic adds up: every SBUF byte the plan loads and every descriptor (64 bytes) is read from HBM,
// and C (M x N fp32) is written to it exactly once.
TEST(GemmDma, DeviceMemoryTrafficIsTheOperandsTheDescriptorsAndC) {
  const nlohmann::json s = timing_stats("--m 256 --k 1024 --n 384");
  const nlohmann::json& m = s["memory"];
  std::uint64_t descriptors = 0;
  for (const auto& e : m["dma"]["engines"]) descriptors += e["descriptors"].get<std::uint64_t>();
  // The plan loads A (256 x 1024) and B (1024 x 384) once each in bf16 at this size (one round).
  const std::uint64_t operands = (256 * 1024 + 1024 * 384) * 2;
  EXPECT_EQ(m["hbm"]["bytes_read"].get<std::uint64_t>(), operands + 64 * descriptors);
  EXPECT_EQ(m["hbm"]["bytes_written"].get<std::uint64_t>(), 256u * 384u * 4u);
  const double seconds = s["simulated_time_ns"].get<double>() * 1e-9;
  const double moved = static_cast<double>(operands + 64 * descriptors + 256 * 384 * 4);
  EXPECT_NEAR(m["hbm"]["achieved_gbps"].get<double>(), moved / seconds / 1e9, 1e-6);
  EXPECT_NEAR(m["arithmetic_intensity"].get<double>(), 2.0 * 256 * 1024 * 384 / moved, 1e-9);
}

// No run beats its roofline: achieved TFLOPS <= min(peak, intensity x bandwidth), over shapes from memory- to
// compute-bound and two device-memory bandwidths.
TEST(GemmDma, AchievedTflopsNeverExceedTheRooflineBound) {
  for (const char* shape : {"--m 128 --k 8192 --n 128", "--m 512 --k 512 --n 2048", "--m 1024 --k 1024 --n 1024",
                            "--m 64 --k 4096 --n 1024", "--m 2048 --k 256 --n 256"})
    for (const char* bw : {"612.5", "100"}) {
      const nlohmann::json s = timing_stats(std::string(shape) + " --set hbm.bandwidth_gbps=" + bw);
      const double bound = s["memory"]["roofline_tflops"].get<double>();
      EXPECT_LE(s["tflops"].get<double>(), bound * (1 + 1e-9)) << shape << " at " << bw << " GB/s";
      EXPECT_LE(bound, s["peak_tflops"].get<double>() * (1 + 1e-9));
    }
}

// A memory-bound GEMM (m = 128, k = 8192, n = 128, bf16: 4 MiB of operands for 268 MFLOP) where device memory binds
// (100 GB/s, below the 15 data engines' 495): halving the bandwidth makes it take at least 1.6x the cycles.
TEST(GemmDma, AMemoryBoundGemmFollowsDeviceMemoryWhenItBinds) {
  const nlohmann::json full = timing_stats("--m 128 --k 8192 --n 128 --set hbm.bandwidth_gbps=100");
  const nlohmann::json half = timing_stats("--m 128 --k 8192 --n 128 --set hbm.bandwidth_gbps=50");
  const double ratio = half["cycles"].get<double>() / full["cycles"].get<double>();
  EXPECT_GE(ratio, 1.6);
  EXPECT_GT(half["array_accounting"]["waiting_for_data"].get<double>(), 0.5) << "the array waits for its data";
}

// A large bf16 GEMM keeps B resident in panels while A streams past them (D-GEMM-DMA-PANELS): 4096^3 on MARIANA loads
// B once (32 MiB) and A once per panel -- panels of 4 n-tiles, because a panel of p n-tiles and two A buffers of one
// m-block take 32 k-tiles x (p x 1 KiB + 2 x 256 B) of the 256 KiB partition (p <= 7) and a step's output tiles
// half of the 8 PSUM banks (p <= 4): 2 panels, A twice (64 MiB), 96 MiB in all. The array then binds, not memory:
// halving device memory's bandwidth changes the run by less than 10%.
TEST(GemmDma, ALargeBf16GemmKeepsBInPanelsAndHardlyMovesWithDeviceMemory) {
  const nlohmann::json full = timing_stats("--m 4096 --k 4096 --n 4096");
  const nlohmann::json half = timing_stats("--m 4096 --k 4096 --n 4096 --set hbm.bandwidth_gbps=306.25");
  EXPECT_EQ(full["memory"]["hbm"]["bytes_read"].get<double>() >= 96.0 * (1 << 20), true);
  EXPECT_LT(full["memory"]["hbm"]["bytes_read"].get<double>(), 97.0 * (1 << 20))
      << "the operands once each, A twice, plus the descriptors";
  const double ratio = half["cycles"].get<double>() / full["cycles"].get<double>();
  EXPECT_LT(ratio, 1.10);
  EXPECT_GE(ratio, 1.0);
  EXPECT_GT(full["utilisation"].get<double>(), 0.9);
}

// A compute-bound GEMM (fp32 2048^3: the array at a quarter of its bf16 rate) changes by less than 10% when device
// memory's bandwidth is halved.
TEST(GemmDma, AComputeBoundGemmHardlyMovesWithDeviceMemory) {
  const nlohmann::json full = timing_stats("--dtype fp32 --m 2048 --k 2048 --n 2048");
  const nlohmann::json half = timing_stats("--dtype fp32 --m 2048 --k 2048 --n 2048 --set hbm.bandwidth_gbps=306.25");
  const double ratio = half["cycles"].get<double>() / full["cycles"].get<double>();
  EXPECT_LT(ratio, 1.10);
  EXPECT_GE(ratio, 1.0);
}

// Operands that do not fit device memory: a precise error (status 3), not a crash or a silent truncation.
TEST(GemmDma, OperandsLargerThanDeviceMemoryAreAPreciseError) {
  // 1 MiB cannot hold the 256 rings of 256 descriptors (4 MiB); 5 MiB holds them but not A's and B's images (2 MiB
  // past the rings' 4 MiB, with the 1 MiB of C before them).
  const CliRun rings = pe_vp("gemm --quiet --m 512 --k 1024 --n 512 --set hbm.bytes=1048576");
  EXPECT_EQ(rings.status, 3) << rings.out;
  EXPECT_NE(rings.out.find("device memory (hbm.bytes = 1048576) cannot hold the DMA rings: 4194304 bytes"),
            std::string::npos)
      << rings.out;
  const CliRun images = pe_vp("gemm --quiet --m 512 --k 1024 --n 512 --set hbm.bytes=5242880");
  EXPECT_EQ(images.status, 3) << images.out;
  EXPECT_NE(images.out.find("more than the 1048576 available (hbm.bytes)"), std::string::npos) << images.out;
}

// The host data path still moves nothing through device memory.
TEST(GemmDma, TheHostPathLeavesDeviceMemoryAlone) {
  const nlohmann::json s = timing_stats("--data-path host --m 256 --k 512 --n 256");
  EXPECT_EQ(s["memory"]["hbm"]["bytes_read"].get<std::uint64_t>(), 0u);
  EXPECT_FALSE(s["memory"].contains("roofline_tflops"));
  EXPECT_EQ(s["array_accounting"]["waiting_for_data"].get<double>(), 0.0);
}

}  // namespace
