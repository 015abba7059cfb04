// The field tables: built with offsetof from the structs in layout.h, so the
// static_asserts there pin the tables too.
#include "pevp/isa/fields.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <deque>
#include <stdexcept>

#include "pevp/isa/layout.h"

namespace pevp::isa {
namespace {

#define PEVP_F(S, member, part, kind) \
  FieldDesc { #member, static_cast<std::uint8_t>(offsetof(S, member)), \
              static_cast<std::uint8_t>(sizeof(S::member)), Part::part, ValueKind::kind }
#define PEVP_SCALAR(S, member, kind) PEVP_F(S, member, Scalar, kind)
#define PEVP_RES(S, member) PEVP_F(S, member, Reserved, Reserved)
#define PEVP_HEAD(S) PEVP_F(S, header, Header, Unsigned), PEVP_F(S, events, Events, Unsigned)

// A byte that has another name and meaning on MAVERICK (row_grp -> tile_size).
FieldDesc renamed(FieldDesc f, const char* name, Part part) {
  f.name = name;
  f.part = part;
  return f;
}

StructLayout make(StructKind kind, std::string c_name, std::vector<FieldDesc> fields) {
  StructLayout l;
  l.kind = kind;
  l.c_name = std::move(c_name);
  l.fields = std::move(fields);
  return l;
}

// ---- per generation layouts of S3_LW and S3D3_MM ---------------------------------
StructLayout cayman_lw() {
  using S = cayman::S3_LW;
  return make(StructKind::S3_LW, "CAYMAN S3_LW",
              {PEVP_HEAD(S), PEVP_RES(S, reserved0), PEVP_F(S, src_mem_pattern, Tensor3D, Unsigned),
               PEVP_SCALAR(S, in_dtype, Dtype), PEVP_SCALAR(S, fp32_mode, Fp32Mode),
               PEVP_SCALAR(S, transpose_mode, Bool), PEVP_SCALAR(S, perf_opt, PerfOpt),
               PEVP_SCALAR(S, tag_weight_mode, Unsigned), PEVP_RES(S, reserved1),
               PEVP_SCALAR(S, num_active_rows, Unsigned), PEVP_SCALAR(S, num_active_cols, Unsigned),
               PEVP_RES(S, reserved2), PEVP_SCALAR(S, row_grp, GroupMask), PEVP_SCALAR(S, col_grp, GroupMask),
               PEVP_RES(S, reserved3)});
}
StructLayout cayman_mm() {
  using S = cayman::S3D3_MM;
  return make(StructKind::S3D3_MM, "CAYMAN S3D3_MM",
              {PEVP_HEAD(S), PEVP_RES(S, reserved0), PEVP_F(S, src_mem_pattern, Tensor3D, Unsigned),
               PEVP_SCALAR(S, in_dtype, Dtype), PEVP_SCALAR(S, fp32_mode, Fp32Mode),
               PEVP_SCALAR(S, transpose_mode, Bool), PEVP_SCALAR(S, perf_opt, PerfOpt),
               PEVP_RES(S, reserved1), PEVP_SCALAR(S, num_active_rows, Unsigned),
               PEVP_SCALAR(S, num_active_cols, Unsigned), PEVP_SCALAR(S, out_dtype, Dtype),
               PEVP_RES(S, reserved2), PEVP_SCALAR(S, psum_accumulate_flags, PsumAccumulateFlags),
               PEVP_SCALAR(S, row_grp, GroupMask), PEVP_SCALAR(S, col_grp, GroupMask),
               PEVP_RES(S, reserved3), PEVP_SCALAR(S, psum_zero_region, ZeroRegion),
               PEVP_F(S, dst_mem_pattern, Tensor3D, Unsigned)});
}
StructLayout mariana_lw() {
  using S = mariana::S3_LW;
  return make(StructKind::S3_LW, "MARIANA S3_LW",
              {PEVP_HEAD(S), PEVP_SCALAR(S, bg_xpose_mode, Bool), PEVP_RES(S, reserved0),
               PEVP_F(S, src_mem_pattern, MemPattern3D, Unsigned), PEVP_SCALAR(S, in_dtype, Dtype),
               PEVP_SCALAR(S, fp32_mode, Fp32Mode), PEVP_RES(S, reserved1),
               PEVP_SCALAR(S, perf_opt, PerfOpt), PEVP_SCALAR(S, tag_weight_mode, Unsigned), PEVP_RES(S, reserved2),
               PEVP_SCALAR(S, num_active_rows, Unsigned), PEVP_SCALAR(S, num_active_cols, Unsigned),
               PEVP_RES(S, reserved3), PEVP_SCALAR(S, row_grp, GroupMask),
               PEVP_SCALAR(S, col_grp, GroupMask), PEVP_RES(S, reserved4),
               PEVP_F(S, flags, LdWeightFlags, Unsigned), PEVP_RES(S, reserved5)});
}
StructLayout mariana_mm() {
  using S = mariana::S3D3_MM;
  return make(StructKind::S3D3_MM, "MARIANA S3D3_MM",
              {PEVP_HEAD(S), PEVP_RES(S, reserved0), PEVP_F(S, src_mem_pattern, MemPattern3D, Unsigned),
               PEVP_SCALAR(S, in_dtype, Dtype), PEVP_SCALAR(S, fp32_mode, Fp32Mode),
               PEVP_RES(S, reserved1), PEVP_SCALAR(S, perf_opt, PerfOpt), PEVP_RES(S, reserved2),
               PEVP_SCALAR(S, num_active_rows, Unsigned), PEVP_SCALAR(S, num_active_cols, Unsigned),
               PEVP_SCALAR(S, out_dtype, Dtype), PEVP_RES(S, reserved3),
               PEVP_F(S, flags, MatmulFlags, Unsigned),
               PEVP_SCALAR(S, psum_accumulate_flags, PsumAccumulateFlags),
               PEVP_SCALAR(S, row_grp, GroupMask), PEVP_SCALAR(S, col_grp, GroupMask),
               PEVP_RES(S, reserved4), PEVP_SCALAR(S, psum_zero_region, ZeroRegion),
               PEVP_F(S, dst_mem_pattern, MemPattern3D, Unsigned)});
}
StructLayout maverick_lw() {
  using S = maverick::S3_LW;
  return make(StructKind::S3_LW, "MAVERICK S3_LW",
              {PEVP_HEAD(S), PEVP_RES(S, reserved0), PEVP_F(S, src_mem_pattern, MemPattern3D, Unsigned),
               PEVP_SCALAR(S, in_dtype, Dtype), PEVP_SCALAR(S, fp32_mode, Fp32Mode),
               PEVP_SCALAR(S, num_active_rows, Unsigned), PEVP_SCALAR(S, num_active_cols, Unsigned),
               PEVP_F(S, tile_size, TileSize, Unsigned), PEVP_F(S, tile_sel, TileSel, Unsigned),
               PEVP_F(S, flags, LdWeightFlags, Unsigned), PEVP_SCALAR(S, perf_mode, MxPerfMode),
               PEVP_SCALAR(S, tag_weight_mode, Unsigned), PEVP_RES(S, reserved1)});
}
StructLayout maverick_mm() {
  using S = maverick::S3D3_MM;
  return make(StructKind::S3D3_MM, "MAVERICK S3D3_MM",
              {PEVP_HEAD(S), PEVP_RES(S, reserved0), PEVP_F(S, src_mem_pattern, MemPattern3D, Unsigned),
               PEVP_SCALAR(S, in_dtype, Dtype), PEVP_SCALAR(S, fp32_mode, Fp32Mode),
               PEVP_SCALAR(S, out_dtype, Dtype), PEVP_SCALAR(S, num_active_rows, Unsigned),
               PEVP_SCALAR(S, num_active_cols, Unsigned), PEVP_F(S, tile_size, TileSize, Unsigned),
               PEVP_F(S, tile_sel, TileSel, Unsigned), PEVP_F(S, flags, MatmulFlags, Unsigned),
               PEVP_SCALAR(S, perf_mode, MxPerfMode), PEVP_RES(S, reserved1),
               PEVP_F(S, dst_mem_pattern, MemPattern3D, Unsigned)});
}

// ---- structs shared across generations (with per-generation byte meanings) -------
// On MAVERICK the row_grp/col_grp bytes (44/45) carry tile_size/tile_sel.
void retile_for_maverick(StructLayout& l) {
  for (auto& f : l.fields) {
    if (std::string_view(f.name) == "row_grp") f = renamed(f, "tile_size", Part::TileSize);
    if (std::string_view(f.name) == "col_grp") f = renamed(f, "tile_sel", Part::TileSel);
  }
}

StructLayout sparse_mm(Generation g) {
  using S = S4D3_MM;
  StructLayout l = make(
      StructKind::S4D3_MM, std::string(name(g)) + " S4D3_MM",
      {PEVP_HEAD(S), PEVP_F(S, src_mem_pattern, Tensor4D, Unsigned), PEVP_SCALAR(S, in_dtype, Dtype),
       PEVP_SCALAR(S, fp32_mode, Fp32Mode), PEVP_RES(S, reserved0),
       PEVP_SCALAR(S, num_active_rows, Unsigned), PEVP_SCALAR(S, num_active_cols, Unsigned),
       PEVP_SCALAR(S, out_dtype, Dtype), PEVP_RES(S, reserved1), PEVP_F(S, flags, MatmulFlags, Unsigned),
       PEVP_SCALAR(S, psum_accumulate_flags, PsumAccumulateFlags), PEVP_SCALAR(S, row_grp, GroupMask),
       PEVP_SCALAR(S, col_grp, GroupMask), PEVP_RES(S, reserved2),
       PEVP_SCALAR(S, psum_zero_region, ZeroRegion), PEVP_F(S, dst_mem_pattern, Tensor3D, Unsigned)});
  if (!is_v4_plus(g)) {  // no MATMUL_FLAGS byte before v4
    for (auto& f : l.fields)
      if (std::string_view(f.name) == "flags") f = renamed(f, "reserved_flags", Part::Reserved), f.kind = ValueKind::Reserved;
  }
  if (is_maverick(g)) retile_for_maverick(l);
  return l;
}

StructLayout pe_seed(Generation g) {
  using S = S2S1D2_PE_SEED;
  return make(StructKind::S2S1D2_PE_SEED, std::string(name(g)) + " S2S1D2_PE_SEED",
              {PEVP_HEAD(S), PEVP_F(S, src_seed_mem_pattern, Tensor2D, Unsigned),
               PEVP_F(S, identity_mem_pattern, Tensor1D, Unsigned), PEVP_SCALAR(S, identity_dtype, Dtype),
               PEVP_SCALAR(S, mode, SeedMode), PEVP_SCALAR(S, num_active_rows, Unsigned),
               PEVP_SCALAR(S, num_active_cols, Unsigned), PEVP_F(S, dst_seed_mem_pattern, Tensor2D, Unsigned),
               PEVP_RES(S, reserved)});
}

StructLayout mx_lw(Generation g) {
  using S = SMX1_LW;
  return make(StructKind::SMX1_LW, std::string(name(g)) + " SMX1_LW",
              {PEVP_HEAD(S), PEVP_RES(S, reserved0), PEVP_F(S, src_mem_pattern, MxMemPattern1D, Unsigned),
               PEVP_SCALAR(S, in_dtype, Dtype), PEVP_RES(S, reserved1), PEVP_SCALAR(S, perf_mode, MxPerfMode),
               PEVP_RES(S, reserved2), PEVP_SCALAR(S, num_active_rows, Unsigned),
               PEVP_SCALAR(S, num_active_cols, Unsigned), PEVP_RES(S, reserved3),
               PEVP_SCALAR(S, row_grp, GroupMask), PEVP_SCALAR(S, col_grp, GroupMask), PEVP_RES(S, reserved4)});
}

StructLayout mx_mm(Generation g) {
  using S = SMX1D3_MM;
  return make(StructKind::SMX1D3_MM, std::string(name(g)) + " SMX1D3_MM",
              {PEVP_HEAD(S), PEVP_RES(S, reserved0), PEVP_F(S, src_mem_pattern, MxMemPattern1D, Unsigned),
               PEVP_SCALAR(S, in_dtype, Dtype), PEVP_RES(S, reserved1), PEVP_SCALAR(S, perf_mode, MxPerfMode),
               PEVP_RES(S, reserved2), PEVP_SCALAR(S, num_active_rows, Unsigned),
               PEVP_SCALAR(S, num_active_cols, Unsigned), PEVP_SCALAR(S, out_dtype, Dtype),
               PEVP_RES(S, reserved3), PEVP_SCALAR(S, psum_accumulate_flags, PsumAccumulateFlags),
               PEVP_SCALAR(S, row_grp, GroupMask), PEVP_SCALAR(S, col_grp, GroupMask), PEVP_RES(S, reserved4),
               PEVP_SCALAR(S, psum_zero_region, ZeroRegion),
               PEVP_F(S, dst_mem_pattern, MemPattern3D, Unsigned)});
}

StructLayout ld_tags(Generation g) {
  using S = S3_LT;
  StructLayout l = make(
      StructKind::S3_LT, std::string(name(g)) + " S3_LT",
      {PEVP_HEAD(S), PEVP_RES(S, reserved0), PEVP_F(S, src_mem_pattern, Tensor3D, Unsigned),
       PEVP_SCALAR(S, in_dtype, Dtype), PEVP_SCALAR(S, force_tag_bits, Unsigned), PEVP_RES(S, reserved1),
       PEVP_SCALAR(S, num_active_rows, Unsigned), PEVP_SCALAR(S, num_active_cols, Unsigned),
       PEVP_RES(S, reserved2), PEVP_SCALAR(S, row_grp, GroupMask), PEVP_SCALAR(S, col_grp, GroupMask),
       PEVP_RES(S, reserved3)});
  if (is_maverick(g)) retile_for_maverick(l);
  return l;
}

StructLayout pe_reg_write(Generation g) {
  using S = S_PE_REG_WRITE;
  StructLayout l = make(
      StructKind::S_PE_REG_WRITE, std::string(name(g)) + " S_PE_REG_WRITE",
      {PEVP_HEAD(S), PEVP_SCALAR(S, reg_addr, Unsigned), PEVP_SCALAR(S, imm_value, Unsigned),
       PEVP_F(S, src_mem_pattern, Tensor1D, Unsigned), PEVP_RES(S, reserved0),
       PEVP_SCALAR(S, row_grp, GroupMask), PEVP_SCALAR(S, col_grp, GroupMask), PEVP_RES(S, reserved1)});
  if (is_maverick(g)) retile_for_maverick(l);
  return l;
}

StructLayout conv_lut(Generation g) {
  using S = S2_CONVLUT;
  return make(StructKind::S2_CONVLUT, std::string(name(g)) + " S2_CONVLUT",
              {PEVP_HEAD(S), PEVP_F(S, src_mem_pattern, Tensor2D, Unsigned), PEVP_SCALAR(S, lut_dtype, Dtype),
               PEVP_RES(S, reserved)});
}

StructLayout build(Generation g, StructKind kind) {
  switch (kind) {
    case StructKind::S3_LW:
      return g == Generation::CAYMAN ? cayman_lw() : is_maverick(g) ? maverick_lw() : mariana_lw();
    case StructKind::S3D3_MM:
      return g == Generation::CAYMAN ? cayman_mm() : is_maverick(g) ? maverick_mm() : mariana_mm();
    case StructKind::S4D3_MM: return sparse_mm(g);
    case StructKind::S2S1D2_PE_SEED: return pe_seed(g);
    case StructKind::SMX1_LW: return mx_lw(g);
    case StructKind::SMX1D3_MM: return mx_mm(g);
    case StructKind::S3_LT: return ld_tags(g);
    case StructKind::S_PE_REG_WRITE: return pe_reg_write(g);
    case StructKind::S2_CONVLUT: return conv_lut(g);
  }
  throw std::logic_error("unknown struct kind");
}

constexpr std::size_t kNumKinds = 9;

// Paths are interned here: a deque never moves its elements.
std::string_view intern(std::string path) {
  static std::deque<std::string> storage;
  storage.push_back(std::move(path));
  return storage.back();
}

// Appends the leaves of a tensor pattern with `dims` dimensions.
void tensor_leaves(std::vector<Leaf>& out, const FieldDesc& f, unsigned dims) {
  const std::string base = std::string(f.name) + ".";
  out.push_back({intern(base + "start_addr"), f.offset, 4, 0, 0, ValueKind::Address, false, f.name});
  for (unsigned d = 0; d < dims; ++d)
    out.push_back({intern(base + "step_elem[" + std::to_string(d) + "]"), static_cast<std::uint8_t>(f.offset + 4 + 2 * d),
                   2, 0, 0, ValueKind::Signed, true, f.name});
  for (unsigned d = 0; d < dims; ++d)
    out.push_back({intern(base + "num_elem[" + std::to_string(d) + "]"),
                   static_cast<std::uint8_t>(f.offset + 4 + 2 * dims + 2 * d), 2, 0, 0, ValueKind::Unsigned, false,
                   f.name});
}

void build_leaf_sets(StructLayout& layout);  // below, once the leaf expansion is defined

std::uint32_t read_u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

}  // namespace

LeafLookup::LeafLookup(const std::vector<Leaf>& leaves) {
  std::size_t longest = 0;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    entries_.push_back({leaves[i].path, static_cast<std::uint16_t>(i)});
    longest = std::max(longest, leaves[i].path.size());
  }
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const Entry& a, const Entry& b) { return a.path.size() < b.path.size(); });
  first_.assign(longest + 2, 0);
  for (const Entry& e : entries_) ++first_[e.path.size() + 1];
  for (std::size_t n = 1; n < first_.size(); ++n) first_[n] += first_[n - 1];
}

