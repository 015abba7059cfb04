// The model's back-to-back intervals, measured by running instruction streams
// through the whole platform, against the public figures of FACTS.md "Timing":
//   MultiplyMoving II ~ max(N, MM_INIT_LATENCY = 64); fp32 ~4x; LoadStationary
//   ~ elements/4 (32 for 128) and hidden behind MM by the background load;
//   fp8 double_row 2x throughput (K = 256 in the time of 128); the TensorE
//   transpose max(P, min(64, F)), fp32 at 2x instead of 4x; MAVERICK's 128 x 256
//   array twice the MACs per cycle of a 128 x 128 one.
// The one deliberate difference: fp32 with N < 64 costs max(4N, 64) (the
// issue's formula), not the old API's 4 x max(N, 64) -- docs/timing.md.
#include <gtest/gtest.h>

#include <algorithm>

#include "pevp/platform/calibration.h"

namespace {

using namespace pevp;
using platform::StreamResult;

double public_mm_interval(unsigned n) { return std::max(n, 64u); }

TEST(Calibration, TimingOnlyStreamsMatchThePublicFigures) {
  platform::VpConfig config = platform::preset(isa::Generation::MARIANA);
  config.mode = platform::SimMode::Timing;
  const std::vector<StreamResult> results = platform::measure_streams(config, platform::calibration_table_streams());
  ASSERT_EQ(results.size(), platform::calibration_table_streams().size());
  double bf16_512 = 0, dr_512 = 0, quad_512 = 0, oct_512 = 0, sparse4_512 = 0;
  for (const StreamResult& r : results) {
    SCOPED_TRACE(r.spec.name);
    const unsigned n = r.spec.n;
    if (r.spec.seed) {
      EXPECT_DOUBLE_EQ(r.interval, std::max(16.0, std::min(64.0, 128.0)) * 2) << "a 16-row fp32 transpose";
      EXPECT_EQ(r.macs_per_cycle, 0.0);
      continue;
    }
    if (n == 0) {
      EXPECT_DOUBLE_EQ(r.interval, 128 / 4.0) << "LS ~ elements/4";
    } else if (r.spec.transpose) {
      const double p = 128, f = n;  // the [P x F] moving tile
      EXPECT_DOUBLE_EQ(r.interval, std::max(p, std::min(64.0, f)) * (r.spec.dtype == isa::Dtype::FP32 ? 2 : 1));
      EXPECT_EQ(r.macs_per_cycle, 0.0) << "a transpose moves data";
    } else if (r.spec.mx) {
      // docs/timing.md 4.3 (D-MX-TIMING): NONE feeds the 4 packed rows one per cycle, QUAD_ROW / OCT_ROW pump them.
      const bool none = *r.spec.mx == isa::MxPerfMode::NONE;
      const double rows = *r.spec.mx >= isa::MxPerfMode::OCT_ROW ? 1024 : 512;
      const double interval = none ? std::max(4.0 * n, 64.0) : public_mm_interval(n);
      EXPECT_DOUBLE_EQ(r.interval, interval);
      EXPECT_DOUBLE_EQ(r.macs_per_cycle, rows * 128 * n / interval);
      if (n == 512) (rows == 512 ? quad_512 : oct_512) = r.macs_per_cycle;
    } else if (r.spec.fmaps) {
      // D-SPARSE-TIMING: F fmaps per partition stream with each moving column, F dense rows per PE row.
      EXPECT_DOUBLE_EQ(r.interval, public_mm_interval(n)) << "K = 128 F dense rows in the time of 128";
      EXPECT_DOUBLE_EQ(r.macs_per_cycle, 128.0 * r.spec.fmaps * 128 * n / public_mm_interval(n));
      if (n == 512 && r.spec.fmaps == 4) sparse4_512 = r.macs_per_cycle;
    } else if (r.spec.perf == isa::perf_opt::FP8_DOUBLE_ROW) {
      EXPECT_DOUBLE_EQ(r.interval, public_mm_interval(n)) << "K = 256 in the time of 128";
      EXPECT_DOUBLE_EQ(r.macs_per_cycle, 256.0 * 128 * n / public_mm_interval(n));
      if (n == 512) dr_512 = r.macs_per_cycle;
    } else if (r.spec.dtype == isa::Dtype::FP32) {
      if (r.spec.reload_weights) {
        EXPECT_DOUBLE_EQ(r.interval, 128 + 4) << "fp32 LS (4 x 32) + ls_to_mm: the stream is LS-bound";
      } else {
        EXPECT_DOUBLE_EQ(r.interval, std::max(4.0 * n, 64.0));
        if (n >= 64) {
          EXPECT_DOUBLE_EQ(r.interval, 4 * public_mm_interval(n)) << "fp32 costs 4x";
        }
      }
    } else {
      EXPECT_DOUBLE_EQ(r.interval, public_mm_interval(n))
          << (r.spec.reload_weights ? "the 32-cycle LS is hidden behind the Matmul" : "max(N, 64)");
      if (n == 512 && !r.spec.reload_weights) bf16_512 = r.macs_per_cycle;
    }
    // A lone Matmul takes longer than its interval (fill, drain, commit); a
    // lone weight load is its interval.
    if (n == 0) {
      EXPECT_DOUBLE_EQ(r.first_cycles, r.interval);
    } else {
      EXPECT_GT(r.first_cycles, r.interval + 128 + 128);
    }
  }
  EXPECT_DOUBLE_EQ(bf16_512, 128.0 * 128);  // one 128-wide column per cycle: the published peak
  EXPECT_DOUBLE_EQ(dr_512, 2 * bf16_512) << "double_row: 2x throughput";
  EXPECT_DOUBLE_EQ(quad_512, 4 * bf16_512) << "MX QUAD_ROW: 4x (v4: 315 MXFP8 = 4 x 79 bf16 TFLOPS)";
  EXPECT_DOUBLE_EQ(oct_512, 8 * bf16_512) << "MX OCT_ROW: 8x";
  EXPECT_DOUBLE_EQ(sparse4_512, 4 * bf16_512) << "sparse F = 4 (1:4, 2:8, 4:16): 4x (v3: 316 = 4 x 79 TFLOPS)";
}

// The published sparse figure is NeuronCore-v3's: CAYMAN's F = 4 stream makes four times the dense peak's MACs.
TEST(Calibration, SparseOnCaymanIsFourTimesTheDensePeak) {
  platform::VpConfig config = platform::preset(isa::Generation::CAYMAN);
  config.mode = platform::SimMode::Timing;
  std::vector<platform::StreamSpec> specs;
  for (const platform::StreamSpec& s : platform::calibration_table_streams(isa::Generation::CAYMAN))
    if (s.fmaps == 4 && s.n == 512) specs.push_back(s);
  ASSERT_EQ(specs.size(), 1u);
  const std::vector<StreamResult> r = platform::measure_streams(config, specs);
  EXPECT_DOUBLE_EQ(r.at(0).interval, 512.0);
  EXPECT_DOUBLE_EQ(r.at(0).macs_per_cycle, 4.0 * 128 * 128) << "2 x 4 x 128 x 128 x 2.4 GHz = 314.6 TFLOPS (316)";
}

// With data, the same streams take the same time (functional + timing).
TEST(Calibration, BothModeGivesTheSameIntervalsAsTimingOnly) {
  platform::VpConfig config = platform::preset(isa::Generation::MARIANA);
  config.mode = platform::SimMode::Both;
  std::vector<platform::StreamSpec> specs;
  for (const platform::StreamSpec& s : platform::calibration_table_streams())
    if (!s.transpose && !s.seed) specs.push_back(s);  // these need an identity; the streams' SBUF holds zeros
  const std::vector<StreamResult> both = platform::measure_streams(config, specs);
  for (const StreamResult& r : both) {
    SCOPED_TRACE(r.spec.name);
    const bool mx_none = r.spec.mx && *r.spec.mx == isa::MxPerfMode::NONE;
    const double expected = r.spec.n == 0                          ? 32.0
                            : mx_none                               ? std::max(4.0 * r.spec.n, 64.0)
                            : r.spec.dtype == isa::Dtype::FP32 && r.spec.reload_weights ? 132.0
                            : r.spec.dtype == isa::Dtype::FP32      ? std::max(4.0 * r.spec.n, 64.0)
                                                                    : public_mm_interval(r.spec.n);
    EXPECT_DOUBLE_EQ(r.interval, expected);
  }
}

// The parameters move the figures as the formulas say: MM_INIT_LATENCY = 100
// raises the floor, a 2 GHz clock leaves cycles unchanged.
TEST(Calibration, ParametersMoveTheFiguresAsTheFormulasSay) {
  platform::VpConfig config = platform::preset(isa::Generation::CAYMAN);
  config.mode = platform::SimMode::Timing;
  platform::apply_override(config, "timing.mm_init_latency=100");
  platform::apply_override(config, "tensor_engine.clock_ghz=2.0");
  const auto r = platform::measure_streams(
      config, {{"n32", isa::Dtype::BFLOAT16, isa::Fp32Mode::None, 32, 128, false, 0},
               {"n128", isa::Dtype::BFLOAT16, isa::Fp32Mode::None, 128, 128, false, 0}});
  EXPECT_DOUBLE_EQ(r[0].interval, 100.0);
  EXPECT_DOUBLE_EQ(r[1].interval, 128.0);
}

}  // namespace

