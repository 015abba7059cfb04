// `pe-vp sweep` through the binary, as an architect runs it: a local sweep whose every row agrees with a direct
// `pe-vp gemm` of the same point, a failed point that is recorded without losing the others, a run killed half way
// and resumed, the refusals, the SCALE-Sim preset against fold counts derived by hand, and the Slurm backend on a
// real single-node cluster (scripts/slurm-cluster.sh, started and stopped by the test) against the local backend.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "shell_run.h"

namespace {

namespace fs = std::filesystem;

using pevp::sweep_test::Result;
using pevp::sweep_test::sh;
using pevp::sweep_test::slurp;

std::string scratch(const std::string& name) { return pevp::sweep_test::scratch_dir("pevp_sweep_", name); }

Result pe_vp(const std::string& args, const std::string& dir) { return sh(std::string(PEVP_CLI) + " " + args, dir); }

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// RFC 4180 rows, as header name -> value.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  const std::string text = slurp(path);
  std::vector<std::vector<std::string>> rows(1);
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') cell += '"', ++i;
      else if (c == '"') quoted = false;
      else cell += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(cell), cell.clear();
    } else if (c == '\n') {
      rows.back().push_back(cell), cell.clear();
      rows.emplace_back();
    } else {
      cell += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  std::vector<std::map<std::string, std::string>> out;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    std::map<std::string, std::string> m;
    for (std::size_t c = 0; c < rows[0].size() && c < rows[r].size(); ++c) m[rows[0][c]] = rows[r][c];
    out.push_back(m);
  }
  return out;
}

// The rows without their wall times: what two runs of one sweep must agree on.
std::vector<std::map<std::string, std::string>> without_wall(std::vector<std::map<std::string, std::string>> rows) {
  for (auto& r : rows) r.erase("wall_s");
  return rows;
}

const char* const kFourGemms = R"(
name = "four"
[[workload]]
name = "pair"
gemms = [ { name = "square", m = 256, k = 256, n = 256 }, { name = "wide", m = 128, k = 384, n = 1024, count = 3 } ]
[grid]
tile_n = [128, 512]
)";

TEST(SweepRun, EveryRowAgreesWithADirectGemmOfItsPoint) {
  const std::string dir = scratch("direct");
  const std::string spec = write(dir + "/s.toml", kFourGemms);
  const Result r = pe_vp("sweep " + spec + " --out " + dir + "/out -j 2 --no-plots --quiet", dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("4 points (4 distinct), 0 already recorded, 4 to run"), std::string::npos) << r.out;
  const auto rows = read_csv(dir + "/out/results.csv");
  ASSERT_EQ(rows.size(), 4u);
  // The grid varies fastest within a configuration's layers: configurations (tile_n) outer, layers inner.
  const char* layers[] = {"square", "wide", "square", "wide"};
  const char* tiles[] = {"128", "128", "512", "512"};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    EXPECT_EQ(row.at("status"), "ok");
    EXPECT_EQ(row.at("layer"), layers[i]);
    EXPECT_EQ(row.at("p:tile_n"), tiles[i]);
    EXPECT_EQ(row.at("macs"), std::to_string(std::stoull(row.at("m")) * std::stoull(row.at("k")) *
                                             std::stoull(row.at("n"))));
    const std::string stats = dir + "/direct" + std::to_string(i) + ".json";
    const Result g = pe_vp("gemm --quiet --mode timing --no-check --m " + row.at("m") + " --k " + row.at("k") +
                               " --n " + row.at("n") + " --tile-n " + row.at("p:tile_n") + " --stats-json " + stats,
                           dir);
    ASSERT_EQ(g.status, 0) << g.err;
    const nlohmann::json s = nlohmann::json::parse(slurp(stats));
    EXPECT_EQ(row.at("cycles"), s["cycles"].dump()) << i;
    EXPECT_EQ(row.at("instr:MATMUL"), s["instructions"]["by_opcode"]["MATMUL"]["instructions_retired"].dump()) << i;
  }
  // The network total weighs each layer by its count.
  const nlohmann::json summary = nlohmann::json::parse(slurp(dir + "/out/summary.json"));
  ASSERT_EQ(summary["networks"].size(), 2u);
  const double cycles = std::stod(rows[0].at("cycles")) + 3 * std::stod(rows[1].at("cycles"));
  EXPECT_DOUBLE_EQ(summary["networks"][0]["cycles"].get<double>(), cycles);
}

