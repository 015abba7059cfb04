// The sweep tests' way of running a command line: through the shell, its stdout and stderr captured in files of a
// scratch folder that belongs to this test process (ctest runs tests in parallel processes).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace pevp::sweep_test {

struct Result {
  int status;  // the exit status, -1 when the command did not exit
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A fresh folder PREFIX<pid>_NAME under the test's temporary directory.
inline std::string scratch_dir(const std::string& prefix, const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + prefix + std::to_string(::getpid()) + "_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs `cmd` through /bin/sh with its output in dir/cmd.out and dir/cmd.err.
inline Result sh(const std::string& cmd, const std::string& dir) {
  const std::string o = dir + "/cmd.out", e = dir + "/cmd.err";
  const int rc = std::system((cmd + " > " + o + " 2> " + e).c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(o), slurp(e)};
}

}  // namespace pevp::sweep_test
