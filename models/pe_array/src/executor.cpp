// ArrayExecutor: LDWEIGHTS / MATMUL against SBUF and PSUM byte buffers. See executor.h and
// docs/pe-array-executor.md.
#include "pevp/pe_array/executor.h"

#include "pevp/isa/hex.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>

#include "pevp/isa/generation.h"
#include "pevp/numerics/convert.h"

namespace pevp::pe {
namespace {

using isa::Generation;

// The pattern a micro-op names, as a plain TENSOR pattern of 1 to 3 dimensions (the seed micro-ops' TENSOR1D / 2D
// included), or why it is not one.
ExecResult plain_3d(const isa::AccessPattern& p, const char* name, bool indirect_allowed = false) {
  const std::string n(name);
  if (p.member == isa::PatternMember::MxTensorV2)
    return ExecResult::error("exec.mx_mix", n + ": the MX tensor member on a dense micro-op");
  if (p.member == isa::PatternMember::Indirect16B)
    return indirect_allowed ? ExecResult::success()
                            : ExecResult::error("exec.pattern_region", n + ": an indirect pattern cannot be written");
  if (p.dims < 1 || p.dims > 3)
    return ExecResult::error("exec.pattern_count", n + ": a TENSOR pattern of 1 to 3 dimensions is needed, it has " +
                                                       std::to_string(p.dims));
  return ExecResult::success();
}

// Where an access pattern's elements are: a Region (base address, bytes per partition, partition count, buffer
// size), the partitions used, and the byte offsets of the pattern's elements inside one partition -- the same in
// every partition, so they are computed and bounds-checked once, never materialised per element and partition.
struct Region {
  const char* what;  // "SBUF" / "PSUM"
  std::uint32_t base;
  std::uint32_t partition_bytes;
  std::uint32_t partitions;
  std::size_t buffer_bytes;
};

struct Access {
  std::size_t first_partition = 0;
  std::size_t partition_bytes = 0;
  std::size_t start_in_partition = 0;  // byte offset of the pattern's start inside its partition
  isa::PartitionPlan plan;             // the elements' byte offsets inside a partition, pattern order

