// pe-vp demo (demo.h): list, check and run every generation's sample stream.
#include "pevp/platform/demo.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <ostream>
#include <sstream>
#include <vector>

#include "pevp/coverage/collector.h"
#include "pevp/files/output_file.h"
#include "pevp/host/matrix.h"
#include "pevp/host/npy.h"
#include "pevp/isa/tiles.h"
#include "pevp/isa_text/format.h"
#include "pevp/platform/samples.h"

extern char** environ;

namespace pevp::platform {
namespace {

namespace fs = std::filesystem;

struct ChildResult {
  int status = -1;     // the exit status, or 128 + the signal that ended it
  std::string output;  // stdout and stderr, interleaved
};

// Runs `argv` (argv[0] a path) in folder `cwd` to completion with stdout and stderr captured; nothing when it cannot
// be started.
std::optional<ChildResult> run_child(const std::vector<std::string>& argv, const std::string& cwd, std::string& error) {
  int fds[2];
  if (pipe(fds) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());  // glibc 2.29+: the run names its files relatively
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    error = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return std::nullopt;
  }
  ChildResult r;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) {
      r.output.append(buf, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return r;
}

// The 16 x 16 identity the sample PeManageSeed moves the seeds through.
host::Matrix identity16() {
  host::Matrix m(isa::kSeedRows, isa::kSeedRows);
  for (unsigned i = 0; i < isa::kSeedRows; ++i) m.at(i, i) = 1.0f;
  return m;
}

std::string hex_address(std::uint32_t a) {
  std::ostringstream o;
  o << "0x" << std::hex << a;
  return o.str();
}

// Makes `dir` and its missing parents; "" when it is a folder now, else why not (naming --out-dir and the path).
std::string make_out_dir(const std::string& dir) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st))
    return "--out-dir " + dir + ": exists and is not a folder (give a folder, or a path that does not exist yet)";
  if (fs::exists(st)) return "";
  // The longest existing prefix must be a folder: create_directories would name a file in the way only as "File
  // exists" or "Not a directory".
  for (fs::path p = fs::path(dir).parent_path(); !p.empty(); p = p.parent_path()) {
    const fs::file_status ps = fs::status(p, ec);
    if (fs::exists(ps)) {
      if (!fs::is_directory(ps))
        return "--out-dir " + dir + ": " + p.string() + " exists and is not a folder, so nothing can be created in it";
      break;
    }
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir, ec);
  if (ec) return "--out-dir " + dir + ": cannot create the folder: " + ec.message();
  return "";
}

}  // namespace

