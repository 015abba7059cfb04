// pe-vp gemm --sparsity N:M end to end through the driver path (one platform per test: SystemC elaborates once per
// process). The expected C is computed here, independently of the host library's pruning and compression: A rounded
// to the dtype, pruned N:M along K per row (the N largest magnitudes of each group of M, ties to the lower index),
// then the defined order per k-tile of pe_rows x F contraction rows (s from +0, C = first ? s : C + s). The report
// names the pattern, says how MACs are counted and carries both error lines; bad patterns and dtypes exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <sstream>

#include "gemm_test_util.h"
#include "pevp/host/npy.h"
#include "pevp/isa/geometry.h"
#include "pevp/numerics/convert.h"
#include "pevp/platform/gemm.h"

namespace {

using namespace pevp;
namespace fs = std::filesystem;

struct Case {
  isa::Generation gen;
  const char* sparsity;
  unsigned n, m, fmaps;  // the pattern and the fmap count D-SPARSE-SELECT carries it on
  std::size_t rows, k, cols;
};

std::string case_name(const testing::TestParamInfo<Case>& i) {
  std::string s = std::string(isa::name(i.param.gen)) + "_" + i.param.sparsity + "_" + std::to_string(i.param.rows) +
                  "x" + std::to_string(i.param.k) + "x" + std::to_string(i.param.cols);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

float bf16(float x) { return num::from_bf16(num::to_bf16(x)); }

host::Matrix expected(const Case& c, const host::Matrix& a, const host::Matrix& b) {
  host::Matrix ap(a.rows, a.cols), br(b.rows, b.cols);
  for (std::size_t i = 0; i < b.data.size(); ++i) br.data[i] = bf16(b.data[i]);
  for (std::size_t r = 0; r < a.rows; ++r)
    for (std::size_t g0 = 0; g0 < a.cols; g0 += c.m) {
      std::vector<std::size_t> idx(std::min<std::size_t>(c.m, a.cols - g0));
      std::iota(idx.begin(), idx.end(), g0);
      std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) {
        return std::fabs(bf16(a.at(r, x))) > std::fabs(bf16(a.at(r, y)));
      });
      for (std::size_t i = 0; i < std::min<std::size_t>(c.n, idx.size()); ++i) ap.at(r, idx[i]) = bf16(a.at(r, idx[i]));
    }
  const std::size_t k_tile = std::size_t{isa::preset_geometry(c.gen).pe_rows} * c.fmaps;
  host::Matrix out(a.rows, b.cols);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < b.cols; ++j)
      for (std::size_t k0 = 0; k0 < a.cols; k0 += k_tile) {
        float s = 0.0f;
        for (std::size_t k = k0; k < std::min(a.cols, k0 + k_tile); ++k) s = s + ap.at(i, k) * br.at(k, j);
        out.at(i, j) = k0 == 0 ? s : out.at(i, j) + s;
      }
  return out;
}

class GemmSparseDriverPath : public testing::TestWithParam<Case> {};

TEST_P(GemmSparseDriverPath, MatchesThePrunedDenseReferenceBitForBit) {
  const Case& c = GetParam();
  const host::Matrix a = gemm_test::random_matrix(c.rows, c.k, 31), b = gemm_test::random_matrix(c.k, c.cols, 32);
  const fs::path pa = gemm_test::scratch("pevp_gemm_sparse_test_", "a.npy");
  const fs::path pb = pa.parent_path() / "b.npy", pc = pa.parent_path() / "c.npy";
  host::write_npy(pa.string(), a);
  host::write_npy(pb.string(), b);

  platform::GemmCommand cmd;
  cmd.gen = c.gen;
  cmd.sparsity = c.sparsity;
  cmd.a_path = pa.string();
  cmd.b_path = pb.string();
  cmd.out_path = pc.string();
  std::ostringstream out, err;
  ASSERT_EQ(platform::run_gemm(cmd, out, err), 0) << out.str() << err.str();
  const std::string s = out.str();
  EXPECT_NE(s.find(std::string("sparsity ") + c.sparsity), std::string::npos) << s;
  // One MATMUL_SPARSE per k-tile of pe_rows x F rows, m-block of pe_cols and n-tile of one PSUM bank of fp32.
  const isa::ArrayGeometry& geo = isa::preset_geometry(c.gen);
  const auto tiles = [](std::size_t v, std::size_t t) { return (v + t - 1) / t; };
  const std::size_t matmuls = tiles(c.k, std::size_t{geo.pe_rows} * c.fmaps) * tiles(c.rows, geo.pe_cols) *
                              tiles(c.cols, geo.psum_bank_bytes / 4);
  EXPECT_NE(s.find("MATMUL_SPARSE " + std::to_string(matmuls) + ")"), std::string::npos) << s;
  EXPECT_NE(s.find("with " + std::to_string(c.fmaps) + " fmaps per partition"), std::string::npos) << s;
  EXPECT_NE(s.find("count dense-equivalent products"), std::string::npos) << s;
  EXPECT_NE(s.find(std::to_string(c.rows * c.k * c.cols) + " MACs"), std::string::npos) << s;
  EXPECT_NE(s.find("bit-exact"), std::string::npos) << s;
  EXPECT_NE(s.find("vs fp64 of the given (unpruned) operands"), std::string::npos) << s;
  EXPECT_NE(s.find("-rounded, pruned operands"), std::string::npos) << s;
  EXPECT_NE(s.find("TFLOPS achieved"), std::string::npos) << s;
  const host::Matrix got = host::read_npy_matrix(pc.string());
  const host::Matrix want = expected(c, a, b);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.data.size(); ++i) {
    std::uint32_t x, y;
    std::memcpy(&x, &got.data[i], 4);
    std::memcpy(&y, &want.data[i], 4);
    bad += x != y;
  }
  EXPECT_EQ(bad, 0u) << "of " << want.data.size();
  fs::remove_all(pa.parent_path());
}