  std::size_t count() const { return plan.offsets.size(); }
  // Buffer offset of element i of partition p (p counted from first_partition).
  std::size_t at(std::size_t p, std::size_t i) const { return (first_partition + p) * partition_bytes + plan.offsets[i]; }
};

// The buffer may be smaller than the region (a test's short buffer): the highest element of the last partition must
// fit.
ExecResult check_buffer_end(const Access& a, std::size_t partitions, const Region& r, std::size_t elem_bytes,
                            const std::string& pname) {
  if (partitions == 0 || a.plan.offsets.empty()) return ExecResult::success();
  const std::size_t highest = *std::max_element(a.plan.offsets.begin(), a.plan.offsets.end());
  const std::size_t last = (a.first_partition + partitions - 1) * r.partition_bytes + highest;
  if (last + elem_bytes > r.buffer_bytes)
    return ExecResult::error("exec.buffer_bounds", pname + ": " + r.what + " address " + hex(r.base + last) +
                                                       " is beyond the " + std::to_string(r.buffer_bytes) + "-byte " +
                                                       r.what + " buffer");
  return ExecResult::success();
}

// Whether elements first .. first + count - 1 of a plan are one contiguous run.
bool contiguous_run(const isa::PartitionPlan& plan, std::size_t first, std::size_t count, std::size_t elem_bytes) {
  for (std::size_t i = 1; i < count; ++i)
    if (plan.offsets[first + i] != plan.offsets[first] + i * elem_bytes) return false;
  return true;
}

ExecResult plan_access(const isa::AccessPattern& pat, const char* name, const Region& r, std::size_t partitions,
                       std::size_t elem_bytes, Access& a) {
  const std::string pname(name);
  if (pat.start_raw < r.base || pat.start_raw - r.base >= std::uint64_t{r.partition_bytes} * r.partitions)
    return ExecResult::error("exec.pattern_region", pname + ".start_addr = " + hex(pat.start_raw) + ": not in " +
                                                        r.what);
  const std::uint64_t rel = pat.start_raw - r.base;
  a.first_partition = static_cast<std::size_t>(rel / r.partition_bytes);
  a.partition_bytes = r.partition_bytes;
  a.start_in_partition = static_cast<std::size_t>(rel % r.partition_bytes);
  if (a.start_in_partition % elem_bytes != 0)
    return ExecResult::error("exec.pattern_align", pname + ".start_addr = " + hex(pat.start_raw) +
                                                       ": not aligned to the " + std::to_string(elem_bytes) +
                                                       "-byte element");
  if (a.first_partition + partitions > r.partitions)
    return ExecResult::error("exec.pattern_partitions",
                             pname + ".start_addr = " + hex(pat.start_raw) + ": partitions " +
                                 std::to_string(a.first_partition) + ".." +
                                 std::to_string(a.first_partition + partitions - 1) + " leave the " +
                                 std::to_string(r.partitions) + " " + r.what + " partitions");
  isa::plan_partition(pat, static_cast<std::uint32_t>(a.start_in_partition), static_cast<unsigned>(elem_bytes),
                      r.partition_bytes, a.plan);
  if (const auto& out = a.plan.outside)
    return ExecResult::error("exec.pattern_partition_bounds",
                             pname + ": element [" + std::to_string(out->index[0]) + "][" +
                                 std::to_string(out->index[1]) + "][" + std::to_string(out->index[2]) +
                                 "] at partition byte offset " + std::to_string(out->offset) + " leaves the " +
                                 std::to_string(r.partition_bytes) + "-byte " + r.what + " partition");
  return check_buffer_end(a, partitions, r, elem_bytes, pname);
}

// An INDIRECT16B source (D-INDIRECT): `num_index` little-endian u32 element offsets at SBUF address index_addr (inside
// one partition), index j giving num_elem elements from element index[j] of the pattern's start, step_elem apart, in
// index order -- the same offsets in every partition.
ExecResult plan_indirect(const isa::AccessPattern& pat, const char* name, const Region& r, std::size_t partitions,
                         std::size_t elem_bytes, const std::uint8_t* sbuf, Access& a) {
  const std::string pname(name);
  // The start: where a one-element tensor pattern at it would be (region, alignment, partitions, buffer).
  isa::AccessPattern base = pat;
  base.member = isa::PatternMember::Tensor3D;
  base.dims = 1;
  base.num = {1, 0, 0, 0};
  base.step = {0, 0, 0, 0};
  if (auto e = plan_access(base, name, r, partitions, elem_bytes, a); !e.ok) return e;
  const std::uint64_t index_bytes = std::uint64_t{pat.num_index} * 4;
  const std::uint64_t at = pat.index_addr, in_part = at % r.partition_bytes;
  if (at < r.base || at - r.base + index_bytes > r.buffer_bytes || in_part + index_bytes > r.partition_bytes)
    return ExecResult::error("exec.pattern_region", pname + ".index_addr = " + hex(pat.index_addr) + ": the " +
                                                        std::to_string(pat.num_index) +
                                                        "-entry u32 index vector is not inside one SBUF partition");
  a.plan.offsets.clear();
  const std::int64_t eb = static_cast<std::int64_t>(elem_bytes);
  for (std::uint32_t j = 0; j < pat.num_index; ++j) {
    std::uint32_t index;
    std::memcpy(&index, sbuf + (at - r.base) + 4 * j, 4);
    for (std::int32_t i = 0; i < pat.num[0]; ++i) {
      const std::int64_t off = static_cast<std::int64_t>(a.start_in_partition) +
                               (std::int64_t{index} + std::int64_t{i} * pat.step[0]) * eb;
      if (off < 0 || off + eb > static_cast<std::int64_t>(r.partition_bytes))
        return ExecResult::error("exec.pattern_partition_bounds",
                                 pname + ": index " + std::to_string(j) + " = " + std::to_string(index) + ", element " +
                                     std::to_string(i) + " at partition byte offset " + std::to_string(off) +
                                     " leaves the " + std::to_string(r.partition_bytes) + "-byte " + r.what +
                                     " partition");
      a.plan.offsets.push_back(static_cast<std::size_t>(off));
    }
  }
  a.plan.contiguous = contiguous_run(a.plan, 0, a.plan.offsets.size(), elem_bytes);
  return check_buffer_end(a, partitions, r, elem_bytes, pname);
}

// A LDWEIGHTS / MATMUL source: a tensor pattern, or the indirect member.
ExecResult plan_source(const isa::AccessPattern& pat, const char* name, const Region& r, std::size_t partitions,
                       std::size_t elem_bytes, const std::uint8_t* sbuf, Access& a) {
  if (pat.member == isa::PatternMember::Indirect16B) return plan_indirect(pat, name, r, partitions, elem_bytes, sbuf, a);
  return plan_access(pat, name, r, partitions, elem_bytes, a);
}

// A MatmulSparse source (TENSOR4D): dimensions 0-2 walk one fmap's N elements, dimension 3 the fmaps, fmap f starting
// step_elem[3] x f elements after the start inside the same partition. The plan lists each partition's elements
// fmap-major (fmap f's N elements at f x N), so a decode gives [k][fmaps][N].
ExecResult plan_fmaps(const isa::AccessPattern& pat, const Region& r, std::size_t partitions, std::size_t elem_bytes,
                      Access& a) {
  if (pat.member != isa::PatternMember::Tensor3D || pat.dims != isa::kMaxPatternDims)
    return ExecResult::error("exec.pattern_count", "src_mem_pattern: a sparse matmul's source is a TENSOR4D pattern "
                                                   "(the 4th dimension the fmaps)");
  isa::AccessPattern one = pat;
  one.dims = isa::kMaxPatternDims - 1;
  one.num[3] = 0;
  one.step[3] = 0;
  if (auto e = plan_access(one, "src_mem_pattern", r, partitions, elem_bytes, a); !e.ok) return e;
  const std::size_t n = a.plan.offsets.size(), fmaps = static_cast<std::size_t>(pat.num[3]);
  const std::int64_t shift = std::int64_t{pat.step[3]} * static_cast<std::int64_t>(elem_bytes);
  for (std::size_t f = 1; f < fmaps; ++f)
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t off = static_cast<std::int64_t>(a.plan.offsets[i]) + shift * static_cast<std::int64_t>(f);
      if (off < 0 || off + static_cast<std::int64_t>(elem_bytes) > static_cast<std::int64_t>(r.partition_bytes))
        return ExecResult::error("exec.pattern_partition_bounds",
                                 "src_mem_pattern: fmap " + std::to_string(f) + " element " + std::to_string(i) +
                                     " at partition byte offset " + std::to_string(off) + " leaves the " +
                                     std::to_string(r.partition_bytes) + "-byte " + r.what + " partition");
      a.plan.offsets.push_back(static_cast<std::size_t>(off));
    }
  a.plan.contiguous = contiguous_run(a.plan, 0, a.plan.offsets.size(), elem_bytes);
  return check_buffer_end(a, partitions, r, elem_bytes, "src_mem_pattern");
}

// Decodes `partitions` x in_part.size() elements of type t into dst (partition-major): straight from the buffer
// when each partition's elements are one contiguous row, else through `row` (one partition's elements packed).
bool decode_access(const OperandType& t, const std::uint8_t* buf, const Access& a, std::size_t partitions,
                   std::vector<std::uint8_t>& row, float* dst, const float* table = nullptr) {
  const std::size_t n = a.count(), eb = operand_bytes(t.dtype);
  if (table) {  // a converter table for the dtype's one-byte codes (D-CONVLUT)
    if (eb != 1) return false;
    for (std::size_t p = 0; p < partitions; ++p)
      for (std::size_t i = 0; i < n; ++i) dst[p * n + i] = table[buf[a.at(p, i)]];
    return true;
  }
  row.resize(n * eb);
  for (std::size_t p = 0; p < partitions; ++p) {
    const std::uint8_t* src = nullptr;
    if (a.plan.contiguous && n > 0) {
      src = buf + a.at(p, 0);
    } else {
      for (std::size_t i = 0; i < n; ++i) std::memcpy(&row[i * eb], buf + a.at(p, i), eb);
      src = row.data();
    }
    if (!decode_operands(t, src, n, dst + p * n)) return false;
  }
  return true;
}

Region sbuf_region(const isa::ArrayGeometry& geo, std::size_t bytes) {
  return {"SBUF", isa::ArrayGeometry::kSbufBase, geo.sbuf_partition_bytes, geo.partitions, bytes};
}
Region psum_region(const isa::ArrayGeometry& geo, std::size_t bytes) {
  return {"PSUM", isa::ArrayGeometry::kPsumBase, geo.psum_partition_bytes(), geo.partitions, bytes};
}

// What every WeightLoad / Matmul needs before it touches memory: the right kind, an operand type of its kind (dense,
// or MX with a perf mode), and no feature the array does not execute.
ExecResult check_common(const MicroOp& op, MicroOpKind want, OperandType& t, std::optional<MxPacking>& mx) {
  if (op.kind != want)
    return ExecResult::error("exec.opcode", "opcode = " + hex(op.opcode_byte) + ": expected a " + name(want) +
                                                " micro-op, got " + name(op.kind));
  t.gen = op.gen;
  t.dtype = op.in_dtype;
  t.fp32_mode = op.fp32_mode;
  mx.reset();
  if (op.mx) {
    if (std::string e = mx_operand_error(t.dtype); !e.empty())
      return ExecResult::error("exec.in_dtype", "in_dtype = " + std::to_string(op.in_dtype_raw) + ": " + e);
    mx = mx_packing(op.mx_mode);
    if (!mx)
      return ExecResult::error("exec.mx_mix", "perf_mode = " + std::to_string(op.mx_mode) +
                                                  ": not an MX_PERF_MODE (0..6)");
    if (op.fp32_mode != isa::Fp32Mode::None)
      return ExecResult::error("exec.mx_mix", "fp32_mode = " + std::to_string(op.fp32_mode_raw) +
                                                  ": an MX source has no fp32 mode (None)");
    if (op.double_row || op.transpose || op.seed != SeedMove::None)
      return ExecResult::error("exec.mx_mix", std::string("an MX source cannot be ") +
                                                  (op.double_row ? "double_row (perf_opt)"
                                                   : op.transpose ? "transposed (xpose_mode)"
                                                                  : "a seed move (seed_mode)"));
  } else {
    if (std::string e = operand_error(t); !e.empty())
      return ExecResult::error("exec.in_dtype", "in_dtype = " + std::to_string(op.in_dtype_raw) + ", fp32_mode = " +
                                                    std::to_string(op.fp32_mode_raw) + ": " + e);
    if (op.mx_mode != 0)
      return ExecResult::error("exec.mx_mix", "perf_mode = " + std::to_string(op.mx_mode) +
                                                  ": QUAD_ROW / OCT_ROW pump MX sources only");
  }
  const Unmodelled& u = op.unmodelled;
  if (u.seed_mode != 0 && op.sparse != SparseRole::None)
    return ExecResult::error("exec.sparse_mix", "flags.seed_mode = " + std::to_string(u.seed_mode) +
                                                    ": a sparse matmul is no seed micro-op");
  if (u.scalar_mode != 0)
    return ExecResult::error("exec.not_modelled", "flags.scalar_mode = " + std::to_string(u.scalar_mode) +
                                                      ": the spec names the field (2 bits of the flags byte) but not "
                                                      "what it does; only 0 is modelled");
  return ExecResult::success();
}

// An MX source's data as a plain pattern of x4 words (D-MX-SCALES): MXMEM_PATTERN1D's one dimension or the
// MXTENSOR_V2 member's two; with an MXMEM index vector (index_addr != 0), word j is word index[j] from the start
// (num_elem little-endian u32 entries at index_addr, as the indirect member's, D-MX-INDEX).
isa::AccessPattern mx_data_pattern(const isa::AccessPattern& src) {
  isa::AccessPattern p = src;
  p.member = isa::PatternMember::Tensor3D;
  p.start_raw = src.start;  // without the MXTENSOR_V2 marker bit
  if (src.dims == 1 && src.index_addr != 0) {
    p.member = isa::PatternMember::Indirect16B;
    p.num_index = static_cast<std::uint32_t>(std::max(src.num[0], 0));
    p.num = {1, 0, 0, 0};
    p.step = {0, 0, 0, 0};
  }
  return p;
}

// Where an MX source's scales are (D-MX-SCALES): ceil(k / 8) SBUF partitions from scale_addr's, `words` bytes from
// its offset in each -- group g's scale of word e at scale_addr + g x partition bytes + e. Gathers them into
// `scales` (group-major).
ExecResult read_mx_scales(const isa::AccessPattern& src, const char* name, const Region& r, std::size_t k,
                          std::size_t words, const std::uint8_t* sbuf, std::vector<std::uint8_t>& scales) {
  const std::string pname(name);
  const std::size_t groups = (k + kMxGroupPartitions - 1) / kMxGroupPartitions;
  const std::uint64_t at = src.scale_addr;
  if (at < r.base || at - r.base >= std::uint64_t{r.partition_bytes} * r.partitions)
    return ExecResult::error("exec.mx_scales", pname + ".scale_addr = " + hex(src.scale_addr) + ": not in " + r.what);
  const std::uint64_t rel = at - r.base, first = rel / r.partition_bytes, offset = rel % r.partition_bytes;
  if (first + groups > r.partitions || offset + words > r.partition_bytes)
    return ExecResult::error("exec.mx_scales", pname + ".scale_addr = " + hex(src.scale_addr) + ": the " +
                                                   std::to_string(groups) + " x " + std::to_string(words) +
                                                   " E8M0 scales (one per 8 partitions and word) leave " + r.what +
                                                   " (partitions " + std::to_string(first) + ".." +
                                                   std::to_string(first + groups - 1) + ", bytes " +
                                                   std::to_string(offset) + ".." +
                                                   std::to_string(offset + words - 1) + ")");
  if (groups > 0 && words > 0 && (first + groups - 1) * r.partition_bytes + offset + words > r.buffer_bytes)
    return ExecResult::error("exec.buffer_bounds", pname + ".scale_addr = " + hex(src.scale_addr) +
                                                       ": the scales are beyond the " +
                                                       std::to_string(r.buffer_bytes) + "-byte " + r.what + " buffer");
  scales.resize(groups * words);
  for (std::size_t g = 0; g < groups; ++g)
    if (words > 0) std::memcpy(&scales[g * words], sbuf + (first + g) * r.partition_bytes + offset, words);
  return ExecResult::success();
}

// Where a matmul's outputs go. Output row r -- a PE column, or a moving element when the matmul transposes -- holds
// `per_row` values; rows fold `fold` to a pass: row r writes dst partition r % fold at the pattern's elements
// (r / fold) * per_row .. + per_row - 1. Only a MAVERICK c256 tile wider than the partitions folds (its two column
// halves in the destination's upper dimension, spec 000 section 11); otherwise fold = rows.
struct OutLayout {
  std::size_t rows = 0, per_row = 0, fold = 1;
  std::size_t partitions() const { return std::min(rows, fold); }
  std::size_t halves() const { return (rows + fold - 1) / fold; }
  std::size_t at(const Access& a, std::size_t r, std::size_t j) const {
    return a.at(r % fold, (r / fold) * per_row + j);
  }
};

// The PSUM banks (bit b = bank b) a partition's part of a plan touches.
unsigned banks_touched(const isa::PartitionPlan& plan, std::size_t bank_bytes) {
  unsigned mask = 0;
  for (const std::size_t off : plan.offsets) mask |= 1u << (off / bank_bytes);
  return mask;
}


std::string bank_list(unsigned mask) {
  std::string s;
  for (unsigned b = 0; mask >> b; ++b)
    if (mask >> b & 1u) s += (s.empty() ? "" : ", ") + std::to_string(b);
  return s;
}

// The row of each stationary column's single 1 when the stationary is a 0/1 matrix with exactly one 1 per column
// (the identity a transposing matmul routes through, D-EXEC-XPOSE-MM), else -1 for that column.
std::vector<std::int32_t> one_hot_rows(const std::vector<float>& v, std::size_t k, std::size_t m) {
  std::vector<std::int32_t> row(m, -1);
  for (std::size_t mi = 0; mi < m; ++mi) {
    std::int32_t found = -1;
    bool ok = true;
    for (std::size_t ki = 0; ki < k && ok; ++ki) {
      const float x = v[ki * m + mi];
      if (x == 0.0f) continue;
      if (x != 1.0f || found >= 0) ok = false;
      else found = static_cast<std::int32_t>(ki);
    }
    if (ok) row[mi] = found;
  }
  return row;
}

// Why column `mi` of a stationary is not one-hot, for the message.
std::string one_hot_problem(const Stationary& st, std::size_t mi) {
  unsigned ones = 0;
  for (std::size_t ki = 0; ki < st.k; ++ki) {
    const float x = st.values[ki * st.m + mi];
    if (x == 0.0f) continue;
    if (x != 1.0f) {
      std::ostringstream o;
      o << "stationary[" << ki << "][" << mi << "] = " << x;
      return o.str() + " (bits " + hex(num::float_bits(x)) + ")";
    }
    ++ones;
  }
  return "stationary column " + std::to_string(mi) + " holds " + std::to_string(ones) + " ones";
}

// A transposing matmul's values (D-EXEC-XPOSE-MM): output row i (moving element i), element mi = the moving value
// of the row the stationary's column mi selects, moved as a bit pattern of the output dtype -- fp32 input keeps its
// 32 bits whatever its fp32_mode (the multiplier is not used), bf16 its 16 (or their exact fp32 widening), fp16 and
// fp8 their exact fp32 value; a bf16 output of a wider input rounds RNE. With `add` the value is added in fp32 to
// `existing(i, mi)` (or to +0 when `accumulate` without `add`: a BEGIN that accumulates), NaN canonical.
template <typename Existing>
void transpose_moving(const OperandType& t, const Stationary& st, const std::vector<std::int32_t>& one_hot_row,
                      const std::uint8_t* sbuf, const Access& sa, bool out_bf16, bool add, bool accumulate,
                      Existing existing, std::vector<std::uint32_t>& xposed_) {
  const std::size_t m = st.m, n = sa.count();
  xposed_.assign(n * m, 0);
  const RowDecoder decode = row_decoder(t);
  for (std::size_t mi = 0; mi < m; ++mi) {
    const std::size_t row = static_cast<std::size_t>(one_hot_row[mi]);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint8_t* e = sbuf + sa.at(row, i);
      std::uint32_t bits = 0;  // fp32 bits, or bf16 bits when out_bf16
      float value = 0.0f;      // the value, for an add or a bf16 rounding
      if (t.dtype == isa::Dtype::FP32) {
        std::memcpy(&bits, e, 4);
        value = num::bits_float(bits);
        if (out_bf16) bits = num::to_bf16(value);
      } else if (t.dtype == isa::Dtype::BFLOAT16) {
        std::uint16_t h;
        std::memcpy(&h, e, 2);
        bits = out_bf16 ? h : std::uint32_t{h} << 16;
        value = num::from_bf16(h);
      } else {
        decode(e, 1, &value);
        bits = out_bf16 ? num::to_bf16(value) : num::float_bits(value);
      }
      if (accumulate) {
        float sum = (add ? existing(i, mi) : 0.0f) + value;
        std::uint32_t u = num::float_bits(sum);
        if ((u & 0x7FFFFFFFu) > 0x7F800000u) u = kCanonicalNan;
        bits = out_bf16 ? num::to_bf16(num::bits_float(u)) : u;
      }
      xposed_[i * m + mi] = bits;
    }
  }
}

