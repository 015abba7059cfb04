// trace_events.h: the trace-event JSON writer -- document shape, metadata and
// track order, exact microsecond times, lanes for partially overlapping slices,
// nesting, sorting of out-of-order records, escaping, args, instants, counters
// and write_file's error paths. Every written document also goes through
// check_trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <sstream>

#include "pevp/trace/trace_events.h"
#include "trace_test_util.h"

namespace pevp::trace::test {
namespace {

using nlohmann::json;

std::string text_of(const TraceEventWriter& w) {
  std::ostringstream os;
  w.write(os);
  return os.str();
}

json doc_of(const TraceEventWriter& w) {
  json doc = json::parse(text_of(w));
  const auto problems = check_trace(doc);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  return doc;
}

// Thread name of every (pid, tid) from the metadata.
std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names(const json& doc) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> r;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      r[{e["pid"].get<std::int64_t>(), e["tid"].get<std::int64_t>()}] = e["args"]["name"].get<std::string>();
  return r;
}

// Names of the events of phase `ph`, grouped by thread name, in file order.
std::map<std::string, std::vector<std::string>> by_thread(const json& doc, const std::string& ph = "X") {
  const auto names = thread_names(doc);
  std::map<std::string, std::vector<std::string>> r;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == ph)
      r[names.at({e["pid"].get<std::int64_t>(), e["tid"].get<std::int64_t>()})].push_back(e["name"].get<std::string>());
  return r;
}

std::vector<json> of_phase(const json& doc, const std::string& ph) {
  std::vector<json> r;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == ph) r.push_back(e);
  return r;
}

constexpr std::uint64_t kNs = 1000;  // ps

TEST(TraceEvents, EmptyWriterWritesAValidDocument) {
  TraceEventWriter w;
  EXPECT_EQ(w.size(), 0u);
  const json doc = doc_of(w);
  EXPECT_TRUE(doc["traceEvents"].is_array());
  EXPECT_TRUE(doc["traceEvents"].empty());
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  EXPECT_EQ(doc["otherData"]["generator"], "pe-vp");
}

TEST(TraceEvents, SamePairSameTrack) {
  TraceEventWriter w;
  const TrackId a = w.track("SEQ", "dispatch");
  const TrackId b = w.track("APB", "dispatch");
  const TrackId c = w.track("SEQ", "retire");
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 1u);
  EXPECT_EQ(c, 2u);
  EXPECT_EQ(w.track("SEQ", "dispatch"), a);
  EXPECT_EQ(w.track("APB", "dispatch"), b);
  EXPECT_EQ(w.size(), 0u);  // tracks are not events
}

// Metadata in creation order, lanes right after their track, tids unique across
// processes and above every pid, sort indices 0, 1, 2... -- derived by hand.
TEST(TraceEvents, MetadataNamesEveryTrackInCreationOrder) {
  TraceEventWriter w;
  const TrackId dispatch = w.track("SEQ", "dispatch");
  const TrackId q = w.track("arr_seq queues", "q");
  w.track("arr_seq queues", "r");
  w.slice(dispatch, "d", "seq", 0, 10 * kNs);
  w.slice(q, "a", "pe", 0, 100 * kNs);         // lane 0
  w.slice(q, "b", "pe", 50 * kNs, 100 * kNs);  // partial overlap with a: lane 1
  w.slice(q, "c", "pe", 60 * kNs, 100 * kNs);  // overlaps a and b: lane 2
  const json doc = doc_of(w);
  std::vector<std::tuple<std::string, int, int, json>> meta;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "M")
      meta.emplace_back(e["name"].get<std::string>(), e["pid"].get<int>(), e["tid"].get<int>(), e["args"]);
  const std::vector<std::tuple<std::string, int, int, json>> expected{
      {"process_name", 1, 1, {{"name", "SEQ"}}},
      {"process_sort_index", 1, 1, {{"sort_index", 0}}},
      {"thread_name", 1, 3, {{"name", "dispatch"}}},
      {"thread_sort_index", 1, 3, {{"sort_index", 0}}},
      {"process_name", 2, 2, {{"name", "arr_seq queues"}}},
      {"process_sort_index", 2, 2, {{"sort_index", 1}}},
      {"thread_name", 2, 4, {{"name", "q"}}},
      {"thread_sort_index", 2, 4, {{"sort_index", 0}}},
      {"thread_name", 2, 5, {{"name", "q #2"}}},
      {"thread_sort_index", 2, 5, {{"sort_index", 1}}},
      {"thread_name", 2, 6, {{"name", "q #3"}}},
      {"thread_sort_index", 2, 6, {{"sort_index", 2}}},
      {"thread_name", 2, 7, {{"name", "r"}}},
      {"thread_sort_index", 2, 7, {{"sort_index", 3}}},
  };
  EXPECT_EQ(meta, expected);
  // Metadata comes before every other event.
  bool seen_event = false;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "M") {
      seen_event = true;
    } else {
      EXPECT_FALSE(seen_event) << e.dump();
    }
  }
}

