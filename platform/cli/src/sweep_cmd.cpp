// `pe-vp sweep` (see sweep_cmd.h and docs/sweeps.md).
#include "pevp/platform/sweep_cmd.h"

#include "pevp/platform/interrupt.h"
#include "sweep_resume.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "pevp/coverage/collector.h"
#include "pevp/files/output_file.h"
#include "pevp/isa/generation.h"
#include "pevp/platform/config.h"
#include "pevp/platform/disasm.h"
#include "pevp/platform/gemm.h"
#include "pevp/platform/samples.h"
#include "pevp/sweep/lock.h"
#include "pevp/sweep/results.h"
#include "pevp/sweep/runner.h"
#include "pevp/sweep/spec.h"


namespace pevp::platform {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string plan_path(const std::string& dir) { return dir + "/sweep.json"; }

std::string describe(const sweep::Point& p) {
  std::string s;
  for (const sweep::Param& q : p.params) s += (s.empty() ? "" : ", ") + q.name + "=" + sweep::value_text(q.value);
  return s.empty() ? "the defaults" : s;
}

std::string param_or(const sweep::Point& p, const char* name, const std::string& fallback) {
  const json* v = sweep::find_param(p, name);
  return v ? sweep::value_text(*v) : fallback;
}

// The configuration a point's `pe-vp gemm` will run, as that command builds it: the generation's preset, then the
// configuration keys and the mode applied together and validated once (apply_overrides), so the rules relating keys
// hold for the point's whole configuration whatever order the spec lists them in. Throws with the spec's words when
// a key or value is bad.
VpConfig effective_config(const sweep::Point& p, const std::string& source) {
  const std::string gen = param_or(p, "gen", "MARIANA");
  const auto g = isa::parse_generation(gen);
  if (!g)
    throw sweep::SpecError(source + ": gen = " + gen + ": unknown generation (CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK)");
  VpConfig config = preset(*g);
  try {
    std::vector<std::string> sets;
    for (const sweep::Param& q : p.params)
      if (sweep::param_kind(q.name, q.name) == sweep::ParamKind::ConfigKey)
        sets.push_back(q.name + "=" + sweep::value_text(q.value));
    sets.push_back("mode=" + param_or(p, "mode", "timing"));
    apply_overrides(config, sets);
  } catch (const std::bad_alloc&) {
    throw;  // not the spec's fault: pe-vp's out-of-host-memory error (main.cpp), not a configuration message
  } catch (const std::exception& e) {
    throw sweep::SpecError(source + ": the configuration " + describe(p) + ": " + e.what());
  }
  return config;
}

// A point's effective configuration as configuration_part needs it, kept for the next configuration: the grid's
// gemm options and CSR knobs vary faster than the configuration keys listed before them, so consecutive
// configurations mostly share it (a 1,000,000-point grid of tile_n x sbuf_budget has one).
struct EffectiveConfig {
  std::string identity;  // what effective_config reads: gen, the configuration keys in order, mode
  VpConfig config;
  std::string text;      // to_json(config).dump()
  std::string gen;
  std::string csrs;           // the last configuration's register writes (JSON text)
  std::optional<sweep::Fnv1a> key_prefix;  // and its key prefix, for the next configuration with the same writes
};

std::string config_identity(const sweep::Point& p) {
  std::string id = "gen=" + param_or(p, "gen", "MARIANA") + "\nmode=" + param_or(p, "mode", "timing");
  for (const sweep::Param& q : p.params)
    if (sweep::param_kind(q.name, q.name) == sweep::ParamKind::ConfigKey)
      id += "\n" + q.name + "=" + sweep::value_text(q.value);
  return id;
}

// What the points of one configuration share, made at its first point: the generation, and the FNV-1a state after
// the part of their key's text that is the same for all of them.
struct ConfigurationPart {
  std::size_t index = 0;
  std::string gen;
  sweep::Fnv1a key_prefix;
};

ConfigurationPart configuration_part(const sweep::Point& p, const std::vector<std::string>& args,
                                     const std::string& source, std::optional<EffectiveConfig>& last) {
  if (std::string id = config_identity(p); !last || last->identity != id) {
    EffectiveConfig e{std::move(id), effective_config(p, source), "", "", "", {}};
    const json configuration = to_json(e.config);
    e.text = configuration.dump();
    e.gen = configuration.value("generation", "MARIANA");
    last = std::move(e);
  }
  json csrs = json::array();
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--csr") {
      try {
        parse_csr_write(last->config.platform.map, args[i + 1]);
      } catch (const std::bad_alloc&) {
        throw;
      } catch (const std::exception& e) {
        throw sweep::SpecError(source + ": the configuration " + describe(p) + ": " + e.what());
      }
      csrs.push_back(args[i + 1]);
    }
  // A point's key is that of {"configuration":...,"csrs":[...],"gemm":{...}} as json::dump writes it (keys sorted,
  // no blanks): everything before the gemm's object is the configuration's.
  if (std::string writes = csrs.dump(); !last->key_prefix || writes != last->csrs) {
    last->key_prefix =
        sweep::Fnv1a().add("{\"configuration\":").add(last->text).add(",\"csrs\":").add(writes).add(",\"gemm\":");
    last->csrs = std::move(writes);
  }
  return {p.configuration, last->gen, *last->key_prefix};
}

