// Running a sweep's points (see runner.h).
#include "pevp/sweep/runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "pevp/documents/documents.h"

extern char** environ;

namespace pevp::sweep {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  constexpr std::size_t kMaxError = 2000;  // a record keeps the end of a long error, where the reason is
  if (s.size() > kMaxError) s = "..." + s.substr(s.size() - kMaxError);
  return s;
}

// Starts `argv` with stdout to `out_path` and stderr to `err_path` ("" = /dev/null). Throws with the reason.
pid_t spawn(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path,
            bool search_path = false) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.empty() ? "/dev/null" : out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!err_path.empty() && err_path == out_path)
    posix_spawn_file_actions_adddup2(&actions, 1, 2);  // one log: one file offset, not two overwriting each other
  else
    posix_spawn_file_actions_addopen(&actions, 2, err_path.empty() ? "/dev/null" : err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = search_path ? posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ)
                             : posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

// Runs `run(argv)` in a forked child with stdin from /dev/null, stdout to /dev/null and stderr to `err_path`, as
// spawn would start `argv`; the child ends with run's status. Throws with the reason when it cannot be started.
pid_t fork_point(const std::vector<std::string>& argv, const std::string& err_path, const InChildRunner& run) {
  if (!run) throw std::logic_error("a forked point needs LocalOptions::run_in_child");
  // What the sweep has buffered goes out once, from here, not once more from every child.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  // Opened here, so that a file that cannot be made is the sweep's error (as posix_spawn's would be), and the child
  // does nothing that can fail before its point runs.
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int open_errno = errno;
  const auto close_all = [&] {
    for (const int fd : {in, out, err})
      if (fd >= 0) ::close(fd);
  };
  if (in < 0 || out < 0 || err < 0) {
    close_all();
    throw std::runtime_error("cannot start a point: " + (err < 0 ? err_path : std::string("/dev/null")) + ": " +
                             std::strerror(open_errno));
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    // Nothing else of the sweep's: its lock on the folder (sweep.lock) ends with the sweep, not with its last point.
    ::close_range(3, ~0U, 0);
    int status = 1;
    try {
      status = run(argv);
    } catch (const std::exception& e) {
      std::cerr << "pe-vp gemm: " << e.what() << '\n';
    } catch (...) {
      std::cerr << "pe-vp gemm: an exception that is not a std::exception\n";
    }
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    // _exit: the sweep's own atexit handlers and static objects are the parent's to run, not every child's.
    ::_exit(status & 0xff);
  }
  const int fork_errno = errno;
  close_all();
  if (pid < 0) throw std::runtime_error(std::string("cannot fork a point's process: ") + std::strerror(fork_errno));
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  return status;
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "exit status " + std::to_string(WEXITSTATUS(status));
}

// A point in flight.
struct Running {
  std::size_t index;
  Clock::time_point start;
  std::string stats, err;
};

json finish(const Running& r, int status) {
  const double wall = std::chrono::duration<double>(Clock::now() - r.start).count();
  const std::string err = trimmed(slurp(r.err));
  json record;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    try {
      record = ok_record(documents::parse_json(slurp(r.stats), r.stats), wall);
    } catch (const documents::DocumentError& e) {
      record = failed_record("the point's --stats-json could not be read: " + std::string(e.what()), 0, wall);
    } catch (const json::exception& e) {
      record = failed_record("the point's --stats-json could not be read: " + std::string(e.what()), 0, wall);
    }
  } else {
    record = failed_record(err.empty() ? exit_text(status) : err, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                           wall);
  }
  std::remove(r.stats.c_str());
  std::remove(r.err.c_str());
  return record;
}

std::string quoted(const std::string& s) {  // for sh: '...' with ' as '\''
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurm_dir(const std::string& out_dir) { return out_dir + "/slurm"; }

}  // namespace

const char* name(PointIsolation isolation) { return isolation == PointIsolation::Fork ? "fork" : "process"; }

