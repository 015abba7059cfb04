// pe-vp gemm with MX dtypes end to end (one platform per test: SystemC elaborates once per process). The driver-path
// result must be bit-identical to the plain-C++ plan runner and to the defined-order reference on the dequantized
// operands; the report carries the quantization line, both error lines and the timing; CAYMAN and misused options
// exit with status 2 and say why.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "gemm_test_util.h"
#include "pevp/host/execute_plan.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/gemm_reference.h"
#include "pevp/host/mx_operands.h"
#include "pevp/host/npy.h"
#include "pevp/platform/gemm.h"

namespace {

using namespace pevp;
namespace fs = std::filesystem;

struct Case {
  isa::Generation gen;
  const char* dtype;
  const char* perf_mode;  // "" = the default, quad_row
  std::size_t m, k, n;
};

std::string case_name(const testing::TestParamInfo<Case>& i) {
  std::string s = std::string(isa::name(i.param.gen)) + "_" + i.param.dtype + "_" +
                  (*i.param.perf_mode ? i.param.perf_mode : "default") + "_" + std::to_string(i.param.m) + "x" +
                  std::to_string(i.param.k) + "x" + std::to_string(i.param.n);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class GemmMxDriverPath : public testing::TestWithParam<Case> {};

TEST_P(GemmMxDriverPath, MatchesThePlainPlanRunnerAndTheReferenceBitForBit) {
  const Case& c = GetParam();
  const host::Matrix a = gemm_test::random_matrix(c.m, c.k, 21), b = gemm_test::random_matrix(c.k, c.n, 22);
  const fs::path pa = gemm_test::scratch("pevp_gemm_mx_test_", "a.npy");
  const fs::path pb = pa.parent_path() / "b.npy", pc = pa.parent_path() / "c.npy";
  host::write_npy(pa.string(), a);
  host::write_npy(pb.string(), b);

  platform::GemmCommand cmd;
  cmd.gen = c.gen;
  cmd.dtype = c.dtype;
  cmd.mx_perf_mode = c.perf_mode;
  cmd.tile_n = 256;
  cmd.a_path = pa.string();
  cmd.b_path = pb.string();
  cmd.out_path = pc.string();
  std::ostringstream out, err;
  ASSERT_EQ(platform::run_gemm(cmd, out, err), 0) << out.str() << err.str();
  const std::string s = out.str();
  EXPECT_NE(s.find("bit-exact"), std::string::npos) << s;
  EXPECT_NE(s.find("quantize: OCP MX"), std::string::npos) << s;
  EXPECT_NE(s.find("-quantized operands: max abs"), std::string::npos) << s;
  EXPECT_NE(s.find("TFLOPS achieved"), std::string::npos) << s;
  // The plan's MACs are the logical M x K x N, whatever padding a ragged k-tile's last partitions carry.
  EXPECT_NE(s.find(std::to_string(c.m * c.k * c.n) + " MACs"), std::string::npos) << s;
  const host::Matrix got = host::read_npy_matrix(pc.string());

  host::GemmOptions o;
  o.gen = c.gen;
  o.dtype = *host::parse_mx_type(c.dtype);
  o.mx = *c.perf_mode ? *host::parse_mx_perf_mode(c.perf_mode) : isa::MxPerfMode::QUAD_ROW;
  o.tile_n = 256;
  const host::GemmPlan plan = host::plan_gemm({c.m, c.k, c.n}, o);
  const host::MxLayout layout = host::mx_layout(*o.mx);
  const auto ea = host::encode_mx_operand(a, c.gen, o.dtype, layout, plan.k_tile, true);
  const auto eb = host::encode_mx_operand(b, c.gen, o.dtype, layout, plan.k_tile, false);
  EXPECT_EQ(host::count_bit_mismatches(got, host::execute_plan(plan, ea, eb)), 0u);
  EXPECT_EQ(host::count_bit_mismatches(got, host::reference_defined_order(plan, ea, eb)), 0u);
  fs::remove_all(pa.parent_path());
}

INSTANTIATE_TEST_SUITE_P(
    Generations, GemmMxDriverPath,
    testing::Values(Case{isa::Generation::MARIANA, "mxfp8_e4m3", "", 128, 1024, 256},
                    Case{isa::Generation::MARIANA, "mxfp8_e5m2", "", 64, 512, 128},
                    Case{isa::Generation::MARIANA, "mxfp4", "", 96, 1024, 64},
                    Case{isa::Generation::MAVERICK, "mxfp8_e4m3", "", 128, 512, 256},
                    Case{isa::Generation::MAVERICK, "mxfp8_e5m2", "", 64, 1024, 64},
                    Case{isa::Generation::MAVERICK, "mxfp4", "", 32, 512, 96},
                    // A non-default perf mode (two x4 words per column, strided blocks) and ragged shapes: M, K and
                    // N not multiples of the tiles (MAVERICK's 200 columns fold onto its c256 tile).
                    Case{isa::Generation::MARIANA_PLUS, "mxfp8_e4m3", "oct_row_interleave", 100, 1500, 70},
                    Case{isa::Generation::MARIANA, "mxfp4", "quad_row_tiled", 130, 1100, 300},
                    Case{isa::Generation::MAVERICK, "mxfp8_e4m3", "", 200, 700, 300}),
    case_name);

TEST(GemmMxCommand, QuantizationCostShowsAgainstTheGivenOperandsOnly) {
  // e4m3fn keeps 4 significant bits; OCP's floor scale clamps a block's values above 448 x X (up to 1/8 of the
  // block max): the error against the given operands is of that order, against the dequantized ones the fp32
  // accumulation's (products of two 4-bit significands are exact).
  platform::GemmCommand cmd;
  cmd.gen = isa::Generation::MARIANA;
  cmd.dtype = "mxfp8_e4m3";
  cmd.m = 64, cmd.k = 512, cmd.n = 64;
  std::ostringstream out, err;
  ASSERT_EQ(platform::run_gemm(cmd, out, err), 0) << err.str();
  const std::string s = out.str();
  const auto figure = [&](const std::string& label) {
    const auto at = s.find(label);
    EXPECT_NE(at, std::string::npos) << label << " in " << s;
    return at == std::string::npos ? -1.0 : std::stod(s.substr(at + label.size()));
  };
  const double given = figure("max abs / sum|a||b| "), quantized = figure("max abs / sum|a'||b'| ");
  EXPECT_GT(given, 0x1p-9) << s;   // the 4-bit elements show, far above what fp32 accumulation costs
  EXPECT_LT(given, 0.25) << s;     // at most the clamp's eighth of a block max, twice
  EXPECT_LT(quantized, 1e-6) << s;  // K = 512 fp32 adds: far below 512 x 2^-24
}

TEST(GemmMxCommand, CaymanAndMisusedOptionsExitWithStatus2AndSayWhy) {
  auto run = [](platform::GemmCommand cmd) {
    std::ostringstream out, err;
    const int status = platform::run_gemm(cmd, out, err);
    return std::make_pair(status, err.str());
  };
  platform::GemmCommand base;
  base.m = base.k = base.n = 8;
  base.dtype = "mxfp8_e4m3";

  auto cayman = base;
  cayman.gen = isa::Generation::CAYMAN;
  auto r = run(cayman);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("CAYMAN has no MX matmul"), std::string::npos) << r.second;

  auto bad_mode = base;
  bad_mode.mx_perf_mode = "hex_row";
  r = run(bad_mode);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("--mx-perf-mode 'hex_row'"), std::string::npos) << r.second;

  auto dense_mode = base;
  dense_mode.dtype = "bf16";
  dense_mode.mx_perf_mode = "oct_row";
  r = run(dense_mode);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("applies to the MX dtypes"), std::string::npos) << r.second;

  auto double_row = base;
  double_row.double_row = true;
  r = run(double_row);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("double_row"), std::string::npos) << r.second;
}

}  // namespace
