#include "pevp/trace/trace_window.h"

#include <limits>
#include <stdexcept>

namespace pevp::trace {
namespace {

constexpr std::uint64_t kMaxPs = std::uint64_t{1} << 63;
constexpr const char* kForms = " (e.g. 10us:20us, 1ms:, :5us, i100:i200; units s, ms, us, ns, ps)";

struct Bound {
  TraceWindow::Kind kind;
  std::uint64_t value;
};

[[noreturn]] void fail(std::string_view window, const std::string& why) {
  throw std::invalid_argument("'" + std::string(window) + "': " + why);
}

// Decimal digits with at most one point; value in units of 10^-scale. False when not that form.
bool parse_decimal(std::string_view s, std::uint64_t& digits, int& scale) {
  digits = 0;
  scale = 0;
  bool point = false, any = false;
  for (const char c : s) {
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') return false;
    if (digits > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) digits = kMaxPs;  // saturates: too large
    else digits = digits * 10 + static_cast<std::uint64_t>(c - '0');
    any = true;
    if (point) ++scale;
  }
  return any;
}

Bound parse_bound(std::string_view window, std::string_view part, const char* which) {
  const std::string where = std::string(which) + " '" + std::string(part) + "'";
  if (part[0] == 'i') {
    std::uint64_t digits = 0;
    int scale = 0;
    if (part.size() == 1 || !parse_decimal(part.substr(1), digits, scale) || scale != 0 ||
        part.find('.') != std::string_view::npos)
      fail(window, where + ": an instruction is i and a whole index, e.g. i100");
    return {TraceWindow::Kind::Instructions, digits};
  }
  std::size_t unit_at = 0;
  while (unit_at < part.size() && ((part[unit_at] >= '0' && part[unit_at] <= '9') || part[unit_at] == '.')) ++unit_at;
  const std::string_view number = part.substr(0, unit_at), unit = part.substr(unit_at);
  std::uint64_t digits = 0;
  int scale = 0;
  if (!parse_decimal(number, digits, scale)) fail(window, where + ": not a number with a unit" + kForms);
  int unit_exponent = 0;  // the unit in 10^n ps
  if (unit == "s") unit_exponent = 12;
  else if (unit == "ms") unit_exponent = 9;
  else if (unit == "us") unit_exponent = 6;
  else if (unit == "ns") unit_exponent = 3;
  else if (unit == "ps") unit_exponent = 0;
  else if (unit.empty()) fail(window, where + ": a time needs a unit (s, ms, us, ns, ps), or i for an instruction");
  else fail(window, where + ": unknown unit '" + std::string(unit) + "' (s, ms, us, ns, ps; or i for an instruction)");
  if (scale > unit_exponent) fail(window, where + ": finer than 1 ps, the trace's resolution");
  std::uint64_t ps = digits;
  for (int e = scale; e < unit_exponent; ++e) {
    if (ps >= kMaxPs / 10 + 1) fail(window, where + ": past 2^63 ps");
    ps *= 10;
  }
  if (ps >= kMaxPs) fail(window, where + ": past 2^63 ps");
  return {TraceWindow::Kind::Time, ps};
}

}  // namespace

bool TraceWindow::holds_span(std::uint64_t start_ps, std::uint64_t dur_ps) const {
  if (end && start_ps >= *end) return false;
  return start_ps >= begin || (dur_ps > 0 && start_ps + dur_ps > begin);
}

bool TraceWindow::holds_instruction(std::uint64_t index) const { return index >= begin && (!end || index < *end); }

TraceWindow parse_trace_window(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos)
    fail(text, std::string("expected START:END") + kForms);
  const std::string_view start = text.substr(0, colon), end = text.substr(colon + 1);
  if (start.empty() && end.empty()) fail(text, std::string("give START, END or both") + kForms);
  std::optional<Bound> b, e;
  if (!start.empty()) b = parse_bound(text, start, "START");
  if (!end.empty()) e = parse_bound(text, end, "END");
  if (b && e && b->kind != e->kind)
    fail(text, std::string("START is ") + (b->kind == TraceWindow::Kind::Time ? "a time" : "an instruction") +
                   " and END " + (e->kind == TraceWindow::Kind::Time ? "a time" : "an instruction") +
                   ": give both as one kind");
  TraceWindow w;
  w.kind = b ? b->kind : e->kind;
  w.begin = b ? b->value : 0;
  if (e) w.end = e->value;
  w.text = std::string(text);
  if (w.end && *w.end == w.begin) fail(text, "the window is empty (END is START; END is exclusive)");
  if (w.end && *w.end < w.begin) fail(text, "END '" + std::string(end) + "' is before START '" + std::string(start) + "'");
  return w;
}

}  // namespace pevp::trace
