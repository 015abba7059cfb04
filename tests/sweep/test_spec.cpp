// The sweep spec of `pe-vp sweep` (pevp/sweep/spec.h): TOML and JSON parse to one SweepSpec, every rejected spec
// with its exact message, the expansion into points (grid product with the last key fastest, zip rows slowest,
// kMaxPoints) and the `pe-vp gemm` arguments of a point.
//
// Every expectation here is derived by hand (in the comments where it takes a step), not by running the code under
// test.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pevp/sweep/spec.h"
#include "pevp/sweep/workload.h"

namespace pevp::sweep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------------------------
// Helpers

// A base directory no test writes to: parse_spec only uses it for topology paths.
const char* const kNoBase = "/nonexistent-pevp-sweep-base";

SweepSpec toml_spec(const std::string& text) { return parse_spec(text, SpecFormat::Toml, "s.toml", kNoBase); }
SweepSpec json_spec(const std::string& text) { return parse_spec(text, SpecFormat::Json, "s.json", kNoBase); }

// The message of the SpecError `action` throws (or a marker that none, or another exception, was thrown).
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

std::string toml_error(const std::string& text) {
  return spec_error_of([&] { toml_spec(text); });
}
std::string json_error(const std::string& text) {
  return spec_error_of([&] { json_spec(text); });
}

// One valid workload, to put in front of specs that test something else.
const std::string kWorkload = "[[workload]]\ngemms = [{ m = 1, k = 2, n = 3 }]\n";

std::string describe(const Gemm& g) {
  return g.name + " m=" + std::to_string(g.m) + " k=" + std::to_string(g.k) + " n=" + std::to_string(g.n) +
         " count=" + std::to_string(g.count);
}

std::vector<std::string> describe_all(const Network& network) {
  std::vector<std::string> lines{"network " + network.name};
  for (const Gemm& g : network.layers) lines.push_back(describe(g));
  return lines;
}

// "name=value" per parameter, the value as JSON text (so 128 and "128" differ).
std::vector<std::string> describe_params(const std::vector<Param>& params) {
  std::vector<std::string> lines;
  for (const Param& p : params) lines.push_back(p.name + "=" + p.value.dump());
  return lines;
}

std::vector<std::string> describe_lists(const std::vector<std::pair<std::string, std::vector<json>>>& lists) {
  std::vector<std::string> lines;
  for (const auto& [name, values] : lists) lines.push_back(name + "=" + json(values).dump());
  return lines;
}

// Everything of a spec but its source, one comparable value.
std::vector<std::string> describe_spec(const SweepSpec& spec) {
  std::vector<std::string> lines{"name " + spec.name};
  for (const Network& w : spec.workloads)
    for (const std::string& line : describe_all(w)) lines.push_back(line);
  for (const std::string& line : describe_params(spec.fixed)) lines.push_back("set " + line);
  for (const std::string& line : describe_lists(spec.grid)) lines.push_back("grid " + line);
  for (const std::string& line : describe_lists(spec.zip)) lines.push_back("zip " + line);
  return lines;
}

std::vector<std::string> param_names(const std::vector<Param>& params) {
  std::vector<std::string> names;
  for (const Param& p : params) names.push_back(p.name);
  return names;
}

std::vector<std::string> list_names(const std::vector<std::pair<std::string, std::vector<json>>>& lists) {
  std::vector<std::string> names;
  for (const auto& [name, values] : lists) names.push_back(name);
  return names;
}

// A fresh directory under the system's temporary directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("pevp_sweep_spec_" + tag + "_" + std::to_string(::getpid()))) {
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

// Changes the working directory for the rest of the scope.
struct WorkingDirectory {
  fs::path saved = fs::current_path();
  explicit WorkingDirectory(const fs::path& dir) { fs::current_path(dir); }
  ~WorkingDirectory() {
    std::error_code ignored;
    fs::current_path(saved, ignored);
  }
  WorkingDirectory(const WorkingDirectory&) = delete;
  WorkingDirectory& operator=(const WorkingDirectory&) = delete;
};

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  ASSERT_TRUE(file.good()) << path;
}

// The repository's root (from CMake); empty when it is not there any more.
fs::path repository_root() {
  const fs::path root(PEVP_SOURCE_DIR);
  return fs::exists(root / "platform/examples/sweep") ? root : fs::path();
}

// ---------------------------------------------------------------------------------------------------------------
// SpecParse

// One spec in both formats. Keys of set / grid / zip are written in alphabetical order here, so this test holds
// whatever order a parser keeps (the order itself is SpecParse.KeepsTheSpecsKeyOrder). List values are not in
// sorted order (tile_n = [512, 128]) so the order of values is checked.
const std::string kEquivalentToml = R"(
name = "equivalent"

[[workload]]
name = "mlp"
gemms = [
  { name = "up", m = 128, k = 64, n = 256 },
  { name = "down", m = 64, k = 256, n = 256, count = 4 },
]

[[workload]]
gemms = [{ m = 8, k = 16, n = 32 }]

[set]
dtype = "bf16"
gen = "MARIANA"
"tensor_engine.clock_ghz" = 2.8

[grid]
"geometry.pe_rows" = [64, 128]
tile_n = [512, 128]

[zip]
dependency_check = [true, false]
fifo_size = ["full", "single"]
)";

const std::string kEquivalentJson = R"({
  "name": "equivalent",
  "workload": [
    {"name": "mlp", "gemms": [{"name": "up", "m": 128, "k": 64, "n": 256},
                              {"name": "down", "m": 64, "k": 256, "n": 256, "count": 4}]},
    {"gemms": [{"m": 8, "k": 16, "n": 32}]}
  ],
  "set": {"dtype": "bf16", "gen": "MARIANA", "tensor_engine.clock_ghz": 2.8},
  "grid": {"geometry.pe_rows": [64, 128], "tile_n": [512, 128]},
  "zip": {"dependency_check": [true, false], "fifo_size": ["full", "single"]}
})";

TEST(SpecParse, TomlAndJsonGiveTheSameSpec) {
  const SweepSpec from_toml = toml_spec(kEquivalentToml);
  const SweepSpec from_json = json_spec(kEquivalentJson);
  const std::vector<std::string> expected = {
      "name equivalent",
      "network mlp",
      "up m=128 k=64 n=256 count=1",
      "down m=64 k=256 n=256 count=4",
      "network gemms",  // an unnamed gemms workload is "gemms", its unnamed GEMMs gemm<index>
      "gemm0 m=8 k=16 n=32 count=1",
      "set dtype=\"bf16\"",
      "set gen=\"MARIANA\"",
      "set tensor_engine.clock_ghz=2.8",
      "grid geometry.pe_rows=[64,128]",
      "grid tile_n=[512,128]",
      "zip dependency_check=[true,false]",
      "zip fifo_size=[\"full\",\"single\"]",
  };
  EXPECT_EQ(describe_spec(from_toml), expected);
  EXPECT_EQ(describe_spec(from_json), expected);
  EXPECT_EQ(from_toml.source, "s.toml");
  EXPECT_EQ(from_json.source, "s.json");
  const std::vector<std::string> swept = {"geometry.pe_rows", "tile_n", "dependency_check", "fifo_size"};
  EXPECT_EQ(from_toml.swept(), swept);
  EXPECT_EQ(from_json.swept(), swept);
  // The kinds survive: 2.8 is a float in both, 64 an integer, true a boolean.
  EXPECT_TRUE(from_toml.fixed[2].value.is_number_float());
  EXPECT_TRUE(from_json.fixed[2].value.is_number_float());
  EXPECT_TRUE(from_toml.grid[0].second[0].is_number_integer());
  EXPECT_TRUE(from_json.grid[0].second[0].is_number_integer());
  EXPECT_TRUE(from_toml.zip[0].second[1].is_boolean());
  EXPECT_TRUE(from_json.zip[0].second[1].is_boolean());
}

// spec.h: the grid is "the product, the last key varying fastest" and swept() is "the grid's, then the zip's, in the
// spec's order" -- in both formats, although toml++'s tables and nlohmann::json's objects sort their keys.
TEST(SpecParse, KeepsTheSpecsKeyOrder) {
  const std::string toml = kWorkload + R"(
[set]
mode = "both"
gen = "MARIANA"

[grid]
tile_n = [128, 512]
"geometry.pe_rows" = [64, 128]

[zip]
"timing.sbuf_read_bytes_per_cycle" = [64, 128]
"geometry.pe_cols" = [32, 64]
)";
  const std::string json_text = R"({"workload": [{"gemms": [{"m": 1, "k": 2, "n": 3}]}],
    "set": {"mode": "both", "gen": "MARIANA"},
    "grid": {"tile_n": [128, 512], "geometry.pe_rows": [64, 128]},
    "zip": {"timing.sbuf_read_bytes_per_cycle": [64, 128], "geometry.pe_cols": [32, 64]}})";
  for (const SweepSpec& spec : {toml_spec(toml), json_spec(json_text)}) {
    SCOPED_TRACE(spec.source);
    EXPECT_EQ(param_names(spec.fixed), (std::vector<std::string>{"mode", "gen"}));
    EXPECT_EQ(list_names(spec.grid), (std::vector<std::string>{"tile_n", "geometry.pe_rows"}));
    EXPECT_EQ(list_names(spec.zip), (std::vector<std::string>{"timing.sbuf_read_bytes_per_cycle", "geometry.pe_cols"}));
    EXPECT_EQ(spec.swept(), (std::vector<std::string>{"tile_n", "geometry.pe_rows", "timing.sbuf_read_bytes_per_cycle",
                                                      "geometry.pe_cols"}));
  }
}