// Every point with its key and arguments. The key hashes what the point simulates -- the whole effective
// configuration, the GEMM and its options, the register writes -- so equal points share it whatever the spec spells.
// A configuration's points are consecutive (expand), so one configuration is held at a time.
sweep::SweepPlan make_plan(const sweep::SweepSpec& spec) {
  sweep::SweepPlan plan;
  plan.name = spec.name;
  plan.spec_path = fs::absolute(spec.source).string();
  plan.swept = spec.swept();
  for (const sweep::Param& q : spec.baseline) plan.baseline[q.name] = q.value;
  std::vector<sweep::Point> points = sweep::expand(spec);
  plan.points.reserve(points.size());
  std::optional<EffectiveConfig> last_config;
  std::optional<ConfigurationPart> part;
  for (sweep::Point& p : points) {
    sweep::PlannedPoint pp;
    pp.args = sweep::gemm_arguments(p);
    if (!part || part->index != p.configuration) part = configuration_part(p, pp.args, spec.source, last_config);
    pp.gen = part->gen;
    pp.dtype = param_or(p, "dtype", "bf16");
    const json gemm = {{"m", p.layer.m},
                       {"k", p.layer.k},
                       {"n", p.layer.n},
                       {"dtype", pp.dtype},
                       {"fp32_mode", param_or(p, "fp32_mode", "")},
                       {"tile_n", param_or(p, "tile_n", "default")},
                       {"double_row", param_or(p, "double_row", "false")},
                       {"sbuf_budget", param_or(p, "sbuf_budget", "all")},
                       {"check", param_or(p, "check", "false")}};
    pp.key = sweep::Fnv1a(part->key_prefix).add(gemm.dump()).add("}").hex();
    pp.point = std::move(p);
    plan.points.push_back(std::move(pp));
  }
  return plan;
}

// The plan a sweep wrote: at most 1,000,000 points of about 1 KiB each, so the bound is the plan of the largest sweep.
constexpr std::size_t kMaxPlanBytes = std::size_t{4} << 30;

sweep::SweepPlan read_plan(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(plan_path(dir), ec))
    throw sweep::SpecError(plan_path(dir) + ": no sweep here (run pe-vp sweep SPEC --out " + dir + " first)");
  std::string text;
  try {
    text = sweep::read_input_file(plan_path(dir), kMaxPlanBytes, "a sweep plan");
  } catch (const sweep::WorkloadError& e) {  // a directory or an unreadable file: its reason, not a JSON error
    throw sweep::SpecError(e.what());
  }
  return sweep::read_plan_text(text, plan_path(dir));
}

std::vector<std::optional<json>> read_records(const sweep::SweepPlan& plan, const std::string& dir) {
  std::vector<std::optional<json>> records;
  for (const sweep::PlannedPoint& p : plan.points) records.push_back(sweep::read_record(dir, p.key));
  return records;
}

// The plotting script: PEVP_SWEEP_PLOTS, else the source tree's.
std::string plots_script() {
  if (const char* e = std::getenv("PEVP_SWEEP_PLOTS")) return e;
  return PEVP_SCRIPTS_DIR "/sweep_plots.py";
}