std::string tile_text(const isa::TileRect& t) {
  return "rows " + std::to_string(t.row0) + "+" + std::to_string(t.rows) + ", cols " + std::to_string(t.col0) + "+" +
         std::to_string(t.cols);
}

}  // namespace

ArrayExecutor::ArrayExecutor(const isa::ArrayGeometry& geo, unsigned threads, Bf16Rounding rounding)
    : geo_(geo), threads_(threads == 0 ? 1 : threads), rounding_(rounding) {
  seeds_.resize(std::size_t{geo_.partitions} * seeds_per_partition());
  for (std::size_t i = 0; i < seeds_.size(); ++i) seeds_[i] = reset_seed(i);
}

std::uint32_t ArrayExecutor::reset_seed(std::size_t i) {
  // A 32-bit finaliser (MurmurHash3's) of i + 1: distinct, well mixed, and never the xorshift's stuck state 0.
  auto x = static_cast<std::uint32_t>(i + 1);
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  x ^= x >> 16;
  return x == 0 ? 1u : x;
}

namespace {
// One step of Marsaglia's xorshift32 (13, 17, 5): the generator every seed runs (D-SR-RNG).
std::uint32_t xorshift32(std::uint32_t x) {
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}
}  // namespace

std::uint16_t ArrayExecutor::drain_bf16(float value, std::size_t at, bool stochastic) {
  if (!stochastic) return num::to_bf16(value);
  const std::size_t pb = geo_.psum_partition_bytes(), partition = at / pb, offset = at % pb;
  const std::size_t s = offset / geo_.psum_bank_bytes * kSeedsPerBank + (offset / 2) % kSeedsPerBank;
  std::uint32_t& seed = seeds_[partition * seeds_per_partition() + s];
  seed = xorshift32(seed);
  return num::to_bf16_sr(value, seed >> 16);  // the high half: xorshift's low bits are its weakest
}

unsigned ArrayExecutor::open_banks() const {
  unsigned mask = 0;
  for (unsigned b = 0; b < kBanks; ++b)
    if (open_[b]) mask |= 1u << b;
  return mask;
}

void ArrayExecutor::install(Stationary s) {
  // A load replaces every stationary its tile overlaps.
  std::vector<Stationary> kept;
  for (auto& o : stationaries_)
    if (!o.tile.overlaps(s.tile)) kept.push_back(std::move(o));
  kept.push_back(std::move(s));
  stationaries_ = std::move(kept);
}

const Stationary* ArrayExecutor::stationary(const isa::TileRect& tile) const {
  for (const auto& s : stationaries_)
    if (s.tile == tile) return &s;
  return nullptr;
}

const float* ArrayExecutor::conv_lut(isa::Dtype d) const {
  const std::size_t slot = conv_lut_slot(d);
  return slot < conv_luts_.size() && !conv_luts_[slot].empty() ? conv_luts_[slot].data() : nullptr;
}

ExecResult ArrayExecutor::load_conv_lut(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes) {
  if (std::string e = conv_lut_error(op.in_dtype); !e.empty())
    return ExecResult::error("exec.convlut", "lut_dtype = " + std::to_string(op.in_dtype_raw) + ": " + e);
  if (auto r = plain_3d(op.src, "src_mem_pattern"); !r.ok) return r;
  const std::size_t entries = conv_lut_entries(op.in_dtype);
  if (op.src.elements() != entries)
    return ExecResult::error("exec.pattern_count", "src_mem_pattern yields " + std::to_string(op.src.elements()) +
                                                       " elements, the " + std::string(isa::name(op.in_dtype)) +
                                                       " converter table has " + std::to_string(entries) +
                                                       " (one fp32 value per code)");
  constexpr std::size_t kEntryBytes = sizeof(float);
  Access a;
  if (auto r = plan_access(op.src, "src_mem_pattern", sbuf_region(geo_, sbuf_bytes), 1, kEntryBytes, a); !r.ok)
    return r;
  std::vector<float> table(entries);
  for (std::size_t i = 0; i < entries; ++i) std::memcpy(&table[i], sbuf + a.at(0, i), kEntryBytes);
  conv_luts_[conv_lut_slot(op.in_dtype)] = std::move(table);
  stats_ = {};
  stats_.kind = MicroOpKind::WeightLoad;
  stats_.tile = op.tile;
  stats_.m = entries;
  stats_.elements_loaded = entries;
  return ExecResult::success();
}

