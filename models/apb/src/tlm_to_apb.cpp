#include "pevp/apb/tlm_to_apb.h"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace pevp::apb {

namespace {
constexpr const char* kNotAThread = "/pevp/apb/tlm_to_apb/not_a_thread";
constexpr const char* kStall = "/pevp/apb/tlm_to_apb/stall";

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}
}  // namespace

TlmToApb::TlmToApb(sc_core::sc_module_name name, TlmToApbConfig config)
    : sc_core::sc_module(name),
      socket("socket"),
      pclk("PCLK"),
      presetn("PRESETn"),
      psel("PSEL"),
      penable("PENABLE"),
      pwrite("PWRITE"),
      paddr("PADDR"),
      pwdata("PWDATA"),
      pstrb("PSTRB"),
      pprot("PPROT"),
      pready("PREADY"),
      prdata("PRDATA"),
      pslverr("PSLVERR"),
      config_(config) {
  if (config_.addr_bits != 0) {
    check_addr_bits(config_.addr_bits, std::string("TlmToApb '") + basename() + "'");
    addr_bits_ = config_.addr_bits;
  }
  socket.register_b_transport(this, &TlmToApb::b_transport);
  SC_HAS_PROCESS(TlmToApb);
  SC_THREAD(run);
}

void TlmToApb::connect(ApbBus& bus) {
  if (config_.addr_bits != 0 && config_.addr_bits != bus.addr_bits())
    throw std::invalid_argument(std::string("TlmToApb '") + basename() + "': configured for a " +
                                std::to_string(config_.addr_bits) + "-bit PADDR, bus '" + bus.basename() + "' has " +
                                std::to_string(bus.addr_bits()));
  addr_bits_ = bus.addr_bits();
  presetn(bus.presetn);
  psel(bus.psel);
  penable(bus.penable);
  pwrite(bus.pwrite);
  paddr(bus.paddr);
  pwdata(bus.pwdata);
  pstrb(bus.pstrb);
  pprot(bus.pprot);
  pready(bus.pready);
  prdata(bus.prdata);
  pslverr(bus.pslverr);
}

tlm::tlm_response_status TlmToApb::plan(const tlm::tlm_generic_payload& trans, Request& request) const {
  const unsigned length = trans.get_data_length();
  const unsigned width = trans.get_streaming_width();
  if (trans.get_data_ptr() == nullptr) return tlm::TLM_GENERIC_ERROR_RESPONSE;
  if (length == 0 || width == 0) return tlm::TLM_BURST_ERROR_RESPONSE;
  const unsigned char* be = trans.get_byte_enable_ptr();
  const unsigned be_length = trans.get_byte_enable_length();
  if (be != nullptr && be_length == 0) return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;

  // The bytes the transaction addresses are [address, address + min(length, width)); all must fit in PADDR.
  const sc_dt::uint64 address = trans.get_address();
  const std::uint64_t span = width < length ? width : length;
  const std::uint64_t last = max_address(addr_bits_);
  if (address > last || span - 1 > last - address) return tlm::TLM_ADDRESS_ERROR_RESPONSE;

  request.write = trans.is_write();
  request.data = trans.get_data_ptr();
  request.prot = pprot_of(trans);
  Beat* beat = nullptr;
  for (unsigned i = 0; i < length; ++i) {
    if (be != nullptr) {
      const unsigned char e = be[i % be_length];  // byte enables repeat modulo their length (TLM-2.0)
      if (e == TLM_BYTE_DISABLED) continue;
      if (e != TLM_BYTE_ENABLED) return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
    }
    const std::uint64_t byte = address + i % width;  // a streaming transaction revisits its window
    const auto word = static_cast<std::uint32_t>(byte & ~std::uint64_t{kDataBytes - 1});
    const unsigned lane = static_cast<unsigned>(byte % kDataBytes);
    // A new transfer when the word changes or the lane is taken (the stream came round to the same word).
    if (beat == nullptr || beat->addr != word || (beat->lanes & (1u << lane)) != 0) {
      request.beats.emplace_back();
      beat = &request.beats.back();
      beat->addr = word;
    }
    beat->lanes |= 1u << lane;
    beat->index[lane] = i;
    if (request.write) beat->wdata |= std::uint32_t{request.data[i]} << (kLaneBits * lane);
  }
  return tlm::TLM_OK_RESPONSE;
}

