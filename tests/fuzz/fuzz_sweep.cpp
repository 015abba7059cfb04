// libFuzzer harness: the sweep spec (pevp/sweep/spec.h) on arbitrary text -- TOML or JSON, as `pe-vp sweep SPEC`
// reads it. Its contract: every rejected spec is a SpecError (the harness catches nothing else: a toml++ or
// nlohmann::json exception, a WorkloadError, std::out_of_range or bad_alloc escaping is a finding). For a spec it
// accepts:
//   - expand() gives configurations x layers points, every one with the fixed parameters then the swept ones, in
//     order, and a configuration index below the number of configurations (when the sweep is small enough to
//     expand here; a larger one must be refused by expand() with a SpecError or expanded the same way);
//   - gemm_arguments() of every point is the shape (--m --k --n the layer's) followed by options, and throws nothing.
// And the nesting bound (D-NESTING-DEPTH): a spec json_too_deep / toml_too_deep finds a place in is refused with
// "nested deeper than 64 levels"; every other one, when its document parses (parse_json / parse_toml), is at most 64
// levels deep, measured on the parsed document with a walk of its own.
// Topology and ONNX model paths resolve against a folder that does not exist, so no file is read (and no ONNX reader
// is started: a model that is not there is refused before the script runs).
// Input: byte 0 bit 0 selects the format (0 TOML, 1 JSON); the rest is the text.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_util.h"
#include "pevp/documents/documents.h"
#include "pevp/sweep/spec.h"

namespace {

using namespace pevp;
constexpr std::size_t kMaxExpandedHere = 20000;

void check_points(const sweep::SweepSpec& spec) {
  std::size_t configurations = spec.zip.empty() ? 1 : spec.zip.front().second.size(), layers = 0;
  for (const auto& [k, v] : spec.grid) {
    if (v.empty() || configurations > kMaxExpandedHere / v.size()) return;  // not expanded here
    configurations *= v.size();
  }
  for (const sweep::Network& w : spec.workloads) layers += w.layers.size();
  if (layers == 0 || configurations > kMaxExpandedHere / layers) return;
  const std::vector<sweep::Point> points = sweep::expand(spec);
  if (points.size() != configurations * layers)
    pevp::fuzz::fail("fuzz_sweep", std::to_string(points.size()) + " points, not " + std::to_string(configurations) +
                                       " configurations x " + std::to_string(layers) + " layers");
  const std::vector<std::string> swept = spec.swept();
  for (const sweep::Point& p : points) {
    if (p.configuration >= configurations) pevp::fuzz::fail("fuzz_sweep", "configuration index out of range");
    if (p.params.size() != spec.fixed.size() + swept.size())
      pevp::fuzz::fail("fuzz_sweep", "a point's parameters are not the fixed then the swept ones");
    for (std::size_t i = 0; i < swept.size(); ++i)
      if (p.params[spec.fixed.size() + i].name != swept[i]) pevp::fuzz::fail("fuzz_sweep", "swept order lost");
    const std::vector<std::string> args = sweep::gemm_arguments(p);
    if (args.size() < 6 || args[0] != "--m" || args[1] != std::to_string(p.layer.m) || args[3] != std::to_string(p.layer.k) ||
        args[5] != std::to_string(p.layer.n))
      pevp::fuzz::fail("fuzz_sweep", "gemm_arguments does not start with the layer's shape");
  }
}

// The most containers any value of `doc` sits inside, walked with a stack of its own (no recursion).
std::size_t nesting_depth(const nlohmann::ordered_json& doc) {
  std::size_t deepest = 0;
  std::vector<std::pair<const nlohmann::ordered_json*, std::size_t>> todo = {{&doc, 0}};
  while (!todo.empty()) {
    const auto [j, depth] = todo.back();
    todo.pop_back();
    if (!j->is_structured()) continue;
    deepest = std::max(deepest, depth + 1);
    for (const nlohmann::ordered_json& child : *j) todo.emplace_back(&child, depth + 1);
  }
  return deepest;
}

void check_nesting(std::string_view text, sweep::SpecFormat format, const std::string* error) {
  const bool toml = format == sweep::SpecFormat::Toml;
  const auto too_deep =
      toml ? documents::toml_too_deep(text) : documents::json_too_deep(text, documents::JsonComments::Refused);
  if (too_deep) {
    if (!error || error->find("nested deeper than 64 levels") == std::string::npos)
      pevp::fuzz::fail("fuzz_sweep",
                       "a spec nested past the limit is not refused for it: " + (error ? *error : "accepted"));
    return;
  }
  try {
    const nlohmann::ordered_json doc = toml ? documents::parse_toml(text, "fuzz.spec")
                                            : documents::parse_json<nlohmann::ordered_json>(text, "fuzz.spec");
    if (nesting_depth(doc) > documents::kMaxNestingDepth)
      pevp::fuzz::fail("fuzz_sweep", "the text scan passed a document " + std::to_string(nesting_depth(doc)) +
                                         " levels deep");
  } catch (const documents::DocumentError&) {  // a syntax error or a date: the parse's own refusal
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto format = (data[0] & 1) ? sweep::SpecFormat::Json : sweep::SpecFormat::Toml;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const sweep::SweepSpec spec = sweep::parse_spec(text, format, "fuzz.spec", "/nonexistent-pevp-fuzz");
    check_nesting(text, format, nullptr);
    check_points(spec);
  } catch (const sweep::SpecError& e) {
    const std::string error = e.what();
    check_nesting(text, format, &error);
  }
  return 0;
}