void ArrayExecutor::reset() {
  for (auto& t : conv_luts_) t.clear();
  stationaries_.clear();
  tags_.clear();
  staged_identity_.reset();
  open_.fill(false);
  stats_ = {};
  for (std::size_t i = 0; i < seeds_.size(); ++i) seeds_[i] = reset_seed(i);
}


ExecResult ArrayExecutor::read_mx(const MicroOp& op, const OperandType& t, const MxPacking& mx, std::size_t k,
                                  const std::uint8_t* sbuf, std::size_t sbuf_bytes, std::vector<float>& dst,
                                  std::size_t& columns) {
  if (op.src.dims < 1 || op.src.dims > 2)
    return ExecResult::error("exec.pattern_count", "src_mem_pattern: an MX source has 1 (MXMEM_PATTERN1D) or 2 "
                                                   "(MXTENSOR_V2) dimensions, it has " + std::to_string(op.src.dims));
  const std::size_t wb = mx_word_bytes(t.dtype);
  const Region r = sbuf_region(geo_, sbuf_bytes);
  Access a;
  if (auto e = plan_source(mx_data_pattern(op.src), "src_mem_pattern", r, k, wb, sbuf, a); !e.ok) return e;
  const std::size_t words = a.count();
  if (words % mx.words() != 0)
    return ExecResult::error("exec.pattern_count", "src_mem_pattern yields " + std::to_string(words) +
                                                       " x4 words per partition: perf_mode " +
                                                       std::string(isa::name(mx.mode)) + " takes " +
                                                       std::to_string(mx.words()) + " per column");
  if (auto e = read_mx_scales(op.src, "src_mem_pattern", r, k, words, sbuf, mx_scales_); !e.ok) return e;
  mx_words_.resize(k * words * wb);
  for (std::size_t p = 0; p < k; ++p)
    for (std::size_t i = 0; i < words; ++i) std::memcpy(&mx_words_[(p * words + i) * wb], sbuf + a.at(p, i), wb);
  const MxOperand source{t.gen, t.dtype, mx, k, words, mx_words_.data(), mx_scales_.data(), conv_lut(t.dtype)};
  columns = source.columns();
  dst.resize(source.rows() * columns);
  decode_mx(source, dst.data());
  return ExecResult::success();
}

void ArrayExecutor::finish_load(const MicroOp& op, Stationary& s) {
  const std::size_t m = s.m;
  if (op.reverse_columns)  // FIRST_COL_FIRST: element j lands in column M - 1 - j (D-LOAD-ORDER)
    for (std::size_t r = 0; r < s.k; ++r) std::reverse(s.values.begin() + r * m, s.values.begin() + (r + 1) * m);
  if (op.wl_last_active_col) {  // the load stopped early: the columns past it hold 0
    const std::size_t filled = loaded_columns(static_cast<unsigned>(m), s.tile.col0, *op.wl_last_active_col);
    for (std::size_t r = 0; r < s.k; ++r)
      std::fill(s.values.begin() + r * m + filled, s.values.begin() + (r + 1) * m, 0.0f);
  }
}

ExecResult ArrayExecutor::ldweights_mx(const MicroOp& op, const OperandType& t, const MxPacking& mx,
                                       const std::uint8_t* sbuf, std::size_t sbuf_bytes) {
  Stationary s;
  std::size_t columns = 0;
  if (auto r = read_mx(op, t, mx, op.k, sbuf, sbuf_bytes, s.values, columns); !r.ok) return r;
  if (columns != op.m)
    return ExecResult::error("exec.pattern_count", "src_mem_pattern yields " + std::to_string(columns * mx.words()) +
                                                       " x4 words per partition, num_active_cols (M) x " +
                                                       std::to_string(mx.words()) + " = " +
                                                       std::to_string(std::size_t{op.m} * mx.words()));
  s.tile = op.tile;
  s.k = std::size_t{op.k} * mx.rows;
  s.m = op.m;
  s.type = t;
  s.mx = true;
  s.mx_mode = op.mx_mode;
  finish_load(op, s);
  install(std::move(s));
  stats_ = {};
  stats_.kind = MicroOpKind::WeightLoad;
  stats_.tile = op.tile;
  stats_.k = std::size_t{op.k} * mx.rows;
  stats_.m = op.m;
  stats_.elements_loaded = stats_.k * op.m;
  return ExecResult::success();
}

void ArrayExecutor::install_tags(TagTile t) {
  std::vector<TagTile> kept;
  for (auto& o : tags_)
    if (!o.tile.overlaps(t.tile)) kept.push_back(std::move(o));
  kept.push_back(std::move(t));
  tags_ = std::move(kept);
}

const TagTile* ArrayExecutor::tags(const isa::TileRect& tile) const {
  for (const auto& t : tags_)
    if (t.tile == tile) return &t;
  return nullptr;
}

ExecResult ArrayExecutor::load_tags(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes) {
  if (op.kind != MicroOpKind::WeightLoad)
    return ExecResult::error("exec.opcode", "opcode = " + hex(op.opcode_byte) + ": a tag load is a weight_load "
                                                                                "micro-op, got " + name(op.kind));
  constexpr std::size_t kWordBytes = sizeof(std::uint16_t);
  if (op.in_dtype != isa::Dtype::UINT16)
    return ExecResult::error("exec.in_dtype", "in_dtype = " + std::to_string(op.in_dtype_raw) +
                                                  ": LdTags reads UINT16 words of four 4-bit tags");
  if (!valid_force_tag_bits(op.force_tag_bits))
    return ExecResult::error("exec.sparse_tag", "force_tag_bits = " + std::to_string(op.force_tag_bits) +
                                                    ": must be 0x0, 0x4, 0x8 or 0xC (a row group in tag bits 2-3)");
  if (auto r = plain_3d(op.src, "src_mem_pattern"); !r.ok) return r;
  const std::size_t k = op.k, m = op.m, words = tag_words(m);
  if (op.src.elements() != words)
    return ExecResult::error("exec.pattern_count", "src_mem_pattern yields " + std::to_string(op.src.elements()) +
                                                       " u16 tag words per partition; num_active_cols (M) = " +
                                                       std::to_string(m) + " takes ceil(M / 4) = " +
                                                       std::to_string(words));
  Access acc;
  if (auto r = plan_access(op.src, "src_mem_pattern", sbuf_region(geo_, sbuf_bytes), k, kWordBytes, acc); !r.ok)
    return r;
  TagTile tt{op.tile, k, m, std::vector<std::uint8_t>(k * m)};
  std::vector<std::uint16_t> row(words);
  for (std::size_t p = 0; p < k; ++p) {
    for (std::size_t w = 0; w < words; ++w) std::memcpy(&row[w], sbuf + acc.at(p, w), kWordBytes);
    unpack_tag_row(row.data(), m, op.force_tag_bits, &tt.tags[p * m]);
  }
  install_tags(std::move(tt));
  stats_ = {};
  stats_.kind = MicroOpKind::WeightLoad;
  stats_.tile = op.tile;
  stats_.k = k;
  stats_.m = m;
  stats_.elements_loaded = k * m;
  return ExecResult::success();
}

ExecResult ArrayExecutor::ldweights_tagged(const MicroOp& op, const OperandType& t, const std::uint8_t* sbuf,
                                           std::size_t sbuf_bytes) {
  if (op.mx || op.double_row || op.transpose)
    return ExecResult::error("exec.sparse_mix", std::string("tag_weight_mode = TAG_WEIGHT: a tagged load cannot be ") +
                                                    (op.mx ? "an MX source" : op.double_row ? "double_row (perf_opt)"
                                                                                            : "transposed"));
  constexpr std::size_t kHalf = sizeof(std::uint16_t), kElement = 2 * kHalf;
  if (operand_bytes(t.dtype) != kHalf)
    return ExecResult::error("exec.in_dtype", "in_dtype = " + std::to_string(op.in_dtype_raw) +
                                                  ": tag_weight_mode TAG_WEIGHT interleaves u16 weights (BFLOAT16 "
                                                  "or FP16) with their u16 tags");
  if (auto r = plain_3d(op.src, "src_mem_pattern", true); !r.ok) return r;
  const std::size_t k = op.k, m = op.m;
  if (op.src.elements() != m)
    return ExecResult::error("exec.pattern_count", "src_mem_pattern yields " + std::to_string(op.src.elements()) +
                                                       " {weight, tag} elements per partition, num_active_cols (M) = " +
                                                       std::to_string(m));
  Access acc;
  if (auto r = plan_source(op.src, "src_mem_pattern", sbuf_region(geo_, sbuf_bytes), k, kElement, sbuf, acc); !r.ok)
    return r;
  Stationary s;
  s.tile = op.tile;
  s.k = k;
  s.m = m;
  s.type = t;
  s.values.resize(k * m);
  TagTile tt{op.tile, k, m, std::vector<std::uint8_t>(k * m)};
  for (std::size_t p = 0; p < k; ++p)
    for (std::size_t j = 0; j < m; ++j) {
      std::uint16_t half[2];  // {weight, tag}: the weight at the lower address
      std::memcpy(half, sbuf + acc.at(p, j), kElement);
      if (half[1] >= kTagLimit)
        return ExecResult::error("exec.sparse_tag", "src_mem_pattern: partition " + std::to_string(p) + " element " +
                                                        std::to_string(j) + " carries tag " + hex(half[1]) +
                                                        "; a tag is 4 bits (0..15)");
      decode_operands(t, reinterpret_cast<const std::uint8_t*>(&half[0]), 1, &s.values[p * m + j]);
      tt.tags[p * m + j] = static_cast<std::uint8_t>(half[1]);
    }
  // The column order and an early stop apply to the tags as to their weights.
  if (op.reverse_columns)
    for (std::size_t p = 0; p < k; ++p) std::reverse(tt.tags.begin() + p * m, tt.tags.begin() + (p + 1) * m);
  if (op.wl_last_active_col) {
    const std::size_t filled = loaded_columns(static_cast<unsigned>(m), op.tile.col0, *op.wl_last_active_col);
    for (std::size_t p = 0; p < k; ++p) std::fill(tt.tags.begin() + p * m + filled, tt.tags.begin() + (p + 1) * m, 0);
  }
  finish_load(op, s);
  install(std::move(s));
  install_tags(std::move(tt));
  stats_ = {};
  stats_.kind = MicroOpKind::WeightLoad;
  stats_.tile = op.tile;
  stats_.k = k;
  stats_.m = m;
  stats_.elements_loaded = k * m;
  return ExecResult::success();
}

