// The sweep spec: which workloads, which parameters, which values -- read from a TOML or JSON file -- and the points
// it expands into. docs/sweeps.md has the format with an example; in short:
//
//   name = "array-size"
//   [[workload]]                  # one or more: network = built-in, scalesim_conv / scalesim_gemm = a topology
//   network = "resnet50"          # file (relative to the spec), onnx = a model (with batch = N, relative to the
//                                 # spec), or gemms = [{name, m, k, n, count}, ...]
//   [set]                         # fixed for every point
//   mode = "timing"
//   [grid]                        # every combination of these lists (the product, the last key varying fastest)
//   "geometry.pe_rows" = [64, 128]
//   tile_n = [128, 512]
//   [zip]                         # lists of one length, varied together; crossed with the grid
//   "geometry.pe_cols" = [64, 128]
//   [plots]                       # optional: what the plots compare against
//   baseline = { "geometry.pe_rows" = 64, tile_n = 128 }   # one configuration, by its swept values
//
// A parameter is a `pe-vp gemm` option (gen, dtype, fp32_mode, tile_n, double_row, sbuf_budget, mode, check), a
// driver CSR knob (inter_instr_delay, dependency_check, fifo_size, throttled_ports, or any register field as
// "csr.FACE:REGISTER.FIELD"), or a configuration key (dotted: geometry.pe_rows, timing.sbuf_read_bytes_per_cycle,
// tensor_engine.clock_ghz, ... -- docs/configuration.md). Plain C++: the configuration keys' values are checked by
// the command that runs the sweep, which knows the configuration.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pevp/sweep/workload.h"

namespace pevp::sweep {

// A spec that cannot be swept. what() names the file, the key and the rule, e.g.
//   "s.toml: grid.tile_n: expected a list of values, got a string".
class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One parameter's value: a JSON number, string or boolean.
struct Param {
  std::string name;
  nlohmann::json value;
};

// What kind of thing a parameter name is.
enum class ParamKind { GemmOption, CsrKnob, Csr, ConfigKey };
// Throws SpecError (prefixed with `where`) for a name that is none of them.
ParamKind param_kind(const std::string& name, const std::string& where);
// The gemm options and CSR knobs, for messages and docs.
const std::vector<std::string>& gemm_option_names();
const std::vector<std::string>& csr_knob_names();

struct SweepSpec {
  std::string source;  // the file it was read from (messages)
  std::string name;    // "name = ..." or the file's stem
  std::vector<Network> workloads;
  std::vector<Param> fixed;                                           // [set]
  std::vector<std::pair<std::string, std::vector<nlohmann::json>>> grid, zip;
  // [plots] baseline: the configuration speedups are measured against, by its swept values (every grid key with more
  // than one value, and enough zipped keys to pick one zip row); empty: the plots take the first configuration.
  std::vector<Param> baseline;
  // The swept parameter names: the grid's, then the zip's, in the spec's order.
  std::vector<std::string> swept() const;
};

enum class SpecFormat { Toml, Json };
// `base_dir`: where topology and model paths are relative to.
SweepSpec parse_spec(std::string_view text, SpecFormat format, const std::string& source, const std::string& base_dir);
// The format from the extension (.toml, .json); throws SpecError for another, or naming the file and the reason when
// it cannot be read (read_input_file: missing, a directory, unreadable, larger than kMaxInputBytes).
SweepSpec read_spec(const std::string& path);

// One simulation: a layer of a workload under one combination of the swept parameters.
struct Point {
  std::size_t index = 0;       // in the sweep's order: configurations, then workloads, then layers
  std::size_t configuration = 0;  // which combination of the swept values
  std::string workload;
  std::size_t layer_index = 0;
  Gemm layer;
  std::vector<Param> params;   // the fixed ones, then the swept ones (the swept() order)
};
// Every point: for each configuration (the zip's rows crossed with the grid's product), every layer of every
// workload. Throws SpecError when the sweep would exceed kMaxPoints.
inline constexpr std::size_t kMaxPoints = 1000000;
std::vector<Point> expand(const SweepSpec& spec);

// The value of the parameter `name` at `p`, or null.
const nlohmann::json* find_param(const Point& p, const std::string& name);

// The `pe-vp gemm` arguments of a point (without the program name): the shape, the gemm options, --set for
// configuration keys, --csr for CSR fields. Sweeps default to --mode timing and --no-check (set mode / check).
std::vector<std::string> gemm_arguments(const Point& p);
// A parameter value as the command line spells it: integers in decimal, booleans true / false, strings as they are.
std::string value_text(const nlohmann::json& v);

}  // namespace pevp::sweep