const FieldDesc* StructLayout::find(std::string_view field_name) const {
  for (const auto& f : fields)
    if (field_name == f.name) return &f;
  return nullptr;
}

const std::vector<StructLayout>& all_layouts() {
  // Built once, on first use: 4 generations x 9 structs.
  static const auto tables = [] {
    std::vector<StructLayout> all;
    std::size_t sets = 0;
    for (Generation gen : kAllGenerations)
      for (std::size_t k = 0; k < kNumKinds; ++k) {
        all.push_back(build(gen, static_cast<StructKind>(k)));
        build_leaf_sets(all.back());
        all.back().first_leaf_set = sets;
        sets += all.back().leaf_sets.size();
      }
    return all;
  }();
  return tables;
}

std::size_t leaf_set_count() {
  const StructLayout& last = all_layouts().back();
  return last.first_leaf_set + last.leaf_sets.size();
}

const StructLayout& layout_of(Generation g, StructKind kind) {
  return all_layouts()[static_cast<std::size_t>(g) * kNumKinds + static_cast<std::size_t>(kind)];
}

PatternMember pattern_member(std::uint32_t start_addr) {
  const bool mx = (start_addr & ADDR4MARKER_MXTENSOR_V2) != 0;
  const bool indirect = (start_addr & ADDR_MARKER_INDIRECT) != 0;
  if (mx && indirect) return PatternMember::Conflicting;
  if (mx) return PatternMember::MxTensorV2;
  if (indirect) return PatternMember::Indirect16B;
  return PatternMember::Tensor3D;
}

