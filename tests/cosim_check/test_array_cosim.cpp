// `pe-vp cosim-check --unit pe_array` through its library function (run_array_cosim_check): the PE array executor's
// C++ arithmetic against the Verilated PE tile, micro-op by micro-op. Ten thousand random micro-ops must agree in
// every PSUM word and every completion time; the tile built with a truncating fp32 adder must be caught at its first
// divergent micro-op with the element, both values and a waveform; bad arguments are refused. Without the tile's
// RTL the runs are skipped and the command says so with status 77.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <unistd.h>

#include "pevp/coverage/collector.h"
#include "pevp/pe_array_rtl/rtl_datapath.h"
#include "pevp/platform/cosim_check.h"

namespace {

using pevp::platform::ArrayCosimResult;
using pevp::platform::CosimCheckCommand;
namespace fs = std::filesystem;

struct Outcome {
  int status = -1;
  std::string out, err;
  ArrayCosimResult r;
};

Outcome run(const CosimCheckCommand& cmd) {
  Outcome x;
  std::ostringstream out, err;
  x.status = pevp::platform::run_array_cosim_check(cmd, out, err, &x.r);
  x.out = out.str();
  x.err = err.str();
  return x;
}

CosimCheckCommand array_cmd(std::uint64_t micro_ops, std::uint64_t seed) {
  CosimCheckCommand c;
  c.unit = pevp::platform::kUnitPeArray;
  c.micro_ops = micro_ops;
  c.seed = seed;
  return c;
}

fs::path scratch_fst(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("pevp_array_cosim_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

TEST(ArrayCosim, TenThousandRandomMicroOpsAgreeInEveryPsumWordAndCompletionTime) {
  if (!pevp::pe_array_rtl::available()) GTEST_SKIP() << "no PE tile RTL in this build";
  const Outcome x = run(array_cmd(10000, 1));
  EXPECT_EQ(x.status, pevp::platform::kCosimPass) << x.out << x.err;
  EXPECT_EQ(x.r.micro_ops, 10000u);
  EXPECT_EQ(x.r.mismatches, 0u) << x.out;
  EXPECT_NE(x.out.find("mismatches  0\n"), std::string::npos) << x.out;
  // Every micro-op's time was compared, and the sequence mixed what it should: both kinds, both dtypes, both PSUM
  // modes (a weight load in 4 micro-ops; halves of the rest accumulate).
  EXPECT_EQ(x.r.timing_compares, 10000u);
  EXPECT_EQ(x.r.weight_loads + x.r.matmuls, 10000u);
  EXPECT_GT(x.r.weight_loads, 2000u);
  EXPECT_GT(x.r.matmuls, 6000u);
  EXPECT_GT(x.r.accumulating, 2500u);
  EXPECT_GT(x.r.bf16, 4000u);
  EXPECT_GT(x.r.fp16, 4000u);
  EXPECT_GT(x.r.psum_words, 1000000u);  // ~7500 matmuls x (16.5 x 32.5 on average)
}

TEST(ArrayCosim, TheBrokenRoundingTileIsCaughtAtItsFirstDivergentMicroOpWithAWaveform) {
  if (!pevp::pe_array_rtl::available()) GTEST_SKIP() << "no PE tile RTL in this build";
  CosimCheckCommand cmd = array_cmd(10000, 1);
  cmd.rtl_variant = "broken-rounding";
  cmd.window = 2;
  const fs::path fst = scratch_fst("broken.fst");
  cmd.fst = fst.string();
  const Outcome x = run(cmd);
  EXPECT_EQ(x.status, pevp::platform::kCosimMismatch) << x.out << x.err;
  ASSERT_TRUE(x.r.first_divergent.has_value()) << x.out;
  const std::uint64_t first = *x.r.first_divergent;
  // The run stopped there: every micro-op before it agreed.
  EXPECT_EQ(x.r.micro_ops, first + 1);
  EXPECT_GT(x.r.mismatches, 0u);
  // The report names the micro-op, an element, and the two values.
  const std::string tag = "micro-op " + std::to_string(first) + " (matmul ";
  EXPECT_NE(x.out.find(tag), std::string::npos) << x.out;
  EXPECT_NE(x.out.find("= element [m "), std::string::npos) << x.out;
  EXPECT_NE(x.out.find("expected (C++) 0x"), std::string::npos) << x.out;
  EXPECT_NE(x.out.find("actual (RTL) 0x"), std::string::npos) << x.out;
  EXPECT_NE(x.out.find("stopped at the first divergent one"), std::string::npos) << x.out;
  // The waveform of the window around it.
  EXPECT_EQ(x.r.fst, fst.string()) << x.out;
  std::error_code ec;
  EXPECT_GT(fs::file_size(fst, ec), 0u) << x.out;
  EXPECT_NE(x.out.find("the first divergent one is " + std::to_string(first)), std::string::npos) << x.out;
  fs::remove_all(fst.parent_path(), ec);
}

TEST(ArrayCosim, BadArgumentsAreRefusedWithTheOption) {
  CosimCheckCommand none = array_cmd(0, 1);
  Outcome x = run(none);
  EXPECT_EQ(x.status, pevp::platform::kCosimUsage);
  EXPECT_NE(x.err.find("--micro-ops: expected at least 1 micro-op, got 0"), std::string::npos) << x.err;
  CosimCheckCommand variant = array_cmd(10, 1);
  variant.rtl_variant = "sloppy";
  x = run(variant);
  EXPECT_EQ(x.status, pevp::platform::kCosimUsage);
  EXPECT_NE(x.err.find("--rtl-variant sloppy: expected exact or broken-rounding"), std::string::npos) << x.err;
  CosimCheckCommand unit = array_cmd(10, 1);
  unit.unit = "pe-array";
  std::ostringstream out, err;
  EXPECT_EQ(pevp::platform::run_cosim_check(unit, out, err), pevp::platform::kCosimUsage);
  EXPECT_NE(err.str().find("--unit pe-array: expected regfile or pe_array"), std::string::npos) << err.str();
}

// --coverage: each micro-op both sides ran is one instruction of its own (a Ldweights or a Matmul on MARIANA), so
// the file's opcode bins equal the run's own counts, its dtype bins split them by dtype, and its PSUM bins by mode.
TEST(ArrayCosim, CoverageCountsEveryMicroOpTheCheckRan) {
  if (!pevp::pe_array_rtl::available()) GTEST_SKIP() << "no PE tile RTL in this build";
  CosimCheckCommand cmd = array_cmd(400, 7);
  const fs::path file = scratch_fst("array.coverage.json");
  cmd.coverage_path = file.string();
  const Outcome x = run(cmd);
  ASSERT_EQ(x.status, pevp::platform::kCosimPass) << x.out << x.err;
  const pevp::coverage::Collector c = pevp::coverage::read_file(file.string());
  EXPECT_EQ(c.count({"opcode", "MARIANA", "LDWEIGHTS"}), x.r.weight_loads);
  EXPECT_EQ(c.count({"opcode", "MARIANA", "MATMUL"}), x.r.matmuls);
  EXPECT_EQ(c.count({"dtype", "MARIANA", "MATMUL/BFLOAT16"}) + c.count({"dtype", "MARIANA", "MATMUL/FP16"}),
            x.r.matmuls);
  EXPECT_EQ(c.count({"dtype", "MARIANA", "LDWEIGHTS/BFLOAT16"}) + c.count({"dtype", "MARIANA", "LDWEIGHTS/FP16"}),
            x.r.weight_loads);
  EXPECT_GT(c.count({"dtype", "MARIANA", "MATMUL/FP16"}), 0u);
  EXPECT_EQ(c.count({"psum", "MARIANA", "write/accumulate"}), x.r.accumulating);
  EXPECT_TRUE(c.outside_model().empty());
  std::error_code ec;
  fs::remove_all(file.parent_path(), ec);
}

TEST(ArrayCosim, CoverageIsRefusedByTheRegisterFileCheckAndOnABadPath) {
  CosimCheckCommand regs;
  regs.coverage_path = scratch_fst("regs.coverage.json").string();
  std::ostringstream out, err;
  EXPECT_EQ(pevp::platform::run_cosim_check(regs, out, err), pevp::platform::kCosimUsage);
  EXPECT_NE(err.str().find("the register-file check runs no instruction"), std::string::npos) << err.str();
  if (!pevp::pe_array_rtl::available()) return;
  CosimCheckCommand bad = array_cmd(10, 1);
  bad.coverage_path = "/nonexistent-dir/c.json";
  const Outcome x = run(bad);
  EXPECT_EQ(x.status, pevp::platform::kCosimUsage);
  EXPECT_NE(x.err.find("--coverage /nonexistent-dir/c.json"), std::string::npos) << x.err;
}

TEST(ArrayCosim, WithoutTheTileRtlTheCommandSaysSoWithStatus77) {
  if (pevp::pe_array_rtl::available()) GTEST_SKIP() << "this build has the PE tile RTL";
  const Outcome x = run(array_cmd(10, 1));
  EXPECT_EQ(x.status, pevp::platform::kCosimNoRtl);
  EXPECT_NE(x.err.find("no PE tile RTL"), std::string::npos) << x.err;
}

}  // namespace
