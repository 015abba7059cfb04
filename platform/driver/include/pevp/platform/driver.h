// The driver side of a bring-up program: what a driver engineer writes against
// the VP. A Driver runs inside the host's SC_THREAD and talks to the platform
// only through the system bus (32-bit CSR accesses, SBUF/PSUM block transfers,
// 64-byte instruction writes) and the interrupt line -- never by reaching into
// the models: this library links no model, only the generated register headers
// and the address map. Every bus error throws BusError naming the address and
// status. VirtualPlatform (virtual_platform.h) pairs one with a platform:
//
//   VirtualPlatform vp(config);
//   vp.run([&](Driver& d) {
//     d.arm({.counters = true});
//     d.write(vp.map().sbuf + addr, bytes);
//     d.submit(program);
//     auto r = d.wait_idle();  // done or error
//   });
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "pevp/isa/decode.h"
#include "pevp/platform/address_map.h"
#include "pevp/regfile/desc.h"

namespace pevp::seq {
class IqWriteStatus;  // pevp/seq/iq_write_status.h
}

namespace pevp::platform {

class BusError : public std::runtime_error {
 public:
  BusError(std::uint64_t address, tlm::tlm_response_status status, const std::string& what);
  std::uint64_t address;
  tlm::tlm_response_status status;
};

// An unprivileged access refused by the protected face, which answers only privileged ones (PPROT[0] = 1, spec 003
// section 7): the message names the access, the address, the face and the register there, and the rule.
class PrivilegeError : public BusError {
 public:
  PrivilegeError(std::uint64_t address, tlm::tlm_response_status status, std::string message)
      : BusError(address, status, message), message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// A wait of this driver ended early because cancel() was called (its host's client left, or the host must stop).
class Cancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A submit() refused because the instructions held unwritten would pass Driver::max_unwritten.
class HoldLimitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The arm sequence of 003 section 6 (queue_cfg, then optionally the counters)
// plus the VP's interrupt enables.
struct ArmOptions {
  bool serialized = false;     // queue_cfg.disable_dependency_check
  bool single_entry = false;   // queue_cfg.fifo_size_sel
  bool reg_immediate = false;  // queue_cfg.bypass_peregwrite_instr
  bool counters = true;        // pulse cntr_rst, then set cntr_en
  bool irq = true;             // irq_enable.done | irq_enable.error
};

// What the SEQ reported when it settled.
struct Completion {
  bool done = false;
  bool error = false;
  std::uint64_t retired = 0;
  bool timed_out = false;
};

// The error record, as read from the vp_seq CSRs.
struct ErrorInfo {
  std::uint32_t index = 0;
  std::uint8_t opcode = 0;
  std::uint8_t field_offset = 0xFF;
  std::uint16_t rule_number = 0;
  std::int64_t value = 0;
  std::string rule;  // isa::rule_id(rule_number)
  std::string describe() const;
};

// A register or one of its fields, found by name in the generated tables. Names:
// "reg", "bundle.reg" (for names several bundles share), and either with ".field".
struct RegisterRef {
  std::string face;                          // top, cluster, protected, vp
  std::uint64_t address = 0;                 // on the platform bus
  const regfile::RegisterDesc* reg = nullptr;
  const regfile::FieldDesc* field = nullptr;  // null: the whole register
  bool privileged() const { return face == "protected"; }
  std::string name() const;                   // "top:queue_cfg.fifo_size_sel"
};
// Throws std::invalid_argument naming the face, the register or the field that does not exist.
RegisterRef resolve_register(const AddressMap& map, std::string_view face, std::string_view name);

class Driver {
 public:
  Driver(tlm::tlm_initiator_socket<>& socket, const AddressMap& map,
         const sc_core::sc_signal_in_if<bool>& irq);

  const AddressMap& map() const { return map_; }