TEST(TraceEvents, TimesAreExactMicroseconds) {
  TraceEventWriter w;
  const TrackId t = w.track("P", "t");
  w.slice(t, "a", "c", 1, 1234567);
  w.slice(t, "b", "c", 5000000, 0);
  w.slice(t, "c", "c", 123456789012345, 10);
  w.instant(t, "i", 7000000000);
  const std::string text = text_of(w);
  EXPECT_NE(text.find("\"ts\":0.000001,\"dur\":1.234567"), std::string::npos) << text;
  EXPECT_NE(text.find("\"ts\":5,\"dur\":0"), std::string::npos) << text;
  EXPECT_NE(text.find("\"ts\":123456789.012345,\"dur\":0.00001"), std::string::npos) << text;
  EXPECT_NE(text.find("\"ts\":7000}"), std::string::npos) << text;
  // Parsed back, every time is the recorded picosecond count.
  std::vector<std::int64_t> ps;
  for (const json& e : of_phase(json::parse(text), "X")) {
    ps.push_back(std::llround(e["ts"].get<double>() * 1e6));
    ps.push_back(std::llround(e["dur"].get<double>() * 1e6));
  }
  EXPECT_EQ(ps, (std::vector<std::int64_t>{1, 1234567, 5000000, 0, 123456789012345, 10}));
}