TEST(SpecParse, DefaultsAndOneWorkloadTable) {
  // A single [workload] table (not an array of tables) is one workload; without name = the spec is named after
  // its file's stem; no set / grid / zip is one configuration of nothing.
  const SweepSpec spec = parse_spec("[workload]\ngemms = [{ m = 4, k = 5, n = 6 }]\n", SpecFormat::Toml,
                                    "some/dir/my-sweep.toml", kNoBase);
  EXPECT_EQ(spec.name, "my-sweep");
  EXPECT_EQ(spec.source, "some/dir/my-sweep.toml");
  ASSERT_EQ(spec.workloads.size(), 1u);
  EXPECT_EQ(describe_all(spec.workloads[0]), (std::vector<std::string>{"network gemms", "gemm0 m=4 k=5 n=6 count=1"}));
  EXPECT_TRUE(spec.fixed.empty());
  EXPECT_TRUE(spec.grid.empty());
  EXPECT_TRUE(spec.zip.empty());
  EXPECT_TRUE(spec.swept().empty());
}

TEST(SpecParse, BuiltInNetworkWorkloadAndItsName) {
  // The built-in network is named with its options spelled out (workload.h); name = overrides it.
  const SweepSpec spec = toml_spec(R"(
[[workload]]
network = "resnet50"
[[workload]]
network = "bert_base:seq=128"
name = "bert"
)");
  ASSERT_EQ(spec.workloads.size(), 2u);
  EXPECT_EQ(spec.workloads[0].name, "resnet50:batch=1");
  EXPECT_EQ(spec.workloads[0].layers.size(), 54u);  // 53 convolutions and the classifier
  EXPECT_EQ(spec.workloads[1].name, "bert");
  EXPECT_EQ(spec.workloads[1].layers.size(), builtin_network("bert_base:seq=128").layers.size());
}

// A SCALE-Sim conv topology next to the spec. Conv1: 10x10 ifmap, 3x3 filter, 4 channels, 8 filters, stride 1:
// ofmap 8x8, so m = 8 filters, k = 3*3*4 = 36, n = 64. The decoy in the working directory (same file name):
// Decoy: 6x6, 1x1, 2 channels, 2 filters, stride 1: m = 2, k = 2, n = 36.
const std::string kTopology = "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
                              "Num Filter, Strides,\nConv1, 10, 10, 3, 3, 4, 8, 1,\n";
const std::string kDecoyTopology = "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
                                   "Num Filter, Strides,\nDecoy, 6, 6, 1, 1, 2, 2, 1,\n";

TEST(SpecParse, ScalesimPathIsRelativeToTheSpecsFolder) {
  TempDir dir("relative");
  fs::create_directories(dir.path / "specs");
  write_file(dir.path / "specs" / "topo.csv", kTopology);
  write_file(dir.path / "topo.csv", kDecoyTopology);
  write_file(dir.path / "specs" / "s.toml", "[[workload]]\nscalesim_conv = \"topo.csv\"\n");
  write_file(dir.path / "specs" / "g.json", R"({"workload": {"scalesim_gemm": "gemm.csv"}})");
  // A GEMM topology "L, M, N, K": the row "G1, 100, 20, 30," is Gemm{m = N = 20, k = K = 30, n = M = 100}.
  write_file(dir.path / "specs" / "gemm.csv", "Layer, M, N, K,\nG1, 100, 20, 30,\n");
  const WorkingDirectory cwd(dir.path);

  // Relative to the working directory, the spec is specs/s.toml: its topology is specs/topo.csv, not ./topo.csv.
  const SweepSpec relative = read_spec("specs/s.toml");
  ASSERT_EQ(relative.workloads.size(), 1u);
  EXPECT_EQ(describe_all(relative.workloads[0]), (std::vector<std::string>{"network topo", "Conv1 m=8 k=36 n=64 count=1"}));
  EXPECT_EQ(relative.name, "s");

  const SweepSpec absolute = read_spec((dir.path / "specs" / "s.toml").string());
  EXPECT_EQ(describe_all(absolute.workloads[0]), describe_all(relative.workloads[0]));

  const SweepSpec gemm = read_spec("specs/g.json");
  EXPECT_EQ(describe_all(gemm.workloads[0]), (std::vector<std::string>{"network gemm", "G1 m=20 k=30 n=100 count=1"}));

  // parse_spec: base_dir, not the working directory. An absolute path is taken as it is.
  const SweepSpec based = parse_spec("[[workload]]\nscalesim_conv = \"topo.csv\"\n", SpecFormat::Toml, "x.toml",
                                     (dir.path / "specs").string());
  EXPECT_EQ(describe_all(based.workloads[0])[1], "Conv1 m=8 k=36 n=64 count=1");
  const SweepSpec absolute_path =
      parse_spec("[[workload]]\nscalesim_conv = \"" + (dir.path / "topo.csv").string() + "\"\n", SpecFormat::Toml,
                 "x.toml", (dir.path / "specs").string());
  EXPECT_EQ(describe_all(absolute_path.workloads[0])[1], "Decoy m=2 k=2 n=36 count=1");
}

TEST(SpecParse, TheExamplesParse) {
  const fs::path root = repository_root();
  if (root.empty()) GTEST_SKIP() << "the repository is not at " << PEVP_SOURCE_DIR;
  // gemm_csr_knobs.toml: 2 x 2 grid, 2 GEMMs: 8 points, as its comment says.
  const SweepSpec knobs = read_spec((root / "platform/examples/sweep/gemm_csr_knobs.toml").string());
  EXPECT_EQ(knobs.name, "gemm-csr-knobs");
  ASSERT_EQ(knobs.workloads.size(), 1u);
  EXPECT_EQ(describe_all(knobs.workloads[0]),
            (std::vector<std::string>{"network gemms", "square m=512 k=512 n=512 count=1",
                                      "tall m=128 k=1024 n=2048 count=1"}));
  EXPECT_EQ(expand(knobs).size(), 8u);
  // resnet50_array_size.toml: tile_n 2 values x 3 zip rows = 6 configurations, 54 layers each.
  const SweepSpec resnet = read_spec((root / "platform/examples/sweep/resnet50_array_size.toml").string());
  EXPECT_EQ(resnet.name, "resnet50-array-size");
  EXPECT_EQ(describe_params(resnet.fixed), (std::vector<std::string>{"mode=\"timing\""}));
  EXPECT_EQ(expand(resnet).size(), 6u * 54u);
  // llama2_7b_block_memory.toml: 3 HBM bandwidths x the block's 9 distinct GEMMs, through DMA.
  const SweepSpec llama = read_spec((root / "platform/examples/sweep/llama2_7b_block_memory.toml").string());
  EXPECT_EQ(llama.name, "llama2-7b-block-memory");
  EXPECT_EQ(describe_params(llama.fixed), (std::vector<std::string>{"mode=\"timing\"", "data_path=\"dma\""}));
  EXPECT_EQ(expand(llama).size(), 3u * 9u);
  // array_dtype_compare.toml: a zip of 9 rows (3 arrays x bf16, fp8 with double_row, fp32) over ResNet-50's 54
  // layers and the Llama-2-7B block's 9 GEMMs; its baseline the 128 x 128 array in bf16.
  const SweepSpec compare = read_spec((root / "platform/examples/sweep/array_dtype_compare.toml").string());
  EXPECT_EQ(compare.name, "array-dtype-compare");
  EXPECT_EQ(expand(compare).size(), 9u * (54u + 9u));
  EXPECT_EQ(describe_params(compare.baseline),
            (std::vector<std::string>{"geometry.pe_rows=128", "dtype=\"bf16\""}));
}

// ---------------------------------------------------------------------------------------------------------------
// [plots] baseline: one configuration by its swept values.

const std::string kBaselineSweep = kWorkload +
                                   "[grid]\ntile_n = [128, 512]\ndtype = [\"bf16\", \"fp32\"]\n"
                                   "[zip]\n\"geometry.pe_rows\" = [64, 128]\n\"geometry.pe_cols\" = [64, 128]\n";

