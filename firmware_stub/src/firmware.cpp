#include "pevp/firmware/firmware.h"

#include <algorithm>

#include "pevp/isa/access_pattern.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/tiles.h"

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

std::string self_name(Handler h, const isa::Decoded& d) {
  // The DEBUG lines of the firmware image (spec 000 section 2.1): "S:" for the
  // scalar handlers, "XS:" for the MX matmul; PeManageSeed names its mode.
  switch (h) {
    case Handler::Ldweights: return "S: Ldweights";
    case Handler::Matmul: return "S: Matmul";
    case Handler::PeRegWrite: return "S: PeRegWrite";
    case Handler::LdTags: return "S: LdTags";
    case Handler::MatmulSparse: return "S: MatmulSparse";
    case Handler::PeManageSeed: {
      const auto mode = d.get_or("mode", 0);
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

// ---- lowering: each handler reads its instruction once, into the micro-op -------------------------------------

bool is_union_field(const isa::Decoded& d, std::string_view name) {
  const isa::FieldDesc* f = d.layout ? d.layout->find(name) : nullptr;
  return f && f->part == isa::Part::MemPattern3D;
}

isa::AccessPattern pattern_of(const isa::Decoded& d, std::string_view name) {
  return isa::read_pattern(d, name, is_union_field(d, name)).value_or(isa::AccessPattern{});
}

unsigned perf_divisor(const isa::Decoded& d) {
  if (d.get_or("perf_opt", 0) == isa::perf_opt::FP8_DOUBLE_ROW) return 2;
  switch (static_cast<isa::MxPerfMode>(d.get_or("perf_mode", 0))) {
    case isa::MxPerfMode::QUAD_ROW:
    case isa::MxPerfMode::QUAD_ROW_INTERLEAVE:
    case isa::MxPerfMode::QUAD_ROW_TILED: return 4;
    case isa::MxPerfMode::OCT_ROW:
    case isa::MxPerfMode::OCT_ROW_INTERLEAVE:
    case isa::MxPerfMode::OCT_ROW_TILED: return 8;
    default: return 1;
  }
}

// What every PE micro-op carries: where it came from, its tile and extents.
pe::MicroOp micro_op(pe::MicroOpKind kind, const isa::Decoded& d, const isa::TileRect& tile) {
  pe::MicroOp op;
  op.kind = kind;
  op.gen = d.gen;
  op.opcode_byte = d.opcode_byte;
  op.tile = tile;
  op.k = d.has("num_active_rows") ? isa::active_extent(d.get("num_active_rows"), tile.rows) : tile.rows;
  op.m = d.has("num_active_cols") ? isa::active_extent(d.get("num_active_cols"), tile.cols) : tile.cols;
  op.src = pattern_of(d, "src_mem_pattern");
  op.in_dtype_raw = d.get_or("in_dtype", 0);
  op.in_dtype = static_cast<isa::Dtype>(op.in_dtype_raw);
  return op;
}

// Ldweights and Matmul: the operand type, the transpose, the perf mode and the
// features the array does not execute yet.
void lower_operands(const isa::Decoded& d, pe::MicroOp& op) {
  op.fp32_mode_raw = d.get_or("fp32_mode", 0);
  op.fp32_mode = static_cast<isa::Fp32Mode>(op.fp32_mode_raw);
  op.transpose = d.get_or("transpose_mode", 0) != 0 || d.get_or("flags.xpose_mode", 0) != 0;
  op.rate_div = perf_divisor(d);
  op.unmodelled.seed_mode = d.get_or("flags.seed_mode", 0);
  op.unmodelled.scalar_mode = d.get_or("flags.scalar_mode", 0);
  op.unmodelled.perf = d.get_or("perf_opt", 0) != 0 ? d.get("perf_opt") : d.get_or("perf_mode", 0);
  op.unmodelled.bg_xpose = d.get_or("bg_xpose_mode", 0);
}

// The PSUM group semantics of a Matmul on its generation (spec 4.1).
pe::PsumGroup psum_group(const isa::Decoded& d) {
  pe::PsumGroup g;
  if (!d.has("psum_accumulate_flags")) {  // MAVERICK: accumulate_flag alone
    g.accumulate = d.get("flags.accumulate_flag") != 0;
    return g;
  }
  g.tracked = true;
  g.flags = static_cast<std::uint8_t>(d.get("psum_accumulate_flags"));
  g.begin = g.flags & isa::psum_flags::BEGIN_MATMUL_GROUP;
  g.begin_accumulate = g.flags & isa::psum_flags::BEGIN_ACCUM_MATMUL_GROUP;
  g.end = g.flags & isa::psum_flags::END_MATMUL_GROUP;
  // MARIANA: the flag chooses add vs overwrite; CAYMAN: BEGIN overwrites, everything else adds.
  g.accumulate = d.has("flags.accumulate_flag") ? d.get("flags.accumulate_flag") != 0 : !g.begin;
  g.zero_region = d.get_or("psum_zero_region", 0);
  if (g.begin) g.zero_banks = isa::zero_region_banks(static_cast<isa::ZeroRegion>(g.zero_region));
  return g;
}

pe::MicroOp lower_ldweights(const isa::Decoded& d, const isa::TileRect& tile) {
  pe::MicroOp op = micro_op(pe::MicroOpKind::WeightLoad, d, tile);
  lower_operands(d, op);
  return op;
}

pe::MicroOp lower_matmul(const isa::Decoded& d, const isa::TileRect& tile) {
  pe::MicroOp op = micro_op(pe::MicroOpKind::Matmul, d, tile);
  lower_operands(d, op);
  op.dst = pattern_of(d, "dst_mem_pattern");
  op.out_dtype = d.get_or("out_dtype", 0);
  op.psum = psum_group(d);
  return op;
}

pe::MicroOp lower_pe_reg_write(const isa::Decoded& d, const isa::TileRect& tile) {
  pe::MicroOp op = micro_op(pe::MicroOpKind::PeRegWrite, d, tile);
  op.reg_addr = static_cast<std::uint32_t>(d.get("reg_addr"));
  op.imm_value = static_cast<std::uint32_t>(d.get("imm_value"));
  return op;
}

// ---- the handlers ----------------------------------------------------------------------------------------------

// A modelled handler: the instruction must be valid and give a tile; then it
// lowers to one micro-op.
using Lowering = pe::MicroOp (*)(const isa::Decoded&, const isa::TileRect&);

void handle_modelled(const isa::Decoded& d, Lowering lower, Prepared& p) {
  if (!d.valid()) {
    p.fault = from_violation(d.violations.front());
    return;
  }
  const auto tile = isa::tile_of(d);
  if (!tile) {
    // The stream rule reads nothing of an instruction without a tile, so this
    // fault is the one it would give after the rule, too.
    p.fault = Fault{"exec.tile", "", 0, "the tile fields do not give a tile"};
    return;
  }
  p.stream = isa::StreamChecker::key_of(d, *tile);
  p.op = lower(d, *tile);
}

// A handler the model does not implement yet: it names itself, then rejects
// the instruction (never skips it silently).
void handle_not_modelled(const isa::Decoded& d, Prepared& p) {
  if (!d.valid()) {
    p.fault = from_violation(d.violations.front());
    return;
  }
  p.fault = Fault{"seq.not_modelled", "header.opcode", d.opcode_byte,
                  std::string(isa::name(*d.opcode)) + " (" + p.self_name +
                      ") is not modelled yet; the instruction is rejected"};
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
  p.self_name = self_name(p.handler, *d);
  switch (p.handler) {
    case Handler::Ldweights: handle_modelled(*d, lower_ldweights, p); break;
    case Handler::Matmul: handle_modelled(*d, lower_matmul, p); break;
    case Handler::PeRegWrite: handle_modelled(*d, lower_pe_reg_write, p); break;
    case Handler::LdTags:
    case Handler::MatmulSparse:
    case Handler::PeManageSeed:
    case Handler::LdweightsMX:
    case Handler::MatmulMX:
    case Handler::ConvLutLoad: handle_not_modelled(*d, p); break;
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
  out.ops.push_back(*p.op);
  out.ops.back().instr_index = index;
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

}  // namespace pevp::fw
