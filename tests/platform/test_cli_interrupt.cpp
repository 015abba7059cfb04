// SIGINT and SIGTERM to a real `pe-vp` process (docs/running.md, "Interrupting a run"; docs/sweeps.md,
// "Interrupting and resuming"): a long gemm and a long run stop at a safe point and write their --stats-json
// (marked interrupted, its progress below the plan's totals read from the command's own summary), their trace
// (valid by trace::check_trace, as the trace's own tests judge it) and their VCD (read back complete by the trace
// tests' VCD reader), with exit status 130 / 143 and one stderr line; a second SIGINT ends the process at once; an
// interrupted sweep prints the command that resumes it, which runs only the points not recorded. And
// --trace-window: the events kept are exactly those of the full trace of the same run inside the window.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "pevp/trace/trace_events.h"
#include "vcd_reader.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string scratch(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/pevp_interrupt_" + std::to_string(::getpid()) + "_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A pe-vp process of the test's own, its stdout and stderr in files.
struct Child {
  pid_t pid = -1;
  std::string out, err;
};

// own_group: the child leads a process group of its own, as a shell's foreground job does (a terminal's Ctrl-C goes
// to the whole group).
// Under the sanitizers, no leak check in the children: an interrupted run ends its kernel with sc_stop() while the
// driver program's SystemC thread is suspended, and SystemC never unwinds a suspended thread's stack, so what that
// stack owns is still allocated at exit (LeakSanitizer would turn the exit status 130 into its own). A run that ends
// normally has no such thread; the other tests check it for leaks.
void no_leak_check_in_children() {
  const char* old = std::getenv("ASAN_OPTIONS");
  const std::string options = std::string(old != nullptr ? old : "") + (old != nullptr && *old ? ":" : "") +
                              "detect_leaks=0";
  ::setenv("ASAN_OPTIONS", options.c_str(), 1);
}