TEST(SpecPlots, BaselineNamesEveryGridKeyAndOneZipRow) {
  // tile_n and dtype have two values each: both named; pe_rows = 128 picks the zip's second row alone.
  const SweepSpec spec =
      toml_spec(kBaselineSweep + "[plots]\nbaseline = { tile_n = 512, dtype = \"bf16\", \"geometry.pe_rows\" = 128 }\n");
  EXPECT_EQ(describe_params(spec.baseline),
            (std::vector<std::string>{"tile_n=512", "dtype=\"bf16\"", "geometry.pe_rows=128"}));
  // No [plots]: no baseline (the plots take the first configuration and say so).
  EXPECT_TRUE(toml_spec(kBaselineSweep).baseline.empty());
  // JSON spells it the same.
  const SweepSpec j = json_spec(R"({"workload": {"gemms": [{"m": 1, "k": 2, "n": 3}]}, "grid": {"tile_n": [1, 2]},
                                    "plots": {"baseline": {"tile_n": 2}}})");
  EXPECT_EQ(describe_params(j.baseline), (std::vector<std::string>{"tile_n=2"}));
}

TEST(SpecPlots, ABadBaselineIsRefusedNamingTheKeyAndItsValues) {
  const std::string plots = "[plots]\nbaseline = ";
  EXPECT_EQ(toml_error(kBaselineSweep + plots + "{ tile_n = 512, dtype = \"int4\", \"geometry.pe_rows\" = 64 }\n"),
            "s.toml: plots.baseline.dtype = \"int4\": not a value the sweep takes (dtype: \"bf16\", \"fp32\")");
  EXPECT_EQ(toml_error(kBaselineSweep + plots + "{ tile_n = 256, dtype = \"bf16\" }\n"),
            "s.toml: plots.baseline.tile_n = 256: not a value the sweep takes (tile_n: 128, 512)");
  EXPECT_EQ(toml_error(kBaselineSweep + plots + "{ double_row = true }\n"),
            "s.toml: plots.baseline.double_row: not a swept parameter (swept: tile_n, dtype, geometry.pe_rows, "
            "geometry.pe_cols)");
  // A grid key left out picks both of its values.
  EXPECT_EQ(toml_error(kBaselineSweep + plots + "{ tile_n = 128, \"geometry.pe_rows\" = 64 }\n"),
            "s.toml: plots.baseline: dtype is not named, so it picks 2 configurations (give one of its values: "
            "\"bf16\", \"fp32\")");
  // The zip left out picks both of its rows; zipped values that are no row pick none.
  EXPECT_EQ(toml_error(kBaselineSweep + plots + "{ tile_n = 128, dtype = \"bf16\" }\n"),
            "s.toml: plots.baseline: picks 2 zip rows: name a zipped key (geometry.pe_rows: 64, 128; "
            "geometry.pe_cols: 64, 128)");
  EXPECT_EQ(toml_error(kBaselineSweep + plots +
                       "{ tile_n = 128, dtype = \"bf16\", \"geometry.pe_rows\" = 64, \"geometry.pe_cols\" = 128 }\n"),
            "s.toml: plots.baseline: no zip row has these values together (zipped lists vary together; the zip's "
            "lists: geometry.pe_rows: 64, 128; geometry.pe_cols: 64, 128)");
  EXPECT_EQ(toml_error(kBaselineSweep + plots + "[128]\n"),
            "s.toml: plots.baseline: expected a table of swept parameters and their values, e.g. { dtype = \"bf16\" }, "
            "got a list");
  EXPECT_EQ(toml_error(kBaselineSweep + "[plots]\nbase = { tile_n = 128 }\n"),
            "s.toml: plots.base: unknown key (plots's keys: baseline)");
  EXPECT_EQ(toml_error(kWorkload + plots + "{ tile_n = 128 }\n"),
            "s.toml: plots.baseline: nothing is swept ([grid] or [zip]): there is one configuration");
}

// ---------------------------------------------------------------------------------------------------------------
// SpecErrors: every rejected spec, with its message.

TEST(SpecErrors, UnknownTopLevelKey) {
  EXPECT_EQ(toml_error("grids = { tile_n = [1] }\n" + kWorkload),
            "s.toml: grids: unknown key (the spec's keys: name, workload, set, grid, zip, plots)");
  EXPECT_EQ(json_error(R"({"workloads": []})"),
            "s.json: workloads: unknown key (the spec's keys: name, workload, set, grid, zip, plots)");
}

TEST(SpecErrors, NameNotAString) {
  EXPECT_EQ(toml_error("name = 3\n" + kWorkload), "s.toml: name: expected a string, got a number");
}

TEST(SpecErrors, UnknownKeyInAWorkload) {
  EXPECT_EQ(toml_error("[[workload]]\nnetwork = \"resnet50\"\nbatches = 2\n"),
            "s.toml: workload[0].batches: unknown key (workload[0]'s keys: name, network, scalesim_conv, "
            "scalesim_gemm, gemms, onnx, batch)");
}

// `batch` belongs to an onnx workload; beside a built-in network it would be silently ignored.
TEST(SpecErrors, BatchBesideAnotherSource) {
  EXPECT_EQ(toml_error("[[workload]]\nnetwork = \"resnet50\"\nbatch = 2\n"),
            "s.toml: workload[0].batch: only an onnx workload takes it (a built-in network takes its batch in its "
            "spec: network = \"resnet50:batch=4\")");
}

TEST(SpecErrors, WorkloadWithNoSource) {
  EXPECT_EQ(toml_error("[[workload]]\nname = \"nothing\"\n"),
            "s.toml: workload[0]: give exactly one of network, scalesim_conv, scalesim_gemm, gemms, onnx (0 given)");
}

TEST(SpecErrors, WorkloadWithTwoSources) {
  EXPECT_EQ(toml_error(kWorkload + "[[workload]]\nnetwork = \"resnet50\"\ngemms = [{ m = 1, k = 1, n = 1 }]\n"),
            "s.toml: workload[1]: give exactly one of network, scalesim_conv, scalesim_gemm, gemms, onnx (2 given)");
}

TEST(SpecErrors, MissingWorkload) {
  EXPECT_EQ(toml_error("name = \"x\"\n[set]\nmode = \"timing\"\n"),
            "s.toml: workload: missing (one or more [[workload]] tables: network, scalesim_conv, scalesim_gemm, "
            "gemms or onnx)");
  EXPECT_EQ(json_error("{}"),
            "s.json: workload: missing (one or more [[workload]] tables: network, scalesim_conv, scalesim_gemm, "
            "gemms or onnx)");
}

TEST(SpecErrors, EmptyWorkloadList) {
  EXPECT_EQ(toml_error("workload = []\n"), "s.toml: workload: the list is empty");
  EXPECT_EQ(json_error(R"({"workload": []})"), "s.json: workload: the list is empty");
}

TEST(SpecErrors, WorkloadNotATable) {
  EXPECT_EQ(toml_error("workload = [\"resnet50\"]\n"), "s.toml: workload[0]: expected a table, got a string");
}

TEST(SpecErrors, WorkloadFieldsOfTheWrongKind) {
  EXPECT_EQ(toml_error("[[workload]]\nnetwork = 50\n"), "s.toml: workload[0].network: expected a string, got a number");
  EXPECT_EQ(toml_error("[[workload]]\nscalesim_gemm = 1\n"),
            "s.toml: workload[0].scalesim_gemm: expected a path, got a number");
  EXPECT_EQ(toml_error("[[workload]]\nscalesim_conv = [\"a.csv\"]\n"),
            "s.toml: workload[0].scalesim_conv: expected a path, got a list");
  EXPECT_EQ(toml_error("[[workload]]\nname = 1\nnetwork = \"resnet50\"\n"),
            "s.toml: workload[0].name: expected a string, got a number");
}

TEST(SpecErrors, GemmsNotAList) {
  EXPECT_EQ(toml_error("[[workload]]\ngemms = \"square\"\n"),
            "s.toml: workload[0].gemms: expected a non-empty list of {m, k, n} tables, got a string");
  EXPECT_EQ(toml_error("[[workload]]\ngemms = []\n"),
            "s.toml: workload[0].gemms: expected a non-empty list of {m, k, n} tables, got a list");
  EXPECT_EQ(toml_error("[[workload]]\ngemms = [512]\n"),
            "s.toml: workload[0].gemms[0]: expected a table {m, k, n}, got a number");
}