std::string_view name(PatternMember m) {
  switch (m) {
    case PatternMember::Tensor3D: return "t";
    case PatternMember::MxTensorV2: return "mx";
    case PatternMember::Indirect16B: return "i";
    case PatternMember::Conflicting: return "conflicting";
  }
  return "?";
}

namespace {
// Leaves of `layout` with the k-th MEM_PATTERN3D field's member members[k].
std::vector<Leaf> expand_leaves(const StructLayout& layout, const std::vector<PatternMember>& members) {
  std::vector<Leaf> out;
  out.reserve(48);
  std::size_t union_index = 0;
  for (const FieldDesc& f : layout.fields) {
    const std::string base = std::string(f.name) + ".";
    auto sub = [&](const char* leaf, unsigned rel, unsigned size, ValueKind kind, bool is_signed = false) {
      out.push_back({intern(base + leaf), static_cast<std::uint8_t>(f.offset + rel), static_cast<std::uint8_t>(size), 0, 0,
                     kind, is_signed, f.name});
    };
    auto bits = [&](const char* leaf, unsigned lo, unsigned width, ValueKind kind) {
      out.push_back({intern(base + leaf), f.offset, 1, static_cast<std::uint8_t>(lo), static_cast<std::uint8_t>(width), kind,
                     false, f.name});
    };
    switch (f.part) {
      case Part::Scalar:
        out.push_back({f.name, f.offset, f.size, 0, 0, f.kind, false, f.name});
        break;
      case Part::Reserved:
        out.push_back({f.name, f.offset, f.size, 0, 0, ValueKind::Reserved, false, f.name});
        break;
      case Part::Header:
        sub("opcode", 0, 1, ValueKind::Opcode);
        sub("inst_word_len", 1, 1, ValueKind::Unsigned);
        sub("debug_cmd", 2, 1, ValueKind::Unsigned);
        sub("debug_hint", 3, 1, ValueKind::Unsigned);
        break;
      case Part::Events:
        sub("wait_mode", 0, 1, ValueKind::WaitMode);
        sub("wait_sem", 1, 1, ValueKind::Unsigned);
        sub("update_mode", 2, 1, ValueKind::UpdateMode);
        sub("update_sem", 3, 1, ValueKind::Unsigned);
        sub("wait_value", 4, 2, ValueKind::Unsigned);
        sub("update_value", 6, 2, ValueKind::Unsigned);
        break;
      case Part::Tensor1D: tensor_leaves(out, f, 1); break;
      case Part::Tensor2D: tensor_leaves(out, f, 2); break;
      case Part::Tensor3D: tensor_leaves(out, f, 3); break;
      case Part::Tensor4D: tensor_leaves(out, f, 4); break;
      case Part::MemPattern3D:
        switch (members[union_index++]) {
          case PatternMember::MxTensorV2:
            sub("start_addr", 0, 4, ValueKind::Address);
            sub("scale_addr", 4, 4, ValueKind::Address);
            sub("step_elem[0]", 8, 2, ValueKind::Signed, true);
            sub("step_elem[1]", 10, 2, ValueKind::Signed, true);
            sub("num_elem[0]", 12, 2, ValueKind::Unsigned);
            sub("num_elem[1]", 14, 2, ValueKind::Unsigned);
            break;
          case PatternMember::Indirect16B:
            sub("start_addr", 0, 4, ValueKind::Address);
            sub("index_addr", 4, 4, ValueKind::Address);
            sub("step_elem", 8, 2, ValueKind::Signed, true);
            sub("num_elem", 10, 2, ValueKind::Unsigned);
            sub("num_index", 12, 2, ValueKind::Unsigned);
            out.push_back({intern(base + "reserved"), static_cast<std::uint8_t>(f.offset + 14), 2, 0, 0,
                           ValueKind::Reserved, false, f.name});
            break;
          case PatternMember::Tensor3D:
          case PatternMember::Conflicting:
            tensor_leaves(out, f, 3);
            break;
        }
        break;
      case Part::MxMemPattern1D:
        sub("start_addr", 0, 4, ValueKind::Address);
        sub("scale_addr", 4, 4, ValueKind::Address);
        sub("step_elem", 8, 2, ValueKind::Signed, true);
        sub("num_elem", 10, 2, ValueKind::Unsigned);
        sub("index_addr", 12, 4, ValueKind::Address);
        break;
      case Part::MatmulFlags:
        bits("scalar_mode", 0, 2, ValueKind::Unsigned);
        bits("seed_mode", 2, 2, ValueKind::SeedMode);
        bits("accumulate_flag", 4, 1, ValueKind::AccumulateMode);
        bits("xpose_mode", 5, 1, ValueKind::Bool);
        bits("reserved_bitfield", 6, 2, ValueKind::Unsigned);
        break;
      case Part::LdWeightFlags:
        bits("xpose_mode", 0, 1, ValueKind::Bool);
        bits("scalar_mode", 1, 2, ValueKind::Unsigned);
        bits("seed_mode", 3, 2, ValueKind::SeedMode);
        bits("load_order", 5, 1, ValueKind::LoadOrder);
        bits("reserved_bitfield", 6, 2, ValueKind::Unsigned);
        break;
      case Part::TileSize:
        bits("row", 0, 4, ValueKind::TileRowSize);
        bits("col", 4, 4, ValueKind::TileColSize);
        break;
      case Part::TileSel:
        bits("row_sel", 0, 4, ValueKind::Unsigned);
        bits("col_sel", 4, 4, ValueKind::Unsigned);
        break;
    }
  }
  return out;
}

// Index of a member in a leaf-set number (Conflicting decodes as TENSOR3D).
unsigned member_digit(PatternMember m) {
  return m == PatternMember::MxTensorV2 ? 1 : m == PatternMember::Indirect16B ? 2 : 0;
}

void build_leaf_sets(StructLayout& layout) {
  for (const FieldDesc& f : layout.fields)
    if (f.part == Part::MemPattern3D) layout.union_offsets.push_back(f.offset);
  const std::size_t k = layout.union_offsets.size();
  std::size_t combos = 1;
  for (std::size_t i = 0; i < k; ++i) combos *= 3;
  constexpr PatternMember kByDigit[] = {PatternMember::Tensor3D, PatternMember::MxTensorV2, PatternMember::Indirect16B};
  for (std::size_t c = 0; c < combos; ++c) {
    std::vector<PatternMember> members;
    for (std::size_t i = 0, rest = c; i < k; ++i, rest /= 3) members.push_back(kByDigit[rest % 3]);
    layout.leaf_sets.push_back(expand_leaves(layout, members));
    auto& index = layout.leaf_index.emplace_back();
    for (std::size_t i = 0; i < layout.leaf_sets.back().size(); ++i)
      index.emplace(layout.leaf_sets.back()[i].path, static_cast<std::uint16_t>(i));
    layout.leaf_lookup.emplace_back(layout.leaf_sets.back());
  }
}

}  // namespace

