// Shared helpers of the host tests: bit views of floats and seeded random matrices.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "pevp/host/matrix.h"

namespace host_test {

namespace host = pevp::host;

inline std::uint32_t to_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// rows x cols values: random sign, mantissa in [1, 2), exponent in [lo_exp, hi_exp] -- several binades, so sums round
// and the order of the additions shows in the bits.
inline host::Matrix random_matrix(std::size_t rows, std::size_t cols, std::uint32_t seed, int lo_exp = -3,
                                  int hi_exp = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> exp(lo_exp, hi_exp);
  std::bernoulli_distribution neg(0.5);
  host::Matrix m(rows, cols);
  for (float& v : m.data) v = (neg(rng) ? -1.0f : 1.0f) * std::ldexp(mant(rng), exp(rng));
  return m;
}

}  // namespace host_test
