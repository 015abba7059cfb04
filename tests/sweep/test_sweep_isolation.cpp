// How `pe-vp sweep` gives points their process (--point-isolation, D-SWEEP-WORKER, D-SWEEP-FORK), through the binary:
// the points run in workers or forked from the sweep record byte for byte what `pe-vp gemm` processes started afresh
// record (but for the wall time), a point that crashes is one failed row with its cause while the others succeed, a
// worker hands over after its share of points, and the sweep leaves no process behind -- no zombie while it runs, no
// orphan when it ends or is interrupted.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "shell_run.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

using pevp::sweep_test::Result;
using pevp::sweep_test::sh;
using pevp::sweep_test::slurp;

std::string scratch(const std::string& name) { return pevp::sweep_test::scratch_dir("pevp_sweep_isolation_", name); }

Result pe_vp(const std::string& args, const std::string& dir, const std::string& env = "") {
  return sh(env + std::string(PEVP_CLI) + " " + args, dir);
}

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// How many records a sweep into `out_dir` has written so far.
std::size_t records_written(const std::string& out_dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out_dir + "/points", ec)) n += e.path().extension() == ".json";
  return n;
}

// Every record of a sweep folder, file name -> its JSON without the wall time (the one figure two runs differ in).
std::map<std::string, nlohmann::json> records_without_wall(const std::string& out_dir) {
  std::map<std::string, nlohmann::json> records;
  for (const auto& e : fs::directory_iterator(out_dir + "/points")) {
    nlohmann::json r = nlohmann::json::parse(slurp(e.path().string()));
    r.erase("wall_s");
    records[e.path().filename().string()] = r;
  }
  return records;
}

// results.csv without its wall_s column, line by line.
std::vector<std::string> csv_without_wall(const std::string& path) {
  // RFC 4180: a comma or a line break inside quotes is the cell's (a failed point's message can hold both).
  std::vector<std::string> records;
  {
    std::string record;
    bool quoted = false;
    for (const char c : slurp(path)) {
      if (c == '"') quoted = !quoted;
      if (c == '\n' && !quoted) records.push_back(record), record.clear();
      else record += c;
    }
    if (!record.empty()) records.push_back(record);
  }
  std::vector<std::string> lines;
  std::size_t wall_column = std::string::npos;
  for (const std::string& line : records) {
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (const char c : line) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) cells.push_back(cell), cell.clear();
      else cell += c;
    }
    cells.push_back(cell);
    if (lines.empty())
      for (std::size_t i = 0; i < cells.size(); ++i)
        if (cells[i] == "wall_s") wall_column = i;
    std::string kept;
    for (std::size_t i = 0; i < cells.size(); ++i)
      if (i != wall_column) kept += (kept.empty() ? "" : ",") + cells[i];
    lines.push_back(kept);
  }
  return lines;
}

// Points of every kind a sweep runs: a network's layers on two arrays and tile sizes, a CSR knob, a point that
// fails as it runs (MARIANA's PSUM partition holds 4096 fp32, so tile_n 5000 cannot be planned) and points that move
// data and check it against the host references (OpenBLAS in the child).
const char* const kMixedSpec = R"(
name = "mixed"
[[workload]]
name = "layers"
gemms = [ { name = "square", m = 256, k = 256, n = 256 }, { name = "wide", m = 128, k = 384, n = 1024, count = 3 } ]
[[workload]]
network = "resnet50"
[grid]
tile_n = [128, 5000]
[zip]
"geometry.pe_rows" = [64, 128]
"geometry.pe_cols" = [64, 128]
inter_instr_delay = [0, 7]
)";

const char* const kCheckedSpec = R"(
name = "checked"
[[workload]]
gemms = [ { name = "g", m = 96, k = 160, n = 200 } ]
[set]
mode = "both"
check = true
[grid]
dtype = ["bf16", "fp32"]
)";

