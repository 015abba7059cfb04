// `pe-vp sweep SPEC --out DIR`: an architecture-exploration sweep -- every point of the spec (platform/sweep,
// docs/sweeps.md) run as its own `pe-vp gemm` simulation in a process of its own, on this machine's cores or as a Slurm job array, each point
// recorded as it ends (so --resume skips what is done), then merged into results.csv, summary.json and plots.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "pevp/platform/progress.h"
#include "pevp/sweep/runner.h"

namespace pevp::platform {

struct SweepCommand {
  std::string spec_path;  // the spec (not needed by --collect and --run-chunk, which read DIR/sweep.json)
  std::string out_dir;
  std::string backend = "local";  // local | slurm
  unsigned jobs = 0;              // local: processes at once (0 = the machine's cores)
  bool resume = false;            // continue the sweep in DIR: skip the points already recorded
  bool retry_failed = false;      // with --resume: run the failed points again too
  bool collect = false;           // only merge DIR's records into the results
  std::optional<std::size_t> run_chunk;  // a Slurm task: run chunk N of DIR/slurm/chunks.json
  bool plots = true;              // run scripts/sweep_plots.py over the results
  bool scalesim_report = false;   // also DIR/COMPUTE_REPORT.csv in SCALE-Sim's columns
  // Slurm: --partition, --time, extra sbatch arguments, points per array task (0 = about 32 tasks), sbatch --wait.
  std::string partition, time;
  std::vector<std::string> sbatch_args;
  std::size_t chunk_size = 0;
  bool wait = false;
  // --coverage FILE (local backend): every point's functional coverage merged into FILE (docs/coverage.md).
  std::string coverage_path;
  Progress::Style progress = Progress::Style::Off;
  std::string pe_vp;  // the binary the points run (this one)
  // How points get their process (--point-isolation): persistent workers or a child per point forked from the sweep,
  // running `run_in_child` (pe-vp's own command line, main.cpp), or `pe-vp gemm` started afresh.
  sweep::PointIsolation isolation = sweep::PointIsolation::Worker;
  sweep::InChildRunner run_in_child;
  std::size_t points_per_worker = sweep::LocalOptions{}.points_per_worker;  // --point-isolation worker
};

// Exit status: 0 every point ok; 1 some point failed or is missing (the others are recorded); 2 a bad spec,
// option or folder; 3 the backend could not run (a process or sbatch failed to start).
int run_sweep(const SweepCommand& cmd, std::ostream& out, std::ostream& err);

}  // namespace pevp::platform
