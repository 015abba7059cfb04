// `pe-vp cosim-check`: the TLM register file and its Verilated RTL in lock-step on one APB4 bus (docs/cosim-check.md).
//
// One SC_THREAD, woken at every rising PCLK edge, is the whole bench: it is the APB master (it drives the pins the
// RTL and the ApbChecker see), it calls the TLM model for the same transfer at the edge that completes it, and it
// applies the hardware-side stimuli to both models. At the wake of edge k every signal still holds its value of the
// cycle before the edge (SystemC updates signals after the evaluation phase), so what the thread reads is what
// the edge samples: PRDATA / PSLVERR of the access phase that ends at k, the pulses of a write at edge k-1, and the
// RTL's state after edge k-1 with the inputs driven since. The TLM model is advanced in the same order: the
// transfer (its read sees the state before the edge), then the counter increments held during the cycle.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "pevp/platform/cosim_check.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <new>
#include <stdexcept>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "cosim_rng.h"
#include "pevp/apb/apb_bus.h"
#include "pevp/apb/apb_checker.h"
#include "pevp/regfile/apb_prot.h"
#include "pevp/regfile/regfile_target.h"
#include "pevp/regfile_rtl/rtl_regfile.h"

namespace pevp::platform {
namespace {

using regfile::Access;
using regfile::RegisterFile;
using regfile_rtl::Face;

// PCLK: 10 ns, first rising edge at 10 ns, so cycle k (the k-th rising edge) is at k x 10 ns in the waveform.
const sc_core::sc_time kPeriod(10, sc_core::SC_NS);

// ---- the traffic's distribution (docs/cosim-check.md "Traffic") ---------------------------------------------------
// Address classes, per 100 transfers.
constexpr std::uint64_t kMappedPct = 78, kLastWordPct = 5, kRandomAlignedPct = 8;  // the rest misaligned
// PSTRB of a write, per 100: all four lanes, none, otherwise a random partial set.
constexpr std::uint64_t kFullStrobePct = 60, kZeroStrobePct = 12;
// Idle cycles between transfers: back to back half of the time, else 1..4.
constexpr std::uint64_t kBackToBackPct = 50, kMaxIdle = 4;
// PRESETn: a pulse of 1..3 cycles before one transfer in kResetOneIn, then one idle cycle.
constexpr std::uint64_t kResetOneIn = 3000, kMaxResetCycles = 3;
// Hardware side, per cycle: an RO field driven (1 in kRoDriveOneIn), counter increments (1 in kIncOneIn cycles,
// 1..3 counters), a counter clear (1 in kClearOneIn).
constexpr std::uint64_t kRoDriveOneIn = 8, kIncOneIn = 4, kClearOneIn = 5000;
// Wrap campaigns: in each period of kCampaignPeriod cycles, cycles [kCampaignStart, kCampaignStart + kCampaignLength)
// hold 0xFFFFFFFF on one counter at every edge -- 70,000 x (2^32 - 1) > 2^48, at least one wrap -- without resets or
// clears.
constexpr std::uint64_t kCampaignPeriod = 200000, kCampaignStart = 100000, kCampaignLength = 70000;

using cosim::Rng;

std::string hex(std::uint64_t v, int digits = 8) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return b;
}

std::string at_cycle(std::uint64_t cycle) {
  char b[64];
  std::snprintf(b, sizeof b, "cycle %llu (%.2f us)", static_cast<unsigned long long>(cycle),
                static_cast<double>(cycle) * kPeriod.to_seconds() * 1e6);
  return b;
}

enum class AddrClass : std::uint8_t { Mapped, LastWord, Unmapped, Unaligned };

struct Transfer {
  bool write = false;
  std::uint32_t addr = 0;
  std::uint32_t wdata = 0;
  std::uint32_t strb = 0;
  std::uint32_t prot = 0;
  AddrClass cls = AddrClass::Mapped;
};

std::string describe(const Transfer& t) {
  std::string s = std::string(t.write ? "write " : "read ") + hex(t.addr, 3);
  if (t.write) s += " data " + hex(t.wdata) + " PSTRB " + hex(t.strb, 1);
  return s + " PPROT " + hex(t.prot, 1);
}

// What a run does beyond checking: how far it goes, whether the first mismatch stops it, the waveform window.
struct Mode {
  std::uint64_t cycles = 0;
  bool stop_on_mismatch = true;
  std::uint64_t trace_from = 0;  // 0: no waveform
  std::uint64_t trace_to = 0;
  std::string trace_path;
};

struct RoField {
  std::uint32_t reg = 0;
  std::uint32_t field = 0;  // index in the register's field list
  regfile::FieldRef ref;
  std::uint32_t reset = 0;
};

class LockStep : public sc_core::sc_module {
 public:
  sc_core::sc_clock clk;
  apb::ApbBus bus;
  apb::ApbChecker checker;
  std::unique_ptr<regfile_rtl::RtlRegFile> rtl;
  regfile::RegFileTarget tlm;
  tlm_utils::simple_initiator_socket<LockStep> socket;