// Slices (start, end in ns) chosen so that the greedy lanes are hand-derivable:
//   A[0,100) -> lane 0;  B[50,150) partially overlaps A -> lane 1;
//   F[55,60) nests in A -> lane 0;  G[60,120) partial with A, nests in B -> lane 1;
//   H[70,160) partial with A and with B -> lane 2;  C[100,200) A ended -> lane 0;
//   D[140,160) nests in C -> lane 0;  E[150,170) partial with D, B and G ended -> lane 1.
TEST(TraceEvents, OverlappingSlicesGoToLanesGreedily) {
  struct S {
    const char* name;
    std::uint64_t b, e;
  };
  const std::vector<S> slices{{"A", 0, 100},   {"B", 50, 150},  {"F", 55, 60},   {"G", 60, 120},
                              {"H", 70, 160},  {"C", 100, 200}, {"D", 140, 160}, {"E", 150, 170}};
  // Recorded in several orders: the lanes do not depend on it.
  std::vector<std::size_t> order(slices.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937 rng(7);
  for (int round = 0; round < 5; ++round) {
    TraceEventWriter w;
    const TrackId q = w.track("arr_seq queues", "q");
    for (std::size_t i : order) w.slice(q, slices[i].name, "pe", slices[i].b * kNs, (slices[i].e - slices[i].b) * kNs);
    const auto lanes = by_thread(doc_of(w));
    const std::map<std::string, std::vector<std::string>> expected{
        {"q", {"A", "F", "C", "D"}}, {"q #2", {"B", "G", "E"}}, {"q #3", {"H"}}};
    EXPECT_EQ(lanes, expected) << "round " << round;
    std::shuffle(order.begin(), order.end(), rng);
  }
}

TEST(TraceEvents, NestedSlicesStayOnOneLaneParentFirst) {
  TraceEventWriter w;
  const TrackId t = w.track("PE row groups", "rg0");
  // Recorded children first; equal starts and equal ends are still nesting.
  w.slice(t, "tail", "c", 20 * kNs, 80 * kNs);  // [20,100) ends with the parent
  w.slice(t, "head", "c", 0, 20 * kNs);         // [0,20) starts with the parent
  w.slice(t, "inner", "c", 10 * kNs, 10 * kNs);  // [10,20) ends with head
  w.slice(t, "parent", "c", 0, 100 * kNs);
  w.slice(t, "zero", "c", 100 * kNs, 0);  // at the parent's end: after it
  const json doc = doc_of(w);
  const std::map<std::string, std::vector<std::string>> expected{{"rg0", {"parent", "head", "inner", "tail", "zero"}}};
  EXPECT_EQ(by_thread(doc), expected);
}

TEST(TraceEvents, SameIntervalTwiceNestsInRecordingOrder) {
  TraceEventWriter w;
  const TrackId t = w.track("P", "t");
  w.slice(t, "first", "c", 5 * kNs, 5 * kNs);
  w.slice(t, "second", "c", 5 * kNs, 5 * kNs);
  const std::map<std::string, std::vector<std::string>> expected{{"t", {"first", "second"}}};
  EXPECT_EQ(by_thread(doc_of(w)), expected);
}

TEST(TraceEvents, OutOfOrderRecordingGivesSortedOutput) {
  TraceEventWriter w;
  const TrackId tracks[3] = {w.track("SBUF", "read"), w.track("PSUM", "write"), w.track("SBUF", "write")};
  std::vector<int> order(300);
  for (int i = 0; i < 300; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(11));
  for (int j : order) {
    w.slice(tracks[j % 3], "s" + std::to_string(j), "mem", static_cast<std::uint64_t>(j) * 700 + 3, 700);
    if (j % 7 == 0) w.instant(tracks[j % 3], "i" + std::to_string(j), static_cast<std::uint64_t>(j) * 700 + 5);
  }
  const json doc = doc_of(w);
  // One lane per track: touching slices are disjoint (also at Perfetto's ns rounding here).
  EXPECT_EQ(thread_names(doc).size(), 3u);
  // File order: SBUF read, SBUF write, PSUM write (process then track creation order), each by time.
  std::vector<std::string> got, expected;
  for (const json& e : of_phase(doc, "X")) got.push_back(e["name"].get<std::string>());
  for (int track : {0, 2, 1})
    for (int j = track; j < 300; j += 3) expected.push_back("s" + std::to_string(j));
  EXPECT_EQ(got, expected);
  std::map<std::int64_t, double> last;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "M") continue;
    const auto tid = e["tid"].get<std::int64_t>();
    const auto ts = e["ts"].get<double>();
    if (last.count(tid)) {
      EXPECT_LE(last[tid], ts) << e.dump();
    }
    last[tid] = ts;
  }
}

// Perfetto rounds ts and dur to whole nanoseconds separately: a=[0.5ns, +0.5ns)
// becomes [1, 2) and b=[1ns, +2ns) becomes [1, 3) -- disjoint in picoseconds,
// partially overlapping in Perfetto -- so b needs its own lane.
TEST(TraceEvents, LanesAlsoHoldAtPerfettosNanosecondRounding) {
  TraceEventWriter w;
  const TrackId t = w.track("P", "t");
  w.slice(t, "a", "c", 500, 500);
  w.slice(t, "b", "c", 1000, 2000);
  const std::map<std::string, std::vector<std::string>> expected{{"t", {"a"}}, {"t #2", {"b"}}};
  EXPECT_EQ(by_thread(doc_of(w)), expected);

  TraceEventWriter aligned;  // the same touch on whole nanoseconds: one lane
  const TrackId u = aligned.track("P", "t");
  aligned.slice(u, "a", "c", 0, 1000);
  aligned.slice(u, "b", "c", 1000, 2000);
  const std::map<std::string, std::vector<std::string>> one{{"t", {"a", "b"}}};
  EXPECT_EQ(by_thread(doc_of(aligned)), one);
}

