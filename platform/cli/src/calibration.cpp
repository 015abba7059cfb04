#include "pevp/platform/calibration.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "pevp/isa/encode.h"
#include "pevp/isa/instruction.h"
#include "pevp/isa/layout.h"
#include "pevp/pe_array/mx.h"
#include "pevp/pe_array/compute.h"
#include "pevp/platform/driver.h"
#include "pevp/platform/virtual_platform.h"

namespace pevp::platform {

namespace {

constexpr std::uint32_t kPsumBase = isa::ArrayGeometry::kPsumBase;
constexpr unsigned kShortRun = 4, kLongRun = 20;  // steps; the interval is their difference / 16

std::uint32_t sbuf_offset(unsigned i, unsigned bytes_per_step) {
  // Moving data rotates through the partition above the stationaries (64 KiB up).
  const unsigned slots = (128 * 1024) / std::max(bytes_per_step, 1u);
  return 0x10000 + (i % slots) * bytes_per_step;
}

unsigned element_bytes(const StreamSpec& s) { return static_cast<unsigned>(pe::operand_bytes(s.dtype)); }

// Elements per partition and column: fp8 double_row packs two contraction rows.
unsigned pack(const StreamSpec& s) { return s.perf == isa::perf_opt::FP8_DOUBLE_ROW ? 2 : 1; }
bool c256(const StreamSpec& s) { return s.m > 128; }
isa::Placement tile_of(const StreamSpec& s) { return {0, 128, 0, c256(s) ? 256u : 128u}; }

isa::LdweightsArgs weights(const StreamSpec& s, unsigned i) {
  isa::LdweightsArgs a;
  const unsigned eb = element_bytes(s), per = s.m * pack(s);
  a.src = isa::Pattern::row(static_cast<std::uint32_t>((i % 64) * per * eb), static_cast<std::uint16_t>(per));
  a.in_dtype = s.dtype;
  a.fp32_mode = s.fp32_mode;
  a.num_active_cols = s.m;
  a.tile = tile_of(s);
  a.perf = s.perf;
  return a;
}

isa::MatmulArgs matmul(const StreamSpec& s, unsigned i) {
  isa::MatmulArgs a;
  const unsigned eb = element_bytes(s), per = s.n * pack(s);
  a.src = isa::Pattern::row(sbuf_offset(i, per * eb), static_cast<std::uint16_t>(per));
  // A transpose writes N partitions of M; a c256 tile both column halves (2 x N fp32: two banks at N = 512).
  const std::uint32_t dst = kPsumBase + (c256(s) ? (i % 4) * 4096 : (i % 8) * 2048);
  if (s.transpose)
    a.dst = isa::Pattern::row(dst, static_cast<std::uint16_t>(s.m));
  else if (c256(s))
    a.dst = {dst, {1, 0, static_cast<std::int16_t>(s.n)}, {static_cast<std::uint16_t>(s.n), 1, 2}};
  else
    a.dst = isa::Pattern::row(dst, static_cast<std::uint16_t>(s.n));
  a.in_dtype = s.dtype;
  a.fp32_mode = s.fp32_mode;
  a.num_active_cols = s.m;
  a.tile = tile_of(s);
  a.perf = s.perf;
  a.xpose = s.transpose;
  a.psum_flags = isa::psum_flags::SINGLE;
  return a;
}

// An MX step's source: x4 words (one or two per column) and their scales 32 KiB above in the same partitions.
// The values do not matter for the timing; the addresses stay inside SBUF.
constexpr std::uint32_t kMxScaleOffset = 0x8000;
void mx_source(isa::Encoder& e, isa::Generation gen, std::uint32_t start, unsigned words) {
  if (isa::is_maverick(gen)) {
    e.set("src_mem_pattern.start_addr", start | isa::ADDR4MARKER_MXTENSOR_V2)
        .set("src_mem_pattern.scale_addr", start + kMxScaleOffset)
        .set("src_mem_pattern.step_elem[0]", 1)
        .set("src_mem_pattern.num_elem[0]", words)
        .set("src_mem_pattern.num_elem[1]", 1)
        .set("tile_size.row", isa::tile_size::R128)
        .set("tile_size.col", isa::tile_size::C128);
  } else {
    e.set("src_mem_pattern.start_addr", start)
        .set("src_mem_pattern.scale_addr", start + kMxScaleOffset)
        .set("src_mem_pattern.step_elem", 1)
        .set("src_mem_pattern.num_elem", words)
        .set("row_grp", 0xF)
        .set("col_grp", 0xF);
  }
}
unsigned mx_words(const StreamSpec& s, unsigned columns) {
  return columns * pe::mx_packing(static_cast<std::int64_t>(*s.mx))->words();
}
isa::RawInstruction mx_weights(isa::Generation gen, const StreamSpec& s, unsigned i) {
  isa::Encoder e(gen, isa::is_maverick(gen) ? isa::Opcode::LDWEIGHTS : isa::Opcode::LDWEIGHTS_MX);
  const unsigned words = mx_words(s, s.m);
  mx_source(e, gen, static_cast<std::uint32_t>((i % 8) * words * pe::mx_word_bytes(s.dtype)), words);
  e.set("in_dtype", static_cast<int>(s.dtype)).set("perf_mode", static_cast<int>(*s.mx));
  e.set("num_active_rows", 128).set("num_active_cols", s.m);
  return e.bytes();
}
isa::RawInstruction mx_matmul(isa::Generation gen, const StreamSpec& s, unsigned i) {
  isa::Encoder e(gen, isa::is_maverick(gen) ? isa::Opcode::MATMUL : isa::Opcode::MATMUL_MX);
  const unsigned words = mx_words(s, s.n);
  // Moving words rotate through 16 KiB above the stationaries (their scales 32 KiB above them).
  const unsigned bytes = words * static_cast<unsigned>(pe::mx_word_bytes(s.dtype));
  mx_source(e, gen, 0x4000 + (i % std::max(1u, 0x4000 / bytes)) * bytes, words);
  e.set("in_dtype", static_cast<int>(s.dtype))
      .set("perf_mode", static_cast<int>(*s.mx))
      .set("out_dtype", static_cast<int>(isa::Dtype::FP32))
      .set("dst_mem_pattern.start_addr", kPsumBase + (i % 8) * 2048)
      .set("dst_mem_pattern.step_elem[0]", 1)
      .set("dst_mem_pattern.num_elem[0]", s.n)
      .set("dst_mem_pattern.num_elem[1]", 1)
      .set("dst_mem_pattern.num_elem[2]", 1)
      .set("num_active_rows", 128)
      .set("num_active_cols", s.m);
  if (isa::is_maverick(gen))
    e.set("flags.accumulate_flag", 0);
  else
    e.set("psum_accumulate_flags", isa::psum_flags::SINGLE);
  return e.bytes();
}

// A sparse stream's steps (D-SPARSE-TIMING) on the full tile: zero tags (each cell fmap 0 of row group 0's rows, valid
// on a 128-row tile), then MatmulSparse of F fmaps of N elements each.
void sparse_tile(isa::Encoder& e, isa::Generation gen) {
  e.set("num_active_rows", 128).set("num_active_cols", 128);
  if (isa::is_maverick(gen))
    e.set("tile_size.row", isa::tile_size::R128).set("tile_size.col", isa::tile_size::C128);
  else
    e.set("row_grp", 0xF).set("col_grp", 0xF);
}
isa::RawInstruction sparse_tags(isa::Generation gen) {
  isa::Encoder e(gen, isa::Opcode::LDTAGS);
  e.set("src_mem_pattern.start_addr", 0x8000)
      .set("src_mem_pattern.step_elem[0]", 1)
      .set("src_mem_pattern.num_elem[0]", 128 / 4)
      .set("src_mem_pattern.num_elem[1]", 1)
      .set("src_mem_pattern.num_elem[2]", 1)
      .set("in_dtype", static_cast<int>(isa::Dtype::UINT16));
  sparse_tile(e, gen);
  return e.bytes();
}
isa::RawInstruction sparse_matmul(isa::Generation gen, const StreamSpec& s, unsigned i) {
  isa::Encoder e(gen, isa::Opcode::MATMUL_SPARSE);
  e.set("src_mem_pattern.start_addr", sbuf_offset(i, s.fmaps * s.n * element_bytes(s)))
      .set("src_mem_pattern.step_elem[0]", 1)
      .set("src_mem_pattern.num_elem[0]", s.n)
      .set("src_mem_pattern.num_elem[1]", 1)
      .set("src_mem_pattern.num_elem[2]", 1)
      .set("src_mem_pattern.step_elem[3]", s.n)
      .set("src_mem_pattern.num_elem[3]", s.fmaps)
      .set("in_dtype", static_cast<int>(s.dtype))
      .set("dst_mem_pattern.start_addr", kPsumBase + (i % 8) * 2048)
      .set("dst_mem_pattern.step_elem[0]", 1)
      .set("dst_mem_pattern.num_elem[0]", s.n)
      .set("dst_mem_pattern.num_elem[1]", 1)
      .set("dst_mem_pattern.num_elem[2]", 1)
      .set("psum_accumulate_flags", isa::psum_flags::SINGLE);
  if (isa::is_v4_plus(gen)) e.set("flags.accumulate_flag", 0);
  sparse_tile(e, gen);
  return e.bytes();
}

}  // namespace

std::vector<isa::RawInstruction> calibration_stream(isa::Generation gen, const StreamSpec& s, unsigned pairs,
                                                    bool distinct) {
  std::vector<isa::RawInstruction> out;
  if (s.seed) {  // seed move after seed move: each an identity load and a 16-row transposing move of 128 partitions
    isa::PeSeedArgs a;
    a.mode = static_cast<isa::PeSeedMode>(s.seed);
    a.identity = isa::Pattern::row(0, 16);
    a.identity_dtype = isa::Dtype::BFLOAT16;
    if (a.mode == isa::PeSeedMode::SAVE_SEED)
      a.dst_seed = {kPsumBase, {1, 512}, {2, 8}};
    else
      a.src_seed = {0x10000, {1, 0}, {128, 1}};  // 16 partitions x 128 seeds
    for (unsigned i = 0; i < pairs; ++i) {
      a.events.update_value = static_cast<std::uint16_t>(distinct ? i : 0);  // distinct records when asked
      if (distinct) a.events.update_mode = isa::UpdateMode::SET;
      out.push_back(isa::encode_pe_seed(gen, a));
    }
    return out;
  }
  if (s.fmaps) {
    out.push_back(isa::encode_ldweights(gen, weights(s, 0)));
    out.push_back(sparse_tags(gen));
    for (unsigned i = 0; i < pairs; ++i) out.push_back(sparse_matmul(gen, s, distinct ? i : i % 8));
    return out;
  }
  if (s.mx) {
    if (!s.reload_weights) out.push_back(mx_weights(gen, s, 0));
    for (unsigned i = 0; i < pairs; ++i) {
      if (s.reload_weights) out.push_back(mx_weights(gen, s, i));
      out.push_back(mx_matmul(gen, s, distinct ? i : i % 8));
    }
    return out;
  }
  if (s.n == 0) {  // weight loads only
    for (unsigned i = 0; i < pairs; ++i) out.push_back(isa::encode_ldweights(gen, weights(s, distinct ? i : 0)));
    return out;
  }
  if (!s.reload_weights) out.push_back(isa::encode_ldweights(gen, weights(s, 0)));
  for (unsigned i = 0; i < pairs; ++i) {
    if (s.reload_weights) out.push_back(isa::encode_ldweights(gen, weights(s, i)));
    out.push_back(isa::encode_matmul(gen, matmul(s, distinct ? i : i % 8)));
  }
  return out;
}

std::vector<StreamResult> measure_streams(const VpConfig& config, const std::vector<StreamSpec>& specs) {
  // The streams are laid out for the preset array and memories (128 x 128, 2 KiB banks) and the public figures
  // they are compared with are for it.
  if (config.geometry != isa::preset_geometry(config.gen()))
    throw std::invalid_argument("the calibration streams and the public figures are for the generation's preset "
                                "array; run it without geometry.* settings");
  VirtualPlatform vp(config);
  std::vector<StreamResult> results;
  vp.run([&](Driver& d) {
    d.arm();
    // Each run spans from its first micro-op's start to its last one's
    // completion (the last PSUM commit, whatever matmul_done_last says).
    arrseq::Cycle first = 0, last = 0;
    bool any = false;
    vp.platform().arr_seq.observer = [&](const pe::MicroOp&, const arrseq::Slot& slot) {
      first = any ? std::min(first, slot.start) : slot.start;
      last = any ? std::max(last, slot.complete) : slot.complete;
      any = true;
    };
    const auto run = [&](const StreamSpec& s, unsigned steps) {
      any = false;
      d.submit(calibration_stream(config.gen(), s, steps));
      const Completion c = d.wait_idle();
      if (!c.done || c.error)
        throw std::runtime_error("calibration stream '" + s.name + "' did not complete: " +
                                 (d.error_record() ? d.error_record()->describe() : std::string("timeout")));
      d.clear_done();
      // Let it drain completely, so the next run starts on an idle array.
      const sc_core::sc_time end = vp.platform().arr_seq.to_time(last);
      if (end > sc_core::sc_time_stamp()) sc_core::wait(end - sc_core::sc_time_stamp());
      return static_cast<double>(last - first);
    };
    for (const StreamSpec& s : specs) {
      StreamResult r;
      r.spec = s;
      r.first_cycles = run(s, 1);
      const double short_run = run(s, kShortRun), long_run = run(s, kLongRun);
      r.interval = (long_run - short_run) / (kLongRun - kShortRun);
      r.macs_per_cycle = s.n == 0 || s.transpose || s.seed ? 0.0 : static_cast<double>(s.rows()) * s.m * s.n / r.interval;
      results.push_back(r);
    }
    vp.platform().arr_seq.observer = nullptr;
  });
  return results;
}

std::vector<StreamSpec> calibration_table_streams(isa::Generation gen) {
  std::vector<StreamSpec> out;
  for (unsigned n : {32u, 64u, 128u, 256u, 512u})
    out.push_back({"bf16 Matmul, N=" + std::to_string(n), isa::Dtype::BFLOAT16, isa::Fp32Mode::None, n, 128, false, 0});
  for (unsigned n : {32u, 128u, 512u})
    out.push_back({"fp32 Matmul, N=" + std::to_string(n), isa::Dtype::FP32, isa::Fp32Mode::High, n, 128, false, 0});
  out.push_back({"bf16 Ldweights alone, M=128", isa::Dtype::BFLOAT16, isa::Fp32Mode::None, 0, 128, false, 0});
  for (unsigned n : {32u, 64u, 128u, 512u})
    out.push_back({"bf16 Ldweights + Matmul, N=" + std::to_string(n), isa::Dtype::BFLOAT16, isa::Fp32Mode::None, n,
                   128, true, 0});
  out.push_back({"fp32 Ldweights + Matmul, N=32", isa::Dtype::FP32, isa::Fp32Mode::High, 32, 128, true, 0});
  // fp8 double_row is perf_opt, a field of CAYMAN and MARIANA only: MAVERICK's
  // perf_mode pumps MX sources alone (rule perf_mode.mx_only).
  // The TensorE transpose: a [128 x N] moving tile through the identity onto N partitions.
  for (unsigned n : {32u, 128u})
    out.push_back({"bf16 transpose, N=" + std::to_string(n), isa::Dtype::BFLOAT16, isa::Fp32Mode::None, n, 128, false,
                   0, true});
  out.push_back({"fp32 transpose, N=128", isa::Dtype::FP32, isa::Fp32Mode::High, 128, 128, false, 0, true});
  if (isa::is_v4(gen))
    for (const std::uint8_t mode : {std::uint8_t{1}, std::uint8_t{2}})
      out.push_back({mode == 1 ? "PeManageSeed LoadSeed" : "PeManageSeed SaveSeed", isa::Dtype::FP32,
                     isa::Fp32Mode::High, isa::kSeedCols, isa::kSeedRows, false, 0, false, mode});
  // Structured sparsity (every generation): F fmaps per partition, F dense rows per PE row (D-SPARSE-TIMING).
  for (const auto& [name, fmaps, n] : {std::tuple{"sparse 4:8 (2:4, 1:2) bf16 Matmul, F=2, N=512", 2u, 512u},
                                        std::tuple{"sparse 4:12 bf16 Matmul, F=3, N=512", 3u, 512u},
                                        std::tuple{"sparse 4:16 (1:4, 2:8) bf16 Matmul, F=4, N=128", 4u, 128u},
                                        std::tuple{"sparse 4:16 (1:4, 2:8) bf16 Matmul, F=4, N=512", 4u, 512u}}) {
    StreamSpec s{name, isa::Dtype::BFLOAT16, isa::Fp32Mode::None, n, 128, false, 0};
    s.fmaps = fmaps;
    out.push_back(s);
  }
  if (isa::is_v4_plus(gen)) {
    // MX fp8 (e4m3fn x4): the row pump of each perf mode (docs/timing.md 4.3, D-MX-TIMING).
    using M = isa::MxPerfMode;
    const auto mx = [&](const std::string& name, M mode, unsigned n, bool reload) {
      StreamSpec s{name, isa::Dtype::FP8_EXP4, isa::Fp32Mode::None, n, 128, reload, 0};
      s.mx = mode;
      out.push_back(s);
    };
    mx("MX fp8 perf NONE Matmul, N=128", M::NONE, 128, false);
    for (unsigned n : {32u, 128u, 512u}) mx("MX fp8 QUAD_ROW Matmul, N=" + std::to_string(n), M::QUAD_ROW, n, false);
    mx("MX fp8 OCT_ROW Matmul, N=512", M::OCT_ROW, 512, false);
    mx("MX fp8 QUAD_ROW Ldweights + Matmul, N=128", M::QUAD_ROW, 128, true);
  }
  if (isa::is_maverick(gen)) {
    // The whole 128 x 256 array: a c256 tile folds columns 128-255 into the destination's upper half.
    for (unsigned n : {128u, 512u})
      out.push_back({"bf16 c256 Matmul, N=" + std::to_string(n), isa::Dtype::BFLOAT16, isa::Fp32Mode::None, n, 256,
                     false, 0});
    return out;
  }
  for (unsigned n : {32u, 128u, 512u})
    out.push_back({"fp8 double_row Matmul, N=" + std::to_string(n), isa::Dtype::FP8_EXP4, isa::Fp32Mode::None, n, 128,
                   false, isa::perf_opt::FP8_DOUBLE_ROW});
  return out;
}

std::string format_calibration_table(const std::vector<StreamResult>& results, const VpConfig& config) {
  const auto& t = config.platform.arr_seq.timing;
  const double init = t.mm_init_latency;
  std::ostringstream out;
  out << "| stream | model: cycles per step | model: MACs/cycle | public figure (FACTS.md) |\n"
      << "|---|---|---|---|\n";
  char line[256];
  for (const StreamResult& r : results) {
    const StreamSpec& s = r.spec;
    std::string expect;
    if (s.n == 0) {
      expect = "LS ~ elements/4 = " + std::to_string(s.m / 4);
    } else {
      const double mm = std::max<double>(s.n, init);
      const auto num = [](double x) { return std::to_string(static_cast<long long>(x)); };
      if (s.seed) {
        const double xpose = std::max<double>(isa::kSeedRows, std::min<double>(64, s.n));
        expect = "a 16-row fp32 transpose: max(P, min(64, F)) x 2 = " + num(2 * xpose) + "; LS of 16 hidden";
      } else if (s.transpose) {
        const double xpose = std::max<double>(128, std::min<double>(64, s.n));
        expect = "max(P, min(64, F)) = " + num(xpose) +
                 (s.dtype == isa::Dtype::FP32 ? "; fp32 2x faster than 4x: " + num(2 * xpose) : "");
      } else if (s.dtype == isa::Dtype::FP32) {
        expect = "~4x bf16 (" + num(4 * mm) + " by 4 x max(N, 64))";
      } else if (s.mx && *s.mx == isa::MxPerfMode::NONE) {
        expect = "4 packed rows a cycle each: 4 x max(N, 64) = " + num(4 * mm) + ", bf16's MACs/cycle";
      } else if (s.mx) {
        expect = "K = " + num(s.rows()) + " in the time of 128: max(N, 64) = " + num(mm) + ", " +
                 num(s.rows() / 128) + "x bf16 MACs/cycle" +
                 (*s.mx == isa::MxPerfMode::QUAD_ROW ? " (v4: 315 MXFP8 = 4 x 79 bf16 TFLOPS)" : "");
      } else if (s.fmaps) {
        expect = "K = " + num(s.rows()) + " dense rows in the time of 128: max(N, 64) = " + num(mm) + ", " +
                 num(s.fmaps) + "x bf16 MACs/cycle" + (s.fmaps == 4 ? " (v3: up to 316 sparse = 4 x 79 TFLOPS)" : "");
      } else if (s.perf == isa::perf_opt::FP8_DOUBLE_ROW) {
        expect = "K = 256 in the time of 128: max(N, 64) = " + num(mm) + ", 2x bf16 MACs/cycle";
      } else {
        expect = "max(N, 64) = " + num(mm) + (s.m > 128 ? ", the 128 x 256 array: 2x the 128 x 128 MACs/cycle" : "");
      }
      const unsigned ls = s.m / 4 * (s.dtype == isa::Dtype::FP32 ? t.fp32_factor : 1);
      if (s.reload_weights) expect += ls + t.ls_to_mm_cycles <= mm ? "; LS (" + std::to_string(ls) + ") hidden behind MM"
                                                                  : "; LS-bound (LS " + std::to_string(ls) + ")";
    }
    std::snprintf(line, sizeof line, "| %s | %.1f | %.0f | %s |\n", s.name.c_str(), r.interval, r.macs_per_cycle,
                  expect.c_str());
    out << line;
  }
  return out.str();
}

}  // namespace pevp::platform
