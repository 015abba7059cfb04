// `pe-vp cosim-check` through its library function (run_cosim_check): lock-step runs of the four register files
// that must find no mismatch, a deliberately injected mismatch that must be found, reported and written as an FST
// window, and the argument errors. Without Verilator (rtl_available() false) the runs are skipped and the command
// must say so with its own status.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "pevp/platform/cosim_check.h"
#include "pevp/regfile_rtl/rtl_regfile.h"

namespace {

using pevp::platform::CosimCheckCommand;
using pevp::platform::CosimCheckResult;
using pevp::platform::run_cosim_check;
namespace fs = std::filesystem;

struct Outcome {
  int status = -1;
  std::string out, err;
  CosimCheckResult r;
};

Outcome run(const CosimCheckCommand& cmd) {
  Outcome x;
  std::ostringstream out, err;
  x.status = run_cosim_check(cmd, out, err, &x.r);
  x.out = out.str();
  x.err = err.str();
  return x;
}

// A directory of this process's own, removed when the process ends (one test per process).
fs::path scratch(const std::string& name) {
  struct Dir {
    fs::path path = fs::temp_directory_path() / ("pevp_cosim_check_" + std::to_string(::getpid()));
    Dir() {
      std::error_code ignored;  // a killed run with the same pid may have left files behind
      fs::remove_all(path, ignored);
      fs::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path / name;
}

// A lock-step run that must agree everywhere, and must have exercised what the traffic promises.
// `hardware`: the file has plain RO fields and counters (top, vp), so the run must have driven them and wrapped a
// counter (a 1,000,000-cycle run has five wrap campaigns).
void expect_clean(const std::string& regfile, std::uint64_t cycles, std::uint64_t seed, bool hardware) {
  if (!pevp::regfile_rtl::rtl_available()) GTEST_SKIP() << "no Verilated RTL in this build";
  CosimCheckCommand cmd;
  cmd.regfile = regfile;
  cmd.cycles = cycles;
  cmd.seed = seed;
  cmd.fst = scratch(regfile + ".fst").string();
  const Outcome x = run(cmd);
  EXPECT_EQ(x.status, pevp::platform::kCosimPass) << x.out << x.err;
  EXPECT_EQ(x.r.mismatches, 0u) << x.out;
  EXPECT_EQ(x.r.violations, 0u) << x.out;
  EXPECT_EQ(x.r.cycles, cycles);
  EXPECT_FALSE(fs::exists(cmd.fst)) << "no mismatch, no waveform";
  // About one transfer every three cycles; every address class, strobe kind and stimulus occurs.
  EXPECT_GT(x.r.accesses, cycles / 4);
  EXPECT_EQ(x.r.accesses, x.r.reads + x.r.writes);
  EXPECT_GT(x.r.errors, 0u);
  EXPECT_GT(x.r.unmapped + x.r.last_word, 0u);
  EXPECT_GT(x.r.unaligned, 0u);
  EXPECT_GT(x.r.partial_strobes, 0u);
  EXPECT_GT(x.r.zero_strobes, 0u);
  EXPECT_GT(x.r.privileged, 0u);
  EXPECT_GT(x.r.resets, 0u);
  EXPECT_GT(x.r.state_compares, x.r.accesses);
  if (hardware) {
    EXPECT_GT(x.r.ro_drives, 0u);
    EXPECT_GT(x.r.huge_increments, 0u);
    EXPECT_GE(x.r.wraps, 5u);
    EXPECT_GT(x.r.clears, 0u);
  }
  EXPECT_NE(x.out.find("mismatches  0\n"), std::string::npos) << x.out;
  EXPECT_NE(x.out.find("seed        " + std::to_string(seed) + "\n"), std::string::npos) << x.out;
  std::printf("%s", x.out.c_str());
}

// ---- 1,000,000 APB cycles per register file, no mismatch (the seed is in the name) --------------------------------

TEST(LockStep, Top_Seed1_1MCycles) { expect_clean("top", 1000000, 1, true); }
TEST(LockStep, Cluster_Seed2_1MCycles) { expect_clean("cluster", 1000000, 2, false); }
TEST(LockStep, Protected_Seed3_1MCycles) { expect_clean("protected", 1000000, 3, false); }
TEST(LockStep, Vp_Seed4_1MCycles) { expect_clean("vp", 1000000, 4, true); }

// ---- a deliberate mismatch -------------------------------------------------------------------------------------

// An FST file opens with its header block: the type (FST_BL_HDR = 0), the big-endian length, which counts itself
// (8 bytes) and the 321-byte header (fstapi.c: FST_HDR_SIZE), then the first and last times dumped (big-endian, in
// the file's timescale: SystemC's resolution, 1 ps).
struct FstHeader {
  bool ok = false;
  std::uint64_t start_ps = 0, end_ps = 0;
};
FstHeader fst_header(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  unsigned char b[25] = {};
  FstHeader h;
  if (!f.read(reinterpret_cast<char*>(b), sizeof b)) return h;
  const auto be64 = [&b](int at) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | b[at + i];
    return v;
  };
  h.ok = b[0] == 0 && be64(1) == 329;
  h.start_ps = be64(9);
  h.end_ps = be64(17);
  return h;
}

TEST(LockStep, AnInjectedMismatchIsReportedWithItsCycleAndWrittenAsAnFstWindow) {
  if (!pevp::regfile_rtl::rtl_available()) GTEST_SKIP() << "no Verilated RTL in this build";
  CosimCheckCommand cmd;
  cmd.regfile = "vp";
  cmd.cycles = 20000;
  cmd.seed = 7;
  cmd.window = 16;
  cmd.inject_cycle = 5000;
  cmd.fst = scratch("inject.fst").string();
  const Outcome x = run(cmd);
  EXPECT_EQ(x.status, pevp::platform::kCosimMismatch) << x.out << x.err;
  // The flipped bit is the first RW bit of the file (vp: seq_ctrl.irq_enable.done, 0x00c); it is compared at the
  // next edge, and the run stops there.
  ASSERT_TRUE(x.r.first_mismatch_cycle.has_value());
  EXPECT_EQ(*x.r.first_mismatch_cycle, 5001u);
  EXPECT_EQ(x.r.cycles, 5001u);
  EXPECT_EQ(x.r.mismatches, 1u) << x.out;
  ASSERT_EQ(x.r.reports.size(), 1u) << x.out;
  const std::string& line = x.r.reports[0];
  EXPECT_NE(line.find("cycle 5001 (50.01 us)"), std::string::npos) << line;
  EXPECT_NE(line.find("state of seq_ctrl.irq_enable @ 0x00c"), std::string::npos) << line;
  EXPECT_NE(line.find("expected (TLM) 0x"), std::string::npos) << line;
  EXPECT_NE(line.find("actual (RTL) 0x"), std::string::npos) << line;
  EXPECT_NE(x.out.find("mismatches  1\n"), std::string::npos) << x.out;
  EXPECT_NE(x.out.find(line), std::string::npos) << x.out;
  // The waveform: the RTL from cycle 4985 to 5017, an FST file.
  EXPECT_EQ(x.r.fst, cmd.fst);
  EXPECT_NE(x.out.find("waveform    " + cmd.fst + ": the RTL from cycle 4985 (49.85 us) to cycle 5017 (50.17 us)"),
            std::string::npos)
      << x.out;
  EXPECT_TRUE(fs::exists(cmd.fst));
  EXPECT_GT(fs::file_size(cmd.fst), 100u);
  const FstHeader h = fst_header(cmd.fst);
  EXPECT_TRUE(h.ok) << cmd.fst << " is not an FST file";
  // Cycle k is the rising edge at k x 10 ns: the file spans at least cycles 4985 to 5017.
  EXPECT_LE(h.start_ps, 49850000u);
  EXPECT_GE(h.start_ps, 49840000u);
  EXPECT_GE(h.end_ps, 50170000u);
  EXPECT_LE(h.end_ps, 50190000u);
}

TEST(LockStep, AMismatchInTheFirstCyclesWritesAWindowFromCycleOne) {
  if (!pevp::regfile_rtl::rtl_available()) GTEST_SKIP() << "no Verilated RTL in this build";
  CosimCheckCommand cmd;
  cmd.regfile = "protected";
  cmd.cycles = 1000;
  cmd.seed = 11;
  cmd.window = 50;
  cmd.inject_cycle = 3;
  cmd.fst = scratch("early.fst").string();
  const Outcome x = run(cmd);
  EXPECT_EQ(x.status, pevp::platform::kCosimMismatch) << x.out << x.err;
  ASSERT_EQ(x.r.reports.size(), 1u) << x.out;
  EXPECT_NE(x.r.reports[0].find("cycle 4 (0.04 us): state of arr_seq_protected_cfg.throttle_cfg @ 0x000"),
            std::string::npos)
      << x.r.reports[0];
  EXPECT_NE(x.out.find("the RTL from cycle 1 (0.01 us) to cycle 54 (0.54 us)"), std::string::npos) << x.out;
  const FstHeader h = fst_header(cmd.fst);
  EXPECT_TRUE(h.ok);
  EXPECT_EQ(h.start_ps, 0u) << "from the start of the simulation";
  EXPECT_GE(h.end_ps, 540000u);
}

TEST(LockStep, AWaveformThatCannotBeWrittenIsSaidAndTheMismatchStillFails) {
  if (!pevp::regfile_rtl::rtl_available()) GTEST_SKIP() << "no Verilated RTL in this build";
  CosimCheckCommand cmd;
  cmd.regfile = "cluster";
  cmd.cycles = 3000;
  cmd.inject_cycle = 100;
  cmd.fst = "/proc/cosim.fst";  // the directory exists; no file can be created in it
  const Outcome x = run(cmd);
  EXPECT_EQ(x.status, pevp::platform::kCosimMismatch) << x.out << x.err;
  EXPECT_EQ(x.r.mismatches, 1u);
  EXPECT_EQ(x.r.fst, "");
  EXPECT_NE(x.out.find("waveform    not written: /proc/cosim.fst: cannot open the FST file\n"), std::string::npos)
      << x.out;
}

// ---- arguments ------------------------------------------------------------------------------------------------

TEST(Arguments, BadArgumentsAreRefusedBeforeAnythingRuns) {
  CosimCheckCommand cmd;
  cmd.regfile = "bottom";
  Outcome x = run(cmd);
  EXPECT_EQ(x.status, pevp::platform::kCosimUsage);
  EXPECT_EQ(x.err, "pe-vp cosim-check: --regfile: unknown register file 'bottom': expected top, cluster, protected "
                   "or vp\n");
  EXPECT_EQ(x.out, "");
  cmd = {};
  cmd.cycles = 0;
  x = run(cmd);
  EXPECT_EQ(x.status, pevp::platform::kCosimUsage);
  EXPECT_EQ(x.err, "pe-vp cosim-check: --cycles: expected at least 1 cycle, got 0\n");
  cmd = {};
  cmd.window = 0;
  x = run(cmd);
  EXPECT_EQ(x.status, pevp::platform::kCosimUsage);
  EXPECT_EQ(x.err, "pe-vp cosim-check: --window: expected at least 1 cycle, got 0\n");
  cmd = {};
  cmd.fst = "/nonexistent-dir/x.fst";
  x = run(cmd);
  EXPECT_EQ(x.status, pevp::platform::kCosimUsage);
  EXPECT_EQ(x.err, "pe-vp cosim-check: --fst /nonexistent-dir/x.fst: the directory /nonexistent-dir does not exist\n");
  cmd = {};
  cmd.fst = fs::temp_directory_path().string();
  x = run(cmd);
  EXPECT_EQ(x.status, pevp::platform::kCosimUsage);
  EXPECT_NE(x.err.find(": is a directory"), std::string::npos) << x.err;
}

TEST(Arguments, WithoutTheRtlTheCommandSaysSoWithItsOwnStatus) {
  if (pevp::regfile_rtl::rtl_available()) GTEST_SKIP() << "this build has the Verilated RTL";
  CosimCheckCommand cmd;
  const Outcome x = run(cmd);
  EXPECT_EQ(x.status, pevp::platform::kCosimNoRtl);
  EXPECT_NE(x.err.find("this build has no RTL register files"), std::string::npos) << x.err;
}

}  // namespace