std::size_t leaf_set_of(const StructLayout& layout, const std::uint8_t* bytes) {
  std::size_t index = 0, scale = 1;
  for (std::uint8_t offset : layout.union_offsets) {
    index += member_digit(pattern_member(read_u32(bytes + offset))) * scale;
    scale *= 3;
  }
  return index;
}

const std::vector<Leaf>& leaves_of(const StructLayout& layout, const std::uint8_t* bytes) {
  return layout.leaf_sets[leaf_set_of(layout, bytes)];
}

const std::unordered_map<std::string_view, std::uint16_t>& leaf_index_of(const StructLayout& layout,
                                                                         const std::uint8_t* bytes) {
  return layout.leaf_index[leaf_set_of(layout, bytes)];
}

std::uint64_t read_leaf(const std::uint8_t* bytes, const Leaf& leaf) {
  if (leaf.kind == ValueKind::Reserved || leaf.size > 8) {
    std::uint64_t any = 0;  // reserved: non-zero iff any byte is
    for (unsigned i = 0; i < leaf.size; ++i) any |= bytes[leaf.offset + i];
    return any;
  }
  std::uint64_t v = 0;
  for (unsigned i = 0; i < leaf.size; ++i) v |= static_cast<std::uint64_t>(bytes[leaf.offset + i]) << (8 * i);
  if (leaf.bit_width != 0) v = (v >> leaf.bit_lo) & ((1ull << leaf.bit_width) - 1);
  return v;
}

