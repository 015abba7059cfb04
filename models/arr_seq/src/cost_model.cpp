#include "pevp/arr_seq/cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "pevp/isa/enums.h"
#include "pevp/isa/generation.h"
#include "pevp/pe_array/compute.h"
#include "pevp/pe_array/mx.h"

namespace pevp::arrseq {

const params::Params<TimingParams>& timing_parameters() {
  using T = TimingParams;
  using params::Kind;
  constexpr auto kMax = params::kMaxCycles;
  static const params::Params<T> list = {
      {"mm_init_latency", "cycles", "FACTS.md: MM_INIT_LATENCY = 64 on v2", Kind::Count, 0, kMax, &T::mm_init_latency},
      {"fp32_factor", "factor", "FACTS.md: fp32 inputs cost ~4x", Kind::Count, 1, kMax, &T::fp32_factor},
      {"xpose_fp32_factor", "factor", "FACTS.md: v3+ fp32 transpose 2x faster than fp32's 4x", Kind::Count, 1, kMax,
       &T::xpose_fp32_factor},
      {"ls_elements_per_cycle", "elements per cycle", "FACTS.md: LoadStationary ~ elements/4 cycles", Kind::Count, 1,
       kMax, &T::ls_elements_per_cycle},
      {"ls_to_mm_cycles", "cycles", "model choice", Kind::Count, 0, kMax, &T::ls_to_mm_cycles},
      {"sbuf_read_bytes_per_cycle", "bytes per partition per cycle", "model choice", Kind::Count, 1, kMax,
       &T::sbuf_read_bytes_per_cycle},
      {"sbuf_access_cycles", "cycles", "FACTS.md (v2): ~60 cycles per SBUF access", Kind::Count, 0, kMax,
       &T::sbuf_access_cycles},
      {"fill_cycles_per_row", "cycles per PE row", "model choice", Kind::Count, 0, kMax, &T::fill_cycles_per_row},
      {"drain_cycles_per_col", "cycles per PE column", "model choice", Kind::Count, 0, kMax,
       &T::drain_cycles_per_col},
      {"psum_write_cycles", "cycles", "model choice", Kind::Count, 0, kMax, &T::psum_write_cycles},
      {"psum_rmw_cycles", "cycles", "model choice", Kind::Count, 0, kMax, &T::psum_rmw_cycles},
      {"pe_regwrite_cycles", "cycles", "model choice", Kind::Count, 0, kMax, &T::pe_regwrite_cycles},
      {"seq_dispatch_cycles", "cycles", "model choice", Kind::Count, 0, kMax, &T::seq_dispatch_cycles},
      {"stagger_wake_cycles", "cycles per row group", "model choice", Kind::Count, 0, kMax, &T::stagger_wake_cycles},
      {"throttle_fraction", "fraction", "model choice", Kind::Fraction, 0, 0, &T::throttle_fraction},
  };
  return list;
}

OpShape shape_of(const pe::MicroOp& op, const isa::ArrayGeometry& geo) {
  OpShape s;
  s.kind = op.kind;
  s.tile = op.tile;
  s.k = op.k;
  s.m = op.m;
  s.elem_bytes = static_cast<unsigned>(pe::operand_bytes(op.in_dtype));
  s.fp32 = op.in_dtype == isa::Dtype::FP32 || op.in_dtype == isa::Dtype::FP32R;
  s.pack = op.double_row ? 2 : 1;
  // Structured sparsity (D-SPARSE-TIMING): a MatmulSparse streams F fmaps per partition with each moving column, F
  // dense contraction rows per PE row (its MACs count them: the dense-equivalent work); a TAG_WEIGHT load reads a
  // u16 tag beside each u16 weight; LdTags is a weight load of M one-byte columns (its packed words hold half that).
  if (op.sparse == pe::SparseRole::Matmul && op.src.dims == isa::kMaxPatternDims)
    s.pack = static_cast<unsigned>(std::max(op.src.num[3], 1));
  if (op.sparse == pe::SparseRole::TagWeights) s.elem_bytes *= 2;
  if (op.sparse == pe::SparseRole::Tags) s.elem_bytes = 1;
  if (const auto mx = op.mx ? pe::mx_packing(op.mx_mode) : std::nullopt) {
    s.elem_bytes = static_cast<unsigned>(pe::mx_word_bytes(op.in_dtype));
    s.pack = mx->rows;
    s.passes = mx->passes();
    s.mx_words = mx->words();
  }
  if (op.conv_lut) s.elem_bytes = sizeof(float);  // one fp32 value per code (D-CONVLUT)
  // The multiplier's input width and mode decide a MAC's energy (D-ENERGY-MAC).
  using energy::MacKind;
  s.mac_kind = s.mx_words != 0                          ? MacKind::Mx
               : s.fp32                                 ? MacKind::Fp32
               : pe::operand_bytes(op.in_dtype) == 1    ? (op.double_row ? MacKind::Fp8DoubleRow : MacKind::Fp8)
                                                        : MacKind::Bf16;
  s.transpose = op.transpose && op.kind != pe::MicroOpKind::PeRegWrite;
  s.background_transpose = op.background_transpose;
  // The source's minor stride in bytes (FACTS.md: SBUF bandwidth halves past 16 B).
  const std::int64_t step0 = op.src.dims > 0 ? op.src.step[0] : 1, num0 = op.src.dims > 0 ? op.src.num[0] : 1;
  s.strided = std::llabs(step0) * s.elem_bytes > 16 && num0 > 1;
  if (const auto at = isa::locate(op.src.start_raw, isa::Memory::Sbuf, geo)) s.first_partition = at->partition;
  if (op.kind == pe::MicroOpKind::Matmul) {
    // A seed move's moving free size is the partitions its seeds spread over (a Save's source is the seed state).
    s.n = op.seed != pe::SeedMove::None ? op.seed_partitions : op.src.elements() / s.load_elements();
    s.macs = s.transpose ? 0 : std::uint64_t{s.k} * s.pack * s.m * s.n;
    s.accumulate = op.psum.accumulate;
    // The PSUM banks the output reaches inside its partition, counted in fp32
    // elements: a superset for a bf16 output, which only makes the dependency
    // check stricter.
    constexpr unsigned kFp32Bytes = 4;
    const std::uint32_t offset = op.dst.start_raw >= isa::ArrayGeometry::kPsumBase
                                     ? (op.dst.start_raw - isa::ArrayGeometry::kPsumBase) % geo.psum_partition_bytes()
                                     : 0;
    s.banks = isa::psum_banks(isa::covered_bytes(op.dst, offset, kFp32Bytes), geo);
  }
  place_on(s, geo);
  return s;
}

std::uint64_t OpShape::sbuf_read_bytes() const {
  switch (kind) {
    case pe::MicroOpKind::WeightLoad: return std::uint64_t{k} * m * column_bytes();
    case pe::MicroOpKind::Matmul: return std::uint64_t{k} * n * column_bytes();
    case pe::MicroOpKind::PeRegWrite: return 0;  // an immediate or one word per PE: below the model's resolution
  }
  return 0;
}

std::uint64_t OpShape::psum_bytes() const {
  if (kind != pe::MicroOpKind::Matmul) return 0;
  constexpr std::uint64_t kAccumulatorBytes = 4;  // fp32
  return std::uint64_t{m} * n * kAccumulatorBytes * (accumulate ? 2 : 1);
}

namespace {
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return b == 0 ? a : (a + b - 1) / b; }

// Cycles from a real quotient, rounded up. The parameter ranges keep it far
// below 2^62 (params::kMinFraction, kMaxCycles); the clamp only keeps the
// conversion defined should a range ever be widened.
std::uint64_t ceil_cycles(double cycles) {
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  if (!(cycles < kLimit)) return static_cast<std::uint64_t>(kLimit);
  return cycles > 0 ? static_cast<std::uint64_t>(std::ceil(cycles)) : 0;
}

// Bits first..last of a mask `width` bits wide (none when first >= width).
std::uint32_t span_bits(unsigned first, unsigned last, unsigned width) {
  // Widths are the geometry's row groups and SBUF ports, fixed well below 32 (check_geometry).
  if (first >= width || width >= 32) return 0;
  return ((1u << std::min(last + 1, width)) - 1) & ~((1u << first) - 1);
}
}  // namespace

