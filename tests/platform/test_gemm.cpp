// pe-vp gemm end to end (one platform per test: SystemC elaborates once per
// process). The driver-path result must be bit-identical to the plain-C++ plan
// runner (host::execute_plan, the executor without SystemC) and to the
// defined-order reference; the fp64 error must be within the dtype's bound; bad
// arguments and files give exit status 2 with a message naming the problem.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>

#include "pevp/host/execute_plan.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/gemm_reference.h"
#include "pevp/host/npy.h"
#include "pevp/host/operands.h"
#include "pevp/platform/gemm.h"
#include "gemm_test_util.h"

namespace {

using namespace pevp;
namespace fs = std::filesystem;

struct Case {
  isa::Generation gen;
  const char* dtype;
  const char* fp32_mode;
  std::size_t m, k, n;
  unsigned tile_n;
  bool double_row = false;
};

std::string case_name(const testing::TestParamInfo<Case>& i) {
  std::string s = std::string(isa::name(i.param.gen)) + "_" + i.param.dtype + "_" + i.param.fp32_mode + "_" +
                  std::to_string(i.param.m) + "x" + std::to_string(i.param.k) + "x" + std::to_string(i.param.n) +
                  (i.param.double_row ? "_double_row" : "") + "_tile_n_" + std::to_string(i.param.tile_n);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

fs::path scratch(const std::string& name) { return gemm_test::scratch("pevp_gemm_test_", name); }
using gemm_test::random_matrix;

class GemmDriverPath : public testing::TestWithParam<Case> {};

TEST_P(GemmDriverPath, MatchesThePlainPlanRunnerBitForBit) {
  const Case& c = GetParam();
  const host::Matrix a = random_matrix(c.m, c.k, 11), b = random_matrix(c.k, c.n, 12);
  const fs::path pa = scratch("a.npy"), pb = scratch("b.npy"), pc = scratch("c.npy");
  host::write_npy(pa.string(), a);
  host::write_npy(pb.string(), b);

  platform::GemmCommand cmd;
  cmd.gen = c.gen;
  cmd.dtype = c.dtype;
  cmd.fp32_mode = c.fp32_mode;
  cmd.tile_n = c.tile_n;
  cmd.double_row = c.double_row;
  cmd.a_path = pa.string();
  cmd.b_path = pb.string();
  cmd.out_path = pc.string();
  std::ostringstream out, err;
  ASSERT_EQ(platform::run_gemm(cmd, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("bit-exact"), std::string::npos) << out.str();
  const host::Matrix got = host::read_npy_matrix(pc.string());
  ASSERT_EQ(got.rows, c.m);
  ASSERT_EQ(got.cols, c.n);

  // The same GEMM without SystemC: the plan on the bare executor.
  host::GemmOptions o;
  o.gen = c.gen;
  const host::InputType t = host::parse_input_type(c.gen, c.dtype);
  o.dtype = t.dtype;
  o.fp32_mode = t.fp32_mode;
  if (std::string(c.fp32_mode) == "low") o.fp32_mode = isa::Fp32Mode::Low;
  if (std::string(c.fp32_mode) == "high") o.fp32_mode = isa::Fp32Mode::High;
  if (std::string(c.fp32_mode) == "low_high") o.fp32_mode = isa::Fp32Mode::Low_High;
  o.tile_n = c.tile_n;
  o.double_row = c.double_row;
  const host::GemmPlan plan = host::plan_gemm({c.m, c.k, c.n}, o);
  const auto ea = host::encode_operand(a, c.gen, o.dtype), eb = host::encode_operand(b, c.gen, o.dtype);
  EXPECT_EQ(host::count_bit_mismatches(got, host::execute_plan(plan, ea, eb)), 0u);
  EXPECT_EQ(host::count_bit_mismatches(got, host::reference_defined_order(plan, ea, eb)), 0u);
  fs::remove_all(pa.parent_path());
}

INSTANTIATE_TEST_SUITE_P(
    Generations, GemmDriverPath,
    testing::Values(Case{isa::Generation::CAYMAN, "bf16", "", 130, 300, 200, 512},
                    Case{isa::Generation::CAYMAN, "fp8_e4m3", "", 64, 256, 96, 64},
                    Case{isa::Generation::CAYMAN, "fp16", "", 33, 129, 70, 512},
                    Case{isa::Generation::CAYMAN, "tf32", "", 40, 160, 50, 512},
                    Case{isa::Generation::MARIANA, "bf16", "", 256, 384, 600, 512},
                    Case{isa::Generation::MARIANA, "fp8_e4m3fn", "", 96, 200, 128, 128},
                    Case{isa::Generation::MARIANA, "fp8_e5m2", "", 32, 64, 32, 512},
                    Case{isa::Generation::MARIANA, "fp32", "high", 50, 140, 60, 512},
                    Case{isa::Generation::MARIANA, "fp32", "low_high", 50, 140, 60, 512},
                    Case{isa::Generation::MARIANA_PLUS, "bf16", "", 128, 128, 512, 512},
                    Case{isa::Generation::MARIANA_PLUS, "fp8_e3m4", "", 70, 90, 33, 512},
                    Case{isa::Generation::MAVERICK, "bf16", "", 200, 260, 300, 256},
                    Case{isa::Generation::MAVERICK, "fp8_e2m5", "", 16, 48, 24, 512},
                    // fp8 double_row (256-row k-tiles, an odd K), n-tiles over several PSUM banks (v4+), and
                    // MAVERICK's folded c256 tiles with 2048-wide n-tiles.
                    Case{isa::Generation::CAYMAN, "fp8_e4m3", "", 100, 300, 96, 512, true},
                    Case{isa::Generation::MARIANA, "fp8_e5m2", "", 64, 513, 64, 512, true},
                    Case{isa::Generation::MARIANA, "bf16", "", 70, 130, 3000, 2048},
                    Case{isa::Generation::MAVERICK, "bf16", "", 300, 260, 2100, 2048}),
    case_name);

// The B-panel plan (D-GEMM-BPANEL) through the driver path: shapes whose round order would reload B, at 1 and 2 host
// threads; C bit-identical to the round order's (run without SystemC) and to the defined-order reference.
struct PanelCase {
  isa::Generation gen;
  const char* dtype;
  std::size_t m, k, n;
  unsigned tile_n;
  unsigned threads;
};

class GemmBPanel : public testing::TestWithParam<PanelCase> {};

TEST_P(GemmBPanel, BitIdenticalToTheRoundOrderAtEveryThreadCount) {
  const PanelCase& c = GetParam();
  platform::GemmCommand cmd;
  cmd.gen = c.gen;
  cmd.dtype = c.dtype;
  cmd.m = c.m, cmd.k = c.k, cmd.n = c.n;
  cmd.tile_n = c.tile_n;
  cmd.seed = 5;
  cmd.data_path = platform::DataPath::Host;  // B panels are the host path's plan (the DMA path double-buffers)
  platform::VpConfig config = platform::preset(c.gen);
  config.host_threads = c.threads;
  cmd.config = config;
  const fs::path pc = scratch("c.npy");
  cmd.out_path = pc.string();
  std::ostringstream out, err;
  ASSERT_EQ(platform::run_gemm(cmd, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("bit-exact"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("order:    B resident in"), std::string::npos) << out.str();

  // The same operands (pe-vp gemm's seeded generator) through the round order on the bare executor.
  std::mt19937_64 rng(cmd.seed);
  const host::Matrix a = platform::random_operand(c.m, c.k, rng), b = platform::random_operand(c.k, c.n, rng);
  host::GemmOptions o;
  o.gen = c.gen;
  const host::InputType t = host::parse_input_type(c.gen, c.dtype);
  o.dtype = t.dtype;
  o.fp32_mode = t.fp32_mode;
  o.tile_n = c.tile_n;
  o.b_resident = false;
  const host::GemmPlan rounds = host::plan_gemm({c.m, c.k, c.n}, o);
  ASSERT_EQ(rounds.stats.b_panels, 0u);
  const auto ea = host::encode_operand(a, c.gen, o.dtype), eb = host::encode_operand(b, c.gen, o.dtype);
  const host::Matrix want = host::execute_plan(rounds, ea, eb);
  EXPECT_EQ(host::count_bit_mismatches(host::read_npy_matrix(pc.string()), want), 0u);
  EXPECT_EQ(host::count_bit_mismatches(want, host::reference_defined_order(rounds, ea, eb)), 0u);
  fs::remove_all(pc.parent_path());
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmBPanel,
    testing::Values(PanelCase{isa::Generation::CAYMAN, "bf16", 300, 300, 520, 64, 1},
                    PanelCase{isa::Generation::CAYMAN, "fp16", 300, 300, 520, 64, 2},
                    PanelCase{isa::Generation::MARIANA, "bf16", 400, 260, 1100, 128, 1},
                    PanelCase{isa::Generation::MARIANA, "bf16", 400, 260, 1100, 128, 2},
                    PanelCase{isa::Generation::MARIANA, "fp8_e4m3fn", 300, 300, 520, 64, 2},
                    PanelCase{isa::Generation::MARIANA_PLUS, "tf32", 200, 300, 300, 32, 1},
                    PanelCase{isa::Generation::MAVERICK, "bf16", 600, 300, 520, 64, 1},
                    PanelCase{isa::Generation::MAVERICK, "bf16", 600, 300, 520, 64, 2}),
    [](const testing::TestParamInfo<PanelCase>& i) {
      std::string s = std::string(isa::name(i.param.gen)) + "_" + i.param.dtype + "_" + std::to_string(i.param.m) +
                      "x" + std::to_string(i.param.k) + "x" + std::to_string(i.param.n) + "_threads_" +
                      std::to_string(i.param.threads);
      for (char& ch : s)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return s;
    });

TEST(GemmCommand, StreamsWhenTheOperandsDoNotFitTheSbufBudget) {
  platform::GemmCommand cmd;
  cmd.gen = isa::Generation::MARIANA;
  cmd.m = 128, cmd.k = 1024, cmd.n = 1024;
  cmd.sbuf_budget = 8 * 1024;  // one k-tile of A (256 B) + B (2 KiB per n-tile) at a time, roughly
  std::ostringstream out, err;
  ASSERT_EQ(platform::run_gemm(cmd, out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("bit-exact"), std::string::npos) << out.str();
  // More than one step: the plan line reads "N step(s)" with N > 1.
  const std::string s = out.str();
  const auto at = s.find(" step(s)");
  ASSERT_NE(at, std::string::npos);
  const auto start = s.rfind(' ', at - 1);
  EXPECT_GT(std::stoul(s.substr(start + 1, at - start - 1)), 1u) << s;
}

// A configuration in range but so slow that one instruction outlasts the step's progress window: the failure names
// the window and what sets the pace, not a bare "timeout".
TEST(GemmCommand, AStepThatOutlastsItsProgressWindowSaysWhy) {
  platform::GemmCommand cmd;
  cmd.gen = isa::Generation::MARIANA;
  cmd.m = 32, cmd.k = 32, cmd.n = 1024;  // two matmuls of 5 s simulated each
  cmd.dtype = "fp32";
  cmd.data_path = platform::DataPath::Host;  // the host path's step window (the DMA path's is its own test)
  cmd.check = false;
  platform::VpConfig c = platform::preset(cmd.gen);
  platform::apply_overrides(c, {"timing.fp32_factor=1048576", "tensor_engine.clock_ghz=0.1"});
  cmd.config = c;
  std::ostringstream out, err;
  EXPECT_EQ(platform::run_gemm(cmd, out, err), 3) << out.str() << err.str();
  EXPECT_NE(err.str().find("step 0: the SEQ did not settle: no instruction retired in 1 s of simulated time"),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("timing.*, tensor_engine.clock_ghz"), std::string::npos) << err.str();
}

TEST(GemmCommand, Bf16ErrorAgainstFp64IsWithinTheBf16Bound) {
  // Seeded random operands in [-1, 1): bf16 rounding of each operand is within
  // 2^-9 relative, so |c - ref| <= ~2 * 2^-9 * sum|a||b| plus fp32 accumulation.
  platform::GemmCommand cmd;
  cmd.gen = isa::Generation::MARIANA;
  cmd.m = 64, cmd.k = 256, cmd.n = 64;
  std::ostringstream out, err;
  ASSERT_EQ(platform::run_gemm(cmd, out, err), 0) << err.str();
  const std::string s = out.str();
  const auto at = s.find("max abs / sum|a||b| ");
  ASSERT_NE(at, std::string::npos) << s;
  const double scaled = std::stod(s.substr(at + std::string("max abs / sum|a||b| ").size()));
  EXPECT_LT(scaled, 2.0 * 0x1p-9 + 1e-6) << s;
  EXPECT_GT(scaled, 0.0) << s;  // bf16 rounding does show
}

TEST(GemmCommand, BadArgumentsAndFilesExitWithStatus2AndSayWhy) {
  auto run = [](platform::GemmCommand cmd) {
    std::ostringstream out, err;
    const int status = platform::run_gemm(cmd, out, err);
    return std::make_pair(status, err.str());
  };
  platform::GemmCommand base;
  base.m = base.k = base.n = 8;

  auto only_a = base;
  only_a.a_path = "x.npy";
  auto r = run(only_a);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("both --a and --b"), std::string::npos) << r.second;

  auto missing = base;
  missing.a_path = "/nonexistent/a.npy";
  missing.b_path = "/nonexistent/b.npy";
  r = run(missing);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("/nonexistent/a.npy"), std::string::npos) << r.second;

  const fs::path pa = scratch("a.npy"), pb = scratch("b.npy");
  host::write_npy(pa.string(), random_matrix(4, 5, 1));
  host::write_npy(pb.string(), random_matrix(6, 7, 2));
  auto mismatch = base;
  mismatch.a_path = pa.string();
  mismatch.b_path = pb.string();
  r = run(mismatch);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("A is 4x5 and B is 6x7"), std::string::npos) << r.second;
  fs::remove_all(pa.parent_path());

  auto e4m3fn_on_cayman = base;
  e4m3fn_on_cayman.gen = isa::Generation::CAYMAN;
  e4m3fn_on_cayman.dtype = "fp8_e4m3fn";
  r = run(e4m3fn_on_cayman);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("e4m3"), std::string::npos) << r.second;

  auto bad_mode = base;
  bad_mode.dtype = "fp32";
  bad_mode.fp32_mode = "medium";
  r = run(bad_mode);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("medium"), std::string::npos) << r.second;

  auto huge = base;  // 40 GB of operands: refused up front, not a failed allocation
  huge.m = huge.k = huge.n = 100000;
  huge.check = false;
  r = run(huge);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("GiB of host memory"), std::string::npos) << r.second;

  // Given operands are sized the same way: 120 KB files whose product C is 30000 x 30000 (with the references
  // about 23 GiB of host memory) are refused before C is allocated, naming the sizes, with status 2.
  {
    const fs::path pa = scratch("tall.npy"), pb = scratch("wide.npy");
    host::write_npy(pa.string(), host::Matrix(30000, 1, 0.5f));
    host::write_npy(pb.string(), host::Matrix(1, 30000, 0.25f));
    auto files = base;
    files.a_path = pa.string();
    files.b_path = pb.string();
    r = run(files);
    EXPECT_EQ(r.first, 2);
    EXPECT_NE(r.second.find("M=30000, K=1, N=30000 needs about"), std::string::npos) << r.second;
    EXPECT_NE(r.second.find("GiB of host memory for the operands and references (limit 16.0 GiB); --no-check saves "
                            "the references"),
              std::string::npos)
        << r.second;
    fs::remove_all(pa.parent_path());
  }

  auto tile0 = base;
  tile0.tile_n = 0;
  r = run(tile0);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("tile_n"), std::string::npos) << r.second;
}

}  // namespace
