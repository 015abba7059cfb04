// The three modes through the pe-vp binary (each run is its own process, as
// SystemC allows one simulation per process): functional results are
// bit-identical with and without timing, and timing is identical with and
// without data. Also the command line's timing options and their errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Result {
  int status;
  std::string out, err;
};

// A folder of this test process's own: ctest runs tests in parallel processes, and names shared between them
// (a counter starting at 0 in every process, fixed output names) made one test read another's output.
std::string scratch() {
  const std::string dir = ::testing::TempDir() + "/pevp_modes_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

Result pe_vp(const std::string& args) {
  static int n = 0;
  const std::string base = scratch() + "/cli_" + std::to_string(n++);
  const std::string cmd = std::string(PEVP_CLI) + " " + args + " > " + base + ".out 2> " + base + ".err";
  const int rc = std::system(cmd.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(base + ".out"), slurp(base + ".err")};
}

nlohmann::json without_mode(nlohmann::json s) {
  s.erase("mode");
  s.erase("end_of_simulation_ns");  // host-side time after the last read-back differs
  s.erase("seq");                   // decode-cache and sync counts are not timing
  return s;
}

const std::string kGemm = "gemm --gen MARIANA --m 256 --k 384 --n 640 --tile-n 128 ";

TEST(Modes, FunctionalResultsAreBitIdenticalWithAndWithoutTiming) {
  const std::string dir = scratch();
  for (const char* budget : {"", "--sbuf-budget 8192 "}) {  // one step, and a streamed plan
    SCOPED_TRACE(budget);
    const Result f = pe_vp(kGemm + budget + "--mode functional --out " + dir + "/c_functional.npy");
    const Result b = pe_vp(kGemm + budget + "--mode both --out " + dir + "/c_both.npy");
    ASSERT_EQ(f.status, 0) << f.err;
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_NE(f.out.find("bit-exact"), std::string::npos);
    const std::string cf = slurp(dir + "/c_functional.npy"), cb = slurp(dir + "/c_both.npy");
    ASSERT_GT(cf.size(), 256u * 640 * 4);
    EXPECT_TRUE(cf == cb) << "C differs between functional and both";
    EXPECT_EQ(f.out.find("timing ("), std::string::npos) << "functional mode takes no time";
    EXPECT_NE(b.out.find("timing (both"), std::string::npos);
  }
}

TEST(Modes, TimingIsIdenticalWithAndWithoutData) {
  const std::string dir = scratch();
  for (const char* budget : {"", "--sbuf-budget 8192 "}) {
    SCOPED_TRACE(budget);
    const Result t = pe_vp(kGemm + budget + "--mode timing --stats-json " + dir + "/s_timing.json");
    const Result b = pe_vp(kGemm + budget + "--mode both --stats-json " + dir + "/s_both.json");
    ASSERT_EQ(t.status, 0) << t.err;
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_NE(t.out.find("check:    skipped (mode timing moves no data)"), std::string::npos) << t.out;
    const nlohmann::json st = nlohmann::json::parse(slurp(dir + "/s_timing.json"));
    const nlohmann::json sb = nlohmann::json::parse(slurp(dir + "/s_both.json"));
    EXPECT_EQ(st["mode"], "timing");
    EXPECT_EQ(without_mode(st), without_mode(sb)) << st.dump(1) << "\nvs\n" << sb.dump(1);
    EXPECT_GT(st["cycles"].get<std::uint64_t>(), 0u);
  }
}

TEST(Modes, FunctionalModeTakesNoEngineTime) {
  const std::string dir = scratch();
  const Result f = pe_vp(kGemm + "--mode functional --stats-json " + dir + "/s_f.json");
  ASSERT_EQ(f.status, 0) << f.err;
  const nlohmann::json s = nlohmann::json::parse(slurp(dir + "/s_f.json"));
  EXPECT_EQ(s["cycles"], 0);
  EXPECT_EQ(s["macs"], 256u * 384 * 640);
  for (const auto& [k, v] : s["stall_cycles"].items()) EXPECT_EQ(v, 0) << k;
}

TEST(Modes, GemmPrintsCyclesUtilisationAndTflops) {
  const Result b = pe_vp("gemm --m 512 --k 512 --n 2048 --no-check");
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find("timing (both, 2.40 GHz): "), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("array utilisation "), std::string::npos);
  EXPECT_NE(b.out.find(" TFLOPS achieved of a peak of 78.6 (its dtype and mode)"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("  array PE-cycles not useful: "), std::string::npos) << b.out;
}

TEST(Modes, CommandLineErrors) {
  const Result out_without_data = pe_vp(kGemm + "--mode timing --out /tmp/x.npy");
  EXPECT_EQ(out_without_data.status, 2);
  EXPECT_NE(out_without_data.err.find("--out needs data, and mode timing moves none"), std::string::npos)
      << out_without_data.err;
  const Result bad_dir = pe_vp(kGemm + "--trace /nonexistent-dir/t.json");
  EXPECT_EQ(bad_dir.status, 2);
  EXPECT_NE(bad_dir.err.find("/nonexistent-dir/t.json: no such directory"), std::string::npos) << bad_dir.err;
  EXPECT_EQ(bad_dir.out.find("platform:"), std::string::npos) << "refused before simulating";
  const Result bad_mode = pe_vp(kGemm + "--mode fast");
  EXPECT_NE(bad_mode.status, 0);
  EXPECT_NE(bad_mode.err.find("fast"), std::string::npos) << bad_mode.err;
  const Result bad_set = pe_vp(kGemm + "--set timing.fp32_factor=0");
  EXPECT_EQ(bad_set.status, 2);
  EXPECT_NE(bad_set.err.find("timing.fp32_factor = 0: out of range (1..1048576)"), std::string::npos) << bad_set.err;
}

TEST(Modes, RunWritesATraceEvenWhenTheProgramFaults) {
  const std::string dir = scratch();
  {
    std::ofstream p(dir + "/fault.pes");
    p << "matmul src=sbuf[0]+0x0:[1,64] dst=psum[0]:[1,64] in_dtype=BFLOAT16 num_active_rows=128 "
         "num_active_cols=128 row_grp=0xF col_grp=0xF psum_accumulate_flags=SINGLE\n";
  }
  const Result r = pe_vp("run --gen MARIANA " + dir + "/fault.pes --trace " + dir + "/fault.json");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("exec.no_stationary"), std::string::npos) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(slurp(dir + "/fault.json"));
  EXPECT_TRUE(doc.contains("traceEvents"));
}

}  // namespace