// Runs the plotting script; returns "" or why it did not.
std::string run_plots(const std::string& dir, const std::vector<std::string>& extra, const std::string& log) {
  const std::string script = plots_script();
  if (!fs::exists(script)) return script + " not found (set PEVP_SWEEP_PLOTS)";
  std::vector<std::string> argv = {"/usr/bin/python3", script, dir + "/results.csv", dir + "/plots"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  if (extra.size() >= 2 && extra[0] == "--format") argv[3] = dir;  // the SCALE-Sim report goes beside results.csv
  int status = 0;
  try {
    status = sweep::run_process(argv, log, log);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return script + " failed (see " + log + ")";
  return "";
}

// One line per complete network and configuration: its time, the array's utilisation, and how much of the array's
// time went to waiting for data (the memory system's share), so the answer needs no CSV. At most kShown lines.
void print_networks(const nlohmann::json& summary, std::ostream& out) {
  constexpr std::size_t kShown = 12;
  std::size_t shown = 0, complete = 0;
  for (const nlohmann::json& n : summary.at("networks")) {
    if (!n.contains("time_ns")) continue;
    if (complete++ >= kShown) continue;
    ++shown;
    std::string params;
    for (const auto& [key, value] : n.at("params").items())
      params += (params.empty() ? "" : ", ") + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
    const double time_ms = n.at("time_ns").get<double>() / 1e6;
    const double waiting_ms = n.value("waiting_for_data_ns", 0.0) / 1e6;
    std::ostringstream line;
    line << std::fixed << std::setprecision(3) << "  network: " << n.at("workload").get<std::string>()
         << (params.empty() ? "" : " [" + params + "]") << ": " << time_ms << " ms, array utilisation "
         << std::setprecision(1) << 100.0 * n.at("utilisation").get<double>() << "%, waiting for data "
         << std::setprecision(3) << waiting_ms << " ms (" << std::setprecision(1)
         << (time_ms > 0 ? 100.0 * waiting_ms / time_ms : 0.0) << "%)";
    if (n.contains("hbm_bytes")) line << ", HBM " << std::setprecision(1) << n["hbm_bytes"].get<double>() / (1 << 20) << " MiB";
    out << line.str() << '\n';
  }
  if (complete > shown) out << "  (" << complete - shown << " more in summary.json)\n";
}

int collect(const SweepCommand& cmd, const sweep::SweepPlan& plan, std::ostream& out, std::ostream& err) {
  const auto records = read_records(plan, cmd.out_dir);
  const nlohmann::json summary = sweep::summary(plan, records);
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"results.csv", sweep::results_csv(plan, records)},
        {"summary.json", summary.dump(2) + "\n"}}) {
    if (const std::string e = sweep::write_text_atomically(cmd.out_dir + "/" + name, text); !e.empty()) {
      err << "pe-vp sweep: " << e << '\n';
      return 2;
    }
  }
  std::size_t ok = 0, failed = 0, missing = 0;
  std::set<std::string> errors;
  for (const auto& r : records) {
    if (!r) ++missing;
    else if (r->value("status", "") == "ok") ++ok;
    else {
      ++failed;
      errors.insert(r->value("error", ""));
    }
  }
  out << "pe-vp sweep: " << plan.name << ": " << plan.points.size() << " points: " << ok << " ok, " << failed
      << " failed, " << missing << " missing\n";
  constexpr std::size_t kShownErrors = 3;
  std::size_t shown = 0;
  for (const std::string& e : errors)
    if (shown++ < kShownErrors) out << "  failed: " << e << '\n';
  print_networks(summary, out);
  for (const nlohmann::json& note : summary.at("notes")) out << "  note: " << note.get<std::string>() << '\n';
  out << "  wrote:  " << cmd.out_dir << "/results.csv, " << cmd.out_dir << "/summary.json\n";
  if (cmd.plots && ok > 0) {
    // The speedups' baseline, when the spec named one ([plots] baseline): the script checks it against the CSV too.
    std::vector<std::string> baseline;
    for (const auto& [name, value] : plan.baseline.items())
      baseline.insert(baseline.end(), {"--baseline", name + "=" + sweep::value_text(value)});
    const std::string e = run_plots(cmd.out_dir, baseline, cmd.out_dir + "/plots.log");
    if (e.empty())
      out << "  wrote:  " << cmd.out_dir << "/plots/*.png, " << cmd.out_dir << "/plots/README.md (what each plot "
          << "answers, and which configuration is fastest, most efficient, and why)\n";
    else err << "pe-vp sweep: no plots: " << e << '\n';
  }
  if (cmd.scalesim_report && ok > 0) {
    const std::string e = run_plots(cmd.out_dir, {"--format", "scalesim"}, cmd.out_dir + "/scalesim-report.log");
    if (e.empty()) out << "  wrote:  " << cmd.out_dir << "/COMPUTE_REPORT.csv\n";
    else err << "pe-vp sweep: no COMPUTE_REPORT.csv: " << e << '\n';
  }
  return failed + missing == 0 ? 0 : 1;
}