Child start(const std::vector<std::string>& args, const std::string& dir, const std::string& name,
            bool own_group = false) {
  static const bool once = (no_leak_check_in_children(), true);
  (void)once;
  Child c;
  c.out = dir + "/" + name + ".out";
  c.err = dir + "/" + name + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> argv = {PEVP_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  // SIGINT and SIGTERM as a terminal's foreground job has them, whatever this test inherited (a shell's background
  // job ignores SIGINT, and pe-vp keeps an inherited ignore).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | (own_group ? POSIX_SPAWN_SETPGROUP : 0));
  EXPECT_EQ(posix_spawn(&c.pid, PEVP_CLI, &actions, &attr, raw.data(), environ), 0);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  return c;
}

// The child's waitpid status; a child still running after `limit` is killed and fails the test.
int finish(const Child& c, std::chrono::seconds limit = std::chrono::seconds(120)) {
  const auto deadline = Clock::now() + limit;
  int status = 0;
  while (::waitpid(c.pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      ::kill(c.pid, SIGKILL);
      ::waitpid(c.pid, &status, 0);
      ADD_FAILURE() << "pe-vp did not end within " << limit.count() << " s";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status;
}

// Waits until `path` holds `text` (true), or the limit passed (false).
bool wait_for_text(const std::string& path, const std::string& text, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (slurp(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Waits for gemm's first progress line, the sign that its simulation runs; a child that never shows one is ended.
bool simulating(const Child& c);

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1000 - WTERMSIG(status); }

bool simulating(const Child& c) {
  if (wait_for_text(c.err, "instructions), ", std::chrono::seconds(60))) return true;
  ::kill(c.pid, SIGKILL);
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  return false;
}

json read_json(const std::string& path) { return json::parse(slurp(path)); }

// The trace as the trace's own tests judge it: a JSON document with no check_trace problem.
json valid_trace(const std::string& path) {
  const json doc = read_json(path);
  const std::vector<std::string> problems = pevp::trace::check_trace(doc);
  EXPECT_TRUE(problems.empty()) << path << ": " << ::testing::PrintToString(problems);
  return doc;
}

// The VCD complete: read back without a problem, its signals declared, its last line whole.
void expect_complete_vcd(const std::string& path) {
  const std::string text = slurp(path);
  ASSERT_FALSE(text.empty()) << path;
  EXPECT_EQ(text.back(), '\n') << path << " ends mid-line";
  EXPECT_NE(text.find("$enddefinitions $end"), std::string::npos) << path;
  const pevp::trace::test::Vcd vcd = pevp::trace::test::read_vcd(text);
  EXPECT_TRUE(vcd.problems.empty()) << ::testing::PrintToString(vcd.problems);
  EXPECT_TRUE(vcd.var_of_name.count("pe_vp.seq.busy")) << "the SEQ's busy signal is declared";
  EXPECT_FALSE(vcd.stamps.empty()) << "the run recorded changes";
}

// "plan:     16 step(s), 1234 instructions (...)": the plan's totals, from gemm's own summary.
std::pair<std::uint64_t, std::uint64_t> plan_totals(const std::string& out) {
  std::smatch m;
  const std::regex plan(R"(plan: +(\d+) step\(s\), (\d+) instructions)");
  if (!std::regex_search(out, m, plan)) {
    ADD_FAILURE() << "no plan line in: " << out;
    return {0, 0};
  }
  return {std::stoull(m[1]), std::stoull(m[2])};
}

// The long gemm: an 8192x4096x4096 bf16 GEMM on the host data path, 128 steps, 5 s on an idle 2-core machine and
// more under load; its progress lines (stderr is a file; the first comes after a second) say when the simulation
// runs, and leave it seconds to go.
const std::vector<std::string> kLongGemm = {"gemm", "--m", "8192", "--k", "4096", "--n", "4096", "--no-check",
                                            "--threads", "1", "--data-path", "host"};

TEST(CliInterrupt, GemmStopsOnSigintAndWritesWhatItHas) {
  const std::string dir = scratch("gemm_int");
  std::vector<std::string> args = kLongGemm;
  args.insert(args.end(), {"--trace", dir + "/t.json", "--vcd", dir + "/w.vcd", "--stats-json", dir + "/s.json"});
  const Child c = start(args, dir, "gemm");
  ASSERT_TRUE(simulating(c)) << slurp(c.err);
  ::kill(c.pid, SIGINT);
  const int status = finish(c);
  const std::string err = slurp(c.err), out = slurp(c.out);
  EXPECT_EQ(exit_code(status), 130) << err;
  // One line says it: the signal, the simulated time, the progress, the files.
  std::smatch m;
  const std::regex line(R"(pe-vp gemm: interrupted by SIGINT at ([0-9.e+]+ [a-z]+) simulated, (\d+) of (\d+) instructions retired, (\d+) of (\d+) steps done; wrote (\S+) \(trace\), (\S+) \(vcd\), (\S+) \(stats\)\n)");
  ASSERT_TRUE(std::regex_search(err, m, line)) << err;
  EXPECT_EQ(m[6].str(), dir + "/t.json");
  EXPECT_EQ(m[7].str(), dir + "/w.vcd");
  EXPECT_EQ(m[8].str(), dir + "/s.json");
  const auto [steps, instructions] = plan_totals(out);

  const json stats = read_json(dir + "/s.json");
  EXPECT_EQ(stats["interrupted"], true);
  const json& at = stats["interruption"];
  EXPECT_EQ(at["signal"], "SIGINT");
  EXPECT_EQ(at["instructions_total"].get<std::uint64_t>(), instructions);
  EXPECT_EQ(at["steps_total"].get<std::uint64_t>(), steps);
  const auto retired = at["instructions_retired"].get<std::uint64_t>();
  EXPECT_GT(retired, 0u);
  EXPECT_LT(retired, instructions);
  EXPECT_EQ(retired, stats["instructions"]["retired"].get<std::uint64_t>());
  EXPECT_EQ(std::to_string(retired), m[2].str());
  EXPECT_LT(at["steps_done"].get<std::uint64_t>(), steps);
  EXPECT_GT(at["simulated_time_ns"].get<double>(), 0.0);

  const json trace = valid_trace(dir + "/t.json");
  EXPECT_NE(trace["otherData"].value("interrupted", "").find("interrupted by SIGINT"), std::string::npos);
  std::size_t slices = 0;
  for (const json& e : trace["traceEvents"]) slices += e["ph"] == "X";
  EXPECT_GT(slices, 0u);
  expect_complete_vcd(dir + "/w.vcd");
}

// The default data path (DMA): the plan's steps are queued ahead of the array, so progress is the instructions
// retired alone -- no steps in the line or the stats.
TEST(CliInterrupt, GemmOnTheDmaPathStopsOnSigtermAndWritesWhatItHas) {
  const std::string dir = scratch("gemm_dma_term");
  std::vector<std::string> args = kLongGemm;
  args.back() = "dma";
  args[6] = "8192";  // twice the work again: the DMA path's first steps queue ahead of the array
  args.insert(args.end(), {"--trace", dir + "/t.json", "--stats-json", dir + "/s.json"});
  const Child c = start(args, dir, "gemm");
  ASSERT_TRUE(simulating(c)) << slurp(c.err);
  ::kill(c.pid, SIGTERM);
  const int status = finish(c);
  const std::string err = slurp(c.err), out = slurp(c.out);
  EXPECT_EQ(exit_code(status), 143) << err;
  std::smatch m;
  const std::regex line(R"(pe-vp gemm: interrupted by SIGTERM at \S+ \S+ simulated, (\d+) of (\d+) instructions retired; wrote (\S+) \(trace\), (\S+) \(stats\)\n)");
  ASSERT_TRUE(std::regex_search(err, m, line)) << err;
  const auto [steps, instructions] = plan_totals(out);
  EXPECT_EQ(m[2].str(), std::to_string(instructions));
  const json stats = read_json(dir + "/s.json");
  EXPECT_EQ(stats["interrupted"], true);
  const json& at = stats["interruption"];
  EXPECT_EQ(at["signal"], "SIGTERM");
  EXPECT_EQ(at["instructions_total"].get<std::uint64_t>(), instructions);
  const auto retired = at["instructions_retired"].get<std::uint64_t>();
  EXPECT_LT(retired, instructions);
  EXPECT_EQ(std::to_string(retired), m[1].str());
  EXPECT_FALSE(at.contains("steps_done"));
  valid_trace(dir + "/t.json");
}

// A long `pe-vp run`: many matmuls, assembled once to binary so that reading it costs nothing.
std::string long_program(const std::string& dir) {
  std::ofstream pes(dir + "/long.pes");
  pes << ".gen MARIANA\n";
  for (int i = 0; i < 100000; ++i)
    pes << "ldweights src=sbuf[0]:[1,128] in_dtype=bf16 num_active_rows=128 num_active_cols=128 row_grp=0xF "
           "col_grp=0xF\n"
           "matmul src=sbuf[0]+0x1000:[1,512] in_dtype=bf16 num_active_rows=128 num_active_cols=128 row_grp=0xF "
           "col_grp=0xF psum_accumulate_flags=SINGLE dst=psum[0]:[1,512]\n";
  pes.close();
  const Child a = start({"asm", "--gen", "MARIANA", dir + "/long.pes", "-o", dir + "/long.bin"}, dir, "asm");
  EXPECT_EQ(exit_code(finish(a)), 0) << slurp(a.err);
  return dir + "/long.bin";
}

// `pe-vp run` of the long program in `mode`, sent `sig` 3 s in: it stops within seconds (the whole run takes
// minutes in functional mode, whose simulated time hardly moves) and writes what it has.
void interrupt_a_run(const std::string& name, const std::string& mode, int sig, const std::string& sig_name) {
  const std::string dir = scratch(name);
  const std::string program = long_program(dir);
  const Child c = start({"run", "--gen", "MARIANA", program, "--mode", mode, "--trace", dir + "/t.json", "--vcd",
                         dir + "/w.vcd", "--stats-json", dir + "/s.json"},
                        dir, "run");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  ::kill(c.pid, sig);
  const int status = finish(c, std::chrono::seconds(30));
  const std::string err = slurp(c.err);
  EXPECT_EQ(exit_code(status), 128 + sig) << err;
  // 200000 instructions: two per pair of lines above.
  std::smatch m;
  const std::regex line("pe-vp run: interrupted by " + sig_name +
                        R"( at \S+ \S+ simulated, (\d+) of 200000 instructions retired; wrote \S+ \(trace\), \S+ \(vcd\), \S+ \(stats\)\n)");
  ASSERT_TRUE(std::regex_search(err, m, line)) << err;
  const json stats = read_json(dir + "/s.json");
  EXPECT_EQ(stats["interrupted"], true);
  EXPECT_EQ(stats["interruption"]["signal"], sig_name);
  EXPECT_EQ(stats["interruption"]["instructions_total"], 200000);
  const auto retired = stats["interruption"]["instructions_retired"].get<std::uint64_t>();
  EXPECT_GT(retired, 0u);
  EXPECT_LT(retired, 200000u);
  EXPECT_EQ(m[1].str(), std::to_string(retired));
  EXPECT_FALSE(stats["interruption"].contains("steps_done"));  // run has no steps
  valid_trace(dir + "/t.json");
  if (mode != "functional") expect_complete_vcd(dir + "/w.vcd");  // a functional run takes no engine time
}

TEST(CliInterrupt, RunStopsOnSigtermWithStatus143) { interrupt_a_run("run_term", "both", SIGTERM, "SIGTERM"); }

TEST(CliInterrupt, FunctionalRunStopsOnSigintWithinSeconds) {
  interrupt_a_run("run_functional", "functional", SIGINT, "SIGINT");
}

// The second SIGINT does not wait for the files: the process ends at once with 130 and says nothing more.
TEST(CliInterrupt, ASecondSigintEndsAtOnce) {
  const std::string dir = scratch("twice");
  std::vector<std::string> args = kLongGemm;
  args.insert(args.end(), {"--trace", dir + "/t.json"});
  const Child c = start(args, dir, "gemm");
  ASSERT_TRUE(simulating(c)) << slurp(c.err);
  ::kill(c.pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(c.pid, SIGINT);
  const int status = finish(c);
  EXPECT_EQ(exit_code(status), 130);
  EXPECT_EQ(slurp(c.err).find("interrupted by"), std::string::npos) << slurp(c.err);
  EXPECT_FALSE(fs::exists(dir + "/t.json")) << "the trace of a run ended at once";
}

// The trace's events as (process, thread without its lane suffix, name, ph, ts, dur, args): the identity of an
// event whatever lane or tid the writer gave it.
using Event = std::tuple<std::string, std::string, std::string, std::string, double, double, std::string>;

std::multiset<Event> events_of(const json& doc) {
  std::map<std::int64_t, std::string> process;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread;
  for (const json& e : doc["traceEvents"]) {
    if (e["name"] == "process_name") process[e["pid"]] = e["args"]["name"];
    if (e["name"] == "thread_name") {
      std::string t = e["args"]["name"];
      if (const auto lane = t.rfind(" #"); lane != std::string::npos) t.resize(lane);
      thread[{e["pid"], e["tid"]}] = t;
    }
  }
  std::multiset<Event> out;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "M") continue;
    out.emplace(process[e["pid"]], e["ph"] == "C" ? "" : thread[{e["pid"], e["tid"]}], e["name"], e["ph"],
                e["ts"].get<double>(), e.value("dur", 0.0), e.value("args", json::object()).dump());
  }
  return out;
}

TEST(CliInterrupt, TraceWindowKeepsExactlyTheEventsInIt) {
  const std::string dir = scratch("window");
  const std::vector<std::string> gemm = {"gemm", "--m", "256", "--k", "512", "--n", "512", "--no-check", "--quiet"};
  const auto traced = [&](const std::string& name, const std::vector<std::string>& extra) {
    std::vector<std::string> args = gemm;
    args.insert(args.end(), {"--trace", dir + "/" + name + ".json", "--vcd", dir + "/" + name + ".vcd"});
    args.insert(args.end(), extra.begin(), extra.end());
    const Child c = start(args, dir, name);
    EXPECT_EQ(exit_code(finish(c)), 0) << slurp(c.err);
    return valid_trace(dir + "/" + name + ".json");
  };
  const std::multiset<Event> full = events_of(traced("full", {}));
  ASSERT_GT(full.size(), 100u);

  // Time: [4.4 us, 5.5 us), where the array is busy: a slice overlapping it, an instant or a counter sample in it
  // (ts and dur in us).
  const json time_doc = traced("time", {"--trace-window", "4.4us:5.5us"});
  EXPECT_EQ(time_doc["otherData"]["window"], "4.4us:5.5us");
  std::multiset<Event> expected;
  for (const Event& e : full) {
    const double ts = std::get<4>(e), dur = std::get<5>(e);
    if (ts < 5.5 && (ts >= 4.4 || ts + dur > 4.4)) expected.insert(e);
  }
  ASSERT_GT(expected.size(), 0u);
  ASSERT_LT(expected.size(), full.size());
  EXPECT_EQ(events_of(time_doc), expected);

  // The VCD of the time window: every signal's value at 4.4 us as the full VCD has it then, and the full VCD's
  // changes inside (4.4 us, 5.5 us) -- nothing before, nothing from 5.5 us on.
  using pevp::trace::test::read_vcd;
  const pevp::trace::test::Vcd full_vcd = read_vcd(slurp(dir + "/full.vcd")), window_vcd = read_vcd(slurp(dir + "/time.vcd"));
  EXPECT_TRUE(window_vcd.problems.empty()) << ::testing::PrintToString(window_vcd.problems);
  EXPECT_NE(slurp(dir + "/time.vcd").find("$comment window 4.4us:5.5us $end"), std::string::npos);
  ASSERT_FALSE(window_vcd.stamps.empty());
  EXPECT_EQ(window_vcd.stamps.front(), 4'400'000u);
  EXPECT_LT(window_vcd.stamps.back(), 5'500'000u);
  ASSERT_EQ(window_vcd.vars.size(), full_vcd.vars.size());
  std::size_t inside = 0;
  for (const auto& var : full_vcd.vars) {
    EXPECT_EQ(window_vcd.at(var.name, 4'400'000), full_vcd.at(var.name, 4'400'000)) << var.name;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> want, got;
    for (const auto& change : full_vcd.history[full_vcd.var_of_name.at(var.name)])
      if (change.first > 4'400'000 && change.first < 5'500'000) want.push_back(change);
    for (const auto& change : window_vcd.history[window_vcd.var_of_name.at(var.name)])
      if (change.first > 4'400'000) got.push_back(change);
    EXPECT_EQ(got, want) << var.name;
    inside += want.size();
  }
  EXPECT_GT(inside, 0u) << "the window holds changes";

  // Instructions [3, 9): the events whose "instruction" argument is in it.
  const json instr_doc = traced("instr", {"--trace-window", "i3:i9"});
  EXPECT_EQ(slurp(dir + "/instr.vcd"), slurp(dir + "/full.vcd")) << "an instruction window leaves the VCD whole";
  EXPECT_EQ(instr_doc["otherData"]["window_kind"], "instructions");
  expected.clear();
  for (const Event& e : full) {
    const json args = json::parse(std::get<6>(e));
    if (args.contains("instruction") && args["instruction"] >= 3 && args["instruction"] < 9) expected.insert(e);
  }
  ASSERT_GT(expected.size(), 0u);
  EXPECT_EQ(events_of(instr_doc), expected);
}

TEST(CliInterrupt, BadTraceWindowsAreRefusedBeforeSimulating) {
  const std::string dir = scratch("bad_window");
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--trace", dir + "/t.json", "--trace-window", "20us:10us"},
       "pe-vp gemm: --trace-window '20us:10us': END '10us' is before START '20us'"},
      {{"--trace", dir + "/t.json", "--trace-window", "5us:5us"}, "the window is empty"},
      {{"--trace", dir + "/t.json", "--trace-window", "5furlongs:"}, "unknown unit 'furlongs'"},
      {{"--trace-window", "1us:2us"},
       "--trace-window 1us:2us: it keeps a window of the trace or the VCD, and neither --trace nor --vcd was given"},
  };
  for (const auto& [extra, why] : cases) {
    std::vector<std::string> args = {"gemm", "--m", "64", "--k", "64", "--n", "64", "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Child c = start(args, dir, "bad");
    EXPECT_EQ(exit_code(finish(c)), 2);
    EXPECT_NE(slurp(c.err).find(why), std::string::npos) << slurp(c.err);
    EXPECT_FALSE(fs::exists(dir + "/t.json"));
  }
}

// Six timing-only points of about a second each (an 8192^3 GEMM), one at a time: SIGINT once the first is recorded
// reaches the sweep while the second runs.
// terminal: SIGINT to the sweep's whole process group, as Ctrl-C sends it (its point in flight gets it too and ends
// 130); else to the sweep alone, as `kill -INT` does (the sweep ends its point with SIGTERM).
void interrupt_and_resume_a_sweep(const std::string& name, bool terminal) {
  const std::string dir = scratch(name);
  std::ofstream(dir + "/s.toml") << "name = \"six\"\n[[workload]]\nname = \"w\"\n"
                                    "gemms = [ { name = \"g\", m = 8192, k = 8192, n = 8192 } ]\n"
                                    "[grid]\ntile_n = [128, 256, 512]\n\"geometry.pe_rows\" = [64, 128]\n";
  const std::string out_dir = dir + "/out";
  const Child c = start({"sweep", dir + "/s.toml", "--out", out_dir, "--jobs", "1", "--no-plots", "--quiet"}, dir,
                        "sweep", terminal);
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  const auto records = [&] {
    std::map<std::string, std::string> r;  // record file -> its bytes
    if (fs::exists(out_dir + "/points"))
      for (const auto& e : fs::directory_iterator(out_dir + "/points"))
        if (e.path().extension() == ".json") r[e.path().filename().string()] = slurp(e.path().string());
    return r;
  };
  // A point in flight has its stderr file, KEY.json.err, beside the records.
  const auto in_flight = [&] {
    if (fs::exists(out_dir + "/points"))
      for (const auto& e : fs::directory_iterator(out_dir + "/points"))
        if (e.path().extension() == ".err") return true;
    return false;
  };
  while ((records().empty() || !in_flight()) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (records().empty() || !in_flight()) {
    ::kill(c.pid, SIGKILL);
    finish(c);
    FAIL() << "no point recorded with the next one running in 120 s: " << slurp(c.err);
  }
  ::kill(terminal ? -c.pid : c.pid, SIGINT);
  const int status = finish(c);
  const std::string err = slurp(c.err);
  EXPECT_EQ(exit_code(status), 130) << err;
  std::smatch m;
  const std::regex line(R"(pe-vp sweep: interrupted by SIGINT: (\d) of 6 points recorded, (\d) in flight ended unrecorded; resume with: (.*)\n)");
  ASSERT_TRUE(std::regex_search(err, m, line)) << err;
  const auto kept = records();
  EXPECT_EQ(std::to_string(kept.size()), m[1].str());
  EXPECT_LT(kept.size(), 6u);
  // One job: at most one point was in flight. It is usually the one seen running above, but on a loaded machine it
  // can end between that look and the signal, before the next one starts.
  EXPECT_LE(std::stoi(m[2].str()), 1);
  // Nothing of the ended point is left beside the records.
  for (const auto& e : fs::directory_iterator(out_dir + "/points"))
    EXPECT_EQ(e.path().extension(), ".json") << e.path();

  // The resume command, run as the message gives it, runs only the rest.
  const std::string resume = m[3].str();
  EXPECT_NE(resume.find(" --resume"), std::string::npos) << resume;
  const int rc = std::system((resume + " > " + dir + "/resume.out 2> " + dir + "/resume.err").c_str());
  EXPECT_EQ(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, 0) << slurp(dir + "/resume.err");
  EXPECT_NE(slurp(dir + "/resume.out").find("6 points (6 distinct), " + std::to_string(kept.size()) +
                                            " already recorded, " + std::to_string(6 - kept.size()) + " to run"),
            std::string::npos)
      << slurp(dir + "/resume.out");
  const auto all = records();
  EXPECT_EQ(all.size(), 6u);
  for (const auto& [file, bytes] : kept) EXPECT_EQ(all.at(file), bytes) << file << " was run again";
  EXPECT_TRUE(fs::exists(out_dir + "/results.csv"));
}

TEST(CliInterrupt, SweepStopsOnKillAndItsResumeCommandFinishesIt) { interrupt_and_resume_a_sweep("sweep_kill", false); }

TEST(CliInterrupt, SweepStopsOnCtrlCAndItsResumeCommandFinishesIt) {
  interrupt_and_resume_a_sweep("sweep_ctrl_c", true);
}

}  // namespace
