// `pe-vp cosim-check`: the register files' TLM model (regfile::RegFileTarget around regfile::RegisterFile) and their
// generated RTL (regfile_rtl::RtlRegFile, Verilated) run side by side, clock edge by clock edge, on the same
// constrained-random APB4 traffic and hardware-side stimuli (RO inputs, counter increments and clears, PRESETn
// pulses); every read value, every PSLVERR, every PulseOnW pulse and the whole register state after every access
// are compared, and an apb::ApbChecker watches the bus. A mismatch is reported with its cycle, address, expected
// (TLM) and actual (RTL) values, and an FST waveform of the RTL around it is written by replaying the seed in a
// child process. docs/cosim-check.md.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "pevp/platform/regs.h"

namespace pevp::platform {

// Exit statuses of `pe-vp cosim-check` (docs/cosim-check.md).
inline constexpr int kCosimPass = 0;      // every comparison held, no protocol violation
inline constexpr int kCosimMismatch = 1;  // a mismatch or an APB protocol violation
inline constexpr int kCosimUsage = 2;     // bad arguments (unknown register file, --cycles 0, a bad --fst path)
inline constexpr int kCosimNoRtl = 77;    // this build has no Verilated RTL (Verilator was not found)

// What `pe-vp cosim-check --unit` checks: a register file's TLM model against its RTL (the default), or the PE
// array executor's C++ arithmetic against the Verilated PE tile (cosim_check_array.cpp, docs/cosim.md "The datapath
// in the loop").
inline constexpr const char* kUnitRegfile = "regfile";
inline constexpr const char* kUnitPeArray = "pe_array";

struct CosimCheckCommand {
  std::string unit{kUnitRegfile};        // regfile | pe_array
  std::string regfile{kDefaultRegfile};  // top | cluster | protected | vp
  std::uint64_t cycles = 100000;  // PCLK cycles (rising edges) to run, >= 1
  std::uint64_t seed = 1;
  std::string fst;  // the waveform written on a mismatch; "" = cosim-check-<regfile>-seed<S>.fst
  std::uint64_t window = 32;  // the waveform covers cycles [C - window, C + window] around the first mismatch C
  // Test only (hidden option --inject-mismatch): at this cycle one stored bit of the TLM model is flipped, so the
  // next state comparison must fail.
  std::optional<std::uint64_t> inject_cycle;
  std::size_t max_reported = 20;  // mismatch lines printed (all are counted)
  // --unit pe_array: random micro-ops to run (weight loads and matmuls), and the tile's variant -- "exact", or
  // "broken-rounding" (test only: its fp32 adder truncates, so the check must report a divergence). `window` then
  // counts micro-ops: the waveform covers the micro-ops [I - window, I + window] around the first divergent one I.
  std::uint64_t micro_ops = 10000;
  std::string rtl_variant = "exact";
  // --unit pe_array: the functional coverage of the ISA the micro-ops run exercised, written here (docs/coverage.md);
  // "" = none. The register-file check runs no instruction, so it refuses the option.
  std::string coverage_path;
  bool quiet = false;  // --quiet: the report only when a comparison fails (then the whole of it)
};

// What a run did and found.
struct CosimCheckResult {
  std::uint64_t cycles = 0;  // rising edges run (the run stops at the cycle of the first mismatch)
  std::uint64_t accesses = 0, reads = 0, writes = 0;
  std::uint64_t errors = 0;  // transfers answered with PSLVERR (both sides agreeing)
  // The traffic's address classes.
  std::uint64_t mapped = 0, last_word = 0, unaligned = 0, unmapped = 0;
  std::uint64_t partial_strobes = 0, zero_strobes = 0, privileged = 0;
  // Hardware-side stimuli.
  std::uint64_t ro_drives = 0, increments = 0, huge_increments = 0, wraps = 0, clears = 0, resets = 0;
  std::uint64_t pulses = 0;            // PulseOnW bits fired (both sides agreeing)
  std::uint64_t state_compares = 0;    // full-state comparisons
  std::uint64_t violations = 0;        // ApbChecker violations
  std::uint64_t mismatches = 0;
  std::optional<std::uint64_t> first_mismatch_cycle;
  std::vector<std::string> reports;  // the mismatch (and violation) lines
  std::string fst;                   // the waveform written, or ""
  double seconds = 0;                // wall time of the lock-step run
};

// What a --unit pe_array run did and found.
struct ArrayCosimResult {
  std::uint64_t micro_ops = 0;  // run (the run stops after the first divergent one)
  std::uint64_t weight_loads = 0, matmuls = 0, accumulating = 0, bf16 = 0, fp16 = 0, refused = 0;
  std::uint64_t psum_words = 0;       // PSUM words compared (every word of every matmul's output)
  std::uint64_t timing_compares = 0;  // completion times compared
  std::uint64_t mismatches = 0;       // PSUM words and completion times that differ
  std::optional<std::uint64_t> first_divergent;  // the micro-op
  std::vector<std::string> reports;
  std::string fst;
  std::uint64_t rtl_cycles = 0;  // the tile's clock at the end
  double seconds = 0;
};

// --unit pe_array (cosim_check_array.cpp): the C++ executor and the executor with the RTL tile as its datapath,
// micro-op by micro-op on the same random valid sequence; returns an exit status above.
int run_array_cosim_check(const CosimCheckCommand& cmd, std::ostream& out, std::ostream& err,
                          ArrayCosimResult* result = nullptr);

// Runs the check, prints the summary (and any mismatch) on `out`, argument errors on `err`; returns an exit status
// above. SystemC elaborates once per process: one call per process (the waveform replay forks before elaborating).
int run_cosim_check(const CosimCheckCommand& cmd, std::ostream& out, std::ostream& err,
                    CosimCheckResult* result = nullptr);

}  // namespace pevp::platform