TEST(SpecErrors, GemmMissingM) {
  EXPECT_EQ(toml_error("[[workload]]\ngemms = [{ m = 1, k = 1, n = 1 }, { k = 2, n = 3 }]\n"),
            "s.toml: workload[0].gemms[1]: m is missing (C[m,n] = A[m,k] @ B[k,n])");
  EXPECT_EQ(toml_error("[[workload]]\ngemms = [{ m = 1, k = 1 }]\n"),
            "s.toml: workload[0].gemms[0]: n is missing (C[m,n] = A[m,k] @ B[k,n])");
}

TEST(SpecErrors, GemmDimensionNotAPositiveInteger) {
  const auto with_m = [](const std::string& m) {
    return toml_error("[[workload]]\ngemms = [{ m = " + m + ", k = 2, n = 3 }]\n");
  };
  EXPECT_EQ(with_m("0"), "s.toml: workload[0].gemms[0].m: expected a positive integer, got 0");
  EXPECT_EQ(with_m("-1"), "s.toml: workload[0].gemms[0].m: expected a positive integer, got -1");
  EXPECT_EQ(with_m("1.5"), "s.toml: workload[0].gemms[0].m: expected a positive integer, got 1.5");
  EXPECT_EQ(with_m("\"64\""), "s.toml: workload[0].gemms[0].m: expected a positive integer, got a string");
  EXPECT_EQ(with_m("true"), "s.toml: workload[0].gemms[0].m: expected a positive integer, got a boolean");
  EXPECT_EQ(json_error(R"({"workload": [{"gemms": [{"m": 1, "k": 2.5, "n": 3}]}]})"),
            "s.json: workload[0].gemms[0].k: expected a positive integer, got 2.5");
}

TEST(SpecErrors, UnknownGemmKey) {
  EXPECT_EQ(toml_error("[[workload]]\ngemms = [{ m = 1, k = 2, n = 3, batch = 2 }]\n"),
            "s.toml: workload[0].gemms[0].batch: unknown key (a GEMM's keys: name, m, k, n, count)");
}

TEST(SpecErrors, GemmCountZero) {
  EXPECT_EQ(toml_error("[[workload]]\ngemms = [{ m = 1, k = 2, n = 3, count = 0 }]\n"),
            "s.toml: workload[0].gemms[0].count: expected a positive integer, got 0");
}

TEST(SpecErrors, UnknownParameterListsTheOptions) {
  const std::string tail =
      ": unknown parameter 'tile' (gemm options: gen, dtype, fp32_mode, tile_n, double_row, sbuf_budget, mode, "
      "check, data_path; CSR knobs: inter_instr_delay, dependency_check, fifo_size, throttled_ports, csr.FACE:REGISTER.FIELD; "
      "configuration keys are dotted, e.g. geometry.pe_rows -- docs/configuration.md)";
  EXPECT_EQ(toml_error(kWorkload + "[set]\ntile = 128\n"), "s.toml: set.tile" + tail);
  EXPECT_EQ(toml_error(kWorkload + "[grid]\ntile = [128]\n"), "s.toml: grid.tile" + tail);
  EXPECT_EQ(toml_error(kWorkload + "[zip]\ntile = [128]\n"), "s.toml: zip.tile" + tail);
  // param_kind on its own: the same message after `where`.
  EXPECT_EQ(spec_error_of([] { param_kind("tile", "here"); }), "here" + tail);
}

TEST(SpecErrors, MalformedCsrName) {
  const std::string rule =
      ": a register parameter is csr.FACE:REGISTER[.FIELD] (FACE top, cluster, protected, vp), e.g. "
      "\"csr.cluster:arr_cluster_cfg.inter_instr_dly_cnt\"";
  EXPECT_EQ(toml_error(kWorkload + "[set]\n\"csr.queue_cfg.fifo_size_sel\" = 1\n"),
            "s.toml: set.csr.queue_cfg.fifo_size_sel" + rule);  // no FACE:
  EXPECT_EQ(toml_error(kWorkload + "[set]\n\"csr.:queue_cfg\" = 1\n"), "s.toml: set.csr.:queue_cfg" + rule);
  EXPECT_EQ(toml_error(kWorkload + "[grid]\n\"csr.top:\" = [1]\n"), "s.toml: grid.csr.top:" + rule);
}

TEST(SpecErrors, GridValueNotAList) {
  EXPECT_EQ(toml_error(kWorkload + "[grid]\ntile_n = 128\n"),
            "s.toml: grid.tile_n: expected a list of values, got a number");
  EXPECT_EQ(toml_error(kWorkload + "[zip]\nmode = \"timing\"\n"),
            "s.toml: zip.mode: expected a list of values, got a string");
}

TEST(SpecErrors, TablesOfTheWrongKind) {
  EXPECT_EQ(toml_error("set = 1\n" + kWorkload), "s.toml: set: expected a table, got a number");
  EXPECT_EQ(toml_error("grid = [1]\n" + kWorkload), "s.toml: grid: expected a table, got a list");
  EXPECT_EQ(toml_error("zip = \"x\"\n" + kWorkload), "s.toml: zip: expected a table, got a string");
}

TEST(SpecErrors, EmptyList) {
  EXPECT_EQ(toml_error(kWorkload + "[grid]\ntile_n = []\n"),
            "s.toml: grid.tile_n: the list is empty (a sweep over no value has no point)");
}

TEST(SpecErrors, DuplicateValueInAList) {
  EXPECT_EQ(toml_error(kWorkload + "[grid]\ntile_n = [128, 256, 128]\n"), "s.toml: grid.tile_n: 128 is listed twice");
  // A zipped list may repeat a value (its rows vary together); a whole row repeated is one configuration twice.
  const SweepSpec zipped = toml_spec(kWorkload + "[zip]\n\"geometry.pe_rows\" = [128, 256, 256]\n"
                                                 "\"geometry.pe_cols\" = [256, 128, 256]\n");
  const std::vector<Point> points = expand(zipped);
  ASSERT_EQ(points.size(), 3u * zipped.workloads[0].layers.size());
  EXPECT_EQ(*find_param(points.back(), "geometry.pe_rows"), 256);
  EXPECT_EQ(*find_param(points.back(), "geometry.pe_cols"), 256);
  EXPECT_EQ(toml_error(kWorkload + "[zip]\ngen = [\"MARIANA\", \"CAYMAN\", \"MARIANA\"]\ntile_n = [128, 256, 128]\n"),
            "s.toml: zip: row 2 (gen = \"MARIANA\", tile_n = 128) repeats row 0 (zipped lists vary together: each row "
            "is one configuration)");
  EXPECT_EQ(toml_error(kWorkload + "[zip]\ngen = [\"MARIANA\", \"MARIANA\"]\n"),
            "s.toml: zip: row 1 (gen = \"MARIANA\") repeats row 0 (zipped lists vary together: each row is one "
            "configuration)");
}

TEST(SpecErrors, ValueThatIsATable) {
  EXPECT_EQ(toml_error(kWorkload + "[grid]\ntile_n = [128, { a = 1 }]\n"),
            "s.toml: grid.tile_n[1]: expected a number, string or boolean, got a table");
  // A table's keys are dotted names (TOML's bare `geometry.pe_rows = 64`): { a = 1 } under "geometry.pe_rows" is
  // the key geometry.pe_rows.a -- a configuration key that the run's --set refuses -- and an empty table is no value.
  const SweepSpec nested = toml_spec(kWorkload + "[set]\n\"geometry.pe_rows\" = { a = 1 }\n");
  ASSERT_EQ(nested.fixed.size(), 1u);
  EXPECT_EQ(nested.fixed[0].name, "geometry.pe_rows.a");
  EXPECT_EQ(toml_error(kWorkload + "[set]\n\"geometry.pe_rows\" = {}\n"),
            "s.toml: set.geometry.pe_rows: expected a number, string or boolean, got a table");
  EXPECT_EQ(toml_error(kWorkload + "[set]\n\"geometry.pe_rows\" = [64]\n"),
            "s.toml: set.geometry.pe_rows: expected a number, string or boolean, got a list");
}

TEST(SpecParse, BareDottedKeysAreConfigurationKeys) {
  // TOML reads geometry.pe_rows = ... as a table geometry holding pe_rows: the same parameter as the quoted key.
  const SweepSpec s = toml_spec(kWorkload + "[set]\ngeometry.pe_cols = 64\n[grid]\ngeometry.pe_rows = [32, 64]\n");
  ASSERT_EQ(s.fixed.size(), 1u);
  EXPECT_EQ(s.fixed[0].name, "geometry.pe_cols");
  EXPECT_EQ(s.fixed[0].value, 64);
  ASSERT_EQ(s.grid.size(), 1u);
  EXPECT_EQ(s.grid[0].first, "geometry.pe_rows");
  EXPECT_EQ(s.grid[0].second.size(), 2u);
}

