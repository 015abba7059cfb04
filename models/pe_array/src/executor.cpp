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

// The pattern a micro-op names, as a plain TENSOR3D, or why it is not one.
ExecResult plain_3d(const isa::AccessPattern& p, const char* name) {
  const std::string n(name);
  if (p.member == isa::PatternMember::MxTensorV2)
    return ExecResult::error("exec.not_modelled", n + ": the MX tensor member is not modelled yet");
  if (p.member == isa::PatternMember::Indirect16B)
    return ExecResult::error("exec.not_modelled", n + ": the indirect member is not modelled yet");
  if (p.dims != 3) return ExecResult::error("exec.not_modelled", n + ": only a plain TENSOR3D pattern is modelled yet");
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
  // The buffer may be smaller than the region (a test's short buffer): the highest element of the last partition
  // must fit.
  if (partitions > 0 && !a.plan.offsets.empty()) {
    const std::size_t highest = *std::max_element(a.plan.offsets.begin(), a.plan.offsets.end());
    const std::size_t last = (a.first_partition + partitions - 1) * r.partition_bytes + highest;
    if (last + elem_bytes > r.buffer_bytes)
      return ExecResult::error("exec.buffer_bounds", pname + ": " + r.what + " address " + hex(r.base + last) +
                                                         " is beyond the " + std::to_string(r.buffer_bytes) +
                                                         "-byte " + r.what + " buffer");
  }
  return ExecResult::success();
}

// Decodes `partitions` x in_part.size() elements of type t into dst (partition-major): straight from the buffer
// when each partition's elements are one contiguous row, else through `row` (one partition's elements packed).
bool decode_access(const OperandType& t, const std::uint8_t* buf, const Access& a, std::size_t partitions,
                   std::vector<std::uint8_t>& row, float* dst) {
  const std::size_t n = a.count(), eb = operand_bytes(t.dtype);
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

// What every WeightLoad / Matmul needs before it touches memory: the right
// kind, a dense operand type, and no feature the array does not execute yet.
ExecResult check_common(const MicroOp& op, MicroOpKind want, OperandType& t) {
  if (op.kind != want)
    return ExecResult::error("exec.opcode", "opcode = " + hex(op.opcode_byte) + ": expected a " + name(want) +
                                                " micro-op, got " + name(op.kind));
  t.gen = op.gen;
  t.dtype = op.in_dtype;
  t.fp32_mode = op.fp32_mode;
  if (std::string e = operand_error(t); !e.empty())
    return ExecResult::error("exec.in_dtype", "in_dtype = " + std::to_string(op.in_dtype_raw) + ", fp32_mode = " +
                                                  std::to_string(op.fp32_mode_raw) + ": " + e);
  const Unmodelled& u = op.unmodelled;
  if (u.seed_mode != 0)
    return ExecResult::error("exec.not_modelled", "flags.seed_mode = " + std::to_string(u.seed_mode) +
                                                      ": seed load/save is not modelled yet");
  if (u.scalar_mode != 0)
    return ExecResult::error("exec.not_modelled", "flags.scalar_mode = " + std::to_string(u.scalar_mode) +
                                                      ": scalar mode is not modelled yet");
  if (u.perf != 0)
    return ExecResult::error("exec.not_modelled", "perf_opt/perf_mode != 0: fp8 double_row and MX perf modes are "
                                                  "not modelled yet");
  if (u.bg_xpose != 0)
    return ExecResult::error("exec.not_modelled", "bg_xpose_mode = " + std::to_string(u.bg_xpose) +
                                                      ": background transpose is not modelled yet");
  return ExecResult::success();
}

std::string tile_text(const isa::TileRect& t) {
  return "rows " + std::to_string(t.row0) + "+" + std::to_string(t.rows) + ", cols " + std::to_string(t.col0) + "+" +
         std::to_string(t.cols);
}

}  // namespace

const Stationary* ArrayExecutor::stationary(const isa::TileRect& tile) const {
  for (const auto& s : stationaries_)
    if (s.tile == tile) return &s;
  return nullptr;
}