ExecResult ArrayExecutor::plan_sparse_matmul(const MicroOp& op, const Stationary& st, SparsePlan& plan) const {
  if (st.mx || st.double_row)
    return ExecResult::error("exec.sparse_mix", std::string("the tile's stationary was loaded ") +
                                                    (st.mx ? "MX" : "double_row") +
                                                    "; a sparse matmul multiplies one weight per PE cell");
  const TagTile* tt = tags(op.tile);
  if (!tt)
    return ExecResult::error("exec.sparse_no_tags", "no tags loaded for the tile (" + tile_text(op.tile) +
                                                        "): LdTags or an Ldweights with tag_weight_mode TAG_WEIGHT "
                                                        "comes first");
  if (tt->k != op.k || tt->m != op.m)
    return ExecResult::error("exec.sparse_no_tags", "num_active_rows x num_active_cols = " + std::to_string(op.k) +
                                                        " x " + std::to_string(op.m) + ": the tile's tags are " +
                                                        std::to_string(tt->k) + " x " + std::to_string(tt->m));
  const std::int64_t fmaps = op.src.dims == isa::kMaxPatternDims ? op.src.num[3] : 0;
  if (fmaps < kMinFmaps || fmaps > kMaxFmaps)
    return ExecResult::error("exec.pattern_count", "src_mem_pattern.num_elem[3] = " + std::to_string(fmaps) +
                                                       ": a sparse matmul sends 2, 3 or 4 fmaps per partition");
  plan = plan_sparse(op.tile, op.k, op.m, static_cast<std::size_t>(fmaps), tt->tags, geo_);
  if (!plan.error.empty())
    return ExecResult::error("exec.sparse_tag", "src_mem_pattern.num_elem[3] = " + std::to_string(fmaps) + ": " +
                                                    plan.error);
  return ExecResult::success();
}

ExecResult ArrayExecutor::ldweights(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes) {
  if (datapath_)
    if (std::string why = datapath_->refusal(op); !why.empty()) return ExecResult::error("exec.datapath", why);
  if (op.sparse == SparseRole::Tags) return load_tags(op, sbuf, sbuf_bytes);
  if (op.conv_lut && op.kind == MicroOpKind::WeightLoad) return load_conv_lut(op, sbuf, sbuf_bytes);
  OperandType t;
  std::optional<MxPacking> mx;
  if (auto r = check_common(op, MicroOpKind::WeightLoad, t, mx); !r.ok) return r;
  if (op.unmodelled.seed_mode != 0) return maverick_seed_move(op, sbuf, sbuf_bytes);
  if (op.sparse == SparseRole::TagWeights) return ldweights_tagged(op, t, sbuf, sbuf_bytes);
  if (mx) return ldweights_mx(op, t, *mx, sbuf, sbuf_bytes);
  if (auto r = plain_3d(op.src, "src_mem_pattern", true); !r.ok) return r;
  if (op.double_row && op.transpose)
    return ExecResult::error("exec.double_row_mix", "perf_opt = FP8_DOUBLE_ROW: double_row cannot combine with a "
                                                    "transposed load");
  const isa::TileRect tile = op.tile;
  const std::size_t k = op.k, m = op.m;
  const bool xpose = op.transpose;
  // Not transposed: K partitions of M elements (double_row: of M element pairs, D-EXEC-DOUBLE-ROW). Transposed
  // (D-EXEC-XPOSE): M partitions of K elements, stationary[k][m] = sbuf_tile[m][k].
  const std::size_t pair = op.double_row ? 2 : 1;
  const std::size_t parts = xpose ? m : k, per = (xpose ? k : m) * pair;
  if (op.src.elements() != per)
    return ExecResult::error("exec.pattern_count",
                             "src_mem_pattern yields " + std::to_string(op.src.elements()) + " elements per partition, " +
                                 (xpose ? "num_active_rows (K, transposed) = " + std::to_string(k)
                                        : op.double_row ? "2 x num_active_cols (M element pairs, double_row) = " +
                                                              std::to_string(per)
                                                        : "num_active_cols (M) = " + std::to_string(m)));
  const std::size_t eb = operand_bytes(t.dtype);
  Access acc;
  if (auto r = plan_source(op.src, "src_mem_pattern", sbuf_region(geo_, sbuf_bytes), parts, eb, sbuf, acc); !r.ok)
    return r;
  std::vector<float> tilev(parts * per);
  if (!decode_access(t, sbuf, acc, parts, row_, tilev.data(), conv_lut(t.dtype)))
    return ExecResult::error("exec.in_dtype", "in_dtype: cannot decode");
  Stationary s;
  s.tile = tile;
  s.k = k * pair;
  s.m = m;
  s.type = t;
  s.double_row = op.double_row;
  if (xpose) {
    s.values.resize(k * m);
    for (std::size_t mi = 0; mi < m; ++mi)
      for (std::size_t ki = 0; ki < k; ++ki) std::memcpy(&s.values[ki * m + mi], &tilev[mi * k + ki], sizeof(float));
  } else if (op.double_row) {
    // Partition p's pair j of column mi is logical contraction row 2p + j.
    s.values.resize(2 * k * m);
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t j = 0; j < 2; ++j)
        for (std::size_t mi = 0; mi < m; ++mi) s.values[(2 * p + j) * m + mi] = tilev[p * per + 2 * mi + j];
  } else {
    s.values = std::move(tilev);
  }
  finish_load(op, s);
  if (datapath_) datapath_timing_ = datapath_->load(s);
  if (op.seed != SeedMove::None)
    staged_identity_ = std::move(s);  // installed by the seed Matmul that moves through it
  else
    install(std::move(s));
  stats_ = {};
  stats_.kind = MicroOpKind::WeightLoad;
  stats_.tile = tile;
  stats_.k = k * pair;
  stats_.m = m;
  stats_.elements_loaded = k * per;
  return ExecResult::success();
}

