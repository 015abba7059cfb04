// The TLM-2.0 to APB4 bridge: a loosely timed target socket in front of APB master pins, so a VP initiator (the
// driver, the SEQ's CSR view) reaches an APB slave at the pin level -- a Verilated register file or any RTL block.
//
// One transaction becomes one APB transfer per 4-byte word it touches, in ascending byte order and back to back:
// a word's enabled bytes are its PSTRB lanes on a write; a read reads the whole word (APB4 has no read strobes) and
// copies back only the enabled bytes; a word with no enabled byte is not transferred. PPROT comes from the
// regfile::ApbProt extension, PSLVERR ends the transaction with `slverr_status` (the words before it were
// transferred). Whatever the pins cannot carry is answered before any pin moves and before any time passes:
// an address beyond PADDR's width, byte enables other than 0x00/0xFF, a zero length or streaming width, no data.
//
// Timing (docs/apb-bridges.md): b_transport must be called from an SC_THREAD. It first waits out the caller's
// annotated delay (so the transfer starts at the caller's local time) and sets it to zero, then blocks while the
// bridge's own thread drives the pins: the first transfer's setup phase starts at the first rising PCLK edge
// strictly after that time, each transfer lasts 2 + (wait states) cycles, and the call returns at the rising edge
// where the last transfer completed. The caller's clock is then simulated time, with nothing left to annotate.
#pragma once

#include <cstdint>
#include <deque>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "pevp/apb/apb_bus.h"

namespace pevp::apb {

struct TlmToApbConfig {
  // PADDR's width; 0 takes the width of the ApbBus connect() binds to (32 when the pins are bound one by one).
  unsigned addr_bits = 0;
  // The response of a transaction one of whose transfers ended with PSLVERR. APB does not say why a slave
  // failed, hence the generic error; a system that knows its slave answers only address errors can say so.
  tlm::tlm_response_status slverr_status = tlm::TLM_GENERIC_ERROR_RESPONSE;
  // A warning (/pevp/apb/tlm_to_apb/stall) when a transfer has waited this many cycles for PREADY; 0: never. The
  // bridge keeps waiting: APB has no way to abandon a transfer.
  std::uint64_t stall_warning_cycles = 1024;
};

class TlmToApb : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<TlmToApb> socket;

  sc_core::sc_in<bool> pclk;
  sc_core::sc_in<bool> presetn;
  sc_core::sc_out<bool> psel;
  sc_core::sc_out<bool> penable;
  sc_core::sc_out<bool> pwrite;
  sc_core::sc_out<std::uint32_t> paddr;
  sc_core::sc_out<std::uint32_t> pwdata;
  sc_core::sc_out<std::uint32_t> pstrb;
  sc_core::sc_out<std::uint32_t> pprot;
  sc_core::sc_in<bool> pready;
  sc_core::sc_in<std::uint32_t> prdata;
  sc_core::sc_in<bool> pslverr;

  // Throws std::invalid_argument for an address width outside 0..32.
  explicit TlmToApb(sc_core::sc_module_name name, TlmToApbConfig config = {});
  TlmToApb(const TlmToApb&) = delete;
  TlmToApb& operator=(const TlmToApb&) = delete;

  // Binds every pin but PCLK to `bus` (the master's side) and takes its address width when none was configured;
  // throws std::invalid_argument when a configured width differs from the bus's.
  void connect(ApbBus& bus);

  unsigned addr_bits() const { return addr_bits_; }

  struct Stats {
    std::uint64_t transactions = 0;   // b_transport calls that reached the pins
    std::uint64_t transfers = 0;      // completed APB transfers
    std::uint64_t wait_cycles = 0;    // cycles PREADY was sampled low in an access phase
    std::uint64_t slave_errors = 0;   // transfers completed with PSLVERR
    std::uint64_t rejected = 0;       // transactions answered without touching the pins
    std::uint64_t reset_aborts = 0;   // transactions ended by PRESETn
  };
  const Stats& stats() const { return stats_; }

 private:
  // One APB transfer: a word address, the lanes it carries and, per lane, the payload byte it moves.
  struct Beat {
    std::uint32_t addr = 0;
    std::uint32_t lanes = 0;  // bit i: lane i enabled
    std::uint32_t wdata = 0;
    unsigned index[kDataBytes] = {};
  };
  struct Request {
    bool write = false;
    std::uint32_t prot = 0;
    unsigned char* data = nullptr;
    std::vector<Beat> beats;
    sc_core::sc_time posted;
    sc_core::sc_event done;
    tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
  };

  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // The payload's shape as APB transfers, or the status that rejects it.
  tlm::tlm_response_status plan(const tlm::tlm_generic_payload& trans, Request& request) const;
  void run();                   // the master's thread
  void serve();                 // at a rising edge: start every request posted before it, back to back
  void execute(Request& request);  // from its first setup edge to its completion edge
  void drive_idle();
  void finish(Request& request, tlm::tlm_response_status status);

  TlmToApbConfig config_;
  unsigned addr_bits_ = kMaxAddrBits;
  std::deque<Request*> queue_;
  sc_core::sc_event posted_;
  Stats stats_;
};

}  // namespace pevp::apb
