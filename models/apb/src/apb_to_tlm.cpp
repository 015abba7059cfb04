#include "pevp/apb/apb_to_tlm.h"

#include <array>

namespace pevp::apb {

ApbToTlm::ApbToTlm(sc_core::sc_module_name name, ApbToTlmConfig config)
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
  SC_HAS_PROCESS(ApbToTlm);
  SC_THREAD(run);
  sensitive << pclk.pos();
}

void ApbToTlm::connect(ApbBus& bus) {
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

void ApbToTlm::drive_idle() {
  pready.write(false);
  pslverr.write(false);
  prdata.write(0);
  completing_ = false;
}

void ApbToTlm::run() {
  drive_idle();
  for (;;) {
    sc_core::wait();  // a rising PCLK edge: the pins read as they were during the cycle before it
    if (!presetn.read()) {
      drive_idle();
      continue;
    }
    // The master sampled the completing cycle at this edge.
    if (completing_) drive_idle();
    if (psel.read() && !penable.read()) transfer();
  }
}

void ApbToTlm::abort_on_reset() {
  ++stats_.reset_aborts;
  drive_idle();
}

void ApbToTlm::transfer() {
  const sc_core::sc_time access = sc_core::sc_time_stamp();
  const bool write = pwrite.read();
  const std::uint32_t wdata = pwdata.read();
  const std::uint32_t strb = pstrb.read() & kAllLanes;

  std::array<unsigned char, kDataBytes> data{};
  std::array<unsigned char, kDataBytes> enables{};
  for (unsigned lane = 0; lane < kDataBytes; ++lane) {
    if (write) data[lane] = static_cast<unsigned char>(wdata >> (kLaneBits * lane));
    enables[lane] = (strb & (1u << lane)) != 0 ? TLM_BYTE_ENABLED : TLM_BYTE_DISABLED;
  }
  tlm::tlm_generic_payload trans;
  trans.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  trans.set_address(paddr.read());
  trans.set_data_ptr(data.data());
  trans.set_data_length(kDataBytes);
  trans.set_streaming_width(kDataBytes);
  if (write && strb != kAllLanes) {
    trans.set_byte_enable_ptr(enables.data());
    trans.set_byte_enable_length(kDataBytes);
  }
  regfile::ApbProt prot = apb_prot_of(pprot.read());
  trans.set_extension(&prot);
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);

  // PREADY low from this edge until the answer is ready (written before the call: a target that blocks keeps the
  // master waiting; one that returns at once has the write below replace this one).
  pready.write(false);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(trans, delay);
  trans.clear_extension(&prot);  // the payload must not delete a stack object
  const sc_core::sc_time returned = sc_core::sc_time_stamp();
  const sc_core::sc_time waits = delay > config_.covered_delay ? delay - config_.covered_delay : sc_core::SC_ZERO_TIME;
  const sc_core::sc_time ready = returned + waits;

  // Answer on a rising edge at or after `ready`: this one when the target neither blocked nor annotated more than
  // is covered. After a blocking call, the first edge strictly after its return (independent of delta order). The
  // master samples PREADY low at every edge passed here; a reset at one of them ends the transfer on the bus (the
  // target has seen it) and the answer is dropped.
  std::uint64_t waited = 0;
  auto next_edge = [&] {
    sc_core::wait();
    ++waited;
    return presetn.read();
  };
  if (returned != access) {
    do {
      if (!next_edge()) return abort_on_reset();
    } while (sc_core::sc_time_stamp() <= returned);
  }
  while (sc_core::sc_time_stamp() < ready)
    if (!next_edge()) return abort_on_reset();
  const bool ok = trans.get_response_status() == tlm::TLM_OK_RESPONSE;
  std::uint32_t rdata = 0;
  if (!write && ok)
    for (unsigned lane = 0; lane < kDataBytes; ++lane) rdata |= std::uint32_t{data[lane]} << (kLaneBits * lane);
  pready.write(true);
  pslverr.write(!ok);
  prdata.write(rdata);
  completing_ = true;
  ++stats_.transfers;
  stats_.wait_cycles += waited;
  if (!ok) ++stats_.errors;
}

}  // namespace pevp::apb
