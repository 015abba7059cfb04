// Chrome/Perfetto trace-event JSON (the "JSON Object Format" of the Trace Event
// Format document) for the timing model: complete slices, instants and counters
// on named (process, thread) tracks, written so that ui.perfetto.dev and
// chrome://tracing draw them as recorded. docs/trace-format.md.
//
// Events may be recorded in any order; write() sorts them. Slices of one track
// may partially overlap (a pipelined micro-op's stream phase starting before the
// previous one's drain ended): write() spreads such a track over lanes, each lane
// an extra thread "<thread> #<k+1>" right after the track's own, so that every
// thread holds only disjoint or properly nested slices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "pevp/trace/trace_window.h"

namespace pevp::trace {

using TrackId = std::uint32_t;

// One entry of an event's "args". A double that is not finite is written as the
// string "nan", "inf" or "-inf" (JSON has no such numbers).
struct Arg {
  std::string key;
  std::variant<std::int64_t, double, std::string> value;
};

class TraceEventWriter {
 public:
  // A track is a (process, thread) pair of the trace-event model: processes
  // group tracks ("SEQ", "arr_seq queues", "PE row groups", "SBUF", "PSUM",
  // "APB"); the same pair returns the same id. Processes and threads are shown
  // in the order they were first named.
  TrackId track(std::string_view process, std::string_view thread);

  // A complete slice ("ph":"X") from start_ps lasting dur_ps picoseconds.
  // Throws std::out_of_range for a TrackId this writer did not hand out.
  void slice(TrackId t, std::string_view name, std::string_view category, std::uint64_t start_ps,
             std::uint64_t dur_ps, std::vector<Arg> args = {});
  // A thread-scoped instant ("ph":"i", "s":"t"), drawn on the track's own thread.
  void instant(TrackId t, std::string_view name, std::uint64_t ts_ps, std::vector<Arg> args = {});
  // A process-scoped counter sample ("ph":"C", args {"value": value}); Perfetto
  // names the counter track "<name> value". A value that is not finite is not
  // recorded (JSON cannot carry it and Perfetto would drop the sample).
  void counter(std::string_view process, std::string_view name, std::uint64_t ts_ps, double value);

  std::size_t size() const;  // events recorded (slices + instants + counters)

  // From now on, records only the events in `window` (trace_window.h): in a time window the slices overlapping it
  // and the instants and counter samples in it; in an instruction window the slices and instants whose
  // "instruction" argument is in it (counters and events naming no instruction are left out). The file says which
  // window it holds (otherData.window). Events outside it cost no memory.
  void set_window(TraceWindow window);
  // A string the file carries in otherData (e.g. that the run was interrupted); a key given again replaces it.
  void note(std::string_view key, std::string_view value);

  // {"traceEvents":[metadata..., events...],"displayTimeUnit":"ns","otherData":{"generator":"pe-vp"}} (otherData also
  // holds the window and the notes)
  // ts/dur in microseconds, printed exactly from the integer picoseconds.
  void write(std::ostream& os) const;
  // Writes through a temporary file next to `path` and renames it into place;
  // false and *error = "<path>: <reason>" on failure (error may be null).
  bool write_file(const std::string& path, std::string* error) const;

 private:
  struct Track {
    std::uint32_t process;  // index into processes_
    std::string thread;
  };
  struct Slice {
    TrackId track;
    std::uint32_t name, category;  // interned strings
    std::uint32_t args_begin, args_count;
    std::uint64_t start, dur;
  };
  struct Instant {
    TrackId track;
    std::uint32_t name;
    std::uint32_t args_begin, args_count;
    std::uint64_t ts;
  };
  struct StoredArg {
    std::uint32_t key;  // interned
    std::variant<std::int64_t, double, std::string> value;
  };
  struct Counter {
    std::uint32_t process;
    std::uint32_t name;
    std::uint64_t ts;
    double value;
  };

  // Distinct strings, each numbered once in order of first use.
  struct StringTable {
    std::vector<std::string> values;
    std::unordered_map<std::string, std::uint32_t> ids;
    std::uint32_t intern(std::string_view s);
  };

  std::uint32_t process_index(std::string_view process) { return processes_.intern(process); }
  std::uint32_t intern(std::string_view s) { return strings_.intern(s); }
  std::pair<std::uint32_t, std::uint32_t> keep_args(std::vector<Arg>& args);
  void check_track(TrackId t) const;
  bool in_window(std::uint64_t start_ps, std::uint64_t dur_ps, const std::vector<Arg>& args) const;

  StringTable processes_;
  std::vector<Track> tracks_;
  std::map<std::pair<std::uint32_t, std::string>, TrackId> track_ids_;
  StringTable strings_;  // slice names, categories and argument keys
  std::vector<StoredArg> args_;
  std::vector<Slice> slices_;
  std::vector<Instant> instants_;
  std::vector<Counter> counters_;
  std::optional<TraceWindow> window_;
  std::vector<std::pair<std::string, std::string>> notes_;
};

// Structural checks of a trace document, for tests and for the tool's
// self-check: one human-readable problem per violation (empty = fine).
//  - the top level is an object with a "traceEvents" array;
//  - every event is an object with name (string), ph in {"X","i","C","M"},
//    pid and tid integers, ts a number >= 0; X events have dur >= 0;
//  - per (pid, tid) the X and i events are sorted by ts, and X slices are
//    either disjoint or properly nested (a parent listed before its children)
//    -- both at the written resolution and after rounding ts and dur to whole
//    nanoseconds, which is what Perfetto's importer does;
//  - metadata: process_name / thread_name carry a string args.name,
//    process_sort_index / thread_sort_index an integer args.sort_index; every
//    pid with events has a process_name and every (pid, tid) with X or i
//    events a thread_name.
std::vector<std::string> check_trace(const nlohmann::json& doc);

}  // namespace pevp::trace
