// vcd.h: exact header text, nested scopes, only real changes, last-wins at one
// time, out-of-order recording, vector/scalar formatting, identifier codes past
// 94 signals, argument errors and write_file errors -- checked on the text and
// through a minimal VCD reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "pevp/trace/vcd.h"
#include "trace_test_util.h"
#include "vcd_reader.h"

namespace pevp::trace::test {
namespace {

std::string text_of(const VcdWriter& w) {
  std::ostringstream os;
  w.write(os);
  return os.str();
}

Vcd round_trip(const VcdWriter& w) {
  Vcd r = read_vcd(text_of(w));
  EXPECT_TRUE(r.problems.empty()) << ::testing::PrintToString(r.problems);
  EXPECT_EQ(r.timescale, "1ps");
  EXPECT_FALSE(r.has_date);
  EXPECT_EQ(r.vars.size(), w.signals());
  return r;
}

TEST(Vcd, HeaderAndNestedScopesExactText) {
  VcdWriter w;
  w.signal("pe_vp", "clk", 1);
  w.signal("pe_vp.arr_seq", "q_depth", 5);
  w.signal("pe_vp.seq", "busy", 1);
  w.signal("", "loose", 1);
  w.signal("pe_vp.arr_seq", "x", 64);
  EXPECT_EQ(text_of(w),
            "$version pe-vp $end\n"
            "$timescale 1ps $end\n"
            "$scope module pe_vp $end\n"
            "$var wire 1 ! clk $end\n"
            "$scope module arr_seq $end\n"
            "$var wire 5 \" q_depth [4:0] $end\n"
            "$var wire 64 % x [63:0] $end\n"
            "$upscope $end\n"
            "$scope module seq $end\n"
            "$var wire 1 # busy $end\n"
            "$upscope $end\n"
            "$upscope $end\n"
            "$scope module top $end\n"
            "$var wire 1 $ loose $end\n"
            "$upscope $end\n"
            "$enddefinitions $end\n"
            "#0\n"
            "$dumpvars\n"
            "0!\n"
            "b0 \"\n"
            "0#\n"
            "0$\n"
            "b0 %\n"
            "$end\n");
  const Vcd r = round_trip(w);
  EXPECT_EQ(r.vars.at(1).name, "pe_vp.arr_seq.q_depth");
  EXPECT_EQ(r.vars.at(2).name, "pe_vp.arr_seq.x");  // declaration order: scopes nest
  EXPECT_EQ(r.vars.at(4).name, "top.loose");
}

TEST(Vcd, DottedScopesIgnoreEmptyComponentsAndShareNodes) {
  VcdWriter w;
  const auto a = w.signal("a..b.", "s", 1);
  const auto b = w.signal("a.b", "s", 1);
  EXPECT_EQ(a, b);
  w.signal(".a.c", "t", 1);
  const Vcd r = round_trip(w);
  EXPECT_EQ(r.vars.at(0).name, "a.b.s");
  EXPECT_EQ(r.vars.at(1).name, "a.c.t");
  const std::string text = text_of(w);
  // One "a" scope holding both children.
  std::size_t n = 0;
  for (std::size_t p = 0; (p = text.find("$scope module a $end", p)) != std::string::npos; ++p) ++n;
  EXPECT_EQ(n, 1u);
}

TEST(Vcd, OnlyRealChangesAreEmitted) {
  VcdWriter w;
  const auto s = w.signal("u", "busy", 1);
  const auto v = w.signal("u", "count", 8);
  w.change(s, 10, 1);
  w.change(s, 20, 1);  // same value: no change
  w.change(v, 20, 0);  // still 0: no change
  w.change(s, 30, 0);
  w.change(v, 30, 3);
  w.change(v, 40, 3);
  const std::string text = text_of(w);
  EXPECT_NE(text.find("#10\n1!\n#30\n0!\nb11 \"\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("#20"), std::string::npos) << text;
  EXPECT_EQ(text.find("#40"), std::string::npos) << text;
  const Vcd r = round_trip(w);
  EXPECT_EQ(r.stamps, (std::vector<std::uint64_t>{0, 10, 30}));
  EXPECT_EQ(r.at("u.busy", 15), 1u);
  EXPECT_EQ(r.at("u.busy", 30), 0u);
  EXPECT_EQ(r.at("u.count", 29), 0u);
  EXPECT_EQ(r.at("u.count", 1000), 3u);
}

TEST(Vcd, LastRecordedChangeWinsAtOneTime) {
  VcdWriter w;
  const auto v = w.signal("u", "v", 4);
  const auto s = w.signal("u", "s", 1);
  w.change(v, 10, 5);
  w.change(v, 10, 7);  // wins
  w.change(s, 20, 1);
  w.change(s, 20, 0);  // wins, and equals the current value: nothing at #20
  w.change(v, 30, 9);
  w.change(v, 30, 7);  // wins, equal to the current value: nothing at #30
  const Vcd r = round_trip(w);
  EXPECT_EQ(r.stamps, (std::vector<std::uint64_t>{0, 10}));
  EXPECT_EQ(r.at("u.v", 10), 7u);
  EXPECT_EQ(r.changes_of("u.v"), 2u);  // $dumpvars + #10
  EXPECT_EQ(r.at("u.s", 25), 0u);
}

TEST(Vcd, OutOfOrderRecordingIsWrittenInTimeOrder) {
  VcdWriter w;
  const auto c = w.signal("u", "c", 16);
  std::vector<std::uint64_t> times;
  for (std::uint64_t t = 1; t <= 200; ++t) times.push_back(t * 714);
  std::shuffle(times.begin(), times.end(), std::mt19937(3));
  for (std::uint64_t t : times) w.change(c, t, t / 714);
  const Vcd r = round_trip(w);
  EXPECT_EQ(r.stamps.size(), 201u);
  EXPECT_TRUE(std::is_sorted(r.stamps.begin(), r.stamps.end()));
  for (std::uint64_t k = 0; k <= 200; ++k) EXPECT_EQ(r.at("u.c", k * 714 + 1), k);
}

TEST(Vcd, ValueFormatting) {
  VcdWriter w;
  const auto s = w.signal("u", "s", 1);
  const auto v8 = w.signal("u", "v8", 8);
  const auto v64 = w.signal("u", "v64", 64);
  const auto v3 = w.signal("u", "v3", 3);
  w.change(s, 1, 1);
  w.change(v8, 1, 5);
  w.change(v64, 1, ~std::uint64_t{0});
  w.change(v8, 2, 0);
  w.change(v3, 2, 0xFF);  // bits above the width dropped: 0b111
  w.change(s, 3, 2);      // masked to 1 bit: 0
  w.change(v64, 3, std::uint64_t{1} << 63);
  const std::string text = text_of(w);
  const std::string tail = text.substr(text.find("$end\n#1\n") + 5);
  EXPECT_EQ(tail,
            "#1\n"
            "1!\n"
            "b101 \"\n"
            "b" + std::string(64, '1') + " #\n"
            "#2\n"
            "b0 \"\n"
            "b111 $\n"
            "#3\n"
            "0!\n"
            "b1" + std::string(63, '0') + " #\n");
  const Vcd r = round_trip(w);
  EXPECT_EQ(r.at("u.v64", 2), ~std::uint64_t{0});
  EXPECT_EQ(r.at("u.v3", 2), 7u);
}

TEST(Vcd, ChangesAtTimeZeroAreTheInitialValues) {
  VcdWriter w;
  const auto a = w.signal("u", "a", 1);
  const auto b = w.signal("u", "b", 4);
  w.signal("u", "untouched", 2);
  w.change(b, 0, 3);
  w.change(a, 0, 1);
  w.change(a, 0, 0);  // last wins: stays 0
  const std::string text = text_of(w);
  EXPECT_NE(text.find("#0\n$dumpvars\n0!\nb11 \"\nb0 #\n$end\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("#0", text.find("$end\n#0") + 7), std::string::npos);  // one #0 only
  const Vcd r = round_trip(w);
  EXPECT_EQ(r.stamps, std::vector<std::uint64_t>{0});
}

TEST(Vcd, IdentifierCodesStayUniquePast94Signals) {
  EXPECT_EQ(VcdWriter::id_code(0), "!");
  EXPECT_EQ(VcdWriter::id_code(93), "~");
  EXPECT_EQ(VcdWriter::id_code(94), "!!");
  EXPECT_EQ(VcdWriter::id_code(95), "\"!");
  EXPECT_EQ(VcdWriter::id_code(94 + 94 * 94 - 1), "~~");
  EXPECT_EQ(VcdWriter::id_code(94 + 94 * 94), "!!!");
  std::set<std::string> codes;
  for (std::uint32_t n = 0; n < 200000; ++n) {
    const std::string c = VcdWriter::id_code(n);
    for (char ch : c) ASSERT_TRUE(ch >= '!' && ch <= '~') << n;
    codes.insert(c);
  }
  EXPECT_EQ(codes.size(), 200000u);
  EXPECT_EQ(VcdWriter::id_code(~std::uint32_t{0}).size(), 5u);

  VcdWriter w;  // 300 signals, each with its own value
  std::vector<VcdWriter::SignalId> ids;
  for (int i = 0; i < 300; ++i) ids.push_back(w.signal("many", "s" + std::to_string(i), 16));
  for (int i = 0; i < 300; ++i) w.change(ids[i], 100, static_cast<std::uint64_t>(i) + 1);
  const Vcd r = round_trip(w);
  ASSERT_EQ(r.vars.size(), 300u);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(r.at("many.s" + std::to_string(i), 100), static_cast<std::uint64_t>(i) + 1);
  EXPECT_EQ(r.lines_at.at(100), 300u);
}

TEST(Vcd, NamesAreSanitized) {
  VcdWriter w;
  w.signal("my scope.x\ty", "a b\nc", 1);
  const Vcd r = round_trip(w);
  EXPECT_EQ(r.vars.at(0).name, "my_scope.x_y.a_b_c");
  EXPECT_EQ(w.signal("my scope.x\ty", "a b\nc", 1), 0u);  // the same signal
  EXPECT_EQ(w.signal("my_scope.x_y", "a_b_c", 1), 0u);    // spells the same
}

TEST(Vcd, ArgumentErrorsThrow) {
  VcdWriter w;
  EXPECT_THROW(w.signal("u", "zero", 0), std::invalid_argument);
  EXPECT_THROW(w.signal("u", "wide", 65), std::invalid_argument);
  const auto s = w.signal("u", "s", 4);
  EXPECT_EQ(w.signal("u", "s", 4), s);
  try {
    w.signal("u", "s", 8);
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("already declared with width 4, not 8"), std::string::npos) << e.what();
  }
  EXPECT_THROW(w.change(s + 1, 0, 1), std::out_of_range);
  EXPECT_EQ(w.signals(), 1u);
  EXPECT_EQ(w.changes(), 0u);
}

TEST(Vcd, EmptyWriterIsStillAValidFile) {
  VcdWriter w;
  EXPECT_EQ(text_of(w), "$version pe-vp $end\n$timescale 1ps $end\n$enddefinitions $end\n#0\n$dumpvars\n$end\n");
  round_trip(w);
}

TEST(Vcd, WriteFileRoundTripsAndReportsErrors) {
  ScratchDir dir;
  VcdWriter w;
  const auto s = w.signal("u", "s", 1);
  w.change(s, 5, 1);
  const std::string path = dir.file("wave.vcd");
  std::string error;
  ASSERT_TRUE(w.write_file(path, &error)) << error;
  EXPECT_EQ(read_text(path), text_of(w));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"wave.vcd"});

  const std::string missing = dir.file("missing/wave.vcd");
  EXPECT_FALSE(w.write_file(missing, &error));
  EXPECT_EQ(error.rfind(missing + ": ", 0), 0u) << error;

  std::filesystem::create_directory(dir.path() / "adir");
  const std::string adir = dir.file("adir");
  EXPECT_FALSE(w.write_file(adir, &error));
  EXPECT_EQ(error.rfind(adir + ": ", 0), 0u) << error;
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"adir", "wave.vcd"}));
}

}  // namespace
}  // namespace pevp::trace::test