// Where a network's time goes between the array and memory, from the rows themselves: summary.json's
// waiting_for_data_ns is the sum over layers of count x time x the layer's waiting_for_data share, its hbm_bytes the
// count-weighted device-memory bytes, and the command prints one line per configuration with those figures. The
// second layer (128 x 8192 x 128, count 2) is memory-bound: its array waits for data most of its time.
TEST(SweepRun, TheSummarySaysHowLongTheArrayWaitedForItsData) {
  const std::string dir = scratch("waiting");
  const std::string spec = write(dir + "/s.toml", R"(
name = "waiting"
[[workload]]
name = "pair"
gemms = [ { name = "square", m = 512, k = 512, n = 512 }, { name = "thin", m = 128, k = 8192, n = 128, count = 2 } ]
[set]
mode = "timing"
data_path = "dma"
)");
  const Result r = pe_vp("sweep " + spec + " --out " + dir + "/out --no-plots --quiet", dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto rows = read_csv(dir + "/out/results.csv");
  ASSERT_EQ(rows.size(), 2u);
  double waiting_ns = 0, hbm = 0, time_ns = 0;
  for (const auto& row : rows) {
    const double count = std::stod(row.at("count"));
    waiting_ns += count * std::stod(row.at("time_ns")) * std::stod(row.at("acct:waiting_for_data"));
    hbm += count * std::stod(row.at("mem:hbm_bytes"));
    time_ns += count * std::stod(row.at("time_ns"));
  }
  EXPECT_GT(std::stod(rows[1].at("acct:waiting_for_data")), 0.5) << "the thin layer waits for its data";
  const nlohmann::json n = nlohmann::json::parse(slurp(dir + "/out/summary.json"))["networks"][0];
  EXPECT_NEAR(n["waiting_for_data_ns"].get<double>(), waiting_ns, 1e-6 * waiting_ns);
  EXPECT_NEAR(n["hbm_bytes"].get<double>(), hbm, 1e-9 * hbm);
  EXPECT_NEAR(n["array_accounting"]["useful"].get<double>() + n["array_accounting"]["waiting_for_data"].get<double>(),
              1.0, 0.05)
      << "these two layers lose their PE-cycles to little else";
  char line[200];
  std::snprintf(line, sizeof line, "waiting for data %.3f ms (%.1f%%)", waiting_ns / 1e6, 100.0 * waiting_ns / time_ns);
  EXPECT_NE(r.out.find(std::string("  network: pair: ") ), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

TEST(SweepRun, AFailedPointIsRecordedAndTheOthersKept) {
  const std::string dir = scratch("failed");
  // MARIANA's PSUM partition holds 4096 fp32: tile_n 5000 cannot be planned.
  const std::string spec = write(dir + "/s.toml", R"(
[[workload]]
gemms = [ { name = "g", m = 128, k = 128, n = 8192 } ]
[grid]
tile_n = [512, 5000]
)");
  const Result r = pe_vp("sweep " + spec + " --out " + dir + "/out --no-plots --quiet", dir);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("2 points: 1 ok, 1 failed, 0 missing"), std::string::npos) << r.out;
  const auto rows = read_csv(dir + "/out/results.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("status"), "ok");
  EXPECT_EQ(rows[1].at("status"), "failed");
  EXPECT_NE(rows[1].at("error").find("tile_n = 5000"), std::string::npos) << rows[1].at("error");
  EXPECT_EQ(rows[1].at("cycles"), "");
  // A rerun with --resume keeps the failure recorded; --retry-failed runs it again (and it fails again).
  const Result again = pe_vp("sweep " + spec + " --out " + dir + "/out --resume --no-plots --quiet", dir);
  EXPECT_NE(again.out.find("2 already recorded, 0 to run"), std::string::npos) << again.out;
  const Result retry = pe_vp("sweep " + spec + " --out " + dir + "/out --resume --retry-failed --no-plots --quiet", dir);
  EXPECT_NE(retry.out.find("1 already recorded, 1 to run"), std::string::npos) << retry.out;
}

TEST(SweepRun, AKilledRunResumesToTheSameResults) {
  const std::string dir = scratch("resume");
  const std::string spec = write(dir + "/s.toml", R"(
[[workload]]
network = "resnet50"
[grid]
tile_n = [256, 512]
)");
  // The whole sweep, uninterrupted, as the reference.
  const Result whole = pe_vp("sweep " + spec + " --out " + dir + "/whole -j 2 --no-plots --quiet", dir);
  ASSERT_EQ(whole.status, 0) << whole.err;
  // The same sweep killed (with its running points) once a few points are recorded.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    const std::string out = dir + "/part";
    ::execl(PEVP_CLI, PEVP_CLI, "sweep", spec.c_str(), "--out", out.c_str(), "-j", "1", "--no-plots", "--quiet",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  const auto recorded = [&] {
    std::size_t n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir + "/part/points", ec))
      n += e.path().extension() == ".json" && e.path().string().find(".tmp.") == std::string::npos;
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (recorded() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const std::size_t before = recorded();
  ASSERT_GE(before, 3u);
  ASSERT_FALSE(fs::exists(dir + "/part/results.csv")) << "killed before it finished";
  const Result resumed = pe_vp("sweep " + spec + " --out " + dir + "/part --resume -j 2 --no-plots --quiet", dir);
  ASSERT_EQ(resumed.status, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find(std::to_string(before) + " already recorded"), std::string::npos) << resumed.out;
  EXPECT_EQ(without_wall(read_csv(dir + "/part/results.csv")), without_wall(read_csv(dir + "/whole/results.csv")));
}

TEST(SweepRun, RefusesWhatItCannotSweep) {
  const std::string dir = scratch("refuse");
  const std::string spec = write(dir + "/s.toml", kFourGemms);
  ASSERT_EQ(pe_vp("sweep " + spec + " --out " + dir + "/out --no-plots --quiet", dir).status, 0);
  const Result twice = pe_vp("sweep " + spec + " --out " + dir + "/out --no-plots --quiet", dir);
  EXPECT_EQ(twice.status, 2);
  EXPECT_NE(twice.err.find("holds a sweep already (sweep.json): --resume continues it"), std::string::npos) << twice.err;
  const std::string typo = write(dir + "/typo.toml", "[[workload]]\nnetwork = \"resnet50\"\n[grid]\ntilen = [1]\n");
  const Result t = pe_vp("sweep " + typo + " --out " + dir + "/t", dir);
  EXPECT_EQ(t.status, 2);
  EXPECT_NE(t.err.find("grid.tilen: unknown parameter 'tilen'"), std::string::npos) << t.err;
  const std::string bad_key =
      write(dir + "/key.toml", "[[workload]]\nnetwork = \"resnet50\"\n[grid]\n\"geometry.pe_rowz\" = [64]\n");
  const Result k = pe_vp("sweep " + bad_key + " --out " + dir + "/k", dir);
  EXPECT_EQ(k.status, 2);
  EXPECT_NE(k.err.find("unknown key 'geometry.pe_rowz'"), std::string::npos) << k.err;
  const std::string bad_value =
      write(dir + "/value.toml", "[[workload]]\nnetwork = \"resnet50\"\n[grid]\n\"geometry.pe_rows\" = [64, 1000]\n");
  const Result v = pe_vp("sweep " + bad_value + " --out " + dir + "/v", dir);
  EXPECT_EQ(v.status, 2);
  EXPECT_NE(v.err.find("the configuration geometry.pe_rows=1000"), std::string::npos) << v.err;
  EXPECT_NE(v.err.find("geometry.pe_rows"), std::string::npos) << v.err;
  const std::string bad_csr =
      write(dir + "/csr.toml", "[[workload]]\nnetwork = \"resnet50\"\n[grid]\n\"csr.top:queue_cfg.nope\" = [1]\n");
  const Result c = pe_vp("sweep " + bad_csr + " --out " + dir + "/c", dir);
  EXPECT_EQ(c.status, 2);
  EXPECT_NE(c.err.find("nope"), std::string::npos) << c.err;
  const Result collect_nothing = pe_vp("sweep --collect --out " + dir + "/nothing", dir);
  EXPECT_EQ(collect_nothing.status, 2);
  EXPECT_NE(collect_nothing.err.find("no sweep here"), std::string::npos) << collect_nothing.err;
}

// TOML and JSON write a whole number as a float too (6.4e1, 128.0); a configuration key takes it as the integer it
// is, as a configuration file does, and the points agree with the same sweep written with integers.
TEST(SweepRun, AWholeNumberWrittenAsAFloatSweepsAsTheInteger) {
  const std::string dir = scratch("floats");
  const auto spec = [&](const std::string& name, const std::string& rows) {
    return write(dir + "/" + name + ".toml", "[[workload]]\ngemms = [ { name = \"g\", m = 96, k = 160, n = 200 } ]\n"
                                             "[grid]\n\"geometry.pe_rows\" = [" + rows + "]\n");
  };
  const Result f = pe_vp("sweep " + spec("float", "6.4e1, 128.0") + " --out " + dir + "/f --no-plots --quiet", dir);
  ASSERT_EQ(f.status, 0) << f.out << f.err;
  const Result i = pe_vp("sweep " + spec("int", "64, 128") + " --out " + dir + "/i --no-plots --quiet", dir);
  ASSERT_EQ(i.status, 0) << i.out << i.err;
  const auto floats = read_csv(dir + "/f/results.csv"), ints = read_csv(dir + "/i/results.csv");
  ASSERT_EQ(floats.size(), 2u);
  ASSERT_EQ(ints.size(), 2u);
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(floats[r].at("status"), "ok") << floats[r].at("error");
    EXPECT_EQ(floats[r].at("cycles"), ints[r].at("cycles")) << r;
  }
  // 64 rows fold K = 160 three times, 128 rows twice: the two points differ, so the value reached the array.
  EXPECT_NE(floats[0].at("cycles"), floats[1].at("cycles"));
}

// Every file a sweep reads is named with the reason it cannot be used, status 2: a directory read as an empty file
// said "workload: missing" (TOML), leaked "[json.exception.parse_error.101]" (JSON) or "no layers" (a topology); a
// link to /dev/zero was read whole and ended in "pe-vp sweep: std::bad_alloc", status 3, under a memory limit.
TEST(SweepRun, AnInputItCannotReadIsNamedWithTheReason) {
  const std::string dir = scratch("inputs");
  fs::create_directories(dir + "/d.toml");
  fs::create_directories(dir + "/d.json");
  fs::create_directories(dir + "/topo.csv");
  fs::create_symlink("/dev/zero", dir + "/zero.toml");
  const std::string topo = write(dir + "/t.toml", "[[workload]]\nscalesim_conv = \"topo.csv\"\n");
  const std::pair<std::string, std::string> cases[] = {
      {dir + "/d.toml", dir + "/d.toml: is a directory"},
      {dir + "/d.json", dir + "/d.json: is a directory"},
      {dir + "/none.toml", dir + "/none.toml: cannot open: No such file or directory"},
      {dir + "/zero.toml", dir + "/zero.toml: larger than the 16777216-byte limit for a sweep spec"},
      {topo, topo + ": workload[0]: " + dir + "/topo.csv: is a directory"},
  };
  for (const auto& [spec, message] : cases) {
    SCOPED_TRACE(spec);
    const Result r = pe_vp("sweep " + spec + " --out " + dir + "/out --no-plots --quiet", dir);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "pe-vp sweep: " + message + "\n");
    EXPECT_FALSE(fs::exists(dir + "/out/sweep.json"));
  }
  // --collect reads the plan the sweep wrote: a directory in its place says so, not a JSON parse error.
  fs::create_directories(dir + "/c/sweep.json");
  const Result c = pe_vp("sweep --collect --out " + dir + "/c", dir);
  EXPECT_EQ(c.status, 2);
  EXPECT_EQ(c.err, "pe-vp sweep: " + dir + "/c/sweep.json: is a directory\n");
}

// The host running out of memory during a sweep is pe-vp's one error for it (status 2), not a backend failure
// (status 3) that prints "std::bad_alloc". A 1,000,000-point plan under a 512 MiB address-space limit runs out.
TEST(SweepRun, OutOfHostMemoryIsTheDocumentedError) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: an address-space limit cannot apply to it";
#endif
  const std::string dir = scratch("memory");
  std::string values;
  for (int i = 1; i <= 1000; ++i) values += (i > 1 ? ", " : "") + std::to_string(i);
  const std::string spec = write(dir + "/big.toml", "[[workload]]\ngemms = [{ m = 64, k = 64, n = 64 }]\n[grid]\n"
                                                    "sbuf_budget = [" + values + "]\n\"timing.psum_rmw_cycles\" = [" +
                                                    values + "]\n");
  const Result r = sh("ulimit -v 524288; " + std::string(PEVP_CLI) + " sweep " + spec + " --out " + dir +
                          "/out --no-plots --quiet",
                      dir);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err, "pe-vp: out of host memory\n");
}