// Why --out cannot be the sweep's folder, or "". create_directories says only "File exists" for a symlink whose target
// is missing (it would not follow it) and for a file.
std::string out_dir_problem(const std::string& dir) {
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(dir, ec);
  if (fs::is_symlink(link) && !fs::exists(dir, ec)) {
    const fs::path target = fs::read_symlink(dir, ec);
    return dir + ": a symlink to '" + target.string() + "', which does not exist (make the folder it names, or give " +
           "another --out)";
  }
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) return dir + ": not a folder (give a folder, or a new path)";
  return "";
}

// The local runner's options, stopping when a watched signal was noted (interrupt.h).
sweep::LocalOptions stoppable(sweep::LocalOptions o) {
  o.stop_requested = [] { return interrupt_signal() != 0; };
  return o;
}

// "interrupted by SIGINT: 3 of 8 points recorded, 2 in flight ended unrecorded"
std::string stopped_text(const sweep::LocalOutcome& done, std::size_t points) {
  return "interrupted by " + signal_name(interrupt_signal()) + ": " + std::to_string(done.recorded) + " of " +
         std::to_string(points) + " points recorded, " + std::to_string(done.ended_in_flight) +
         " in flight ended unrecorded";
}

// --coverage: the coverage files of the plan's points (one per distinct point: equal points share a simulation)
// merged into one. A point recorded without one (a sweep resumed after a run without --coverage) is left out and
// counted. 0, or 2 with the message when a point's file is refused or the merged one cannot be written.
int merge_coverage(const SweepCommand& cmd, const sweep::SweepPlan& plan, std::ostream& out, std::ostream& err) {
  coverage::Collector merged;
  merged.set_runs(0);
  std::set<std::string> keys;
  std::size_t with = 0, without = 0;
  for (const sweep::PlannedPoint& p : plan.points) {
    if (!keys.insert(p.key).second) continue;
    const std::string path = sweep::coverage_path(cmd.out_dir, p.key);
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      ++without;
      continue;
    }
    try {
      merged.merge(coverage::read_file(path));
      ++with;
    } catch (const std::invalid_argument& e) {
      err << "pe-vp sweep: --coverage: " << e.what() << '\n';
      return 2;
    }
  }
  std::string error;
  if (!coverage::write_file(cmd.coverage_path, merged, &error)) {
    err << "pe-vp sweep: --coverage: " << error << '\n';
    return 2;
  }
  out << "  coverage: " << with << " points merged into " << cmd.coverage_path
      << (without ? " (" + std::to_string(without) + " without a coverage file)" : std::string()) << '\n';
  return 0;
}

unsigned default_jobs() { return std::max(1u, std::thread::hardware_concurrency()); }

// What every forked point or worker would otherwise build for itself (D-SWEEP-FORK): the tables pe-vp makes on their first use
// -- the ISA's struct layouts, encoders, decoders and rules (each generation's sample program, decoded and checked,
// reaches them all), each generation's preset and the configuration keys -- built here once, before the first fork,
// so that every child inherits them built.
void warm_up_for_forked_points() {
  std::ostream discard(nullptr);
  for (const isa::Generation g : isa::kAllGenerations) {
    std::vector<std::uint8_t> bytes;
    for (const SampleInstruction& s : sample_stream(g)) bytes.insert(bytes.end(), s.bytes.begin(), s.bytes.end());
    (void)disassemble(bytes, DisasmOptions(g), discard);
    VpConfig config = preset(g);
    apply_override(config, "mode=timing");
    (void)to_json(config);
  }
}

