// The timing model as software sees it through the platform: every stall
// reason triggered by its CSR, the row-group counters read over the bus, the
// per-tile counters in timing-only mode, and the trace and VCD a run leaves.
// One VirtualPlatform per test (SystemC elaborates once per process).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "pevp/platform/calibration.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/virtual_platform.h"
#include "pevp/platform/recorder.h"
#include "pevp/trace/trace_events.h"

namespace {

using namespace pevp;
using platform::Driver;
using platform::StreamSpec;

const StreamSpec kBf16{"bf16", isa::Dtype::BFLOAT16, isa::Fp32Mode::None, 128, 128, true, 0};

platform::VpConfig config(platform::SimMode mode = platform::SimMode::Both) {
  platform::VpConfig c = platform::preset(isa::Generation::MARIANA);
  c.mode = mode;
  return c;
}

// Two weight loads on disjoint 64-row tiles: independent work.
std::vector<isa::RawInstruction> two_tiles(isa::Generation g) {
  std::vector<isa::RawInstruction> out;
  for (unsigned row0 : {0u, 64u}) {
    isa::LdweightsArgs a;
    a.src = isa::Pattern::row(row0 * 262144u, 128);
    a.num_active_rows = 64;
    a.tile = {row0, 64, 0, 128};
    out.push_back(isa::encode_ldweights(g, a));
  }
  return out;
}

struct StallCase {
  const char* name;
  arrseq::Stall reason;
  std::function<void(Driver&)> setup;
  bool independent_tiles;
};

class Stalls : public ::testing::TestWithParam<StallCase> {};

TEST_P(Stalls, EachCsrCausesItsOwnStall) {
  const StallCase& sc = GetParam();
  platform::VirtualPlatform vp(config());
  vp.run([&](Driver& d) {
    d.arm();
    sc.setup(d);
    d.submit(sc.independent_tiles ? two_tiles(isa::Generation::MARIANA)
                                  : platform::calibration_stream(isa::Generation::MARIANA, kBf16, 8));
    const platform::Completion c = d.wait_idle();
    ASSERT_TRUE(c.done);
    const nlohmann::json s = platform::run_stats(vp.platform());
    for (unsigned i = 0; i < arrseq::kStallKinds; ++i) {
      const auto why = static_cast<arrseq::Stall>(i);
      const std::uint64_t cycles = s["stall_cycles"][arrseq::name(why)].get<std::uint64_t>();
      // Dependency stalls are part of any stream (a Matmul waits for its
      // weights); the P2F case needs the inter-instruction delay to fill up.
      const bool expected_too = why == arrseq::Stall::Dependency ||
                                (sc.reason == arrseq::Stall::P2fFull && why == arrseq::Stall::InterInstrDelay);
      if (why == sc.reason) {
        EXPECT_GT(cycles, 0u) << arrseq::name(why);
      } else if (!expected_too) {
        EXPECT_EQ(cycles, 0u) << arrseq::name(why);
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(
    Csr, Stalls,
    ::testing::Values(
        StallCase{"IfifoSingleEntry", arrseq::Stall::IfifoFull,
                  [](Driver& d) { d.write_field("top", "queue_cfg", "fifo_size_sel", 1); }, false},
        StallCase{"NoDependencyCheck", arrseq::Stall::Serialised,
                  [](Driver& d) { d.write_field("top", "queue_cfg", "disable_dependency_check", 1); }, true},
        StallCase{"ThrottleOnXbus0", arrseq::Stall::Throttle,
                  [](Driver& d) { d.write_field("protected", "throttle_cfg", "disable_throttle", 0x1FE); }, false},
        StallCase{"InterInstructionDelay", arrseq::Stall::InterInstrDelay,
                  [](Driver& d) {
                    d.write_field("cluster", "arr_cluster_cfg", "en_inter_instr_dly", 1);
                    d.write_field("cluster", "arr_cluster_cfg", "inter_instr_dly_cnt", 63);
                  },
                  true},
        StallCase{"P2fAlmostFull", arrseq::Stall::P2fFull,
                  [](Driver& d) {
                    d.write_field("cluster", "arr_cluster_cfg", "en_inter_instr_dly", 1);
                    d.write_field("cluster", "arr_cluster_cfg", "inter_instr_dly_cnt", 63);
                    d.write_field("cluster", "arr_cluster_cfg", "p2fifo_af", 1);
                  },
                  false},
        StallCase{"StaggerWake", arrseq::Stall::StaggerWake,
                  [](Driver& d) {
                    for (int g = 0; g < 4; ++g) {
                      const std::string rg = "rg" + std::to_string(g) + "_ctrl1";
                      d.write_field("cluster", "array_stagger_" + rg, rg, 0);
                    }
                  },
                  false}),
    [](const ::testing::TestParamInfo<StallCase>& i) { return std::string(i.param.name); });

// The VP's row-group counters, read over the bus: one 32-cycle weight load and
// one 512-column stream on the full array, then idle.
TEST(RowGroupCounters, CountActiveAndIdleCyclesAsSoftwareReadsThem) {
  platform::VirtualPlatform vp(config());
  vp.run([&](Driver& d) {
    d.arm();  // pulses cntr_rst: the idle count starts here
    const StreamSpec s{"one", isa::Dtype::BFLOAT16, isa::Fp32Mode::None, 512, 128, false, 0};
    d.submit(platform::calibration_stream(isa::Generation::MARIANA, s, 1));
    ASSERT_TRUE(d.wait_idle().done);
    sc_core::wait(sc_core::sc_time(2, sc_core::SC_US));  // past the last PSUM commit
    for (int g = 0; g < 4; ++g) {
      const std::string rg = "rg" + std::to_string(g);
      EXPECT_EQ(d.read_counter48("vp", rg + "_mm_active_cnt_lsb"), 512u) << rg;
      EXPECT_EQ(d.read_counter48("vp", rg + "_wl_active_cnt_lsb"), 32u) << rg;
      const std::uint64_t idle = d.read_counter48("vp", rg + "_idle_cnt_lsb");
      EXPECT_GT(idle, 2u * 2400 - 600) << "about 2 us of idle at 2.4 GHz";
      const std::uint64_t idle_later = d.read_counter48("vp", rg + "_idle_cnt_lsb");
      EXPECT_GE(idle_later, idle) << "the idle count runs with simulated time";
    }
    // cntr_rst clears them.
    d.write_field("top", "perf_cntr_cfg", "cntr_rst", 1);
    EXPECT_EQ(d.read_counter48("vp", "rg0_mm_active_cnt_lsb"), 0u);
    // Only the bus accesses since the reset have passed: the write's
    // read-modify-write and this read, about 5 x 20 ns = 240 cycles.
    EXPECT_LE(d.read_counter48("vp", "rg0_idle_cnt_lsb"), 300u);
  });
}

// Timing-only mode moves no data, but every counter counts as in the other modes.
TEST(TimingOnly, PerTileCountersCountTruthfully) {
  platform::VirtualPlatform vp(config(platform::SimMode::Timing));
  vp.run([&](Driver& d) {
    d.arm();
    d.submit(platform::calibration_stream(isa::Generation::MARIANA, kBf16, 5));
    ASSERT_TRUE(d.wait_idle().done);
    EXPECT_EQ(d.read_counter48("top", "arr_seq_ififo_perf_matmul.tile_128x128_tile0_instr_cnt_lsb"), 5u);
    EXPECT_EQ(d.read_counter48("top", "arr_seq_ififo_perf_weight_load.tile_128x128_tile0_instr_cnt_lsb"), 5u);
    EXPECT_EQ(d.read_counter48("vp", "retired_cnt_lsb"), 10u);
    // Nothing was written: PSUM still holds its reset contents.
    std::uint32_t word = 0xDEADBEEF;
    d.read(d.map().psum, &word, 4);
    EXPECT_EQ(word, 0u);
  });
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A traced run: the trace passes the structural check Perfetto needs, has one
// stream / fill-drain / commit slice per Matmul and row group, a weight-load
// slice per Ldweights, APB accesses by register name; the VCD shows the IFIFO
// and the row groups busy, and done at the end.
TEST(Recorder, TraceAndVcdOfARun) {
  // This process's own names: ctest runs the tests in parallel processes.
  const std::string dir = ::testing::TempDir() + "/pevp_recorder_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  platform::RecorderOptions o{dir + "/run.json", dir + "/run.vcd", dir + "/stats.json"};
  platform::VirtualPlatform vp(config());
  auto recorder = std::make_unique<platform::Recorder>(vp.platform(), o);
  vp.run([&](Driver& d) {
    d.arm();
    d.submit(platform::calibration_stream(isa::Generation::MARIANA, kBf16, 3));
    ASSERT_TRUE(d.wait_idle().done);
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
  });
  std::string error;
  ASSERT_TRUE(recorder->finish(&error)) << error;
  const nlohmann::json doc = nlohmann::json::parse(slurp(o.trace_path));
  const std::vector<std::string> problems = trace::check_trace(doc);
  EXPECT_TRUE(problems.empty()) << (problems.empty() ? "" : problems.front());
  std::map<std::string, int> by_name;
  bool apb_by_name = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    by_name[e["name"].get<std::string>()]++;
    if (e["name"] == "W top.queue_cfg") apb_by_name = true;
    if (e["name"] == "stream") {
      EXPECT_EQ(e["args"]["opcode"], "MATMUL");
      EXPECT_EQ(e["args"]["n"], 128);
      EXPECT_EQ(e["args"]["in_dtype"], "BFLOAT16");
      EXPECT_TRUE(e["args"].contains("psum_banks"));
    }
  }
  EXPECT_EQ(by_name["stream"], 3 * 4) << "3 Matmuls on 4 row groups";
  EXPECT_EQ(by_name["fill/drain"], 3 * 4);
  EXPECT_EQ(by_name["psum commit"], 3 * 4);
  EXPECT_EQ(by_name["weight load"], 3 * 4);
  EXPECT_EQ(by_name["moving read"], 3);
  EXPECT_EQ(by_name["write"], 3) << "PSUM port: 3 overwriting commits";
  EXPECT_TRUE(apb_by_name);

  const std::string vcd = slurp(o.vcd_path);
  EXPECT_NE(vcd.find("$var wire 17 $ ififo_level"), std::string::npos) << vcd.substr(0, 600);
  EXPECT_NE(vcd.find("rg3_busy"), std::string::npos);
  EXPECT_NE(vcd.find("$enddefinitions $end"), std::string::npos);
  const nlohmann::json stats = nlohmann::json::parse(slurp(o.stats_json_path));
  EXPECT_EQ(stats["micro_ops"]["matmul"], 3);
  EXPECT_EQ(stats["instructions"]["by_opcode"]["MATMUL"]["instructions_retired"], 3);
  EXPECT_GT(stats["cycles"].get<std::uint64_t>(), 3u * 128);
}

TEST(Recorder, UnwritablePathsAreRefusedBeforeSimulating) {
  platform::RecorderOptions o;
  o.trace_path = "/nonexistent-dir/t.json";
  EXPECT_EQ(platform::Recorder::check_paths(o), "/nonexistent-dir/t.json: no such directory '/nonexistent-dir'");
  o.trace_path.clear();
  o.vcd_path = ::testing::TempDir();
  EXPECT_NE(platform::Recorder::check_paths(o).find("is a directory"), std::string::npos);
  o.vcd_path.clear();
  o.stats_json_path = "stats.json";  // the working directory
  EXPECT_EQ(platform::Recorder::check_paths(o), "");
}

}  // namespace
