// The timing model against the public figures (FACTS.md "Timing"): runs
// back-to-back instruction streams through the whole platform and measures
// their steady-state initiation interval -- the table in docs/timing.md, the
// `pe-vp calibrate` command and the calibration test all come from here.
//
// A stream's steady-state interval is measured as the difference between a
// long and a short run of the same stream, divided by the extra pairs: the
// first instruction's fill, drain and PSUM latency cancel out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pevp/isa/builders.h"
#include "pevp/platform/config.h"

namespace pevp::platform {

struct StreamSpec {
  std::string name;           // "bf16 MM N=128"
  isa::Dtype dtype = isa::Dtype::BFLOAT16;
  isa::Fp32Mode fp32_mode = isa::Fp32Mode::None;
  unsigned n = 128;           // moving free size per Matmul (0: no Matmul, a weight-load-only stream)
  unsigned m = 128;           // stationary free size (num_active_cols); 256: MAVERICK's whole c256 tile
  bool reload_weights = false;  // a new stationary before every Matmul (LS + MM pairs)
  std::uint8_t perf = 0;        // perf_opt: 1 = fp8 double_row (two contraction rows per partition: K = 256)
  bool transpose = false;       // transposing Matmuls (the TensorE transpose through the identity)
  // PeManageSeed instructions (v4) of this mode (1 LoadSeed, 2 SaveSeed; 0: none): the seed move through the 16 x 16
  // identity.
  std::uint8_t seed = 0;
  // An MX source (dtype an MX dtype) with this MX_PERF_MODE: v4's LdweightsMX / MatmulMX, v5's MXTENSOR_V2 member.
  std::optional<isa::MxPerfMode> mx = std::nullopt;
  // MatmulSparse with this many fmaps per partition (2..4; 0: dense), after one LdTags and one Ldweights.
  unsigned fmaps = 0;

  // Logical contraction rows K: 256 for fp8 double_row, 4 or 8 per partition for MX, F per partition for a sparse
  // matmul -- its dense-equivalent rows (docs/timing.md 4.1, D-SPARSE-TIMING).
  unsigned rows() const {
    if (mx) return *mx >= isa::MxPerfMode::OCT_ROW ? 1024u : 512u;
    if (fmaps) return 128u * fmaps;
    return perf == 1 ? 256u : 128u;
  }
};

// The instructions of `pairs` steps of `spec` on the full 128x128 tile. SBUF
// and PSUM addresses rotate, so no two records are identical when `distinct`.
std::vector<isa::RawInstruction> calibration_stream(isa::Generation gen, const StreamSpec& spec, unsigned pairs,
                                                    bool distinct = false);

struct StreamResult {
  StreamSpec spec;
  double interval = 0;      // steady-state cycles per step (one Matmul, or one weight load)
  double first_cycles = 0;  // cycles of a one-step stream (latency included)
  double macs_per_cycle = 0;
};

// Runs every stream on one platform (timing-only unless `config` says
// otherwise) and measures each. Throws on a fault.
std::vector<StreamResult> measure_streams(const VpConfig& config, const std::vector<StreamSpec>& specs);

// The streams of the docs/timing.md table that `gen` can run (fp8 double_row
// only where perf_opt exists: not on MAVERICK).
std::vector<StreamSpec> calibration_table_streams(isa::Generation gen = isa::Generation::MARIANA);

// The table as Markdown: stream, the model's interval, the public figure.
std::string format_calibration_table(const std::vector<StreamResult>& results, const VpConfig& config);

}  // namespace pevp::platform
