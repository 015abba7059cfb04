#include "pevp/firmware/firmware.h"

#include <algorithm>

#include "pevp/isa/access_pattern.h"
#include "pevp/isa/instruction.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/tiles.h"
#include "pevp/pe_array/sparse.h"

namespace pevp::fw {

Handler dispatch(std::uint8_t op) {
  // The order of the chain in the DEBUG IRAM (spec 000 section 2.1). A compare
  // chain, not a table: the raw byte is compared as is.
  if (op == 0x01) return Handler::Ldweights;
  if (op == 0x02) return Handler::Matmul;
  if (op == 0x03) return Handler::PeRegWrite;
  if (op == 0x06) return Handler::LdTags;
  if (op == 0x07) return Handler::MatmulSparse;
  if (op == 0x08) return Handler::PeManageSeed;
  if (op == 0x09) return Handler::LdweightsMX;
  if (op == 0x0a) return Handler::MatmulMX;
  // (0x9f.. SEQ-core control opcodes are compared here in the firmware.)
  if (op == 0xe4) return Handler::ConvLutLoad;
  return Handler::None;
}

std::string_view name(Handler h) {
  switch (h) {
    case Handler::Ldweights: return "Ldweights";
    case Handler::Matmul: return "Matmul";
    case Handler::PeRegWrite: return "PeRegWrite";
    case Handler::LdTags: return "LdTags";
    case Handler::MatmulSparse: return "MatmulSparse";
    case Handler::PeManageSeed: return "PeManageSeed";
    case Handler::LdweightsMX: return "LdweightsMX";
    case Handler::MatmulMX: return "MatmulMX";
    case Handler::ConvLutLoad: return "ConvLutLoad";
    case Handler::None: return "None";
  }
  return "?";
}

std::string Fault::describe() const {
  std::string s;
  if (!field.empty()) s = field + " = " + std::to_string(value) + ": ";
  return s + message + " [" + rule + "]";
}

std::string self_name(Handler h, const isa::Instruction& typed) {
  // The DEBUG lines of the firmware image (spec 000 section 2.1): "S:" for the
  // scalar handlers, "XS:" for the MX matmul; PeManageSeed names its mode.
  switch (h) {
    case Handler::Ldweights: return "S: Ldweights";
    case Handler::Matmul: return "S: Matmul";
    case Handler::PeRegWrite: return "S: PeRegWrite";
    case Handler::LdTags: return "S: LdTags";
    case Handler::MatmulSparse: return "S: MatmulSparse";
    case Handler::PeManageSeed: {
      const auto* seed = std::get_if<isa::PeManageSeed>(&typed);
      const std::int64_t mode = seed ? seed->mode : 0;
      return std::string("S: PeManageSeed") + (mode == 1 ? "(LOAD)" : mode == 2 ? "(SAVE)" : "");
    }
    case Handler::LdweightsMX: return "S: LdweightsMX";
    case Handler::MatmulMX: return "XS: MatmulMX";
    case Handler::ConvLutLoad: return "S: ConvLutLoad";
    case Handler::None: return "";
  }
  return "";
}

namespace {

Fault from_violation(const isa::Violation& v) { return {v.rule, v.field, v.value, v.message}; }

// ---- lowering: each handler turns its typed instruction into micro-ops ---------------------------------------

// What every PE micro-op carries: where it came from, its tile and extents.
pe::MicroOp micro_op(pe::MicroOpKind kind, isa::Generation gen, const isa::Common& c, const isa::TilePart& tile) {
  pe::MicroOp op;
  op.kind = kind;
  op.gen = gen;
  op.opcode_byte = c.opcode_byte;
  op.tile = *tile.rect;
  op.k = tile.active_rows;
  op.m = tile.active_cols;
  return op;
}

void set_operand(const isa::OperandPart& in, pe::MicroOp& op) {
  op.in_dtype_raw = in.dtype_raw;
  op.fp32_mode_raw = in.fp32_mode_raw;
  op.in_dtype = in.dtype();
  op.fp32_mode = in.fp32_mode();
}

// The PSUM group semantics of a Matmul on its generation (spec 4.1).
pe::PsumGroup psum_group(const isa::PsumPart& p) {
  pe::PsumGroup g;
  if (!p.group_flags) {  // MAVERICK: accumulate_flag alone
    g.accumulate = p.accumulate.value_or(false);
    return g;
  }
  g.tracked = true;
  g.flags = *p.group_flags;
  g.begin = g.flags & isa::psum_flags::BEGIN_MATMUL_GROUP;
  g.begin_accumulate = g.flags & isa::psum_flags::BEGIN_ACCUM_MATMUL_GROUP;
  g.end = g.flags & isa::psum_flags::END_MATMUL_GROUP;
  // MARIANA: the flag chooses add vs overwrite; CAYMAN: BEGIN overwrites, everything else adds.
  g.accumulate = p.accumulate.value_or(!g.begin);
  g.zero_region = p.zero_region;
  if (g.begin) g.zero_banks = isa::zero_region_banks(static_cast<isa::ZeroRegion>(g.zero_region));
  return g;
}

// flags.seed_mode on v4: the firmware's own seed micro-ops (what PeManageSeed emits), executed as such. MAVERICK's
// seed micro-ops stay unmodelled (the spec describes no v5 seed state): the executor names the field.
void set_seed(std::int64_t seed_mode, isa::Generation gen, pe::MicroOp& op) {
  if (!isa::is_v4(gen) || (seed_mode != 1 && seed_mode != 2)) return;
  op.seed = seed_mode == 1 ? pe::SeedMove::Load : pe::SeedMove::Save;
  op.seed_partitions = isa::kSeedCols;
  op.unmodelled.seed_mode = 0;
}

// MAVERICK's Ldweights / Matmul run in MX mode when the source is the MXTENSOR_V2 member (spec 000 section 7); the
// perf mode travels with every micro-op (a dense one with perf_mode set is refused by the executor).
void set_mx(const isa::AccessPattern& src, std::int64_t perf_mode, pe::MicroOp& op) {
  op.mx = src.member == isa::PatternMember::MxTensorV2;
  op.mx_mode = perf_mode;
}

// The v4 MX operand (LdweightsMX / MatmulMX): an MXMEM_PATTERN1D source, an MX dtype, no fp32 mode.
void set_mx_operand(const isa::AccessPattern& src, std::int64_t in_dtype, std::int64_t perf_mode, pe::MicroOp& op) {
  op.src = src;
  op.mx = true;
  op.mx_mode = perf_mode;
  op.in_dtype_raw = in_dtype;
  op.in_dtype = static_cast<isa::Dtype>(in_dtype);
}

pe::MicroOp lower(const isa::LdweightsMX& i, isa::Generation gen) {
  pe::MicroOp op = micro_op(pe::MicroOpKind::WeightLoad, gen, i, i.tile);
  set_mx_operand(i.src, i.in_dtype, i.perf_mode, op);
  return op;
}

pe::MicroOp lower(const isa::MatmulMX& i, isa::Generation gen) {
  pe::MicroOp op = micro_op(pe::MicroOpKind::Matmul, gen, i, i.tile);
  set_mx_operand(i.src, i.in_dtype, i.perf_mode, op);
  op.dst = i.dst;
  op.out_dtype = i.out_dtype;
  op.psum = psum_group(i.psum);
  return op;
}

// ConvLutLoad (D-CONVLUT): one weight-load micro-op on the whole array that loads the converter table of lut_dtype
// from its one-partition source.
void handle_conv_lut(const isa::Decoded& d, const isa::Instruction& typed, Prepared& p) {
  if (!d.valid()) {
    p.fault = from_violation(d.violations.front());
    return;
  }
  const auto& i = std::get<isa::ConvLutLoad>(typed);
  pe::MicroOp op;
  op.kind = pe::MicroOpKind::WeightLoad;
  op.gen = d.gen;
  op.opcode_byte = i.opcode_byte;
  op.tile = isa::TileRect{0, d.geo.pe_rows, 0, d.geo.pe_cols};
  op.k = 1;  // the table is read from one partition
  op.m = static_cast<unsigned>(i.src.elements());
  op.src = i.src;
  op.in_dtype_raw = i.lut_dtype;
  op.in_dtype = static_cast<isa::Dtype>(i.lut_dtype);
  op.conv_lut = true;
  p.ops.push_back(op);
}

pe::MicroOp lower(const isa::Ldweights& i, isa::Generation gen) {
  pe::MicroOp op = micro_op(pe::MicroOpKind::WeightLoad, gen, i, i.tile);
  op.src = i.src;
  set_operand(i.in, op);
  // bg_xpose_mode loads transposed as xpose does, on the background path (D-BG-XPOSE).
  op.transpose = i.transpose || i.bg_transpose != 0;
  op.background_transpose = i.bg_transpose != 0;
  op.reverse_columns = i.load_order == static_cast<std::int64_t>(isa::PeLwOrder::FIRST_COL_FIRST);
  if (i.tag_weight_mode == pe::tag_weight_mode::TAG_WEIGHT) op.sparse = pe::SparseRole::TagWeights;
  op.double_row = i.perf_opt == isa::perf_opt::FP8_DOUBLE_ROW;
  set_mx(i.src, i.perf_mode, op);
  op.unmodelled = {i.seed_mode, i.scalar_mode};
  set_seed(i.seed_mode, gen, op);
  return op;
}

pe::MicroOp lower(const isa::Matmul& i, isa::Generation gen) {
  pe::MicroOp op = micro_op(pe::MicroOpKind::Matmul, gen, i, i.tile);
  op.src = i.src;
  op.dst = i.dst;
  set_operand(i.in, op);
  op.out_dtype = i.out_dtype;
  op.transpose = i.transpose;
  op.double_row = i.perf_opt == isa::perf_opt::FP8_DOUBLE_ROW;
  set_mx(i.src, i.perf_mode, op);
  op.unmodelled = {i.seed_mode, i.scalar_mode};
  op.psum = psum_group(i.psum);
  set_seed(i.seed_mode, gen, op);
  if (op.seed != pe::SeedMove::None) op.psum = {};  // a seed move is no accumulation
  return op;
}

// LdTags (spec 000 section 9): one weight-load micro-op that loads the tile's tags (D-SPARSE-TAGS).
pe::MicroOp lower(const isa::LdTags& i, isa::Generation gen) {
  pe::MicroOp op = micro_op(pe::MicroOpKind::WeightLoad, gen, i, i.tile);
  op.src = i.src;
  op.in_dtype_raw = i.in_dtype;
  op.in_dtype = static_cast<isa::Dtype>(i.in_dtype);
  op.sparse = pe::SparseRole::Tags;
  op.force_tag_bits = static_cast<std::uint8_t>(i.force_tag_bits);
  return op;
}

// MatmulSparse (spec 000 section 9): one matmul micro-op whose TENSOR4D source sends 2-4 fmaps per partition, each
// PE cell multiplying the one its tag selects (D-SPARSE-SELECT).
pe::MicroOp lower(const isa::MatmulSparse& i, isa::Generation gen) {
  pe::MicroOp op = micro_op(pe::MicroOpKind::Matmul, gen, i, i.tile);
  op.src = i.src;
  op.dst = i.dst;
  set_operand(i.in, op);
  op.out_dtype = i.out_dtype;
  op.psum = psum_group(i.psum);
  op.sparse = pe::SparseRole::Matmul;
  op.unmodelled.seed_mode = i.seed_mode;  // refused as exec.sparse_mix: no seed move is sparse
  return op;
}

pe::MicroOp lower(const isa::PeRegWrite& i, isa::Generation gen) {
  pe::MicroOp op = micro_op(pe::MicroOpKind::PeRegWrite, gen, i, i.tile);
  op.src = i.src;
  op.reg_addr = i.reg_addr;
  op.imm_value = i.imm_value;
  return op;
}

// ---- the handlers ----------------------------------------------------------------------------------------------

// A modelled handler: the instruction must be valid and give a tile; then it
// lowers to one micro-op.
template <typename Instr>
void handle_modelled(const isa::Decoded& d, const isa::Instruction& typed, Prepared& p) {
  if (!d.valid()) {
    p.fault = from_violation(d.violations.front());
    return;
  }
  const Instr& i = std::get<Instr>(typed);
  if (!i.tile.rect) {
    // The stream rule reads nothing of an instruction without a tile, so this
    // fault is the one it would give after the rule, too.
    p.fault = Fault{"exec.tile", "", 0, "the tile fields do not give a tile"};
    return;
  }
  p.stream = isa::StreamChecker::key_of(d, *i.tile.rect);
  p.ops.push_back(lower(i, d.gen));
}

// PeManageSeed (v4, spec 000 section 5.1): the firmware loads the 16 x 16 identity as the stationary (LdWeight
// micro-op) and runs a transposing Matmul micro-op (is_load) that moves the seeds: SBUF's 16 x 128 in (LoadSeed) or
// PSUM's 128 x 16 out (SaveSeed). Both on the array's top-left 16 x 16 PEs (D-SEED-MICROOPS).
void handle_pe_seed(const isa::Decoded& d, const isa::Instruction& typed, Prepared& p) {
  if (!d.valid()) {
    p.fault = from_violation(d.violations.front());
    return;
  }
  const auto& i = std::get<isa::PeManageSeed>(typed);
  const pe::SeedMove move = i.mode == 1 ? pe::SeedMove::Load : pe::SeedMove::Save;
  const isa::TileRect tile{0, isa::kSeedRows, 0, isa::kSeedRows};
  pe::MicroOp lw;
  lw.kind = pe::MicroOpKind::WeightLoad;
  lw.gen = d.gen;
  lw.opcode_byte = d.opcode_byte;
  lw.tile = tile;
  lw.k = lw.m = isa::kSeedRows;
  lw.src = i.identity;
  // FP32r (the identity's fp32 code) holds fp32 bits; the other identity dtypes decode as matmul operands.
  const auto identity = static_cast<isa::Dtype>(i.identity_dtype);
  lw.in_dtype = identity == isa::Dtype::FP32R ? isa::Dtype::FP32 : identity;
  lw.fp32_mode = lw.in_dtype == isa::Dtype::FP32 ? isa::Fp32Mode::High : isa::Fp32Mode::None;
  lw.in_dtype_raw = i.identity_dtype;
  lw.fp32_mode_raw = static_cast<std::int64_t>(lw.fp32_mode);
  lw.seed = move;
  lw.completes_instruction = false;
  pe::MicroOp mm = lw;
  mm.kind = pe::MicroOpKind::Matmul;
  mm.src = move == pe::SeedMove::Load ? i.src_seed : isa::AccessPattern{};
  mm.dst = move == pe::SeedMove::Save ? i.dst_seed : isa::AccessPattern{};
  mm.in_dtype = isa::Dtype::FP32;  // the seeds are 32-bit words, moved as they are
  mm.fp32_mode = isa::Fp32Mode::High;
  mm.in_dtype_raw = static_cast<std::int64_t>(isa::Dtype::FP32);
  mm.fp32_mode_raw = static_cast<std::int64_t>(isa::Fp32Mode::High);
  mm.transpose = true;
  mm.seed_partitions = i.active_cols;
  mm.completes_instruction = true;
  p.ops = {lw, mm};
}

}  // namespace

Prepared prepare(std::shared_ptr<const isa::Decoded> d) {
  Prepared p;
  p.handler = dispatch(d->opcode_byte);
  if (p.handler == Handler::None || !d->opcode) {
    // Not a PE opcode of this generation (e.g. 0x08 on CAYMAN): the decoder's
    // opcode.unknown violation says which byte.
    p.fault = d->violations.empty() ? Fault{"opcode.unknown", "header.opcode", d->opcode_byte, "not a PE opcode"}
                                    : from_violation(d->violations.front());
    p.decoded = std::move(d);
    return p;
  }
  isa::Instruction scratch;
  const isa::Instruction& typed = isa::typed_form(*d, scratch);
  p.events = isa::events_of(typed);
  p.self_name = self_name(p.handler, typed);
  switch (p.handler) {
    case Handler::Ldweights: handle_modelled<isa::Ldweights>(*d, typed, p); break;
    case Handler::Matmul: handle_modelled<isa::Matmul>(*d, typed, p); break;
    case Handler::PeRegWrite: handle_modelled<isa::PeRegWrite>(*d, typed, p); break;
    case Handler::PeManageSeed: handle_pe_seed(*d, typed, p); break;
    case Handler::LdweightsMX: handle_modelled<isa::LdweightsMX>(*d, typed, p); break;
    case Handler::MatmulMX: handle_modelled<isa::MatmulMX>(*d, typed, p); break;
    case Handler::LdTags: handle_modelled<isa::LdTags>(*d, typed, p); break;
    case Handler::MatmulSparse: handle_modelled<isa::MatmulSparse>(*d, typed, p); break;
    case Handler::ConvLutLoad: handle_conv_lut(*d, typed, p); break;
    case Handler::None: break;
  }
  p.decoded = std::move(d);
  return p;
}

HandlerOutput Firmware::handle(std::shared_ptr<const isa::Decoded> d, std::uint64_t index) {
  HandlerOutput out;
  handle(prepare(std::move(d)), index, out);
  return out;
}

void Firmware::checkpoint(std::uint64_t index) {
  if (checkpoints_.full()) checkpoints_.set_capacity(checkpoints_.capacity() * 2);
  checkpoints_.push_back({index, stream_});
}

void Firmware::handle(const Prepared& p, std::uint64_t index, HandlerOutput& out) {
  out.ops.clear();
  out.fault.reset();
  out.handler = p.handler;
  out.self_name = p.self_name;
  if (p.fault) {
    out.fault = p.fault;
    return;
  }
  // Rules that span instructions (the fp32/tf32 no-mix between a stationary and
  // its matmul), with a checkpoint so a fault can rewind them.
  while (!checkpoints_.empty() && checkpoints_.back().first >= index) checkpoints_.pop_back();  // handled again
  if (p.stream.changes_state()) checkpoint(index);
  if (auto v = stream_.check(p.stream); !v.empty()) {
    out.fault = from_violation(v.front());
    return;
  }
  for (const pe::MicroOp& op : p.ops) {
    out.ops.push_back(op);
    out.ops.back().instr_index = index;
  }
}

void Firmware::rewind(std::uint64_t index, const std::vector<std::shared_ptr<const isa::Decoded>>& survivors,
                      const std::vector<std::uint64_t>& survivor_indices) {
  // The state before `index`: the first checkpoint at or after it (everything
  // between only read the state), or the current state when there is none.
  const auto at = std::find_if(checkpoints_.begin(), checkpoints_.end(),
                               [&](const auto& c) { return c.first >= index; });
  if (at != checkpoints_.end()) {
    stream_ = at->second;
    checkpoints_.erase(at, checkpoints_.end());
  }
  for (std::size_t i = 0; i < survivors.size(); ++i) {
    const isa::StreamChecker::Key key = isa::StreamChecker::key_of(*survivors[i]);
    if (key.changes_state()) checkpoint(survivor_indices[i]);
    (void)stream_.check(key);
  }
}

Firmware::State Firmware::state() const {
  State s;
  s.stream = stream_.state();
  for (const auto& [index, checker] : checkpoints_) s.checkpoints.emplace_back(index, checker.state());
  return s;
}

std::string Firmware::check(const State& s) {
  if (std::string why = isa::StreamChecker::check(s.stream); !why.empty()) return "the no-mix state: " + why;
  for (std::size_t i = 0; i < s.checkpoints.size(); ++i) {
    if (i > 0 && s.checkpoints[i].first <= s.checkpoints[i - 1].first)
      return "the no-mix checkpoints are not in instruction order";
    if (std::string why = isa::StreamChecker::check(s.checkpoints[i].second); !why.empty())
      return "no-mix checkpoint " + std::to_string(i) + ": " + why;
  }
  return "";
}

void Firmware::restore(const State& s) {
  stream_.restore(s.stream);
  checkpoints_.clear();
  if (checkpoints_.capacity() < s.checkpoints.size()) checkpoints_.set_capacity(s.checkpoints.size());
  for (const auto& [index, state] : s.checkpoints) {
    isa::StreamChecker c;
    c.restore(state);
    checkpoints_.push_back({index, c});
  }
}

}  // namespace pevp::fw
