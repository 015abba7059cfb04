// The APB4 to TLM-2.0 bridge: APB slave pins in front of a TLM-2.0 initiator socket, so an RTL or testbench APB
// master (a Verilated testbench, a hand-written pin sequence) drives the VP's register files and any other target.
//
// At the rising edge that opens a transfer's access phase (the setup phase was sampled: PSEL high, PENABLE low)
// the bridge issues one b_transport: the command from PWRITE, the address as PADDR holds it (the target judges
// alignment), 4 bytes, byte enables from PSTRB on writes (none when every lane is written; APB4 reads have no
// strobes and read the whole word), and PPROT as the regfile::ApbProt extension. It drives PREADY low, then high
// at the first rising edge at or after the moment the target's response is ready -- its return plus its annotated
// delay, less `covered_delay` -- together with PRDATA and PSLVERR (any status but OK). The master samples them one
// cycle later: wait states = ceil((delay - covered_delay) / T_PCLK) for a target that does not block
// (docs/apb-bridges.md). Outside that completing cycle PREADY and PSLVERR are low and PRDATA is 0.
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "pevp/apb/apb_bus.h"

namespace pevp::apb {

struct ApbToTlmConfig {
  // The part of the target's annotated delay that the transfer's own setup and access phases stand for; the rest
  // becomes wait states. A register file whose annotated access time models the APB transfer itself (the VP's,
  // 20 ns = 2 PCLK cycles at 100 MHz) is covered by 20 ns and answers with no wait states, as the generated RTL.
  sc_core::sc_time covered_delay = sc_core::SC_ZERO_TIME;
};

class ApbToTlm : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<ApbToTlm> socket;

  sc_core::sc_in<bool> pclk;
  sc_core::sc_in<bool> presetn;
  sc_core::sc_in<bool> psel;
  sc_core::sc_in<bool> penable;
  sc_core::sc_in<bool> pwrite;
  sc_core::sc_in<std::uint32_t> paddr;
  sc_core::sc_in<std::uint32_t> pwdata;
  sc_core::sc_in<std::uint32_t> pstrb;
  sc_core::sc_in<std::uint32_t> pprot;
  sc_core::sc_out<bool> pready;
  sc_core::sc_out<std::uint32_t> prdata;
  sc_core::sc_out<bool> pslverr;

  explicit ApbToTlm(sc_core::sc_module_name name, ApbToTlmConfig config = {});
  ApbToTlm(const ApbToTlm&) = delete;
  ApbToTlm& operator=(const ApbToTlm&) = delete;

  // Binds every pin but PCLK to `bus` (the slave's side).
  void connect(ApbBus& bus);

  struct Stats {
    std::uint64_t transfers = 0;      // transfers answered (PREADY driven high)
    std::uint64_t wait_cycles = 0;    // wait states inserted
    std::uint64_t errors = 0;         // answered with PSLVERR
    std::uint64_t reset_aborts = 0;   // transfers whose answer PRESETn cancelled
  };
  const Stats& stats() const { return stats_; }

 private:
  void run();
  void transfer();  // from the access phase's first edge to the edge that drives PREADY high
  void drive_idle();
  void abort_on_reset();

  ApbToTlmConfig config_;
  bool completing_ = false;  // PREADY is high this cycle
  Stats stats_;
};

}  // namespace pevp::apb
