// The APB4 pins as SystemC signals (AMBA APB Protocol Specification, APB4: PSTRB and PPROT added to APB3's
// PREADY and PSLVERR), the one interface the platform's pin-level APB units meet on: the TLM-to-APB master bridge
// (tlm_to_apb.h), the APB-to-TLM slave bridge (apb_to_tlm.h), the protocol checker (apb_checker.h) and RTL (a
// Verilated register file or testbench). docs/apb-bridges.md describes the pins, the bridges and the checker.
//
// The signal types are the ones Verilator's SystemC output gives ports of those widths (a 1-bit port is `bool`, a
// 2..32-bit port `std::uint32_t`), so a Verilated block binds to an ApbBus without adaptors (D-APB-PIN-TYPES).
// PCLK is not part of the bundle: each unit has a `pclk` input bound to an sc_clock or to a clock port of its parent.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>

#include "pevp/regfile/apb_prot.h"

namespace pevp::apb {

// PWDATA and PRDATA carry one 32-bit word: four byte lanes, lane i = the byte at word address + i.
inline constexpr unsigned kDataBytes = 4;
inline constexpr unsigned kLaneBits = 8;
inline constexpr std::uint32_t kAllLanes = (1u << kDataBytes) - 1;  // PSTRB with every lane written
// The APB specification allows PADDR up to 32 bits wide.
inline constexpr unsigned kMaxAddrBits = 32;

// PPROT[2:0] (APB4 "Protection unit support").
namespace pprot {
inline constexpr std::uint32_t kPrivileged = 1u << 0;   // PPROT[0]: 1 = privileged
inline constexpr std::uint32_t kNonsecure = 1u << 1;    // PPROT[1]: 1 = non-secure
inline constexpr std::uint32_t kInstruction = 1u << 2;  // PPROT[2]: 1 = instruction, 0 = data
inline constexpr std::uint32_t kMask = kPrivileged | kNonsecure | kInstruction;
}  // namespace pprot

// The VP marks a transaction's protection with the regfile::ApbProt extension; a transaction without it is an
// unprivileged, non-secure data access (PPROT = 0b010).
std::uint32_t pprot_of(const tlm::tlm_generic_payload& trans);
regfile::ApbProt apb_prot_of(std::uint32_t pprot);

// Throws std::invalid_argument naming `who` unless 1 <= addr_bits <= 32.
void check_addr_bits(unsigned addr_bits, const std::string& who);
// The highest byte address a PADDR of `addr_bits` bits reaches.
std::uint64_t max_address(unsigned addr_bits);

// One sample of every pin but PCLK, as the checker records it.
struct ApbPins {
  bool presetn = true;
  bool psel = false;
  bool penable = false;
  bool pwrite = false;
  std::uint32_t paddr = 0;
  std::uint32_t pwdata = 0;
  std::uint32_t pstrb = 0;
  std::uint32_t pprot = 0;
  bool pready = false;
  std::uint32_t prdata = 0;
  bool pslverr = false;
};
// "PRESETn=1 PSEL=1 PENABLE=0 PWRITE=1 PADDR=0x10 PWDATA=0x... PSTRB=0xf PPROT=0x2 PREADY=0 PRDATA=0x0 PSLVERR=0"
std::string to_string(const ApbPins& pins);

struct ApbBusConfig {
  unsigned addr_bits = kMaxAddrBits;  // PADDR's width, 1..32
};

// The signals of one APB4 bus. Every signal starts at 0 except PRESETn, which starts released (1): a bench that
// models reset drives it low itself.
class ApbBus : public sc_core::sc_module {
 public:
  sc_core::sc_signal<bool> presetn;
  // Driven by the master (the requester).
  sc_core::sc_signal<bool> psel;
  sc_core::sc_signal<bool> penable;
  sc_core::sc_signal<bool> pwrite;
  sc_core::sc_signal<std::uint32_t> paddr;
  sc_core::sc_signal<std::uint32_t> pwdata;
  sc_core::sc_signal<std::uint32_t> pstrb;
  sc_core::sc_signal<std::uint32_t> pprot;
  // Driven by the slave (the completer).
  sc_core::sc_signal<bool> pready;
  sc_core::sc_signal<std::uint32_t> prdata;
  sc_core::sc_signal<bool> pslverr;

  // Throws std::invalid_argument for an address width outside 1..32.
  explicit ApbBus(sc_core::sc_module_name name, ApbBusConfig config = {});
  ApbBus(const ApbBus&) = delete;
  ApbBus& operator=(const ApbBus&) = delete;

  unsigned addr_bits() const { return config_.addr_bits; }
  ApbPins sample() const;

 private:
  ApbBusConfig config_;
};

}  // namespace pevp::apb