TEST(SpecErrors, TomlDateIsNoValue) {
  EXPECT_EQ(toml_error(kWorkload + "[set]\n\"timing.epoch\" = 1979-05-27\n"),
            "s.toml: set.timing.epoch: a date or time is no parameter value");
}

TEST(SpecErrors, ModeFast) {
  EXPECT_EQ(toml_error(kWorkload + "[set]\nmode = \"fast\"\n"),
            "s.toml: set.mode = \"fast\": mode takes timing, both or functional");
}

TEST(SpecErrors, TileNZero) {
  EXPECT_EQ(toml_error(kWorkload + "[grid]\ntile_n = [128, 0]\n"),
            "s.toml: grid.tile_n[1] = 0: tile_n takes a positive integer");
  EXPECT_EQ(toml_error(kWorkload + "[set]\nsbuf_budget = 1.5\n"),
            "s.toml: set.sbuf_budget = 1.5: sbuf_budget takes a positive integer");
}

TEST(SpecErrors, StringOptionNotAString) {
  EXPECT_EQ(toml_error(kWorkload + "[set]\ndtype = 16\n"), "s.toml: set.dtype = 16: dtype takes a string");
}

TEST(SpecErrors, DoubleRowOne) {
  EXPECT_EQ(toml_error(kWorkload + "[set]\ndouble_row = 1\n"),
            "s.toml: set.double_row = 1: double_row takes true or false");
  EXPECT_EQ(toml_error(kWorkload + "[zip]\ncheck = [true, \"no\"]\n"),
            "s.toml: zip.check[1] = \"no\": check takes true or false");
}

TEST(SpecErrors, InterInstrDelay64) {
  EXPECT_EQ(toml_error(kWorkload + "[set]\ninter_instr_delay = 64\n"),
            "s.toml: set.inter_instr_delay = 64: inter_instr_delay takes 0 (off) or 1..63 cycles "
            "(arr_cluster_cfg.inter_instr_dly_cnt is 6 bits)");
  EXPECT_NO_THROW(toml_spec(kWorkload + "[grid]\ninter_instr_delay = [0, 63]\n"));  // the bounds are allowed
}

TEST(SpecErrors, FifoSizeHalf) {
  EXPECT_EQ(toml_error(kWorkload + "[set]\nfifo_size = \"half\"\n"),
            "s.toml: set.fifo_size = \"half\": fifo_size takes \"full\" or \"single\"");
}

TEST(SpecErrors, ThrottledPorts512) {
  EXPECT_EQ(toml_error(kWorkload + "[set]\nthrottled_ports = 512\n"),
            "s.toml: set.throttled_ports = 512: throttled_ports takes a mask of the 9 XBUS ports, 0..511 (bit set = "
            "throttled)");
  EXPECT_NO_THROW(toml_spec(kWorkload + "[grid]\nthrottled_ports = [0, 511]\n"));
}

TEST(SpecErrors, CsrValueMinusOne) {
  EXPECT_EQ(toml_error(kWorkload + "[set]\n\"csr.top:queue_cfg.fifo_size_sel\" = -1\n"),
            "s.toml: set.csr.top:queue_cfg.fifo_size_sel = -1: csr.top:queue_cfg.fifo_size_sel takes a 32-bit "
            "unsigned value");
  // 2^32 = 4294967296 is one past the largest 32-bit value.
  EXPECT_EQ(toml_error(kWorkload + "[set]\n\"csr.vp:x\" = 4294967296\n"),
            "s.toml: set.csr.vp:x = 4294967296: csr.vp:x takes a 32-bit unsigned value");
  EXPECT_NO_THROW(toml_spec(kWorkload + "[set]\n\"csr.vp:x\" = 4294967295\n"));
}

TEST(SpecErrors, BooleanForAConfigurationKey) {
  EXPECT_EQ(toml_error(kWorkload + "[set]\n\"geometry.pe_rows\" = true\n"),
            "s.toml: set.geometry.pe_rows = true: configuration keys take numbers or strings");
  EXPECT_EQ(toml_error(kWorkload + "[grid]\n\"timing.x\" = [1, false]\n"),
            "s.toml: grid.timing.x[1] = false: configuration keys take numbers or strings");
}

TEST(SpecErrors, ZipListsOfUnequalLength) {
  // Alphabetical and spec order agree here (fifo_size < inter_instr_delay): the first zip key is fifo_size.
  EXPECT_EQ(toml_error(kWorkload + "[zip]\nfifo_size = [\"full\", \"single\"]\ninter_instr_delay = [0, 8, 16]\n"),
            "s.toml: zip.inter_instr_delay: 3 values, but zip.fifo_size has 2 (zipped lists vary together: give "
            "each as many)");
}

TEST(SpecErrors, NameInBothSetAndGrid) {
  EXPECT_EQ(toml_error(kWorkload + "[set]\ntile_n = 128\n[grid]\ntile_n = [128, 512]\n"),
            "s.toml: grid.tile_n: already given as set.tile_n");
  EXPECT_EQ(toml_error(kWorkload + "[grid]\n\"geometry.pe_rows\" = [64]\n[zip]\n\"geometry.pe_rows\" = [128]\n"),
            "s.toml: zip.geometry.pe_rows: already given as grid.geometry.pe_rows");
}

TEST(SpecErrors, TwoWorkloadsWithTheSameName) {
  // Both unnamed gemms workloads are named "gemms".
  EXPECT_EQ(toml_error(kWorkload + kWorkload),
            "s.toml: workload[1]: a second workload named 'gemms' (give it another name = ...)");
  EXPECT_EQ(toml_error("[[workload]]\nnetwork = \"resnet50\"\nname = \"a\"\n[[workload]]\nname = \"b\"\n"
                       "gemms = [{ m = 1, k = 1, n = 1 }]\n[[workload]]\nname = \"a\"\nnetwork = \"bert_base\"\n"),
            "s.toml: workload[2]: a second workload named 'a' (give it another name = ...)");
}

TEST(SpecErrors, TomlSyntaxErrorHasLineAndColumn) {
  // The '@' is the first character of line 2.
  const std::string message = toml_error("name = \"x\"\n@\n");
  EXPECT_EQ(message.rfind("s.toml:2:1: ", 0), 0u) << message;
  EXPECT_GT(message.size(), std::string("s.toml:2:1: ").size()) << message;  // and a description
}

TEST(SpecErrors, InvalidJson) {
  // {"name": } : the '}' is character 10 of line 1.
  const std::string message = json_error(R"({"name": })");
  EXPECT_EQ(message.rfind("s.json:1:10: JSON syntax error: syntax error while parsing value", 0), 0u) << message;
}

TEST(SpecErrors, JsonNumberOutOfRange) {
  // 1e400 is beyond a double: nlohmann::json throws out_of_range, not parse_error (found by fuzz_sweep).
  const std::string message = json_error(R"({"workload": {"gemms": [{"m": 1e400, "k": 1, "n": 1}]}})");
  EXPECT_EQ(message, "s.json: workload.gemms.m: number overflow parsing '1e400' (a JSON number beyond the range of a "
                     "double)");
}

TEST(SpecErrors, JsonTopLevelNotAnObject) {
  EXPECT_EQ(json_error("[1, 2]"), "s.json: expected a JSON object at the top, got a list");
  EXPECT_EQ(json_error("\"spec\""), "s.json: expected a JSON object at the top, got a string");
}

TEST(SpecErrors, UnknownFileExtension) {
  TempDir dir("extension");
  const std::string yaml = (dir.path / "s.yaml").string();
  write_file(yaml, "workload: []\n");
  EXPECT_EQ(spec_error_of([&] { read_spec(yaml); }), yaml + ": unknown spec format '.yaml' (.toml or .json)");
  const std::string bare = (dir.path / "spec").string();
  write_file(bare, kWorkload);
  EXPECT_EQ(spec_error_of([&] { read_spec(bare); }), bare + ": unknown spec format '' (.toml or .json)");
}

TEST(SpecErrors, UnreadableFile) {
  TempDir dir("unreadable");
  const std::string absent = (dir.path / "absent.toml").string();
  EXPECT_EQ(spec_error_of([&] { read_spec(absent); }), absent + ": cannot open: No such file or directory");
}

