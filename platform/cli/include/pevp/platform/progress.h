// Progress of a long run on stderr: a bar with the percentage and an estimate of the time left when stderr is a
// terminal (redrawn in place), a plain line every few seconds otherwise (logs, CI, batch jobs). Short runs print
// nothing: the first report waits until the run has lasted a moment. Disabled, it prints nothing at all (--quiet).
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace pevp::platform {

// Whether stderr is a terminal (isatty).
bool stderr_is_terminal();

class Progress {
 public:
  enum class Style { Off, Bar, Lines };
  // `total` units of work (instructions, points...), named `unit` in the report; `label` leads each report.
  Progress(std::ostream& err, Style style, std::uint64_t total, std::string label, std::string unit);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();

  // `units` more are done.
  void advance(std::uint64_t units);
  // Clears the bar (a terminal) or prints the final line (when lines were printed).
  void finish();

  // The style for stderr: Off when quiet, else Bar on a terminal and Lines otherwise.
  static Style for_stderr(bool quiet);
  // "1h02m", "3m07s", "12s": how the reports spell a duration.
  static std::string duration(double seconds);

 private:
  using Clock = std::chrono::steady_clock;
  void report(bool last);

  std::ostream& err_;
  Style style_;
  std::uint64_t total_, done_ = 0;
  std::string label_, unit_;
  Clock::time_point start_, last_report_;
  bool reported_ = false, finished_ = false;
};

}  // namespace pevp::platform
