#include "pevp/platform/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace pevp::platform {
namespace {

// A run shorter than this prints nothing; a terminal is redrawn at most this often; logs get a line this often.
constexpr double kFirstReportSeconds = 1.0;
constexpr double kRedrawSeconds = 0.2;
constexpr double kLineSeconds = 5.0;
constexpr int kBarWidth = 30;

}  // namespace

bool stderr_is_terminal() { return isatty(fileno(stderr)) == 1; }

Progress::Style Progress::for_stderr(bool quiet) {
  if (quiet) return Style::Off;
  return stderr_is_terminal() ? Style::Bar : Style::Lines;
}

std::string Progress::duration(double seconds) {
  const auto s = static_cast<long long>(std::max(0.0, seconds) + 0.5);
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%lldh%02lldm", s / 3600, s / 60 % 60);
  else if (s >= 60)
    std::snprintf(text, sizeof text, "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%llds", s);
  return text;
}

Progress::Progress(std::ostream& err, Style style, std::uint64_t total, std::string label, std::string unit)
    : err_(err), style_(style), total_(std::max<std::uint64_t>(total, 1)), label_(std::move(label)),
      unit_(std::move(unit)), start_(Clock::now()), last_report_(start_) {}

Progress::~Progress() { finish(); }

void Progress::advance(std::uint64_t units) {
  done_ = std::min(total_, done_ + units);
  if (style_ == Style::Off) return;
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double since = std::chrono::duration<double>(now - last_report_).count();
  if (elapsed < kFirstReportSeconds) return;
  if (since < (style_ == Style::Bar ? kRedrawSeconds : kLineSeconds) && reported_) return;
  last_report_ = now;
  report(false);
}

void Progress::report(bool last) {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const double fraction = static_cast<double>(done_) / static_cast<double>(total_);
  std::ostringstream line;
  line << label_ << ": " << std::fixed << std::setprecision(1) << 100.0 * fraction << "% (" << done_ << " of "
       << total_ << " " << unit_ << "), " << duration(elapsed) << " elapsed";
  if (!last && done_ > 0) line << ", about " << duration(elapsed / fraction - elapsed) << " left";
  if (style_ == Style::Bar) {
    const int filled = static_cast<int>(fraction * kBarWidth);
    err_ << "\r[" << std::string(static_cast<std::size_t>(filled), '#')
         << std::string(static_cast<std::size_t>(kBarWidth - filled), ' ') << "] " << line.str() << "\x1b[K"
         << std::flush;
  } else {
    err_ << line.str() << '\n' << std::flush;
  }
  reported_ = true;
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (style_ == Style::Off || !reported_) return;
  if (style_ == Style::Bar)
    err_ << "\r\x1b[K" << std::flush;  // the summary on stdout follows; the bar has done its job
  else
    report(true);
}

}  // namespace pevp::platform
