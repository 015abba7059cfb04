// A passive APB4 protocol checker: it samples every pin at each rising PCLK edge (the values of the cycle before
// the edge, as a slave sees them) and records each violation of the APB4 rules with its cycle, time, rule and pin
// values. It drives nothing, so it can watch any bus: the bridges' loopback, RTL, a hand-driven test sequence.
//
// The rules (ApbRule; docs/apb-bridges.md has the table with the specification's wording): IDLE -> SETUP -> ACCESS
// (PSEL for one cycle, then PENABLE), ACCESS held until PREADY, PENABLE low after the transfer completes, PADDR /
// PWRITE / PWDATA (writes) / PSTRB / PPROT stable from SETUP to the end of ACCESS, PSTRB low on reads, PSLVERR low
// unless PSEL & PENABLE & PREADY, PADDR within its width, and PSEL / PENABLE low from the cycle after the first
// edge that samples PRESETn low. APB's "no X or Z" rules have no meaning in two-state SystemC and are not checked.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <systemc>
#include <vector>

#include "pevp/apb/apb_bus.h"

namespace pevp::apb {

enum class ApbRule : std::uint8_t {
  ResetIdle,                // PSEL or PENABLE high in a cycle after PRESETn was sampled low
  EnableWithoutSelect,      // PENABLE high with PSEL low
  AccessWithoutSetup,       // an access phase (PSEL & PENABLE) straight from IDLE
  SetupThenAccess,          // the cycle after SETUP is not ACCESS (PENABLE stayed low, or PSEL fell)
  AccessHeldUntilReady,     // PSEL or PENABLE fell while PREADY was low
  EnableLowAfterTransfer,   // PENABLE still high in the cycle after a completed transfer
  AddrStable,               // PADDR changed between SETUP and the end of ACCESS
  WriteStable,              // PWRITE changed ...
  WdataStable,              // PWDATA changed ... (write transfers)
  StrbStable,               // PSTRB changed ...
  ProtStable,               // PPROT changed ...
  StrbLowOnRead,            // PSTRB not zero in a read transfer
  SlverrOnlyWhenReady,      // PSLVERR high outside PSEL & PENABLE & PREADY
  AddrWidth,                // PADDR has bits above the bus's address width
};
inline constexpr std::size_t kApbRuleCount = static_cast<std::size_t>(ApbRule::AddrWidth) + 1;

// "setup_then_access", ...: the names in violation records and messages.
std::string_view rule_name(ApbRule rule);

struct ApbViolation {
  std::uint64_t cycle = 0;  // the rising edge's number, 1 = the first edge the checker saw
  sc_core::sc_time time;
  ApbRule rule = ApbRule::ResetIdle;
  ApbPins pins;        // the sample that broke the rule
  std::string detail;  // what was expected, with the values involved
};

// A completed transfer as the checker saw it (PSEL & PENABLE & PREADY).
struct ApbTransfer {
  std::uint64_t setup_cycle = 0;  // the edge that sampled the setup phase
  std::uint64_t end_cycle = 0;    // the edge that sampled PREADY high
  sc_core::sc_time end_time;
  bool write = false;
  std::uint32_t addr = 0;
  std::uint32_t wdata = 0;
  std::uint32_t strb = 0;
  std::uint32_t prot = 0;
  std::uint32_t rdata = 0;
  bool slverr = false;
  std::uint64_t wait_states = 0;  // access-phase cycles with PREADY low
};

struct ApbCheckerConfig {
  // PADDR's width; 0 takes the width of the ApbBus connect() binds to (32 when the pins are bound one by one).
  unsigned addr_bits = 0;
  // The APB4 specification recommends, without requiring, PSLVERR low when it is not sampled.
  bool check_slverr_when_unsampled = true;
  // Each violation is also a warning (/pevp/apb/checker/violation).
  bool report = true;
  // Keep every completed transfer in transfers() (a long run may want only the counts).
  bool record_transfers = true;
};

class ApbChecker : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> pclk;
  sc_core::sc_in<bool> presetn;
  sc_core::sc_in<bool> psel;
  sc_core::sc_in<bool> penable;
  sc_core::sc_in<bool> pwrite;
  sc_core::sc_in<std::uint32_t> paddr;
  sc_core::sc_in<std::uint32_t> pwdata;
  sc_core::sc_in<std::uint32_t> pstrb;
  sc_core::sc_in<std::uint32_t> pprot;
  sc_core::sc_in<bool> pready;
  sc_core::sc_in<std::uint32_t> prdata;
  sc_core::sc_in<bool> pslverr;

  // Throws std::invalid_argument for an address width outside 0..32.
  explicit ApbChecker(sc_core::sc_module_name name, ApbCheckerConfig config = {});
  ApbChecker(const ApbChecker&) = delete;
  ApbChecker& operator=(const ApbChecker&) = delete;

  // Binds every pin but PCLK to `bus` and takes its address width when none was configured; throws
  // std::invalid_argument when a configured width differs from the bus's.
  void connect(ApbBus& bus);

  const std::vector<ApbViolation>& violations() const { return violations_; }
  std::size_t count(ApbRule rule) const { return counts_[static_cast<std::size_t>(rule)]; }
  // One line per violation: "cycle 7 (70 ns) setup_then_access: ... | PRESETn=1 PSEL=1 ...".
  std::string report() const;
  const std::vector<ApbTransfer>& transfers() const { return transfers_; }
  std::uint64_t completed_transfers() const { return completed_; }
  std::uint64_t cycles() const { return cycle_; }
  // Forgets the violations and the recorded transfers; the bus state it tracks is kept.
  void clear();

 private:
  enum class Phase : std::uint8_t { Idle, Setup, Waiting, Completed };

  void sample();
  void violate(ApbRule rule, const ApbPins& pins, std::string detail);
  void check_stable(const ApbPins& pins);

  ApbCheckerConfig config_;
  unsigned addr_bits_ = kMaxAddrBits;
  Phase phase_ = Phase::Idle;
  bool in_reset_ = false;  // the previous sample had PRESETn low
  ApbPins setup_;  // the transfer's setup sample, what ACCESS must keep
  std::uint64_t setup_cycle_ = 0;
  std::uint64_t waits_ = 0;
  std::uint64_t cycle_ = 0;
  std::uint64_t completed_ = 0;
  std::vector<ApbViolation> violations_;
  std::array<std::size_t, kApbRuleCount> counts_{};
  std::vector<ApbTransfer> transfers_;
};

}  // namespace pevp::apb
