// Helpers of the GEMM suites: a per-process scratch folder and seeded operands.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

#include "pevp/host/matrix.h"

namespace pevp::gemm_test {

// `name` in a folder of this test process's own (tests run as separate processes in parallel).
inline std::filesystem::path scratch(const std::string& prefix, const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

// r x c values uniform in [-2, 2), the same for the same seed.
inline host::Matrix random_matrix(std::size_t r, std::size_t c, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  host::Matrix m(r, c);
  for (float& x : m.data) x = u(rng);
  return m;
}

}  // namespace pevp::gemm_test
