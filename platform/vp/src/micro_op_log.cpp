#include "pevp/platform/micro_op_log.h"

#include <string_view>

#include "pevp/arr_seq/arr_seq.h"
#include "pevp/isa/enums.h"
#include "pevp/isa/opcode.h"

namespace pevp::platform {

namespace {

// A JSON string of text that is only letters, digits, '_' and ' ' (opcode, kind, dtype and stall names).
void quoted(std::string& out, std::string_view text) {
  out += '"';
  out += text;
  out += '"';
}

void key(std::string& out, const char* name) {
  if (out.size() > 1) out += ',';
  quoted(out, name);
  out += ':';
}

void field(std::string& out, const char* name, std::uint64_t v) {
  key(out, name);
  out += std::to_string(v);
}

void flag(std::string& out, const char* name, bool v) {
  key(out, name);
  out += v ? "true" : "false";
}

// The set bits of `mask` as a JSON array of their indices, lowest first.
void bits(std::string& out, const char* name, std::uint64_t mask) {
  key(out, name);
  out += '[';
  bool first = true;
  for (unsigned b = 0; b < 64; ++b)
    if (mask >> b & 1) {
      if (!first) out += ',';
      out += std::to_string(b);
      first = false;
    }
  out += ']';
}

std::string opcode_text(const pe::MicroOp& op) {
  if (auto o = isa::opcode_from_byte(op.opcode_byte, op.gen)) return std::string(isa::name(*o));
  return "UNKNOWN";
}

}  // namespace

MicroOpLog::MicroOpLog(Platform& platform, std::ostream& out)
    : p_(platform), out_(out), previous_observer_(platform.arr_seq.observer) {
  p_.arr_seq.observer = [this](const pe::MicroOp& op, const arrseq::Slot& s) {
    if (previous_observer_) previous_observer_(op, s);
    if (!open_ || op.instr_index != last_instr_) uop_ = 0;
    if (enabled_) out_ << line(op, s, p_.geometry(), seq_++, uop_) << '\n';
    ++uop_;
    last_instr_ = op.instr_index;
    open_ = !op.completes_instruction;
  };
}

MicroOpLog::~MicroOpLog() {
  p_.arr_seq.observer = previous_observer_;
  out_.flush();
}

std::string MicroOpLog::line(const pe::MicroOp& op, const arrseq::Slot& s, const isa::ArrayGeometry& geo,
                             std::uint64_t seq, unsigned uop) {
  const arrseq::OpShape& sh = s.shape;
  const bool matmul = op.kind == pe::MicroOpKind::Matmul;
  const bool regwrite = op.kind == pe::MicroOpKind::PeRegWrite;
  std::string out = "{";
  field(out, "seq", seq);
  field(out, "instr", op.instr_index);
  field(out, "uop", uop);
  flag(out, "last", op.completes_instruction);
  key(out, "opcode");
  quoted(out, opcode_text(op));
  field(out, "opcode_byte", op.opcode_byte);
  key(out, "kind");
  quoted(out, pe::name(op.kind));
  field(out, "queue", arrseq::ArrSeq::queue_of(sh.tile, geo));
  key(out, "tile");
  out += "{\"row0\":" + std::to_string(sh.tile.row0) + ",\"rows\":" + std::to_string(sh.tile.rows) +
         ",\"col0\":" + std::to_string(sh.tile.col0) + ",\"cols\":" + std::to_string(sh.tile.cols) + '}';
  field(out, "k", sh.k);
  field(out, "m", sh.m);
  field(out, "n", matmul ? sh.n : 0);
  key(out, "in_dtype");
  if (regwrite)
    out += "null";
  else
    quoted(out, isa::name(op.in_dtype));
  flag(out, "fp32", sh.fp32);
  flag(out, "transpose", sh.transpose);
  flag(out, "accumulate", matmul && sh.accumulate);
  bits(out, "psum_banks", matmul ? sh.banks : 0);
  bits(out, "row_groups", sh.row_groups);
  field(out, "sbuf_partition", sh.first_partition);
  bits(out, "sbuf_xbus", sh.sbuf_xbus);
  field(out, "macs", sh.macs);
  field(out, "pe_reg_addr", regwrite ? op.reg_addr : 0);
  field(out, "pe_reg_value", regwrite ? op.imm_value : 0);
  field(out, "ready", s.ready);
  field(out, "issue", s.push);
  field(out, "start", s.start);
  field(out, "end", s.end);
  field(out, "complete", s.complete);
  field(out, "done", s.done);
  field(out, "response", s.response);
  field(out, "occupancy", s.cost.occupancy);
  key(out, "stalls");
  out += '{';
  for (unsigned i = 0; i < arrseq::kStallKinds; ++i) {
    if (i > 0) out += ',';
    quoted(out, arrseq::name(static_cast<arrseq::Stall>(i)));
    out += ':' + std::to_string(s.stalls[i]);
  }
  out += "}}";
  return out;
}

}  // namespace pevp::platform
