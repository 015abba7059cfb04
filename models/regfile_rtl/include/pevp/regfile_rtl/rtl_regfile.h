// The generated register-file RTL in the model: each of the four register files' Verilog (scripts/regfile_gen.py),
// Verilated with --sc, on an APB4 bus (pevp::apb::ApbBus) and read back in the register-file model's own terms --
// register indices of its RegFileDesc, field indices of its definitions, counters by their _lsb / _msb registers.
// The platform puts these behind TlmToApb when csrs.impl = rtl, and `pe-vp cosim-check` runs one beside the TLM
// model (docs/cosim.md). Present only when CMake found Verilator (PEVP_HAVE_RTL); rtl_available() says so at run
// time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <systemc>
#include <vector>

#include "pevp/apb/apb_bus.h"
#include "pevp/regfile/desc.h"

namespace pevp::regfile_rtl {

// The four register files, by the names `cosim-check --regfile` takes.
enum class Face : std::uint8_t { Top, Cluster, Protected, Vp };
inline constexpr Face kFaces[] = {Face::Top, Face::Cluster, Face::Protected, Face::Vp};
std::string_view face_name(Face f);  // "top", "cluster", "protected", "vp"
// Throws std::invalid_argument listing the names for anything else.
Face parse_face(std::string_view name);
const regfile::RegFileDesc& face_desc(Face f);

// True when this build has the Verilated register files.
bool rtl_available();

// A counter of a register file: its _lsb and _msb register indices.
struct CounterRegs {
  std::uint32_t lsb = 0;
  std::uint32_t msb = 0;
};

struct RtlRegFileConfig {
  // Only PPROT[0] = 1 transfers are answered (the protected face; Verilog parameter PRIVILEGED_ONLY). The RTL is
  // Verilated once per face with the value the platform uses: the protected face privileged-only, the others not;
  // asking for anything else is an error.
  bool privileged_only = false;
};

// One Verilated register file bound to an APB bus and a clock.
class RtlRegFile : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> pclk;

  ~RtlRegFile() override = default;

  Face face() const { return face_; }
  const regfile::RegFileDesc& desc() const { return face_desc(face_); }

  // What the RTL stores for register `reg` (RW flops, RO inputs as driven, counter halves; PulseOnW bits 0).
  virtual std::uint32_t value(std::size_t reg) const = 0;
  // The PulseOnW outputs of register `reg`, in their bit positions (high for the one cycle after the write).
  virtual std::uint32_t pulses(std::size_t reg) const = 0;
  // Drives a plain RO field's input; false when (reg, field) is not one.
  virtual bool drive_ro(std::size_t reg, std::size_t field, std::uint32_t value) = 0;
  // The counters: their registers, and their inputs (increment added at every clock edge while held; clear).
  virtual const std::vector<CounterRegs>& counters() const = 0;
  virtual void increment(std::size_t counter, std::uint32_t n) = 0;
  virtual std::uint64_t count(std::size_t counter) const = 0;
  virtual void clear_counters(bool on) = 0;
  // The counter inputs as the RTL samples them now (a caller that drives them learns what an edge consumed).
  virtual std::uint32_t increment_input(std::size_t counter) const = 0;
  virtual bool clear_input() const = 0;
  // The value-changed events of every RW and PulseOnW output, and the registers that have PulseOnW fields.
  virtual std::vector<const sc_core::sc_event*> output_events() const = 0;
  virtual const std::vector<std::size_t>& pulse_registers() const = 0;

  // FST waveforms of this RTL (every signal of the Verilated model), from now until trace_close(). Throws
  // std::runtime_error when the file cannot be opened.
  virtual void trace_open(const std::string& path) = 0;
  virtual void trace_close() = 0;

 protected:
  RtlRegFile(sc_core::sc_module_name name, Face face) : sc_core::sc_module(name), pclk("pclk"), face_(face) {}

 private:
  Face face_;
};

// A Verilated `face` bound to `bus` (every APB pin; its addr_bits must be the file's AddrWidth). Throws
// std::runtime_error when this build has no RTL, std::invalid_argument for a configuration the Verilated
// model was not built for.
std::unique_ptr<RtlRegFile> make_rtl_regfile(sc_core::sc_module_name name, Face face, apb::ApbBus& bus,
                                             RtlRegFileConfig config = {});

}  // namespace pevp::regfile_rtl