  // ---- raw bus access ------------------------------------------------------------------
  std::uint32_t read32(std::uint64_t address, bool privileged = false);
  void write32(std::uint64_t address, std::uint32_t value, bool privileged = false);
  void write(std::uint64_t address, const void* data, std::size_t bytes);
  void read(std::uint64_t address, void* data, std::size_t bytes);
  // write() and read() take any length: one of 0 bytes is no bus transaction (TLM has no empty one) and takes no
  // time (D-ZERO-BURST).
  //
  // Whether a write into the instruction-queue window waits for room while the queue is full (the window's
  // back-pressure), or is refused whole at once: BusError (GENERIC_ERROR) naming the records and the room, nothing
  // queued (D-IQ-NO-WAIT). A host that executes the requests of others (pe-vp serve, the C API) clears it, so a
  // client's write can never hold the VP's only bus master. The feeder of submit() always waits.
  bool queue_writes_wait = true;
  // A 2-D transfer, the shape of an SBUF or PSUM tile: `rows` rows of `row_bytes`, row i at address +
  // i * address_stride on the bus and at data + i * data_stride in host memory. One bus write (read) per row, as
  // write() would issue; their annotated times are added up and waited once at the end instead of once per row,
  // which is the same simulated time when nothing else uses the bus in between (a driver loading a tile for an
  // idle engine) and saves a synchronisation per row. A failing row throws BusError; the rows before it are done.
  void write_rows(std::uint64_t address, std::size_t address_stride, const void* data, std::size_t data_stride,
                  std::size_t row_bytes, std::size_t rows);
  void read_rows(std::uint64_t address, std::size_t address_stride, void* data, std::size_t data_stride,
                 std::size_t row_bytes, std::size_t rows);

  // ---- registers by generated name ("queue_cfg", "fifo_size_sel") ---------------------------
  // face: "top", "cluster", "protected" (privileged accesses), "vp".
  std::uint32_t read_field(std::string_view face, std::string_view reg, std::string_view field);
  void write_field(std::string_view face, std::string_view reg, std::string_view field, std::uint32_t value);
  // Register names may be qualified by bundle ("arr_seq_ififo_perf_matmul.tile_128x128_tile0_instr_cnt_lsb");
  // an unqualified name that several bundles use is an error listing them.
  // A 48-bit counter from its _lsb/_msb pair, read msb-lsb-msb so a carry between
  // the two reads is never mixed (the driver idiom for split counters).
  std::uint64_t read_counter48(std::string_view face, std::string_view lsb_reg);
  // A resolved register or field: read returns the field's value (right-aligned);
  // a field write is read-modify-write.
  std::uint32_t read(const RegisterRef& r);
  void write(const RegisterRef& r, std::uint32_t value);

  // ---- the engine ---------------------------------------------------------------------
  void arm(const ArmOptions& options = {});
  // Queues the program for the instruction queue and returns at once: a feeder
  // thread of the driver writes it in bursts as large as the queue window, each
  // burst into a full queue completing when the SEQ has made room (the queue
  // back-pressures the writing thread). So the caller goes on -- sets the
  // semaphores a program waits on, reads registers, waits -- while a program
  // longer than the queue is still being written, and a fault stops the
  // program, not the caller. A further submit() appends to what is still to
  // be written; program order is kept. When the SEQ stops on a fault while a
  // burst waits for room, the queue refuses the rest of the burst
  // (D-IQ-STOPPED) and says how many of its records it took (IqWriteStatus):
  // the feeder holds the others, with the rest of the program, and writes them
  // once this driver clears the error (clear_error(), or a write of
  // seq_cmd.clear_error through it), so the program goes on from the
  // instruction after the fault as it would with a queue long enough for it.
  // At most max_unwritten instructions are held unwritten (unsubmitted()): a submit() that would pass it throws
  // HoldLimitError naming the counts and queues none of its program (D-SUBMIT-HOLD).
  void submit(const std::vector<isa::RawInstruction>& program);
  // 64 MiB of records, the most one protocol frame carries.
  std::size_t max_unwritten = std::size_t{1} << 20;
  // Instructions submitted whose write into the queue has not completed (the
  // burst being written counts whole until the queue took all of it; a held
  // remainder counts exactly).
  std::size_t unsubmitted() const { return pending_.size(); }
  // Instructions the feeder holds because the queue, stopped on a fault, refused
  // them: exactly those not yet queued; 0 while the feeder writes or is done.
  std::size_t held() const { return holding_ ? pending_.size() : 0; }
  // Forgets every instruction not yet written (a held remainder included), so
  // that clear_error() resumes only what the queue holds; returns how many.
  std::size_t discard_unwritten();
  // After the engine's hard reset (pevp/platform/reset.h): discard_unwritten(), and a failure the feeder met that no
  // wait reported yet is forgotten too -- nothing of the old program is left to write or to report. A burst the
  // feeder is writing into a full queue is refused by the reset and the feeder ends.
  void forget_program();
  // Waits until seq_status shows error, or done with every submitted
  // instruction written (interrupt, else polling every poll_interval), at most
  // `timeout` of simulated time. A bus error of the feeder is rethrown here. A timeout whose end would not fit
  // sc_time throws std::invalid_argument; cancel() ends the wait with Cancelled.
  Completion wait_idle(sc_core::sc_time timeout = sc_core::sc_time(1, sc_core::SC_SEC));
  // Simulated time `timeout` from now; std::invalid_argument naming `what` when it would pass the end of sc_time.
  static sc_core::sc_time deadline_after(const sc_core::sc_time& timeout, const std::string& what);

