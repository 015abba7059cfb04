#include "pevp/firmware/firmware.h"

#include <algorithm>

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

namespace {

Fault from_violation(const isa::Violation& v) { return {v.rule, v.field, v.value, v.message}; }

std::optional<pe::MicroOpKind> modelled_kind(Handler h) {
  switch (h) {
    case Handler::Ldweights: return pe::MicroOpKind::WeightLoad;
    case Handler::Matmul: return pe::MicroOpKind::Matmul;
    case Handler::PeRegWrite: return pe::MicroOpKind::PeRegWrite;
    default: return std::nullopt;
  }
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
  p.self_name = isa::firmware_self_name(*d);
  const auto kind = modelled_kind(p.handler);
  if (!d->valid()) {
    p.fault = from_violation(d->violations.front());
  } else if (!kind) {
    p.fault = Fault{"seq.not_modelled", "header.opcode", d->opcode_byte,
                    std::string(isa::name(*d->opcode)) + " (" + p.self_name +
                        ") is not modelled yet; the instruction is rejected"};
  } else if (const auto tile = isa::tile_of(*d); !tile) {
    // The stream rule reads nothing of an instruction without a tile, so this
    // fault is the one it would give after the rule, too.
    p.fault = Fault{"exec.tile", "", 0, "the tile fields do not give a tile"};
  } else {
    p.stream = isa::StreamChecker::key_of(*d, *tile);
    pe::MicroOp op;
    op.kind = *kind;
    op.instr = d;
    op.tile = *tile;
    p.op = std::move(op);
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
