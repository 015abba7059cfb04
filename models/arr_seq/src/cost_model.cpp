#include "pevp/arr_seq/cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <unordered_map>

#include "pevp/isa/enums.h"
#include "pevp/isa/generation.h"
#include "pevp/pe_array/compute.h"

namespace pevp::arrseq {

namespace {

// The fields shape_of reads, resolved to positions in Decoded::fields once per
// leaf set (a layout has one per combination of its union members, and the
// positions differ between them): a string-keyed lookup per field per
// micro-op would cost more than the whole timing computation.
enum Field : unsigned {
  kRows, kCols, kInDtype, kPerfOpt, kPerfMode, kPsumFlags, kAccFlag,
  kSrcStart, kSrcStep0, kSrcNum0, kSrcNum1, kSrcNum2,
  kDstStart, kDstStep0, kDstNum0, kDstStep1, kDstNum1, kDstStep2, kDstNum2,
  kFieldCount
};
constexpr std::array<const char*, kFieldCount> kPaths = {
    "num_active_rows", "num_active_cols", "in_dtype", "perf_opt", "perf_mode", "psum_accumulate_flags",
    "flags.accumulate_flag", "src_mem_pattern.start_addr", "src_mem_pattern.step_elem[0]",
    "src_mem_pattern.num_elem[0]", "src_mem_pattern.num_elem[1]", "src_mem_pattern.num_elem[2]",
    "dst_mem_pattern.start_addr", "dst_mem_pattern.step_elem[0]", "dst_mem_pattern.num_elem[0]",
    "dst_mem_pattern.step_elem[1]", "dst_mem_pattern.num_elem[1]", "dst_mem_pattern.step_elem[2]",
    "dst_mem_pattern.num_elem[2]"};
constexpr std::int32_t kAbsent = -1;
using Positions = std::array<std::int32_t, kFieldCount>;

Positions find_positions(const isa::Decoded& d) {
  Positions p;
  for (unsigned i = 0; i < kFieldCount; ++i) {
    const isa::DecodedField* f = d.field(kPaths[i]);
    p[i] = f ? static_cast<std::int32_t>(f - d.fields.data()) : kAbsent;
  }
  return p;
}

Positions positions(const isa::Decoded& d) {
  if (d.lookup == nullptr) return find_positions(d);  // not from decode(): no leaf set to key on
  static std::mutex mu;
  static std::unordered_map<const isa::LeafLookup*, Positions> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = cache.try_emplace(d.lookup);
  if (inserted) it->second = find_positions(d);
  return it->second;
}

struct Reader {
  const isa::Decoded& d;
  const Positions pos;
  bool has(Field f) const { return pos[f] != kAbsent; }
  std::int64_t get(Field f, std::int64_t fallback = 0) const {
    return pos[f] == kAbsent ? fallback : d.fields[static_cast<std::size_t>(pos[f])].value;
  }
};

unsigned perf_divisor(const Reader& r) {
  if (r.get(kPerfOpt) == isa::perf_opt::FP8_DOUBLE_ROW) return 2;
  switch (static_cast<isa::MxPerfMode>(r.get(kPerfMode))) {
    case isa::MxPerfMode::QUAD_ROW:
    case isa::MxPerfMode::QUAD_ROW_INTERLEAVE:
    case isa::MxPerfMode::QUAD_ROW_TILED: return 4;
    case isa::MxPerfMode::OCT_ROW:
    case isa::MxPerfMode::OCT_ROW_INTERLEAVE:
    case isa::MxPerfMode::OCT_ROW_TILED: return 8;
    default: return 1;
  }
}

// The PSUM banks the dst pattern reaches inside a partition: from the start
// byte to the farthest byte any step reaches (fp32 elements). A superset is
// fine: it only makes the dependency check stricter.
std::uint8_t banks_of(const Reader& r, const isa::ArrayGeometry& g) {
  const std::int64_t start = r.get(kDstStart, isa::ArrayGeometry::kPsumBase);
  const std::int64_t part_off = (start - static_cast<std::int64_t>(isa::ArrayGeometry::kPsumBase)) %
                                static_cast<std::int64_t>(g.psum_partition_bytes());
  std::int64_t lo = 0, hi = 0;
  const Field steps[3] = {kDstStep0, kDstStep1, kDstStep2}, nums[3] = {kDstNum0, kDstNum1, kDstNum2};
  for (int i = 0; i < 3; ++i) {
    if (!r.has(nums[i])) break;
    const std::int64_t reach = (std::max<std::int64_t>(r.get(nums[i]), 1) - 1) * r.get(steps[i]) * 4;
    (reach < 0 ? lo : hi) += reach;
  }
  const std::int64_t bank = g.psum_bank_bytes, last_bank = g.psum_banks - 1;
  const std::int64_t first = std::clamp<std::int64_t>((part_off + lo) / bank, 0, last_bank);
  const std::int64_t last = std::clamp<std::int64_t>((part_off + hi + 3) / bank, 0, last_bank);
  std::uint8_t mask = 0;
  for (std::int64_t b = first; b <= last; ++b) mask |= static_cast<std::uint8_t>(1u << b);
  return mask;
}

bool accumulates(const Reader& r) {
  if (!r.has(kPsumFlags)) return r.get(kAccFlag) != 0;  // MAVERICK: accumulate_flag only
  const auto f = static_cast<std::uint8_t>(r.get(kPsumFlags));
  if (r.has(kAccFlag)) return r.get(kAccFlag) != 0;  // MARIANA: the flag chooses add vs overwrite
  return (f & isa::psum_flags::BEGIN_MATMUL_GROUP) == 0;  // CAYMAN: BEGIN overwrites, the rest add
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return b == 0 ? a : (a + b - 1) / b; }

}  // namespace

OpShape shape_of(const pe::MicroOp& op) {
  OpShape s;
  s.kind = op.kind;
  s.tile = op.tile;
  const isa::Decoded& d = *op.instr;
  if (d.layout == nullptr) return s;
  const Reader r{d, positions(d)};
  const isa::ArrayGeometry& g = d.geo;
  s.k = isa::active_extent(r.get(kRows, op.tile.rows), op.tile.rows);
  s.m = static_cast<unsigned>(r.get(kCols, op.tile.cols));
  if (s.m == 0) s.m = op.tile.cols;  // MAVERICK encodes 256 columns as 0
  const auto dtype = static_cast<isa::Dtype>(r.get(kInDtype));
  s.elem_bytes = static_cast<unsigned>(pe::operand_bytes(dtype));
  s.fp32 = dtype == isa::Dtype::FP32 || dtype == isa::Dtype::FP32R;
  s.rate_div = perf_divisor(r);
  s.strided = std::llabs(r.get(kSrcStep0, 1)) * s.elem_bytes > 16 && r.get(kSrcNum0, 1) > 1;
  const std::int64_t src = r.get(kSrcStart);
  s.first_partition = g.sbuf_partition_bytes == 0 || src < 0 || src >= isa::ArrayGeometry::kPsumBase
                          ? 0
                          : static_cast<unsigned>(src / g.sbuf_partition_bytes);
  if (op.kind == pe::MicroOpKind::Matmul) {
    s.n = static_cast<std::uint64_t>(std::max<std::int64_t>(r.get(kSrcNum0, 1), 0)) *
          static_cast<std::uint64_t>(std::max<std::int64_t>(r.get(kSrcNum1, 1), 0)) *
          static_cast<std::uint64_t>(std::max<std::int64_t>(r.get(kSrcNum2, 1), 0));
    s.macs = std::uint64_t{s.k} * s.m * s.n;
    s.accumulate = accumulates(r);
    s.banks = banks_of(r, g);
  }
  return s;
}

namespace {
// Bits first..last of a mask `width` bits wide (none when first >= width).
std::uint32_t span_bits(unsigned first, unsigned last, unsigned width) {
  if (first >= width) return 0;
  return ((1u << std::min(last + 1, width)) - 1) & ~((1u << first) - 1);
}
}  // namespace

std::uint8_t row_group_mask(const OpShape& s, const isa::ArrayGeometry& geo) {
  const unsigned gr = geo.group_rows();
  const unsigned first = s.tile.row0 / gr, last = (s.tile.row0 + (s.tile.rows ? s.tile.rows : 1u) - 1) / gr;
  return static_cast<std::uint8_t>(span_bits(first, last, geo.row_groups));
}

std::uint32_t xbus_ports(const OpShape& s, const isa::ArrayGeometry& geo) {
  std::uint32_t ports = 0;
  if (s.kind != pe::MicroOpKind::PeRegWrite || !s.pe_reg_bypass) {
    // The SBUF ports of the partitions the rows read.
    const unsigned per = geo.partitions_per_xbus();
    const unsigned first = s.first_partition / per, last = (s.first_partition + std::max(s.k, 1u) - 1) / per;
    ports = span_bits(first, last, geo.sbuf_xbus_ports);
  }
  if (s.kind == pe::MicroOpKind::Matmul) ports |= 1u << geo.psum_xbus();
  return ports;
}

std::uint64_t CostModel::matmul_ii(const OpShape& s) const {
  const std::uint64_t columns = ceil_div(s.n * (s.fp32 ? p_.fp32_factor : 1), s.rate_div);
  return std::max<std::uint64_t>(columns, p_.mm_init_latency);
}

std::uint64_t CostModel::weight_load_cycles(const OpShape& s) const {
  return ceil_div(std::uint64_t{s.m} * (s.fp32 ? p_.fp32_factor : 1), p_.ls_elements_per_cycle);
}

OpCost CostModel::cost(const OpShape& s, std::uint32_t throttled) const {
  const std::uint32_t ports = xbus_ports(s, geo_);
  const std::uint32_t psum_port = 1u << geo_.psum_xbus();
  const bool sbuf_throttled = (ports & throttled & (psum_port - 1)) != 0;
  const bool psum_throttled = (ports & throttled & psum_port) != 0;
  // SBUF read time of `bytes` per partition at the port's bandwidth (in
  // integers when it is a whole number of bytes per cycle: the common case).
  const auto read_cycles = [&](std::uint64_t bytes, bool throttle) -> std::uint64_t {
    const unsigned full = p_.sbuf_read_bytes_per_cycle;
    if (!throttle && !s.strided && full > 0) return ceil_div(bytes, full);
    if (!throttle && s.strided && full % 2 == 0 && full > 0) return ceil_div(bytes, full / 2);
    double bw = p_.sbuf_read_bytes_per_cycle * (s.strided ? 0.5 : 1.0);
    if (throttle) bw *= p_.throttle_fraction;
    return static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) / bw));
  };
  OpCost c;
  switch (s.kind) {
    case pe::MicroOpKind::WeightLoad: {
      const std::uint64_t bytes = std::uint64_t{s.m} * s.elem_bytes;
      c.unthrottled = std::max(weight_load_cycles(s), read_cycles(bytes, false));
      c.occupancy = std::max(weight_load_cycles(s), read_cycles(bytes, sbuf_throttled));
      break;
    }
    case pe::MicroOpKind::Matmul: {
      // The moving stream: its II, or the SBUF read of its N elements per
      // partition, or the PSUM port's N column writes when that is throttled.
      const std::uint64_t bytes = s.n * s.elem_bytes;
      const auto psum_cycles = [&](bool throttle) -> std::uint64_t {
        return throttle ? static_cast<std::uint64_t>(std::ceil(static_cast<double>(s.n) / p_.throttle_fraction)) : 0;
      };
      c.unthrottled = std::max(matmul_ii(s), read_cycles(bytes, false));
      c.occupancy = std::max({matmul_ii(s), read_cycles(bytes, sbuf_throttled), psum_cycles(psum_throttled)});
      c.fill_drain = std::uint64_t{p_.sbuf_access_cycles} + std::uint64_t{p_.fill_cycles_per_row} * s.k +
                     std::uint64_t{p_.drain_cycles_per_col} * s.m;
      c.commit = p_.psum_write_cycles + (s.accumulate ? p_.psum_rmw_cycles : 0);
      c.first_commit = 1 + c.fill_drain + c.commit;
      break;
    }
    case pe::MicroOpKind::PeRegWrite:
      c.unthrottled = c.occupancy = p_.pe_regwrite_cycles;
      break;
  }
  return c;
}

}  // namespace pevp::arrseq
