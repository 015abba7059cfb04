// The random stream of `pe-vp cosim-check`'s benches: xoshiro256**, the same on every host and standard library.
#pragma once

#include <array>
#include <cstdint>

namespace pevp::platform::cosim {

// xoshiro256** seeded through splitmix64: the same stream on every host and standard library (std::
// distributions are implementation-defined), so a seed reproduces a run anywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& w : s_) {
      seed += 0x9E3779B97F4A7C15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      w = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t r = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  std::uint32_t u32() { return static_cast<std::uint32_t>(next() >> 32); }
  std::uint64_t below(std::uint64_t n) { return next() % n; }  // n >= 1; the modulo bias is < 2^-40 here
  bool one_in(std::uint64_t n) { return below(n) == 0; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<std::uint64_t, 4> s_{};
};

}  // namespace pevp::platform::cosim
