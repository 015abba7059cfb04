#include "pevp/apb/apb_checker.h"

#include <cstdio>
#include <stdexcept>

namespace pevp::apb {

namespace {

constexpr const char* kViolation = "/pevp/apb/checker/violation";

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

}  // namespace

std::string_view rule_name(ApbRule rule) {
  switch (rule) {
    case ApbRule::ResetIdle: return "reset_idle";
    case ApbRule::EnableWithoutSelect: return "enable_without_select";
    case ApbRule::AccessWithoutSetup: return "access_without_setup";
    case ApbRule::SetupThenAccess: return "setup_then_access";
    case ApbRule::AccessHeldUntilReady: return "access_held_until_ready";
    case ApbRule::EnableLowAfterTransfer: return "enable_low_after_transfer";
    case ApbRule::AddrStable: return "paddr_stable";
    case ApbRule::WriteStable: return "pwrite_stable";
    case ApbRule::WdataStable: return "pwdata_stable";
    case ApbRule::StrbStable: return "pstrb_stable";
    case ApbRule::ProtStable: return "pprot_stable";
    case ApbRule::StrbLowOnRead: return "pstrb_low_on_read";
    case ApbRule::SlverrOnlyWhenReady: return "pslverr_only_when_ready";
    case ApbRule::AddrWidth: return "paddr_width";
  }
  return "unknown";
}

ApbChecker::ApbChecker(sc_core::sc_module_name name, ApbCheckerConfig config)
    : sc_core::sc_module(name),
      pclk("PCLK"),
      presetn("PRESETn"),
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
  if (config_.addr_bits != 0) {
    check_addr_bits(config_.addr_bits, std::string("ApbChecker '") + basename() + "'");
    addr_bits_ = config_.addr_bits;
  }
  SC_HAS_PROCESS(ApbChecker);
  SC_METHOD(sample);
  sensitive << pclk.pos();
  dont_initialize();
}

void ApbChecker::connect(ApbBus& bus) {
  if (config_.addr_bits != 0 && config_.addr_bits != bus.addr_bits())
    throw std::invalid_argument(std::string("ApbChecker '") + basename() + "': configured for a " +
                                std::to_string(config_.addr_bits) + "-bit PADDR, bus '" + bus.basename() + "' has " +
                                std::to_string(bus.addr_bits()));
  addr_bits_ = bus.addr_bits();
  presetn(bus.presetn);
  psel(bus.psel);
  penable(bus.penable);
  pwrite(bus.pwrite);
  paddr(bus.paddr);
  pwdata(bus.pwdata);
  pstrb(bus.pstrb);
  pprot(bus.pprot);
  pready(bus.pready);
  prdata(bus.prdata);
  pslverr(bus.pslverr);
}

void ApbChecker::violate(ApbRule rule, const ApbPins& pins, std::string detail) {
  ApbViolation v;
  v.cycle = cycle_;
  v.time = sc_core::sc_time_stamp();
  v.rule = rule;
  v.pins = pins;
  v.detail = std::move(detail);
  ++counts_[static_cast<std::size_t>(rule)];
  if (config_.report)
    SC_REPORT_WARNING(kViolation, (std::string(name()) + ": cycle " + std::to_string(v.cycle) + " (" +
                                   v.time.to_string() + ") " + std::string(rule_name(rule)) + ": " + v.detail + " | " +
                                   to_string(pins))
                                      .c_str());
  violations_.push_back(std::move(v));
}

void ApbChecker::check_stable(const ApbPins& s) {
  const std::string since = " at the setup phase (cycle " + std::to_string(setup_cycle_) + ")";
  if (s.paddr != setup_.paddr)
    violate(ApbRule::AddrStable, s, "PADDR " + hex(s.paddr) + " in the transfer, " + hex(setup_.paddr) + since);
  if (s.pwrite != setup_.pwrite)
    violate(ApbRule::WriteStable, s,
            "PWRITE " + std::to_string(s.pwrite) + " in the transfer, " + std::to_string(setup_.pwrite) + since);
  if (setup_.pwrite && s.pwdata != setup_.pwdata)
    violate(ApbRule::WdataStable, s, "PWDATA " + hex(s.pwdata) + " in the transfer, " + hex(setup_.pwdata) + since);
  if (s.pstrb != setup_.pstrb)
    violate(ApbRule::StrbStable, s, "PSTRB " + hex(s.pstrb) + " in the transfer, " + hex(setup_.pstrb) + since);
  if (s.pprot != setup_.pprot)
    violate(ApbRule::ProtStable, s, "PPROT " + hex(s.pprot) + " in the transfer, " + hex(setup_.pprot) + since);
}