namespace {
// The streams and the public figures are for the preset array: another geometry is refused, before any platform
// is built, and MAVERICK (no perf_opt) runs without the fp8 double_row rows.
TEST(Calibration, OnlyThePresetGeometryIsCalibrated) {
  pevp::platform::VpConfig c = pevp::platform::preset(pevp::isa::Generation::MARIANA);
  pevp::platform::apply_overrides(c, {"geometry.pe_rows=64", "geometry.pe_cols=64"});
  EXPECT_THROW(pevp::platform::measure_streams(c, pevp::platform::calibration_table_streams()), std::invalid_argument);
  const auto maverick = pevp::platform::calibration_table_streams(pevp::isa::Generation::MAVERICK);
  const auto mariana = pevp::platform::calibration_table_streams(pevp::isa::Generation::MARIANA);
  EXPECT_EQ(maverick.size() + 3, mariana.size());  // three double_row rows and two seed rows against two c256 rows
  for (const auto& s : maverick) EXPECT_EQ(s.perf, 0) << s.name;
}

// MAVERICK's whole 128 x 256 array: one 256-wide column per cycle, twice the 128 x 128 tile's MACs, in both modes
// (the folded c256 tile executes). One platform per test process (SystemC elaborates once).
void expect_c256_doubles_the_peak(pevp::platform::SimMode mode) {
  {
    pevp::platform::VpConfig c = pevp::platform::preset(pevp::isa::Generation::MAVERICK);
    c.mode = mode;
    const pevp::platform::StreamSpec narrow{"c128", pevp::isa::Dtype::BFLOAT16, pevp::isa::Fp32Mode::None, 512, 128,
                                           false, 0};
    pevp::platform::StreamSpec wide = narrow;
    wide.name = "c256";
    wide.m = 256;
    const auto r = pevp::platform::measure_streams(c, {narrow, wide});
    EXPECT_DOUBLE_EQ(r[0].interval, 512.0);
    EXPECT_DOUBLE_EQ(r[1].interval, 512.0);
    EXPECT_DOUBLE_EQ(r[0].macs_per_cycle, 128.0 * 128);
    EXPECT_DOUBLE_EQ(r[1].macs_per_cycle, 128.0 * 256);
  }
}
TEST(Calibration, MaverickC256TileDoublesThePeakTimingOnly) { expect_c256_doubles_the_peak(pevp::platform::SimMode::Timing); }
TEST(Calibration, MaverickC256TileDoublesThePeakWithData) { expect_c256_doubles_the_peak(pevp::platform::SimMode::Both); }
}  // namespace