  SC_HAS_PROCESS(LockStep);
  LockStep(sc_core::sc_module_name name, Face face, const CosimCheckCommand& cmd, Mode mode, CosimCheckResult& r)
      : sc_core::sc_module(name),
        clk("pclk", kPeriod, 0.5, kPeriod, true),
        bus("apb", apb::ApbBusConfig{regfile_rtl::face_desc(face).addr_width}),
        checker("checker", checker_config()),
        rtl(regfile_rtl::make_rtl_regfile("rtl", face, bus, rtl_config(face))),
        tlm("tlm", regfile_rtl::face_desc(face), tlm_config(face)),
        socket("socket"),
        cmd_(cmd),
        mode_(std::move(mode)),
        r_(r),
        desc_(regfile_rtl::face_desc(face)),
        rng_(cmd.seed) {
    checker.pclk(clk);
    checker.connect(bus);
    rtl->pclk(clk);
    socket.bind(tlm.socket);
    prepare();
    SC_THREAD(main);
    sensitive << clk.posedge_event();
  }
  ~LockStep() override { trans_.clear_extension(&prot_); }

  bool finished() const { return finished_; }
  const std::string& error() const { return error_; }
  bool out_of_memory() const { return out_of_memory_; }

 private:
  static apb::ApbCheckerConfig checker_config() {
    apb::ApbCheckerConfig c;
    c.report = false;  // counted and printed by the command
    c.record_transfers = false;
    return c;
  }
  static regfile_rtl::RtlRegFileConfig rtl_config(Face face) {
    regfile_rtl::RtlRegFileConfig c;
    c.privileged_only = face == Face::Protected;
    return c;
  }
  static regfile::RegFileTargetConfig tlm_config(Face face) {
    regfile::RegFileTargetConfig c;
    c.privileged_only = face == Face::Protected;
    c.unmapped = regfile::UnmappedPolicy::Error;  // the RTL is Verilated with UNMAPPED_ERROR = 1
    return c;
  }

  void prepare() {
    const std::size_t n = desc_.num_registers;
    std::vector<bool> counter_reg(n, false);
    for (const auto& c : rtl->counters()) {
      counters_.push_back(regfile::CounterRef{c.lsb, c.msb});
      counter_reg[c.lsb] = counter_reg[c.msb] = true;
    }
    pulse_index_.assign(n, -1);
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto& reg = desc_.registers[i];
      std::uint32_t pulse_mask = 0;
      for (std::uint32_t k = 0; k < reg.num_fields; ++k) {
        const auto& f = reg.fields[k];
        if (f.access == Access::PulseOnW) pulse_mask |= f.mask();
        if (f.access == Access::RO && !counter_reg[i])
          ro_fields_.push_back(RoField{i, k, regfile::FieldRef{i, f.lsb, f.width}, f.reset});
        if (f.access == Access::RW && !inject_reg_) inject_reg_ = InjectAt{i, f.mask() & (~f.mask() + 1)};
      }
      if (pulse_mask != 0) {
        pulse_index_[i] = static_cast<int>(pulse_regs_.size());
        pulse_regs_.push_back(i);
      }
    }
    pulse_expect_.assign(pulse_regs_.size(), 0);
    pulse_next_.assign(pulse_regs_.size(), 0);
    inc_now_.assign(counters_.size(), 0);
    touched_.reserve(16);
    tlm.regs().on_pulse([this](const regfile::RegisterDesc& reg, const regfile::FieldDesc& f) {
      const auto i = static_cast<std::size_t>(&reg - desc_.registers);
      pulse_next_[static_cast<std::size_t>(pulse_index_[i])] |= f.mask();
    });
    trans_.set_data_ptr(data_.data());
    trans_.set_data_length(4);
    trans_.set_streaming_width(4);
    trans_.set_extension(&prot_);
  }

