// A sweep folder's lock (docs/sweeps.md "Running it", D-SWEEP-LOCK): DIR/sweep.lock, held with flock(2) by the one
// process that owns the folder's shared files for its whole run -- a sweep that plans (also with --resume), writes
// sweep.json, runs its points or submits them to Slurm (and, with --wait, waits for them), then writes results.csv;
// and --collect. A second such process into the same folder is refused, naming the holder's pid. Without it two
// sweeps could both find no sweep.json, both write one and both claim results.csv.
//
// A Slurm array's tasks (--run-chunk) take no lock: they run under the plan their submitter wrote and each writes only
// its own points' records, atomically; a submitter that waits (--wait) holds the lock while they run.
//
// The lock is the kernel's: it ends with its holder, however that ends (a crash, SIGKILL), so a folder is never left
// locked by a process that has gone. The file stays (removing it would race with a process that has it open).
#pragma once

#include <stdexcept>
#include <string>

namespace pevp::sweep {

// A folder in use, or a lock file that cannot be made: what() names the folder, the holder's pid when it is known,
// and what to do.
class LockError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SweepLock {
 public:
  // Takes out_dir/sweep.lock (the folder must exist) without waiting. Throws LockError when another process holds it
  // ("DIR is in use by another pe-vp sweep (pid 1234, DIR/sweep.lock): ...") or when the file cannot be opened.
  explicit SweepLock(const std::string& out_dir);
  ~SweepLock();
  SweepLock(const SweepLock&) = delete;
  SweepLock& operator=(const SweepLock&) = delete;

  static std::string path_in(const std::string& out_dir) { return out_dir + "/sweep.lock"; }

 private:
  int fd_ = -1;
};

}  // namespace pevp::sweep
