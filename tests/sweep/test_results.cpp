// A sweep's files (pevp/sweep/results.h): point keys (FNV-1a 64), the plan's JSON round trip, results.csv (columns,
// RFC 4180 quoting, failed and missing rows), summary.json's network totals and the per-point records.
//
// Every expectation here is derived by hand (in the comments where it takes a step), not by running the code under
// test.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pevp/sweep/results.h"
#include "pevp/sweep/runner.h"
#include "pevp/sweep/spec.h"
#include "pevp/sweep/workload.h"

namespace pevp::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Records = std::vector<std::optional<json>>;

// ---------------------------------------------------------------------------------------------------------------
// Helpers

template <typename Action>
std::string spec_error_of(Action&& action) {
  try {
    action();
  } catch (const SpecError& error) {
    return error.what();
  } catch (const std::exception& error) {
    return std::string("<not a SpecError: ") + error.what() + ">";
  }
  return "<no SpecError thrown>";
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("pevp_sweep_results_" + tag + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

std::string read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  ASSERT_TRUE(file.good()) << path;
}

std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

PlannedPoint planned(const std::string& key, std::size_t index, std::size_t configuration, const std::string& workload,
                     std::size_t layer_index, const Gemm& layer, std::vector<Param> params) {
  PlannedPoint p;
  p.key = key;
  p.point.index = index;
  p.point.configuration = configuration;
  p.point.workload = workload;
  p.point.layer_index = layer_index;
  p.point.layer = layer;
  p.point.params = std::move(params);
  p.args = {"--m", std::to_string(layer.m), "--k", std::to_string(layer.k), "--n", std::to_string(layer.n)};
  p.gen = "MARIANA";
  p.dtype = "bf16";
  return p;
}

// A CSV line from its fields, written exactly as they must appear (quoted ones with their quotes).
std::string line(const std::vector<std::string>& fields) {
  std::string s;
  for (std::size_t i = 0; i < fields.size(); ++i) s += (i ? "," : "") + fields[i];
  return s + "\n";
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<std::string> empties(std::size_t n) { return std::vector<std::string>(n, ""); }

// ---------------------------------------------------------------------------------------------------------------
// SweepKey

TEST(SweepKey, KnownFnv1a64Values) {
  // FNV-1a 64: offset basis 0xcbf29ce484222325, prime 0x100000001b3 (the empty text is the basis itself).
  // "a": (0xcbf29ce484222325 ^ 0x61) * 0x100000001b3 mod 2^64 = 0xaf63dc4c8601ec8c; "foobar" is the FNV
  // reference test vector 0x85944171f73967e8.
  EXPECT_EQ(key_of(""), "cbf29ce484222325");
  EXPECT_EQ(key_of("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(key_of("foobar"), "85944171f73967e8");
  // Zero padded to 16 digits: FNV-1a 64 of "key12800" is 0x00d5e25a18c2cafd (computed separately).
  EXPECT_EQ(key_of("key12800"), "00d5e25a18c2cafd");
}

// A key hashed in pieces is the key of the whole text: a sweep hashes a configuration's part once for its points.
TEST(SweepKey, HashedInPiecesIsTheKeyOfTheWhole) {
  EXPECT_EQ(Fnv1a().hex(), key_of(""));
  EXPECT_EQ(Fnv1a().add("foo").add("bar").hex(), "85944171f73967e8");  // key_of("foobar") above
  const Fnv1a prefix = Fnv1a().add("{\"configuration\":{\"a\":1},\"csrs\":[],\"gemm\":");
  for (const std::string gemm : {"{\"m\":1}", "{\"m\":2}"})
    EXPECT_EQ(Fnv1a(prefix).add(gemm).add("}").hex(),
              key_of("{\"configuration\":{\"a\":1},\"csrs\":[],\"gemm\":" + gemm + "}"));
}

TEST(SweepKey, SixteenLowercaseHexDigitsDeterministicAndDistinct) {
  const std::vector<std::string> texts = {"", "a", "b", "ab", "ba", "{\"m\":1}", "{\"m\":2}", std::string(1000, 'x')};
  std::vector<std::string> keys;
  for (const std::string& t : texts) {
    const std::string k = key_of(t);
    EXPECT_EQ(k.size(), 16u) << t;
    EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos) << k;
    EXPECT_EQ(key_of(t), k) << "not deterministic for " << t;
    for (const std::string& seen : keys) EXPECT_NE(seen, k) << t;
    keys.push_back(k);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The plan (sweep.json): suite SweepRecords, as it is one of the sweep's files

SweepPlan round_trip_plan() {
  SweepPlan plan;
  plan.name = "round-trip";
  plan.spec_path = "/specs/rt.toml";
  plan.swept = {"tile_n", "tensor_engine.clock_ghz", "dependency_check", "gen"};
  plan.points.push_back(planned("0123456789abcdef", 0, 0, "bert_base:seq=128,batch=1", 0,
                                Gemm{"qkv", 2304, 768, 128, 12},
                                {{"gen", "MARIANA"},
                                 {"tile_n", 128},
                                 {"tensor_engine.clock_ghz", 2.8},
                                 {"dependency_check", false},
                                 {"check", true},
                                 {"csr.top:queue_cfg", std::uint64_t{4294967295u}},
                                 {"timing.offset", -3}}));
  plan.points.back().args.push_back("--no-check");
  plan.points.push_back(planned("fedcba9876543210", 1, 7, "w2", 2, Gemm{"", 1, 1, 1, 1}, {}));
  plan.points.back().gen = "MAVERICK";
  plan.points.back().dtype = "fp8_e4m3fn";
  plan.points.back().args.clear();
  return plan;
}

// The kind a parameter value keeps through JSON text (a non-negative integer may come back unsigned).
std::string kind(const json& v) {
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_float()) return "float";
  if (v.is_number_integer()) return "integer";
  return v.type_name();
}

void expect_same_plan(const SweepPlan& a, const SweepPlan& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.spec_path, b.spec_path);
  EXPECT_EQ(a.swept, b.swept);
  ASSERT_EQ(a.points.size(), b.points.size());
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    SCOPED_TRACE("point " + std::to_string(i));
    const PlannedPoint& p = a.points[i];
    const PlannedPoint& q = b.points[i];
    EXPECT_EQ(p.key, q.key);
    EXPECT_EQ(p.point.index, q.point.index);
    EXPECT_EQ(p.point.configuration, q.point.configuration);
    EXPECT_EQ(p.point.workload, q.point.workload);
    EXPECT_EQ(p.point.layer_index, q.point.layer_index);
    EXPECT_EQ(p.point.layer.name, q.point.layer.name);
    EXPECT_EQ(p.point.layer.m, q.point.layer.m);
    EXPECT_EQ(p.point.layer.k, q.point.layer.k);
    EXPECT_EQ(p.point.layer.n, q.point.layer.n);
    EXPECT_EQ(p.point.layer.count, q.point.layer.count);
    ASSERT_EQ(p.point.params.size(), q.point.params.size());
    for (std::size_t j = 0; j < p.point.params.size(); ++j) {
      EXPECT_EQ(p.point.params[j].name, q.point.params[j].name);
      EXPECT_EQ(p.point.params[j].value, q.point.params[j].value) << p.point.params[j].name;
      EXPECT_EQ(kind(p.point.params[j].value), kind(q.point.params[j].value)) << p.point.params[j].name;
    }
    EXPECT_EQ(p.args, q.args);
    EXPECT_EQ(p.gen, q.gen);
    EXPECT_EQ(p.dtype, q.dtype);
  }
}

TEST(SweepRecords, PlanRoundTripsThroughJsonText) {
  const SweepPlan plan = round_trip_plan();
  const json doc = to_json(plan);
  EXPECT_EQ(doc["format"], "pe-vp sweep plan 1");
  EXPECT_EQ(doc["name"], "round-trip");
  EXPECT_EQ(doc["spec"], "/specs/rt.toml");
  EXPECT_EQ(doc["points"].size(), 2u);
  EXPECT_EQ(doc["points"][0]["layer"], (json{{"name", "qkv"}, {"m", 2304}, {"k", 768}, {"n", 128}, {"count", 12}}));
  EXPECT_EQ(doc["points"][0]["params"][2], (json{{"name", "tensor_engine.clock_ghz"}, {"value", 2.8}}));
  // Through the text, as sweep.json is written and read back.
  expect_same_plan(plan_from_json(json::parse(doc.dump(1)), "sweep.json"), plan);
  expect_same_plan(plan_from_json(doc, "sweep.json"), plan);
}

// sweep.json is written point by point (a 1,000,000-point plan was one 6.9 GB document): the text is the document
// to_json makes, one point a line, and reads back to the plan.
TEST(SweepRecords, PlanWrittenPointByPointIsTheDocument) {
  const SweepPlan plan = round_trip_plan();
  std::ostringstream out;
  write_plan(out, plan);
  const std::string text = out.str();
  EXPECT_EQ(json::parse(text), to_json(plan));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4) << text;  // head, 2 points, end
  expect_same_plan(plan_from_json(json::parse(text), "sweep.json"), plan);
  // Read back point by point, from this text and from the indented, key-sorted one an older pe-vp wrote (its points
  // before "spec" and "swept").
  expect_same_plan(read_plan_text(text, "sweep.json"), plan);
  expect_same_plan(read_plan_text(to_json(plan).dump(1), "sweep.json"), plan);
  json no_key = to_json(plan);
  no_key["points"][1].erase("key");
  EXPECT_EQ(spec_error_of([&] { read_plan_text(no_key.dump(), "sweep.json"); }),
            "sweep.json: a malformed sweep plan: point 1: [json.exception.out_of_range.403] key 'key' not found");
  // An object two levels down elsewhere is no point, whatever it holds.
  json extra = to_json(plan);
  extra["extra"] = json::array({extra["points"][0]});
  EXPECT_EQ(read_plan_text(extra.dump(), "sweep.json").points.size(), 2u);
  json not_a_plan = no_key;
  not_a_plan["format"] = "something else";
  EXPECT_EQ(spec_error_of([&] { read_plan_text(not_a_plan.dump(), "sweep.json"); }),
            "sweep.json: not a pe-vp sweep plan (format \"pe-vp sweep plan 1\")");
  EXPECT_EQ(spec_error_of([&] { read_plan_text("[" + text, "sweep.json"); }).rfind("sweep.json:", 0), 0u);
  SweepPlan empty = plan;
  empty.points.clear();
  std::ostringstream none;
  write_plan(none, empty);
  EXPECT_EQ(json::parse(none.str()), to_json(empty));
  EXPECT_TRUE(read_plan_text(none.str(), "sweep.json").points.empty());
}

TEST(SweepRecords, MalformedPlanIsASpecErrorNamingTheSource) {
  const json good = to_json(round_trip_plan());
  const std::string not_a_plan = "plan.json: not a pe-vp sweep plan (format \"pe-vp sweep plan 1\")";
  json wrong_format = good;
  wrong_format["format"] = "pe-vp sweep plan 2";
  EXPECT_EQ(spec_error_of([&] { plan_from_json(wrong_format, "plan.json"); }), not_a_plan);
  json no_format = good;
  no_format.erase("format");
  EXPECT_EQ(spec_error_of([&] { plan_from_json(no_format, "plan.json"); }), not_a_plan);

  const std::string malformed = "plan.json: a malformed sweep plan: ";
  json no_name = good;
  no_name.erase("name");
  const std::string e1 = spec_error_of([&] { plan_from_json(no_name, "plan.json"); });
  EXPECT_EQ(e1.rfind(malformed, 0), 0u) << e1;
  EXPECT_NE(e1.find("'name'"), std::string::npos) << e1;

  json no_count = good;
  no_count["points"][1]["layer"].erase("count");
  const std::string e2 = spec_error_of([&] { plan_from_json(no_count, "plan.json"); });
  EXPECT_EQ(e2.rfind(malformed, 0), 0u) << e2;
  EXPECT_NE(e2.find("'count'"), std::string::npos) << e2;

  json string_index = good;
  string_index["points"][0]["index"] = "zero";
  const std::string e3 = spec_error_of([&] { plan_from_json(string_index, "plan.json"); });
  EXPECT_EQ(e3.rfind(malformed, 0), 0u) << e3;

  const std::string e4 = spec_error_of([&] { plan_from_json(json::array({1, 2}), "plan.json"); });
  EXPECT_EQ(e4.rfind("plan.json: ", 0), 0u) << e4;
}

// ---------------------------------------------------------------------------------------------------------------
// SweepCsv

// Four points of one workload, every layer count 1 (the macs column is SweepCsv.MacsColumnIsOneRun):
//   k0 L0 2x3x4 (24 MACs) ok; k1 L1 5x6x7 (210 MACs) failed; k2 L0 missing; k3 L1 ok.
SweepPlan csv_plan() {
  SweepPlan plan;
  plan.name = "csv";
  plan.spec_path = "csv.toml";
  plan.swept = {"tile_n", "geometry.pe_rows"};  // the p: columns in this order
  const Gemm l0{"L0", 2, 3, 4, 1}, l1{"L1", 5, 6, 7, 1};
  const std::vector<Param> c0 = {{"mode", "timing"}, {"tile_n", 128}, {"geometry.pe_rows", 64}};
  const std::vector<Param> c1 = {{"mode", "timing"}, {"tile_n", 512}, {"geometry.pe_rows", 64}};
  plan.points = {planned("k0", 0, 0, "net", 0, l0, c0), planned("k1", 1, 0, "net", 1, l1, c0),
                 planned("k2", 2, 1, "net", 0, l0, c1), planned("k3", 3, 1, "net", 1, l1, c1)};
  return plan;
}

Records csv_records() {
  const json r0 = {{"status", "ok"},
                   {"wall_s", 0.5},
                   {"cycles", 1000},
                   {"time_ns", 400.0},
                   {"utilisation", 0.25},
                   {"tflops", 1.5},
                   {"peak_tflops", 39.3216},
                   {"macs", 24},
                   {"stall_cycles", {{"sbuf_read", 10}, {"psum_bank", 5}}},
                   {"array_accounting", {{"busy", 0.25}, {"idle", 0.75}}},
                   {"instructions", {{"Matmul", 4}, {"LoadStationary", 1}}}};
  const json r3 = {{"status", "ok"},
                   {"wall_s", 1.25},
                   {"cycles", 2000},
                   {"time_ns", 800.5},
                   {"utilisation", 0.125},
                   {"tflops", 0.75},
                   {"peak_tflops", 39.3216},
                   {"macs", 210},
                   {"stall_cycles", {{"dma", 7}}},
                   {"array_accounting", {{"busy", 0.5}}},
                   {"instructions", {{"Matmul", 2}}}};
  return {r0, failed_record("exit 3: bad shape, \"m\"\nsee the log", 3, 0.25), std::nullopt, r3};
}

// The columns: identity, p:, figures, then the sorted unions stall: {dma, psum_bank, sbuf_read}, acct: {busy,
// idle}, instr: {LoadStationary, Matmul}, then wall_s.
const std::vector<std::string> kCsvHeader = {
    "key",         "status",      "error",           "workload",        "layer",       "count",       "m",
    "k",           "n",           "macs",            "gen",             "dtype",       "p:tile_n",    "p:geometry.pe_rows",
    "cycles",      "time_ns",     "utilisation",     "tflops",          "peak_tflops", "stall:dma",   "stall:psum_bank",
    "stall:sbuf_read", "acct:busy", "acct:idle",     "instr:LoadStationary", "instr:Matmul"};

// 5 figures + 3 stalls + 2 shares + 2 opcodes = 12 metric cells.
const std::vector<std::vector<std::string>> kCsvRows = {
    // ok: 400.0 is written as 400 (%.10g); no dma stall: empty; every opcode present.
    {"k0", "ok", "", "net", "L0", "1", "2", "3", "4", "24", "MARIANA", "bf16", "128", "64", "1000", "400", "0.25",
     "1.5", "39.3216", "", "5", "10", "0.25", "0.75", "1", "4"},
    // failed: the error quoted (comma, doubled quotes, line break kept), every metric empty.
    std::vector<std::string>{"k1", "failed", "\"exit 3: bad shape, \"\"m\"\"\nsee the log\"", "net", "L1", "1", "5",
                             "6", "7", "210", "MARIANA", "bf16", "128", "64"} +
        empties(12),
    // missing: no record at all.
    std::vector<std::string>{"k2", "missing", "", "net", "L0", "1", "2", "3", "4", "24", "MARIANA", "bf16", "512",
                             "64"} +
        empties(12),
    // ok: no LoadStationary retired -> 0; absent stalls and shares empty.
    {"k3", "ok", "", "net", "L1", "1", "5", "6", "7", "210", "MARIANA", "bf16", "512", "64", "2000", "800.5", "0.125",
     "0.75", "39.3216", "7", "", "", "0.5", "", "0", "2"},
};
const std::vector<std::string> kCsvWall = {"0.5", "0.25", "", "1.25"};

TEST(SweepCsv, ColumnsQuotingFailedAndMissingRows) {
  std::string expected = line(kCsvHeader + std::vector<std::string>{"wall_s"});
  for (std::size_t i = 0; i < kCsvRows.size(); ++i) expected += line(kCsvRows[i] + std::vector<std::string>{kCsvWall[i]});
  EXPECT_EQ(results_csv(csv_plan(), csv_records()), expected);
}

TEST(SweepCsv, WithoutWallTime) {
  std::string expected = line(kCsvHeader);
  for (const auto& row : kCsvRows) expected += line(row);
  EXPECT_EQ(results_csv(csv_plan(), csv_records(), false), expected);
}

TEST(SweepCsv, FewerRecordsThanPointsAreMissing) {
  // Only k0's record: k1..k3 are missing; the unions come from k0 alone.
  const Records records = {csv_records()[0]};
  const std::string csv = results_csv(csv_plan(), records, false);
  const std::string header = line({"key", "status", "error", "workload", "layer", "count", "m", "k", "n", "macs", "gen",
                                   "dtype", "p:tile_n", "p:geometry.pe_rows", "cycles", "time_ns", "utilisation",
                                   "tflops", "peak_tflops", "stall:psum_bank", "stall:sbuf_read", "acct:busy",
                                   "acct:idle", "instr:LoadStationary", "instr:Matmul"});
  const std::string k0 = line({"k0", "ok", "", "net", "L0", "1", "2", "3", "4", "24", "MARIANA", "bf16", "128", "64",
                               "1000", "400", "0.25", "1.5", "39.3216", "5", "10", "0.25", "0.75", "1", "4"});
  const std::string k3 = line(std::vector<std::string>{"k3", "missing", "", "net", "L1", "1", "5", "6", "7", "210",
                                                       "MARIANA", "bf16", "512", "64"} +
                              empties(11));
  EXPECT_EQ(csv.substr(0, header.size() + k0.size()), header + k0);
  ASSERT_GE(csv.size(), k3.size());
  EXPECT_EQ(csv.substr(csv.size() - k3.size()), k3);
}

TEST(SweepCsv, ScalesimColumnsOnlyWhenARecordHasThem) {
  SweepPlan plan;
  plan.name = "s";
  plan.points = {planned("a", 0, 0, "w", 0, Gemm{"x", 1, 1, 1, 1}, {}),
                 planned("b", 1, 0, "w", 1, Gemm{"y", 2, 2, 2, 1}, {})};
  const json plain = {{"status", "ok"}, {"wall_s", 1}, {"cycles", 10}, {"time_ns", 5}, {"utilisation", 0.5},
                      {"tflops", 2}, {"peak_tflops", 4}};
  json with_scalesim = plain;
  with_scalesim["scalesim"] = {{"folds", 3}, {"total_cycles", 1234}};
  const std::vector<std::string> head = {"key", "status", "error", "workload", "layer", "count", "m", "k", "n", "macs",
                                         "gen", "dtype", "cycles", "time_ns", "utilisation", "tflops", "peak_tflops"};
  const std::vector<std::string> a = {"a", "ok", "", "w", "x", "1", "1", "1", "1", "1", "MARIANA", "bf16",
                                      "10", "5", "0.5", "2", "4"};
  const std::vector<std::string> b = {"b", "ok", "", "w", "y", "1", "2", "2", "2", "8", "MARIANA", "bf16",
                                      "10", "5", "0.5", "2", "4"};
  // No record has "scalesim": no such columns.
  EXPECT_EQ(results_csv(plan, {plain, plain}), line(head + std::vector<std::string>{"wall_s"}) +
                                                   line(a + std::vector<std::string>{"1"}) +
                                                   line(b + std::vector<std::string>{"1"}));
  // One has: both rows get the columns, the other's empty, before wall_s.
  EXPECT_EQ(results_csv(plan, {plain, with_scalesim}),
            line(head + std::vector<std::string>{"scalesim_folds", "scalesim_total_cycles", "wall_s"}) +
                line(a + std::vector<std::string>{"", "", "1"}) + line(b + std::vector<std::string>{"3", "1234", "1"}));
}

TEST(SweepCsv, ParameterValuesAndNamesAreQuotedWhenNeeded) {
  SweepPlan plan;
  plan.swept = {"timing.policy", "double_row"};
  plan.points = {planned("a", 0, 0, "bert_base:seq=512,batch=1", 0, Gemm{"q\"k", 1, 1, 1, 1},
                         {{"timing.policy", "a,b"}, {"double_row", true}})};
  const std::string csv = results_csv(plan, {}, false);
  EXPECT_EQ(csv, line({"key", "status", "error", "workload", "layer", "count", "m", "k", "n", "macs", "gen", "dtype",
                       "p:timing.policy", "p:double_row", "cycles", "time_ns", "utilisation", "tflops", "peak_tflops"}) +
                     line(std::vector<std::string>{"a", "missing", "", "\"bert_base:seq=512,batch=1\"", "\"q\"\"k\"", "1",
                                                   "1", "1", "1", "1", "MARIANA", "bf16", "\"a,b\"", "true"} +
                          empties(5)));
}

// The macs column is one run's, m*k*n (docs/sweeps.md section 4, scripts/sweep_plots.py, which weights it by count
// itself), not workload.h's macs(), which includes the count. (results.cpp used macs() until commit 98f2482.)
TEST(SweepCsv, MacsColumnIsOneRun) {
  SweepPlan plan;
  plan.points = {planned("a", 0, 0, "w", 0, Gemm{"x", 4, 5, 6, 3}, {})};
  const std::string csv = results_csv(plan, {}, false);
  // 4 * 5 * 6 = 120 MACs per run; the count, 3, has its own column.
  EXPECT_EQ(csv.substr(csv.find('\n') + 1),
            line(std::vector<std::string>{"a", "missing", "", "w", "x", "3", "4", "5", "6", "120", "MARIANA", "bf16"} +
                 empties(5)));
}

// ---------------------------------------------------------------------------------------------------------------
// SweepSummary

// Configuration 0 (tile_n 128): "net" L0 (2x3x4 = 24 MACs, count 1) and L1 (4x5x6 = 120 MACs, count 3), both ok;
// "other" o0 failed. Configuration 1 (tile_n 512): "net" L0 ok, L1 missing.
SweepPlan summary_plan() {
  SweepPlan plan;
  plan.name = "sum";
  plan.spec_path = "sum.toml";
  plan.swept = {"tile_n"};
  const Gemm l0{"L0", 2, 3, 4, 1}, l1{"L1", 4, 5, 6, 3}, o0{"o0", 8, 8, 8, 1};
  const std::vector<Param> c0 = {{"gen", "MARIANA"}, {"tile_n", 128}}, c1 = {{"gen", "MARIANA"}, {"tile_n", 512}};
  plan.points = {planned("a", 0, 0, "net", 0, l0, c0), planned("b", 1, 0, "net", 1, l1, c0),
                 planned("c", 2, 0, "other", 0, o0, c0), planned("d", 3, 1, "net", 0, l0, c1),
                 planned("e", 4, 1, "net", 1, l1, c1)};
  return plan;
}

json ok(double cycles, double time_ns, double utilisation) {
  return {{"status", "ok"}, {"cycles", cycles}, {"time_ns", time_ns}, {"utilisation", utilisation}, {"wall_s", 0.1}};
}

Records summary_records() {
  return {ok(100, 50, 0.5), ok(200, 80, 0.25), failed_record("boom", 1, 0.1), ok(90, 45, 0.5), std::nullopt};
}

TEST(SweepSummary, CountsAndIncompleteNetworks) {
  const json s = summary(summary_plan(), summary_records());
  EXPECT_EQ(s["name"], "sum");
  EXPECT_EQ(s["spec"], "sum.toml");
  EXPECT_EQ(s["points"], 5);
  EXPECT_EQ(s["ok"], 3);
  EXPECT_EQ(s["failed"], 1);
  EXPECT_EQ(s["missing"], 1);
  EXPECT_EQ(s["swept"], json::array({"tile_n"}));
  const json& n = s["networks"];
  ASSERT_EQ(n.size(), 3u);
  // (0, net), (0, other), (1, net)
  EXPECT_EQ(n[0]["configuration"], 0);
  EXPECT_EQ(n[0]["workload"], "net");
  EXPECT_EQ(n[0]["params"], (json{{"tile_n", 128}}));  // the swept parameters only
  EXPECT_EQ(n[0]["points_ok"], 2);
  EXPECT_EQ(n[0]["points_failed"], 0);
  EXPECT_EQ(n[0]["points_missing"], 0);
  EXPECT_TRUE(n[0].contains("cycles"));

  EXPECT_EQ(n[1]["configuration"], 0);
  EXPECT_EQ(n[1]["workload"], "other");
  EXPECT_EQ(n[1]["points_ok"], 0);
  EXPECT_EQ(n[1]["points_failed"], 1);
  EXPECT_EQ(n[1]["points_missing"], 0);

  EXPECT_EQ(n[2]["configuration"], 1);
  EXPECT_EQ(n[2]["workload"], "net");
  EXPECT_EQ(n[2]["params"], (json{{"tile_n", 512}}));
  EXPECT_EQ(n[2]["points_ok"], 1);
  EXPECT_EQ(n[2]["points_failed"], 0);
  EXPECT_EQ(n[2]["points_missing"], 1);
  // An incomplete network has no totals at all (partial sums would understate it).
  for (const char* total : {"cycles", "time_ns", "macs", "utilisation", "tflops"}) {
    EXPECT_FALSE(n[1].contains(total)) << total;
    EXPECT_FALSE(n[2].contains(total)) << total;
  }
}

TEST(SweepSummary, CyclesTimeAndUtilisationAreCountWeighted) {
  const json n = summary(summary_plan(), summary_records())["networks"][0];
  // cycles = 1 * 100 + 3 * 200 = 700; time_ns = 1 * 50 + 3 * 80 = 290;
  // utilisation = (1 * 100 * 0.5 + 3 * 200 * 0.25) / 700 = (50 + 150) / 700 = 2/7.
  EXPECT_DOUBLE_EQ(n["cycles"].get<double>(), 700.0);
  EXPECT_DOUBLE_EQ(n["time_ns"].get<double>(), 290.0);
  EXPECT_NEAR(n["utilisation"].get<double>(), 2.0 / 7.0, 1e-15);
}

// Each run counted once: with workload.h's macs() (which includes the count) summed count times, as results.cpp
// did until commit 98f2482, this would be 24 + 3 * 360 = 1104 MACs and TFLOPS 2.875x too high.
TEST(SweepSummary, MacsAndTflopsCountEachRunOnce) {
  const json n = summary(summary_plan(), summary_records())["networks"][0];
  // macs = 1 * (2*3*4) + 3 * (4*5*6) = 24 + 360 = 384.
  EXPECT_DOUBLE_EQ(n["macs"].get<double>(), 384.0);
  // TFLOPS = 2 * sum(count * macs) / sum(count * time_ns) / 1e3 = 2 * 384 / 290 / 1000 = 0.002648275862...
  EXPECT_NEAR(n["tflops"].get<double>(), 768.0 / 290.0 / 1000.0, 1e-15);
}

TEST(SweepSummary, OneLayerNetworkTflops) {
  // count 1: 2 * 24 = 48 flops in 50 ns = 0.96e9 flop/s = 0.00096 TFLOPS.
  SweepPlan plan;
  plan.points = {planned("a", 0, 0, "w", 0, Gemm{"x", 2, 3, 4, 1}, {})};
  const json n = summary(plan, {ok(100, 50, 0.5)})["networks"][0];
  EXPECT_DOUBLE_EQ(n["macs"].get<double>(), 24.0);
  EXPECT_NEAR(n["tflops"].get<double>(), 0.00096, 1e-15);
  EXPECT_DOUBLE_EQ(n["utilisation"].get<double>(), 0.5);
}

// ---------------------------------------------------------------------------------------------------------------
// SweepRecords

TEST(SweepRecords, Paths) {
  EXPECT_EQ(points_dir("out"), "out/points");
  EXPECT_EQ(record_path("out", "0123456789abcdef"), "out/points/0123456789abcdef.json");
}

TEST(SweepRecords, WriteThenReadRoundTrip) {
  TempDir dir("roundtrip");
  const std::string out = dir.path.string();
  fs::create_directories(points_dir(out));
  const json record = {{"status", "ok"}, {"cycles", 1234}, {"utilisation", 0.375}, {"stall_cycles", {{"x", 1}}},
                       {"name", "a \"quoted\"\nname"}};
  EXPECT_EQ(write_record(out, "00d5e25a18c2cafd", record), "");
  EXPECT_TRUE(fs::exists(record_path(out, "00d5e25a18c2cafd")));
  const std::optional<json> back = read_record(out, "00d5e25a18c2cafd");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, record);
  // A failed record too.
  const json failed = failed_record("it broke", 2, 0.5);
  EXPECT_EQ(write_record(out, "k2", failed), "");
  EXPECT_EQ(read_record(out, "k2"), std::optional<json>(failed));
  EXPECT_EQ(entries_of(points_dir(out)), (std::vector<std::string>{"00d5e25a18c2cafd.json", "k2.json"}));
}