// A directory opens and reads as nothing: a TOML spec then said "workload: missing" and a JSON one leaked
// nlohmann's "[json.exception.parse_error.101] ...". Now the file and the reason.
TEST(SpecErrors, ADirectoryIsNamedAsOne) {
  TempDir dir("directory");
  for (const char* name : {"d.toml", "d.json"}) {
    const std::string path = (dir.path / name).string();
    fs::create_directories(path);
    EXPECT_EQ(spec_error_of([&] { read_spec(path); }), path + ": is a directory");
  }
  // The file before its format: a folder or a missing file says that, not "unknown spec format".
  fs::create_directories(dir.path / "specs");
  EXPECT_EQ(spec_error_of([&] { read_spec((dir.path / "specs").string()); }), (dir.path / "specs").string() + ": is a directory");
  const std::string yaml = (dir.path / "absent.yaml").string();
  EXPECT_EQ(spec_error_of([&] { read_spec(yaml); }), yaml + ": cannot open: No such file or directory");
  // A topology that is a directory: was "no layers".
  fs::create_directories(dir.path / "topo.csv");
  EXPECT_EQ(spec_error_of([&] {
              parse_spec("[[workload]]\nscalesim_conv = \"topo.csv\"\n", SpecFormat::Toml, "s.toml", dir.path.string());
            }),
            "s.toml: workload[0]: " + (dir.path / "topo.csv").string() + ": is a directory");
}

// A spec linked to /dev/zero was read whole (std::bad_alloc under a memory limit); it is refused at the limit.
TEST(SpecErrors, ASpecIsReadToItsLimitAndNoFurther) {
  TempDir dir("zero");
  const std::string link = (dir.path / "zero.toml").string();
  fs::create_symlink("/dev/zero", link);
  EXPECT_EQ(spec_error_of([&] { read_spec(link); }),
            link + ": larger than the 16777216-byte limit for a sweep spec");
}

TEST(SpecErrors, AnUnreadableSpecSaysWhy) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a file whatever its mode";
  TempDir dir("mode");
  const std::string path = (dir.path / "s.toml").string();
  write_file(path, kWorkload);
  fs::permissions(path, fs::perms::none);
  EXPECT_EQ(spec_error_of([&] { read_spec(path); }), path + ": cannot open: Permission denied");
}

TEST(SpecErrors, ReadSpecNamesTheFileInMessages) {
  TempDir dir("named");
  const std::string path = (dir.path / "bad.json").string();
  write_file(path, R"({"workload": [{"gemms": [{"m": 0, "k": 1, "n": 1}]}]})");
  EXPECT_EQ(spec_error_of([&] { read_spec(path); }),
            path + ": workload[0].gemms[0].m: expected a positive integer, got 0");
}

TEST(SpecErrors, UnknownNetworkIsWrappedWithTheWorkloadsPosition) {
  EXPECT_EQ(toml_error(kWorkload + "[[workload]]\nnetwork = \"resnet51\"\n"),
            "s.toml: workload[1]: unknown built-in network \"resnet51\"; valid: resnet50, bert_base, llama2_7b");
}

TEST(SpecErrors, MissingTopologyIsWrappedAndResolvedAgainstTheBase) {
  TempDir dir("missing_topology");
  const std::string base = dir.path.string();
  EXPECT_EQ(spec_error_of([&] {
              parse_spec("[[workload]]\nscalesim_conv = \"none.csv\"\n", SpecFormat::Toml, "s.toml", base);
            }),
            "s.toml: workload[0]: " + (dir.path / "none.csv").string() + ": cannot open: No such file or directory");
}

// ---------------------------------------------------------------------------------------------------------------
// SpecExpand

// "c<configuration> p<index> <workload>/<layer_index>:<layer name> | params" per point.
std::string describe_point(const Point& p) {
  std::string s = "c" + std::to_string(p.configuration) + " p" + std::to_string(p.index) + " " + p.workload + "/" +
                  std::to_string(p.layer_index) + ":" + p.layer.name + " |";
  for (const Param& q : p.params) s += " " + q.name + "=" + q.value.dump();
  return s;
}

// A 2 x 3 grid crossed with a 2-row zip: 12 configurations; 2 workloads of 2 and 1 layers: 3 points each, 36 in
// all. Keys are alphabetical in every table so the expectation holds whatever key order the parser keeps.
const std::string kExpandSpec = R"(
[[workload]]
name = "a"
gemms = [{ name = "a0", m = 1, k = 2, n = 3 }, { name = "a1", m = 4, k = 5, n = 6, count = 2 }]

[[workload]]
name = "b"
gemms = [{ name = "b0", m = 7, k = 8, n = 9 }]

[set]
gen = "MARIANA"
mode = "both"

[grid]
"geometry.pe_rows" = [64, 128]
tile_n = [128, 256, 512]

[zip]
fifo_size = ["full", "single"]
inter_instr_delay = [0, 32]
)";

TEST(SpecExpand, GridProductAndZipHandEnumerated) {
  const std::vector<Point> points = expand(toml_spec(kExpandSpec));
  ASSERT_EQ(points.size(), 36u);
  // Configuration c: zip row c / 6 (slowest), then the grid's index c % 6 with tile_n (the last key) fastest:
  // pe_rows = [64, 128][(c % 6) / 3], tile_n = [128, 256, 512][c % 3].
  const std::vector<std::string> configurations = {
      "geometry.pe_rows=64 tile_n=128 fifo_size=\"full\" inter_instr_delay=0",      // c0
      "geometry.pe_rows=64 tile_n=256 fifo_size=\"full\" inter_instr_delay=0",      // c1
      "geometry.pe_rows=64 tile_n=512 fifo_size=\"full\" inter_instr_delay=0",      // c2
      "geometry.pe_rows=128 tile_n=128 fifo_size=\"full\" inter_instr_delay=0",     // c3
      "geometry.pe_rows=128 tile_n=256 fifo_size=\"full\" inter_instr_delay=0",     // c4
      "geometry.pe_rows=128 tile_n=512 fifo_size=\"full\" inter_instr_delay=0",     // c5
      "geometry.pe_rows=64 tile_n=128 fifo_size=\"single\" inter_instr_delay=32",   // c6
      "geometry.pe_rows=64 tile_n=256 fifo_size=\"single\" inter_instr_delay=32",   // c7
      "geometry.pe_rows=64 tile_n=512 fifo_size=\"single\" inter_instr_delay=32",   // c8
      "geometry.pe_rows=128 tile_n=128 fifo_size=\"single\" inter_instr_delay=32",  // c9
      "geometry.pe_rows=128 tile_n=256 fifo_size=\"single\" inter_instr_delay=32",  // c10
      "geometry.pe_rows=128 tile_n=512 fifo_size=\"single\" inter_instr_delay=32",  // c11
  };
  // Within a configuration: workload a's layers in order, then b's.
  const std::vector<std::string> layers = {"a/0:a0", "a/1:a1", "b/0:b0"};
  std::vector<std::string> expected, actual;
  for (std::size_t c = 0; c < configurations.size(); ++c)
    for (std::size_t l = 0; l < layers.size(); ++l)
      expected.push_back("c" + std::to_string(c) + " p" + std::to_string(3 * c + l) + " " + layers[l] +
                         " | gen=\"MARIANA\" mode=\"both\" " + configurations[c]);
  for (const Point& p : points) actual.push_back(describe_point(p));
  EXPECT_EQ(actual, expected);
  // The layers themselves are copied whole (count included).
  EXPECT_EQ(describe(points[1].layer), "a1 m=4 k=5 n=6 count=2");
  EXPECT_EQ(describe(points[35].layer), "b0 m=7 k=8 n=9 count=1");
}

// The grid's last key in the spec varies fastest (spec.h, docs/sweeps.md): with tile_n written before
// "geometry.pe_rows", geometry.pe_rows varies fastest although it sorts first.
TEST(SpecExpand, TheLastGridKeyOfTheSpecVariesFastest) {
  const std::vector<Point> points =
      expand(toml_spec(kWorkload + "[grid]\ntile_n = [128, 512]\n\"geometry.pe_rows\" = [64, 128]\n"));
  ASSERT_EQ(points.size(), 4u);
  std::vector<std::string> actual;
  for (const Point& p : points) actual.push_back(describe_point(p));
  EXPECT_EQ(actual, (std::vector<std::string>{
                        "c0 p0 gemms/0:gemm0 | tile_n=128 geometry.pe_rows=64",
                        "c1 p1 gemms/0:gemm0 | tile_n=128 geometry.pe_rows=128",
                        "c2 p2 gemms/0:gemm0 | tile_n=512 geometry.pe_rows=64",
                        "c3 p3 gemms/0:gemm0 | tile_n=512 geometry.pe_rows=128",
                    }));
  // The same in the shipped example: gemm_csr_knobs.toml writes inter_instr_delay = [0, 32] before
  // dependency_check = [true, false], so dependency_check should vary fastest (2 GEMMs per configuration).
  const fs::path root = repository_root();
  if (root.empty()) return;
  const std::vector<Point> knobs = expand(read_spec((root / "platform/examples/sweep/gemm_csr_knobs.toml").string()));
  ASSERT_EQ(knobs.size(), 8u);
  std::vector<std::string> configurations;
  for (std::size_t c = 0; c < 4; ++c) configurations.push_back(describe_params(knobs[2 * c].params).at(0) + " " +
                                                                describe_params(knobs[2 * c].params).at(1));
  EXPECT_EQ(configurations, (std::vector<std::string>{"inter_instr_delay=0 dependency_check=true",
                                                      "inter_instr_delay=0 dependency_check=false",
                                                      "inter_instr_delay=32 dependency_check=true",
                                                      "inter_instr_delay=32 dependency_check=false"}));
}

