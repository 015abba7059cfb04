// Every program under platform/examples runs with `pe-vp run` as its run.args
// say, and its result matches plain loops over its input files (small integers:
// every product and sum is exact, so the expected values are exact too).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "pevp/host/npy.h"
#include "pevp/platform/run.h"

namespace {

using namespace pevp;
namespace fs = std::filesystem;

const fs::path kExamples = PEVP_EXAMPLES_DIR;

struct Ran {
  int status;
  std::string out, err;
  fs::path outputs;  // where the dumps went
};

// Runs examples/<name> with its run.args (paths relative to the example; dumps
// redirected to a scratch folder).
Ran run_example(const std::string& name) {
  const fs::path dir = kExamples / name;
  const fs::path scratch = fs::temp_directory_path() / ("pevp_examples_" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  platform::RunCommand cmd;
  cmd.gen = isa::Generation::MARIANA;
  cmd.program = (dir / "program.pes").string();
  std::ifstream args(dir / "run.args");
  std::string flag, value;
  while (args >> flag >> value) {
    if (flag == "--load") {
      cmd.loads.push_back(platform::parse_load((dir / value).string()));
    } else if (flag == "--dump") {
      const auto eq = value.find('=');
      cmd.dumps.push_back(platform::parse_dump(value.substr(0, eq + 1) + (scratch / value.substr(eq + 1)).string()));
    } else if (flag == "--regs") {
      cmd.regs = (dir / value).string();
    } else {
      ADD_FAILURE() << name << "/run.args: unknown flag " << flag;
    }
  }
  std::ostringstream out, err;
  const int st = platform::run_program(cmd, out, err);
  return {st, out.str(), err.str(), scratch};
}

host::Matrix npy(const fs::path& p) { return host::read_npy_matrix(p.string()); }

// C[m][n] = sum_k st[k][m] * mv[k][n] (+ `add`, when given).
host::Matrix st_t_mv(const host::Matrix& st, const host::Matrix& mv) {
  host::Matrix c(st.cols, mv.cols);
  for (std::size_t m = 0; m < st.cols; ++m)
    for (std::size_t n = 0; n < mv.cols; ++n) {
      double s = 0;
      for (std::size_t k = 0; k < st.rows; ++k) s += double(st.at(k, m)) * mv.at(k, n);
      c.at(m, n) = static_cast<float>(s);
    }
  return c;
}

void expect_equal(const host::Matrix& got, const host::Matrix& want, const std::string& what) {
  ASSERT_EQ(got.rows, want.rows) << what;
  ASSERT_EQ(got.cols, want.cols) << what;
  for (std::size_t i = 0; i < want.data.size(); ++i)
    ASSERT_EQ(got.data[i], want.data[i]) << what << " element " << i / want.cols << "," << i % want.cols;
}

TEST(Examples, SingleMatmul) {
  const Ran r = run_example("single_matmul");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const fs::path d = kExamples / "single_matmul";
  expect_equal(npy(r.outputs / "c.npy"), st_t_mv(npy(d / "st.npy"), npy(d / "mv.npy")), "C");
  fs::remove_all(r.outputs);
}

TEST(Examples, KTiledGroup) {
  const Ran r = run_example("k_tiled_group");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const fs::path d = kExamples / "k_tiled_group";
  host::Matrix want = st_t_mv(npy(d / "st0.npy"), npy(d / "mv0.npy"));
  const host::Matrix second = st_t_mv(npy(d / "st1.npy"), npy(d / "mv1.npy"));
  for (std::size_t i = 0; i < want.data.size(); ++i) want.data[i] += second.data[i];
  expect_equal(npy(r.outputs / "c.npy"), want, "C");
  fs::remove_all(r.outputs);
}

TEST(Examples, Transpose) {
  const Ran r = run_example("transpose");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const fs::path d = kExamples / "transpose";
  const host::Matrix a = npy(d / "a.npy"), b = npy(d / "b.npy");
  host::Matrix at(a.cols, a.rows);  // the stationary the transposing load makes: A.T
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.cols; ++j) at.at(j, i) = a.at(i, j);
  expect_equal(npy(r.outputs / "c.npy"), st_t_mv(at, b), "C = A @ B");
  fs::remove_all(r.outputs);
}

TEST(Examples, ParallelTiles) {
  const Ran r = run_example("parallel_tiles");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const fs::path d = kExamples / "parallel_tiles";
  expect_equal(npy(r.outputs / "c0.npy"), st_t_mv(npy(d / "st0.npy"), npy(d / "mv0.npy")), "C0 (tile 0)");
  expect_equal(npy(r.outputs / "c1.npy"), st_t_mv(npy(d / "st1.npy"), npy(d / "mv1.npy")), "C1 (tile 1)");
  fs::remove_all(r.outputs);
}

TEST(Examples, SemaphoreHandshake) {
  const Ran r = run_example("semaphore_handshake");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("semaphore_5.value = 7"), std::string::npos) << r.out;
  const fs::path d = kExamples / "semaphore_handshake";
  expect_equal(npy(r.outputs / "c.npy"), st_t_mv(npy(d / "st.npy"), npy(d / "mv.npy")), "C");
  fs::remove_all(r.outputs);
}

}  // namespace
