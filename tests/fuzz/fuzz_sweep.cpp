// libFuzzer harness: the sweep spec (pevp/sweep/spec.h) on arbitrary text -- TOML or JSON, as `pe-vp sweep SPEC`
// reads it. Its contract: every rejected spec is a SpecError (the harness catches nothing else: a toml++ or
// nlohmann::json exception, a WorkloadError, std::out_of_range or bad_alloc escaping is a finding). For a spec it
// accepts:
//   - expand() gives configurations x layers points, every one with the fixed parameters then the swept ones, in
//     order, and a configuration index below the number of configurations (when the sweep is small enough to
//     expand here; a larger one must be refused by expand() with a SpecError or expanded the same way);
//   - gemm_arguments() of every point is the shape (--m --k --n the layer's) followed by options, and throws nothing.
// Topology paths resolve against a folder that does not exist, so no file is read.
// Input: byte 0 bit 0 selects the format (0 TOML, 1 JSON); the rest is the text.
#include <string>
#include <string_view>

#include "fuzz_util.h"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto format = (data[0] & 1) ? sweep::SpecFormat::Json : sweep::SpecFormat::Toml;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const sweep::SweepSpec spec = sweep::parse_spec(text, format, "fuzz.spec", "/nonexistent-pevp-fuzz");
    check_points(spec);
  } catch (const sweep::SpecError&) {
  }
  return 0;
}
