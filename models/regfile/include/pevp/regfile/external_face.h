// A register file of the arr_seq CSR block implemented outside the TLM register model -- the generated RTL behind
// an APB4 pin bridge (models/regfile_rtl, csrs.impl = rtl). ArrSeqCsrs maps the face's window onto target() and
// reads what the sequencer needs through value(); the counters and pulses are the hardware side's wires.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <tlm>

#include "pevp/regfile/register_file.h"

namespace pevp::regfile {

class ExternalFace {
 public:
  virtual ~ExternalFace() = default;

  // The bus side: what ArrSeqCsrs's router forwards the face's accesses to (window-relative addresses).
  virtual tlm::tlm_target_socket<>& target() = 0;

  // The stored value of register `reg` (RegFileDesc index), as the sequencer's wires see it now.
  virtual std::uint32_t value(std::size_t reg) const = 0;

  // The counters (by their RegisterFile::counter() handles): add, read, clear all of the face's.
  virtual void add_to_counter(const CounterRef& c, std::uint64_t n) = 0;
  virtual std::uint64_t read_counter(const CounterRef& c) const = 0;
  virtual void clear_counters() = 0;

  // `changed` runs when a stored field may have changed (a write reached the face); `pulse` when a PulseOnW
  // field fired, with its register and bits.
  virtual void on_change(std::function<void()> changed) = 0;
  virtual void on_pulse(std::function<void(std::size_t reg, std::uint32_t bits)> pulse) = 0;

  // Power-on state: every register at its reset value.
  virtual void reset() = 0;
};

// The faces ArrSeqCsrs takes from outside; nullptr = the TLM register model. The VP-defined vp_seq face is the
// SEQ's own state and always TLM.
struct ExternalFaces {
  ExternalFace* top = nullptr;
  ExternalFace* cluster = nullptr;
  ExternalFace* protect = nullptr;
  bool any() const { return top != nullptr || cluster != nullptr || protect != nullptr; }
};

}  // namespace pevp::regfile
