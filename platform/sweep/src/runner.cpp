// Running a sweep's points (see runner.h).
#include "pevp/sweep/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
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

// Runs one point's command line in this process (a forked point or a worker): its exit status (0-255), every stream
// flushed. An exception out of `run` is the point's error on stderr, status 1.
int run_here(const InChildRunner& run, const std::vector<std::string>& argv) {
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
  return status & 0xff;
}

// What the sweep has buffered goes out once, before a fork, not once more from every child.
void flush_before_fork() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
}

// Runs `run(argv)` in a forked child with stdin from /dev/null, stdout to /dev/null and stderr to `err_path`, as
// spawn would start `argv`; the child ends with run's status. Throws with the reason when it cannot be started.
pid_t fork_point(const std::vector<std::string>& argv, const std::string& err_path, const InChildRunner& run) {
  if (!run) throw std::logic_error("a forked point needs LocalOptions::run_in_child");
  flush_before_fork();
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
    const int status = run_here(run, argv);
    // _exit: the sweep's own atexit handlers and static objects are the parent's to run, not every child's.
    ::_exit(status);
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
    // A point killed by a signal says so first, whatever it had printed before (a warning is not the cause).
    std::string why = err.empty() ? exit_text(status) : err;
    if (WIFSIGNALED(status) && !err.empty()) why = exit_text(status) + ": " + err;
    record = failed_record(why, WIFEXITED(status) ? WEXITSTATUS(status) : -1, wall);
  }
  std::remove(r.stats.c_str());
  std::remove(r.err.c_str());
  return record;
}

// A point's `pe-vp gemm` command line: argv[0] the binary, its planned arguments, its statistics to `stats` and its
// coverage beside its record when the sweep collects it.
std::vector<std::string> point_argv(const LocalOptions& o, const PlannedPoint& p, const std::string& stats) {
  std::vector<std::string> argv = {o.pe_vp, "gemm"};
  argv.insert(argv.end(), p.args.begin(), p.args.end());
  argv.insert(argv.end(), {"--quiet", "--stats-json", stats});
  if (o.coverage) argv.insert(argv.end(), {"--coverage", coverage_path(o.out_dir, p.key)});
  return argv;
}

Running running_point(const LocalOptions& o, const PlannedPoint& p) {
  return Running{p.point.index, Clock::now(), record_path(o.out_dir, p.key) + ".stats",
                 record_path(o.out_dir, p.key) + ".err"};
}

// ---- persistent workers (PointIsolation::Worker, D-SWEEP-WORKER) ----

// A worker's answer for each point it ran: the point (its index in the plan) and its exit status.
struct WorkerAnswer {
  std::uint64_t index;
  std::int64_t status;
};

