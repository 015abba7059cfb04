#include "pevp/apb/apb_bus.h"

#include <cstdio>
#include <stdexcept>

namespace pevp::apb {

std::uint32_t pprot_of(const tlm::tlm_generic_payload& trans) {
  const regfile::ApbProt* prot = trans.get_extension<regfile::ApbProt>();
  const regfile::ApbProt none;  // the extension's defaults are the meaning of its absence
  const regfile::ApbProt& p = prot != nullptr ? *prot : none;
  return (p.privileged ? pprot::kPrivileged : 0u) | (p.nonsecure ? pprot::kNonsecure : 0u) |
         (p.instruction ? pprot::kInstruction : 0u);
}

regfile::ApbProt apb_prot_of(std::uint32_t pprot) {
  regfile::ApbProt p;
  p.privileged = (pprot & pprot::kPrivileged) != 0;
  p.nonsecure = (pprot & pprot::kNonsecure) != 0;
  p.instruction = (pprot & pprot::kInstruction) != 0;
  return p;
}

void check_addr_bits(unsigned addr_bits, const std::string& who) {
  if (addr_bits < 1 || addr_bits > kMaxAddrBits)
    throw std::invalid_argument(who + ": PADDR width " + std::to_string(addr_bits) + " bits is outside 1.." +
                                std::to_string(kMaxAddrBits) + " (the APB specification's range)");
}

std::uint64_t max_address(unsigned addr_bits) { return (std::uint64_t{1} << addr_bits) - 1; }

std::string to_string(const ApbPins& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "PRESETn=%d PSEL=%d PENABLE=%d PWRITE=%d PADDR=0x%x PWDATA=0x%08x PSTRB=0x%x PPROT=0x%x PREADY=%d "
                "PRDATA=0x%08x PSLVERR=%d",
                p.presetn, p.psel, p.penable, p.pwrite, p.paddr, p.pwdata, p.pstrb, p.pprot, p.pready, p.prdata,
                p.pslverr);
  return buf;
}

ApbBus::ApbBus(sc_core::sc_module_name name, ApbBusConfig config)
    : sc_core::sc_module(name),
      presetn("PRESETn", true),
      psel("PSEL"),
      penable("PENABLE"),
      pwrite("PWRITE"),
      paddr("PADDR"),
      pwdata("PWDATA"),
      pstrb("PSTRB"),
      pprot("PPROT"),
      pready("PREADY"),
      prdata("PRDATA"),
      pslverr("PSLVERR"),
      config_(config) {
  check_addr_bits(config_.addr_bits, std::string("ApbBus '") + basename() + "'");
}

ApbPins ApbBus::sample() const {
  ApbPins p;
  p.presetn = presetn.read();
  p.psel = psel.read();
  p.penable = penable.read();
  p.pwrite = pwrite.read();
  p.paddr = paddr.read();
  p.pwdata = pwdata.read();
  p.pstrb = pstrb.read();
  p.pprot = pprot.read();
  p.pready = pready.read();
  p.prdata = prdata.read();
  p.pslverr = pslverr.read();
  return p;
}

}  // namespace pevp::apb
