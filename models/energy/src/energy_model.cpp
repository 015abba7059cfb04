#include "pevp/energy/energy_model.h"

namespace pevp::energy {

const char* name(MacKind kind) {
  switch (kind) {
    case MacKind::Fp32: return "fp32";
    case MacKind::Bf16: return "bf16";
    case MacKind::Fp8: return "fp8";
    case MacKind::Fp8DoubleRow: return "fp8_double_row";
    case MacKind::Mx: return "mx";
  }
  return "?";
}

const params::Params<EnergyConfig>& energy_parameters() {
  using E = EnergyConfig;
  constexpr auto kReal = params::Kind::Real;
  constexpr std::uint64_t kMax = kMaxPicojoules;
  static const params::Params<E> list = {
      {"mac_fp32_pj", "pJ", "Horowitz ISSCC 2014, 45 nm: fp32 multiply + fp32 add (D-ENERGY-MAC)", kReal, 0, kMax,
       &E::mac_fp32_pj},
      {"mac_bf16_pj", "pJ", "Horowitz ISSCC 2014, 45 nm: fp16 multiply + fp32 add (D-ENERGY-MAC)", kReal, 0, kMax,
       &E::mac_bf16_pj},
      {"mac_fp8_pj", "pJ", "Horowitz ISSCC 2014, 45 nm: 8-bit multiply + fp32 add (D-ENERGY-MAC)", kReal, 0, kMax,
       &E::mac_fp8_pj},
      {"mac_fp8_double_row_pj", "pJ", "Horowitz ISSCC 2014, 45 nm: two 8-bit multiplies, one fp32 add (D-ENERGY-MAC)",
       kReal, 0, kMax, &E::mac_fp8_double_row_pj},
      {"mac_mx_pj", "pJ", "Horowitz ISSCC 2014, 45 nm: four 8-bit multiplies, one fp32 add (D-ENERGY-MAC)", kReal, 0,
       kMax, &E::mac_mx_pj},
      {"sbuf_read_pj_per_byte", "pJ", "Horowitz ISSCC 2014, 45 nm: 32 KB SRAM, 64-bit read (D-ENERGY-SRAM)", kReal, 0,
       kMax, &E::sbuf_read_pj_per_byte},
      {"sbuf_write_pj_per_byte", "pJ", "as a read (D-ENERGY-SRAM)", kReal, 0, kMax, &E::sbuf_write_pj_per_byte},
      {"psum_pj_per_byte", "pJ", "Horowitz ISSCC 2014, 45 nm: 8 KB SRAM, 64-bit access (D-ENERGY-SRAM)", kReal, 0,
       kMax, &E::psum_pj_per_byte},
      {"hbm_pj_per_byte", "pJ", "O'Connor et al., MICRO 2017: HBM2 3.97 pJ/bit (D-ENERGY-HBM)", kReal, 0, kMax,
       &E::hbm_pj_per_byte},
      {"dma_pj_per_byte", "pJ", "model choice D-ENERGY-DMA (an 8 KB buffer's write and read)", kReal, 0, kMax,
       &E::dma_pj_per_byte},
      {"static_pj_per_pe_cycle", "pJ", "model choice D-ENERGY-STATIC (a tenth of a bf16 MAC)", kReal, 0, kMax,
       &E::static_pj_per_pe_cycle},
  };
  return list;
}

double mac_pj(const EnergyConfig& c, MacKind kind) {
  switch (kind) {
    case MacKind::Fp32: return c.mac_fp32_pj;
    case MacKind::Bf16: return c.mac_bf16_pj;
    case MacKind::Fp8: return c.mac_fp8_pj;
    case MacKind::Fp8DoubleRow: return c.mac_fp8_double_row_pj;
    case MacKind::Mx: return c.mac_mx_pj;
  }
  return 0;
}

double EnergyBreakdown::mac_total() const {
  double sum = 0;
  for (double m : mac) sum += m;
  return sum;
}

double EnergyBreakdown::total() const { return mac_total() + sbuf_read + sbuf_write + psum + hbm + dma + leakage; }

EnergyBreakdown estimate(const EnergyConfig& c, const EnergyCounts& n) {
  const auto times = [](std::uint64_t count, double pj) { return static_cast<double>(count) * pj; };
  EnergyBreakdown e;
  for (unsigned k = 0; k < kMacKinds; ++k) e.mac[k] = times(n.macs[k], mac_pj(c, static_cast<MacKind>(k)));
  e.sbuf_read = times(n.sbuf_read_bytes, c.sbuf_read_pj_per_byte);
  e.sbuf_write = times(n.sbuf_write_bytes, c.sbuf_write_pj_per_byte);
  e.psum = times(n.psum_bytes, c.psum_pj_per_byte);
  e.hbm = times(n.hbm_bytes, c.hbm_pj_per_byte);
  e.dma = times(n.dma_bytes, c.dma_pj_per_byte);
  e.leakage = static_cast<double>(n.cycles) * static_cast<double>(n.pes) * c.static_pj_per_pe_cycle;
  return e;
}

}  // namespace pevp::energy