// Random pipelined phases at picosecond resolution on a few tracks: whatever
// the overlaps, the lanes pass the independent checker (both resolutions) and
// every slice is written exactly once.
TEST(TraceEvents, RandomOverlapsAlwaysGiveACleanTrace) {
  std::mt19937_64 rng(2024);
  for (int round = 0; round < 20; ++round) {
    TraceEventWriter w;
    const TrackId tracks[3] = {w.track("arr_seq queues", "q0"), w.track("arr_seq queues", "q1"),
                               w.track("PE row groups", "rg")};
    std::uniform_int_distribution<std::uint64_t> start(0, 2000000), dur(0, 30000), pick(0, 2);
    std::size_t n = 0;
    for (std::size_t i = 0; i < 2000; ++i, ++n) {
      const std::uint64_t s = start(rng), d = dur(rng);
      const TrackId t = tracks[pick(rng)];
      w.slice(t, "x", "c", s, d);
      if (i % 5 == 0) {  // some exact nests and touches too
        w.slice(t, "child", "c", s + d / 4, d / 2);
        w.slice(t, "next", "c", s + d, d);
        n += 2;
      }
    }
    std::ostringstream os;
    w.write(os);
    const json doc = json::parse(os.str());
    const auto problems = check_trace(doc);
    ASSERT_TRUE(problems.empty()) << "round " << round << ": " << problems.size() << " problems, first: "
                                  << problems.front();
    EXPECT_EQ(of_phase(doc, "X").size(), n);
  }
}

TEST(TraceEvents, StringsAreEscaped) {
  const std::string nasty = "say \"hi\" \\path\nline\ttab\r\b\f\x01\x1f\x7f \xC2\xB5s \xE2\x82\xAC";
  TraceEventWriter w;
  const TrackId t = w.track("pro\"c\\", "th\nread");
  w.slice(t, nasty, "c\"at", 0, 1, {{"k\"ey\\", std::string("v\\al\r\n\"")}, {nasty, std::int64_t{1}}});
  w.instant(t, nasty, 5, {{"s", nasty}});
  w.counter("cnt\"proc", "c\\name", 0, 1.0);
  const std::string text = text_of(w);
  EXPECT_NE(text.find(R"("say \"hi\" \\path\nline\ttab\r\b\f\u0001\u001f\u007f )"), std::string::npos) << text;
  const json doc = doc_of(w);
  const json x = of_phase(doc, "X").at(0);
  EXPECT_EQ(x["name"], nasty);
  EXPECT_EQ(x["cat"], "c\"at");
  EXPECT_EQ(x["args"]["k\"ey\\"], "v\\al\r\n\"");
  EXPECT_EQ(x["args"][nasty], 1);
  EXPECT_EQ(of_phase(doc, "i").at(0)["args"]["s"], nasty);
  EXPECT_EQ(of_phase(doc, "C").at(0)["name"], "c\\name");
  const auto names = thread_names(doc);
  EXPECT_EQ(names.begin()->second, "th\nread");
  bool found = false;
  for (const json& e : doc["traceEvents"])
    if (e["name"] == "process_name" && e["args"]["name"] == "pro\"c\\") found = true;
  EXPECT_TRUE(found);
}

