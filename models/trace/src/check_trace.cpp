#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pevp/trace/trace_events.h"

namespace pevp::trace {

namespace {

using nlohmann::json;

// Shortest round-trip text of a number ("2", "0.0015").
std::string num(double v) {
  char b[32];
  const auto r = std::to_chars(b, b + sizeof b, v);
  return std::string(b, r.ptr);
}

// One thread's open slices at one resolution (integer ticks).
struct Nest {
  struct Open {
    std::int64_t begin, end;
    std::size_t index;
    std::string name;
  };
  std::vector<Open> stack;
  // The open slice that [b, e) partially overlaps, or null (then [b, e) is pushed).
  const Open* add(std::int64_t b, std::int64_t e, std::size_t index, const std::string& name) {
    while (!stack.empty() && stack.back().end <= b) stack.pop_back();
    if (!stack.empty() && e > stack.back().end) return &stack.back();
    stack.push_back(Open{b, e, index, name});
    return nullptr;
  }
};

struct Thread {
  bool any = false;
  double last_ts = 0;
  Nest ps, ns;
};

bool string_arg(const json& ev, const char* key) {
  const auto a = ev.find("args");
  if (a == ev.end() || !a->is_object()) return false;
  const auto v = a->find(key);
  return v != a->end() && v->is_string();
}

bool integer_arg(const json& ev, const char* key) {
  const auto a = ev.find("args");
  if (a == ev.end() || !a->is_object()) return false;
  const auto v = a->find(key);
  return v != a->end() && v->is_number_integer();
}

}  // namespace

std::vector<std::string> check_trace(const json& doc) {
  std::vector<std::string> problems;
  if (!doc.is_object()) {
    problems.push_back("the document is not a JSON object (expected {\"traceEvents\":[...]})");
    return problems;
  }
  const auto events = doc.find("traceEvents");
  if (events == doc.end()) {
    problems.push_back("the document has no \"traceEvents\" member");
    return problems;
  }
  if (!events->is_array()) {
    problems.push_back("\"traceEvents\" is not an array");
    return problems;
  }

  std::map<std::pair<std::int64_t, std::int64_t>, Thread> threads;  // (pid, tid) with X or i events
  std::set<std::int64_t> pids;                                      // pids with X, i or C events
  std::set<std::int64_t> named_pids;
  std::set<std::pair<std::int64_t, std::int64_t>> named_threads;

  for (std::size_t i = 0; i < events->size(); ++i) {
    const json& ev = (*events)[i];
    std::string where = "traceEvents[" + std::to_string(i) + "]";
    if (!ev.is_object()) {
      problems.push_back(where + ": not an object");
      continue;
    }
    const std::size_t before = problems.size();
    std::string name = "?";
    const auto n = ev.find("name");
    if (n == ev.end() || !n->is_string())
      problems.push_back(where + ": \"name\" is missing or not a string");
    else
      name = n->get<std::string>();
    where += " '" + name + "'";

    std::string ph;
    const auto p = ev.find("ph");
    if (p != ev.end() && p->is_string()) ph = p->get<std::string>();
    if (ph != "X" && ph != "i" && ph != "C" && ph != "M")
      problems.push_back(where + ": \"ph\" is missing or not one of \"X\", \"i\", \"C\", \"M\"" +
                         (p != ev.end() ? " (got " + p->dump() + ")" : ""));

    std::int64_t ids[2] = {0, 0};
    const char* id_keys[2] = {"pid", "tid"};
    for (int k = 0; k < 2; ++k) {
      const auto v = ev.find(id_keys[k]);
      if (v == ev.end() || !v->is_number_integer())
        problems.push_back(where + ": \"" + id_keys[k] + "\" is missing or not an integer");
      else
        ids[k] = v->get<std::int64_t>();
    }
    const std::int64_t pid = ids[0], tid = ids[1];

    double ts = 0, dur = 0;
    const auto t = ev.find("ts");
    if (t == ev.end() || !t->is_number())
      problems.push_back(where + ": \"ts\" is missing or not a number");
    else if ((ts = t->get<double>()) < 0)
      problems.push_back(where + ": \"ts\" is negative (" + num(ts) + ")");
    if (ph == "X") {
      const auto d = ev.find("dur");
      if (d == ev.end() || !d->is_number())
        problems.push_back(where + ": X event: \"dur\" is missing or not a number");
      else if ((dur = d->get<double>()) < 0)
        problems.push_back(where + ": X event: \"dur\" is negative (" + num(dur) + ")");
    }
    if (problems.size() == before && (ts + dur) * 1e6 >= 9.2e18)
      problems.push_back(where + ": ts + dur is beyond 2^63 picoseconds (" + num(ts + dur) + " us)");
    if (problems.size() != before) continue;  // the rules below need the fields above

    if (ph == "M") {
      if (name == "process_name" || name == "thread_name") {
        if (!string_arg(ev, "name"))
          problems.push_back(where + ": " + name + " metadata for pid " + std::to_string(pid) + " tid " +
                             std::to_string(tid) + " has no string args.name");
        else if (name == "process_name")
          named_pids.insert(pid);
        else
          named_threads.insert({pid, tid});
      } else if (name == "process_sort_index" || name == "thread_sort_index") {
        if (!integer_arg(ev, "sort_index"))
          problems.push_back(where + ": " + name + " metadata for pid " + std::to_string(pid) + " tid " +
                             std::to_string(tid) + " has no integer args.sort_index");
      }
      continue;
    }
    pids.insert(pid);
    if (ph == "C") {
      const auto a = ev.find("args");
      bool numeric = a != ev.end() && a->is_object() && !a->empty();
      if (numeric)
        for (const auto& v : *a) numeric = numeric && v.is_number();
      if (!numeric) problems.push_back(where + ": C event: \"args\" is not an object of numbers");
      continue;
    }

    Thread& th = threads[{pid, tid}];
    const std::string on = " on pid " + std::to_string(pid) + " tid " + std::to_string(tid);
    if (th.any && ts < th.last_ts)
      problems.push_back(where + ": ts " + num(ts) + on + " is before the previous event's ts " + num(th.last_ts) +
                         " (a thread's X and i events must be sorted by ts)");
    th.any = true;
    th.last_ts = ts;
    if (ph != "X") continue;

    // Nesting, at picoseconds (the writer's resolution) and at the whole
    // nanoseconds Perfetto's importer rounds ts and dur to.
    const std::int64_t b_ps = std::llround(ts * 1e6), e_ps = b_ps + std::llround(dur * 1e6);
    const std::int64_t b_ns = std::llround(ts * 1000.0), e_ns = b_ns + std::llround(dur * 1000.0);
    const auto overlap = [&](const Nest::Open& o, const char* resolution) {
      problems.push_back(where + ": X slice [" + num(static_cast<double>(b_ps) / 1e6) + ", " +
                         num(static_cast<double>(e_ps) / 1e6) + ")" + on +
                         " partially overlaps '" + o.name + "' (traceEvents[" + std::to_string(o.index) + "])" +
                         resolution + "; slices on one thread must be disjoint or properly nested");
    };
    if (const Nest::Open* o = th.ps.add(b_ps, e_ps, i, name)) {
      overlap(*o, "");
    } else if (const Nest::Open* o2 = th.ns.add(b_ns, e_ns, i, name)) {
      overlap(*o2, " once ts and dur are rounded to whole nanoseconds as Perfetto imports them");
    }
  }

  for (std::int64_t pid : pids)
    if (!named_pids.count(pid))
      problems.push_back("pid " + std::to_string(pid) + " has events but no process_name metadata");
  for (const auto& [id, th] : threads)
    if (!named_threads.count(id))
      problems.push_back("pid " + std::to_string(id.first) + " tid " + std::to_string(id.second) +
                         " has X/i events but no thread_name metadata");
  return problems;
}

}  // namespace pevp::trace
