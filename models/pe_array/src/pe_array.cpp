#include "pevp/pe_array/pe_array.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>

namespace pevp::pe {

PeArray::PeArray(sc_core::sc_module_name name, const isa::ArrayGeometry& geo, unsigned threads,
                 Bf16Rounding rounding)
    : sc_core::sc_module(name), sbuf_port("sbuf_port"), psum_port("psum_port"), geo_(geo), exec_(geo, threads, rounding) {}

PeArray::Span PeArray::acquire(tlm_utils::simple_initiator_socket<PeArray>& port, const char* what) {
  tlm::tlm_generic_payload trans;
  tlm::tlm_dmi dmi;
  trans.set_command(tlm::TLM_WRITE_COMMAND);
  trans.set_address(0);
  if (!port->get_direct_mem_ptr(trans, dmi) || !dmi.is_read_write_allowed() || dmi.get_start_address() != 0) {
    SC_REPORT_ERROR(name(), (std::string(what) + ": the memory grants no read/write DMI from address 0").c_str());
    return {};
  }
  return {dmi.get_dmi_ptr(), static_cast<std::size_t>(dmi.get_end_address() - dmi.get_start_address() + 1)};
}

void PeArray::end_of_elaboration() {
  sbuf_ = acquire(sbuf_port, "SBUF");
  psum_ = acquire(psum_port, "PSUM");
}

ExecResult PeArray::execute(const MicroOp& op, bool bypass_peregwrite) {
  if (!sbuf_.ptr || !psum_.ptr) return ExecResult::error("exec.buffer_bounds", "the PE array has no DMI to SBUF/PSUM");
  switch (op.kind) {
    case MicroOpKind::WeightLoad: return exec_.ldweights(op, sbuf_.ptr, sbuf_.bytes);
    case MicroOpKind::Matmul: return exec_.matmul(op, sbuf_.ptr, sbuf_.bytes, psum_.ptr, psum_.bytes);
    case MicroOpKind::PeRegWrite: return pe_reg_write(op, bypass_peregwrite);
  }
  return ExecResult::error("exec.opcode", "unknown micro-op kind");
}

void PeArray::set_datapath(Datapath* d, unsigned sbuf_access_cycles) {
  exec_.set_datapath(d);
  sbuf_access_cycles_ = sbuf_access_cycles;
}

std::string PeArray::implementation() const {
  return exec_.datapath() ? exec_.datapath()->name() : ArrayModel::implementation();
}

Accepted PeArray::offer(const MicroOp& op, bool bypass_peregwrite, std::uint64_t earliest) {
  if (!exec_.datapath()) return ArrayModel::offer(op, bypass_peregwrite, earliest);
  if (op.kind == MicroOpKind::PeRegWrite)
    return {ExecResult::error("exec.datapath", "reg_addr = " + std::to_string(op.reg_addr) + ": " +
                                                   exec_.datapath()->name() +
                                                   " has no PE registers (pe_array.impl = rtl runs no PeRegWrite)"),
            std::nullopt};
  Accepted a{execute(op, bypass_peregwrite), std::nullopt};
  if (!a.result.ok) return a;
  const DatapathTiming& d = exec_.datapath_timing();
  ArrayTiming t;
  t.accept = earliest;
  if (op.kind == MicroOpKind::WeightLoad) {
    t.end = t.complete = t.first_result = earliest + d.cycles;
  } else {
    t.end = earliest + exec_.last_stats().n;
    t.complete = std::max(t.end, earliest + sbuf_access_cycles_ + d.cycles);
    t.first_result = std::min(t.complete, earliest + sbuf_access_cycles_ + d.first_result);
  }
  a.timing = t;
  return a;
}

ExecResult PeArray::pe_reg_write(const MicroOp& op, bool bypass) {
  const std::uint32_t reg = op.reg_addr;
  std::uint32_t value = op.imm_value;
  if (!bypass) {
    // D-PEREGWRITE: the value is the 32-bit little-endian word at the source
    // pattern's start address in SBUF.
    const auto addr = static_cast<std::uint64_t>(op.src.start_raw);
    const auto& geo = geo_;
    const std::uint64_t part = addr / geo.sbuf_partition_bytes, off = addr % geo.sbuf_partition_bytes;
    if (addr < isa::ArrayGeometry::kSbufBase || part >= geo.partitions || off + 4 > geo.sbuf_partition_bytes ||
        addr + 4 > sbuf_.bytes)
      return ExecResult::error("seq.peregwrite_src",
                               "src_mem_pattern.start_addr = " + std::to_string(addr) +
                                   ": the 4-byte PeRegWrite source must lie inside one SBUF partition");
    std::memcpy(&value, sbuf_.ptr + addr, 4);
  }
  pe_regs_[{op.tile.row0, op.tile.col0, reg}] = value;
  return ExecResult::success();
}

std::uint32_t PeArray::pe_register(unsigned row0, unsigned col0, std::uint32_t reg_addr) const {
  auto it = pe_regs_.find({row0, col0, reg_addr});
  return it == pe_regs_.end() ? 0 : it->second;
}

void PeArray::reset() {
  exec_.reset();
  pe_regs_.clear();
}

PeArray::State PeArray::state() const {
  State s;
  s.exec = exec_.state();
  for (const auto& [key, value] : pe_regs_)
    s.pe_registers.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), value});
  return s;
}

std::string PeArray::check(const State& s, isa::Generation gen) const {
  if (std::string why = exec_.check(s.exec, gen); !why.empty()) return why;
  const auto key = [](const PeRegister& r) { return std::make_tuple(r.row0, r.col0, r.reg_addr); };
  for (std::size_t i = 0; i < s.pe_registers.size(); ++i) {
    const PeRegister& r = s.pe_registers[i];
    if (r.row0 >= geo_.pe_rows || r.col0 >= geo_.pe_cols)
      return "a PE register of the tile at (" + std::to_string(r.row0) + ", " + std::to_string(r.col0) +
             "), outside the array";
    // state() lists them in key order, each once: a repeated register would silently lose one of its values.
    if (i > 0 && !(key(s.pe_registers[i - 1]) < key(r)))
      return "PE register " + std::to_string(i) + " (tile (" + std::to_string(r.row0) + ", " + std::to_string(r.col0) +
             "), address " + std::to_string(r.reg_addr) + ") repeats or is out of order";
  }
  return "";
}

void PeArray::restore(State s) {
  exec_.restore(std::move(s.exec));
  pe_regs_.clear();
  for (const PeRegister& r : s.pe_registers) pe_regs_[{r.row0, r.col0, r.reg_addr}] = r.value;
}

}  // namespace pevp::pe