TEST(TraceEvents, InvalidUtf8BecomesReplacementCharacters) {
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  const std::vector<std::pair<std::string, std::string>> cases{
      {"bad\xFF", "bad" + r},
      {"lead\xC3(", "lead" + r + "("},             // lead byte without continuation
      {"cut\xE2\x82", "cut" + r + r},              // truncated at the end
      {"over\xC0\xAF", "over" + r + r},            // overlong
      {"sur\xED\xA0\x80", "sur" + r + r + r},      // UTF-16 surrogate
      {"ok\xF0\x9F\x98\x80", "ok\xF0\x9F\x98\x80"},  // 4-byte sequence kept
  };
  for (const auto& [in, out] : cases) {
    TraceEventWriter w;
    w.instant(w.track("P", "t"), in, 0);
    const json doc = doc_of(w);  // nlohmann rejects invalid UTF-8: parsing at all is part of the test
    EXPECT_EQ(of_phase(doc, "i").at(0)["name"], out);
  }
}

TEST(TraceEvents, ArgValuesKeepTheirTypes) {
  TraceEventWriter w;
  const TrackId t = w.track("P", "t");
  w.slice(t, "s", "c", 0, 1,
          {{"neg", std::int64_t{-42}},
           {"max", std::numeric_limits<std::int64_t>::max()},
           {"min", std::numeric_limits<std::int64_t>::min()},
           {"tenth", 0.1},
           {"huge", 1e300},
           {"tiny", -5e-324},
           {"nan", std::nan("")},
           {"neg_inf", -std::numeric_limits<double>::infinity()},
           {"text", std::string("queue 3")}});
  const json a = of_phase(doc_of(w), "X").at(0)["args"];
  EXPECT_TRUE(a["neg"].is_number_integer());
  EXPECT_EQ(a["neg"], -42);
  EXPECT_EQ(a["max"].get<std::int64_t>(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(a["min"].get<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(a["tenth"].get<double>(), 0.1);
  EXPECT_EQ(a["huge"].get<double>(), 1e300);
  EXPECT_EQ(a["tiny"].get<double>(), -5e-324);
  EXPECT_EQ(a["nan"], "nan");
  EXPECT_EQ(a["neg_inf"], "-inf");
  EXPECT_EQ(a["text"], "queue 3");
  EXPECT_EQ(of_phase(doc_of(w), "X").at(0).count("args"), 1u);

  TraceEventWriter bare;  // no args: no "args" member
  bare.slice(bare.track("P", "t"), "s", "c", 0, 1);
  EXPECT_EQ(of_phase(doc_of(bare), "X").at(0).count("args"), 0u);
}

TEST(TraceEvents, InstantsAreThreadScopedOnTheTracksOwnThread) {
  TraceEventWriter w;
  const TrackId q = w.track("arr_seq queues", "q");
  w.slice(q, "a", "pe", 0, 100 * kNs);
  w.slice(q, "b", "pe", 50 * kNs, 100 * kNs);  // lane 1
  w.instant(q, "stall", 60 * kNs, {{"why", std::string("dependency")}});
  w.instant(q, "early", 10 * kNs);
  const json doc = doc_of(w);
  const auto inst = by_thread(doc, "i");
  const std::map<std::string, std::vector<std::string>> expected{{"q", {"early", "stall"}}};
  EXPECT_EQ(inst, expected);
  for (const json& e : of_phase(doc, "i")) EXPECT_EQ(e["s"], "t");
  EXPECT_EQ(of_phase(doc, "i").at(1)["ts"], 0.06);
}

TEST(TraceEvents, CountersBelongToTheirProcess) {
  TraceEventWriter w;
  w.track("SEQ", "dispatch");
  w.counter("SBUF", "bytes_in_flight", 2 * kNs, 4096);
  w.counter("SBUF", "bytes_in_flight", 0, 0.5);
  w.counter("SBUF", "bytes_in_flight", 3 * kNs, std::nan(""));  // not recorded
  w.counter("SBUF", "bytes_in_flight", 4 * kNs, std::numeric_limits<double>::infinity());
  EXPECT_EQ(w.size(), 2u);
  const json doc = doc_of(w);
  const auto c = of_phase(doc, "C");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0]["ts"], 0);
  EXPECT_EQ(c[0]["args"]["value"], 0.5);
  EXPECT_EQ(c[1]["ts"], 0.002);
  EXPECT_EQ(c[1]["args"]["value"], 4096);
  for (const json& e : c) {
    EXPECT_EQ(e["pid"], 2);  // SBUF, the second process named
    EXPECT_EQ(e["tid"], e["pid"]);
  }
}

TEST(TraceEvents, SizeCountsEveryRecordedEvent) {
  TraceEventWriter w;
  const TrackId t = w.track("P", "t");
  w.slice(t, "a", "c", 0, 1);
  w.slice(t, "a", "c", 0, 1);
  w.instant(t, "i", 0);
  w.counter("P", "c", 0, 1);
  EXPECT_EQ(w.size(), 4u);
  EXPECT_EQ(of_phase(doc_of(w), "X").size(), 2u);
}

TEST(TraceEvents, UnknownTrackIdThrows) {
  TraceEventWriter w;
  EXPECT_THROW(w.slice(0, "a", "c", 0, 1), std::out_of_range);
  const TrackId t = w.track("P", "t");
  EXPECT_THROW(w.slice(t + 1, "a", "c", 0, 1), std::out_of_range);
  EXPECT_THROW(w.instant(t + 1, "a", 0), std::out_of_range);
  EXPECT_EQ(w.size(), 0u);
}

TEST(TraceEvents, WritingIsDeterministic) {
  TraceEventWriter w;
  const TrackId t = w.track("P", "t");
  for (int i = 0; i < 50; ++i) w.slice(t, "s", "c", static_cast<std::uint64_t>((i * 37) % 50) * 300, 500);
  EXPECT_EQ(text_of(w), text_of(w));
}

TEST(TraceEvents, WriteFileRoundTrips) {
  ScratchDir dir;
  TraceEventWriter w;
  w.slice(w.track("SEQ", "dispatch"), "MATMUL", "seq", 1000, 2000);
  const std::string path = dir.file("trace.json");
  std::string error = "untouched";
  ASSERT_TRUE(w.write_file(path, &error)) << error;
  EXPECT_EQ(error, "untouched");
  EXPECT_EQ(read_text(path), text_of(w));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"trace.json"});  // no temporary left
  // Overwrites an existing file.
  w.instant(0, "later", 5000);
  ASSERT_TRUE(w.write_file(path, nullptr));
  EXPECT_EQ(read_text(path), text_of(w));
}

