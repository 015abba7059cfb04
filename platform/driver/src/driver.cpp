// sc_spawn (the feeder thread) is only declared with dynamic processes enabled.
#define SC_INCLUDE_DYNAMIC_PROCESSES

#include "pevp/platform/driver.h"

#include "pevp/isa/hex.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <limits>

#include "pevp/isa/rules.h"
#include "pevp/regfile/apb_prot.h"
#include "pevp/seq/iq_write_status.h"
#include "tpb_arr_seq_cluster_host_visible_regs.h"
#include "tpb_arr_seq_top_host_visible_regs.h"
#include "tpb_arr_seq_top_protected_regs.h"
#include "vp_seq_regs.h"

namespace pevp::platform {

namespace {

const char* status_text(tlm::tlm_response_status s) {
  switch (s) {
    case tlm::TLM_OK_RESPONSE: return "OK";
    case tlm::TLM_INCOMPLETE_RESPONSE: return "INCOMPLETE";
    case tlm::TLM_GENERIC_ERROR_RESPONSE: return "GENERIC_ERROR";
    case tlm::TLM_ADDRESS_ERROR_RESPONSE: return "ADDRESS_ERROR";
    case tlm::TLM_COMMAND_ERROR_RESPONSE: return "COMMAND_ERROR";
    case tlm::TLM_BURST_ERROR_RESPONSE: return "BURST_ERROR";
    case tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE: return "BYTE_ENABLE_ERROR";
  }
  return "?";
}

const regfile::RegFileDesc& desc_of(std::string_view face) {
  if (face == "top") return regs::tpb_arr_seq_top_host_visible::regfile_desc();
  if (face == "cluster") return regs::tpb_arr_seq_cluster_host_visible::regfile_desc();
  if (face == "protected") return regs::tpb_arr_seq_top_protected::regfile_desc();
  if (face == "vp") return regs::vp_seq::regfile_desc();
  throw std::invalid_argument("unknown register face '" + std::string(face) + "' (top, cluster, protected, vp)");
}

// A register by name: "queue_cfg", or "bundle.register" when the name alone is
// ambiguous (the three per-tile counter banks reuse their register names).
const regfile::RegisterDesc& find_register(const regfile::RegFileDesc& d, std::string_view qualified) {
  std::string_view bundle, reg = qualified;
  if (const auto dot = qualified.find('.'); dot != std::string_view::npos) {
    bundle = qualified.substr(0, dot);
    reg = qualified.substr(dot + 1);
  }
  const regfile::RegisterDesc* found = nullptr;
  std::string bundles;
  for (std::size_t i = 0; i < d.num_registers; ++i) {
    const auto& r = d.registers[i];
    if (r.name != reg || (!bundle.empty() && r.bundle != bundle)) continue;
    bundles += (bundles.empty() ? "" : ", ") + std::string(r.bundle);
    if (found)
      throw std::invalid_argument(std::string(d.name) + ": register name '" + std::string(reg) +
                                  "' is ambiguous; qualify it as <bundle>." + std::string(reg) + " (" + bundles +
                                  ", ...)");
    found = &r;
  }
  if (!found) throw std::invalid_argument(std::string(d.name) + " has no register '" + std::string(qualified) + "'");
  return *found;
}

const regfile::FieldDesc* field_named(const regfile::RegisterDesc& r, std::string_view field) {
  for (std::size_t f = 0; f < r.num_fields; ++f)
    if (r.fields[f].name == field) return &r.fields[f];
  return nullptr;
}

std::uint64_t face_base_of(const AddressMap& map, std::string_view face) {
  if (face == "top") return map.top();
  if (face == "cluster") return map.cluster();
  if (face == "protected") return map.protect();
  if (face == "vp") return map.vp_seq();
  throw std::invalid_argument("unknown register face '" + std::string(face) + "' (top, cluster, protected, vp)");
}

}  // namespace

std::string RegisterRef::name() const {
  return face + ":" + (reg ? std::string(reg->bundle) + "." + std::string(reg->name) : std::string("?")) +
         (field ? "." + std::string(field->name) : std::string());
}

RegisterRef resolve_register(const AddressMap& map, std::string_view face, std::string_view name) {
  const regfile::RegFileDesc& d = desc_of(face);
  RegisterRef out;
  out.face = std::string(face);
  // "x.y" is a register and its field when that register has that field;
  // otherwise the whole name is a (bundle-qualified) register.
  const regfile::RegisterDesc* prefix = nullptr;
  if (const auto dot = name.rfind('.'); dot != std::string_view::npos) {
    try {
      prefix = &find_register(d, name.substr(0, dot));
      if (const regfile::FieldDesc* f = field_named(*prefix, name.substr(dot + 1))) {
        out.reg = prefix;
        out.field = f;
      }
    } catch (const std::invalid_argument&) {
      // not a register prefix: fall through to the whole name
    }
  }
  if (!out.reg) {
    try {
      out.reg = &find_register(d, name);
    } catch (const std::invalid_argument&) {
      // "reg.fieldtypo": the register exists, so the field is what is wrong.
      if (prefix)
        throw std::invalid_argument(std::string(d.name) + "." + std::string(prefix->name) + " has no field '" +
                                    std::string(name.substr(name.rfind('.') + 1)) + "'");
      throw;
    }
  }
  out.address = face_base_of(map, face) + out.reg->offset;
  return out;
}

BusError::BusError(std::uint64_t a, tlm::tlm_response_status s, const std::string& what)
    : std::runtime_error(what + " at " + hex(a) + ": " + status_text(s)), address(a), status(s) {}

std::uint64_t Driver::protected_face_bytes() { return desc_of("protected").size_bytes; }

std::string Driver::privilege_refusal(tlm::tlm_command cmd, std::uint64_t address, std::size_t bytes) const {
  const regfile::RegFileDesc& d = desc_of("protected");
  const std::uint64_t offset = address - map_.protect();
  std::string reg = "no register";
  for (std::size_t i = 0; i < d.num_registers; ++i)
    if (d.registers[i].offset == (offset & ~std::uint64_t{3}))
      reg = "protected:" + std::string(d.registers[i].bundle) + "." + std::string(d.registers[i].name);
  return std::string("unprivileged ") + (cmd == tlm::TLM_READ_COMMAND ? "read" : "write") + " of " +
         std::to_string(bytes) + " bytes at " + hex(address) + " (" + reg + ", offset " + hex(offset) +
         " of the protected face at " + hex(map_.protect()) + "): the protected face answers only privileged "
         "accesses (PPROT[0] = 1, spec 003 section 7); nothing was read or written. Pass privileged = 1 "
         "(pevp_read32 / pevp_write32) or name the register on face \"protected\" (pevp_read_reg / pevp_write_reg)";
}

std::string ErrorInfo::describe() const {
  return "instruction " + std::to_string(index) + ": opcode " + hex(opcode) + ", field at byte " +
         (field_offset == 0xFF ? std::string("-") : std::to_string(field_offset)) + ", value " +
         std::to_string(value) + ", rule " + (rule.empty() ? hex(rule_number) : rule);
}

Driver::Driver(tlm::tlm_initiator_socket<>& socket, const AddressMap& map,
               const sc_core::sc_signal_in_if<bool>& irq)
    : socket_(socket), map_(map), irq_(irq) {}

void Driver::access(tlm::tlm_command cmd, std::uint64_t address, void* data, std::size_t bytes, bool privileged,
                    sc_core::sc_time& delay, seq::IqWriteStatus* iq_status) {
  tlm::tlm_generic_payload trans;
  regfile::ApbProt prot(privileged);
  trans.set_command(cmd);
  trans.set_address(address);
  trans.set_data_ptr(static_cast<unsigned char*>(data));
  trans.set_data_length(static_cast<unsigned>(bytes));
  trans.set_streaming_width(static_cast<unsigned>(bytes));
  trans.set_byte_enable_ptr(nullptr);
  trans.set_dmi_allowed(false);
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  trans.set_extension(&prot);
  if (iq_status != nullptr) trans.set_extension(iq_status);
  socket_->b_transport(trans, delay);
  trans.clear_extension(&prot);
  if (iq_status != nullptr) trans.clear_extension(iq_status);
  if (trans.get_response_status() != tlm::TLM_OK_RESPONSE) {
    // The time the failed access took still passes.
    if (delay > sc_core::SC_ZERO_TIME) sc_core::wait(delay);
    // The protected face judges privilege before anything else (regfile_target.cpp, rtl_regfile.cpp), so any
    // refusal of an unprivileged access inside it is for want of privilege.
    if (!privileged && address >= map_.protect() && address - map_.protect() < protected_face_bytes())
      throw PrivilegeError(address, trans.get_response_status(), privilege_refusal(cmd, address, bytes));
    throw BusError(address, trans.get_response_status(),
                   std::string(cmd == tlm::TLM_READ_COMMAND ? "read" : "write") + " of " + std::to_string(bytes) +
                       " bytes");
  }
}

void Driver::transport(tlm::tlm_command cmd, std::uint64_t address, void* data, std::size_t bytes, bool privileged) {
  // Loosely timed, synchronised after every access: the driver is a sequential
  // program, so its accesses cost their annotated time in simulated time.
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  const bool into_queue = cmd == tlm::TLM_WRITE_COMMAND && address >= map_.iq && address - map_.iq < map_.iq_size;
  seq::IqWriteStatus queue_status;
  queue_status.wait_for_room = queue_writes_wait;
  try {
    access(cmd, address, data, bytes, privileged, delay, into_queue ? &queue_status : nullptr);
  } catch (const BusError& e) {
    // Refused for lack of room (D-IQ-NO-WAIT): say so, with the numbers a caller needs to try again.
    if (!into_queue || queue_writes_wait || e.status != tlm::TLM_GENERIC_ERROR_RESPONSE ||
        bytes % isa::kInstructionBytes != 0)
      throw;
    throw BusError(address, e.status,
                   "write of " + std::to_string(bytes / isa::kInstructionBytes) +
                       " records into the instruction queue: the queue has room for " +
                       std::to_string(queue_status.space) + " (queue full); none taken, and the write does not "
                       "wait for room (iq_status.space tells when there is)");
  }
  if (delay > sc_core::SC_ZERO_TIME) sc_core::wait(delay);
  // Every way this driver clears the error (clear_error(), a field or register
  // write by name, write32) lets a held feeder go on.
  namespace cmd_reg = regs::vp_seq::seq_ctrl::seq_cmd;
  if (cmd == tlm::TLM_WRITE_COMMAND && bytes == 4 &&
      address == map_.vp_seq() + regs::vp_seq::offsets::seq_ctrl_seq_cmd &&
      (*static_cast<const std::uint32_t*>(data) & cmd_reg::clear_error::kMask) != 0)
    error_cleared_.notify(sc_core::SC_ZERO_TIME);
}

std::uint32_t Driver::read32(std::uint64_t address, bool privileged) {
  std::uint32_t v = 0;
  transport(tlm::TLM_READ_COMMAND, address, &v, 4, privileged);
  return v;
}

void Driver::write32(std::uint64_t address, std::uint32_t value, bool privileged) {
  transport(tlm::TLM_WRITE_COMMAND, address, &value, 4, privileged);
}

void Driver::write(std::uint64_t address, const void* data, std::size_t bytes) {
  if (bytes == 0) return;  // D-ZERO-BURST
  transport(tlm::TLM_WRITE_COMMAND, address, const_cast<void*>(data), bytes, false);
}

void Driver::read(std::uint64_t address, void* data, std::size_t bytes) {
  if (bytes == 0) return;  // D-ZERO-BURST
  transport(tlm::TLM_READ_COMMAND, address, data, bytes, false);
}

void Driver::write_rows(std::uint64_t address, std::size_t address_stride, const void* data, std::size_t data_stride,
                        std::size_t row_bytes, std::size_t rows) {
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  const auto* src = static_cast<const std::uint8_t*>(data);
  for (std::size_t i = 0; i < rows; ++i)
    access(tlm::TLM_WRITE_COMMAND, address + i * address_stride, const_cast<std::uint8_t*>(src + i * data_stride),
           row_bytes, false, delay);
  if (delay > sc_core::SC_ZERO_TIME) sc_core::wait(delay);
}

void Driver::read_rows(std::uint64_t address, std::size_t address_stride, void* data, std::size_t data_stride,
                       std::size_t row_bytes, std::size_t rows) {
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  auto* dst = static_cast<std::uint8_t*>(data);
  for (std::size_t i = 0; i < rows; ++i)
    access(tlm::TLM_READ_COMMAND, address + i * address_stride, dst + i * data_stride, row_bytes, false, delay);
  if (delay > sc_core::SC_ZERO_TIME) sc_core::wait(delay);
}

// The by-name accessors are the RegisterRef ones with the name spelled "reg.field".
RegisterRef Driver::field_ref(std::string_view face, std::string_view reg, std::string_view field) const {
  RegisterRef r = resolve_register(map_, face, std::string(reg) + "." + std::string(field));
  if (!r.field) throw std::invalid_argument(r.name() + " is a register, not a field of '" + std::string(reg) + "'");
  return r;
}

std::uint32_t Driver::read_field(std::string_view face, std::string_view reg, std::string_view field) {
  return read(field_ref(face, reg, field));
}

void Driver::write_field(std::string_view face, std::string_view reg, std::string_view field, std::uint32_t value) {
  write(field_ref(face, reg, field), value);
}

std::uint64_t Driver::read_counter48(std::string_view face, std::string_view lsb_reg) {
  const std::string name(lsb_reg);
  if (name.size() < 4 || name.substr(name.size() - 4) != "_lsb")
    throw std::invalid_argument("'" + name + "' is not a counter's _lsb register");
  const RegisterRef lsb = resolve_register(map_, face, name);
  // The _msb half lives in the same bundle as the _lsb half.
  const std::string reg(lsb.reg->name);
  const RegisterRef msb =
      resolve_register(map_, face, std::string(lsb.reg->bundle) + "." + reg.substr(0, reg.size() - 4) + "_msb");
  for (;;) {
    const std::uint32_t hi1 = read(msb) & 0xFFFF;
    const std::uint32_t lo = read(lsb);
    const std::uint32_t hi2 = read(msb) & 0xFFFF;
    if (hi1 == hi2) return (std::uint64_t{hi1} << 32) | lo;
  }
}

std::uint32_t Driver::read(const RegisterRef& r) {
  const std::uint32_t v = read32(r.address, r.privileged());
  return r.field ? (v & r.field->mask()) >> r.field->lsb : v;
}

void Driver::write(const RegisterRef& r, std::uint32_t value) {
  if (!r.field) {
    write32(r.address, value, r.privileged());
    return;
  }
  const std::uint32_t old = read32(r.address, r.privileged());
  write32(r.address, (old & ~r.field->mask()) | ((value << r.field->lsb) & r.field->mask()), r.privileged());
}

void Driver::arm(const ArmOptions& o) {
  // 003 section 6, step 1: issue policy.
  write_field("top", "queue_cfg", "fifo_size_sel", o.single_entry);
  write_field("top", "queue_cfg", "bypass_peregwrite_instr", o.reg_immediate);
  write_field("top", "queue_cfg", "disable_dependency_check", o.serialized);
  // Step 2: telemetry -- pulse cntr_rst, then cntr_en.
  if (o.counters) {
    write_field("top", "perf_cntr_cfg", "cntr_rst", 1);
    write_field("top", "perf_cntr_cfg", "cntr_en", 1);
  }
  // The VP's completion interrupt.
  write_field("vp", "irq_enable", "done", o.irq);
  write_field("vp", "irq_enable", "error", o.irq);
}

void Driver::submit(const std::vector<isa::RawInstruction>& program) {
  if (program.size() > max_unwritten - std::min(max_unwritten, pending_.size()))
    throw HoldLimitError("submit: " + std::to_string(program.size()) + " instructions on top of the " +
                         std::to_string(pending_.size()) +
                         " still waiting to be written into the instruction queue would pass the " +
                         std::to_string(max_unwritten) +
                         " the driver holds; none queued (wait until the SEQ takes them, or discard them)");
  pending_.insert(pending_.end(), program.begin(), program.end());
  if (feeding_ || pending_.empty()) return;
  feeding_ = true;
  sc_core::sc_spawn([this] { feed(); }, sc_core::sc_gen_unique_name("driver_feeder"));
}

void Driver::feed() {
  // Bursts as large as the queue's window takes (4 KiB = 64 records): each
  // write costs a bus transaction whatever its length. The window
  // back-pressures this thread while the queue is full (Seq::b_transport waits
  // for space), so the feeder needs no polling of iq_status.space. A queue
  // stopped on an error makes no room: it refuses the rest of the burst and
  // says how many records it took (D-IQ-STOPPED); the feeder keeps the others
  // and holds until this driver clears the error, then goes on.
  const std::size_t kBurst = std::max<std::size_t>(1, map_.iq_size / isa::kInstructionBytes);
  std::vector<std::uint8_t> buf;
  try {
    while (!pending_.empty()) {
      const std::size_t n = std::min(kBurst, pending_.size());
      buf.resize(n * isa::kInstructionBytes);
      for (std::size_t j = 0; j < n; ++j)
        std::copy(pending_[j].begin(), pending_[j].end(), buf.begin() + j * isa::kInstructionBytes);
      seq::IqWriteStatus status;
      std::exception_ptr refused;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      try {
        access(tlm::TLM_WRITE_COMMAND, map_.iq, buf.data(), buf.size(), false, delay, &status);
      } catch (const BusError& e) {
        if (e.status != tlm::TLM_GENERIC_ERROR_RESPONSE) throw;
        refused = std::current_exception();  // handled below: no wait() inside a handler
      }
      if (!refused && delay > sc_core::SC_ZERO_TIME) sc_core::wait(delay);  // a failed access has waited its own
      // discard_unwritten() may have emptied pending_ while the burst waited for room (a reset).
      const std::size_t queued = std::min(refused ? std::min<std::size_t>(status.queued, n) : n, pending_.size());
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(queued));
      if (pending_.empty()) break;  // written, or discarded: nothing to hold
      if (!refused) continue;
      // The SEQ stopped on a fault with the queue full: the fault is the news,
      // which wait_idle() reports; the feeder holds the rest until it is cleared.
      if (!read_field("vp", "seq_status", "error")) std::rethrow_exception(refused);
      // Nothing this thread owns may stay on its stack while it holds: a fault never cleared leaves it waiting
      // when the simulation ends, and SystemC does not unwind a waiting thread (LeakSanitizer would see it).
      refused = nullptr;
      std::vector<std::uint8_t>().swap(buf);
      holding_ = true;
      fed_.notify(sc_core::SC_ZERO_TIME);
      sc_core::wait(error_cleared_);
      holding_ = false;
    }
  } catch (...) {
    feeder_failure_ = std::current_exception();
    pending_.clear();
    holding_ = false;
  }
  feeding_ = false;
  fed_.notify(sc_core::SC_ZERO_TIME);
}