TEST(SpecExpand, NoSweptParameterIsOneConfiguration) {
  const std::vector<Point> points =
      expand(toml_spec("[[workload]]\ngemms = [{ m = 1, k = 2, n = 3 }, { m = 4, k = 5, n = 6 }]\n[set]\ntile_n = 64\n"));
  std::vector<std::string> actual;
  for (const Point& p : points) actual.push_back(describe_point(p));
  EXPECT_EQ(actual, (std::vector<std::string>{"c0 p0 gemms/0:gemm0 | tile_n=64", "c0 p1 gemms/1:gemm1 | tile_n=64"}));
}

TEST(SpecExpand, ZipAloneIsOneConfigurationPerRow) {
  const std::vector<Point> points = expand(toml_spec(kWorkload + "[zip]\n\"geometry.pe_cols\" = [32, 64, 128]\n"
                                                                 "\"geometry.pe_rows\" = [16, 32, 64]\n"));
  std::vector<std::string> actual;
  for (const Point& p : points) actual.push_back(describe_point(p));
  EXPECT_EQ(actual, (std::vector<std::string>{
                        "c0 p0 gemms/0:gemm0 | geometry.pe_cols=32 geometry.pe_rows=16",
                        "c1 p1 gemms/0:gemm0 | geometry.pe_cols=64 geometry.pe_rows=32",
                        "c2 p2 gemms/0:gemm0 | geometry.pe_cols=128 geometry.pe_rows=64",
                    }));
}

TEST(SpecExpand, FindParam) {
  const std::vector<Point> points = expand(toml_spec(kExpandSpec));
  const Point& p = points[3 * 7];  // c7: pe_rows 64, tile_n 256, zip row 1
  ASSERT_NE(find_param(p, "tile_n"), nullptr);
  EXPECT_EQ(*find_param(p, "tile_n"), json(256));
  EXPECT_EQ(*find_param(p, "fifo_size"), json("single"));
  EXPECT_EQ(*find_param(p, "gen"), json("MARIANA"));
  EXPECT_EQ(find_param(p, "dtype"), nullptr);
}

// A hand-built spec of one GEMM whose grid has lists of these sizes (values 0, 1, 2, ...).
SweepSpec grid_spec(const std::vector<std::size_t>& sizes, std::size_t layers = 1) {
  SweepSpec spec;
  spec.source = "big.toml";
  spec.name = "big";
  Network net;
  net.name = "w";
  for (std::size_t l = 0; l < layers; ++l) net.layers.push_back(Gemm{"g" + std::to_string(l), 1, 1, 1, 1});
  spec.workloads.push_back(net);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::vector<json> values;
    for (std::size_t v = 0; v < sizes[i]; ++v) values.push_back(v);
    spec.grid.emplace_back("timing.k" + std::to_string(i), std::move(values));
  }
  return spec;
}

TEST(SpecExpand, MaxPointsIsASpecError) {
  ASSERT_EQ(kMaxPoints, 1000000u);
  // 1000 x 1001 = 1001000 combinations > 1000000.
  EXPECT_EQ(spec_error_of([] { expand(grid_spec({1000, 1001})); }),
            "big.toml: the grid has more than 1000000 combinations");
  // 1000 x 1000 = 1000000 combinations is allowed, but with 2 layers that is 2000000 points.
  EXPECT_EQ(spec_error_of([] { expand(grid_spec({1000, 1000}, 2)); }),
            "big.toml: 1000000 configurations x 2 layers: more than 1000000 points (split the sweep)");
  // The zip's rows count as configurations: 10 rows x 100000 = 1000000, x 2 layers.
  SweepSpec zipped = grid_spec({100000}, 2);
  std::vector<json> rows;
  for (int r = 0; r < 10; ++r) rows.push_back(r);
  zipped.zip.emplace_back("timing.row", rows);
  EXPECT_EQ(spec_error_of([&] { expand(zipped); }),
            "big.toml: 1000000 configurations x 2 layers: more than 1000000 points (split the sweep)");
}

TEST(SpecExpand, HugeGridFailsBeforeAllocating) {
  // 10^5 ^ 3 = 10^15 combinations: a SpecError, not std::bad_alloc / std::length_error from reserving them.
  EXPECT_EQ(spec_error_of([] { expand(grid_spec({100000, 100000, 100000})); }),
            "big.toml: the grid has more than 1000000 combinations");
}

TEST(SpecExpand, JustUnderTheLimitExpands) {
  // 100 x 100 combinations x 3 layers = 30000 points.
  const std::vector<Point> points = expand(grid_spec({100, 100}, 3));
  ASSERT_EQ(points.size(), 30000u);
  EXPECT_EQ(points.back().index, 29999u);
  EXPECT_EQ(points.back().configuration, 9999u);
  EXPECT_EQ(points.back().layer_index, 2u);
  EXPECT_EQ(describe_params(points.back().params), (std::vector<std::string>{"timing.k0=99", "timing.k1=99"}));
  // Point 3 * 101 + 1 = 304: configuration 101 = (1, 1), layer 1.
  EXPECT_EQ(describe_point(points[304]), "c101 p304 w/1:g1 | timing.k0=1 timing.k1=1");
}

// ---------------------------------------------------------------------------------------------------------------
// GemmArguments

Point point_with(std::vector<Param> params) {
  Point p;
  p.workload = "w";
  p.layer = Gemm{"g", 128, 64, 256, 3};
  p.params = std::move(params);
  return p;
}

using Args = std::vector<std::string>;
const Args kShape = {"--m", "128", "--k", "64", "--n", "256"};

Args shape_and(const Args& rest) {
  Args a = kShape;
  a.insert(a.end(), rest.begin(), rest.end());
  return a;
}

TEST(GemmArguments, DefaultsAreTimingAndNoCheck) {
  // The count is not an argument: one point is one run.
  EXPECT_EQ(gemm_arguments(point_with({})), shape_and({"--mode", "timing", "--no-check"}));
}

TEST(GemmArguments, GemmOptions) {
  EXPECT_EQ(gemm_arguments(point_with({{"gen", "MARIANA"},
                                       {"dtype", "fp8_e4m3"},
                                       {"fp32_mode", "high"},
                                       {"tile_n", 256},
                                       {"sbuf_budget", 65536},
                                       {"double_row", true}})),
            shape_and({"--gen", "MARIANA", "--dtype", "fp8_e4m3", "--fp32-mode", "high", "--tile-n", "256",
                       "--sbuf-budget", "65536", "--double-row", "--mode", "timing", "--no-check"}));
}

TEST(GemmArguments, DoubleRowFalseIsNoFlag) {
  EXPECT_EQ(gemm_arguments(point_with({{"double_row", false}})), shape_and({"--mode", "timing", "--no-check"}));
}

TEST(GemmArguments, CheckTrueRemovesNoCheck) {
  EXPECT_EQ(gemm_arguments(point_with({{"check", true}})), shape_and({"--mode", "timing"}));
  EXPECT_EQ(gemm_arguments(point_with({{"check", false}})), shape_and({"--mode", "timing", "--no-check"}));
}

TEST(GemmArguments, ModeGivenRemovesTheDefault) {
  EXPECT_EQ(gemm_arguments(point_with({{"mode", "both"}, {"tile_n", 128}})),
            shape_and({"--mode", "both", "--tile-n", "128", "--no-check"}));
  EXPECT_EQ(gemm_arguments(point_with({{"mode", "timing"}})), shape_and({"--mode", "timing", "--no-check"}));
}

TEST(GemmArguments, InterInstrDelay) {
  EXPECT_EQ(gemm_arguments(point_with({{"inter_instr_delay", 0}})),
            shape_and({"--csr", "cluster:arr_cluster_cfg.en_inter_instr_dly=0", "--mode", "timing", "--no-check"}));
  EXPECT_EQ(gemm_arguments(point_with({{"inter_instr_delay", 32}})),
            shape_and({"--csr", "cluster:arr_cluster_cfg.en_inter_instr_dly=1", "--csr",
                       "cluster:arr_cluster_cfg.inter_instr_dly_cnt=32", "--mode", "timing", "--no-check"}));
}

TEST(GemmArguments, DependencyCheck) {
  // The register field disables the check: true -> 0, false -> 1.
  EXPECT_EQ(gemm_arguments(point_with({{"dependency_check", true}})),
            shape_and({"--csr", "top:queue_cfg.disable_dependency_check=0", "--mode", "timing", "--no-check"}));
  EXPECT_EQ(gemm_arguments(point_with({{"dependency_check", false}})),
            shape_and({"--csr", "top:queue_cfg.disable_dependency_check=1", "--mode", "timing", "--no-check"}));
}