ExecResult ArrayExecutor::matmul(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes,
                                 std::uint8_t* psum, std::size_t psum_bytes) {
  if (datapath_)
    if (std::string why = datapath_->refusal(op); !why.empty()) return ExecResult::error("exec.datapath", why);
  OperandType t;
  std::optional<MxPacking> mx;
  if (auto r = check_common(op, MicroOpKind::Matmul, t, mx); !r.ok) return r;
  if (op.unmodelled.seed_mode != 0) return maverick_seed_move(op, sbuf, sbuf_bytes);
  if (op.seed != SeedMove::None) return seed_matmul(op, sbuf, sbuf_bytes, psum, psum_bytes);
  const bool sparse = op.sparse == SparseRole::Matmul;  // MatmulSparse: a TENSOR4D source (D-SPARSE-SELECT)
  if (!mx && !sparse)
    if (auto r = plain_3d(op.src, "src_mem_pattern", true); !r.ok) return r;
  if (auto r = plain_3d(op.dst, "dst_mem_pattern"); !r.ok) return r;
  if (op.double_row && op.transpose)
    return ExecResult::error("exec.double_row_mix", "perf_opt = FP8_DOUBLE_ROW: double_row cannot combine with a "
                                                    "transposing matmul");
  const isa::TileRect tile = op.tile;
  const std::size_t k = op.k, m = op.m;
  // Contraction rows per partition: 2 for fp8 double_row, the perf mode's 4 or 8 for MX.
  const std::size_t pair = mx ? mx->rows : op.double_row ? 2 : 1;
  const Stationary* st = stationary(tile);
  if (!st)
    return ExecResult::error("exec.no_stationary", "no stationary loaded for the tile (" + tile_text(tile) + ")");
  SparsePlan sparse_plan;
  if (sparse)
    if (auto r = plan_sparse_matmul(op, *st, sparse_plan); !r.ok) return r;
  if (st->mx != op.mx)
    return ExecResult::error("exec.mx_mix", std::string("the matmul's source is ") + (op.mx ? "MX" : "dense") +
                                                ", the tile's stationary was loaded " + (st->mx ? "MX" : "dense"));
  if (mx) {
    // Both operands must map their packed values onto the same contraction rows (the pump rate may differ).
    const MxPacking loaded = *mx_packing(st->mx_mode);
    if (loaded.rows != mx->rows || loaded.order != mx->order)
      return ExecResult::error("exec.mx_mix", "perf_mode = " + std::string(isa::name(mx->mode)) +
                                                  ": the tile's stationary was loaded " +
                                                  std::string(isa::name(loaded.mode)) +
                                                  ", which packs its rows differently");
  }
  if (st->double_row != op.double_row)
    return ExecResult::error("exec.double_row_mix", std::string("perf_opt: the matmul is ") +
                                                        (op.double_row ? "" : "not ") +
                                                        "double_row, the tile's stationary was " +
                                                        (st->double_row ? "" : "not ") + "loaded double_row");
  if (st->k != k * pair)
    return ExecResult::error("exec.k_mismatch", "num_active_rows = " + std::to_string(k) +
                                                    ": the tile's stationary has K = " + std::to_string(st->k) +
                                                    (op.double_row ? " (double_row: 2 rows per partition)"
                                                     : mx ? " (MX: " + std::to_string(pair) + " rows per partition)"
                                                          : ""));
  if (st->m != m)
    return ExecResult::error("exec.m_mismatch", "num_active_cols = " + std::to_string(m) +
                                                    ": the tile's stationary has M = " + std::to_string(st->m));
  // A datapath streams the moving data in its stationary's format (datapath.h): one dtype per matmul.
  if (datapath_ && st->type.dtype != t.dtype)
    return ExecResult::error("exec.datapath", "in_dtype = " + std::to_string(op.in_dtype_raw) +
                                                  ": the tile's stationary was loaded as " +
                                                  std::string(isa::name(st->type.dtype)) + "; " +
                                                  datapath_->name() + " multiplies one dtype per matmul");
  const bool st32 = st->type.dtype == isa::Dtype::FP32, mv32 = t.dtype == isa::Dtype::FP32;
  if (st32 != mv32 || (st32 && st->type.fp32_mode != t.fp32_mode))
    return ExecResult::error("exec.fp32_mix", "in_dtype = " + std::to_string(op.in_dtype_raw) + ", fp32_mode = " +
                                                  std::to_string(op.fp32_mode_raw) +
                                                  ": the stationary's dtype/fp32_mode differ (fp32/tf32 must not mix)");
  // Output type.
  const std::int64_t od = op.out_dtype;
  bool out_bf16 = false;
  if (od == 0 || od == static_cast<std::int64_t>(isa::Dtype::FP32)) {
    out_bf16 = false;
  } else if (od == static_cast<std::int64_t>(isa::Dtype::BFLOAT16) && isa::is_v4_plus(op.gen)) {
    out_bf16 = true;
  } else {
    return ExecResult::error("exec.out_dtype", "out_dtype = " + std::to_string(od) +
                                                   ": only FP32 (and BFLOAT16 from v4) PSUM output is modelled");
  }
  const std::size_t ob = out_bf16 ? 2 : 4;
  const std::size_t src_count = op.src.elements();
  std::size_t n = 0;  // moving free size
  if (mx) {
    // Decoded here, before any PSUM check: nothing but scratch is written until every check has passed.
    if (auto r = read_mx(op, t, *mx, k, sbuf, sbuf_bytes, moving_, n); !r.ok) return r;
  } else {
    if (src_count % pair != 0)
      return ExecResult::error("exec.pattern_count", "src_mem_pattern yields " + std::to_string(src_count) +
                                                         " elements per partition: double_row needs element pairs");
    n = src_count / (sparse ? sparse_plan.fmaps : pair);
  }
  // The outputs: M rows of N (a transposing matmul: N rows of M, D-EXEC-XPOSE-MM), folded on a c256 tile wider
  // than the partitions (D-EXEC-C256).
  OutLayout out;
  const bool folded = !op.transpose && tile.cols > geo_.partitions;
  out.rows = op.transpose ? n : m;
  out.per_row = op.transpose ? m : n;
  out.fold = folded ? geo_.partitions : std::max<std::size_t>(out.rows, 1);
  const std::size_t dst_halves = folded ? 2 : 1;
  if (op.dst.count() != out.per_row * dst_halves)
    return ExecResult::error("exec.pattern_count",
                             "dst_mem_pattern yields " + std::to_string(op.dst.count()) + " elements per partition, " +
                                 (op.transpose ? "num_active_cols (M, transposed) = " + std::to_string(m)
                                               : folded ? "2 x N (the c256 halves) = " + std::to_string(2 * n)
                                                        : "src_mem_pattern " + std::to_string(n) + " (N)"));
  if (op.transpose && n > geo_.partitions)
    return ExecResult::error("exec.pattern_partitions", "src_mem_pattern yields " + std::to_string(n) +
                                                            " elements per partition: a transposing matmul writes "
                                                            "one PSUM partition per moving element (at most " +
                                                            std::to_string(geo_.partitions) + ")");
  const std::size_t eb = operand_bytes(t.dtype);
  Access sa, da;
  if (sparse) {
    if (auto r = plan_fmaps(op.src, sbuf_region(geo_, sbuf_bytes), k, eb, sa); !r.ok) return r;
  } else if (!mx) {
    if (auto r = plan_source(op.src, "src_mem_pattern", sbuf_region(geo_, sbuf_bytes), k, eb, sbuf, sa); !r.ok)
      return r;
  }
  if (auto r = plan_access(op.dst, "dst_mem_pattern", psum_region(geo_, psum_bytes), out.partitions(), ob, da); !r.ok)
    return r;
  // A transposing matmul's routing: the row of each stationary column's 1 (worked out here, not at every load, so
  // plain GEMMs never pay for it).
  std::vector<std::int32_t> one_hot_row;
  if (op.transpose) {
    one_hot_row = one_hot_rows(st->values, st->k, st->m);
    for (std::size_t mi = 0; mi < m; ++mi)
      if (one_hot_row[mi] < 0)
        return ExecResult::error("exec.xpose_stationary", "xpose_mode = 1: " + one_hot_problem(*st, mi) +
                                                              "; a transposing matmul routes through a 0/1 "
                                                              "stationary with one 1 per column (the identity)");
  }
  const auto& geo = geo_;
  const std::size_t bank_bytes = geo.psum_bank_bytes;
  const std::size_t pb = geo.psum_partition_bytes();
  const std::size_t dp0 = da.first_partition;
  // The banks the output reaches (the same in every partition). CAYMAN keeps one (mm.psum_footprint); v4+ may
  // span the partition's banks (D-EXEC-MULTIBANK).
  const unsigned touched = banks_touched(da.plan, bank_bytes);
  // PSUM group semantics (the firmware decided them from the generation's flags), per touched bank.
  const PsumGroup& g = op.psum;
  const bool accumulate = g.accumulate;
  bool zero = false;
  unsigned zero_mask = 0;
  if (g.tracked) {
    if (g.begin && g.begin_accumulate)
      return ExecResult::error("exec.psum_flags", "psum_accumulate_flags = " + std::to_string(g.flags) +
                                                      ": BEGIN and BEGIN_ACCUM together");
    const unsigned open = open_banks();
    if ((g.begin || g.begin_accumulate) && (touched & open))
      return ExecResult::error("exec.psum_group_open", "psum_accumulate_flags = " + isa::psum_flags_name(g.flags) +
                                                           ": a group is already open in PSUM bank " +
                                                           bank_list(touched & open));
    if (!g.begin && !g.begin_accumulate && (touched & ~open))
      return ExecResult::error("exec.psum_group_unopened", "psum_accumulate_flags = " +
                                                               isa::psum_flags_name(g.flags) +
                                                               ": accumulate into an unopened group (PSUM bank " +
                                                               bank_list(touched & ~open) + ")");
    zero = g.begin;
    if (g.zero_banks > geo.psum_banks || (zero && g.zero_banks == 0))
      return ExecResult::error("exec.psum_zero_region", "psum_zero_region = " + std::to_string(g.zero_region) +
                                                            ": more than " + std::to_string(geo.psum_banks) +
                                                            " banks");
    // BEGIN clears the aligned block of zero_banks banks around every bank the output touches.
    if (zero)
      for (unsigned b = 0; b < geo.psum_banks; ++b)
        if (touched >> b & 1u) {
          const unsigned block = b / g.zero_banks * g.zero_banks;
          if (block + g.zero_banks > geo.psum_banks)  // cannot happen with a power-of-two bank count
            return ExecResult::error("exec.psum_zero_region", "psum_zero_region = " + std::to_string(g.zero_region) +
                                                                  ": banks " + std::to_string(block) + ".." +
                                                                  std::to_string(block + g.zero_banks - 1) +
                                                                  " leave the " + std::to_string(geo.psum_banks) +
                                                                  " PSUM banks");
          zero_mask |= ((1u << g.zero_banks) - 1) << block;
        }
    if (zero_mask != 0 && out.partitions() > 0) {
      unsigned highest = 0;
      for (unsigned b = 0; b < geo.psum_banks; ++b)
        if (zero_mask >> b & 1u) highest = b;
      const std::size_t last = (dp0 + out.partitions() - 1) * pb + (highest + 1) * bank_bytes;
      if (last > psum_bytes)
        return ExecResult::error("exec.buffer_bounds", "psum_zero_region: PSUM address " +
                                                           hex(isa::ArrayGeometry::kPsumBase + last - 1) +
                                                           " is beyond the " + std::to_string(psum_bytes) +
                                                           "-byte PSUM buffer");
    }
  }
  // Every check has passed: from here on the matmul cannot fail, so PSUM may be written.
  const auto zero_region = [&] {
    for (std::size_t p = 0; p < out.partitions(); ++p)
      for (unsigned b = 0; b < geo.psum_banks; ++b)
        if (zero_mask >> b & 1u) std::memset(psum + (dp0 + p) * pb + b * bank_bytes, 0, bank_bytes);
  };
  const auto load_out = [&](std::size_t r, std::size_t j) {
    const std::size_t at = out.at(da, r, j);
    float v;
    if (out_bf16) {
      std::uint16_t h;
      std::memcpy(&h, psum + at, 2);
      v = num::from_bf16(h);
    } else {
      std::memcpy(&v, psum + at, 4);
    }
    return v;
  };
  const bool stochastic = out_bf16 && rounding_ == Bf16Rounding::Stochastic && isa::is_v4(op.gen);
  const auto store_out = [&](std::size_t r, std::size_t j, float v) {
    const std::size_t at = out.at(da, r, j);
    if (out_bf16) {
      const std::uint16_t h = drain_bf16(v, at, stochastic);
      std::memcpy(psum + at, &h, 2);
    } else {
      std::memcpy(psum + at, &v, 4);
    }
  };
  if (op.transpose) {
    transpose_moving(t, *st, one_hot_row, sbuf, sa, out_bf16, accumulate && !zero, accumulate,
                     [&](std::size_t r, std::size_t j) { return load_out(r, j); }, xposed_);
    zero_region();
    // Commit: the values are bit patterns of the output dtype, so a transpose moves NaN payloads.
    for (std::size_t r = 0; r < out.rows; ++r)
      for (std::size_t j = 0; j < out.per_row; ++j) {
        const std::uint32_t bits = xposed_[r * m + j];
        if (out_bf16) {
          const auto h = static_cast<std::uint16_t>(bits);
          std::memcpy(psum + out.at(da, r, j), &h, 2);
        } else {
          std::memcpy(psum + out.at(da, r, j), &bits, 4);
        }
      }
  } else {
    const std::size_t kl = k * pair;
    const MatmulShape shape{kl, m, n};
    bool direct = !mx && !conv_lut(t.dtype) && !out_bf16 && !op.double_row && sa.plan.contiguous && n > 0 && t.fp32_mode != isa::Fp32Mode::Low_High;
    for (std::size_t h = 0; direct && h < out.halves(); ++h) direct = contiguous_run(da.plan, h * n, n, ob);
    direct = direct && !sparse;  // a sparse matmul selects its rows per cell: the generic path below
    direct = direct && !datapath_;  // a datapath computes on the decoded tiles of the generic path
    if (direct) {
      // The moving rows are each one contiguous run and so is every half of the fp32 dst rows (every tiled GEMM):
      // the kernel decodes the moving operand straight from SBUF and adds into PSUM in place (after the zero region
      // is cleared, so BEGIN + accumulate adds onto +0 as below). A folded tile runs each column half on its own.
      zero_region();
      const MovingRows mv{sbuf + sa.at(0, 0), sa.partition_bytes, t};
      for (std::size_t h = 0; h < out.halves(); ++h) {
        const std::size_t r0 = h * out.fold, rows = std::min(out.fold, out.rows - r0);
        const float* stv = st->values.data();
        if (out.halves() > 1) {
          half_.resize(kl * rows);
          for (std::size_t ki = 0; ki < kl; ++ki)
            std::memcpy(&half_[ki * rows], &st->values[ki * m + r0], rows * sizeof(float));
          stv = half_.data();
        }
        // The destination is 4-byte aligned: pattern starts are aligned to the element (plan_access) and
        // partitions are whole multiples of 64 bytes.
        const DstRows dst{reinterpret_cast<float*>(psum + out.at(da, r0, 0)), pb / sizeof(float)};
        if (!matmul_pass_fast_rows(stv, mv, dst, MatmulShape{kl, rows, n}, accumulate, threads_))
          return ExecResult::error("exec.in_dtype", "in_dtype: cannot decode");  // unreachable: checked above
      }
    } else {
      // Any other pattern or output type, double_row, MX (decoded above) or Low_High: decode the moving tile,
      // compute into a scratch tile (both live across instructions: no allocation per matmul once warm), then commit.
      if (!mx) {
        moving_.resize(k * src_count);
        if (!decode_access(t, sbuf, sa, k, row_, moving_.data(), conv_lut(t.dtype)))
          return ExecResult::error("exec.in_dtype", "in_dtype: cannot decode");
      }
      if (op.double_row) {
        // Partition p's pair j of moving element i is logical contraction row 2p + j (as the stationary's).
        half_.resize(kl * n);
        for (std::size_t p = 0; p < k; ++p)
          for (std::size_t j = 0; j < 2; ++j)
            for (std::size_t i = 0; i < n; ++i) half_[(2 * p + j) * n + i] = moving_[p * src_count + 2 * i + j];
        moving_.swap(half_);
      }
      out_.assign(m * n, 0.0f);
      if (accumulate && !zero)
        for (std::size_t r = 0; r < m; ++r)
          for (std::size_t i = 0; i < n; ++i) out_[r * n + i] = load_out(r, i);
      if (datapath_)  // it refused everything but a dense single pass of its dtypes (refusal above)
        datapath_timing_ = datapath_->matmul(*st, moving_.data(), n, accumulate, out_.data());
      else if (sparse)  // moving_ is [k][fmaps][n]
        sparse_matmul(t.fp32_mode, sparse_plan, st->values.data(), moving_.data(), n, out_.data(), accumulate);
      else
        pevp::pe::matmul(Kernel::Fast, t.fp32_mode, st->values.data(), moving_.data(), out_.data(), shape,
                         accumulate, threads_);
      zero_region();
      for (std::size_t r = 0; r < m; ++r)
        for (std::size_t i = 0; i < n; ++i) store_out(r, i, out_[r * n + i]);
    }
  }
  if (g.tracked)
    for (unsigned b = 0; b < kBanks; ++b)
      if (touched >> b & 1u) open_[b] = !g.end;
  stats_ = {};
  stats_.kind = MicroOpKind::Matmul;
  stats_.tile = tile;
  stats_.k = k * pair;
  stats_.m = m;
  stats_.n = n;
  stats_.macs = op.transpose ? 0 : static_cast<std::uint64_t>(k * pair) * m * n;
  stats_.passes = t.fp32_mode == isa::Fp32Mode::Low_High ? 3 : 1;
  return ExecResult::success();
}