std::int64_t read_leaf_signed(const std::uint8_t* bytes, const Leaf& leaf) {
  const std::uint64_t v = read_leaf(bytes, leaf);
  if (!leaf.is_signed) return static_cast<std::int64_t>(v);
  const unsigned bits = leaf.bit_width ? leaf.bit_width : 8u * leaf.size;
  const std::uint64_t sign = 1ull << (bits - 1);
  return static_cast<std::int64_t>(v ^ sign) - static_cast<std::int64_t>(sign);
}

bool write_leaf(std::uint8_t* bytes, const Leaf& leaf, std::int64_t value) {
  if (leaf.kind == ValueKind::Reserved) {
    if (value != 0) return false;
    std::memset(bytes + leaf.offset, 0, leaf.size);
    return true;
  }
  const unsigned bits = leaf.bit_width ? leaf.bit_width : 8u * leaf.size;
  if (leaf.is_signed) {
    const std::int64_t lo = -(std::int64_t{1} << (bits - 1)), hi = (std::int64_t{1} << (bits - 1)) - 1;
    if (value < lo || value > hi) return false;
  } else if (value < 0 || (bits < 64 && static_cast<std::uint64_t>(value) >> bits != 0)) {
    return false;
  }
  const std::uint64_t field = static_cast<std::uint64_t>(value) & (bits >= 64 ? ~0ull : (1ull << bits) - 1);
  if (leaf.bit_width != 0) {
    const std::uint8_t mask = static_cast<std::uint8_t>(((1u << leaf.bit_width) - 1) << leaf.bit_lo);
    bytes[leaf.offset] = static_cast<std::uint8_t>((bytes[leaf.offset] & ~mask) | ((field << leaf.bit_lo) & mask));
    return true;
  }
  for (unsigned i = 0; i < leaf.size; ++i) bytes[leaf.offset + i] = static_cast<std::uint8_t>(field >> (8 * i));
  return true;
}

}  // namespace pevp::isa
