// A module's configuration parameters, described by the module itself: each
// key's name, unit, range and source, and the member of the module's
// configuration struct it sets. The platform's configuration (VpConfig,
// platform/vp/config.h) aggregates the modules' lists into sections of one
// JSON / --set format instead of one table that knows every module's fields;
// docs/configuration.md documents the same keys (a test keeps the two equal).
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

namespace sc_core {
class sc_time;
}

namespace pevp::params {

// How a value is written and checked: an integer in [lo, hi] (unsigned or
// 64-bit members), a time in ns (sc_time members), a fraction in
// [kMinFraction, 1], a real number in [lo, hi] (a bandwidth, a rate).
enum class Kind : std::uint8_t { Count, TimeNs, Fraction, Real };

template <class Config>
struct Param {
  using Member =
      std::variant<unsigned Config::*, sc_core::sc_time Config::*, double Config::*, std::uint64_t Config::*>;
  std::string_view name;    // the key inside its section ("ififo_depth")
  std::string_view unit;    // "micro-ops", "cycles", "ns", "bytes", "fraction"
  std::string_view source;  // where the default comes from: a FACTS.md figure or the model decision
  Kind kind = Kind::Count;
  std::uint64_t lo = 0, hi = 0;  // Count and Real: the values allowed
  Member member;
};

template <class Config>
using Params = std::vector<Param<Config>>;

// The widest range a cycle count may take: 2^20 is far beyond any meaningful latency.
inline constexpr std::uint64_t kMaxCycles = std::uint64_t{1} << 20;
// Depths, windows and beat sizes.
inline constexpr std::uint64_t kMaxDepth = 65536;
// The smallest share of a bandwidth a fraction may give (2^-10): a cost divided
// by it grows at most 1024-fold, so every cycle count derived from a bounded
// count stays far inside 64 bits, and a throttled stream still moves. Below it
// a "throttled" port is in effect stopped, which is not what the knob models.
inline constexpr double kMinFraction = 1.0 / 1024;

}  // namespace pevp::params
