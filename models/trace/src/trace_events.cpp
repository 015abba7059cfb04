#include "pevp/trace/trace_events.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "text.h"
#include "pevp/files/output_file.h"

namespace pevp::trace {

namespace {

// Perfetto's JSON importer turns a microsecond number into integer nanoseconds
// with llround(us * 1000.0), separately for ts and dur. double(ps) / 1e6 is the
// correctly rounded value of the exact decimal append_us() prints, i.e. the
// double the importer parses, so this reproduces its result exactly.
std::int64_t perfetto_ns(std::uint64_t ps) {
  return std::llround(static_cast<double>(ps) / 1e6 * 1000.0);
}

std::uint64_t end_of(std::uint64_t start, std::uint64_t dur) {
  return dur > std::numeric_limits<std::uint64_t>::max() - start ? std::numeric_limits<std::uint64_t>::max()
                                                                   : start + dur;
}

inline void prefetch(const void* p) {
#if defined(__GNUC__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// A slice still open on a lane, at picosecond and at Perfetto's nanosecond resolution.
struct Open {
  std::uint64_t end_ps;
  std::int64_t end_ns;
};

}  // namespace

std::uint32_t TraceEventWriter::StringTable::intern(std::string_view s) {
  const std::string key(s);
  const auto it = ids.find(key);
  if (it != ids.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(values.size());
  values.push_back(key);
  ids.emplace(key, id);
  return id;
}

std::pair<std::uint32_t, std::uint32_t> TraceEventWriter::keep_args(std::vector<Arg>& args) {
  const auto begin = static_cast<std::uint32_t>(args_.size());
  for (Arg& a : args) args_.push_back(StoredArg{intern(a.key), std::move(a.value)});
  return {begin, static_cast<std::uint32_t>(args.size())};
}

void TraceEventWriter::check_track(TrackId t) const {
  if (t >= tracks_.size())
    throw std::out_of_range("trace: track id " + std::to_string(t) + " was not returned by track() (" +
                            std::to_string(tracks_.size()) + " tracks)");
}

TrackId TraceEventWriter::track(std::string_view process, std::string_view thread) {
  const std::uint32_t p = process_index(process);
  auto key = std::make_pair(p, std::string(thread));
  const auto it = track_ids_.find(key);
  if (it != track_ids_.end()) return it->second;
  const auto id = static_cast<TrackId>(tracks_.size());
  tracks_.push_back(Track{p, key.second});
  track_ids_.emplace(std::move(key), id);
  return id;
}

void TraceEventWriter::set_window(TraceWindow window) { window_ = std::move(window); }

void TraceEventWriter::note(std::string_view key, std::string_view value) {
  for (auto& [k, v] : notes_)
    if (k == key) {
      v = std::string(value);
      return;
    }
  notes_.emplace_back(std::string(key), std::string(value));
}

bool TraceEventWriter::in_window(std::uint64_t start_ps, std::uint64_t dur_ps, const std::vector<Arg>& args) const {
  if (!window_) return true;
  if (window_->kind == TraceWindow::Kind::Time) return window_->holds_span(start_ps, dur_ps);
  for (const Arg& a : args)
    if (a.key == "instruction")
      if (const auto* i = std::get_if<std::int64_t>(&a.value))
        return *i >= 0 && window_->holds_instruction(static_cast<std::uint64_t>(*i));
  return false;
}

void TraceEventWriter::slice(TrackId t, std::string_view name, std::string_view category, std::uint64_t start_ps,
                             std::uint64_t dur_ps, std::vector<Arg> args) {
  check_track(t);
  if (!in_window(start_ps, dur_ps, args)) return;
  const auto [b, n] = keep_args(args);
  slices_.push_back(Slice{t, intern(name), intern(category), b, n, start_ps, dur_ps});
}

void TraceEventWriter::instant(TrackId t, std::string_view name, std::uint64_t ts_ps, std::vector<Arg> args) {
  check_track(t);
  if (!in_window(ts_ps, 0, args)) return;
  const auto [b, n] = keep_args(args);
  instants_.push_back(Instant{t, intern(name), b, n, ts_ps});
}

void TraceEventWriter::counter(std::string_view process, std::string_view name, std::uint64_t ts_ps, double value) {
  if (!std::isfinite(value)) return;
  if (window_ && (window_->kind != TraceWindow::Kind::Time || !window_->holds_span(ts_ps, 0))) return;
  counters_.push_back(Counter{process_index(process), intern(name), ts_ps, value});
}

std::size_t TraceEventWriter::size() const { return slices_.size() + instants_.size() + counters_.size(); }

void TraceEventWriter::write(std::ostream& os) const {
  using detail::append_json_string;
  using detail::append_uint;
  using detail::append_us;

  // 1. Each track's slices sorted by (start, longer first, recording order): a
  //    parent precedes the slices nested in it.
  std::vector<std::uint32_t> first(tracks_.size() + 1, 0);
  for (const Slice& s : slices_) ++first[s.track + 1];
  for (std::size_t t = 0; t < tracks_.size(); ++t) first[t + 1] += first[t];
  std::vector<std::uint32_t> by_track(slices_.size());
  {
    std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (std::uint32_t i = 0; i < slices_.size(); ++i) by_track[fill[slices_[i].track]++] = i;
  }
  const auto slice_before = [this](std::uint32_t a, std::uint32_t b) {
    const Slice &x = slices_[a], &y = slices_[b];
    if (x.start != y.start) return x.start < y.start;
    if (x.dur != y.dur) return x.dur > y.dur;
    return a < b;
  };

  // 2. Lanes: a slice goes to the first lane where it is disjoint from or nested
  //    in every slice still open there, at picosecond resolution and at the
  //    whole nanoseconds Perfetto imports; otherwise to a new lane.
  std::vector<std::uint32_t> lane_of(slices_.size(), 0);
  std::vector<std::uint32_t> lanes(tracks_.size(), 1);
  std::vector<std::vector<Open>> open;
  for (std::size_t t = 0; t < tracks_.size(); ++t) {
    const auto b = by_track.begin() + first[t], e = by_track.begin() + first[t + 1];
    std::sort(b, e, slice_before);
    open.clear();
    for (auto it = b; it != e; ++it) {
      const Slice& s = slices_[*it];
      const std::uint64_t s_end = end_of(s.start, s.dur);
      const std::int64_t s_start_ns = perfetto_ns(s.start), s_end_ns = s_start_ns + perfetto_ns(s.dur);
      std::size_t lane = 0;
      for (; lane < open.size(); ++lane) {
        auto& l = open[lane];
        l.erase(std::remove_if(l.begin(), l.end(),
                               [&](const Open& o) { return o.end_ps <= s.start && o.end_ns <= s_start_ns; }),
                l.end());
        const bool fits = std::all_of(l.begin(), l.end(), [&](const Open& o) {
          return (o.end_ps <= s.start || s_end <= o.end_ps) && (o.end_ns <= s_start_ns || s_end_ns <= o.end_ns);
        });
        if (fits) break;
      }
      if (lane == open.size()) open.emplace_back();
      open[lane].push_back(Open{s_end, s_end_ns});
      lane_of[*it] = static_cast<std::uint32_t>(lane);
    }
    lanes[t] = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(open.size()));
  }

  // 3. Rows in output order: per process (creation order) its counter row
  //    (tid = pid), then each track's thread followed by its extra lanes.
  //    pid = process index + 1; tids count on after the last pid.
  struct Row {
    std::uint32_t pid, tid;
    std::uint32_t track;  // the track of a thread row; UINT32_MAX for a counter row
    std::uint32_t lane, sort_index;
  };
  constexpr std::uint32_t kNoTrack = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::vector<TrackId>> tracks_of(processes_.values.size());
  for (TrackId t = 0; t < tracks_.size(); ++t) tracks_of[tracks_[t].process].push_back(t);
  std::vector<Row> rows;
  std::vector<std::uint32_t> counter_row(processes_.values.size()), thread_row(tracks_.size());
  std::uint32_t next_tid = static_cast<std::uint32_t>(processes_.values.size()) + 1;
  for (std::uint32_t p = 0; p < processes_.values.size(); ++p) {
    counter_row[p] = static_cast<std::uint32_t>(rows.size());
    rows.push_back(Row{p + 1, p + 1, kNoTrack, 0, 0});
    std::uint32_t sort_index = 0;
    for (TrackId t : tracks_of[p]) {
      thread_row[t] = static_cast<std::uint32_t>(rows.size());
      for (std::uint32_t k = 0; k < lanes[t]; ++k) rows.push_back(Row{p + 1, next_tid++, t, k, sort_index++});
    }
  }

  // 4. Every event keyed by (row, ts, longer first, kind, recording order).
  struct Key {
    std::uint32_t row;
    std::uint32_t index;
    std::uint64_t ts;
    std::uint64_t rdur;  // ~dur: longer slices first at one ts; instants after slices
    std::uint32_t kind;  // 0 slice, 1 instant, 2 counter
  };
  std::vector<Key> keys;
  keys.reserve(size());
  for (std::uint32_t i = 0; i < slices_.size(); ++i) {
    const Slice& s = slices_[i];
    keys.push_back(Key{thread_row[s.track] + lane_of[i], i, s.start, ~s.dur, 0});
  }
  for (std::uint32_t i = 0; i < instants_.size(); ++i)
    keys.push_back(Key{thread_row[instants_[i].track], i, instants_[i].ts, ~std::uint64_t{0}, 1});
  for (std::uint32_t i = 0; i < counters_.size(); ++i)
    keys.push_back(Key{counter_row[counters_[i].process], i, counters_[i].ts, 0, 2});
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.row != b.row) return a.row < b.row;
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.rdur != b.rdur) return a.rdur < b.rdur;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.index < b.index;
  });

  // 5. Output: metadata first, then the events, one per line.
  std::vector<std::string> esc(strings_.values.size());
  for (std::size_t i = 0; i < strings_.values.size(); ++i) append_json_string(esc[i], strings_.values[i]);

  detail::Chunked out(os);
  std::string& o = out.buf();
  bool first_event = true;
  const auto begin_event = [&] {
    o += first_event ? "\n" : ",\n";
    first_event = false;
  };
  const auto pid_tid = [&](std::uint32_t pid, std::uint32_t tid) {
    o += ",\"pid\":";
    append_uint(o, pid);
    o += ",\"tid\":";
    append_uint(o, tid);
  };
  const auto metadata = [&](const char* what, std::uint32_t pid, std::uint32_t tid, const std::string* name,
                            std::uint32_t sort_index) {
    begin_event();
    o += "{\"name\":\"";
    o += what;
    o += "\",\"ph\":\"M\"";
    pid_tid(pid, tid);
    o += ",\"ts\":0,\"args\":{";
    if (name) {
      o += "\"name\":";
      append_json_string(o, *name);
    } else {
      o += "\"sort_index\":";
      append_uint(o, sort_index);
    }
    o += "}}";
  };
  const auto args = [&](std::uint32_t begin, std::uint32_t count) {
    if (count == 0) return;
    o += ",\"args\":{";
    for (std::uint32_t k = 0; k < count; ++k) {
      const StoredArg& a = args_[begin + k];
      if (k) o += ',';
      o += esc[a.key];
      o += ':';
      if (const auto* i = std::get_if<std::int64_t>(&a.value))
        detail::append_int(o, *i);
      else if (const auto* d = std::get_if<double>(&a.value))
        detail::append_double(o, *d);
      else
        append_json_string(o, std::get<std::string>(a.value));
    }
    o += '}';
  };

  o += "{\"traceEvents\":[";
  std::string lane_name;
  for (const Row& r : rows) {
    if (r.track == kNoTrack) {
      metadata("process_name", r.pid, r.tid, &processes_.values[r.pid - 1], 0);
      metadata("process_sort_index", r.pid, r.tid, nullptr, r.pid - 1);
      continue;
    }
    const std::string& thread = tracks_[r.track].thread;
    if (r.lane > 0) lane_name = thread + " #" + std::to_string(r.lane + 1);
    metadata("thread_name", r.pid, r.tid, r.lane > 0 ? &lane_name : &thread, 0);
    metadata("thread_sort_index", r.pid, r.tid, nullptr, r.sort_index);
    out.maybe_flush();
  }
  for (std::size_t ki = 0; ki < keys.size(); ++ki) {
    // Events are visited track by track but were recorded interleaved: fetch
    // the records (and then their args) a few events ahead.
    if (ki + 16 < keys.size() && keys[ki + 16].kind == 0) prefetch(&slices_[keys[ki + 16].index]);
    if (ki + 8 < keys.size() && keys[ki + 8].kind == 0) {
      const Slice& ahead = slices_[keys[ki + 8].index];
      if (ahead.args_count) prefetch(&args_[ahead.args_begin]);
    }
    const Key& k = keys[ki];
    const Row& r = rows[k.row];
    begin_event();
    if (k.kind == 0) {
      const Slice& s = slices_[k.index];
      o += "{\"name\":";
      o += esc[s.name];
      o += ",\"cat\":";
      o += esc[s.category];
      o += ",\"ph\":\"X\"";
      pid_tid(r.pid, r.tid);
      o += ",\"ts\":";
      append_us(o, s.start);
      o += ",\"dur\":";
      append_us(o, s.dur);
      args(s.args_begin, s.args_count);
    } else if (k.kind == 1) {
      const Instant& e = instants_[k.index];
      o += "{\"name\":";
      o += esc[e.name];
      o += ",\"ph\":\"i\",\"s\":\"t\"";
      pid_tid(r.pid, r.tid);
      o += ",\"ts\":";
      append_us(o, e.ts);
      args(e.args_begin, e.args_count);
    } else {
      const Counter& c = counters_[k.index];
      o += "{\"name\":";
      o += esc[c.name];
      o += ",\"ph\":\"C\"";
      pid_tid(r.pid, r.tid);
      o += ",\"ts\":";
      append_us(o, c.ts);
      o += ",\"args\":{\"value\":";
      detail::append_double(o, c.value);
      o += '}';
    }
    o += '}';
    out.maybe_flush();
  }
  o += "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"pe-vp\"";
  const auto other = [&o](std::string_view key, std::string_view value) {
    o += ',';
    detail::append_json_string(o, key);
    o += ':';
    detail::append_json_string(o, value);
  };
  if (window_) {
    other("window", window_->text);
    other("window_kind", window_->kind == TraceWindow::Kind::Time ? "time" : "instructions");
  }
  for (const auto& [key, value] : notes_) other(key, value);
  o += "}}\n";
  out.flush();
}

bool TraceEventWriter::write_file(const std::string& path, std::string* error) const {
  return files::write_file(path, [this](std::ostream& os) { write(os); }, error);
}

}  // namespace pevp::trace