// SCALE-Sim's ws model by hand: ceil(K / R) x ceil(M / C) folds of 2R + C + N - 2 cycles (N streamed).
struct FoldCase {
  const char* name;
  const char* args;
  std::uint64_t folds, per_fold;
};

class ScaleSimPreset : public ::testing::TestWithParam<FoldCase> {};

TEST_P(ScaleSimPreset, CyclesAreTheFoldsOfItsFormula) {
  const std::string dir = scratch(std::string("scalesim_") + GetParam().name);
  // The host data path: SCALE-Sim's compute model has no memory, and pe-vp's figures beside it are the array's.
  const Result r = pe_vp("gemm --quiet --mode timing --data-path host --set timing.model=scalesim_ws --stats-json " +
                             dir + "/s.json " + GetParam().args,
                         dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json s = nlohmann::json::parse(slurp(dir + "/s.json"));
  const std::uint64_t cycles = GetParam().folds * GetParam().per_fold;
  EXPECT_EQ(s["scalesim"]["folds"].get<std::uint64_t>(), GetParam().folds);
  EXPECT_EQ(s["scalesim"]["cycles_per_fold"].get<std::uint64_t>(), GetParam().per_fold);
  EXPECT_EQ(s["cycles"].get<std::uint64_t>(), cycles);
  EXPECT_EQ(s["scalesim"]["total_cycles"].get<std::uint64_t>(), cycles - 1) << "SCALE-Sim reports the last index";
  EXPECT_NEAR(s["tflops"].get<double>(), s["utilisation"].get<double>() * s["peak_tflops"].get<double>(), 1e-9);
  EXPECT_LT(s["pevp"]["cycles"].get<std::uint64_t>(), cycles) << "pe-vp's pipelined model beside it";
  EXPECT_NE(r.out.find("SCALE-Sim ws preset"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    HandDerived, ScaleSimPreset,
    ::testing::Values(
        // 128 x 128: K 512 -> 4 row folds, M 256 -> 2 column folds; 2 x 128 + 128 + 512 - 2 = 894.
        FoldCase{"preset", "--m 256 --k 512 --n 512", 8, 894},
        // 64 rows x 32 columns: K 300 -> 5, M 100 -> 4; 128 + 32 + 70 - 2 = 228.
        FoldCase{"ragged", "--m 100 --k 300 --n 70 --set geometry.pe_rows=64 --set geometry.pe_cols=32", 20, 228},
        // One fold: 2 x 128 + 128 + 1 - 2 = 383.
        FoldCase{"one", "--m 1 --k 1 --n 1", 1, 383},
        // 128 x 256 from the two array keys alone (256 partitions follow, D-GEOMETRY-FOLLOW): K 200 -> 2 row folds,
        // M 300 -> 2 column folds; 2 x 128 + 256 + 100 - 2 = 610.
        FoldCase{"wide", "--m 300 --k 200 --n 100 --set geometry.pe_rows=128 --set geometry.pe_cols=256", 4, 610}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(SweepRun, TheScaleSimReportCarriesItsTotalCycles) {
  const std::string dir = scratch("report");
  const std::string spec = write(dir + "/s.toml", R"(
[[workload]]
gemms = [ { name = "g", m = 256, k = 512, n = 512 } ]
[set]
"timing.model" = "scalesim_ws"
[grid]
"geometry.pe_cols" = [128, 64]
)");
  const Result r = pe_vp("sweep " + spec + " --out " + dir + "/out --no-plots --scalesim-report --quiet", dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  // 128 columns: 4 x 2 folds of 2 x 128 + 128 + 512 - 2 = 894; 64 columns: 4 x 4 folds of 830. The last index.
  const std::string report = slurp(dir + "/out/COMPUTE_REPORT.csv");
  EXPECT_NE(report.find("0, 7151, 0, "), std::string::npos) << report;
  EXPECT_NE(report.find("1, 13279, 0, "), std::string::npos) << report;
  const auto rows = read_csv(dir + "/out/results.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("scalesim_folds"), "8");
  EXPECT_EQ(rows[1].at("scalesim_total_cycles"), "13279");
  // Each line names its configuration, workload and point key, so the two configurations can be told apart.
  EXPECT_NE(report.find(", geometry.pe_cols=128, gemms, " + rows[0].at("key") + ",\n"), std::string::npos) << report;
  EXPECT_NE(report.find(", geometry.pe_cols=64, gemms, " + rows[1].at("key") + ",\n"), std::string::npos) << report;
}

// fp8 without double_row runs at the bf16 rate: the sweep says so for exactly those configurations, naming the key
// to set, and `pe-vp gemm` for exactly such a run; a [plots] baseline reaches summary.json as the speedups' reference.
TEST(SweepRun, Fp8AtTheBf16RateIsNotedWithTheKeyToSet) {
  const std::string dir = scratch("fp8note");
  const std::string spec = write(dir + "/s.toml", R"(
[[workload]]
gemms = [ { name = "g", m = 128, k = 256, n = 256 } ]
[zip]
dtype = ["bf16", "fp8_e4m3fn", "fp8_e4m3fn"]
double_row = [false, false, true]
[plots]
baseline = { dtype = "bf16" }
)");
  const Result r = pe_vp("sweep " + spec + " --out " + dir + "/out --no-plots --quiet", dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::string note =
      "  note: dtype fp8_e4m3fn on MARIANA without double_row runs at the bf16 rate (one contraction row per "
      "partition: the same cycles and peak_tflops as bf16) in dtype=fp8_e4m3fn, double_row=false: set double_row = "
      "true ([set] or [grid]) to contract two fp8 rows per partition, twice the bf16 rate\n";
  EXPECT_NE(r.out.find(note), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("note:"), r.out.rfind("note:")) << r.out;  // one note: not for bf16, not with double_row
  const nlohmann::json summary = nlohmann::json::parse(slurp(dir + "/out/summary.json"));
  EXPECT_EQ(summary["notes"].size(), 1u);
  EXPECT_EQ(summary["baseline"], (nlohmann::json{{"dtype", "bf16"}}));
  // The baseline's own speedup is 1; fp8 without double_row runs in bf16's cycles on the host-free DMA path less
  // what its half-size operands save, so its speedup is at least 1; with double_row it is faster still.
  ASSERT_EQ(summary["networks"].size(), 3u);
  EXPECT_DOUBLE_EQ(summary["networks"][0]["speedup"].get<double>(), 1.0);
  EXPECT_GE(summary["networks"][1]["speedup"].get<double>(), 1.0);
  EXPECT_GT(summary["networks"][2]["speedup"].get<double>(), summary["networks"][1]["speedup"].get<double>());
  // The peak: bf16 on 128 x 128 at 2.4 GHz is 2 x 128 x 128 x 2.4e9 = 78.6432 TFLOPS, fp8 without double_row the
  // same, with it twice.
  EXPECT_NEAR(summary["networks"][0]["peak_tflops"].get<double>(), 78.6432, 1e-9);
  EXPECT_NEAR(summary["networks"][1]["peak_tflops"].get<double>(), 78.6432, 1e-9);
  EXPECT_NEAR(summary["networks"][2]["peak_tflops"].get<double>(), 2 * 78.6432, 1e-9);

  const std::string gemm = "gemm --m 128 --k 256 --n 256 --mode timing --no-check --quiet --data-path host";
  const Result fp8 = pe_vp(gemm + " --dtype fp8_e4m3fn", dir);
  ASSERT_EQ(fp8.status, 0) << fp8.err;
  EXPECT_NE(fp8.out.find("  note:     fp8 without double_row runs at the bf16 rate (one contraction row per "
                         "partition); --double-row contracts two rows per partition, twice the rate\n"),
            std::string::npos)
      << fp8.out;
  for (const std::string& other : {std::string(" --dtype fp8_e4m3fn --double-row"), std::string(" --dtype bf16")}) {
    const Result quiet = pe_vp(gemm + other, dir);
    ASSERT_EQ(quiet.status, 0) << quiet.err;
    EXPECT_EQ(quiet.out.find("note:"), std::string::npos) << other << "\n" << quiet.out;
  }
}

// A point's configuration is validated whole, as `pe-vp gemm --set ... --set ...` is: [set] may name
// geometry.partitions before geometry.pe_rows, and zipped lists may repeat a value.
TEST(SweepRun, APointsConfigurationIsValidatedWhole) {
  const std::string dir = scratch("whole");
  const std::string spec = write(dir + "/s.toml", R"(
[[workload]]
gemms = [ { name = "g", m = 300, k = 200, n = 100 } ]
[set]
"timing.model" = "scalesim_ws"
"geometry.partitions" = 256
"geometry.pe_rows" = 256
[zip]
"geometry.pe_cols" = [128, 256, 256]
"geometry.sbuf_partition_bytes" = [131072, 131072, 65536]
)");
  const Result r = pe_vp("sweep " + spec + " --out " + dir + "/out --no-plots --quiet", dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto rows = read_csv(dir + "/out/results.csv");
  ASSERT_EQ(rows.size(), 3u);
  // SCALE-Sim ws by hand, 256 rows: K 200 -> 1 row fold. 128 columns: M 300 -> 3 folds of 2 x 256 + 128 + 100 - 2 =
  // 738; 256 columns: 2 folds of 512 + 256 + 98 = 866 (the SBUF size does not enter the compute model).
  const std::pair<const char*, const char*> want[] = {{"3", "2214"}, {"2", "1732"}, {"2", "1732"}};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(rows[i].at("status"), "ok") << rows[i].at("error");
    EXPECT_EQ(rows[i].at("scalesim_folds"), want[i].first) << i;
    EXPECT_EQ(rows[i].at("cycles"), want[i].second) << i;
    // The energy columns (docs/energy.md): 2 x 300 x 200 x 100 = 12000000 operations per pJ of the run's energy.
    const double energy = std::stod(rows[i].at("energy_pj"));
    EXPECT_GT(energy, 0) << i;
    EXPECT_NEAR(std::stod(rows[i].at("tops_per_w")), 12000000.0 / energy, 1e-6) << i;
  }
  // A contradiction between explicit keys is the point's, naming both.
  const std::string bad = write(dir + "/bad.toml", R"(
[[workload]]
gemms = [ { name = "g", m = 64, k = 64, n = 64 } ]
[set]
"geometry.partitions" = 128
[grid]
"geometry.pe_rows" = [128, 256]
)");
  const Result b = pe_vp("sweep " + bad + " --out " + dir + "/bad --no-plots --quiet", dir);
  EXPECT_EQ(b.status, 2);
  EXPECT_NE(b.err.find("the configuration geometry.partitions=128, geometry.pe_rows=256: geometry.pe_rows = 256: "
                       "exceeds geometry.partitions (128)"),
            std::string::npos)
      << b.err;
}

TEST(SweepRun, TheReportsStallCyclesAreTheCyclesTheArrayLost) {
  const std::string dir = scratch("report_pevp");
  // The host data path: the array's own figures, without device memory.
  const std::string spec = write(dir + "/s.toml",
                                 "[[workload]]\ngemms = [ { name = \"g\", m = 256, k = 512, n = 512 } ]\n"
                                 "[set]\ndata_path = \"host\"\n");
  const Result r = pe_vp("sweep " + spec + " --out " + dir + "/out --no-plots --scalesim-report --quiet", dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  // pe-vp's model: 4460 cycles (docs/timing.md 6.8), of which the MACs need 256 x 512 x 512 / (128 x 128) = 4096
  // at the full rate; the array lost the other 364 -- not the overlapping per-instruction waits.
  const std::string report = slurp(dir + "/out/COMPUTE_REPORT.csv");
  EXPECT_NE(report.find("0, 4460, 364, "), std::string::npos) << report;
}

// ---- Slurm ---------------------------------------------------------------------------------------------------

// A single-node cluster of this test's own, stopped (by its PIDs) whatever the test's outcome.
class SlurmCluster {
 public:
  explicit SlurmCluster(const std::string& dir) : dir_(dir) {
    fs::create_directories(dir_);
    const std::string cmd = "PEVP_SLURM_MIN_JOB_AGE=4 " + script() + " start " + dir_ + " > " + dir_ +
                            "/start.out 2> " + dir_ + "/start.err";
    const int rc = std::system(cmd.c_str());
    started_ = WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
    error_ = slurp(dir_ + "/start.err");
  }
  ~SlurmCluster() { std::system((script() + " stop " + dir_ + " > /dev/null 2>&1").c_str()); }
  bool started() const { return started_; }
  const std::string& error() const { return error_; }
  std::string env() const { return "SLURM_CONF=" + dir_ + "/slurm.conf "; }

 private:
  static std::string script() { return std::string(PEVP_SOURCE_DIR) + "/scripts/slurm-cluster.sh"; }
  std::string dir_, error_;
  bool started_ = false;
};

TEST(SweepRun, TheSlurmJobArrayGivesTheLocalResults) {
  const std::string dir = scratch("slurm");
  const std::string spec = write(dir + "/s.toml", R"(
name = "slurm-eight"
[[workload]]
gemms = [ { name = "a", m = 256, k = 256, n = 512 }, { name = "b", m = 128, k = 512, n = 256 } ]
[grid]
"geometry.pe_rows" = [64, 128]
dependency_check = [true, false]
)");
  SlurmCluster cluster(dir + "/cluster");
  ASSERT_TRUE(cluster.started()) << "scripts/slurm-cluster.sh start failed (CI runs as root with slurm-wlm and "
                                    "munge installed by scripts/setup.sh): "
                                 << cluster.error();
  const Result slurm = sh(cluster.env() + PEVP_CLI + " sweep " + spec + " --out " + dir + "/slurm --backend slurm " +
                              "--chunk-size 1 --wait --time 5 --no-plots --quiet",
                          dir);
  ASSERT_EQ(slurm.status, 0) << slurm.out << slurm.err;
  EXPECT_NE(slurm.out.find("an array of 8 task(s)"), std::string::npos) << slurm.out;
  EXPECT_NE(slurm.out.find("8 points: 8 ok, 0 failed, 0 missing"), std::string::npos) << slurm.out;
  const Result local = pe_vp("sweep " + spec + " --out " + dir + "/local -j 2 --no-plots --quiet", dir);
  ASSERT_EQ(local.status, 0) << local.err;
  const auto a = without_wall(read_csv(dir + "/slurm/results.csv"));
  EXPECT_EQ(a.size(), 8u);
  EXPECT_EQ(a, without_wall(read_csv(dir + "/local/results.csv")));
  // --collect merges the same records again.
  const Result collected = pe_vp("sweep --collect --out " + dir + "/slurm --no-plots", dir);
  EXPECT_EQ(collected.status, 0) << collected.err;
  EXPECT_EQ(without_wall(read_csv(dir + "/slurm/results.csv")), a);
}

// --- One folder, one sweep (D-SWEEP-LOCK) -------------------------------------------------------------------------

// `pe-vp ARGS...` started in the background, its output in dir/NAME.out and .err; returns its pid.
pid_t start_pe_vp(const std::vector<std::string>& args, const std::string& dir, const std::string& name) {
  const std::string out = dir + "/" + name + ".out", err = dir + "/" + name + ".err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr)) ::_exit(126);
    std::vector<char*> argv = {const_cast<char*>(PEVP_CLI)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(PEVP_CLI, argv.data());
    ::_exit(127);
  }
  return pid;
}

int exit_status_of(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A second sweep, --resume or --collect into a folder a sweep is running in is refused, naming the running one's pid;
// the running sweep ends with every point. Two real processes: the first holds DIR/sweep.lock (flock) from before it
// checks for a sweep.json until it has written results.csv.
TEST(SweepRun, ASecondSweepIntoARunningSweepsFolderIsRefused) {
  const std::string dir = scratch("lock");
  // Eight timing-only points run one at a time: seconds (most 4096^3 points take most of a second, even in a worker
  // that has no process to start), against the milliseconds the refusals take.
  const std::string spec = write(dir + "/s.toml", R"(
[[workload]]
gemms = [ { m = 4096, k = 4096, n = 4096 } ]
[grid]
tile_n = [128, 256, 384, 512]
"timing.fp32_factor" = [4, 2]
)");
  const std::string out = dir + "/out";
  const pid_t first = start_pe_vp({"sweep", spec, "--out", out, "-j", "1", "--no-plots", "--quiet"}, dir, "first");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (slurp(out + "/sweep.lock") != std::to_string(first) + "\n" && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_EQ(slurp(out + "/sweep.lock"), std::to_string(first) + "\n");
  const std::string refused = "pe-vp sweep: " + out + " is in use by another pe-vp sweep (pid " + std::to_string(first) +
                              ", " + out + "/sweep.lock): wait for it to end, or choose another --out\n";
  for (const std::string& args : {"sweep " + spec + " --out " + out + " --no-plots --quiet",
                                  "sweep " + spec + " --out " + out + " --resume --no-plots --quiet",
                                  "sweep --collect --out " + out}) {
    SCOPED_TRACE(args);
    const Result r = pe_vp(args, dir);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, refused);
  }
  ASSERT_EQ(::waitpid(first, nullptr, WNOHANG), 0) << "the first sweep ended before the refusals were checked";
  EXPECT_EQ(exit_status_of(first), 0) << slurp(dir + "/first.err");
  const auto rows = read_csv(out + "/results.csv");
  ASSERT_EQ(rows.size(), 8u);
  for (const auto& row : rows) EXPECT_EQ(row.at("status"), "ok") << row.at("error");
  // The lock ends with its holder: a --resume now runs (nothing left to run) and a --collect merges.
  const Result resumed = pe_vp("sweep " + spec + " --out " + out + " --resume --no-plots --quiet", dir);
  EXPECT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("8 already recorded, 0 to run"), std::string::npos) << resumed.out;
  EXPECT_EQ(pe_vp("sweep --collect --out " + out, dir).status, 0);
}

// Two sweeps started together into one new folder: exactly one runs, the other is refused -- by the lock while the
// first runs, or as a folder that holds a sweep once it has ended. Both used to find no sweep.json, both wrote one and
// both exited 0.
TEST(SweepRun, OfTwoSweepsStartedTogetherOneRuns) {
  const std::string dir = scratch("race");
  // 20,000 equal GEMMs: one point to run (one key), but a plan whose making and writing take a second or more --
  // the window in which both sweeps found no sweep.json (both exited 0 in each of 4 rounds before the lock).
  std::string gemms;
  for (int i = 0; i < 20000; ++i) gemms += std::string(i ? ", " : "") + "{ m = 128, k = 128, n = 128 }";
  const std::string spec = write(dir + "/s.toml", "[[workload]]\ngemms = [" + gemms + "]\n");
#ifdef __SANITIZE_ADDRESS__
  constexpr int kRounds = 1;  // the sanitizer build's plan takes many times as long: one round, the same window
#else
  constexpr int kRounds = 3;
#endif
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(round);
    const std::string out = dir + "/out" + std::to_string(round);
    const pid_t a = start_pe_vp({"sweep", spec, "--out", out, "--no-plots", "--quiet"}, dir, "a");
    const pid_t b = start_pe_vp({"sweep", spec, "--out", out, "--no-plots", "--quiet"}, dir, "b");
    const int sa = exit_status_of(a), sb = exit_status_of(b);
    EXPECT_EQ(std::min(sa, sb), 0) << slurp(dir + "/a.err") << slurp(dir + "/b.err");
    EXPECT_EQ(std::max(sa, sb), 2) << slurp(dir + "/a.err") << slurp(dir + "/b.err");
    const std::string refusal = slurp(dir + (sa == 2 ? "/a.err" : "/b.err"));
    const bool by_lock = refusal.find(" is in use by another pe-vp sweep (pid ") != std::string::npos;
    const bool by_plan = refusal.find(" holds a sweep already (sweep.json)") != std::string::npos;
    EXPECT_TRUE(by_lock || by_plan) << refusal;
  }
}

// An --out that cannot be the folder says why: a symlink to a folder that does not exist (was "File exists"), a file.
TEST(SweepRun, AnOutItCannotUseIsNamedWithTheReason) {
  const std::string dir = scratch("outdir");
  const std::string spec = write(dir + "/s.toml", "[[workload]]\ngemms = [ { m = 128, k = 128, n = 128 } ]\n");
  fs::create_symlink(dir + "/missing", dir + "/dangling");
  const Result dangling = pe_vp("sweep " + spec + " --out " + dir + "/dangling --no-plots --quiet", dir);
  EXPECT_EQ(dangling.status, 2);
  EXPECT_EQ(dangling.err, "pe-vp sweep: --out " + dir + "/dangling: a symlink to '" + dir +
                              "/missing', which does not exist (make the folder it names, or give another --out)\n");
  const std::string file = write(dir + "/file", "x");
  const Result not_a_folder = pe_vp("sweep " + spec + " --out " + file + " --no-plots --quiet", dir);
  EXPECT_EQ(not_a_folder.status, 2);
  EXPECT_EQ(not_a_folder.err, "pe-vp sweep: --out " + file + ": not a folder (give a folder, or a new path)\n");
  // A symlink to a folder that exists is that folder.
  fs::create_directories(dir + "/real");
  fs::create_symlink(dir + "/real", dir + "/link");
  EXPECT_EQ(pe_vp("sweep " + spec + " --out " + dir + "/link --no-plots --quiet", dir).status, 0);
  EXPECT_TRUE(fs::exists(dir + "/real/results.csv"));
}

// A file the sweep cannot write says why: past the file-size limit (as a full disk, with the reason) the plan's write
// was "sweep.json.tmp.PID: write failed".
TEST(SweepRun, AWriteThatFailsSaysWhy) {
  const std::string dir = scratch("full");
  const std::string spec = write(dir + "/s.toml", "[[workload]]\ngemms = [ { m = 128, k = 128, n = 128 } ]\n"
                                                  "[grid]\ntile_n = [128, 256, 384, 512]\n");
  // SIGXFSZ ignored (as it stays across exec), then writes past 1 KiB fail with EFBIG.
  const Result r = sh("trap '' XFSZ; ulimit -f 2; exec " + std::string(PEVP_CLI) + " sweep " + spec + " --out " + dir +
                          "/out --no-plots --quiet",
                      dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("pe-vp sweep: " + dir + "/out/sweep.json: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out/sweep.json"));
}

// A spec nested 100,000 levels deep (D-NESTING-DEPTH) ended `pe-vp sweep` with SIGSEGV, as did a configuration file
// for every command; each is refused, status 2, with its place.
TEST(SweepRun, ADeeplyNestedSpecOrConfigurationIsRefused) {
  const std::string dir = scratch("deep");
  std::string segments = "a";
  for (int i = 1; i < 100000; ++i) segments += ".a";
  const std::string toml = write(dir + "/deep.toml", "[[workload]]\nnetwork = \"resnet50\"\n[set." + segments + "]\n");
  const Result t = pe_vp("sweep " + toml + " --out " + dir + "/out --no-plots --quiet", dir);
  EXPECT_EQ(t.status, 2);
  // The document is level 1, [set level 2; its 63rd dot (character 5 + 2 x 62 of line 3) opens level 65.
  const std::size_t offset = std::string("[[workload]]\nnetwork = \"resnet50\"\n").size() + 4 + 2 * 62;
  EXPECT_EQ(t.err, "pe-vp sweep: " + toml + ":3:" + std::to_string(5 + 2 * 62) +
                       ": TOML nested deeper than 64 levels (the limit for a document pe-vp reads; offset " +
                       std::to_string(offset) + ")\n");
  const std::string json = write(dir + "/deep.json", "{\"seq\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  const Result c = pe_vp("--config " + json + " --dump-config", dir);
  EXPECT_EQ(c.status, 2);
  EXPECT_EQ(c.err, "pe-vp: " + json + ":1:72: JSON nested deeper than 64 levels (the limit for a document pe-vp reads; "
                                      "offset 71)\n");
}

}  // namespace