// MAVERICK's seed micro-ops (flags.seed_mode on Ldweights / Matmul, spec 000 section 5.1). What the spec states is
// checked -- the shape by the validity rules (seed.load_contract / seed.save_contract), the single source element's
// value 1 here, as v4's identity is (exec.seed_identity) -- and the micro-op is then refused: the spec fixes its shape
// but not which seeds it moves or where LoadSeed's come from (D-SEED-V5-EXEC). Nothing is written either way.
ExecResult ArrayExecutor::maverick_seed_move(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes) const {
  constexpr std::size_t kFp32Bytes = 4;
  constexpr std::uint32_t kFp32One = 0x3F800000u;
  if (auto r = plain_3d(op.src, "src_mem_pattern", true); !r.ok) return r;
  Access a;
  if (auto r = plan_source(op.src, "src_mem_pattern", sbuf_region(geo_, sbuf_bytes), 1, kFp32Bytes, sbuf, a); !r.ok)
    return r;
  if (a.count() != 1)
    return ExecResult::error("exec.pattern_count", "src_mem_pattern yields " + std::to_string(a.count()) +
                                                       " elements; a seed micro-op's source is the single identity "
                                                       "element");
  std::uint32_t bits = 0;
  std::memcpy(&bits, sbuf + a.at(0, 0), kFp32Bytes);
  if (bits != kFp32One) {
    float value = 0.0f;
    std::memcpy(&value, &bits, kFp32Bytes);
    return ExecResult::error("exec.seed_identity", "src_mem_pattern: the seed micro-op's single source element is " +
                                                       std::to_string(value) + " (" + hex(bits) +
                                                       "), the identity's 1.0 (spec 000 section 5.1: \"a single "
                                                       "source element of value 1\")");
  }
  const bool load = op.unmodelled.seed_mode == 1;
  return ExecResult::error(
      "exec.not_modelled",
      "flags.seed_mode = " + std::to_string(op.unmodelled.seed_mode) + " (" + (load ? "LOAD_SEED" : "SAVE_SEED") +
          "): MAVERICK's seed micro-op is not executed -- spec 000 section 5.1 fixes its shape, not " +
          (load ? "where the seeds it loads come from (its source is the single identity element)"
                : "which seeds it saves (its dst holds 2 per partition; the 16 per partition are stated "
                  "\"for NeuronCore-v4\")") +
          " (D-SEED-V5-EXEC)");
}

