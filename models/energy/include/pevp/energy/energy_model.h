// The energy of a run, estimated from what it did: every action the run counts -- a MAC of each kind, a byte read
// from or written to SBUF, a byte of PSUM traffic, a byte of device memory (HBM) and of DMA transfer, a PE-cycle of
// leakage -- times its price in picojoules (configuration keys energy.*, docs/energy.md). The prices are published
// per-operation energies at a named process node (Horowitz, ISSCC 2014, 45 nm; O'Connor et al., MICRO 2017 for HBM)
// combined as D-ENERGY-* say: a model for comparing configurations, never the product's own figures.
#pragma once

#include <array>
#include <cstdint>

#include "pevp/params/param.h"

namespace pevp::energy {

// The kinds of MAC the array prices apart: the input width sets the multiplier's energy; fp8 double_row and the MX
// modes share one accumulation between several products (D-ENERGY-MAC).
enum class MacKind : unsigned { Fp32, Bf16, Fp8, Fp8DoubleRow, Mx };
inline constexpr unsigned kMacKinds = 5;
const char* name(MacKind kind);  // "fp32", "bf16", "fp8", "fp8_double_row", "mx"

// Picojoules per action (section "energy"). Defaults: 45 nm figures (docs/energy.md derives each).
struct EnergyConfig {
  // One multiply-accumulate: the product at the input width plus an fp32 accumulation (Horowitz 2014: 32-bit FP
  // multiply 3.7 pJ, 16-bit FP multiply 1.1 pJ, 8-bit integer multiply 0.2 pJ, 32-bit FP add 0.9 pJ).
  double mac_fp32_pj = 4.6;            // 3.7 + 0.9
  double mac_bf16_pj = 2.0;            // 1.1 + 0.9 (bf16 and fp16 inputs)
  double mac_fp8_pj = 1.1;             // 0.2 + 0.9
  double mac_fp8_double_row_pj = 0.65;  // two products, one accumulation: (2 x 0.2 + 0.9) / 2
  double mac_mx_pj = 0.425;             // four products of an x4 word, one accumulation: (4 x 0.2 + 0.9) / 4
  // SRAM per byte (Horowitz 2014, a 64-bit access): SBUF from a 32 KB array's 20 pJ, PSUM from an 8 KB array's
  // 10 pJ; a write priced as a read (D-ENERGY-SRAM).
  double sbuf_read_pj_per_byte = 2.5;
  double sbuf_write_pj_per_byte = 2.5;
  double psum_pj_per_byte = 1.25;  // a read or a write
  // Device memory per byte read or written: HBM2's 3.97 pJ/bit (O'Connor et al., MICRO 2017).
  double hbm_pj_per_byte = 31.76;
  // A DMA engine's own work per byte it writes: staged through an 8 KB buffer, one write and one read (D-ENERGY-DMA).
  double dma_pj_per_byte = 2.5;
  // Leakage per PE per cycle of the run: a tenth of a bf16 MAC's dynamic energy (D-ENERGY-STATIC).
  double static_pj_per_pe_cycle = 0.2;
};

// What the configuration keys allow: 0 (an action left out) to 10^6 pJ.
inline constexpr std::uint64_t kMaxPicojoules = 1000000;

const params::Params<EnergyConfig>& energy_parameters();

// The actions of a run.
struct EnergyCounts {
  std::array<std::uint64_t, kMacKinds> macs{};  // by MacKind
  std::uint64_t sbuf_read_bytes = 0;   // the array's operand reads and the DMA engines' reads of SBUF
  std::uint64_t sbuf_write_bytes = 0;  // the DMA engines' writes into SBUF
  std::uint64_t psum_bytes = 0;        // the array's PSUM writes (and reads, when it accumulates), the DMA's
  std::uint64_t hbm_bytes = 0;         // device memory read and written
  std::uint64_t dma_bytes = 0;         // written by the DMA engines
  std::uint64_t cycles = 0;            // the run's engine cycles
  std::uint64_t pes = 0;               // PEs of the array (pe_rows x pe_cols)
};

// Picojoules by component.
struct EnergyBreakdown {
  std::array<double, kMacKinds> mac{};
  double sbuf_read = 0, sbuf_write = 0, psum = 0, hbm = 0, dma = 0, leakage = 0;
  double mac_total() const;
  double total() const;
};

EnergyBreakdown estimate(const EnergyConfig& config, const EnergyCounts& counts);

// The price of one MAC of `kind`.
double mac_pj(const EnergyConfig& config, MacKind kind);

}  // namespace pevp::energy