// The same spec run in workers, with forked points and with `pe-vp gemm` processes gives the same records (the
// cycles, the stalls, the failures' messages), the same results.csv and the same summary.json: the worker and the
// forked child run the very command line the process would, on a platform they elaborate themselves (a worker in a
// fresh SystemC context for each point after its first).
TEST(SweepIsolation, WorkersAndForkedPointsRecordWhatFreshProcessesRecord) {
  const std::string dir = scratch("same");
  for (const char* spec_text : {kMixedSpec, kCheckedSpec}) {
    const std::string spec = write(dir + "/s.toml", spec_text);
    fs::remove_all(dir + "/process");
    const Result fresh =
        pe_vp("sweep " + spec + " --out " + dir + "/process -j 2 --point-isolation process --no-plots --quiet", dir);
    const auto b = records_without_wall(dir + "/process");
    for (const std::string isolation : {"worker", "fork"}) {
      fs::remove_all(dir + "/" + isolation);
      const Result forked = pe_vp("sweep " + spec + " --out " + dir + "/" + isolation + " -j 2 --point-isolation " +
                                      isolation + " --no-plots --quiet",
                                  dir);
      EXPECT_EQ(forked.status, fresh.status) << isolation << ": " << forked.err << fresh.err;
      // The summary lines are the same but for the folder they name.
      std::string fresh_out = fresh.out;
      for (std::size_t at; (at = fresh_out.find(dir + "/process")) != std::string::npos;)
        fresh_out.replace(at, dir.size() + 8, dir + "/" + isolation);
      EXPECT_EQ(forked.out, fresh_out) << isolation;
      const auto a = records_without_wall(dir + "/" + isolation);
      EXPECT_FALSE(a.empty());
      EXPECT_EQ(a, b) << isolation;
      EXPECT_EQ(csv_without_wall(dir + "/" + isolation + "/results.csv"), csv_without_wall(dir + "/process/results.csv"))
          << isolation;
      EXPECT_EQ(slurp(dir + "/" + isolation + "/summary.json"), slurp(dir + "/process/summary.json")) << isolation;
    }
    std::size_t ok = 0, failed = 0;
    for (const auto& [file, r] : b) (r.at("status") == "ok" ? ok : failed) += 1;
    if (spec_text == kMixedSpec) {
      // 2 GEMMs + 21 distinct ResNet-50 shapes, each on 2 arrays (with their delays) x 2 tile sizes; the failures are
      // the planner's refusals of tile_n 5000.
      EXPECT_EQ(ok + failed, 23u * 2 * 2);
      EXPECT_GE(ok, 23u * 2) << "every tile_n 128 point runs";
      EXPECT_GT(failed, 0u);
      for (const auto& [file, r] : b) {
        if (r.at("status") == "ok") continue;
        EXPECT_NE(r.at("error").get<std::string>().find("tile_n = 5000"), std::string::npos) << r;
      }
      EXPECT_EQ(fresh.status, 1);
    } else {
      // The checked points compared the simulated C with the host references bit for bit and succeeded.
      EXPECT_EQ(ok, 2u);
      EXPECT_EQ(fresh.status, 0) << fresh.err;
    }
  }
}