std::optional<PointIsolation> parse_point_isolation(const std::string& text) {
  if (text == "fork") return PointIsolation::Fork;
  if (text == "process") return PointIsolation::Process;
  return std::nullopt;
}

std::string coverage_path(const std::string& out_dir, const std::string& key) {
  return points_dir(out_dir) + "/" + key + ".coverage.json";
}

int run_process(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path) {
  return wait_for(spawn(argv, out_path, err_path));
}

LocalOutcome run_local(const SweepPlan& plan, const std::vector<std::size_t>& todo, const LocalOptions& o,
                       const std::function<void(const PlannedPoint&, const json&)>& done) {
  std::filesystem::create_directories(points_dir(o.out_dir));
  std::map<pid_t, Running> running;
  std::size_t next = 0;
  LocalOutcome outcome;
  const unsigned jobs = o.jobs == 0 ? 1 : o.jobs;
  const auto stopping = [&] { return o.stop_requested && o.stop_requested(); };
  // A point in flight when the run stops: its files go, no record is written, --resume runs it again.
  const auto forget = [](const Running& r) {
    std::remove(r.stats.c_str());
    std::remove(r.err.c_str());
  };
  const auto reap_one = [&] {
    int status = 0;
    pid_t pid;
    // With a stop to watch for, the wait polls: a stop noted just before a blocking wait began would go unseen until
    // the next point ended. A poll is every millisecond (a point of a timing sweep takes a few: a longer sleep would
    // leave its core idle), and a signal cuts its sleep short.
    const bool poll = static_cast<bool>(o.stop_requested);
    while ((pid = ::waitpid(-1, &status, poll ? WNOHANG : 0)) <= 0) {
      if (pid < 0 && errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
      if (stopping()) return;
      if (pid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const auto it = running.find(pid);
    if (it == running.end()) return;  // not a point's process
    const PlannedPoint& p = plan.points[it->second.index];
    // A terminal's Ctrl-C reaches the points too: one that failed while the run stops reruns, it is not a failure.
    if (stopping() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      forget(it->second);
      running.erase(it);
      ++outcome.ended_in_flight;
      return;
    }
    const json record = finish(it->second, status);
    running.erase(it);
    if (const std::string e = write_record(o.out_dir, p.key, record); !e.empty()) throw std::runtime_error(e);
    ++outcome.recorded;
    done(p, record);
  };
  const auto end_in_flight = [&] {
    for (const auto& [pid, r] : running) ::kill(pid, SIGTERM);
    while (!running.empty()) reap_one();  // each ends unrecorded, or with its record if it had just succeeded
  };
  try {
    while (next < todo.size() || !running.empty()) {
      if (stopping()) {
        end_in_flight();
        outcome.stopped = true;
        return outcome;
      }
      while (next < todo.size() && running.size() < jobs && !stopping()) {
        const PlannedPoint& p = plan.points.at(todo[next++]);
        Running r{p.point.index, Clock::now(), record_path(o.out_dir, p.key) + ".stats",
                  record_path(o.out_dir, p.key) + ".err"};
        std::vector<std::string> argv = {o.pe_vp, "gemm"};
        argv.insert(argv.end(), p.args.begin(), p.args.end());
        argv.insert(argv.end(), {"--quiet", "--stats-json", r.stats});
        if (o.coverage) argv.insert(argv.end(), {"--coverage", coverage_path(o.out_dir, p.key)});
        running.emplace(o.isolation == PointIsolation::Fork ? fork_point(argv, r.err, o.run_in_child)
                                                            : spawn(argv, "", r.err),
                        r);
      }
      if (!running.empty()) reap_one();
    }
    outcome.stopped = stopping() && next < todo.size();
  } catch (...) {
    // Leave no orphan: the points in flight are ended (their records are not written, so they rerun).
    for (const auto& [pid, r] : running) {
      ::kill(pid, SIGTERM);
      wait_for(pid);
      std::remove(r.stats.c_str());
      std::remove(r.err.c_str());
    }
    throw;
  }
  return outcome;
}

std::vector<std::vector<std::size_t>> chunks_of(const std::vector<std::size_t>& todo, std::size_t chunk_size) {
  constexpr std::size_t kDefaultTasks = 32;
  if (chunk_size == 0) chunk_size = std::max<std::size_t>(1, (todo.size() + kDefaultTasks - 1) / kDefaultTasks);
  std::vector<std::vector<std::size_t>> chunks;
  for (std::size_t i = 0; i < todo.size(); i += chunk_size)
    chunks.emplace_back(todo.begin() + static_cast<std::ptrdiff_t>(i),
                        todo.begin() + static_cast<std::ptrdiff_t>(std::min(todo.size(), i + chunk_size)));
  return chunks;
}

std::string submit_slurm(const std::vector<std::vector<std::size_t>>& chunks, const SlurmOptions& o) {
  if (chunks.empty()) throw std::runtime_error("no point to submit");
  const std::string dir = slurm_dir(o.out_dir);
  std::filesystem::create_directories(dir);
  if (const std::string e = write_text_atomically(dir + "/chunks.json", json(chunks).dump() + "\n"); !e.empty())
    throw std::runtime_error(e);
  const std::string script = dir + "/task.sh";
  const std::string task =
      "#!/bin/sh\n"
      "# A task of a pe-vp sweep's Slurm job array: runs chunk $SLURM_ARRAY_TASK_ID of chunks.json beside it,\n"
      "# one point after another, each recorded in the sweep's points/ folder. Written by pe-vp sweep.\n"
      "exec " + quoted(o.pe_vp) + " sweep --run-chunk \"$SLURM_ARRAY_TASK_ID\" --out " + quoted(o.out_dir) +
      " --point-isolation " + name(o.isolation) + "\n";
  if (const std::string e = write_text_atomically(script, task); !e.empty()) throw std::runtime_error(e);
  std::filesystem::permissions(script, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                           std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                           std::filesystem::perms::others_exec);
  std::vector<std::string> argv = {"sbatch", "--parsable", "--array=0-" + std::to_string(chunks.size() - 1),
                                   "--job-name=pe-vp-sweep", "--output=" + dir + "/task-%A_%a.out"};
  if (!o.partition.empty()) argv.push_back("--partition=" + o.partition);
  if (!o.time.empty()) argv.push_back("--time=" + o.time);
  argv.insert(argv.end(), o.sbatch_args.begin(), o.sbatch_args.end());
  if (o.wait) argv.push_back("--wait");
  argv.push_back(script);
  const std::string out = dir + "/sbatch.out", err = dir + "/sbatch.err";
  const int status = wait_for(spawn(argv, out, err, true));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string why = trimmed(slurp(err));
    throw std::runtime_error("sbatch failed (" + exit_text(status) + ")" + (why.empty() ? "" : ": " + why));
  }
  std::string id = trimmed(slurp(out));
  if (const auto semi = id.find(';'); semi != std::string::npos) id.resize(semi);  // "id;cluster"
  if (const auto nl = id.find('\n'); nl != std::string::npos) id.resize(nl);
  return id;
}

std::vector<std::size_t> read_chunk(const std::string& out_dir, std::size_t chunk) {
  const std::string path = slurm_dir(out_dir) + "/chunks.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw std::runtime_error(path + ": no such file (was the sweep submitted with --backend slurm?)");
  std::string text;
  try {
    // A directory or an unreadable file says so, not a JSON parse error. The bound is far past any chunk list (an
    // index per point, at most 1,000,000 points).
    text = read_input_file(path, kMaxInputBytes, "a Slurm chunk list");
  } catch (const WorkloadError& e) {
    throw std::runtime_error(e.what());
  }
  try {
    const json chunks = documents::parse_json(text, path);
    if (chunk >= chunks.size())
      throw std::runtime_error(path + ": chunk " + std::to_string(chunk) + " does not exist (" +
                               std::to_string(chunks.size()) + " chunks)");
    return chunks[chunk].get<std::vector<std::size_t>>();
  } catch (const documents::DocumentError& e) {
    throw std::runtime_error(e.what());
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace pevp::sweep
