#include "interrupted.h"

#include "pevp/platform/interrupt.h"

#include <cstdio>

namespace pevp::platform {
namespace {

// "3.330 ms", "12.500 us", "480.000 ns": three decimals of the largest unit that keeps the value at 1 or more.
std::string simulated(const sc_core::sc_time& t) {
  const double ns = t.to_seconds() * 1e9;
  char text[48];
  if (ns >= 1e9) std::snprintf(text, sizeof text, "%.3f s", ns / 1e9);
  else if (ns >= 1e6) std::snprintf(text, sizeof text, "%.3f ms", ns / 1e6);
  else if (ns >= 1e3) std::snprintf(text, sizeof text, "%.3f us", ns / 1e3);
  else std::snprintf(text, sizeof text, "%.3f ns", ns);
  return text;
}

}  // namespace

void mark_interrupted(nlohmann::json& stats, const InterruptedProgress& p) {
  nlohmann::json what = {{"signal", signal_name(p.signal)},
                         {"simulated_time_ns", p.at.to_seconds() * 1e9},
                         {"instructions_retired", p.instructions_retired},
                         {"instructions_total", p.instructions_total}};
  if (p.steps) {
    what["steps_done"] = p.steps->done;
    what["steps_total"] = p.steps->total;
  }
  stats["interrupted"] = true;
  stats["interruption"] = std::move(what);
}

std::string describe(const InterruptedProgress& p) {
  std::string text = "interrupted by " + signal_name(p.signal) + " at " + simulated(p.at) + " simulated, " +
                     std::to_string(p.instructions_retired) + " of " + std::to_string(p.instructions_total) +
                     " instructions retired";
  if (p.steps) text += ", " + std::to_string(p.steps->done) + " of " + std::to_string(p.steps->total) + " steps done";
  return text;
}

std::string interrupted_line(std::string_view command, const InterruptedProgress& p,
                             const std::vector<std::pair<std::string, std::string>>& outputs,
                             const std::string& output_error) {
  std::string line = std::string(command) + ": " + describe(p);
  if (!output_error.empty()) return line + "; " + output_error;
  std::string wrote;
  for (const auto& [what, path] : outputs)
    if (!path.empty()) wrote += (wrote.empty() ? "; wrote " : ", ") + path + " (" + what + ")";
  return line + (wrote.empty() ? "; no output file was asked for" : wrote);
}

}  // namespace pevp::platform