INSTANTIATE_TEST_SUITE_P(
    Generations, GemmSparseDriverPath,
    testing::Values(Case{isa::Generation::CAYMAN, "2:4", 2, 4, 2, 128, 512, 128},
                    Case{isa::Generation::CAYMAN, "1:4", 1, 4, 4, 64, 1024, 96},
                    Case{isa::Generation::MARIANA, "2:4", 2, 4, 2, 128, 512, 128},
                    Case{isa::Generation::MARIANA, "1:4", 1, 4, 4, 96, 1024, 64},
                    Case{isa::Generation::MARIANA, "4:12", 4, 12, 3, 64, 768, 64},
                    Case{isa::Generation::MAVERICK, "2:4", 2, 4, 2, 128, 512, 128},
                    Case{isa::Generation::MAVERICK, "1:4", 1, 4, 4, 64, 1024, 64},
                    // Ragged: M, K and N not multiples of the tiles, K not of the pattern's group; MAVERICK's 200
                    // columns fold onto its c256 tile.
                    Case{isa::Generation::MARIANA_PLUS, "2:4", 2, 4, 2, 130, 601, 70},
                    Case{isa::Generation::MAVERICK, "4:12", 4, 12, 3, 200, 700, 90}),
    case_name);

TEST(GemmSparseCommand, BadPatternsAndDtypesExitWithStatus2AndSayWhy) {
  auto run = [](platform::GemmCommand cmd) {
    std::ostringstream out, err;
    const int status = platform::run_gemm(cmd, out, err);
    return std::make_pair(status, err.str());
  };
  platform::GemmCommand base;
  base.m = base.k = base.n = 8;
  base.sparsity = "2:4";
  for (const char* bad : {"3:4", "2:2", "4", "1:8"}) {
    auto c = base;
    c.sparsity = bad;
    const auto r = run(c);
    EXPECT_EQ(r.first, 2) << bad;
    EXPECT_NE(r.second.find(std::string("--sparsity '") + bad + "' is not a published N:M pattern; one of 4:16, "
                            "4:12, 4:8, 2:8, 2:4, 1:4, 1:2"),
              std::string::npos)
        << r.second;
  }
  for (const char* dtype : {"fp32", "tf32", "fp8_e4m3fn"}) {
    auto c = base;
    c.dtype = dtype;
    const auto r = run(c);
    EXPECT_EQ(r.first, 2) << dtype;
    EXPECT_NE(r.second.find("runs bf16 or fp16 operands (a TAG_WEIGHT load's 16-bit weight), and --dtype " +
                            std::string(dtype)),
              std::string::npos)
        << r.second;
  }
  auto mx = base;
  mx.dtype = "mxfp8_e4m3";
  auto r = run(mx);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("is MX (there is no MX sparse matmul)"), std::string::npos) << r.second;
  auto dr = base;
  dr.double_row = true;
  r = run(dr);
  EXPECT_EQ(r.first, 2);
  EXPECT_NE(r.second.find("double_row"), std::string::npos) << r.second;
}

}  // namespace
