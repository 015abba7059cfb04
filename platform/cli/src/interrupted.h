// What `pe-vp gemm` and `pe-vp run` write and say when SIGINT or SIGTERM stopped their simulation
// (docs/running.md, "Interrupting a run"; the signal handling is platform/vp's interrupt.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

namespace pevp::platform {

struct InterruptedProgress {
  int signal = 0;
  sc_core::sc_time at;  // the simulated time of the stop
  std::uint64_t instructions_retired = 0, instructions_total = 0;
  struct Steps {
    std::uint64_t done, total;
  };
  std::optional<Steps> steps;  // gemm's steps whose read-back was done, where the command counts them
};

// Marks a --stats-json document: "interrupted": true and "interruption": {signal, simulated_time_ns,
// instructions_retired, instructions_total[, steps_done, steps_total]}.
void mark_interrupted(nlohmann::json& stats, const InterruptedProgress& p);

// "interrupted by SIGINT at 12.500 us simulated, 1200 of 4096 instructions retired[, 3 of 16 steps done]"
std::string describe(const InterruptedProgress& p);

// The one stderr line: "<command>: <describe>; wrote <path> (<what>), ..." or "; no output file was asked for",
// or the write's failure.
std::string interrupted_line(std::string_view command, const InterruptedProgress& p,
                             const std::vector<std::pair<std::string, std::string>>& outputs,
                             const std::string& output_error);

}  // namespace pevp::platform