std::size_t Driver::discard_unwritten() {
  const std::size_t n = pending_.size();
  pending_.clear();
  // A held feeder finds nothing left when it wakes and ends.
  if (holding_) error_cleared_.notify(sc_core::SC_ZERO_TIME);
  return n;
}

void Driver::forget_program() {
  discard_unwritten();
  feeder_failure_ = nullptr;
}

void Driver::rethrow_feeder_failure() {
  if (!feeder_failure_) return;
  std::exception_ptr e = feeder_failure_;
  feeder_failure_ = nullptr;
  std::rethrow_exception(e);
}

void Driver::cancel() {
  cancelled_ = true;
  cancel_.notify(sc_core::SC_ZERO_TIME);
}

void Driver::throw_if_cancelled(const std::string& what) const {
  if (cancelled_) throw Cancelled(what + ": cancelled at " + std::to_string(sc_core::sc_time_stamp().value()) + " ps");
}

sc_core::sc_time Driver::deadline_after(const sc_core::sc_time& timeout, const std::string& what) {
  // sc_time adds modulo 2^64: a deadline past its end would wrap to the past.
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const auto last = std::numeric_limits<sc_core::sc_time::value_type>::max();
  if (timeout.value() > last - now.value())
    throw std::invalid_argument(what + ": a timeout of " + std::to_string(timeout.value()) + " ps from " +
                                std::to_string(now.value()) + " ps would pass the end of simulated time (" +
                                std::to_string(last) + " ps)");
  return now + timeout;
}