TEST(SweepRecords, UnreadableRecordsAreNone) {
  TempDir dir("unreadable");
  const std::string out = dir.path.string();
  fs::create_directories(points_dir(out));
  EXPECT_EQ(read_record(out, "absent"), std::nullopt);
  write_file(record_path(out, "truncated"), "{\"status\": \"ok\", \"cycles\": 12");
  EXPECT_EQ(read_record(out, "truncated"), std::nullopt);
  write_file(record_path(out, "array"), "[1, 2]\n");
  EXPECT_EQ(read_record(out, "array"), std::nullopt);
  write_file(record_path(out, "number"), "42\n");
  EXPECT_EQ(read_record(out, "number"), std::nullopt);
  write_file(record_path(out, "empty"), "");
  EXPECT_EQ(read_record(out, "empty"), std::nullopt);
  write_file(record_path(out, "nostatus"), "{\"cycles\": 12}\n");
  EXPECT_EQ(read_record(out, "nostatus"), std::nullopt);
  // And no points directory at all.
  EXPECT_EQ(read_record((dir.path / "nowhere").string(), "absent"), std::nullopt);
}

TEST(SweepRecords, WriteRecordWithoutThePointsDirectoryReportsTheError) {
  TempDir dir("nodir");
  const std::string error = write_record(dir.path.string(), "k", json{{"status", "ok"}});
  EXPECT_NE(error, "");
  EXPECT_NE(error.find("cannot create"), std::string::npos) << error;
}

