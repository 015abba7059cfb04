// check_trace: one broken document per rule, each asserting that exactly the
// expected problems are reported and that their text names the rule.
#include <gtest/gtest.h>

#include "pevp/trace/trace_events.h"

namespace pevp::trace::test {
namespace {

using nlohmann::json;

// Indices: 0-3 metadata, 4 an X slice [1, 3), 5 an instant at 1.5, 6 a counter.
json valid() {
  return json::parse(R"({"traceEvents":[
    {"name":"process_name","ph":"M","pid":1,"tid":1,"ts":0,"args":{"name":"P"}},
    {"name":"process_sort_index","ph":"M","pid":1,"tid":1,"ts":0,"args":{"sort_index":0}},
    {"name":"thread_name","ph":"M","pid":1,"tid":2,"ts":0,"args":{"name":"T"}},
    {"name":"thread_sort_index","ph":"M","pid":1,"tid":2,"ts":0,"args":{"sort_index":0}},
    {"name":"a","cat":"c","ph":"X","pid":1,"tid":2,"ts":1,"dur":2},
    {"name":"i","ph":"i","s":"t","pid":1,"tid":2,"ts":1.5},
    {"name":"c","ph":"C","pid":1,"tid":1,"ts":0,"args":{"value":3}}
  ],"displayTimeUnit":"ns"})");
}

json x(const char* name, double ts, double dur, int tid = 2) {
  return {{"name", name}, {"cat", "c"}, {"ph", "X"}, {"pid", 1}, {"tid", tid}, {"ts", ts}, {"dur", dur}};
}

// Exactly one problem per fragment, the i-th containing fragments[i].
void expect_problems(const json& doc, const std::vector<std::string>& fragments) {
  const auto problems = check_trace(doc);
  ASSERT_EQ(problems.size(), fragments.size()) << ::testing::PrintToString(problems);
  for (std::size_t i = 0; i < fragments.size(); ++i)
    EXPECT_NE(problems[i].find(fragments[i]), std::string::npos) << problems[i] << "\n  expected: " << fragments[i];
}

TEST(CheckTrace, ValidDocumentHasNoProblems) { expect_problems(valid(), {}); }

TEST(CheckTrace, TopLevelMustBeAnObject) {
  expect_problems(json::array(), {"not a JSON object"});
  expect_problems(json("text"), {"not a JSON object"});
}

TEST(CheckTrace, TraceEventsMustBeAnArray) {
  expect_problems(json::object(), {"no \"traceEvents\" member"});
  expect_problems(json{{"traceEvents", json::object()}}, {"\"traceEvents\" is not an array"});
  expect_problems(json{{"traceEvents", json::array()}}, {});
}

TEST(CheckTrace, EventsMustBeObjects) {
  json d = valid();
  d["traceEvents"].push_back(5);
  expect_problems(d, {"traceEvents[7]: not an object"});
}

TEST(CheckTrace, NameMustBeAString) {
  json d = valid();
  d["traceEvents"][4].erase("name");
  expect_problems(d, {"traceEvents[4]: \"name\" is missing or not a string"});
  d["traceEvents"][4]["name"] = 12;
  expect_problems(d, {"traceEvents[4]: \"name\" is missing or not a string"});
}

TEST(CheckTrace, PhMustBeAnAllowedPhase) {
  json d = valid();
  d["traceEvents"][5]["ph"] = "B";
  expect_problems(d, {"traceEvents[5] 'i': \"ph\" is missing or not one of \"X\", \"i\", \"C\", \"M\" (got \"B\")"});
  d["traceEvents"][5].erase("ph");
  expect_problems(d, {"\"ph\" is missing"});
  d["traceEvents"][5]["ph"] = 1;
  expect_problems(d, {"(got 1)"});
}

TEST(CheckTrace, PidAndTidMustBeIntegers) {
  json d = valid();
  d["traceEvents"][4]["pid"] = "1";
  expect_problems(d, {"traceEvents[4] 'a': \"pid\" is missing or not an integer"});
  d = valid();
  d["traceEvents"][4]["tid"] = 2.5;
  expect_problems(d, {"traceEvents[4] 'a': \"tid\" is missing or not an integer"});
  d = valid();
  d["traceEvents"][0].erase("tid");  // metadata events too
  expect_problems(d, {"traceEvents[0] 'process_name': \"tid\" is missing or not an integer",
                      "pid 1 has events but no process_name metadata"});
}

TEST(CheckTrace, TsMustBeANonNegativeNumber) {
  json d = valid();
  d["traceEvents"][5].erase("ts");
  expect_problems(d, {"traceEvents[5] 'i': \"ts\" is missing or not a number"});
  d["traceEvents"][5]["ts"] = "1.5";
  expect_problems(d, {"\"ts\" is missing or not a number"});
  d["traceEvents"][5]["ts"] = -1;
  expect_problems(d, {"traceEvents[5] 'i': \"ts\" is negative (-1"});
}

TEST(CheckTrace, TimesBeyondTheCheckableRangeAreReported) {
  json d = valid();
  d["traceEvents"][5]["ts"] = 1e13;  // microseconds: 10^19 ps > 2^63
  expect_problems(d, {"traceEvents[5] 'i': ts + dur is beyond 2^63 picoseconds"});
}

TEST(CheckTrace, XEventsNeedANonNegativeDur) {
  json d = valid();
  d["traceEvents"][4].erase("dur");
  expect_problems(d, {"traceEvents[4] 'a': X event: \"dur\" is missing or not a number"});
  d["traceEvents"][4]["dur"] = -2;
  expect_problems(d, {"traceEvents[4] 'a': X event: \"dur\" is negative (-2"});
  d["traceEvents"][4]["dur"] = 0;
  expect_problems(d, {});
}

