// Documents nested deeper than pe-vp reads (pevp/documents/documents.h, D-NESTING-DEPTH): 100,000 nested brackets in
// a configuration file or a checkpoint's configuration section ended the process with SIGSEGV in a recursive walk
// after the parse. Each is now refused at the bracket, header or dotted key that opens level 65, with the line and
// column, and a document at the limit still reads. The expected places are counted here from how each text is built.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../checkpoint/ckpt_fields.h"
#include "config_test_util.h"
#include "pevp/documents/documents.h"
#include "pevp/platform/checkpoint.h"
#include "pevp/platform/virtual_platform.h"

namespace pevp::platform {
namespace {

using documents::DocumentError;
using documents::JsonComments;
using documents::kMaxNestingDepth;
namespace fs = std::filesystem;

constexpr std::size_t kHostile = 100000;  // the depth that crashed every reader

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

// `levels` nested arrays around nothing.
std::string json_arrays(std::size_t levels) { return repeat("[", levels) + repeat("]", levels); }

template <class F>
std::string document_error(F&& f) {
  try {
    f();
  } catch (const DocumentError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string too_deep(const std::string& where, std::size_t offset, const char* language = "JSON") {
  return where + ": " + language + " nested deeper than 64 levels (the limit for a document pe-vp reads; offset " +
         std::to_string(offset) + ")";
}

TEST(Nesting, TheLimitIsSixtyFourLevels) { EXPECT_EQ(kMaxNestingDepth, 64u); }

TEST(Nesting, JsonAtTheLimitReadsOneDeeperIsRefusedAtItsBracket) {
  const nlohmann::json at_limit = documents::parse_json(json_arrays(64), "t.json");
  std::size_t depth = 0;
  for (const nlohmann::json* j = &at_limit; j->is_array(); j = j->empty() ? nullptr : &(*j)[0]) {
    ++depth;
    if (j->empty()) break;
  }
  EXPECT_EQ(depth, 64u);
  // The 65th '[' is character 65 of line 1 (offset 64).
  EXPECT_EQ(document_error([] { documents::parse_json(json_arrays(65), "t.json"); }), too_deep("t.json:1:65", 64));
  EXPECT_EQ(document_error([] { documents::parse_json(json_arrays(kHostile), "t.json"); }), too_deep("t.json:1:65", 64));
  // Objects count as arrays do, on the line where the bracket is.
  const std::string objects = "{\n\"a\":" + repeat("{\"a\":", 64) + "1" + repeat("}", 65);
  // Level 65 is the 64th "{" of line 2, which starts at column 5 + 5 * 63 = 320.
  EXPECT_EQ(document_error([&] { documents::parse_json(objects, "o.json"); }), too_deep("o.json:2:320", 2 + 319));
  EXPECT_EQ(documents::json_too_deep(objects, JsonComments::Refused, 65), std::nullopt);
}

TEST(Nesting, BracketsInStringsAndCommentsDoNotCount) {
  const std::string in_string = "{\"k\": \"" + repeat("[", 100) + "\\\"" + repeat("{", 100) + "\"}";
  EXPECT_EQ(documents::parse_json(in_string, "s.json")["k"].get<std::string>().size(), 201u);
  const std::string commented = "// " + repeat("[", 100) + "\n/* " + repeat("{", 100) + " */ {\"k\": 1}";
  EXPECT_EQ(documents::parse_json(commented, "c.json", JsonComments::Allowed)["k"], 1);
  // Without comments the same text is a syntax error at the first '/', not a nesting error.
  EXPECT_EQ(document_error([&] { documents::parse_json(commented, "c.json"); }).rfind("c.json:1:1: JSON syntax error: ", 0),
            0u);
  // An escaped backslash ends the string: the brackets after it are the document's.
  const std::string after_escape = "[\"\\\\\", " + json_arrays(64) + "]";
  EXPECT_EQ(document_error([&] { documents::parse_json(after_escape, "e.json"); }), too_deep("e.json:1:71", 70));
}

TEST(Nesting, JsonErrorsNameTheirPlace) {
  EXPECT_EQ(document_error([] { documents::parse_json("{\"a\": 1,\n \"b\": }", "x.json"); })
                .rfind("x.json:2:7: JSON syntax error: syntax error while parsing value", 0),
            0u);
  EXPECT_EQ(document_error([] { documents::parse_json("{\"a\": {\"b\": [1e400]}}", "x.json"); }),
            "x.json: a.b: number overflow parsing '1e400' (a JSON number beyond the range of a double)");
}

// Where the n-th (from 1) `c` of `text` is.
std::size_t nth(const std::string& text, char c, std::size_t n) {
  std::size_t at = std::string::npos;
  for (std::size_t i = 0; i < n; ++i) at = text.find(c, at + 1);
  return at;
}

std::string dotted(std::size_t segments) {
  std::string s = "a";
  for (std::size_t i = 1; i < segments; ++i) s += ".a";
  return s;
}

TEST(Nesting, TomlHeadersDottedKeysArraysAndInlineTables) {
  // The document's table is level 1, as in the JSON parse_toml makes of it. [a.a....] with 63 segments is 63 tables
  // more; the 64th segment's dot (the 63rd dot) opens level 65.
  EXPECT_NO_THROW(documents::parse_toml("[" + dotted(63) + "]\nx = 1\n", "t.toml"));
  const std::string header = "[" + dotted(64) + "]\nx = 1\n";
  EXPECT_EQ(document_error([&] { documents::parse_toml(header, "t.toml"); }),
            too_deep("t.toml:1:" + std::to_string(nth(header, '.', 63) + 1), nth(header, '.', 63), "TOML"));
  // [[a....]]: the array of tables is a level of its own.
  EXPECT_NO_THROW(documents::parse_toml("[[" + dotted(62) + "]]\nx = 1\n", "t.toml"));
  EXPECT_NE(documents::toml_too_deep("[[" + dotted(63) + "]]\n"), std::nullopt);
  // A dotted key's segments before the last are tables: 64 segments make 63 (64 levels), 65 make 64.
  EXPECT_NO_THROW(documents::parse_toml(dotted(64) + " = 1\n", "t.toml"));
  const std::string key = "# a comment\n" + dotted(65) + " = 1\n";
  EXPECT_EQ(document_error([&] { documents::parse_toml(key, "t.toml"); }),
            too_deep("t.toml:2:" + std::to_string(nth(key, '.', 64) - 12 + 1), nth(key, '.', 64), "TOML"));
  // Arrays and inline tables as values: the 64th '[' (offset 4 + 63) opens level 65.
  EXPECT_NO_THROW(documents::parse_toml("x = " + json_arrays(63) + "\n", "t.toml"));
  EXPECT_EQ(document_error([] { documents::parse_toml("x = " + json_arrays(64) + "\n", "t.toml"); }),
            too_deep("t.toml:1:68", 67, "TOML"));
  // [a.a] b.c = {d = [[1]]}: the document, a, a, b, the inline table c, the array d, the array in it -- seven levels.
  const std::string mixed = "[a.a]\nb.c = {d = [[1]]}\n";
  EXPECT_EQ(documents::toml_too_deep(mixed, 7), std::nullopt);
  EXPECT_EQ(documents::toml_too_deep(mixed, 6), mixed.find("[[1") + 1);
  EXPECT_EQ(documents::toml_too_deep(mixed, 4), mixed.find('{'));
  EXPECT_EQ(documents::toml_too_deep(mixed, 3), mixed.find("b.c") + 1);
  EXPECT_EQ(documents::toml_too_deep(mixed, 2), nth(mixed, '.', 1));
  EXPECT_EQ(documents::toml_too_deep(mixed, 1), 0u);
}

// A header segment that names an array of tables is two levels, the array and its last table: [[a]] [[a.a]] ... nest
// twice as deep as their segments. The text scan counts segments; the parsed tables are measured too.
TEST(Nesting, ArraysOfTablesNestedByTheirHeadersAreMeasured) {
  std::string text;
  for (std::size_t segments = 1; segments <= 40; ++segments) text += "[[" + dotted(segments) + "]]\n";
  // [[a]] x 32: the document, then an array and a table per segment; the 32nd header's array is level 64, its table
  // 65: the 32nd line, whose header starts at column 1.
  EXPECT_EQ(documents::toml_too_deep(text), std::nullopt);
  std::size_t line_32 = 0;
  for (int i = 1; i < 32; ++i) line_32 = text.find('\n', line_32) + 1;
  EXPECT_EQ(document_error([&] { documents::parse_toml(text, "t.toml"); }),
            too_deep("t.toml:32:1", line_32, "TOML"));
  std::string at_limit;
  for (std::size_t segments = 1; segments <= 31; ++segments) at_limit += "[[" + dotted(segments) + "]]\n";
  at_limit += "[" + dotted(32) + "]\n";  // a plain table under the 31st array's last table: level 64
  EXPECT_NO_THROW(documents::parse_toml(at_limit, "t.toml"));
}

TEST(Nesting, TomlValuesAndStringsDoNotCount) {
  // Dots in numbers, dates and strings, brackets in strings and comments, many values on a line: no level.
  std::string floats = "x = [";
  for (int i = 0; i < 200; ++i) floats += "1.5, ";
  floats += "2.5]\n";
  const std::string text = floats + "d = 1979-05-27T07:32:00.999Z\n\"a.b.c\" = '" + repeat("[", 100) + "'\n" +
                           "m = \"\"\"\n" + repeat("{", 100) + "\"\"\"\" # " + repeat("[", 100) + "\n[t]\n" +
                           "lit = '''" + repeat("[", 100) + "'''\n";
  EXPECT_EQ(documents::toml_too_deep(text), std::nullopt);
  EXPECT_EQ(documents::toml_too_deep(text, 2), std::nullopt);  // the document, and x's array or the table t
  // toml++ reads it all: what stops it is the date, which no document pe-vp reads takes.
  EXPECT_EQ(document_error([&] { documents::parse_toml(text, "v.toml"); }),
            "v.toml: d: a date or time is no parameter value");
}

TEST(Nesting, ADeepTomlHeaderBeforeASyntaxErrorIsRefusedBeforeTomlBuildsIt) {
  // toml++ builds the 100,000 tables of the header, then throws at '@' and destroys them recursively: SIGSEGV.
  const std::string text = "[" + dotted(kHostile) + "]\n@\n";
  EXPECT_EQ(document_error([&] { documents::parse_toml(text, "t.toml"); }),
            too_deep("t.toml:1:" + std::to_string(nth(text, '.', 63) + 1), nth(text, '.', 63), "TOML"));
}

class DeepConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pevp_nesting_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  fs::path dir_;
};

// A configuration file whose known section holds 100,000 nested arrays: the message about its type dumped the
// value, recursively (SIGSEGV).
TEST_F(DeepConfig, AConfigFileIsRefusedWithItsPlace) {
  const std::string path = write("deep.json", "{\"seq\": " + json_arrays(kHostile) + "}");
  // '{' is level 1 at offset 0, the '['s start at offset 8: level 65 is at offset 8 + 63 = 71.
  EXPECT_EQ(test::config_error([&] { load_config(path); }, ""), too_deep(path + ":1:72", 71));
  const std::string commented = write("c.json", "// [[[[\n{\"seq\": {\"queue_depth\": " + json_arrays(kHostile) + "}}");
  EXPECT_EQ(test::config_error([&] { load_config(commented); }, ""), too_deep(commented + ":2:87", 94));
  // At the limit the configuration's own rule speaks.
  const std::string at_limit = write("ok.json", "{\"seq\": " + json_arrays(63) + "}");
  EXPECT_NE(test::config_error([&] { load_config(at_limit); }, "seq").find("seq"), std::string::npos);
}

// --- A checkpoint whose configuration section nests 100,000 levels, with a correct CRC ---------------------------

using Bytes = std::vector<std::uint8_t>;

// The checkpoint tests' independent reading of the format: CRC-32 and little-endian fields.
using ckf::crc32;
constexpr auto le = ckf::get_le;
using ckf::put_le;

// The checkpoint with its 'config' section's text replaced, its length and CRC made right (docs/checkpoint.md
// "Format": magic, version, generation; then sections of name length u16, name, payload length u64, CRC-32 u32,
// payload; the config payload is a u32 length and the JSON text).
Bytes with_config_text(const Bytes& b, const std::string& text) {
  std::size_t at = 16 + le(b, 12, 4);
  while (at < b.size()) {
    const std::size_t name_len = le(b, at, 2);
    const std::string name(b.begin() + at + 2, b.begin() + at + 2 + name_len);
    const std::size_t length = le(b, at + 2 + name_len, 8), payload = at + 2 + name_len + 12;
    if (name == "config") {
      Bytes pl(4);
      put_le(pl, 0, text.size(), 4);
      pl.insert(pl.end(), text.begin(), text.end());
      Bytes out(b.begin(), b.begin() + payload);
      put_le(out, payload - 12, pl.size(), 8);
      put_le(out, payload - 4, crc32(pl.data(), pl.size()), 4);
      out.insert(out.end(), pl.begin(), pl.end());
      out.insert(out.end(), b.begin() + payload + length, b.end());
      return out;
    }
    at = payload + length;
  }
  throw std::runtime_error("no config section");
}

TEST(DeepCheckpoint, AConfigSectionIsRefusedAndTheTargetReadsOn) {
  const VpConfig cfg = preset(isa::Generation::MARIANA);
  VirtualPlatform vp(cfg);
  vp.run([&](Driver&) {
    const Bytes good = save_checkpoint(vp.platform());
    const Bytes deep = with_config_text(good, "{\"seq\": " + json_arrays(kHostile) + "}");
    try {
      restore_checkpoint(vp.platform(), deep, "deep.ckpt");
      ADD_FAILURE() << "accepted";
    } catch (const CheckpointError& e) {
      EXPECT_EQ(std::string(e.what()), "checkpoint deep.ckpt: section 'config' is not a JSON object pe-vp reads: " +
                                           too_deep("its text:1:72", 71));
    }
    // The same platform restores its own checkpoint afterwards.
    EXPECT_NO_THROW(restore_checkpoint(vp.platform(), good, "good.ckpt"));
  });
}

}  // namespace
}  // namespace pevp::platform