// The local runner's options for `jobs` points at once, each run as --point-isolation says.
sweep::LocalOptions local_options(const SweepCommand& cmd, unsigned jobs) {
  sweep::LocalOptions o{cmd.pe_vp, cmd.out_dir, jobs};
  o.isolation = cmd.isolation;
  o.run_in_child = cmd.run_in_child;
  o.points_per_worker = cmd.points_per_worker;
  if (o.isolation != sweep::PointIsolation::Process) warm_up_for_forked_points();
  return o;
}

}  // namespace

int run_sweep(const SweepCommand& cmd, std::ostream& out, std::ostream& err) {
  try {
    if (cmd.out_dir.empty()) {
      err << "pe-vp sweep: --out DIR is required\n";
      return 2;
    }
    if (cmd.run_chunk) {  // a Slurm task: its chunk, one point after another
      const sweep::SweepPlan plan = read_plan(cmd.out_dir);
      const std::vector<std::size_t> todo = sweep::read_chunk(cmd.out_dir, *cmd.run_chunk);
      // Slurm ends a task with SIGTERM (scancel, its time limit): the point in flight stops unrecorded.
      const InterruptWatch watch(true);
      const sweep::LocalOutcome done =
          sweep::run_local(plan, todo, stoppable(local_options(cmd, 1)), [&](const sweep::PlannedPoint& p, const json& r) {
            out << p.key << " " << p.point.workload << "/" << p.point.layer.name << ": " << r.value("status", "") << '\n';
          });
      if (done.stopped) {
        err << "pe-vp sweep: chunk " << *cmd.run_chunk << " " << stopped_text(done, todo.size())
            << "; a rerun with --resume runs the rest\n";
        return interrupted_status(interrupt_signal());
      }
      return 0;
    }
    if (cmd.collect) {
      // Locked while results.csv is written; a missing folder is named by read_plan.
      std::error_code ec;
      std::optional<sweep::SweepLock> lock;
      if (fs::is_directory(cmd.out_dir, ec)) lock.emplace(cmd.out_dir);
      return collect(cmd, read_plan(cmd.out_dir), out, err);
    }

    if (cmd.spec_path.empty()) {
      err << "pe-vp sweep: give the spec file (or --collect)\n";
      return 2;
    }
    if (cmd.backend != "local" && cmd.backend != "slurm") {
      err << "pe-vp sweep: --backend " << cmd.backend << ": local or slurm\n";
      return 2;
    }
    if (!cmd.coverage_path.empty() && cmd.backend != "local") {
      err << "pe-vp sweep: --coverage " << cmd.coverage_path << ": the local backend's points write it; with "
          << "--backend slurm give each point's coverage through --collect's records instead (not supported)\n";
      return 2;
    }
    if (!cmd.coverage_path.empty())
      if (const std::string bad = files::check_output(cmd.coverage_path); !bad.empty()) {
        err << "pe-vp sweep: --coverage " << bad << '\n';
        return 2;
      }
    const sweep::SweepSpec spec = sweep::read_spec(cmd.spec_path);
    const sweep::SweepPlan plan = make_plan(spec);
    if (const std::string problem = out_dir_problem(cmd.out_dir); !problem.empty()) {
      err << "pe-vp sweep: --out " << problem << '\n';
      return 2;
    }
    std::error_code ec;
    fs::create_directories(sweep::points_dir(cmd.out_dir), ec);
    if (ec) {
      err << "pe-vp sweep: --out " << cmd.out_dir << ": " << ec.message() << '\n';
      return 2;
    }
    // Held to the end: from the check that the folder holds no sweep and the plan's writing to results.csv.
    const sweep::SweepLock lock(cmd.out_dir);
    if (fs::exists(plan_path(cmd.out_dir)) && !cmd.resume) {
      err << "pe-vp sweep: " << cmd.out_dir << " holds a sweep already (sweep.json): --resume continues it, or "
          << "choose another --out\n";
      return 2;
    }
    if (std::string e; !files::write_file(plan_path(cmd.out_dir), [&](std::ostream& o) { sweep::write_plan(o, plan); },
                                          &e)) {
      err << "pe-vp sweep: " << e << '\n';
      return 2;
    }
    // What is left to run: each key once (equal points share it), without the recorded ones on --resume.
    std::vector<std::size_t> todo;
    std::set<std::string> keys;
    std::size_t recorded = 0;
    for (const sweep::PlannedPoint& p : plan.points) {
      if (!keys.insert(p.key).second) continue;
      const auto r = sweep::read_record(cmd.out_dir, p.key);
      if (r && (r->value("status", "") == "ok" || !cmd.retry_failed)) {
        ++recorded;
        continue;
      }
      todo.push_back(p.point.index);
    }
    out << "pe-vp sweep: " << plan.name << ": " << plan.points.size() << " points (" << keys.size()
        << " distinct), " << recorded << " already recorded, " << todo.size() << " to run\n";
    for (const sweep::Network& w : spec.workloads)  // what a framework graph held that no point models
      if (!w.ignored.empty()) out << "  workload " << w.name << ": " << sweep::ignored_text(w.ignored) << '\n';
    if (cmd.backend == "slurm" && !todo.empty()) {
      sweep::SlurmOptions o{fs::absolute(cmd.pe_vp).string(), fs::absolute(cmd.out_dir).string(), cmd.partition,
                            cmd.time, cmd.sbatch_args, cmd.chunk_size, cmd.wait, cmd.isolation};
      const auto chunks = sweep::chunks_of(todo, cmd.chunk_size);
      std::string id;
      const InterruptWatch watch(true);
      try {
        id = sweep::submit_slurm(chunks, o);
      } catch (const std::bad_alloc&) {
        throw;
      } catch (const std::exception& e) {
        if (const int signal = interrupt_signal()) {  // sbatch --wait met the terminal's Ctrl-C too
          err << "pe-vp sweep: interrupted by " << signal_name(signal) << " (" << e.what() << "); the tasks Slurm "
              << "started or queued go on (squeue shows them, scancel ends them); resume with: "
              << resume_command(cmd) << '\n';
          return interrupted_status(signal);
        }
        err << "pe-vp sweep: " << e.what() << '\n';
        return 3;
      }
      if (const int signal = interrupt_signal()) {
        err << "pe-vp sweep: interrupted by " << signal_name(signal) << ": Slurm job " << id << " goes on (scancel "
            << id << " ends it); when it has ended, pe-vp sweep --collect --out " << cmd.out_dir
            << " merges its points, or resume with: " << resume_command(cmd) << '\n';
        return interrupted_status(signal);
      }
      out << "  submitted: Slurm job " << id << ", an array of " << chunks.size() << " task(s)\n";
      if (!cmd.wait) {
        out << "  when it has ended: pe-vp sweep --collect --out " << cmd.out_dir << '\n';
        return 0;
      }
    } else if (!todo.empty()) {
      Progress progress(err, cmd.progress, todo.size(), "pe-vp sweep", "points");
      // SIGINT / SIGTERM: no point starts any more, those in flight are ended unrecorded (D-SWEEP-INTERRUPT).
      const InterruptWatch watch(true);
      sweep::LocalOutcome done;
      try {
        sweep::LocalOptions o = stoppable(local_options(cmd, cmd.jobs ? cmd.jobs : default_jobs()));
        o.coverage = !cmd.coverage_path.empty();
        done = sweep::run_local(plan, todo, o, [&](const sweep::PlannedPoint&, const json&) { progress.advance(1); });
      } catch (const std::bad_alloc&) {
        throw;
      } catch (const std::exception& e) {
        err << "pe-vp sweep: " << e.what() << '\n';
        return 3;
      }
      progress.finish();
      if (done.stopped) {
        err << "pe-vp sweep: " << stopped_text(done, todo.size()) << "; resume with: " << resume_command(cmd) << '\n';
        return interrupted_status(interrupt_signal());
      }
    }
    if (!cmd.coverage_path.empty())
      if (const int status = merge_coverage(cmd, plan, out, err); status != 0) return status;
    return collect(cmd, plan, out, err);
  } catch (const sweep::SpecError& e) {
    err << "pe-vp sweep: " << e.what() << '\n';
    return 2;
  } catch (const sweep::LockError& e) {
    err << "pe-vp sweep: " << e.what() << '\n';
    return 2;
  } catch (const std::bad_alloc&) {
    // Out of host memory is pe-vp's one documented error for it (sc_main: "pe-vp: out of host memory", status 2),
    // not a backend failure (status 3) named "std::bad_alloc".
    throw;
  } catch (const std::exception& e) {
    err << "pe-vp sweep: " << e.what() << '\n';
    return 3;
  }
}

}  // namespace pevp::platform