  // ---- the thread ---------------------------------------------------------------------------------------------
  void main() {
    try {
      // The waveform is opened one cycle early (the thread's first run, at time 0, for cycle 1): the kernel hands
      // a trace file the values of the time steps that end after it was opened.
      if (mode_.trace_from == 1) rtl->trace_open(mode_.trace_path);
      for (;;) {
        wait();  // rising edge cycle_ + 1
        ++cycle_;
        if (mode_.trace_from > 1 && cycle_ + 1 == mode_.trace_from) rtl->trace_open(mode_.trace_path);
        check_pulses();
        check_state();
        if (phase_ == Phase::Access) complete_transfer();
        counter_edge();
        if (mode_.trace_to != 0 && cycle_ > mode_.trace_to) rtl->trace_close();  // one cycle late, likewise
        if (cycle_ >= mode_.cycles || (stopped_ && mode_.stop_on_mismatch)) break;
        drive();
        if (cmd_.inject_cycle && *cmd_.inject_cycle == cycle_) inject();
      }
      if (!(stopped_ && mode_.stop_on_mismatch)) {
        // The last edge's effects: settle, then compare once more.
        wait(sc_core::sc_time(1, sc_core::SC_NS));
        check_pulses();
        full_ = true;
        check_state();
      }
      finished_ = true;
    } catch (const std::bad_alloc&) {
      out_of_memory_ = true;  // rethrown on the main stack: an exception leaving an SC_THREAD becomes an sc_report
    } catch (const std::exception& e) {
      error_ = e.what();
    }
    r_.cycles = cycle_;
    sc_core::sc_pause();
  }

  // The pulses of the write at the previous edge (high for exactly the cycle after it) against the TLM's
  // on_pulse callbacks of that write; every other cycle they must be 0.
  void check_pulses() {
    for (std::size_t p = 0; p < pulse_regs_.size(); ++p) {
      const std::uint32_t actual = rtl->pulses(pulse_regs_[p]);
      if (actual != pulse_expect_[p]) {
        const auto& reg = desc_.registers[pulse_regs_[p]];
        mismatch("pulses of " + std::string(reg.bundle) + "." + std::string(reg.name) + " @ " + hex(reg.offset, 3) +
                     (last_ ? " (the cycle after " + describe(*last_) + ")" : ""),
                 pulse_expect_[p], actual);
      }
      r_.pulses += static_cast<std::uint64_t>(__builtin_popcount(pulse_expect_[p]));
    }
  }

  void check_state() {
    if (full_) {
      ++r_.state_compares;
      for (std::uint32_t i = 0; i < desc_.num_registers; ++i) check_register(i);
    } else {
      for (std::uint32_t i : touched_) check_register(i);
    }
    full_ = false;
    touched_.clear();
  }
  void check_register(std::uint32_t i) {
    const std::uint32_t expected = tlm.regs().value(i);
    const std::uint32_t actual = rtl->value(i);
    if (expected == actual) return;
    const auto& reg = desc_.registers[i];
    mismatch("state of " + std::string(reg.bundle) + "." + std::string(reg.name) + " @ " + hex(reg.offset, 3) +
                 (last_ ? " (last transfer: " + describe(*last_) + ")" : ""),
             expected, actual);
  }

  void mismatch(const std::string& what, std::uint64_t expected, std::uint64_t actual) {
    ++r_.mismatches;
    if (!r_.first_mismatch_cycle) r_.first_mismatch_cycle = cycle_;
    stopped_ = true;
    if (r_.reports.size() < cmd_.max_reported)
      r_.reports.push_back("mismatch: " + at_cycle(cycle_) + ": " + what + ": expected (TLM) " + hex(expected) +
                           ", actual (RTL) " + hex(actual));
  }

