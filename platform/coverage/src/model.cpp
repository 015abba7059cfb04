// The coverage table: each group's bins from the ISA's own tables, and what a micro-op or a fault hits.
#include "pevp/coverage/model.h"

#include <algorithm>
#include <set>

#include "pevp/isa/enums.h"
#include "pevp/isa/fields.h"
#include "pevp/isa/opcode.h"
#include "pevp/isa/rules.h"

namespace pevp::coverage {
namespace {

using isa::Generation;
using isa::Opcode;
using isa::StructKind;

// Whether generation `g`'s struct `kind` has the field `path` (a leaf as fields.h names it, "flags.xpose_mode"):
// the same question the typed form asks when it reads an instruction (instruction.cpp's has()).
bool has_leaf(Generation g, StructKind kind, std::string_view path) {
  const isa::StructLayout& layout = isa::layout_of(g, kind);
  return !layout.leaf_index.empty() && layout.leaf_index.front().count(path) != 0;
}

std::string opcode_name(Opcode op) { return std::string(isa::name(op)); }

// The opcodes whose micro-ops the dtype and fp32-mode groups count: the dense loads and matmuls, and v4's MX pair.
constexpr Opcode kDenseOps[] = {Opcode::LDWEIGHTS, Opcode::MATMUL};
constexpr Opcode kMxOps[] = {Opcode::LDWEIGHTS_MX, Opcode::MATMUL_MX};

// The fp32 modes an FP32 input takes (every named mode but None: rule fp32_mode.dtype).
std::vector<isa::Fp32Mode> fp32_modes() {
  std::vector<isa::Fp32Mode> out;
  for (unsigned m = 1; m < 256; ++m) {
    const auto mode = static_cast<isa::Fp32Mode>(m);
    if (isa::name(mode).empty()) break;
    out.push_back(mode);
  }
  return out;
}

// The MX perf modes the enum names (rule perf_mode.range).
std::vector<isa::MxPerfMode> mx_perf_modes() {
  std::vector<isa::MxPerfMode> out;
  for (unsigned m = 0; m < 256; ++m) {
    const auto mode = static_cast<isa::MxPerfMode>(m);
    if (isa::name(mode).empty()) break;
    out.push_back(mode);
  }
  return out;
}

// The PSUM group modes the flags define (psum_flags_name names every valid combination of the three bits).
std::vector<std::uint8_t> psum_group_modes() {
  std::vector<std::uint8_t> out;
  for (unsigned f = 0; f <= isa::psum_flags::kDefinedBits; ++f)
    if (!isa::psum_flags_name(static_cast<std::uint8_t>(f)).empty()) out.push_back(static_cast<std::uint8_t>(f));
  return out;
}

constexpr isa::ZeroRegion kZeroRegions[] = {isa::ZeroRegion::BANKS_1, isa::ZeroRegion::BANKS_2,
                                            isa::ZeroRegion::BANKS_4, isa::ZeroRegion::BANKS_8};

std::string zero_bin(unsigned banks) { return "zero/" + std::to_string(banks) + "_banks"; }

// ---- the bins of each group ------------------------------------------------------------------------------------

std::vector<std::string> opcode_bins(Generation g) {
  std::vector<std::string> out;
  for (Opcode op : isa::kAllOpcodes)
    if (isa::usable_in(op, g)) out.push_back(opcode_name(op));
  return out;
}

std::vector<std::string> dtype_bins(Generation g) {
  std::vector<std::string> out;
  for (Opcode op : kDenseOps) {
    if (!isa::usable_in(op, g)) continue;
    for (isa::Dtype d : isa::kMatmulInputDtypes) out.push_back(opcode_name(op) + "/" + std::string(isa::name(d)));
    if (isa::mx_in_dense_ops(g))
      for (isa::Dtype d : isa::kMxInputDtypes) out.push_back(opcode_name(op) + "/mx/" + std::string(isa::name(d)));
  }
  for (Opcode op : kMxOps)
    if (isa::usable_in(op, g))
      for (isa::Dtype d : isa::kMxInputDtypes) out.push_back(opcode_name(op) + "/" + std::string(isa::name(d)));
  return out;
}

std::vector<std::string> fp32_mode_bins(Generation g) {
  std::vector<std::string> out;
  for (Opcode op : kDenseOps)
    if (isa::usable_in(op, g))
      for (isa::Fp32Mode m : fp32_modes()) out.push_back(opcode_name(op) + "/" + std::string(isa::name(m)));
  return out;
}

std::vector<std::string> psum_bins(Generation g) {
  std::vector<std::string> out;
  const bool groups = has_leaf(g, StructKind::S3D3_MM, "psum_accumulate_flags");
  if (groups)
    for (std::uint8_t f : psum_group_modes()) out.push_back("group/" + isa::psum_flags_name(f));
  out.push_back("write/accumulate");
  out.push_back("write/overwrite");
  // A group's BEGIN zeroes psum_zero_region's banks first: only where the group flags exist.
  if (groups && has_leaf(g, StructKind::S3D3_MM, "psum_zero_region"))
    for (isa::ZeroRegion z : kZeroRegions) out.push_back(zero_bin(isa::zero_region_banks(z)));
  return out;
}

constexpr const char* kShapedKinds[] = {"weight_load", "matmul"};
constexpr const char* kShapes[] = {"full", "partial_rows", "partial_cols", "partial_both"};

std::vector<std::string> tile_shape_bins(Generation) {
  std::vector<std::string> out;
  for (const char* kind : kShapedKinds)
    for (const char* shape : kShapes) out.push_back(std::string(kind) + "/" + shape);
  return out;
}

// A tile's place on the grid: the whole array, a band of row groups (all columns), a band of column groups (all
// rows) or a cell (part of both), at the grid's origin or away from it. A part needs more than one group along its
// side of the generation's preset grid.
std::vector<std::string> tile_grid_bins(Generation g) {
  const isa::ArrayGeometry& geo = isa::preset_geometry(g);
  std::vector<std::string> out = {"whole_array"};
  const bool rows = geo.row_groups > 1, cols = geo.col_groups > 1;
  for (const char* at : {"@origin", "@offset"}) {
    if (rows) out.push_back(std::string("row_band") + at);
    if (cols) out.push_back(std::string("col_band") + at);
    if (rows && cols) out.push_back(std::string("cell") + at);
  }
  return out;
}

std::vector<std::string> feature_bins(Generation g) {
  std::vector<std::string> out;
  if (has_leaf(g, StructKind::S3_LW, "flags.xpose_mode")) out.push_back("transpose/weight_load");
  if (has_leaf(g, StructKind::S3_LW, "bg_xpose_mode")) out.push_back("transpose/weight_load_background");
  if (has_leaf(g, StructKind::S3D3_MM, "flags.xpose_mode")) out.push_back("transpose/matmul");
  if (has_leaf(g, StructKind::S3_LW, "flags.load_order")) out.push_back("load_order/first_col_first");
  if (has_leaf(g, StructKind::S3_LW, "perf_opt")) out.push_back("double_row/weight_load");
  if (has_leaf(g, StructKind::S3D3_MM, "perf_opt")) out.push_back("double_row/matmul");
  if (isa::has_mx(g))
    for (isa::MxPerfMode m : mx_perf_modes()) out.push_back("mx_perf/" + std::string(isa::name(m)));
  if (isa::usable_in(Opcode::LDTAGS, g)) out.push_back("sparse/tags");
  if (has_leaf(g, StructKind::S3_LW, "tag_weight_mode")) out.push_back("sparse/tag_weights");
  if (isa::usable_in(Opcode::MATMUL_SPARSE, g)) out.push_back("sparse/matmul");
  if (isa::usable_in(Opcode::PE_MANAGE_SEED, g)) {
    out.push_back("seed/load");
    out.push_back("seed/save");
  }
  if (isa::usable_in(Opcode::CONV_LUT_LOAD, g)) out.push_back("conv_lut");
  if (isa::usable_in(Opcode::PE_REG_WRITE, g)) out.push_back("pe_reg_write");
  return out;
}

std::vector<std::string> rule_bins(Generation) {
  std::vector<std::string> out;
  for (const auto& [number, id] : isa::rule_table()) out.emplace_back(id);
  return out;
}

const std::vector<Group> kGroups = {
    {"opcode", "instructions executed (counted with their last micro-op)", true, opcode_bins},
    {"dtype", "input dtype of the dense and MX loads and matmuls (mx/: an MXTENSOR_V2 source)", true, dtype_bins},
    {"fp32_mode", "fp32 mode of an FP32 input", true, fp32_mode_bins},
    {"psum", "a matmul's PSUM group mode, accumulate or overwrite, and the banks its BEGIN zeroes", true, psum_bins},
    {"tile_shape", "active rows and columns against the tile's (full, or a part of either)", true, tile_shape_bins},
    {"tile_grid", "the tile's place on the array's tile grid", true, tile_grid_bins},
    {"feature", "transposes, load order, double_row, MX perf modes, sparsity, seed moves, converter loads", true,
     feature_bins},
    {"rule", "validity and execution rules that refused an instruction (any generation)", false, rule_bins},
};

// ---- sampling --------------------------------------------------------------------------------------------------

bool is_dense_or_mx(Opcode op) {
  return std::find(std::begin(kDenseOps), std::end(kDenseOps), op) != std::end(kDenseOps) ||
         std::find(std::begin(kMxOps), std::end(kMxOps), op) != std::end(kMxOps);
}

const char* shape_of(unsigned active_rows, unsigned active_cols, const isa::TileRect& tile) {
  const bool rows = active_rows < tile.rows, cols = active_cols < tile.cols;
  return rows && cols ? "partial_both" : rows ? "partial_rows" : cols ? "partial_cols" : "full";
}

std::string grid_of(const isa::TileRect& t, const isa::ArrayGeometry& geo) {
  const bool rows = t.rows < geo.pe_rows, cols = t.cols < geo.pe_cols;
  if (!rows && !cols) return "whole_array";
  const char* at = t.row0 == 0 && t.col0 == 0 ? "@origin" : "@offset";
  return std::string(rows && cols ? "cell" : rows ? "row_band" : "col_band") + at;
}

}  // namespace

const std::vector<Group>& groups() { return kGroups; }

const Group* find_group(std::string_view name) {
  for (const Group& g : kGroups)
    if (g.name == name) return &g;
  return nullptr;
}

const std::vector<BinKey>& all_bins() {
  static const std::vector<BinKey> bins = [] {
    std::vector<BinKey> out;
    for (const Group& group : kGroups) {
      if (!group.per_generation) {
        for (std::string& b : group.bins(Generation::MARIANA)) out.push_back({std::string(group.name), "", b});
        continue;
      }
      for (Generation g : isa::kAllGenerations)
        for (std::string& b : group.bins(g)) out.push_back({std::string(group.name), std::string(isa::name(g)), b});
    }
    return out;
  }();
  return bins;
}

bool is_bin(const BinKey& key) {
  static const std::set<BinKey> bins(all_bins().begin(), all_bins().end());
  return bins.count(key) != 0;
}

SampleKey sample_key(const pe::MicroOp& op) {
  SampleKey s;
  s.opcode_byte = op.opcode_byte;
  s.last = op.completes_instruction;
  s.kind = op.kind;
  s.seed = op.seed;
  s.conv_lut = op.conv_lut;
  s.sparse = op.sparse;
  s.mx = op.mx;
  s.mx_mode = op.mx_mode;
  s.in_dtype = op.in_dtype;
  s.fp32_mode = op.fp32_mode;
  s.psum_tracked = op.psum.tracked;
  s.psum_flags = op.psum.flags;
  s.psum_accumulate = op.psum.accumulate;
  s.zero_banks = op.psum.zero_banks;
  s.k = op.k;
  s.m = op.m;
  s.row0 = op.tile.row0;
  s.rows = op.tile.rows;
  s.col0 = op.tile.col0;
  s.cols = op.tile.cols;
  s.transpose = op.transpose;
  s.background_transpose = op.background_transpose;
  s.reverse_columns = op.reverse_columns;
  s.double_row = op.double_row;
  return s;
}

std::vector<BinKey> sample(const SampleKey& op, Generation g, const isa::ArrayGeometry& geometry) {
  std::vector<BinKey> out;
  const std::string gen(isa::name(g));
  const auto hit = [&](const char* group, std::string bin) { out.push_back({group, gen, std::move(bin)}); };
  const std::optional<Opcode> opcode = isa::opcode_from_byte(op.opcode_byte, g);
  if (op.last && opcode) hit("opcode", opcode_name(*opcode));

  const bool weight_load = op.kind == pe::MicroOpKind::WeightLoad, matmul = op.kind == pe::MicroOpKind::Matmul;
  const bool seed = op.seed != pe::SeedMove::None;
  const bool plain = (weight_load || matmul) && !seed && !op.conv_lut;  // an operand-carrying load or matmul
  const isa::TileRect tile{op.row0, op.rows, op.col0, op.cols};

  if (plain && opcode && is_dense_or_mx(*opcode) && op.sparse == pe::SparseRole::None) {
    const bool dense_mx = op.mx && (*opcode == Opcode::LDWEIGHTS || *opcode == Opcode::MATMUL);
    hit("dtype", opcode_name(*opcode) + (dense_mx ? "/mx/" : "/") + std::string(isa::name(op.in_dtype)));
    if (op.in_dtype == isa::Dtype::FP32) hit("fp32_mode", opcode_name(*opcode) + "/" + std::string(isa::name(op.fp32_mode)));
  }
  if (matmul && !seed) {
    if (op.psum_tracked) hit("psum", "group/" + isa::psum_flags_name(op.psum_flags));
    hit("psum", op.psum_accumulate ? "write/accumulate" : "write/overwrite");
    if (op.zero_banks != 0) hit("psum", zero_bin(op.zero_banks));
  }
  if (plain) {
    const char* kind = weight_load ? "weight_load" : "matmul";
    hit("tile_shape", std::string(kind) + "/" + shape_of(op.k, op.m, tile));
    hit("tile_grid", grid_of(tile, geometry));
  }
  if (weight_load && op.transpose && !seed)
    hit("feature", op.background_transpose ? "transpose/weight_load_background" : "transpose/weight_load");
  if (matmul && op.transpose && !seed) hit("feature", "transpose/matmul");
  if (weight_load && op.reverse_columns) hit("feature", "load_order/first_col_first");
  if (op.double_row) hit("feature", weight_load ? "double_row/weight_load" : "double_row/matmul");
  if (op.mx) hit("feature", "mx_perf/" + std::string(isa::name(static_cast<isa::MxPerfMode>(op.mx_mode))));
  switch (op.sparse) {
    case pe::SparseRole::None: break;
    case pe::SparseRole::Tags: hit("feature", "sparse/tags"); break;
    case pe::SparseRole::TagWeights: hit("feature", "sparse/tag_weights"); break;
    case pe::SparseRole::Matmul: hit("feature", "sparse/matmul"); break;
  }
  // A seed move is two micro-ops (the identity load, the transposing matmul): counted once, with its matmul.
  if (matmul && op.seed == pe::SeedMove::Load) hit("feature", "seed/load");
  if (matmul && op.seed == pe::SeedMove::Save) hit("feature", "seed/save");
  if (op.conv_lut) hit("feature", "conv_lut");
  if (op.kind == pe::MicroOpKind::PeRegWrite) hit("feature", "pe_reg_write");
  return out;
}

std::vector<BinKey> sample_fault(std::uint16_t rule_number) {
  const std::string_view id = isa::rule_id(rule_number);
  if (id.empty()) return {};
  return {{"rule", "", std::string(id)}};
}

}  // namespace pevp::coverage
