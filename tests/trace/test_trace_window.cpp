// trace_window.h and TraceEventWriter::set_window: the forms of START:END and their values in picoseconds or
// instructions (derived by hand in each case), every refusal with its reason, which events a window holds (the
// overlap rule at its edges), and the file's own record of its window.
#include <gtest/gtest.h>

#include <sstream>

#include "pevp/trace/trace_events.h"
#include "pevp/trace/trace_window.h"
#include "pevp/trace/vcd.h"

namespace pevp::trace::test {
namespace {

TEST(TraceWindow, TimesWithUnitsAreExactPicoseconds) {
  const TraceWindow w = parse_trace_window("10us:20us");
  EXPECT_EQ(w.kind, TraceWindow::Kind::Time);
  EXPECT_EQ(w.begin, 10'000'000u);  // 10 us = 10 x 10^6 ps
  EXPECT_EQ(w.end, std::optional<std::uint64_t>(20'000'000u));
  EXPECT_EQ(w.text, "10us:20us");
  // 1.5 ms = 1.5 x 10^9 ps; no END: to the end.
  const TraceWindow open = parse_trace_window("1.5ms:");
  EXPECT_EQ(open.begin, 1'500'000'000u);
  EXPECT_FALSE(open.end.has_value());
  // No START: from 0. 2 s = 2 x 10^12 ps; 7 ns = 7000 ps; 0.001 ns = 1 ps.
  EXPECT_EQ(parse_trace_window(":2s").end, std::optional<std::uint64_t>(2'000'000'000'000u));
  EXPECT_EQ(parse_trace_window(":2s").begin, 0u);
  EXPECT_EQ(parse_trace_window("7ns:8ns").begin, 7000u);
  EXPECT_EQ(parse_trace_window("0.001ns:2ps").begin, 1u);
  EXPECT_EQ(parse_trace_window("0ps:1ps").end, std::optional<std::uint64_t>(1u));
}

TEST(TraceWindow, InstructionRanges) {
  const TraceWindow w = parse_trace_window("i100:i200");
  EXPECT_EQ(w.kind, TraceWindow::Kind::Instructions);
  EXPECT_EQ(w.begin, 100u);
  EXPECT_EQ(w.end, std::optional<std::uint64_t>(200u));
  EXPECT_FALSE(w.holds_instruction(99));
  EXPECT_TRUE(w.holds_instruction(100));
  EXPECT_TRUE(w.holds_instruction(199));
  EXPECT_FALSE(w.holds_instruction(200));  // END is exclusive
  EXPECT_TRUE(parse_trace_window("i5:").holds_instruction(1'000'000));
  EXPECT_TRUE(parse_trace_window(":i5").holds_instruction(0));
}

// Each refusal names the part and the rule.
TEST(TraceWindow, RefusalsSayWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"10us", "'10us': expected START:END"},
      {"1us:2us:3us", "'1us:2us:3us': expected START:END"},
      {":", "give START, END or both"},
      {"10xs:20us", "START '10xs': unknown unit 'xs'"},
      {"10us:20m", "END '20m': unknown unit 'm'"},
      {"100:200", "START '100': a time needs a unit"},
      {"us:2us", "START 'us': not a number with a unit"},
      {"1.2.3us:", "START '1.2.3us': not a number with a unit"},
      {"0.5ps:1ns", "START '0.5ps': finer than 1 ps"},
      {"10000000s:", "START '10000000s': past 2^63 ps"},  // 10^7 s = 10^19 ps > 2^63 ps (about 9.2 x 10^18)
      {"ix:i5", "START 'ix': an instruction is i and a whole index"},
      {"i1.5:i5", "START 'i1.5': an instruction is i and a whole index"},
      {"10us:i200", "START is a time and END an instruction: give both as one kind"},
      {"20us:20us", "the window is empty (END is START"},
      {"i7:i7", "the window is empty"},
      {"20us:10us", "END '10us' is before START '20us'"},
      {"1ms:999us", "END '999us' is before START '1ms'"},
  };
  for (const auto& [text, why] : cases) {
    try {
      parse_trace_window(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << text << ": " << e.what();
    }
  }
}

// [10, 20) ps: a slice is held when it overlaps the window, an instant when it lies in it.
TEST(TraceWindow, SpansOverlappingTheWindow) {
  const TraceWindow w = parse_trace_window("10ps:20ps");
  EXPECT_FALSE(w.holds_span(0, 10));   // ends where the window begins
  EXPECT_TRUE(w.holds_span(0, 11));    // its last picosecond is in
  EXPECT_TRUE(w.holds_span(5, 100));   // spans it
  EXPECT_TRUE(w.holds_span(19, 5));
  EXPECT_FALSE(w.holds_span(20, 5));   // starts at END
  EXPECT_TRUE(w.holds_span(10, 0));    // an instant at START
  EXPECT_FALSE(w.holds_span(9, 0));
}

// The writer keeps exactly the events in the window and says which window the file holds.
TEST(TraceWindow, WriterKeepsOnlyTheWindow) {
  TraceEventWriter time;
  time.set_window(parse_trace_window("1ns:2ns"));
  const TrackId t = time.track("SEQ", "instructions");
  time.slice(t, "before", "c", 0, 1000);     // [0, 1000) ps: ends at START
  time.slice(t, "across", "c", 500, 1000);   // [500, 1500): overlaps
  time.slice(t, "inside", "c", 1200, 100);
  time.slice(t, "after", "c", 2000, 10);     // starts at END
  time.instant(t, "mark", 1999);
  time.counter("SEQ", "level", 2500, 1.0);   // out
  time.counter("SEQ", "level", 1000, 2.0);   // in
  EXPECT_EQ(time.size(), 4u);  // across, inside, mark, one counter sample
  std::ostringstream os;
  time.write(os);
  const nlohmann::json doc = nlohmann::json::parse(os.str());
  std::vector<std::string> names;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] != "M") names.push_back(e["name"].get<std::string>());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"across", "inside", "level", "mark"}));
  EXPECT_EQ(doc["otherData"]["window"], "1ns:2ns");
  EXPECT_EQ(doc["otherData"]["window_kind"], "time");
  EXPECT_TRUE(check_trace(doc).empty());

  TraceEventWriter instr;
  instr.set_window(parse_trace_window("i2:i4"));
  instr.note("interrupted", "by SIGINT");
  const TrackId q = instr.track("queues", "queue 0");
  for (std::int64_t i = 0; i < 6; ++i) instr.slice(q, "op", "c", 100 * static_cast<std::uint64_t>(i), 50, {{"instruction", i}});
  instr.slice(q, "no instruction", "c", 250, 10);
  instr.counter("queues", "level", 250, 1.0);
  EXPECT_EQ(instr.size(), 2u);  // instructions 2 and 3
  std::ostringstream is;
  instr.write(is);
  const nlohmann::json idoc = nlohmann::json::parse(is.str());
  std::vector<std::int64_t> kept;
  for (const auto& e : idoc["traceEvents"])
    if (e["ph"] == "X") kept.push_back(e["args"]["instruction"].get<std::int64_t>());
  EXPECT_EQ(kept, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(idoc["otherData"]["window_kind"], "instructions");
  EXPECT_EQ(idoc["otherData"]["interrupted"], "by SIGINT");
  EXPECT_EQ(idoc["otherData"]["generator"], "pe-vp");
}

// A VCD of the window [100, 300) ps: the values at 100 (changes up to and at it applied), then the changes before 300.
TEST(TraceWindow, VcdHoldsTheValuesAtStartAndTheChangesInside) {
  VcdWriter w;
  const auto a = w.signal("top", "a", 1), b = w.signal("top", "b", 4);
  w.change(a, 50, 1);   // before: a is 1 at 100
  w.change(b, 100, 5);  // at START: b is 5 at 100
  w.change(a, 200, 0);  // inside
  w.change(b, 300, 7);  // at END: out
  w.set_window(100, 300, "100ps:300ps");
  std::ostringstream os;
  w.write(os);
  EXPECT_EQ(os.str(),
            "$version pe-vp $end\n$timescale 1ps $end\n$comment window 100ps:300ps $end\n"
            "$scope module top $end\n$var wire 1 ! a $end\n$var wire 4 \" b [3:0] $end\n$upscope $end\n"
            "$enddefinitions $end\n#100\n$dumpvars\n1!\nb101 \"\n$end\n#200\n0!\n");
}

}  // namespace
}  // namespace pevp::trace::test
