// load_config: files on disk, their errors named with the file, JSON syntax
// errors with line and column.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "config_test_util.h"

namespace pevp::platform {
namespace {

using isa::Generation;
using test::config_error;

namespace fs = std::filesystem;

// A fresh directory per test (tests run in their own processes, possibly in parallel).
class File : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("pevp_config_" + std::to_string(::getpid()) + "_" + info->name());
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

TEST_F(File, LoadsAPartialFileWithComments) {
  const std::string path = write("cfg.json", R"({
  // a CAYMAN with a shallow IFIFO
  "generation": "CAYMAN",
  "arr_seq": {"ififo_depth": 2},  /* model exploration */
  "sbuf": {"access_latency_ns": 15}
})");
  VpConfig expected = preset(Generation::CAYMAN);
  expected.platform.arr_seq.ififo_depth = 2;
  expected.sbuf.access_latency = test::ns(15);
  test::expect_same(load_config(path), expected);
}

TEST_F(File, ADumpLoadsBackForEveryGeneration) {
  for (Generation g : isa::kAllGenerations) {
    VpConfig c = preset(g);
    apply_override(c, "seq.queue_depth=31");
    const std::string path = write("dump.json", to_json(c).dump(2));
    test::expect_same(load_config(path, preset(Generation::MARIANA)), c);
  }
}

TEST_F(File, ADumpWithNonDefaultTimingKeysLoadsBackIdentical) {
  for (Generation g : isa::kAllGenerations) {
    SCOPED_TRACE(std::string(isa::name(g)));
    VpConfig c = preset(g);
    apply_override(c, "mode=timing");
    apply_override(c, "seq.quantum_ns=2.5 us");
    apply_override(c, "timing.throttle_fraction=0.125");
    unsigned v = 2;
    for (const test::TimingKey& k : test::timing_keys()) {
      // Distinct values, none equal to the default, so a key loaded into the wrong field shows.
      while (v == k.default_value) ++v;
      apply_override(c, "timing." + std::string(k.name) + "=" + std::to_string(v));
      ASSERT_NE(c.platform.arr_seq.timing.*k.member, k.default_value) << k.name;
      v += 7;
    }
    const std::string text = to_json(c).dump(2);
    const std::string path = write("timing.json", text);
    // From the base of another generation and mode: the dump alone decides.
    VpConfig base = preset(g == Generation::CAYMAN ? Generation::MAVERICK : Generation::CAYMAN);
    base.mode = SimMode::Functional;
    const VpConfig loaded = load_config(path, base);
    test::expect_same(loaded, c);
    EXPECT_EQ(to_json(loaded).dump(2), text);  // and the second dump is byte-identical
  }
}

TEST_F(File, APartialTimingFileChangesOnlyItsKeys) {
  const std::string path = write("sweep.json", R"({
  // a sweep point: timing only, a slower SBUF start, a long run-ahead
  "mode": "Timing",
  "timing": {"sbuf_access_cycles": 120, "throttle_fraction": 0.5},
  "seq": {"quantum_ns": 10000}
})");
  VpConfig expected = preset(Generation::MARIANA);
  expected.mode = SimMode::Timing;
  expected.platform.arr_seq.timing.sbuf_access_cycles = 120;
  expected.platform.arr_seq.timing.throttle_fraction = 0.5;
  expected.platform.seq.quantum = test::ns(10000);
  test::expect_same(load_config(path), expected);
}

TEST_F(File, MissingFileAndDirectory) {
  const std::string missing = (dir_ / "nope.json").string();
  EXPECT_EQ(config_error([&] { load_config(missing); }, ""), missing + ": cannot open: No such file or directory");
  EXPECT_EQ(config_error([&] { load_config(dir_.string()); }, ""), dir_.string() + ": is a directory");
}

TEST_F(File, ANumberBeyondDoubleNamesTheFileAndTheKey) {
  const std::string path = (dir_ / "big.json").string();
  std::ofstream(path) << R"({"timing": {"psum_write_cycles": 2, "fp32_factor": 1e400}})";
  EXPECT_EQ(config_error([&] { load_config(path); }, "timing.fp32_factor"),
            path + ": timing.fp32_factor: number overflow parsing '1e400' (a JSON number beyond the range of a double)");
}

TEST_F(File, SyntaxErrorsGiveLineAndColumn) {
  // The stray comma is line 3, column 15 (1-based, as an editor counts).
  const std::string path = write("bad.json", "{\n  \"seq\": {\"queue_depth\": 4},\n  \"arr_seq\": {,}\n}\n");
  const std::string m = config_error([&] { load_config(path); }, "");
  EXPECT_EQ(m.rfind(path + ":3:15: JSON syntax error: ", 0), 0u) << m;
  EXPECT_NE(m.find("unexpected ','"), std::string::npos) << m;
}

TEST_F(File, TruncatedAndEmptyFiles) {
  const std::string truncated = write("trunc.json", "{\n  \"seq\": {\"queue_depth\": 4}");
  // Unexpected end of input: just past the last character of line 2 (27 characters).
  const std::string m = config_error([&] { load_config(truncated); }, "");
  EXPECT_EQ(m.rfind(truncated + ":2:28: JSON syntax error: ", 0), 0u) << m;
  const std::string empty = write("empty.json", "");
  EXPECT_EQ(config_error([&] { load_config(empty); }, "").rfind(empty + ":1:1: JSON syntax error: ", 0), 0u);
}

TEST_F(File, ConfigurationErrorsNameTheFileAndTheKey) {
  const std::string path = write("cfg.json", R"({"arr_seq": {"ififo_depth": 0}})");
  EXPECT_EQ(config_error([&] { load_config(path); }, "arr_seq.ififo_depth"),
            path + ": arr_seq.ififo_depth = 0: out of range (1..65536)");
  const std::string unknown = write("unknown.json", R"({"seq": {"depth": 4}})");
  EXPECT_EQ(config_error([&] { load_config(unknown); }, "seq.depth"),
            unknown + ": unknown key 'seq.depth' (valid keys in 'seq': queue_depth, quantum_ns)");
  const std::string timing = write("timing.json", R"({"timing": {"fp32_factor": 0}})");
  EXPECT_EQ(config_error([&] { load_config(timing); }, "timing.fp32_factor"),
            timing + ": timing.fp32_factor = 0: out of range (1..1048576)");
  const std::string mode = write("mode.json", R"({"mode": "fast"})");
  EXPECT_EQ(config_error([&] { load_config(mode); }, "mode"),
            mode + ": mode = \"fast\": unknown mode (functional, timing or both)");
  const std::string array = write("array.json", "[]");
  EXPECT_EQ(config_error([&] { load_config(array); }, ""),
            array + ": the configuration must be a JSON object, got an array");
}

}  // namespace
}  // namespace pevp::platform