void place_on(OpShape& s, const isa::ArrayGeometry& geo) {
  const unsigned gr = geo.group_rows();
  const unsigned first = s.tile.row0 / gr, last = (s.tile.row0 + (s.tile.rows ? s.tile.rows : 1u) - 1) / gr;
  s.row_groups = static_cast<std::uint8_t>(span_bits(first, last, geo.row_groups));
  // The SBUF ports of the partitions the rows read.
  const unsigned per = geo.partitions_per_xbus();
  const unsigned p0 = s.first_partition / per, p1 = (s.first_partition + std::max(s.k, 1u) - 1) / per;
  s.sbuf_xbus = static_cast<std::uint16_t>(span_bits(p0, p1, geo.sbuf_xbus_ports));
  s.psum_xbus = s.kind == pe::MicroOpKind::Matmul ? static_cast<std::uint16_t>(1u << geo.psum_xbus()) : 0;
}

std::uint64_t CostModel::matmul_ii(const OpShape& s) const {
  if (s.transpose) {
    const std::uint64_t cycles = std::max<std::uint64_t>(s.k, std::min<std::uint64_t>(p_.mm_init_latency, s.n));
    return cycles * (s.fp32 ? p_.xpose_fp32_factor : 1);
  }
  const std::uint64_t columns = s.n * (s.fp32 ? p_.fp32_factor : 1) * s.passes;
  return std::max<std::uint64_t>(columns, p_.mm_init_latency);
}