// Whole messages over a stream socket; false when the other end has gone (end of file, a reset, a broken pipe:
// MSG_NOSIGNAL, so a worker that died is an answer here rather than a SIGPIPE that would end the sweep).
bool send_all(int fd, const void* data, std::size_t size) {
  const char* at = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, at, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool receive_all(int fd, void* data, std::size_t size) {
  char* at = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::recv(fd, at, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The worker's side: each point the sweep sends is run here as a forked child would run it (stdin and stdout
// /dev/null, stderr to the point's .err file, which the sweep made), and answered with its exit status. The worker
// ends when the sweep closes its end. The point itself starts from a fresh SystemC context (run_in_child's part).
[[noreturn]] void serve_points(int channel, const SweepPlan& plan, const LocalOptions& o) {
  for (;;) {
    std::uint64_t index = 0;
    if (!receive_all(channel, &index, sizeof index) || index >= plan.points.size()) ::_exit(0);
    const PlannedPoint& p = plan.points[index];
    const Running r = running_point(o, p);
    int status = 1;  // a .err file gone since the sweep made it fails the point without a message
    if (const int err = ::open(r.err.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC); err >= 0) {
      ::dup2(err, 2);
      ::close(err);
      status = run_here(o.run_in_child, point_argv(o, p, r.stats));
    }
    const WorkerAnswer answer{index, status};
    if (!send_all(channel, &answer, sizeof answer)) ::_exit(0);
  }
}

// A worker as the sweep sees it.
struct Worker {
  pid_t pid = -1;
  int channel = -1;              // the sweep's end of the socket pair
  std::optional<Running> point;  // the point in flight
  std::size_t served = 0;        // points answered
};

Worker start_worker(const SweepPlan& plan, const LocalOptions& o) {
  if (!o.run_in_child) throw std::logic_error("a worker needs LocalOptions::run_in_child");
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
    throw std::runtime_error(std::string("cannot start a worker: socketpair: ") + std::strerror(errno));
  flush_before_fork();
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) {
    const int open_errno = errno;
    ::close(ends[0]);
    ::close(ends[1]);
    throw std::runtime_error(std::string("cannot start a worker: /dev/null: ") + std::strerror(open_errno));
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);  // until its first point: nothing of a worker lands on the sweep's stderr
    ::dup2(ends[1], 3);
    // Nothing else of the sweep's (its lock on the folder ends with the sweep, not with its last worker).
    ::close_range(4, ~0U, 0);
    serve_points(3, plan, o);
  }
  const int fork_errno = errno;
  ::close(ends[1]);
  ::close(null);
  if (pid < 0) {
    ::close(ends[0]);
    throw std::runtime_error(std::string("cannot fork a worker: ") + std::strerror(fork_errno));
  }
  Worker w;
  w.pid = pid;
  w.channel = ends[0];
  return w;
}

std::string quoted(const std::string& s) {  // for sh: '...' with ' as '\''
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurm_dir(const std::string& out_dir) { return out_dir + "/slurm"; }

}  // namespace

const char* name(PointIsolation isolation) {
  switch (isolation) {
    case PointIsolation::Worker: return "worker";
    case PointIsolation::Fork: return "fork";
    case PointIsolation::Process: return "process";
  }
  return "?";
}

std::optional<PointIsolation> parse_point_isolation(const std::string& text) {
  if (text == "worker") return PointIsolation::Worker;
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

namespace {

// run_local with PointIsolation::Worker: at most `jobs` workers, each sent one point at a time as it answers the
// last. A worker that ends while it runs a point (a crash, an exit from inside the command) gives that point the
// status a process of its own would have ended with, and a new worker takes the points after it.
LocalOutcome run_workers(const SweepPlan& plan, const std::vector<std::size_t>& todo, const LocalOptions& o,
                         const std::function<void(const PlannedPoint&, const json&)>& done) {
  const unsigned jobs = o.jobs == 0 ? 1 : o.jobs;
  const auto stopping = [&] { return o.stop_requested && o.stop_requested(); };
  std::vector<Worker> workers;
  std::size_t next = 0;
  LocalOutcome outcome;
  const auto forget = [](const Running& r) {
    std::remove(r.stats.c_str());
    std::remove(r.err.c_str());
  };
  // A point ended with `status`: its record, or, while the run stops, nothing for a point that did not succeed (a
  // terminal's Ctrl-C reaches the points too; such a point reruns on --resume, it is not a failure).
  const auto point_ended = [&](const Running& r, int status) {
    if (stopping() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      forget(r);
      ++outcome.ended_in_flight;
      return;
    }
    const PlannedPoint& p = plan.points[r.index];
    const json record = finish(r, status);
    if (const std::string e = write_record(o.out_dir, p.key, record); !e.empty()) throw std::runtime_error(e);
    ++outcome.recorded;
    done(p, record);
  };
  // Ends `w`'s process: closing its channel ends an idle worker; one that died is only reaped. Its status.
  const auto end_worker = [&](Worker& w) {
    ::close(w.channel);
    const int status = wait_for(w.pid);
    w.pid = -1;
    return status;
  };
  // Sends the next point to `w`, which runs none. False when `w` had ended before it got it (it is reaped; the point
  // stays the next, for another worker). A new worker that ends before its first point is the sweep's error: the
  // next one would too.
  const auto send_to = [&](Worker& w) {
    const PlannedPoint& p = plan.points.at(todo[next]);
    Running r = running_point(o, p);
    // Made here, so that a file that cannot be made is the sweep's error, as for a forked point.
    const int err = ::open(r.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (err < 0) throw std::runtime_error("cannot start a point: " + r.err + ": " + std::strerror(errno));
    ::close(err);
    const std::uint64_t index = p.point.index;
    if (!send_all(w.channel, &index, sizeof index)) {
      forget(r);
      const int status = end_worker(w);
      if (w.served == 0)
        throw std::runtime_error("a sweep worker ended before its first point (" + exit_text(status) + ")");
      return false;
    }
    w.point = r;
    ++next;
    return true;
  };
  // `w` answered (or ended). On an answer it is sent its next point first, so that it runs while the sweep writes
  // the record; a worker that ended gives its point the way it ended.
  const auto take_answer = [&](Worker& w) {
    WorkerAnswer answer{};
    const bool answered = receive_all(w.channel, &answer, sizeof answer);
    if (answered && w.point && answer.index == w.point->index) {
      const Running r = *w.point;
      w.point.reset();
      if (++w.served >= std::max<std::size_t>(1, o.points_per_worker))
        end_worker(w);
      else if (next < todo.size() && !stopping())
        send_to(w);
      point_ended(r, static_cast<int>(answer.status) << 8);  // as waitpid reports an exit status
      return;
    }
    if (answered) ::kill(w.pid, SIGKILL);  // an answer for a point it was not sent: a worker out of step is ended
    const int status = end_worker(w);
    if (w.point) {
      const Running r = *w.point;
      w.point.reset();
      point_ended(r, status);
    }
  };
  // Waits until some busy worker answers or ends, then takes every answer there is. A signal cuts the wait short;
  // while a stop is watched for, the wait also ends every 20 ms, for a stop noted just before it began.
  const auto wait_for_answers = [&] {
    std::vector<pollfd> fds;
    std::vector<Worker*> busy;
    for (Worker& w : workers)
      if (w.pid > 0 && w.point) {
        fds.push_back({w.channel, POLLIN, 0});
        busy.push_back(&w);
      }
    if (fds.empty()) return;
    const int timeout_ms = o.stop_requested ? 20 : -1;
    const int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    for (std::size_t i = 0; n > 0 && i < fds.size(); ++i)
      if (fds[i].revents != 0) take_answer(*busy[i]);
  };
  // Sends the next point to an idle worker, starting one where fewer than `jobs` run. False when none can take it.
  const auto send_next = [&] {
    Worker* idle = nullptr;
    for (Worker& w : workers)
      if (w.pid > 0 && !w.point) idle = &w;
    if (idle == nullptr) {
      workers.erase(std::remove_if(workers.begin(), workers.end(), [](const Worker& w) { return w.pid <= 0; }),
                    workers.end());
      if (workers.size() >= jobs) return false;
      workers.push_back(start_worker(plan, o));
      idle = &workers.back();
    }
    send_to(*idle);  // a worker that had ended is reaped, and the loop tries again
    return true;
  };
  const auto end_in_flight = [&] {
    for (Worker& w : workers)
      if (w.pid > 0 && w.point) ::kill(w.pid, SIGTERM);
    for (Worker& w : workers)
      if (w.pid > 0) {
        if (w.point) take_answer(w);  // unrecorded, or recorded if it had just succeeded
        if (w.pid > 0) end_worker(w);
      }
  };
  try {
    while (true) {
      if (stopping()) {
        end_in_flight();
        outcome.stopped = true;
        return outcome;
      }
      while (next < todo.size() && !stopping() && send_next()) {
      }
      const bool any_busy =
          std::any_of(workers.begin(), workers.end(), [](const Worker& w) { return w.pid > 0 && w.point; });
      if (!any_busy && next >= todo.size()) break;
      wait_for_answers();
    }
    for (Worker& w : workers)
      if (w.pid > 0) end_worker(w);
    outcome.stopped = stopping() && next < todo.size();
  } catch (...) {
    // Leave no orphan: the points in flight are ended (their records are not written, so they rerun).
    for (Worker& w : workers)
      if (w.pid > 0) {
        if (w.point) {
          ::kill(w.pid, SIGTERM);
          forget(*w.point);
        }
        ::close(w.channel);
        wait_for(w.pid);
      }
    throw;
  }
  return outcome;
}

}  // namespace

LocalOutcome run_local(const SweepPlan& plan, const std::vector<std::size_t>& todo, const LocalOptions& o,
                       const std::function<void(const PlannedPoint&, const json&)>& done) {
  std::filesystem::create_directories(points_dir(o.out_dir));
  if (o.isolation == PointIsolation::Worker) return run_workers(plan, todo, o, done);
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
        const Running r = running_point(o, p);
        const std::vector<std::string> argv = point_argv(o, p, r.stats);
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