void ArrayExecutor::reset() {
  stationaries_.clear();
  open_.fill(false);
  stats_ = {};
}

ExecResult ArrayExecutor::ldweights(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes) {
  OperandType t;
  if (auto r = check_common(op, MicroOpKind::WeightLoad, t); !r.ok) return r;
  if (auto r = plain_3d(op.src, "src_mem_pattern"); !r.ok) return r;
  const isa::TileRect tile = op.tile;
  const std::size_t k = op.k, m = op.m;
  const bool xpose = op.transpose;
  // Not transposed: K partitions of M elements. Transposed (model decision D-EXEC-XPOSE): M partitions of K
  // elements, stationary[k][m] = sbuf_tile[m][k].
  const std::size_t parts = xpose ? m : k, per = xpose ? k : m;
  if (op.src.count() != per)
    return ExecResult::error("exec.pattern_count",
                             "src_mem_pattern yields " + std::to_string(op.src.count()) + " elements per partition, " +
                                 (xpose ? "num_active_rows (K, transposed) = " : "num_active_cols (M) = ") +
                                 std::to_string(per));
  const std::size_t eb = operand_bytes(t.dtype);
  Access acc;
  if (auto r = plan_access(op.src, "src_mem_pattern", sbuf_region(geo_, sbuf_bytes), parts, eb, acc); !r.ok) return r;
  std::vector<float> tilev(parts * per);
  if (!decode_access(t, sbuf, acc, parts, row_, tilev.data()))
    return ExecResult::error("exec.in_dtype", "in_dtype: cannot decode");
  Stationary s;
  s.tile = tile;
  s.k = k;
  s.m = m;
  s.type = t;
  if (!xpose) {
    s.values = std::move(tilev);
  } else {
    s.values.resize(k * m);
    for (std::size_t mi = 0; mi < m; ++mi)
      for (std::size_t ki = 0; ki < k; ++ki) std::memcpy(&s.values[ki * m + mi], &tilev[mi * k + ki], sizeof(float));
  }
  // A load replaces every stationary its tile overlaps.
  std::vector<Stationary> kept;
  for (auto& o : stationaries_)
    if (!o.tile.overlaps(tile)) kept.push_back(std::move(o));
  kept.push_back(std::move(s));
  stationaries_ = std::move(kept);
  stats_ = {};
  stats_.kind = MicroOpKind::WeightLoad;
  stats_.tile = tile;
  stats_.k = k;
  stats_.m = m;
  stats_.elements_loaded = k * m;
  return ExecResult::success();
}