void ApbChecker::sample() {
  ++cycle_;
  ApbPins s;
  s.presetn = presetn.read();
  s.psel = psel.read();
  s.penable = penable.read();
  s.pwrite = pwrite.read();
  s.paddr = paddr.read();
  s.pwdata = pwdata.read();
  s.pstrb = pstrb.read();
  s.pprot = pprot.read();
  s.pready = pready.read();
  s.prdata = prdata.read();
  s.pslverr = pslverr.read();

  // Reset is synchronous for the units on the bus: the edge that first samples PRESETn low is where they go idle,
  // so the bus must be idle from the next sample on.
  if (!s.presetn) {
    if (in_reset_ && (s.psel || s.penable))
      violate(ApbRule::ResetIdle, s, "PSEL and PENABLE must be low in the cycles after PRESETn was sampled low");
    in_reset_ = true;
    phase_ = Phase::Idle;
    return;
  }
  in_reset_ = false;
  const bool setup = s.psel && !s.penable;
  const bool access = s.psel && s.penable;
  if (s.penable && !s.psel) violate(ApbRule::EnableWithoutSelect, s, "PENABLE high without PSEL");

  // The rules that depend on the previous cycle.
  switch (phase_) {
    case Phase::Idle:
      if (access) violate(ApbRule::AccessWithoutSetup, s, "PSEL and PENABLE rose together: no setup phase");
      break;
    case Phase::Completed:
      if (access)
        violate(ApbRule::EnableLowAfterTransfer, s,
                "PENABLE still high in the cycle after the transfer completed (cycle " + std::to_string(cycle_ - 1) +
                    ")");
      break;
    case Phase::Setup:
      if (!access)
        violate(ApbRule::SetupThenAccess, s,
                "the cycle after the setup phase (cycle " + std::to_string(setup_cycle_) +
                    ") must have PSEL and PENABLE high");
      else
        check_stable(s);
      break;
    case Phase::Waiting:
      if (!access)
        violate(ApbRule::AccessHeldUntilReady, s,
                "PSEL and PENABLE must stay high until PREADY (transfer set up at cycle " +
                    std::to_string(setup_cycle_) + ", " + std::to_string(waits_) + " wait states so far)");
      else
        check_stable(s);
      break;
  }
  if (config_.check_slverr_when_unsampled && s.pslverr && !(access && s.pready))
    violate(ApbRule::SlverrOnlyWhenReady, s, "PSLVERR high outside the completing cycle (PSEL & PENABLE & PREADY)");

  // A new transfer: its setup phase, or an access phase that broke the rules above and is followed as one so the
  // cycles after it are judged against it rather than reported again.
  const bool in_transfer = phase_ == Phase::Setup || phase_ == Phase::Waiting;
  if (setup || (access && !in_transfer)) {
    setup_ = s;
    setup_cycle_ = cycle_;
    waits_ = 0;
    if (!s.pwrite && s.pstrb != 0)
      violate(ApbRule::StrbLowOnRead, s, "PSTRB " + hex(s.pstrb) + " in a read transfer (must be 0)");
    if (addr_bits_ < kMaxAddrBits && (std::uint64_t{s.paddr} >> addr_bits_) != 0)
      violate(ApbRule::AddrWidth, s,
              "PADDR " + hex(s.paddr) + " has bits above the bus's " + std::to_string(addr_bits_) + "-bit width");
  }
  if (setup) {
    phase_ = Phase::Setup;
  } else if (access) {
    if (!s.pready) {
      ++waits_;
      phase_ = Phase::Waiting;
      return;
    }
    ++completed_;
    if (config_.record_transfers) {
      ApbTransfer t;
      t.setup_cycle = setup_cycle_;
      t.end_cycle = cycle_;
      t.end_time = sc_core::sc_time_stamp();
      t.write = setup_.pwrite;
      t.addr = setup_.paddr;
      t.wdata = setup_.pwrite ? setup_.pwdata : 0;
      t.strb = setup_.pstrb;
      t.prot = setup_.pprot;
      t.rdata = setup_.pwrite ? 0 : s.prdata;
      t.slverr = s.pslverr;
      t.wait_states = waits_;
      transfers_.push_back(t);
    }
    phase_ = Phase::Completed;
  } else {
    phase_ = Phase::Idle;
  }
}

std::string ApbChecker::report() const {
  std::string out;
  for (const ApbViolation& v : violations_)
    out += "cycle " + std::to_string(v.cycle) + " (" + v.time.to_string() + ") " + std::string(rule_name(v.rule)) +
           ": " + v.detail + " | " + to_string(v.pins) + "\n";
  return out;
}

void ApbChecker::clear() {
  violations_.clear();
  counts_.fill(0);
  transfers_.clear();
}

}  // namespace pevp::apb