int run_demo(const std::string& self, const std::string& out_dir, bool quiet, std::ostream& out_stream,
             std::ostream& err, const std::string& coverage_path) {
  if (!coverage_path.empty())
    if (const std::string bad = files::check_output(coverage_path); !bad.empty()) {
      err << "pe-vp demo: --coverage " << bad << '\n';
      return 2;
    }
  coverage::Collector coverage;
  coverage.set_runs(0);
  if (!out_dir.empty())
    if (const std::string bad = make_out_dir(out_dir); !bad.empty()) {
      err << "pe-vp demo: " << bad << '\n';
      return 2;
    }
  // --quiet: the listing goes nowhere (a stream without a buffer drops it); failures go to `fails` either way.
  std::ostream discard(nullptr);
  std::ostream& out = quiet ? discard : out_stream;
  std::ostream& fails = out_stream;
  int failures = 0;
  char scratch_template[] = "/tmp/pevp_demo_XXXXXX";
  if (mkdtemp(scratch_template) == nullptr) {
    err << "pe-vp demo: cannot make a scratch folder in /tmp: " << std::strerror(errno) << '\n';
    return 2;
  }
  const fs::path scratch(scratch_template);
  const auto finish = [&](int status) {
    std::error_code ignored;
    fs::remove_all(scratch, ignored);
    return status;
  };
  // The runs start in the scratch folder, so what they print names no temporary path.
  const std::string identity = "identity.npy";
  host::write_npy((scratch / identity).string(), identity16());
  for (isa::Generation g : isa::kAllGenerations) {
    const auto stream = sample_stream(g);
    out << "== " << isa::name(g) << " (NeuronCore-v" << isa::core_version(g) << "): " << stream.size()
        << " instructions ==\n";
    std::vector<std::uint8_t> bytes, runnable;
    std::size_t left_out = 0;
    isa::StreamChecker checker;
    for (std::size_t i = 0; i < stream.size(); ++i) {
      isa::Decoded d = isa::decode(g, stream[i].bytes);
      for (auto& v : checker.check(d)) d.violations.push_back(std::move(v));
      out << "  # " << stream[i].comment << (stream[i].not_run.empty() ? "" : " (not run: " + stream[i].not_run + ")")
          << '\n';
      out << "  [" << i << "] " << isa::to_text(d) << '\n';
      // Quiet, the instruction line above went nowhere: the rule's line names the instruction itself.
      for (const auto& v : d.violations)
        fails << (quiet ? "  [" + std::to_string(i) + "] ! " : "      ! ") << v.describe() << '\n', ++failures;
      bytes.insert(bytes.end(), stream[i].bytes.begin(), stream[i].bytes.end());
      if (stream[i].not_run.empty())
        runnable.insert(runnable.end(), stream[i].bytes.begin(), stream[i].bytes.end());
      else
        ++left_out;
    }
    if (!out_dir.empty()) {
      const std::string path = out_dir + "/sample_" + std::string(isa::name(g)) + ".bin";
      std::string error;
      if (!files::write_file(path, bytes.data(), bytes.size(), &error)) {
        err << "pe-vp demo: " << error << '\n';
        return finish(2);  // a file cannot be written, as for every command
      }
      out << "  wrote " << path << " (try: pe-vp disasm --gen " << isa::name(g) << " " << path << ")\n";
    }
    // The run: the stream without what the platform does not model yet, in a process of its own.
    const std::string program = "run_" + std::string(isa::name(g)) + ".bin";
    std::string error;
    if (!files::write_file((scratch / program).string(), runnable.data(), runnable.size(), &error)) {
      err << "pe-vp demo: " << error << '\n';
      return finish(2);
    }
    std::vector<std::string> child = {self, "run", "--gen", std::string(isa::name(g)), program, "--load",
                                      identity + "@" + hex_address(kSampleIdentityAddress) + ":bf16", "--threads", "1"};
    const std::string stream_coverage = (scratch / ("coverage_" + std::string(isa::name(g)) + ".json")).string();
    if (!coverage_path.empty()) child.insert(child.end(), {"--coverage", stream_coverage});
    const std::optional<ChildResult> r = run_child(child, scratch.string(), error);
    if (!r) {
      err << "pe-vp demo: " << error << '\n';
      return finish(2);
    }
    std::ostream& run_out = r->status == 0 ? out : fails;
    run_out << "  on the platform (" << runnable.size() / isa::kInstructionBytes << " instructions"
            << (left_out ? ", " + std::to_string(left_out) + " not run" : "") << "):"
            << (r->status == 0 ? "" : " FAILED, exit status " + std::to_string(r->status)) << '\n';
    std::istringstream lines(r->output);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) run_out << "    " << line << '\n';
    if (r->status != 0) ++failures;
    out << '\n';
    if (!coverage_path.empty()) try {
        coverage.merge(coverage::read_file(stream_coverage));
      } catch (const std::invalid_argument& e) {
        err << "pe-vp demo: --coverage: " << e.what() << '\n';
        return finish(2);
      }
  }
  if (!coverage_path.empty()) {
    std::string error;
    if (!coverage::write_file(coverage_path, coverage, &error)) {
      err << "pe-vp demo: --coverage: " << error << '\n';
      return finish(2);
    }
  }
  fails << (failures ? "demo: FAILED, a sample stream breaks a rule or does not run\n"
                     : "demo: every sample instruction is valid, and every stream runs to completion on the platform\n");
  return finish(failures ? 1 : 0);
}

}  // namespace pevp::platform