ExecResult ArrayExecutor::matmul(const MicroOp& op, const std::uint8_t* sbuf, std::size_t sbuf_bytes,
                                 std::uint8_t* psum, std::size_t psum_bytes) {
  OperandType t;
  if (auto r = check_common(op, MicroOpKind::Matmul, t); !r.ok) return r;
  if (op.transpose)
    return ExecResult::error("exec.not_modelled", "MATMUL xpose_mode/transpose_mode = 1: a transposing matmul is "
                                                  "not modelled yet (transpose at LDWEIGHTS)");
  if (auto r = plain_3d(op.src, "src_mem_pattern"); !r.ok) return r;
  if (auto r = plain_3d(op.dst, "dst_mem_pattern"); !r.ok) return r;
  const isa::TileRect tile = op.tile;
  const std::size_t k = op.k, m = op.m;
  if (m > geo_.partitions)
    return ExecResult::error("exec.not_modelled", "num_active_cols = " + std::to_string(m) + ": a tile wider than the " +
                                                      std::to_string(geo_.partitions) +
                                                      " PSUM partitions folds its columns (c256); the fold is not "
                                                      "modelled yet");
  const Stationary* st = stationary(tile);
  if (!st)
    return ExecResult::error("exec.no_stationary", "no stationary loaded for the tile (" + tile_text(tile) + ")");
  if (st->k != k)
    return ExecResult::error("exec.k_mismatch", "num_active_rows = " + std::to_string(k) +
                                                    ": the tile's stationary has K = " + std::to_string(st->k));
  if (st->m != m)
    return ExecResult::error("exec.m_mismatch", "num_active_cols = " + std::to_string(m) +
                                                    ": the tile's stationary has M = " + std::to_string(st->m));
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
  const std::size_t n = op.src.count();
  if (op.dst.count() != n)
    return ExecResult::error("exec.pattern_count", "dst_mem_pattern yields " + std::to_string(op.dst.count()) +
                                                       " elements per partition, src_mem_pattern " +
                                                       std::to_string(n) + " (N)");
  const std::size_t eb = operand_bytes(t.dtype);
  Access sa, da;
  if (auto r = plan_access(op.src, "src_mem_pattern", sbuf_region(geo_, sbuf_bytes), k, eb, sa); !r.ok) return r;
  if (auto r = plan_access(op.dst, "dst_mem_pattern", psum_region(geo_, psum_bytes), m, ob, da); !r.ok) return r;
  const auto& geo = geo_;
  const std::size_t bank_bytes = geo.psum_bank_bytes;
  const std::size_t dp0 = da.first_partition;
  const unsigned bank = static_cast<unsigned>(da.start_in_partition / bank_bytes);
  // Every dst element stays in the start's bank (D-EXEC-BANK). The validator
  // already demands this on CAYMAN; a v4+ output spanning banks is valid ISA
  // but not modelled by the executor yet.
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t in_part = da.plan.offsets[i];
    if (in_part / bank_bytes != bank)
      return ExecResult::error("exec.psum_bank_cross", "dst_mem_pattern: element " + std::to_string(i) +
                                                           " at partition byte offset " + std::to_string(in_part) +
                                                           " leaves PSUM bank " + std::to_string(bank) +
                                                           " (a matmul output spanning PSUM banks is not modelled yet)");
  }
  // PSUM group semantics (the firmware decided them from the generation's flags).
  const PsumGroup& g = op.psum;
  const bool accumulate = g.accumulate;
  bool zero = false, open_after = open_[bank];
  unsigned zero_banks = 0;
  if (g.tracked) {
    if (g.begin && g.begin_accumulate)
      return ExecResult::error("exec.psum_flags", "psum_accumulate_flags = " + std::to_string(g.flags) +
                                                      ": BEGIN and BEGIN_ACCUM together");
    if ((g.begin || g.begin_accumulate) && open_[bank])
      return ExecResult::error("exec.psum_group_open", "psum_accumulate_flags = " + isa::psum_flags_name(g.flags) +
                                                           ": a group is already open in PSUM bank " +
                                                           std::to_string(bank));
    if (!g.begin && !g.begin_accumulate && !open_[bank])
      return ExecResult::error("exec.psum_group_unopened", "psum_accumulate_flags = " +
                                                               isa::psum_flags_name(g.flags) +
                                                               ": accumulate into an unopened group (PSUM bank " +
                                                               std::to_string(bank) + ")");
    zero = g.begin;
    open_after = !g.end;
    zero_banks = g.zero_banks;
    if (zero_banks > geo.psum_banks)
      return ExecResult::error("exec.psum_zero_region", "psum_zero_region = " + std::to_string(g.zero_region) +
                                                            ": more than " + std::to_string(geo.psum_banks) +
                                                            " banks");
  }
  // Zero region bounds (before any write).
  std::size_t zlo = 0, zhi = 0;
  if (zero) {
    const std::size_t block = bank / zero_banks * zero_banks;
    if (block + zero_banks > geo.psum_banks)  // cannot happen with a power-of-two bank count (check_geometry)
      return ExecResult::error("exec.psum_zero_region", "psum_zero_region = " + std::to_string(g.zero_region) +
                                                            ": banks " + std::to_string(block) + ".." +
                                                            std::to_string(block + zero_banks - 1) + " leave the " +
                                                            std::to_string(geo.psum_banks) + " PSUM banks");
    zlo = block * bank_bytes;
    zhi = (block + zero_banks) * bank_bytes;
    const std::size_t last = (dp0 + m - 1) * geo.psum_partition_bytes() + zhi;
    if (m > 0 && last > psum_bytes)
      return ExecResult::error("exec.buffer_bounds", "psum_zero_region: PSUM address " +
                                                         hex(isa::ArrayGeometry::kPsumBase + last - 1) + " is beyond the " +
                                                         std::to_string(psum_bytes) + "-byte PSUM buffer");
  }
  // Every check has passed: from here on the matmul cannot fail, so PSUM may be written.
  const auto zero_region = [&] {
    if (zero)
      for (std::size_t p = 0; p < m; ++p)
        std::memset(psum + (dp0 + p) * geo.psum_partition_bytes() + zlo, 0, zhi - zlo);
  };
  const MatmulShape shape{k, m, n};
  // The direct path: fp32 output rows and moving rows that are each one contiguous run (a plain N-element row per
  // partition, what every tiled GEMM issues). The kernel decodes the moving operand straight from SBUF and adds
  // into PSUM in place (after the zero region is cleared, so BEGIN + accumulate adds onto +0 as below).
  if (!out_bf16 && sa.plan.contiguous && da.plan.contiguous && n > 0 && t.fp32_mode != isa::Fp32Mode::Low_High) {
    zero_region();
    const MovingRows mv{sbuf + sa.at(0, 0), sa.partition_bytes, t};
    // The destination is 4-byte aligned: pattern starts are aligned to the element (plan_access) and partitions
    // are whole multiples of 64 bytes.
    const DstRows dst{reinterpret_cast<float*>(psum + da.at(0, 0)), da.partition_bytes / sizeof(float)};
    if (!matmul_pass_fast_rows(st->values.data(), mv, dst, shape, accumulate, threads_))
      return ExecResult::error("exec.in_dtype", "in_dtype: cannot decode");  // unreachable: checked above
  } else {
    // Any other pattern or output type: decode the moving tile, compute into a scratch tile (both live across
    // instructions: no allocation per matmul once warm), then commit.
    moving_.resize(k * n);
    if (!decode_access(t, sbuf, sa, k, row_, moving_.data()))
      return ExecResult::error("exec.in_dtype", "in_dtype: cannot decode");
    out_.assign(m * n, 0.0f);
    float* out = out_.data();
    if (accumulate && !zero) {
      for (std::size_t p = 0; p < m; ++p) {
        for (std::size_t i = 0; i < n; ++i) {
          if (out_bf16) {
            std::uint16_t h;
            std::memcpy(&h, psum + da.at(p, i), 2);
            out[p * n + i] = num::from_bf16(h);
          } else {
            std::memcpy(&out[p * n + i], psum + da.at(p, i), 4);
          }
        }
      }
    }
    pevp::pe::matmul(Kernel::Fast, t.fp32_mode, st->values.data(), moving_.data(), out, shape, accumulate, threads_);
    // Commit: zero, then write.
    zero_region();
    for (std::size_t p = 0; p < m; ++p) {
      for (std::size_t i = 0; i < n; ++i) {
        if (out_bf16) {
          const std::uint16_t h = num::to_bf16(out[p * n + i]);
          std::memcpy(psum + da.at(p, i), &h, 2);
        } else {
          std::memcpy(psum + da.at(p, i), &out[p * n + i], 4);
        }
      }
    }
  }
  if (g.tracked) open_[bank] = open_after;
  stats_ = {};
  stats_.kind = MicroOpKind::Matmul;
  stats_.tile = tile;
  stats_.k = k;
  stats_.m = m;
  stats_.n = n;
  stats_.macs = static_cast<std::uint64_t>(k) * m * n;
  stats_.passes = t.fp32_mode == isa::Fp32Mode::Low_High ? 3 : 1;
  return ExecResult::success();
}

}  // namespace pevp::pe