void TlmToApb::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  // The bridge waits for the pins: only a thread can. A method or a call outside the simulation gets an error
  // status instead of the kernel's error on wait().
  const sc_core::sc_process_handle caller = sc_core::sc_get_current_process_handle();
  if (!sc_core::sc_is_running() || !caller.valid() || caller.proc_kind() != sc_core::SC_THREAD_PROC_) {
    SC_REPORT_WARNING(kNotAThread, "b_transport needs a calling SC_THREAD (it waits for the APB pins)");
    ++stats_.rejected;
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  if (trans.get_command() == tlm::TLM_IGNORE_COMMAND) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  Request request;
  const tlm::tlm_response_status verdict = plan(trans, request);
  if (verdict != tlm::TLM_OK_RESPONSE) {
    ++stats_.rejected;
    trans.set_response_status(verdict);
    return;
  }
  if (request.beats.empty()) {  // every byte disabled: nothing to transfer
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  // The transfer starts at the caller's local time: consume its delay first (a blocking target's duty).
  if (delay > sc_core::SC_ZERO_TIME) {
    sc_core::wait(delay);
    delay = sc_core::SC_ZERO_TIME;
  }
  ++stats_.transactions;
  request.posted = sc_core::sc_time_stamp();
  queue_.push_back(&request);
  posted_.notify(sc_core::SC_ZERO_TIME);
  sc_core::wait(request.done);
  trans.set_response_status(request.status);
}

void TlmToApb::drive_idle() {
  psel.write(false);
  penable.write(false);
}

void TlmToApb::finish(Request& request, tlm::tlm_response_status status) {
  request.status = status;
  request.done.notify();  // the caller resumes at this edge; `request` lives on its stack
}

void TlmToApb::run() {
  drive_idle();
  for (;;) {
    while (queue_.empty()) sc_core::wait(posted_);
    // Requests start on the first rising edge strictly after they were posted: a request posted at an edge's
    // time waits for the next one, whatever the delta order of the caller and the clock.
    const sc_core::sc_time posted = queue_.front()->posted;
    do sc_core::wait(pclk.posedge_event());
    while (sc_core::sc_time_stamp() <= posted);
    serve();
  }
}

void TlmToApb::serve() {
  for (;;) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (!presetn.read()) {
      // No transfer starts in reset; requests waiting for this edge fail.
      while (!queue_.empty() && queue_.front()->posted < now) {
        Request* r = queue_.front();
        queue_.pop_front();
        ++stats_.reset_aborts;
        finish(*r, tlm::TLM_GENERIC_ERROR_RESPONSE);
      }
      drive_idle();
      return;
    }
    if (queue_.empty() || !(queue_.front()->posted < now)) {
      drive_idle();
      return;
    }
    Request* r = queue_.front();
    queue_.pop_front();
    execute(*r);  // returns at the completion edge, where the next setup may start
  }
}

void TlmToApb::execute(Request& request) {
  for (const Beat& beat : request.beats) {
    // SETUP: PSEL with the address, direction, data, strobes and protection, held until the transfer completes.
    psel.write(true);
    penable.write(false);
    pwrite.write(request.write);
    paddr.write(beat.addr);
    pwdata.write(request.write ? beat.wdata : 0u);
    pstrb.write(request.write ? beat.lanes : 0u);  // APB4: PSTRB low on reads
    pprot.write(request.prot);
    sc_core::wait(pclk.posedge_event());
    if (!presetn.read()) {
      ++stats_.reset_aborts;
      drive_idle();
      finish(request, tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    // ACCESS: PENABLE, then one cycle per edge until PREADY is sampled high.
    penable.write(true);
    std::uint64_t waited = 0;
    for (;;) {
      sc_core::wait(pclk.posedge_event());
      if (!presetn.read()) {
        ++stats_.reset_aborts;
        drive_idle();
        finish(request, tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
      }
      if (pready.read()) break;
      ++waited;
      ++stats_.wait_cycles;
      if (config_.stall_warning_cycles != 0 && waited == config_.stall_warning_cycles)
        SC_REPORT_WARNING(kStall, (std::string(name()) + ": the transfer at PADDR " + hex(beat.addr) +
                                   " has waited " + std::to_string(waited) + " cycles for PREADY")
                                      .c_str());
    }
    ++stats_.transfers;
    if (pslverr.read()) {
      ++stats_.slave_errors;
      finish(request, config_.slverr_status);
      return;
    }
    if (!request.write) {
      const std::uint32_t word = prdata.read();
      for (unsigned lane = 0; lane < kDataBytes; ++lane)
        if ((beat.lanes & (1u << lane)) != 0)
          request.data[beat.index[lane]] = static_cast<unsigned char>(word >> (kLaneBits * lane));
    }
  }
  finish(request, tlm::TLM_OK_RESPONSE);
}

}  // namespace pevp::apb