TEST(SweepRecords, WriteTextAtomicallyReplacesAndLeavesNoTemporary) {
  TempDir dir("atomic");
  const fs::path path = dir.path / "results.csv";
  EXPECT_EQ(write_text_atomically(path.string(), "first\n"), "");
  EXPECT_EQ(read_file(path), "first\n");
  EXPECT_EQ(entries_of(dir.path), (std::vector<std::string>{"results.csv"}));
  // Replaces an existing file (a shorter text: nothing of the old one is left).
  EXPECT_EQ(write_text_atomically(path.string(), "2\n"), "");
  EXPECT_EQ(read_file(path), "2\n");
  EXPECT_EQ(entries_of(dir.path), (std::vector<std::string>{"results.csv"}));
  // An empty text is an empty file.
  EXPECT_EQ(write_text_atomically(path.string(), ""), "");
  EXPECT_EQ(read_file(path), "");
  EXPECT_EQ(entries_of(dir.path), (std::vector<std::string>{"results.csv"}));
  // Into a directory that does not exist: the error, and still nothing left behind.
  EXPECT_NE(write_text_atomically((dir.path / "no" / "x.csv").string(), "x"), "");
  EXPECT_EQ(entries_of(dir.path), (std::vector<std::string>{"results.csv"}));
}

