// The most simulated time the VP supports (model decision D-SIM-TIME-LIMIT): one limit for everything that can
// move time far -- a request's wait in the C API and the server, and a restored checkpoint's time and cycles.
#pragma once

#include <cstdint>

namespace pevp::platform {

// 10^15 ps, 1000 s of simulated time. Far below the 2^64 ps where sc_time wraps, and below 2^53 ps, so the engine
// clock's conversions through doubles hold every picosecond count exactly: at 2^63 ps a conversion loses cycles
// and the SEQ waits for ever for a cycle it never reaches.
inline constexpr std::uint64_t kMaxSimulatedPs = 1'000'000'000'000'000;
inline constexpr const char* kMaxSimulatedText = "1000 s (10^15 ps, D-SIM-TIME-LIMIT)";

}  // namespace pevp::platform