  // ---- cancellation ---------------------------------------------------------------------
  // Ends the wait_idle() in progress, and every wait after it until reset_cancel(), with Cancelled at the next
  // delta cycle: a host whose client left, or that must stop, does not wait out a long simulated timeout. Callable
  // from outside the simulation between sc_start() calls. The engine is untouched: the program and the feeder go
  // on as they would.
  void cancel();
  void reset_cancel() { cancelled_ = false; }
  // Notified by cancel(): a wait of the host's own (its interrupt wait) adds it to what it waits for.
  const sc_core::sc_event& cancel_event() const { return cancel_; }
  // Throws Cancelled naming `what` when cancel() was called.
  void throw_if_cancelled(const std::string& what) const;
  std::optional<ErrorInfo> error_record();
  void clear_done();
  void clear_error();
  std::uint32_t semaphore(unsigned i);
  void set_semaphore(unsigned i, std::uint32_t value);

  sc_core::sc_time poll_interval = sc_core::sc_time(100, sc_core::SC_NS);

 private:
  void transport(tlm::tlm_command cmd, std::uint64_t address, void* data, std::size_t bytes, bool privileged);
  // One access without synchronising: its annotated time is added to `delay`.
  // `iq_status`, for a write into the instruction queue, learns how many records the queue took.
  void access(tlm::tlm_command cmd, std::uint64_t address, void* data, std::size_t bytes, bool privileged,
              sc_core::sc_time& delay, seq::IqWriteStatus* iq_status = nullptr);
  RegisterRef field_ref(std::string_view face, std::string_view reg, std::string_view field) const;
  static std::uint64_t protected_face_bytes();
  std::string privilege_refusal(tlm::tlm_command cmd, std::uint64_t address, std::size_t bytes) const;
  void feed();  // the feeder thread's body: writes pending_ in bursts
  void rethrow_feeder_failure();

  tlm::tlm_initiator_socket<>& socket_;
  AddressMap map_;
  const sc_core::sc_signal_in_if<bool>& irq_;
  std::deque<isa::RawInstruction> pending_;  // submitted, not yet written
  bool feeding_ = false;                      // the feeder thread is running (writing or holding)
  bool holding_ = false;                      // ... and waits for the error to be cleared
  sc_core::sc_event fed_;                     // the feeder finished, or began to hold
  sc_core::sc_event error_cleared_;           // this driver wrote seq_cmd.clear_error
  std::exception_ptr feeder_failure_;         // a bus error the feeder met
  bool cancelled_ = false;
  sc_core::sc_event cancel_;
};

// A platform plus a host that runs one driver program in an SC_THREAD. SystemC
// elaborates once per process, so make one VirtualPlatform per process.

}  // namespace pevp::platform