TEST(GemmArguments, FifoSize) {
  // fifo_size_sel: 0 = full when the FIFO fills, 1 = single-entry (the register schema).
  EXPECT_EQ(gemm_arguments(point_with({{"fifo_size", "single"}})),
            shape_and({"--csr", "top:queue_cfg.fifo_size_sel=1", "--mode", "timing", "--no-check"}));
  EXPECT_EQ(gemm_arguments(point_with({{"fifo_size", "full"}})),
            shape_and({"--csr", "top:queue_cfg.fifo_size_sel=0", "--mode", "timing", "--no-check"}));
}

TEST(GemmArguments, ThrottledPorts) {
  // disable_throttle holds the ports NOT throttled: ~0x3 & 0x1ff = 0x1fc = 508; 0 throttled -> 0x1ff = 511;
  // all 9 throttled -> 0.
  EXPECT_EQ(gemm_arguments(point_with({{"throttled_ports", 0x3}})),
            shape_and({"--csr", "protected:throttle_cfg.disable_throttle=508", "--mode", "timing", "--no-check"}));
  EXPECT_EQ(gemm_arguments(point_with({{"throttled_ports", 0}})),
            shape_and({"--csr", "protected:throttle_cfg.disable_throttle=511", "--mode", "timing", "--no-check"}));
  EXPECT_EQ(gemm_arguments(point_with({{"throttled_ports", 511}})),
            shape_and({"--csr", "protected:throttle_cfg.disable_throttle=0", "--mode", "timing", "--no-check"}));
}

TEST(GemmArguments, CsrField) {
  EXPECT_EQ(gemm_arguments(point_with({{"csr.cluster:arr_cluster_cfg.p2fifo_af", 8},
                                       {"csr.top:queue_cfg", 4294967295u}})),
            shape_and({"--csr", "cluster:arr_cluster_cfg.p2fifo_af=8", "--csr", "top:queue_cfg=4294967295", "--mode",
                       "timing", "--no-check"}));
}

TEST(GemmArguments, ConfigurationKeys) {
  EXPECT_EQ(gemm_arguments(point_with({{"geometry.pe_rows", 64},
                                       {"tensor_engine.clock_ghz", 2.8},
                                       {"timing.policy", "greedy"}})),
            shape_and({"--set", "geometry.pe_rows=64", "--set", "tensor_engine.clock_ghz=2.8", "--set",
                       "timing.policy=greedy", "--mode", "timing", "--no-check"}));
}

TEST(GemmArguments, FixedThenSweptFromAnExpandedSpec) {
  const std::vector<Point> points = expand(toml_spec(kExpandSpec));
  // Point 3 * 10 + 2 = 32: configuration 10 (pe_rows 128, tile_n 256, zip row 1), workload b's b0 (7 x 8 x 9).
  EXPECT_EQ(gemm_arguments(points[32]),
            (Args{"--m", "7", "--k", "8", "--n", "9", "--gen", "MARIANA", "--mode", "both", "--set",
                  "geometry.pe_rows=128", "--tile-n", "256", "--csr", "top:queue_cfg.fifo_size_sel=1", "--csr",
                  "cluster:arr_cluster_cfg.en_inter_instr_dly=1", "--csr",
                  "cluster:arr_cluster_cfg.inter_instr_dly_cnt=32", "--no-check"}));
}

TEST(GemmArguments, ValueTextOfEveryJsonKind) {
  EXPECT_EQ(value_text(json("MARIANA")), "MARIANA");  // strings as they are: no quotes
  EXPECT_EQ(value_text(json("a b,\"c\"")), "a b,\"c\"");
  EXPECT_EQ(value_text(json("")), "");
  EXPECT_EQ(value_text(json(true)), "true");
  EXPECT_EQ(value_text(json(false)), "false");
  EXPECT_EQ(value_text(json(128)), "128");
  EXPECT_EQ(value_text(json(-7)), "-7");
  EXPECT_EQ(value_text(json(std::uint64_t{18446744073709551615u})), "18446744073709551615");
  EXPECT_EQ(value_text(json(2.8)), "2.8");
  EXPECT_EQ(value_text(json(0.5)), "0.5");
  EXPECT_EQ(value_text(json(3.0)), "3.0");  // a float stays a float
  // No parameter is null, a list or a table; they come out as JSON text.
  EXPECT_EQ(value_text(json()), "null");
  EXPECT_EQ(value_text(json::array({1, "a"})), "[1,\"a\"]");
  EXPECT_EQ(value_text(json{{"a", 1}}), "{\"a\":1}");
}

}  // namespace
}  // namespace pevp::sweep

namespace pevp::sweep {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// Nesting (D-NESTING-DEPTH): a spec with 100,000 nested tables or arrays ended `pe-vp sweep` with SIGSEGV -- in
// toml++'s recursive table destructor, in the spec's own walk of [set] (flattened) or in a dump of a value. Each is
// refused at the place that opens level 65.

namespace deep {

constexpr std::size_t kHostile = 100000;

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}
std::string dotted(std::size_t segments) {
  std::string s = "a";
  for (std::size_t i = 1; i < segments; ++i) s += ".a";
  return s;
}
std::string too_deep(const std::string& where, std::size_t offset, const char* language) {
  return where + ": " + language + " nested deeper than 64 levels (the limit for a document pe-vp reads; offset " +
         std::to_string(offset) + ")";
}

}  // namespace deep

TEST(SpecNesting, JsonSetTableOfDeepObjects) {
  // {"workload": ..., "set": {"a": {"a": ...: the top '{' is level 1, "set"'s '{' level 2, so level 65 is the 64th
  // '{' of the "set" value.
  const std::string head = R"({"workload": {"network": "resnet50"}, "set": )";
  const std::string text = head + deep::repeat(R"({"a": )", deep::kHostile) + "1" + deep::repeat("}", deep::kHostile + 1);
  const std::size_t at = head.size() + 63 * 6;
  EXPECT_EQ(json_error(text), deep::too_deep("s.json:1:" + std::to_string(at + 1), at, "JSON"));
}

TEST(SpecNesting, TomlDeepHeaderDottedKeyAndArray) {
  // The document's table is level 1 (as in JSON). [set.a.a...]: "set" is level 2, the 63rd dot opens level 65.
  const std::string header = kWorkload + "[set." + deep::dotted(deep::kHostile) + "]\nx = 1\n";
  std::size_t dot = header.find("[set.") + 4;
  for (int i = 1; i < 63; ++i) dot = header.find('.', dot + 1);
  const std::size_t line_start = header.find("[set.");
  EXPECT_EQ(toml_error(header), deep::too_deep("s.toml:3:" + std::to_string(dot - line_start + 1), dot, "TOML"));
  // [set] then a.a.a... = 1: [set] is level 2, the key's 63rd dot opens level 65.
  const std::string key = kWorkload + "[set]\n" + deep::dotted(deep::kHostile) + " = 1\n";
  const std::size_t key_start = key.find("[set]\n") + 6;
  std::size_t kdot = key_start;
  for (int i = 0; i < 63; ++i) kdot = key.find('.', kdot + 1);
  EXPECT_EQ(toml_error(key), deep::too_deep("s.toml:4:" + std::to_string(kdot - key_start + 1), kdot, "TOML"));
  // grid.tile_n = [[[[...: toml++'s own limit (256 nested values) is past ours; ours speaks first.
  const std::string arrays = kWorkload + "[grid]\ntile_n = " + deep::repeat("[", 300) + deep::repeat("]", 300) + "\n";
  const std::size_t first = arrays.find("tile_n = [") + 9;
  // [grid] is level 2, the first '[' level 3: the 63rd '[' opens level 65.
  EXPECT_EQ(toml_error(arrays), deep::too_deep("s.toml:4:" + std::to_string(first + 62 - arrays.find("tile_n") + 1),
                                               first + 62, "TOML"));
}

TEST(SpecNesting, AtTheLimitASpecReads) {
  // The document, [set] and 62 tables under it, 64 levels in all: read, the nested tables flattened into one name.
  const SweepSpec spec = toml_spec(kWorkload + "[set." + deep::dotted(62) + "]\nx = 1\n");
  ASSERT_EQ(spec.fixed.size(), 1u);
  EXPECT_EQ(spec.fixed[0].name, deep::dotted(62) + ".x");
  EXPECT_NE(toml_error(kWorkload + "[set." + deep::dotted(63) + "]\nx = 1\n").find("nested deeper than 64"),
            std::string::npos);
}

}  // namespace
}  // namespace pevp::sweep