std::uint64_t CostModel::weight_load_cycles(const OpShape& s) const {
  const std::uint64_t load =
      ceil_div(std::uint64_t{s.m} * s.load_elements() * (s.fp32 ? p_.fp32_factor : 1), p_.ls_elements_per_cycle);
  if (!s.transpose || s.background_transpose) return load;
  // A foreground transposed load passes the tile through the transpose once more (D-BG-XPOSE): the TensorE
  // transpose's max(P, min(64, F)) for the [M x K] tile read, fp32 at xpose_fp32_factor.
  const std::uint64_t pass = std::max<std::uint64_t>(s.m, std::min<std::uint64_t>(p_.mm_init_latency, s.k));
  return load + pass * (s.fp32 ? p_.xpose_fp32_factor : 1);
}

OpCost CostModel::cost(const OpShape& s, std::uint32_t throttled) const {
  const std::uint32_t ports = xbus_ports(s);
  const bool sbuf_throttled = (ports & ~std::uint32_t{s.psum_xbus} & throttled) != 0;
  const bool psum_throttled = (s.psum_xbus & throttled) != 0;
  // SBUF read time of `bytes` per partition at the port's bandwidth (in
  // integers when it is a whole number of bytes per cycle: the common case).
  const auto read_cycles = [&](std::uint64_t bytes, bool throttle) -> std::uint64_t {
    const unsigned full = p_.sbuf_read_bytes_per_cycle;
    if (!throttle && !s.strided && full > 0) return ceil_div(bytes, full);
    if (!throttle && s.strided && full % 2 == 0 && full > 0) return ceil_div(bytes, full / 2);
    double bw = p_.sbuf_read_bytes_per_cycle * (s.strided ? 0.5 : 1.0);
    if (throttle) bw *= p_.throttle_fraction;
    return ceil_cycles(static_cast<double>(bytes) / bw);
  };
  OpCost c;
  switch (s.kind) {
    case pe::MicroOpKind::WeightLoad: {
      const std::uint64_t bytes = std::uint64_t{s.m} * s.column_bytes();
      c.compute = weight_load_cycles(s);
      c.unthrottled = std::max(c.compute, read_cycles(bytes, false));
      c.occupancy = std::max(weight_load_cycles(s), read_cycles(bytes, sbuf_throttled));
      break;
    }
    case pe::MicroOpKind::Matmul: {
      // The moving stream: its II, or the SBUF read of its N elements per
      // partition, or the PSUM port's N column writes when that is throttled.
      const std::uint64_t bytes = s.n * s.column_bytes();
      const auto psum_cycles = [&](bool throttle) -> std::uint64_t {
        return throttle ? ceil_cycles(static_cast<double>(s.n) / p_.throttle_fraction) : 0;
      };
      c.compute = matmul_ii(s);
      if (!s.transpose)
        c.data_cycles = static_cast<double>(s.n) * (s.fp32 ? p_.fp32_factor : 1) * s.passes;
      c.unthrottled = std::max(c.compute, read_cycles(bytes, false));
      c.occupancy = std::max({matmul_ii(s), read_cycles(bytes, sbuf_throttled), psum_cycles(psum_throttled)});
      c.fill_drain = std::uint64_t{p_.sbuf_access_cycles} + std::uint64_t{p_.fill_cycles_per_row} * s.k +
                     std::uint64_t{p_.drain_cycles_per_col} * s.m;
      c.commit = p_.psum_write_cycles + (s.accumulate ? p_.psum_rmw_cycles : 0);
      c.first_commit = 1 + c.fill_drain + c.commit;
      break;
    }
    case pe::MicroOpKind::PeRegWrite:
      c.compute = c.unthrottled = c.occupancy = p_.pe_regwrite_cycles;
      break;
  }
  return c;
}

}  // namespace pevp::arrseq
