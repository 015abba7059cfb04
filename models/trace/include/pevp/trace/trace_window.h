// A window of a recording (--trace-window START:END): a span of simulated time or a range of instructions, and
// which events it holds. docs/trace-format.md, "Windows".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pevp::trace {

struct TraceWindow {
  enum class Kind { Time, Instructions };
  Kind kind = Kind::Time;
  // Picoseconds (Time) or 0-based instruction indices (Instructions): [begin, end), end absent = to the end.
  std::uint64_t begin = 0;
  std::optional<std::uint64_t> end;
  std::string text;  // as given, for the file's own record of its window

  // A slice from start_ps lasting dur_ps is in a time window when it overlaps [begin, end); an instant (dur 0) when
  // it lies in it.
  bool holds_span(std::uint64_t start_ps, std::uint64_t dur_ps) const;
  bool holds_instruction(std::uint64_t index) const;
};

// Parses START:END: times with a unit (s, ms, us, ns, ps; decimals down to 1 ps: 10us:20us, 1.5ms:, :20us) or
// instruction indices (i100:i200, i100:). END is exclusive and may be left out (to the end); START may be left out
// (from the beginning). Throws std::invalid_argument naming the part and the rule: no colon, no unit or an unknown
// one, a time finer than 1 ps or past 2^63 ps, a time and an instruction mixed, an empty or reversed window.
TraceWindow parse_trace_window(std::string_view text);

}  // namespace pevp::trace