TEST(CheckTrace, EventsOfAThreadMustBeSortedByTs) {
  json d = valid();
  d["traceEvents"].push_back(x("late", 0.5, 0.1));  // after the instant at 1.5
  expect_problems(d, {"traceEvents[7] 'late': ts 0.5 on pid 1 tid 2 is before the previous event's ts 1.5"});
  // Another thread has its own order.
  d = valid();
  d["traceEvents"].push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 3}, {"ts", 0},
                              {"args", {{"name", "U"}}}});
  d["traceEvents"].push_back(x("other", 0.5, 0.1, 3));
  expect_problems(d, {});
}

TEST(CheckTrace, PartialOverlapOnOneThreadIsReported) {
  json d = valid();
  d["traceEvents"].push_back(x("b", 2, 5));  // [2, 7) vs a [1, 3)
  expect_problems(d, {"traceEvents[7] 'b': X slice [2, 7) on pid 1 tid 2 partially overlaps 'a' (traceEvents[4])"});
}

TEST(CheckTrace, NestedAndTouchingSlicesAreFine) {
  json d = valid();
  d["traceEvents"].push_back(x("child", 1.5, 1));      // [1.5, 2.5) in a
  d["traceEvents"].push_back(x("grandchild", 2, 0.5));  // [2, 2.5) ends with child
  d["traceEvents"].push_back(x("next", 3, 1));          // starts where a ends
  d["traceEvents"].push_back(x("zero", 4, 0));
  expect_problems(d, {});
}

TEST(CheckTrace, ChildListedBeforeItsParentIsAnOverlap) {
  json d = valid();
  d["traceEvents"].erase(5);  // the instant
  d["traceEvents"].push_back(x("child", 4, 1));
  d["traceEvents"].push_back(x("parent", 4, 2));  // same ts, longer, but after
  expect_problems(d, {"traceEvents[7] 'parent': X slice [4, 6) on pid 1 tid 2 partially overlaps 'child'"});
}

// [0.5 ns, +0.5 ns) and [1 ns, +2 ns): disjoint as written, but Perfetto rounds
// each ts and dur to whole ns: [1, 2) and [1, 3).
TEST(CheckTrace, OverlapAfterNanosecondRoundingIsReported) {
  json d = valid();
  d["traceEvents"].erase(5);
  d["traceEvents"].erase(4);
  d["traceEvents"].push_back(x("a", 0.0005, 0.0005));
  d["traceEvents"].push_back(x("b", 0.001, 0.002));
  expect_problems(d, {"'b': X slice [0.001, 0.003) on pid 1 tid 2 partially overlaps 'a' (traceEvents[5]) once "
                      "ts and dur are rounded to whole nanoseconds"});
}

TEST(CheckTrace, EveryPidWithEventsNeedsAProcessName) {
  json d = valid();
  d["traceEvents"].erase(0);
  expect_problems(d, {"pid 1 has events but no process_name metadata"});
  d = valid();  // a counter alone makes the pid need a name too
  d["traceEvents"].push_back({{"name", "c"}, {"ph", "C"}, {"pid", 9}, {"tid", 9}, {"ts", 0}, {"args", {{"v", 1}}}});
  expect_problems(d, {"pid 9 has events but no process_name metadata"});
}

TEST(CheckTrace, EveryThreadWithSlicesNeedsAThreadName) {
  json d = valid();
  d["traceEvents"].erase(2);
  expect_problems(d, {"pid 1 tid 2 has X/i events but no thread_name metadata"});
}

TEST(CheckTrace, MetadataArgsMustHaveTheirTypes) {
  json d = valid();
  d["traceEvents"][0]["args"] = json::object();
  expect_problems(d, {"traceEvents[0] 'process_name': process_name metadata for pid 1 tid 1 has no string args.name",
                      "pid 1 has events but no process_name metadata"});
  d = valid();
  d["traceEvents"][2]["args"]["name"] = 7;
  expect_problems(d, {"thread_name metadata for pid 1 tid 2 has no string args.name",
                      "pid 1 tid 2 has X/i events but no thread_name metadata"});
  d = valid();
  d["traceEvents"][1]["args"]["sort_index"] = "0";
  expect_problems(d, {"traceEvents[1] 'process_sort_index': process_sort_index metadata for pid 1 tid 1 has no "
                      "integer args.sort_index"});
  d = valid();
  d["traceEvents"][3].erase("args");
  expect_problems(d, {"thread_sort_index metadata for pid 1 tid 2 has no integer args.sort_index"});
}

TEST(CheckTrace, CounterArgsMustBeNumbers) {
  json d = valid();
  d["traceEvents"][6]["args"]["value"] = "3";
  expect_problems(d, {"traceEvents[6] 'c': C event: \"args\" is not an object of numbers"});
  d["traceEvents"][6].erase("args");
  expect_problems(d, {"C event: \"args\" is not an object of numbers"});
}

TEST(CheckTrace, AllProblemsAreReportedTogether) {
  json d = valid();
  d["traceEvents"][4]["dur"] = -1;
  d["traceEvents"][5]["ph"] = "Q";
  d["traceEvents"].push_back(7);
  expect_problems(d, {"traceEvents[4] 'a': X event: \"dur\" is negative", "traceEvents[5] 'i': \"ph\"",
                      "traceEvents[7]: not an object"});
}

}  // namespace
}  // namespace pevp::trace::test