// A point whose process aborts (PEVP_TEST_ABORT_GEMM_M, the gemm command's test hook) is one failed row saying it
// was killed by SIGABRT (6), whichever way points get their process; the other points succeed with the figures a
// direct `pe-vp gemm` of them gives.
TEST(SweepIsolation, ACrashingPointIsOneFailedRowAndTheOthersSucceed) {
  const std::string dir = scratch("crash");
  const std::string spec = write(dir + "/s.toml", R"(
name = "crash"
[[workload]]
name = "three"
gemms = [ { name = "a", m = 256, k = 256, n = 256 }, { name = "boom", m = 384, k = 128, n = 256 },
          { name = "c", m = 128, k = 512, n = 512 } ]
)");
  // worker-1: one worker, which the crash ends before the last point: a new one runs it.
  for (const std::string isolation : {"worker", "worker-1", "fork", "process"}) {
    const std::string jobs = isolation == "worker-1" ? "1" : "2";
    const Result r = pe_vp("sweep " + spec + " --out " + dir + "/" + isolation + " -j " + jobs +
                               " --point-isolation " + isolation.substr(0, isolation.find('-')) + " --no-plots --quiet",
                           dir, "PEVP_TEST_ABORT_GEMM_M=384 ");
    EXPECT_EQ(r.status, 1) << isolation << ": " << r.out << r.err;
    EXPECT_NE(r.out.find("3 points: 2 ok, 1 failed, 0 missing"), std::string::npos) << isolation << ": " << r.out;
    EXPECT_NE(r.out.find("  failed: killed by signal 6"), std::string::npos) << isolation << ": " << r.out;
    const std::vector<std::string> csv = csv_without_wall(dir + "/" + isolation + "/results.csv");
    ASSERT_EQ(csv.size(), 4u) << isolation;
    // key, status, error, workload, layer, ... : the crashed layer's row is failed with the signal, no figures. (Under
    // AddressSanitizer a worker's crashing point may have printed ASan's warning about SystemC's stacks, which follows
    // the signal in the message.)
    EXPECT_TRUE(std::regex_search(csv[2], std::regex(R"(,failed,"?killed by signal 6[\s\S]*,three,boom,)"))) << csv[2];
    EXPECT_NE(csv[1].find(",ok,,three,a,"), std::string::npos) << csv[1];
    EXPECT_NE(csv[3].find(",ok,,three,c,"), std::string::npos) << csv[3];
  }
  // The successful points' cycles are those of the same GEMMs run directly.
  for (const auto& [m, k, n] : {std::tuple{256, 256, 256}, std::tuple{128, 512, 512}}) {
    const std::string stats = dir + "/direct.json";
    const Result g = pe_vp("gemm --quiet --mode timing --no-check --m " + std::to_string(m) + " --k " +
                               std::to_string(k) + " --n " + std::to_string(n) + " --stats-json " + stats,
                           dir);
    ASSERT_EQ(g.status, 0) << g.err;
    const std::string cycles = nlohmann::json::parse(slurp(stats))["cycles"].dump();
    for (const std::string isolation : {"worker", "worker-1", "fork", "process"}) {
      const std::string csv = slurp(dir + "/" + isolation + "/results.csv");
      const std::string shape = "," + std::to_string(m) + "," + std::to_string(k) + "," + std::to_string(n) + ",";
      const auto row_begin = csv.find(shape);
      ASSERT_NE(row_begin, std::string::npos) << csv;
      const std::string row = csv.substr(row_begin, csv.find('\n', row_begin) - row_begin);
      EXPECT_NE(row.find("," + cycles + ","), std::string::npos) << isolation << ": cycles " << cycles << " in " << row;
    }
  }
}

// The processes whose parent is `pid` (from /proc: the fourth field of /proc/P/stat is the parent), with their state.
std::map<pid_t, char> children_of(pid_t pid) {
  std::map<pid_t, char> children;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = slurp(e.path().string() + "/stat");
    const auto close = stat.rfind(')');  // the command's name, in parentheses, may hold blanks
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    pid_t parent = 0;
    rest >> state >> parent;
    if (parent == pid) children[static_cast<pid_t>(std::stol(name))] = state;
  }
  return children;
}

// The processes of process group `pgid`.
std::set<pid_t> group_members(pid_t pgid) {
  std::set<pid_t> members;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = slurp(e.path().string() + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    pid_t parent = 0, group = 0;
    rest >> state >> parent >> group;
    if (group == pgid) members.insert(static_cast<pid_t>(std::stol(name)));
  }
  return members;
}

// `pe-vp sweep ARGS` in a process group of its own, its output in dir/sweep.out and .err.
pid_t start_sweep(const std::vector<std::string>& args, const std::string& dir) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (!std::freopen((dir + "/sweep.out").c_str(), "w", stdout) ||
        !std::freopen((dir + "/sweep.err").c_str(), "w", stderr))
      ::_exit(126);
    std::vector<char*> argv = {const_cast<char*>(PEVP_CLI), const_cast<char*>("sweep")};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(PEVP_CLI, argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return pid;
}

// While a sweep of 2 jobs runs, it never has more than 2 children -- with a child per point (fork), a point that ended
// is reaped before the next starts, so no zombie piles up; with workers, the two workers serve every point -- and
// when it ends, on its own or by SIGTERM half way, no process of its group is left (the points in flight were ended
// with it, none is orphaned).
TEST(SweepIsolation, TheSweepLeavesNoZombieAndNoOrphan) {
  const std::string dir = scratch("orphans");
  const std::string spec = write(dir + "/s.toml", R"(
[[workload]]
network = "resnet50"
[grid]
tile_n = [128, 256, 512]
)");
  for (const std::string isolation : {"fork", "worker"})
    for (const bool interrupt : {false, true}) {
      const std::string out = dir + "/" + isolation + (interrupt ? "-interrupted" : "-whole");
      const pid_t sweep =
          start_sweep({spec, "--out", out, "-j", "2", "--point-isolation", isolation, "--no-plots", "--quiet"}, dir);
      const auto recorded = [&] { return records_written(out); };
      std::size_t most_children = 0, samples = 0;
      std::set<pid_t> seen;
      const auto deadline = Clock::now() + std::chrono::seconds(240);
      int status = 0;
      pid_t ended = 0;
      while ((ended = ::waitpid(sweep, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
        const auto children = children_of(sweep);
        // Until the merge is written: a sanitizer build's leak check at the sweep's exit clones a task of its own.
        if (!fs::exists(out + "/results.csv")) {
          most_children = std::max(most_children, children.size());
          for (const auto& [child, state] : children) seen.insert(child);
        }
        ++samples;
        if (interrupt && recorded() >= 6) {
          ::kill(sweep, SIGTERM);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      if (ended == 0) ended = ::waitpid(sweep, &status, 0);
      ASSERT_EQ(ended, sweep) << isolation;
      ASSERT_TRUE(WIFEXITED(status)) << isolation;
      EXPECT_EQ(WEXITSTATUS(status), interrupt ? 143 : 0) << isolation << ": " << slurp(dir + "/sweep.err");
      EXPECT_GT(samples, 10u) << isolation;
      if (isolation == "fork") {
        if (!interrupt) {
          EXPECT_GE(seen.size(), 6u) << "the sampling saw the points' processes";
        }
      } else {
        EXPECT_GE(seen.size(), 1u) << "the sampling saw the workers";
        EXPECT_LE(seen.size(), 2u) << "two workers served every point (fewer than a worker's share each)";
      }
      EXPECT_LE(most_children, 2u) << isolation << ", -j 2: at most two points, and no zombie beside them";
      EXPECT_TRUE(group_members(sweep).empty()) << isolation << ": a point of the sweep outlived it";
      if (interrupt) {
        EXPECT_NE(slurp(dir + "/sweep.err").find("pe-vp sweep: interrupted by SIGTERM: "), std::string::npos)
            << slurp(dir + "/sweep.err");
        EXPECT_FALSE(fs::exists(out + "/results.csv"));
        // The points in flight left nothing beside the records.
        for (const auto& e : fs::directory_iterator(out + "/points"))
          EXPECT_EQ(e.path().extension(), ".json") << e.path();
      }
    }
}

// A worker serves a bounded number of points (PEVP_TEST_POINTS_PER_WORKER, the test hook of
// LocalOptions::points_per_worker), then ends and a new one takes the next: eight points, three per worker, one job,
// record what fresh processes record.
TEST(SweepIsolation, AWorkerEndsAfterItsShareAndANewOneGoesOn) {
  const std::string dir = scratch("share");
  const std::string spec = write(dir + "/s.toml", R"(
name = "share"
[[workload]]
gemms = [ { name = "a", m = 64, k = 64, n = 64 }, { name = "b", m = 96, k = 64, n = 64 },
          { name = "c", m = 128, k = 64, n = 64 }, { name = "d", m = 160, k = 64, n = 64 },
          { name = "e", m = 192, k = 64, n = 64 }, { name = "f", m = 224, k = 64, n = 64 },
          { name = "g", m = 256, k = 64, n = 64 }, { name = "h", m = 288, k = 64, n = 64 } ]
)");
  const Result workers = pe_vp("sweep " + spec + " --out " + dir + "/worker -j 1 --no-plots --quiet", dir,
                               "PEVP_TEST_POINTS_PER_WORKER=3 ");
  ASSERT_EQ(workers.status, 0) << workers.out << workers.err;
  EXPECT_NE(workers.out.find("8 points: 8 ok, 0 failed, 0 missing"), std::string::npos) << workers.out;
  const Result fresh =
      pe_vp("sweep " + spec + " --out " + dir + "/process -j 1 --point-isolation process --no-plots --quiet", dir);
  ASSERT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_EQ(records_without_wall(dir + "/worker"), records_without_wall(dir + "/process"));
}

// A forked point, and a worker's point, runs under the signal dispositions a fresh process would have, not the
// sweep's watch: SIGINT to the sweep's process group (a terminal's Ctrl-C) ends the point as it ends `pe-vp gemm` (it
// stops, says so), and the sweep, resumed, finishes with the records of an uninterrupted run.
TEST(SweepIsolation, AnInterruptedSweepResumesToTheSameRecords) {
  const std::string dir = scratch("resume");
  const std::string spec = write(dir + "/s.toml", R"(
[[workload]]
network = "resnet50"
[grid]
tile_n = [256, 512]
)");
  const Result whole = pe_vp("sweep " + spec + " --out " + dir + "/whole -j 2 --no-plots --quiet", dir);
  ASSERT_EQ(whole.status, 0) << whole.err;
  for (const std::string isolation : {"worker", "fork"}) {
    const std::string part = dir + "/part-" + isolation;
    const pid_t sweep =
        start_sweep({spec, "--out", part, "-j", "2", "--point-isolation", isolation, "--no-plots", "--quiet"}, dir);
    const auto recorded = [&] { return records_written(part); };
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    while (recorded() < 4 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ::kill(-sweep, SIGINT);  // as a terminal's Ctrl-C: the sweep and its points
    int status = 0;
    ASSERT_EQ(::waitpid(sweep, &status, 0), sweep);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 0) {
      std::cout << isolation << ": the sweep ended before the signal\n";
      continue;
    }
    EXPECT_EQ(WEXITSTATUS(status), 130) << isolation << ": " << slurp(dir + "/sweep.err");
    const std::size_t kept = recorded();
    EXPECT_GE(kept, 4u) << isolation;
    const Result resumed = pe_vp("sweep " + spec + " --out " + part + " --resume -j 2 --point-isolation " +
                                     isolation + " --no-plots --quiet",
                                 dir);
    ASSERT_EQ(resumed.status, 0) << isolation << ": " << resumed.out << resumed.err;
    EXPECT_NE(resumed.out.find(std::to_string(kept) + " already recorded"), std::string::npos) << resumed.out;
    EXPECT_EQ(records_without_wall(part), records_without_wall(dir + "/whole")) << isolation;
    EXPECT_EQ(csv_without_wall(part + "/results.csv"), csv_without_wall(dir + "/whole/results.csv")) << isolation;
  }
}

TEST(SweepIsolation, AnUnknownIsolationIsRefused) {
  const std::string dir = scratch("refused");
  const std::string spec = write(dir + "/s.toml", "[[workload]]\ngemms = [ { name = \"g\", m = 64, k = 64, n = 64 } ]\n");
  const Result r = pe_vp("sweep " + spec + " --out " + dir + "/out --point-isolation thread", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--point-isolation"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("thread"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out/sweep.json"));
}

}  // namespace