TEST(SweepRecords, OkRecordTakesTheFiguresFromTheStats) {
  const json stats = {{"cycles", 1000},
                      {"simulated_time_ns", 400.5},
                      {"utilisation", 0.25},
                      {"tflops", 1.5},
                      {"peak_tflops", 39.3216},
                      {"macs", 24},
                      {"stall_cycles", {{"sbuf_read", 10}}},
                      {"array_accounting", {{"busy", 0.25}}},
                      {"instructions",
                       {{"total", 9},
                        {"by_opcode",
                         {{"Matmul", {{"instructions_retired", 4}, {"cycles", 99}}}, {"Nop", json::object()}}}}},
                      {"scalesim", {{"folds", 2}}},
                      {"unrelated", 1}};
  EXPECT_EQ(ok_record(stats, 0.75), (json{{"status", "ok"},
                                          {"wall_s", 0.75},
                                          {"cycles", 1000},
                                          {"time_ns", 400.5},
                                          {"utilisation", 0.25},
                                          {"tflops", 1.5},
                                          {"peak_tflops", 39.3216},
                                          {"macs", 24},
                                          {"stall_cycles", {{"sbuf_read", 10}}},
                                          {"array_accounting", {{"busy", 0.25}}},
                                          {"instructions", {{"Matmul", 4}, {"Nop", 0}}},
                                          {"scalesim", {{"folds", 2}}}}));
  EXPECT_EQ(failed_record("e", 7, 1.5),
            (json{{"status", "failed"}, {"error", "e"}, {"exit_status", 7}, {"wall_s", 1.5}}));
}