Completion Driver::wait_idle(sc_core::sc_time timeout) {
  const sc_core::sc_time deadline = deadline_after(timeout, "wait_idle");
  throw_if_cancelled("wait_idle");
  // While the feeder writes, the bus is left to it: the feeder ends when the
  // program is queued, or holds when the SEQ stopped on a fault (the queue then
  // refuses the rest), so no polling is needed to notice either. A program that
  // waits for a semaphore nobody sets holds the feeder in its write too: the
  // timeout covers both. Done counts only with nothing left to write.
  for (;;) {
    while (feeding_ && !holding_ && sc_core::sc_time_stamp() < deadline) {
      sc_core::wait(deadline - sc_core::sc_time_stamp(), fed_ | cancel_);
      throw_if_cancelled("wait_idle");
    }
    const std::uint32_t st = read32(map_.vp_seq() + regs::vp_seq::offsets::seq_ctrl_seq_status);
    Completion c;
    c.done = (st >> 2) & 1;
    c.error = (st >> 3) & 1;
    const bool busy = st & 1;
    rethrow_feeder_failure();
    // Done counts only once the whole submitted program is in the queue (the
    // queue may drain between two of the feeder's bursts).
    if (c.error || (c.done && !busy && !feeding_)) {
      c.retired = read_counter48("vp", "retired_cnt_lsb");
      return c;
    }
    if (sc_core::sc_time_stamp() >= deadline) {
      c.timed_out = true;
      c.retired = read_counter48("vp", "retired_cnt_lsb");
      return c;
    }
    // The interrupt when it is enabled, polling otherwise (and as a fallback).
    sc_core::wait(poll_interval, irq_.posedge_event() | cancel_);
    throw_if_cancelled("wait_idle");
  }
}