TEST(TraceEvents, WriteFileToAMissingDirectoryNamesThePath) {
  ScratchDir dir;
  TraceEventWriter w;
  w.instant(w.track("P", "t"), "i", 0);
  const std::string path = dir.file("no/such/dir/trace.json");
  std::string error;
  EXPECT_FALSE(w.write_file(path, &error));
  EXPECT_EQ(error.rfind(path + ": ", 0), 0u) << error;
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
  EXPECT_FALSE(w.write_file(path, nullptr));  // no error string wanted: still false, no crash
  EXPECT_TRUE(dir.entries().empty());
}

TEST(TraceEvents, WriteFileOntoADirectoryFailsAndCleansUp) {
  ScratchDir dir;
  std::filesystem::create_directory(dir.path() / "out");
  TraceEventWriter w;
  w.instant(w.track("P", "t"), "i", 0);
  const std::string path = dir.file("out");
  std::string error;
  EXPECT_FALSE(w.write_file(path, &error));
  EXPECT_EQ(error.rfind(path + ": ", 0), 0u) << error;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out"});  // the temporary is gone
  EXPECT_TRUE(std::filesystem::is_directory(path));
}

TEST(TraceEvents, WriteFileToAnEmptyPathFails) {
  TraceEventWriter w;
  std::string error;
  EXPECT_FALSE(w.write_file("", &error));
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace pevp::trace::test
