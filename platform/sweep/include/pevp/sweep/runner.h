// Running a sweep's points: a pool of `pe-vp gemm` simulations on this machine -- in persistent workers forked from
// the sweep, each point in a fresh SystemC context; or each in a process of its own, a child forked from the sweep or
// a `pe-vp gemm` process started afresh -- and the Slurm job array whose tasks run chunks of them. Each point ends in
// its record (results.h), written atomically, so a killed run loses only the points in flight and a rerun with
// --resume skips what is done.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pevp/sweep/results.h"

namespace pevp::sweep {

// Runs `argv` (argv[0] an absolute path) to its end with stdin from /dev/null, stdout to `out_path` and stderr to
// `err_path` ("" = /dev/null; the same path = one log of both). Returns its waitpid status. Throws
// std::runtime_error when it cannot be started.
int run_process(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path);

// How a point gets its process (D-SWEEP-FORK). Either way it is a process of its own: a point that crashes or fails
// is one failed record with its message, and the others run on.
enum class PointIsolation {
  // A persistent worker forked from the sweep (D-SWEEP-WORKER): it runs the points it is sent one after another,
  // each in a fresh SystemC context (LocalOptions::run_in_child starts one), so a point costs its own elaboration and
  // simulation but no process. A point that crashes ends its worker: that point is one failed record with the way the
  // worker ended, and a new worker takes the points after it. A worker serves a bounded number of points.
  Worker,
  // A child forked from the sweep, which has done once what every point would repeat (exec, dynamic linking, static
  // initialisation, reading the plan); the child runs LocalOptions::run_in_child and ends with its status.
  Fork,
  // `pe-vp gemm ARGS` started afresh (posix_spawn): the reference the forked children are compared against.
  Process,
};

// "worker" / "fork" / "process"; parse_point_isolation is its inverse (nullopt for any other text).
const char* name(PointIsolation isolation);
std::optional<PointIsolation> parse_point_isolation(const std::string& text);

// Runs one point in a forked child or a worker: `argv` is the command line a Process point would exec (argv[0] the pe-vp binary,
// argv[1] "gemm", then its arguments); returns the exit status the process would have had. It must not return by an
// exception (one that does ends the child with status 1 and its message on stderr).
using InChildRunner = std::function<int(const std::vector<std::string>& argv)>;

struct LocalOptions {
  std::string pe_vp;    // the pe-vp binary the points run
  std::string out_dir;  // records go to out_dir/points
  unsigned jobs = 1;    // processes at once
  PointIsolation isolation = PointIsolation::Process;
  InChildRunner run_in_child = {};  // required by PointIsolation::Worker and ::Fork
  // Asked between points and every millisecond while waiting for one: true stops the run -- no point is
  // started any more, the points in flight are ended (SIGTERM) and not recorded, so they rerun on --resume; a point
  // that had ended successfully is recorded. Empty = never.
  std::function<bool()> stop_requested = {};
  // Each point also writes its functional coverage (`pe-vp gemm --coverage`, docs/coverage.md) beside its record, to
  // coverage_path(out_dir, key), kept for a resumed sweep's merge.
  bool coverage = false;
  // PointIsolation::Worker: a worker serves this many points, then ends and a new one takes its place, so that what
  // points leave in a worker's heap stays bounded however long the sweep (D-SWEEP-WORKER).
  std::size_t points_per_worker = 256;
};

// Where a point's coverage file goes: beside its record.
std::string coverage_path(const std::string& out_dir, const std::string& key);

// What run_local did: the points recorded, and whether stop_requested ended it early (with the points it ended).
struct LocalOutcome {
  std::size_t recorded = 0;
  bool stopped = false;
  std::size_t ended_in_flight = 0;
};

// Runs every point of `todo` (indices into plan.points), at most options.jobs at once, and records each. `done` is
// called in the parent after each point's record is written (for progress). Throws std::runtime_error when a
// process cannot be started or a record cannot be written (the records already written stay). Every process it
// starts has ended when it returns or throws.
LocalOutcome run_local(const SweepPlan& plan, const std::vector<std::size_t>& todo, const LocalOptions& options,
               const std::function<void(const PlannedPoint&, const nlohmann::json& record)>& done);

struct SlurmOptions {
  std::string pe_vp, out_dir;  // absolute paths: the tasks run them from wherever Slurm starts them
  std::string partition, time;  // --partition, --time ("" = the cluster's defaults)
  std::vector<std::string> sbatch_args;  // passed through as they are
  std::size_t chunk_size = 0;  // points per array task; 0 = about 32 tasks
  bool wait = false;           // sbatch --wait: return when every task has ended
  PointIsolation isolation = PointIsolation::Worker;  // how the tasks run their points (--point-isolation)
};

// The chunks of `todo`, in order, of chunk_size points (the last one shorter); chunk_size 0 = as many as make about
// 32 tasks (at least 1 point each).
std::vector<std::vector<std::size_t>> chunks_of(const std::vector<std::size_t>& todo, std::size_t chunk_size);

// Writes out_dir/slurm/chunks.json and the task script out_dir/slurm/task.sh, then submits a job array of one task
// per chunk with sbatch. Returns the job id. Throws std::runtime_error with sbatch's own message when it fails.
std::string submit_slurm(const std::vector<std::vector<std::size_t>>& chunks, const SlurmOptions& options);

// The points of chunk `chunk` (for `pe-vp sweep --run-chunk`), from out_dir/slurm/chunks.json.
std::vector<std::size_t> read_chunk(const std::string& out_dir, std::size_t chunk);

}  // namespace pevp::sweep
