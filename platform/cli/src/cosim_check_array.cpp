// `pe-vp cosim-check --unit pe_array`: the PE array executor with its C++ arithmetic and the same executor with the
// Verilated PE tile as its datapath (pe_array.impl = rtl), micro-op by micro-op on one random valid sequence
// (docs/cosim.md "The datapath in the loop").
//
// Both executors read one SBUF and write their own PSUM, which start equal. After every micro-op the whole of both
// PSUMs is compared word for word (so a stray write shows too), and the tile's time for the micro-op is compared
// with what the cost model predicts for the part of the array the tile models. The first divergent micro-op stops
// the run; the tile's waveform around it is written by replaying the seed in this process (the tile is plain C++,
// no SystemC to elaborate again), with the trace open over the window of micro-ops around it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cosim_rng.h"
#include "pevp/arr_seq/cost_model.h"
#include "pevp/coverage/collector.h"
#include "pevp/files/output_file.h"
#include "pevp/isa/opcode.h"
#include "pevp/numerics/convert.h"
#include "pevp/pe_array/executor.h"
#include "pevp/pe_array_rtl/rtl_datapath.h"
#include "pevp/platform/config.h"
#include "pevp/platform/cosim_check.h"

namespace pevp::platform {
namespace {

using cosim::Rng;

// ---- the sequence's distribution (docs/cosim.md "cosim-check --unit pe_array") ------------------------------------
// A weight load in kLoadOneIn micro-ops (and always first); the rest are matmuls on the loaded stationary.
constexpr std::uint64_t kLoadOneIn = 4;
// A matmul's moving free size N: 1..kMaxN (short streams are where the pipeline's edges are).
constexpr std::uint64_t kMaxN = 64;
// Elements: a special value (zero, Inf, NaN, subnormal, the largest finite, random bits) in kSpecialOneIn, else a
// value of moderate magnitude (exponent within kSpread of 1.0).
constexpr std::uint64_t kSpecialOneIn = 12;
constexpr int kSpread = 4;
// Where the operands lie in each SBUF partition: the stationary from byte 0, the moving data after it.
constexpr std::size_t kMovingOffset = 2048;
// The cycles the tile's times may differ from the C++ side's prediction by (ArrayBench::predicted): none.
constexpr std::uint64_t kTimingTolerance = 0;

std::string hex32(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

// A random 16-bit element of `dt`.
std::uint16_t random_element(Rng& rng, isa::Dtype dt) {
  const bool fp16 = dt == isa::Dtype::FP16;
  const unsigned mant_bits = fp16 ? 10 : 7, exp_bits = fp16 ? 5 : 8;
  const unsigned bias = (1u << (exp_bits - 1)) - 1, exp_max = (1u << exp_bits) - 1;
  const std::uint16_t sign = static_cast<std::uint16_t>((rng.u32() & 1u) << 15);
  const std::uint16_t mant = static_cast<std::uint16_t>(rng.u32() & ((1u << mant_bits) - 1));
  const auto make = [&](unsigned e, std::uint16_t m) { return static_cast<std::uint16_t>(sign | e << mant_bits | m); };
  if (rng.one_in(kSpecialOneIn)) {
    switch (rng.below(6)) {
      case 0: return make(0, 0);                                     // +-0
      case 1: return make(exp_max, 0);                               // +-Inf
      case 2: return make(exp_max, static_cast<std::uint16_t>(mant | 1));  // NaN
      case 3: return make(0, static_cast<std::uint16_t>(mant | 1));  // subnormal
      case 4: return make(exp_max - 1, static_cast<std::uint16_t>((1u << mant_bits) - 1));  // the largest finite
      default: return static_cast<std::uint16_t>(rng.u32());        // any bits
    }
  }
  const unsigned e = bias - kSpread + static_cast<unsigned>(rng.below(2 * kSpread + 1));
  return make(e, mant);
}

isa::AccessPattern row_pattern(std::uint32_t addr, unsigned n) {
  isa::AccessPattern p;
  p.start = p.start_raw = addr;
  p.dims = 1;
  p.step[0] = 1;
  p.num[0] = static_cast<std::int32_t>(n);
  return p;
}

std::string describe(const pe::MicroOp& op) {
  std::string s = pe::name(op.kind);
  s += std::string(" ") + (op.in_dtype == isa::Dtype::FP16 ? "fp16" : "bf16") + " k=" + std::to_string(op.k) +
       " m=" + std::to_string(op.m);
  if (op.kind == pe::MicroOpKind::Matmul)
    s += " n=" + std::to_string(op.src.num[0]) + (op.psum.accumulate ? " accumulate" : " overwrite");
  return s;
}

// The two executors, their memories and the sequence's generator.
class ArrayBench {
 public:
  ArrayBench(const isa::ArrayGeometry& geo, const CosimCheckCommand& cmd, pe_array_rtl::Variant variant)
      : geo_(geo),
        rng_(cmd.seed),
        cpp_(geo),
        rtl_exec_(geo),
        datapath_(geo.pe_rows, geo.pe_cols, variant),
        sbuf_(geo.sbuf_bytes()),
        psum_cpp_(geo.psum_bytes()),
        cost_(arrseq::TimingParams{}) {
    rtl_exec_.set_datapath(&datapath_);
    // PSUM starts as the same garbage in both: an overwrite must show, an accumulate adds onto it.
    Rng fill(cmd.seed ^ 0x5053554Dull);
    for (std::size_t i = 0; i < psum_cpp_.size(); i += 4) {
      const std::uint16_t lo = random_element(fill, isa::Dtype::BFLOAT16), hi = random_element(fill, isa::Dtype::BFLOAT16);
      const std::uint32_t w = std::uint32_t{hi} << 16 | lo;  // fp32 words of assorted values and specials
      std::memcpy(&psum_cpp_[i], &w, 4);
    }
    psum_rtl_ = psum_cpp_;
  }

  pe_array_rtl::RtlDatapath& datapath() { return datapath_; }

  // Runs micro-op `index` on both sides and compares; appends to r. False when it diverged.
  // `coverage`: where each micro-op both sides ran is counted (null = nowhere).
  bool step(std::uint64_t index, const CosimCheckCommand& cmd, ArrayCosimResult& r,
            coverage::Collector* coverage = nullptr) {
    const pe::MicroOp op = next_op(index);
    const pe::ExecResult a = op.kind == pe::MicroOpKind::WeightLoad ? cpp_.ldweights(op, sbuf_.data(), sbuf_.size())
                                                                    : cpp_.matmul(op, sbuf_.data(), sbuf_.size(),
                                                                                  psum_cpp_.data(), psum_cpp_.size());
    const pe::ExecResult b = op.kind == pe::MicroOpKind::WeightLoad
                                 ? rtl_exec_.ldweights(op, sbuf_.data(), sbuf_.size())
                                 : rtl_exec_.matmul(op, sbuf_.data(), sbuf_.size(), psum_rtl_.data(), psum_rtl_.size());
    ++r.micro_ops;
    const std::string what = "micro-op " + std::to_string(index) + " (" + describe(op) + ")";
    const auto report = [&](const std::string& line) {
      ++r.mismatches;
      if (r.reports.size() < cmd.max_reported) r.reports.push_back(line);
    };
    if (!a.ok || !b.ok) {  // the generator makes valid micro-ops only: either refusing one is a finding
      report(what + ": the C++ executor answered " + a.describe() + ", the RTL datapath " + b.describe());
      return false;
    }
    (op.kind == pe::MicroOpKind::WeightLoad ? r.weight_loads : r.matmuls)++;
    if (coverage) coverage->add(op, op.gen);
    (op.in_dtype == isa::Dtype::FP16 ? r.fp16 : r.bf16)++;
    if (op.kind == pe::MicroOpKind::Matmul && op.psum.accumulate) ++r.accumulating;
    const std::uint64_t before = r.mismatches;
    if (op.kind == pe::MicroOpKind::Matmul) {
      const std::size_t n = static_cast<std::size_t>(op.src.num[0]);
      r.psum_words += std::uint64_t{op.m} * n;
      // Every word of both PSUMs: the output's words name their element, a word outside it (a stray write) its
      // partition and offset.
      if (std::memcmp(psum_cpp_.data(), psum_rtl_.data(), psum_cpp_.size()) != 0) {
        const std::size_t pb = geo_.psum_partition_bytes();
        const std::size_t out0 = op.dst.start_raw - isa::ArrayGeometry::kPsumBase;
        for (std::size_t at = 0; at < psum_cpp_.size(); at += 4) {
          std::uint32_t e, g;
          std::memcpy(&e, &psum_cpp_[at], 4);
          std::memcpy(&g, &psum_rtl_[at], 4);
          if (e == g) continue;
          const std::size_t part = at / pb, off = at % pb;
          std::string where = "PSUM partition " + std::to_string(part) + " byte " + std::to_string(off);
          const std::size_t p0 = out0 / pb, o0 = out0 % pb;
          if (part >= p0 && part < p0 + op.m && off >= o0 && off < o0 + 4 * n)
            where += " = element [m " + std::to_string(part - p0) + "][n " + std::to_string((off - o0) / 4) + "]";
          else
            where += " (outside the output: a stray write)";
          report(what + ": " + where + ": expected (C++) " + hex32(e) + ", actual (RTL) " + hex32(g));
        }
      }
    }
    // The time: the tile's cycles to its last (and a matmul's first) PSUM word against the C++ side's prediction.
    const pe::DatapathTiming& t = rtl_exec_.datapath_timing();
    const pe::DatapathTiming expect = predicted(op);
    ++r.timing_compares;
    const auto off_by = [](std::uint64_t a, std::uint64_t b) { return a > b ? a - b : b - a; };
    if (off_by(t.cycles, expect.cycles) > kTimingTolerance)
      report(what + ": completion after " + std::to_string(t.cycles) + " tile cycles, predicted " +
             std::to_string(expect.cycles) + " (tolerance " + std::to_string(kTimingTolerance) + ")");
    if (op.kind == pe::MicroOpKind::Matmul && off_by(t.first_result, expect.first_result) > kTimingTolerance)
      report(what + ": first PSUM word after " + std::to_string(t.first_result) + " tile cycles, predicted " +
             std::to_string(expect.first_result) + " (tolerance " + std::to_string(kTimingTolerance) + ")");
    if (r.mismatches > before && !r.first_divergent) r.first_divergent = index;
    return r.mismatches == before;
  }

 private:
  // What the C++ side predicts the tile takes (docs/cosim.md "cosim-check --unit pe_array"): a weight load one
  // stationary row per cycle through the load port, max(K, 1); a matmul's last PSUM word N cycles of moving vectors
  // plus the wavefront's fill over the tile's R rows and drain over its C columns at the cost model's per-row and
  // per-column rates -- the skew spans the whole tile whatever K and M are active -- and its first word R + C + 1
  // after the first vector.
  pe::DatapathTiming predicted(const pe::MicroOp& op) const {
    if (op.kind == pe::MicroOpKind::WeightLoad) {
      const std::uint64_t rows = std::max(op.k, 1u);
      return {rows, rows};
    }
    const arrseq::TimingParams& p = cost_.params();
    const std::uint64_t wavefront =
        std::uint64_t{p.fill_cycles_per_row} * geo_.pe_rows + std::uint64_t{p.drain_cycles_per_col} * geo_.pe_cols;
    return {static_cast<std::uint64_t>(op.src.num[0]) + wavefront, wavefront + 1};
  }

  // The next micro-op of the sequence, its operands written to SBUF.
  pe::MicroOp next_op(std::uint64_t index) {
    pe::MicroOp op;
    op.instr_index = index;
    op.gen = isa::Generation::MARIANA;  // the preset the check runs on (run_array_cosim_check)
    if (index == 0 || rng_.one_in(kLoadOneIn)) {
      k_ = 1 + static_cast<unsigned>(rng_.below(geo_.pe_rows));
      m_ = 1 + static_cast<unsigned>(rng_.below(geo_.pe_cols));
      dtype_ = rng_.below(2) == 0 ? isa::Dtype::BFLOAT16 : isa::Dtype::FP16;
      k0_ = static_cast<unsigned>(rng_.below(geo_.partitions - k_ + 1));
      op.kind = pe::MicroOpKind::WeightLoad;
      op.opcode_byte = static_cast<std::uint8_t>(isa::Opcode::LDWEIGHTS);  // for messages and coverage
      op.src = row_pattern(static_cast<std::uint32_t>(k0_ * geo_.sbuf_partition_bytes), m_);
      fill_sbuf(k0_, k_, 0, m_);
    } else {
      const unsigned n = 1 + static_cast<unsigned>(rng_.below(kMaxN));
      op.kind = pe::MicroOpKind::Matmul;
      op.opcode_byte = static_cast<std::uint8_t>(isa::Opcode::MATMUL);
      op.src = row_pattern(static_cast<std::uint32_t>(k0_ * geo_.sbuf_partition_bytes + kMovingOffset), n);
      fill_sbuf(k0_, k_, kMovingOffset, n);
      const std::size_t pb = geo_.psum_partition_bytes();
      const std::size_t p0 = rng_.below(geo_.partitions - m_ + 1);
      const std::size_t off = 4 * rng_.below((pb - 4 * n) / 4 + 1);
      op.dst = row_pattern(static_cast<std::uint32_t>(isa::ArrayGeometry::kPsumBase + p0 * pb + off), n);
      op.psum.accumulate = rng_.below(2) == 0;
    }
    op.tile = {0, geo_.pe_rows, 0, geo_.pe_cols};
    op.k = k_;
    op.m = m_;
    op.in_dtype = dtype_;
    op.in_dtype_raw = static_cast<std::int64_t>(dtype_);
    return op;
  }

  // Random elements of the current dtype: `count` in each of `rows` partitions from p0, at byte `offset`.
  void fill_sbuf(unsigned p0, unsigned rows, std::size_t offset, unsigned count) {
    for (unsigned r = 0; r < rows; ++r)
      for (unsigned i = 0; i < count; ++i) {
        const std::uint16_t v = random_element(rng_, dtype_);
        std::memcpy(&sbuf_[(p0 + r) * geo_.sbuf_partition_bytes + offset + 2 * i], &v, 2);
      }
  }

  isa::ArrayGeometry geo_;
  Rng rng_;
  pe::ArrayExecutor cpp_, rtl_exec_;
  pe_array_rtl::RtlDatapath datapath_;
  std::vector<std::uint8_t> sbuf_, psum_cpp_, psum_rtl_;
  arrseq::CostModel cost_;
  // The loaded stationary's shape, dtype and first partition.
  unsigned k_ = 0, m_ = 0, k0_ = 0;
  isa::Dtype dtype_ = isa::Dtype::BFLOAT16;
};

// Replays the sequence up to `last` with the tile's waveform open from micro-op `first`; "" or why not.
std::string write_window(const isa::ArrayGeometry& geo, const CosimCheckCommand& cmd, pe_array_rtl::Variant variant,
                         std::uint64_t first, std::uint64_t last, const std::string& path) {
  try {
    ArrayBench bench(geo, cmd, variant);
    ArrayCosimResult ignored;
    for (std::uint64_t i = 0; i <= last; ++i) {
      if (i == first) bench.datapath().trace(path);
      bench.step(i, cmd, ignored);
    }
    bench.datapath().trace("");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

int run_array_cosim_check(const CosimCheckCommand& cmd, std::ostream& out, std::ostream& err,
                          ArrayCosimResult* result) {
  if (cmd.micro_ops == 0) {
    err << "pe-vp cosim-check: --micro-ops: expected at least 1 micro-op, got 0\n";
    return kCosimUsage;
  }
  pe_array_rtl::Variant variant = pe_array_rtl::Variant::Exact;
  if (cmd.rtl_variant == "broken-rounding") {
    variant = pe_array_rtl::Variant::BrokenRounding;
  } else if (cmd.rtl_variant != "exact") {
    err << "pe-vp cosim-check: --rtl-variant " << cmd.rtl_variant << ": expected exact or broken-rounding\n";
    return kCosimUsage;
  }
  const std::string fst =
      cmd.fst.empty() ? "cosim-check-pe_array-seed" + std::to_string(cmd.seed) + ".fst" : cmd.fst;
  {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path p(fst);
    const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    if (!fs::is_directory(dir, ec) || fs::is_directory(p, ec)) {
      err << "pe-vp cosim-check: --fst " << fst << ": not a file in an existing directory\n";
      return kCosimUsage;
    }
  }
  // The tile's integration size: the array the tile was built for (32 x 32), its other geometry keys following.
  VpConfig config = preset(isa::Generation::MARIANA);
  apply_overrides(config, {"geometry.pe_rows=32", "geometry.pe_cols=32"});
  if (const std::string why = pe_array_rtl::geometry_refusal(config.geometry, variant); !why.empty()) {
    err << "pe-vp cosim-check: --unit pe_array: " << why << ": nothing to check against\n";
    return pe_array_rtl::available() ? kCosimUsage : kCosimNoRtl;
  }

  if (!cmd.coverage_path.empty())
    if (const std::string bad = files::check_output(cmd.coverage_path); !bad.empty()) {
      err << "pe-vp cosim-check: --coverage " << bad << '\n';
      return kCosimUsage;
    }

  ArrayCosimResult r;
  std::optional<coverage::Collector> coverage;
  if (!cmd.coverage_path.empty()) coverage.emplace(config.geometry);
  const auto t0 = std::chrono::steady_clock::now();
  {
    ArrayBench bench(config.geometry, cmd, variant);
    for (std::uint64_t i = 0; i < cmd.micro_ops; ++i)
      if (!bench.step(i, cmd, r, coverage ? &*coverage : nullptr)) break;
    r.rtl_cycles = bench.datapath().cycle();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (coverage) {
    std::string why;
    if (!coverage::write_file(cmd.coverage_path, *coverage, &why)) {
      err << "pe-vp cosim-check: --coverage " << why << '\n';
      return kCosimUsage;
    }
  }

  if (!cmd.quiet || r.mismatches > 0) {
    out << "pe-vp cosim-check: pe_array (C++ executor against the RTL tile " << config.geometry.pe_rows << "x"
        << config.geometry.pe_cols << (variant == pe_array_rtl::Variant::BrokenRounding ? ", broken rounding" : "")
        << "), seed " << cmd.seed << "\n";
    out << "micro-ops   " << r.micro_ops;
    if (r.first_divergent) out << " of " << cmd.micro_ops << " (stopped at the first divergent one)";
    out << ": weight loads " << r.weight_loads << ", matmuls " << r.matmuls << " (accumulating " << r.accumulating
        << "); bf16 " << r.bf16 << ", fp16 " << r.fp16 << "\n";
    out << "compared    " << r.psum_words << " PSUM output words (and the whole PSUM after each matmul), "
        << r.timing_compares << " completion times (tolerance " << kTimingTolerance << " cycles)\n";
    out << "mismatches  " << r.mismatches << "\n";
    out << "seed        " << cmd.seed << "\n";
    char rate[128];
    std::snprintf(rate, sizeof rate, "rate        %.0f micro-ops/s, %.0f tile cycles/s (%.2f s)\n",
                  r.seconds > 0 ? static_cast<double>(r.micro_ops) / r.seconds : 0.0,
                  r.seconds > 0 ? static_cast<double>(r.rtl_cycles) / r.seconds : 0.0, r.seconds);
    out << rate;
  }
  for (const auto& line : r.reports) out << line << '\n';
  if (r.mismatches > r.reports.size()) out << "(" << r.mismatches - r.reports.size() << " more mismatches)\n";
  if (r.first_divergent) {
    const std::uint64_t i = *r.first_divergent;
    const std::uint64_t from = i > cmd.window ? i - cmd.window : 0, to = i + cmd.window;
    const std::string why = write_window(config.geometry, cmd, variant, from, std::min(to, cmd.micro_ops - 1), fst);
    std::error_code ec;
    if (why.empty() && std::filesystem::file_size(fst, ec) > 0 && !ec) {
      r.fst = fst;
      out << "waveform    " << fst << ": the RTL tile over micro-ops " << from << " to "
          << std::min(to, cmd.micro_ops - 1) << "; the first divergent one is " << i << "\n";
    } else {
      out << "waveform    not written: " << (why.empty() ? fst + " is missing or empty" : why) << "\n";
    }
  }
  if (result) *result = r;
  return r.mismatches > 0 ? kCosimMismatch : kCosimPass;
}

}  // namespace pevp::platform