std::optional<ErrorInfo> Driver::error_record() {
  if (!read_field("vp", "seq_status", "error")) return std::nullopt;
  ErrorInfo e;
  e.index = read_field("vp", "err_instr_index", "index");
  const std::uint32_t info = read32(map_.vp_seq() + regs::vp_seq::offsets::seq_error_err_info);
  e.opcode = info & 0xFF;
  e.field_offset = (info >> 8) & 0xFF;
  e.rule_number = static_cast<std::uint16_t>(info >> 16);
  const std::uint64_t lo = read_field("vp", "err_value_lo", "value");
  const std::uint64_t hi = read_field("vp", "err_value_hi", "value");
  e.value = static_cast<std::int64_t>((hi << 32) | lo);
  e.rule = std::string(isa::rule_id(e.rule_number));
  return e;
}

void Driver::clear_done() { write_field("vp", "seq_cmd", "clear_done", 1); }
void Driver::clear_error() { write_field("vp", "seq_cmd", "clear_error", 1); }

std::uint32_t Driver::semaphore(unsigned i) { return read_field("vp", "semaphore_" + std::to_string(i), "value"); }
void Driver::set_semaphore(unsigned i, std::uint32_t v) {
  write32(map_.vp_seq() + regs::vp_seq::offsets::seq_semaphore_semaphore_0 + 4 * i, v);
}

// ---- VirtualPlatform ---------------------------------------------------------------------

}  // namespace pevp::platform