  // The access phase that ends at this edge (PREADY is sampled; the generated RTL has none low).
  void complete_transfer() {
    if (!bus.pready.read()) return;
    const bool rtl_err = bus.pslverr.read();
    const std::uint32_t rtl_data = bus.prdata.read();
    const Transfer& t = cur_;
    trans_.set_command(t.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    trans_.set_address(t.addr);
    const std::uint32_t word = t.write ? t.wdata : 0;
    std::memcpy(data_.data(), &word, 4);
    if (t.write && t.strb != apb::kAllLanes) {
      for (unsigned b = 0; b < 4; ++b) be_[b] = (t.strb >> b) & 1u ? TLM_BYTE_ENABLED : TLM_BYTE_DISABLED;
      trans_.set_byte_enable_ptr(be_.data());
      trans_.set_byte_enable_length(4);
    } else {
      trans_.set_byte_enable_ptr(nullptr);
      trans_.set_byte_enable_length(0);
    }
    const regfile::ApbProt p = apb::apb_prot_of(t.prot);
    prot_.privileged = p.privileged;
    prot_.nonsecure = p.nonsecure;
    prot_.instruction = p.instruction;
    trans_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;  // the TLM's annotated access time is not pin time here
    socket->b_transport(trans_, delay);
    const bool tlm_err = trans_.get_response_status() != tlm::TLM_OK_RESPONSE;
    std::uint32_t tlm_data = 0;
    if (!t.write && !tlm_err) std::memcpy(&tlm_data, data_.data(), 4);

    last_ = t;
    ++r_.accesses;
    ++(t.write ? r_.writes : r_.reads);
    if (tlm_err) ++r_.errors;
    if (tlm_err != rtl_err) mismatch("PSLVERR of " + describe(t), tlm_err, rtl_err);
    if (tlm_data != rtl_data)
      mismatch(std::string("PRDATA of ") + describe(t) + (tlm_err ? " (an error reads 0)" : ""), tlm_data, rtl_data);
    full_ = true;  // the whole state after every access
    phase_ = Phase::Idle;
    just_completed_ = true;
  }

  // The counter inputs held during the cycle that ends at this edge.
  void counter_edge() {
    if (clear_held_) {
      for (const auto& c : counters_) tlm.regs().write_counter(c, 0);
      full_ = true;
      return;
    }
    for (std::size_t c : held_) {
      const std::uint64_t before = tlm.regs().read_counter(counters_[c]);
      tlm.regs().add_to_counter(counters_[c], inc_now_[c]);
      if (tlm.regs().read_counter(counters_[c]) < before) ++r_.wraps;
      touched_.push_back(counters_[c].lsb_reg);
      touched_.push_back(counters_[c].msb_reg);
    }
  }

  // ---- the next cycle's pins and stimuli ----------------------------------------------------------------------
  void drive() {
    pulse_expect_.swap(pulse_next_);
    std::fill(pulse_next_.begin(), pulse_next_.end(), 0u);
    if (reset_left_ > 0) {
      if (--reset_left_ == 0) {
        bus.presetn.write(true);
        idle_left_ = 1;  // the bus stays IDLE in the cycle PRESETn is released
      }
      return;
    }
    const bool campaign = in_campaign();
    switch (phase_) {
      case Phase::Setup:
        bus.penable.write(true);
        phase_ = Phase::Access;
        break;
      case Phase::Access: break;  // PREADY low: held
      case Phase::Idle:
        if (just_completed_) {
          just_completed_ = false;
          if (rng_.below(100) < kBackToBackPct) {
            start_transfer();
            break;
          }
          bus.psel.write(false);
          bus.penable.write(false);
          idle_left_ = 1 + rng_.below(kMaxIdle);
          if (!campaign && rng_.one_in(kResetOneIn)) {
            assert_reset();
            return;
          }
        } else if (idle_left_ > 1) {
          --idle_left_;
        } else {
          start_transfer();
        }
        break;
    }
    stimuli(campaign);
  }

  bool in_campaign() const {
    if (counters_.empty()) return false;
    const std::uint64_t at = cycle_ % kCampaignPeriod;
    return at >= kCampaignStart && at < kCampaignStart + kCampaignLength;
  }

  void start_transfer() {
    Transfer t;
    t.write = rng_.below(2) == 0;
    const std::uint64_t size = desc_.size_bytes;
    const std::uint64_t a = rng_.below(100);
    if (a < kMappedPct) {
      t.addr = desc_.registers[rng_.below(desc_.num_registers)].offset;
    } else if (a < kMappedPct + kLastWordPct) {
      t.addr = static_cast<std::uint32_t>(size - 4);
    } else if (a < kMappedPct + kLastWordPct + kRandomAlignedPct) {
      t.addr = static_cast<std::uint32_t>(rng_.below(size / 4) * 4);
    } else {
      const std::uint32_t base = rng_.below(2) == 0 ? desc_.registers[rng_.below(desc_.num_registers)].offset
                                                    : static_cast<std::uint32_t>(rng_.below(size / 4) * 4);
      t.addr = base | static_cast<std::uint32_t>(1 + rng_.below(3));
    }
    if (t.addr % 4 != 0) t.cls = AddrClass::Unaligned;
    else if (t.addr == size - 4) t.cls = AddrClass::LastWord;
    else if (tlm.regs().index_at(t.addr) >= 0) t.cls = AddrClass::Mapped;
    else t.cls = AddrClass::Unmapped;
    switch (rng_.below(10)) {
      case 0: t.wdata = 0; break;
      case 1: t.wdata = ~0u; break;
      case 2: t.wdata = 1u << rng_.below(32); break;
      default: t.wdata = rng_.u32(); break;
    }
    if (t.write) {
      const std::uint64_t s = rng_.below(100);
      t.strb = s < kFullStrobePct ? apb::kAllLanes
               : s < kFullStrobePct + kZeroStrobePct ? 0u
                                                     : static_cast<std::uint32_t>(1 + rng_.below(14));
    }
    t.prot = static_cast<std::uint32_t>(rng_.below(8));
    switch (t.cls) {
      case AddrClass::Mapped: ++r_.mapped; break;
      case AddrClass::LastWord: ++r_.last_word; break;
      case AddrClass::Unmapped: ++r_.unmapped; break;
      case AddrClass::Unaligned: ++r_.unaligned; break;
    }
    if (t.write && t.strb == 0) ++r_.zero_strobes;
    if (t.write && t.strb != 0 && t.strb != apb::kAllLanes) ++r_.partial_strobes;
    if (t.prot & apb::pprot::kPrivileged) ++r_.privileged;
    cur_ = t;
    bus.psel.write(true);
    bus.penable.write(false);
    bus.pwrite.write(t.write);
    bus.paddr.write(t.addr);
    bus.pwdata.write(t.wdata);
    bus.pstrb.write(t.strb);
    bus.pprot.write(t.prot);
    phase_ = Phase::Setup;
  }

  // PRESETn low from now (the bus is IDLE this cycle); the RTL's flops reset asynchronously, so the TLM model is
  // reset at once too. The hardware around presents its reset values: every RO input returns to its ResetValue,
  // the counter inputs to 0, and the pulses of a write at this edge are cut short by the reset.
  void assert_reset() {
    ++r_.resets;
    reset_left_ = 1 + rng_.below(kMaxResetCycles);
    bus.presetn.write(false);
    tlm.regs().reset();
    for (const auto& f : ro_fields_)
      if (!rtl->drive_ro(f.reg, f.field, f.reset))
        throw std::logic_error(std::string(desc_.name) + ": the RTL has no input for RO field " +
                               std::to_string(f.field) + " of register " + std::to_string(f.reg));
    release_increments({});
    if (clear_held_) rtl->clear_counters(false);
    clear_held_ = false;
    std::fill(pulse_expect_.begin(), pulse_expect_.end(), 0u);
    full_ = true;
  }

  void stimuli(bool campaign) {
    // Counter increments held for the coming edge.
    std::vector<std::pair<std::size_t, std::uint32_t>> inc;
    if (!counters_.empty()) {
      if (campaign) inc.emplace_back((cycle_ / kCampaignPeriod + cmd_.seed) % counters_.size(), ~0u);
      if (rng_.one_in(kIncOneIn)) {
        const std::uint64_t k = 1 + rng_.below(3);
        for (std::uint64_t j = 0; j < k; ++j) {
          const std::size_t c = rng_.below(counters_.size());
          const std::uint64_t kind = rng_.below(100);
          const std::uint32_t n = kind < 60   ? static_cast<std::uint32_t>(1 + rng_.below(16))
                                  : kind < 85 ? rng_.u32()
                                              : ~0u;
          if (std::none_of(inc.begin(), inc.end(), [c](const auto& e) { return e.first == c; }))
            inc.emplace_back(c, n);
        }
      }
    }
    release_increments(inc);
    for (const auto& [c, n] : inc) {
      ++r_.increments;
      if (n >= 0x80000000u) ++r_.huge_increments;
    }
    // A clear of every counter at the coming edge (the edge's increments are dropped).
    const bool clear = !counters_.empty() && !campaign && rng_.one_in(kClearOneIn);
    if (clear != clear_held_) rtl->clear_counters(clear);
    clear_held_ = clear;
    if (clear) ++r_.clears;
    // A plain RO field takes a new value now, on both sides.
    if (!ro_fields_.empty() && rng_.one_in(kRoDriveOneIn)) {
      const RoField& f = ro_fields_[rng_.below(ro_fields_.size())];
      std::uint32_t v = 0;
      switch (rng_.below(4)) {
        case 0: v = 0; break;
        case 1: v = ~0u; break;
        default: v = rng_.u32(); break;
      }
      v &= f.ref.width >= 32 ? ~0u : (1u << f.ref.width) - 1;
      if (!rtl->drive_ro(f.reg, f.field, v))
        throw std::logic_error(std::string(desc_.name) + ": the RTL has no input for RO field " +
                               std::to_string(f.field) + " of register " + std::to_string(f.reg));
      tlm.regs().set(f.ref, v);
      touched_.push_back(f.reg);
      ++r_.ro_drives;
    }
  }

  // Sets the RTL's increment inputs to `inc` (every other counter 0), writing only the inputs that change.
  void release_increments(const std::vector<std::pair<std::size_t, std::uint32_t>>& inc) {
    for (std::size_t c : held_)
      if (std::none_of(inc.begin(), inc.end(), [c](const auto& e) { return e.first == c; })) {
        rtl->increment(c, 0);
        inc_now_[c] = 0;
      }
    held_.clear();
    for (const auto& [c, n] : inc) {
      if (inc_now_[c] != n) rtl->increment(c, n);
      inc_now_[c] = n;
      held_.push_back(c);
    }
  }

  // Test only: one stored bit of the TLM model flips; the next comparison must see it.
  void inject() {
    if (!inject_reg_) return;
    const auto& reg = desc_.registers[inject_reg_->reg];
    std::uint32_t v = tlm.regs().value(inject_reg_->reg);
    tlm.regs().poke(reg.offset, v ^ inject_reg_->bit);
    full_ = true;
  }

  enum class Phase : std::uint8_t { Idle, Setup, Access };
  struct InjectAt {
    std::uint32_t reg;
    std::uint32_t bit;
  };

  const CosimCheckCommand& cmd_;
  Mode mode_;
  CosimCheckResult& r_;
  const regfile::RegFileDesc& desc_;
  Rng rng_;
  std::uint64_t cycle_ = 0;
  bool finished_ = false;
  bool stopped_ = false;
  std::string error_;
  bool out_of_memory_ = false;

  // Master.
  Phase phase_ = Phase::Idle;
  bool just_completed_ = false;
  std::uint64_t idle_left_ = 1;
  std::uint64_t reset_left_ = 0;
  Transfer cur_;
  std::optional<Transfer> last_;

  // TLM transaction, reused.
  tlm::tlm_generic_payload trans_;
  regfile::ApbProt prot_;
  std::array<unsigned char, 4> data_{};
  std::array<unsigned char, 4> be_{};

  // The file's shape.
  std::vector<regfile::CounterRef> counters_;
  std::vector<RoField> ro_fields_;
  std::vector<std::uint32_t> pulse_regs_;
  std::vector<int> pulse_index_;
  std::optional<InjectAt> inject_reg_;

  // Comparisons due at the next wake.
  std::vector<std::uint32_t> pulse_expect_, pulse_next_;
  bool full_ = true;  // the reset state, at the first edge
  std::vector<std::uint32_t> touched_;

  // Hardware-side inputs held now.
  std::vector<std::uint32_t> inc_now_;
  std::vector<std::size_t> held_;
  bool clear_held_ = false;
};

// One elaboration and run. Throws std::runtime_error when the run could not complete.
void run_bench(Face face, const CosimCheckCommand& cmd, const Mode& mode, CosimCheckResult& r) {
  auto bench = std::make_unique<LockStep>("cosim", face, cmd, mode, r);
  const auto t0 = std::chrono::steady_clock::now();
  sc_core::sc_start();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (bench->out_of_memory()) throw std::bad_alloc();  // sc_main: "pe-vp: out of host memory", status 2
  if (!bench->error().empty()) throw std::runtime_error(bench->error());
  if (!bench->finished() && !(r.first_mismatch_cycle && mode.stop_on_mismatch))
    throw std::runtime_error("the lock-step run ended at cycle " + std::to_string(r.cycles) + " before its end");
  r.violations = bench->checker.violations().size();
  for (const auto& v : bench->checker.violations())
    if (r.reports.size() < cmd.max_reported + 20)
      r.reports.push_back("protocol: cycle " + std::to_string(v.cycle) + " " + std::string(apb::rule_name(v.rule)) +
                          ": " + v.detail + " | " + apb::to_string(v.pins));
}

// The waveform window: a child forked before anything is elaborated waits for the first mismatch's cycle, then
// replays the same seed (the run is a function of the seed alone) with the RTL's FST open from C - W to C + W.
// Without a mismatch the parent closes the socket and the child exits having simulated nothing.
class Replayer {
 public:
  Replayer(Face face, const CosimCheckCommand& cmd, std::string path) : path_(std::move(path)) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
      why_ = std::string("socketpair: ") + std::strerror(errno);
      return;
    }
    std::fflush(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) {
      why_ = std::string("fork: ") + std::strerror(errno);
      ::close(fds[0]);
      ::close(fds[1]);
      return;
    }
    if (pid_ == 0) {
      ::close(fds[0]);
      child(fds[1], face, cmd);  // never returns
    }
    ::close(fds[1]);
    fd_ = fds[0];
  }
  ~Replayer() { finish(); }
  Replayer(const Replayer&) = delete;
  Replayer& operator=(const Replayer&) = delete;

  // Asks for the window around `cycle` and waits for it; "" or why there is no file.
  std::string request(std::uint64_t cycle) {
    if (fd_ < 0) return why_;
    if (::send(fd_, &cycle, sizeof cycle, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof cycle))
      return std::string("the replay process is gone: ") + std::strerror(errno);
    // The child's answer: nothing when the file is written, else its reason; then it exits.
    std::string reason;
    char buf[256];
    for (;;) {
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      reason.append(buf, static_cast<std::size_t>(n));
    }
    const int status = finish();
    if (!reason.empty()) return reason;
    if (WIFSIGNALED(status)) return "the replay process was killed by signal " + std::to_string(WTERMSIG(status));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return "the replay process failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
    return "";
  }

 private:
  int finish() {
    int status = -1;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (pid_ > 0)
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    pid_ = -1;
    return status;
  }

  [[noreturn]] void child(int fd, Face face, const CosimCheckCommand& cmd) {
    std::uint64_t cycle = 0;
    std::size_t got = 0;
    while (got < sizeof cycle) {
      const ssize_t n = ::read(fd, reinterpret_cast<char*>(&cycle) + got, sizeof cycle - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ::_exit(0);  // no mismatch: nothing to write
      got += static_cast<std::size_t>(n);
    }
    try {
      Mode m;
      m.stop_on_mismatch = false;
      m.trace_from = cycle > cmd.window ? cycle - cmd.window : 1;
      m.trace_to = cycle + cmd.window;
      m.cycles = m.trace_to + 1;
      m.trace_path = path_;
      CosimCheckResult r;
      run_bench(face, cmd, m, r);
    } catch (const std::exception& e) {
      // What the parent prints after "the waveform": say what ran out rather than "std::bad_alloc".
      const std::string why = dynamic_cast<const std::bad_alloc*>(&e) ? "out of host memory" : e.what();
      for (std::size_t done = 0; done < why.size();) {
        const ssize_t n = ::send(fd, why.data() + done, why.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      ::_exit(3);
    }
    ::_exit(0);
  }

  std::string path_;
  std::string why_;
  pid_t pid_ = -1;
  int fd_ = -1;
};

void print_summary(const CosimCheckCommand& cmd, Face face, const CosimCheckResult& r, std::ostream& out) {
  const auto& d = regfile_rtl::face_desc(face);
  out << "pe-vp cosim-check: " << regfile_rtl::face_name(face) << " (" << d.name << ", " << d.num_registers
      << " registers), seed " << cmd.seed << "\n";
  out << "cycles      " << r.cycles;
  if (r.first_mismatch_cycle) out << " of " << cmd.cycles << " (stopped at the first mismatch)";
  out << "\n";
  out << "accesses    " << r.accesses << ": reads " << r.reads << ", writes " << r.writes << "\n";
  out << "addresses   mapped " << r.mapped << ", last word " << r.last_word << ", unmapped " << r.unmapped
      << ", misaligned " << r.unaligned << "\n";
  out << "strobes     partial " << r.partial_strobes << ", none " << r.zero_strobes << "; privileged " << r.privileged
      << "\n";
  out << "errors      " << r.errors << " (PSLVERR)\n";
  out << "pulses      " << r.pulses << "\n";
  out << "stimuli     RO drives " << r.ro_drives << ", counter increments " << r.increments << " (huge "
      << r.huge_increments << ", wraps " << r.wraps << "), counter clears " << r.clears << ", resets " << r.resets
      << "\n";
  out << "compared    " << r.state_compares << " full states\n";
  out << "protocol    " << r.violations << " violations\n";
  out << "mismatches  " << r.mismatches << "\n";
  out << "seed        " << cmd.seed << "\n";
  char rate[96];
  std::snprintf(rate, sizeof rate, "rate        %.0f APB cycles/s (%.2f s)\n",
                r.seconds > 0 ? static_cast<double>(r.cycles) / r.seconds : 0.0, r.seconds);
  out << rate;
}

}  // namespace

int run_cosim_check(const CosimCheckCommand& cmd, std::ostream& out, std::ostream& err, CosimCheckResult* result) {
  if (cmd.unit == kUnitPeArray) return run_array_cosim_check(cmd, out, err);
  if (cmd.unit != kUnitRegfile) {
    err << "pe-vp cosim-check: --unit " << cmd.unit << ": expected " << kUnitRegfile << " or " << kUnitPeArray << '\n';
    return kCosimUsage;
  }
  if (!cmd.coverage_path.empty()) {
    err << "pe-vp cosim-check: --coverage " << cmd.coverage_path << ": the register-file check runs no instruction, so "
        << "it has no ISA coverage to record; use it with --unit " << kUnitPeArray << '\n';
    return kCosimUsage;
  }

  Face face{};
  try {
    face = regfile_rtl::parse_face(cmd.regfile);
  } catch (const std::invalid_argument& e) {
    err << "pe-vp cosim-check: --regfile: " << e.what() << '\n';
    return kCosimUsage;
  }
  if (cmd.cycles == 0) {
    err << "pe-vp cosim-check: --cycles: expected at least 1 cycle, got 0\n";
    return kCosimUsage;
  }
  if (cmd.window == 0) {
    err << "pe-vp cosim-check: --window: expected at least 1 cycle, got 0\n";
    return kCosimUsage;
  }
  const std::string fst = cmd.fst.empty() ? "cosim-check-" + cmd.regfile + "-seed" + std::to_string(cmd.seed) + ".fst"
                                          : cmd.fst;
  {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path p(fst);
    const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    if (!fs::is_directory(dir, ec)) {
      err << "pe-vp cosim-check: --fst " << fst << ": the directory " << dir.string() << " does not exist\n";
      return kCosimUsage;
    }
    if (fs::is_directory(p, ec)) {
      err << "pe-vp cosim-check: --fst " << fst << ": is a directory\n";
      return kCosimUsage;
    }
  }
  if (!regfile_rtl::rtl_available()) {
    err << "pe-vp cosim-check: this build has no RTL register files (Verilator was not found when it was "
           "configured; scripts/setup.sh installs it): nothing to check against\n";
    return kCosimNoRtl;
  }

  CosimCheckResult r;
  out.flush();
  err.flush();
  Replayer replay(face, cmd, fst);
  Mode mode;
  mode.cycles = cmd.cycles;
  try {
    run_bench(face, cmd, mode, r);
  } catch (const std::bad_alloc&) {
    throw;  // sc_main reports it: "pe-vp: out of host memory", status 2, not a mismatch
  } catch (const std::exception& e) {
    err << "pe-vp cosim-check: " << e.what() << '\n';
    if (result) *result = r;
    return kCosimMismatch;
  }
  if (!cmd.quiet || r.mismatches > 0 || r.violations > 0) print_summary(cmd, face, r, out);
  for (const auto& line : r.reports) out << line << '\n';
  if (r.mismatches > r.reports.size()) out << "(" << r.mismatches - r.reports.size() << " more mismatches)\n";
  if (r.first_mismatch_cycle) {
    const std::uint64_t c = *r.first_mismatch_cycle;
    const std::uint64_t from = c > cmd.window ? c - cmd.window : 1, to = c + cmd.window;
    const std::string why = replay.request(c);
    std::error_code ec;
    if (why.empty() && std::filesystem::file_size(fst, ec) > 0 && !ec) {
      r.fst = fst;
      out << "waveform    " << fst << ": the RTL from " << at_cycle(from) << " to " << at_cycle(to)
          << "; the first mismatch at " << at_cycle(c) << "\n";
    } else {
      out << "waveform    not written: " << (why.empty() ? fst + " is missing or empty" : why) << "\n";
    }
  }
  if (result) *result = r;
  return r.mismatches > 0 || r.violations > 0 ? kCosimMismatch : kCosimPass;
}

}  // namespace pevp::platform
