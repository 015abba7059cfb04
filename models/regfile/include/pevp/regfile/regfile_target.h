// A register file as a TLM-2.0 target (APB semantics): 32-bit aligned single
// accesses, byte enables as PSTRB, every error a TLM response status with
// nothing changed. The transaction starts at TLM_INCOMPLETE_RESPONSE and is
// upgraded to OK only when the access succeeded.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "pevp/regfile/register_file.h"

namespace pevp::regfile {

struct RegFileTargetConfig {
  // Only transactions with ApbProt{privileged} are answered (the protected face).
  bool privileged_only = false;
  UnmappedPolicy unmapped = UnmappedPolicy::Error;
  // One APB access (setup + access phase): 2 PCLK cycles. Model choice: a 100 MHz
  // APB clock (docs/registers.md).
  sc_core::sc_time access_time = sc_core::sc_time(20, sc_core::SC_NS);
};

class RegFileTarget : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<RegFileTarget> socket;

  RegFileTarget(sc_core::sc_module_name name, const RegFileDesc& desc, RegFileTargetConfig config = {});

  RegisterFile& regs() { return regs_; }
  const RegisterFile& regs() const { return regs_; }
  const RegFileTargetConfig& config() const { return config_; }
  std::uint64_t rejected_unprivileged() const { return rejected_unprivileged_; }

  // The face's registers and counts, for a VP checkpoint (docs/checkpoint.md).
  struct State {
    RegisterFile::State regs;
    std::uint64_t rejected_unprivileged = 0;
  };
  State state() const { return {regs_.state(), rejected_unprivileged_}; }
  void restore(const State& s) {
    regs_.restore(s.regs);  // throws std::invalid_argument before changing anything
    rejected_unprivileged_ = s.rejected_unprivileged;
  }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  // The byte-enable mask of a 4-byte access, or false when the enables cannot
  // be honoured (a byte enable other than 0x00 / 0xFF, or a zero length).
  static bool byte_mask(const tlm::tlm_generic_payload& trans, std::uint32_t& mask);

  RegFileTargetConfig config_;
  RegisterFile regs_;
  std::uint64_t rejected_unprivileged_ = 0;
};

}  // namespace pevp::regfile