// A seed move (D-SEED-MICROOPS): through the 16 x 16 identity loaded on the micro-op's tile, LoadSeed transposes
// SBUF's 16 partitions x 128 seeds into the state (state[p][s] = src[s][p]), SaveSeed writes the state's 16 seeds of
// each of 128 PSUM partitions at the destination's 16 elements. The words move as they are.
ExecResult ArrayExecutor::seed_matmul(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes,
                                      std::uint8_t* psum, std::size_t psum_bytes) {
  const bool load = op.seed == SeedMove::Load;
  const char* what = load ? "LoadSeed" : "SaveSeed";
  const unsigned per = seeds_per_partition();
  // The identity its LdWeight staged (taken: on any error below it is dropped, and the array keeps what it had).
  std::optional<Stationary> identity = std::move(staged_identity_);
  staged_identity_.reset();
  if (!identity || !(identity->tile == op.tile))
    return ExecResult::error("exec.no_stationary", std::string(what) + ": no identity staged by a seed LdWeight for "
                                                       "the tile (" + tile_text(op.tile) + ")");
  const Stationary* st = &*identity;
  // The identity's value is checked here, at run time (spec 5.1: "the magic tensor required by HW").
  const std::vector<std::int32_t> one_hot_row = one_hot_rows(st->values, st->k, st->m);
  for (std::size_t m = 0; m < st->m; ++m)
    if (st->k != per || st->m != per || one_hot_row[m] != static_cast<std::int32_t>(m))
      return ExecResult::error(
          "exec.seed_identity",
          "identity_mem_pattern: " +
              (st->k != per || st->m != per ? "a " + std::to_string(st->k) + " x " + std::to_string(st->m) + " stationary"
                                            : one_hot_row[m] < 0 ? one_hot_problem(*st, m)
                                                                 : "column " + std::to_string(m) + " holds its 1 in row " +
                                                                       std::to_string(one_hot_row[m])) +
              "; the seed micro-ops route through the " + std::to_string(per) + " x " + std::to_string(per) +
              " identity");
  const std::size_t parts = op.seed_partitions;
  if (parts > geo_.partitions)
    return ExecResult::error("exec.pattern_partitions", std::string(what) + ": the seeds spread over " +
                                                            std::to_string(parts) + " PSUM partitions; there are " +
                                                            std::to_string(geo_.partitions));
  constexpr std::size_t kWord = 4;
  if (load) {
    if (auto r = plain_3d(op.src, "src_seed_mem_pattern"); !r.ok) return r;
    Access sa;
    if (auto r = plan_access(op.src, "src_seed_mem_pattern", sbuf_region(geo_, sbuf_bytes), per, kWord, sa); !r.ok)
      return r;
    if (sa.count() != parts)
      return ExecResult::error("exec.pattern_count", "src_seed_mem_pattern yields " + std::to_string(sa.count()) +
                                                         " seeds per partition; they spread over " +
                                                         std::to_string(parts) + " PSUM partitions");
    for (std::size_t p = 0; p < parts; ++p)
      for (std::size_t s = 0; s < per; ++s) std::memcpy(&seeds_[p * per + s], sbuf + sa.at(s, p), kWord);
  } else {
    // The header: "Neuron must evict all data out of PSUM ... before running this PeSaveSeed instruction".
    if (const unsigned open = open_banks(); open != 0)
      return ExecResult::error("exec.psum_group_open", "SaveSeed writes every PSUM bank: an accumulation group is "
                                                       "still open in PSUM bank " + bank_list(open) +
                                                       " (evict PSUM first)");
    if (auto r = plain_3d(op.dst, "dst_seed_mem_pattern"); !r.ok) return r;
    Access da;
    if (auto r = plan_access(op.dst, "dst_seed_mem_pattern", psum_region(geo_, psum_bytes), parts, kWord, da); !r.ok)
      return r;
    if (da.count() != per)
      return ExecResult::error("exec.pattern_count", "dst_seed_mem_pattern yields " + std::to_string(da.count()) +
                                                         " elements per partition, not the " + std::to_string(per) +
                                                         " seeds of a partition");
    for (std::size_t p = 0; p < parts; ++p)
      for (std::size_t s = 0; s < per; ++s)
        std::memcpy(psum + da.at(p, s), &seeds_[(da.first_partition + p) * per + s], kWord);
  }
  install(std::move(*identity));
  stats_ = {};
  stats_.kind = MicroOpKind::Matmul;
  stats_.tile = op.tile;
  stats_.k = per;
  stats_.m = per;
  stats_.n = parts;
  stats_.passes = 1;
  return ExecResult::success();
}

namespace {

std::string stationary_problem(const Stationary& st, const isa::ArrayGeometry& geo, isa::Generation gen) {
  const isa::TileRect& t = st.tile;
  if (t.rows == 0 || t.cols == 0 || t.row0 + t.rows > geo.pe_rows || t.col0 + t.cols > geo.pe_cols ||
      t.row0 >= geo.pe_rows || t.col0 >= geo.pe_cols)
    return "its tile (" + tile_text(t) + ") is not inside the " + std::to_string(geo.pe_rows) + " x " +
           std::to_string(geo.pe_cols) + " array";
  if (st.type.gen != gen) return "its operand type is for another generation";
  if (st.mx) {
    if (const std::string why = mx_operand_error(st.type.dtype); !why.empty()) return why;
    if (!mx_packing(st.mx_mode)) return "its MX perf mode " + std::to_string(st.mx_mode) + " is not one of 0..6";
    if (st.double_row) return "it is both MX and double_row";
  } else if (const std::string why = operand_error(st.type); !why.empty()) {
    return why;
  }
  // Logical rows per partition: 2 for double_row, up to 8 for MX (OCT_ROW).
  const std::size_t rows_per_partition = st.mx ? mx_packing(st.mx_mode)->rows : st.double_row ? 2 : 1;
  if (st.k == 0 || st.m == 0 || st.k > rows_per_partition * geo.pe_rows || st.m > geo.pe_cols)
    return "its K x M = " + std::to_string(st.k) + " x " + std::to_string(st.m) + " does not fit the array";
  if (st.values.size() != st.k * st.m)
    return std::to_string(st.values.size()) + " values for K x M = " + std::to_string(st.k) + " x " +
           std::to_string(st.m);
  return "";
}

std::string tags_problem(const TagTile& t, const isa::ArrayGeometry& geo) {
  const isa::TileRect& r = t.tile;
  if (r.rows == 0 || r.cols == 0 || r.row0 + r.rows > geo.pe_rows || r.col0 + r.cols > geo.pe_cols)
    return "its tile (" + tile_text(r) + ") is not inside the " + std::to_string(geo.pe_rows) + " x " +
           std::to_string(geo.pe_cols) + " array";
  if (t.k == 0 || t.m == 0 || t.k > r.rows || t.m > r.cols)
    return "its K x M = " + std::to_string(t.k) + " x " + std::to_string(t.m) + " does not fit its tile";
  if (t.tags.size() != t.k * t.m)
    return std::to_string(t.tags.size()) + " tags for K x M = " + std::to_string(t.k) + " x " + std::to_string(t.m);
  for (const std::uint8_t tag : t.tags)
    if (tag >= kTagLimit) return "a tag of " + std::to_string(tag) + " (tags are 4 bits)";
  return "";
}

}  // namespace

std::string ArrayExecutor::check(const State& s, isa::Generation gen) const {
  if (s.seeds.size() != seeds_.size())
    return std::to_string(s.seeds.size()) + " PSUM seeds, the geometry has " + std::to_string(seeds_.size());
  for (std::size_t i = 0; i < s.stationaries.size(); ++i) {
    if (std::string why = stationary_problem(s.stationaries[i], geo_, gen); !why.empty())
      return "stationary " + std::to_string(i) + ": " + why;
    for (std::size_t j = 0; j < i; ++j)
      if (s.stationaries[j].tile.overlaps(s.stationaries[i].tile))
        return "stationaries " + std::to_string(j) + " and " + std::to_string(i) + " overlap";
  }
  if (s.staged_identity)
    if (std::string why = stationary_problem(*s.staged_identity, geo_, gen); !why.empty())
      return "the staged seed identity: " + why;
  for (std::size_t i = 0; i < s.tags.size(); ++i) {
    if (std::string why = tags_problem(s.tags[i], geo_); !why.empty())
      return "tag tile " + std::to_string(i) + ": " + why;
    for (std::size_t j = 0; j < i; ++j)
      if (s.tags[j].tile.overlaps(s.tags[i].tile))
        return "tag tiles " + std::to_string(j) + " and " + std::to_string(i) + " overlap";
  }
  for (std::size_t i = 0; i < s.conv_luts.size(); ++i) {
    const std::size_t want = conv_lut_entries(conv_lut_dtype(i));
    if (!s.conv_luts[i].empty() && s.conv_luts[i].size() != want)
      return "the " + std::string(isa::name(conv_lut_dtype(i))) + " converter table has " +
             std::to_string(s.conv_luts[i].size()) + " entries, not " + std::to_string(want);
  }
  return "";
}

void ArrayExecutor::restore(State s) {
  seeds_ = std::move(s.seeds);
  stationaries_ = std::move(s.stationaries);
  staged_identity_ = std::move(s.staged_identity);
  open_ = s.open;
  stats_ = s.stats;
  tags_ = std::move(s.tags);
  conv_luts_ = std::move(s.conv_luts);
}

}  // namespace pevp::pe