// A Slurm task's chunk list: a missing one says so, one that is a directory says that (it was a JSON parse error of
// an empty text), a present one gives its chunk.
TEST(SweepChunks, ReadChunkNamesAFileItCannotUse) {
  TempDir dir("chunks");
  const std::string out = dir.path.string(), path = out + "/slurm/chunks.json";
  const auto error_of = [&](std::size_t chunk) -> std::string {
    try {
      read_chunk(out, chunk);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "<no error>";
  };
  EXPECT_EQ(error_of(0), path + ": no such file (was the sweep submitted with --backend slurm?)");
  fs::create_directories(path);
  EXPECT_EQ(error_of(0), path + ": is a directory");
  fs::remove(path);
  std::ofstream(path) << "[[0, 1], [2]]";
  EXPECT_EQ(read_chunk(out, 1), (std::vector<std::size_t>{2}));
  EXPECT_EQ(error_of(2), path + ": chunk 2 does not exist (2 chunks)");
}

}  // namespace
}  // namespace pevp::sweep

namespace pevp::sweep {
namespace {

using nlohmann::json;

// The memory system's figures in a record and as mem:* columns, only for points that moved data through device
// memory: 3 MiB read + 1 MiB written is 4194304 bytes, the other figures copied as the stats give them.
TEST(SweepRecords, MemoryFiguresBecomeColumnsWhenAPointUsedDeviceMemory) {
  const json memory = {{"hbm", {{"bytes_read", 3 << 20}, {"bytes_written", 1 << 20}, {"achieved_gbps", 100.5},
                                {"bandwidth_utilisation", 0.25}, {"bandwidth_gbps", 612.5}}},
                       {"arithmetic_intensity", 64.0},
                       {"roofline_tflops", 39.2}};
  const json with = ok_record({{"cycles", 10}, {"memory", memory}}, 0.0);
  EXPECT_EQ(with["memory"], (json{{"hbm_bytes", 4194304.0}, {"hbm_gbps", 100.5}, {"hbm_utilisation", 0.25},
                                  {"intensity", 64.0}, {"roofline_tflops", 39.2}, {"bandwidth_gbps", 612.5}}));
  // The host data path: a memory section without traffic (no roofline) adds nothing.
  const json without = ok_record({{"cycles", 10}, {"memory", {{"hbm", {{"bytes_read", 0}}}}}}, 0.0);
  EXPECT_FALSE(without.contains("memory"));
}

// The energy model's figures in a record, as energy columns, and as a network's totals. Configuration 0's "net" of
// summary_plan(): L0 (count 1) took 50 ns and 1000 pJ, L1 (count 3) 80 ns and 2000 pJ each; 24 and 120 MACs.
TEST(SweepRecords, EnergyFiguresBecomeColumnsAndNetworkTotals) {
  const json energy = {{"total_pj", 1000.0}, {"average_power_w", 20.0}, {"tops_per_w", 0.048}, {"edp_pj_s", 5e-5}};
  const json r = ok_record({{"cycles", 10}, {"energy", energy}}, 0.0);
  EXPECT_EQ(r["energy"], (json{{"energy_pj", 1000.0}, {"power_w", 20.0}, {"tops_per_w", 0.048}, {"edp_pj_s", 5e-5}}));
  EXPECT_FALSE(ok_record({{"cycles", 10}}, 0.0).contains("energy"));

  const auto with_energy = [](json rec, double pj) {
    rec["energy"] = {{"energy_pj", pj}, {"power_w", 0.0}, {"tops_per_w", 0.0}, {"edp_pj_s", 0.0}};
    return rec;
  };
  Records records = summary_records();
  records[0] = with_energy(*records[0], 1000.0);
  records[1] = with_energy(*records[1], 2000.0);
  const json n = summary(summary_plan(), records)["networks"][0];
  // energy = 1 x 1000 + 3 x 2000 = 7000 pJ over time 1 x 50 + 3 x 80 = 290 ns: power = 7000e-12 / 290e-9 =
  // 0.024137... W; TOPS/W = 2 x 384 MACs / 7000 pJ = 0.109714...; EDP = 7000 pJ x 290e-9 s = 2.03e-3 pJ s.
  EXPECT_DOUBLE_EQ(n["energy_pj"].get<double>(), 7000.0);
  EXPECT_NEAR(n["power_w"].get<double>(), 7000e-12 / 290e-9, 1e-15);
  EXPECT_NEAR(n["tops_per_w"].get<double>(), 768.0 / 7000.0, 1e-15);
  EXPECT_NEAR(n["edp_pj_s"].get<double>(), 7000.0 * 290e-9, 1e-15);
  // A network whose points have no energy figure (recorded before the model existed) has no energy totals.
  EXPECT_FALSE(summary(summary_plan(), summary_records())["networks"][0].contains("energy_pj"));

  SweepPlan plan;
  plan.swept = {};
  plan.points = {planned("a", 0, 0, "w", 0, Gemm{"x", 2, 3, 4, 1}, {})};
  const std::string csv = results_csv(plan, {with_energy(ok(100, 50, 0.5), 1234.5)}, false);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find("peak_tflops,energy_pj,power_w,tops_per_w,edp_pj_s"), std::string::npos) << header;
  EXPECT_NE(csv.find(",1234.5,0,0,0"), std::string::npos) << csv;
}


// The spec's [plots] baseline travels in the plan's head (so --collect needs no spec) and into summary.json; a plan
// without one (every plan before it existed) reads as before.
TEST(SweepRecords, TheBaselineTravelsInThePlan) {
  SweepPlan plan = summary_plan();
  EXPECT_FALSE(to_json(plan).contains("baseline"));
  plan.baseline = {{"tile_n", 512}};
  std::ostringstream out;
  write_plan(out, plan);
  EXPECT_EQ(read_plan_text(out.str(), "sweep.json").baseline, (json{{"tile_n", 512}}));
  EXPECT_EQ(plan_from_json(to_json(plan), "sweep.json").baseline, (json{{"tile_n", 512}}));
  const json with_baseline = summary(plan, summary_records());
  EXPECT_EQ(with_baseline["baseline"], (json{{"tile_n", 512}}));
  // net at tile_n 128 took 1 x 50 + 3 x 80 = 290 ns; at 512 (the baseline) L1 is missing, so no speedup anywhere.
  EXPECT_FALSE(with_baseline["networks"][0].contains("speedup"));
  // Complete at 512 (L1 ok: 1 x 45 + 3 x 60 = 225 ns): 128's speedup is 225 / 290, the baseline's own 1.
  Records complete = summary_records();
  complete[4] = ok(120, 60, 0.5);
  const json sped = summary(plan, complete);
  ASSERT_EQ(sped["networks"][0]["workload"], "net");
  EXPECT_DOUBLE_EQ(sped["networks"][0]["speedup"].get<double>(), 225.0 / 290.0);
  EXPECT_DOUBLE_EQ(sped["networks"][2]["speedup"].get<double>(), 1.0);
  EXPECT_FALSE(sped["networks"][0].contains("peak_tflops"));  // the records have none
  // The network's peak, weighted by time: L0 50 ns at 40 TFLOPS, L1 3 x 80 ns at 10: (2000 + 2400) / 290.
  complete[0]->operator[]("peak_tflops") = 40.0;
  complete[1]->operator[]("peak_tflops") = 10.0;
  EXPECT_DOUBLE_EQ(summary(plan, complete)["networks"][0]["peak_tflops"].get<double>(), 4400.0 / 290.0);
  EXPECT_FALSE(sped["networks"][1].contains("speedup"));  // "other" at 128 has a failed point
  json bad = to_json(plan);
  bad["baseline"] = 512;
  EXPECT_EQ(spec_error_of([&] { plan_from_json(bad, "sweep.json"); }),
            "sweep.json: a malformed sweep plan: \"baseline\" is no object");
}

// fp8 without double_row contracts one row per partition: the bf16 rate. The note appears for exactly the
// configurations that ran so: fp8 (any fp8 name) without double_row; not for fp8 with it, nor for bf16 or MX.
TEST(SweepSummary, Fp8WithoutDoubleRowIsNotedWithTheKeyToSet) {
  EXPECT_TRUE(runs_fp8_at_bf16_rate("fp8_e4m3fn", false));
  EXPECT_TRUE(runs_fp8_at_bf16_rate("FP8_EXP4", false));
  EXPECT_FALSE(runs_fp8_at_bf16_rate("fp8_e4m3fn", true));
  EXPECT_FALSE(runs_fp8_at_bf16_rate("bf16", false));
  EXPECT_FALSE(runs_fp8_at_bf16_rate("mxfp8_e4m3", false));

  // Four configurations: bf16; fp8 without double_row (twice: two arrays); fp8 with it.
  SweepPlan plan;
  plan.swept = {"geometry.pe_rows", "dtype", "double_row"};
  const Gemm g{"g", 64, 64, 64, 1};
  const auto config = [&](std::size_t c, int rows, const char* dtype, bool dr) {
    PlannedPoint p = planned("k" + std::to_string(c), c, c, "net", 0, g,
                             {{"geometry.pe_rows", rows}, {"dtype", dtype}, {"double_row", dr}});
    p.dtype = dtype;
    return p;
  };
  plan.points = {config(0, 64, "bf16", false), config(1, 64, "fp8_e4m3fn", false), config(2, 128, "fp8_e4m3fn", false),
                 config(3, 128, "fp8_e4m3fn", true)};
  const std::vector<std::string> notes = dtype_rate_notes(plan);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "dtype fp8_e4m3fn on MARIANA without double_row runs at the bf16 rate (one contraction row per partition: "
            "the same cycles and peak_tflops as bf16) in geometry.pe_rows=64, dtype=fp8_e4m3fn, double_row=false; "
            "geometry.pe_rows=128, dtype=fp8_e4m3fn, double_row=false: set double_row = true ([set] or [grid]) to "
            "contract two fp8 rows per partition, twice the bf16 rate");
  EXPECT_EQ(summary(plan, {})["notes"], json::array({notes[0]}));
  // With double_row on every fp8 configuration: no note.
  plan.points = {config(0, 64, "bf16", false), config(3, 128, "fp8_e4m3fn", true)};
  EXPECT_TRUE(dtype_rate_notes(plan).empty());
  EXPECT_EQ(summary(plan, {})["notes"], json::array());
  // MAVERICK has no double_row to set: the note says so; every configuration is named as such.
  PlannedPoint m = config(0, 128, "fp8_e5m2", false);
  m.gen = "MAVERICK";
  plan.points = {m};
  ASSERT_EQ(dtype_rate_notes(plan).size(), 1u);
  EXPECT_NE(dtype_rate_notes(plan)[0].find("in every configuration: MAVERICK has no fp8 double_row"),
            std::string::npos)
      << dtype_rate_notes(plan)[0];
}

}  // namespace
}  // namespace pevp::sweep
