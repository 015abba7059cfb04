#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn
#include "pevp/regfile_rtl/rtl_csrs.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace pevp::regfile_rtl {

// ---- GatedClock ----------------------------------------------------------------------------------------------

GatedClock::GatedClock(sc_core::sc_module_name name, sc_core::sc_time period)
    : sc_core::sc_module(name), clk("clk", false), period_(period) {
  if (period_ == sc_core::SC_ZERO_TIME) throw std::invalid_argument("the RTL faces' PCLK period must be above 0");
  sc_core::sc_spawn([this] { run(); }, "run");
}

void GatedClock::hold() {
  if (holds_++ == 0) wake_.notify();
}

void GatedClock::release() {
  if (holds_ > 0) --holds_;
}

void GatedClock::request_edge() {
  edge_wanted_ = true;
  wake_.notify();
}

void GatedClock::run() {
  const sc_dt::uint64 period = period_.value();  // in time-resolution units
  for (;;) {
    while (holds_ == 0 && !edge_wanted_) sc_core::wait(wake_);
    edge_wanted_ = false;
    // The next grid edge strictly after now.
    const sc_dt::uint64 now = sc_core::sc_time_stamp().value();
    const sc_dt::uint64 next = (now / period + 1) * period;
    sc_core::wait(sc_core::sc_time::from_value(next - now));
    clk.write(true);
    ++edges_;
    sc_core::wait(period_ / 2);
    clk.write(false);
  }
}

// ---- RtlCsrFace ---------------------------------------------------------------------------------------------

namespace {

apb::TlmToApbConfig bridge_config(Face face) {
  apb::TlmToApbConfig c;
  // The top and cluster faces fail only on addresses (unmapped or misaligned); the protected face's usual
  // failure is an unprivileged access (D-CSR-RTL-STATUS).
  c.slverr_status = face == Face::Protected ? tlm::TLM_GENERIC_ERROR_RESPONSE : tlm::TLM_ADDRESS_ERROR_RESPONSE;
  return c;
}

RtlRegFileConfig rtl_config(Face face) {
  RtlRegFileConfig c;
  c.privileged_only = face == Face::Protected;
  return c;
}

}  // namespace

RtlCsrFace::RtlCsrFace(sc_core::sc_module_name name, Face face, GatedClock& clock)
    : sc_core::sc_module(name),
      front("front"),
      face_(face),
      clock_(clock),
      bus_("apb", apb::ApbBusConfig{face_desc(face).addr_width}),
      bridge_("bridge", bridge_config(face)),
      to_bridge_("to_bridge") {
  rtl_ = make_rtl_regfile("regs", face, bus_, rtl_config(face));
  rtl_->pclk(clock_.clk);
  bridge_.pclk(clock_.clk);
  bridge_.connect(bus_);
  to_bridge_.bind(bridge_.socket);
  front.register_b_transport(this, &RtlCsrFace::b_transport);
  front.register_transport_dbg(this, &RtlCsrFace::transport_dbg);

  const auto& counters = rtl_->counters();
  for (std::size_t i = 0; i < counters.size(); ++i) counter_by_lsb_.emplace(counters[i].lsb, i);
  pending_.assign(counters.size(), 0);
  is_active_.assign(counters.size(), false);

  sc_core::sc_spawn_options edge;
  edge.spawn_method();
  edge.dont_initialize();
  edge.set_sensitivity(&clock_.clk.posedge_event());
  sc_core::sc_spawn([this] { on_edge(); }, "counter_inputs", &edge);

  const std::vector<const sc_core::sc_event*> outputs = rtl_->output_events();
  if (!outputs.empty()) {
    sc_core::sc_spawn_options watch;
    watch.spawn_method();
    watch.dont_initialize();
    for (const sc_core::sc_event* e : outputs) watch.set_sensitivity(e);
    sc_core::sc_spawn([this] { on_outputs(); }, "outputs", &watch);
  }

  sc_core::sc_spawn_options release;
  release.spawn_method();
  release.dont_initialize();
  release.set_sensitivity(&reset_release_);
  sc_core::sc_spawn([this] { bus_.presetn.write(true); }, "reset_release", &release);
}

void RtlCsrFace::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  // The transfer starts at the caller's local time; the clock runs while it is on the pins.
  if (delay != sc_core::SC_ZERO_TIME) {
    sc_core::wait(delay);
    delay = sc_core::SC_ZERO_TIME;
  }
  clock_.hold();
  to_bridge_->b_transport(trans, delay);
  clock_.release();
  // The bridge returns in the delta cycle of the completing edge, in which the RTL's flops have taken the write
  // but its output pins are not updated yet: one delta later, the caller (and the sequencer it may wake) sees the
  // write. Simulated time does not move.
  sc_core::wait(sc_core::SC_ZERO_TIME);
}

unsigned int RtlCsrFace::transport_dbg(tlm::tlm_generic_payload& trans) {
  const sc_dt::uint64 addr = trans.get_address();
  const unsigned int len = trans.get_data_length();
  if (!trans.is_read() || addr % 4 != 0 || len % 4 != 0 || trans.get_data_ptr() == nullptr) return 0;
  const regfile::RegFileDesc& d = rtl_->desc();
  unsigned int done = 0;
  for (; done < len; done += 4) {
    const sc_dt::uint64 a = addr + done;
    const regfile::RegisterDesc* found = nullptr;
    for (std::size_t i = 0; i < d.num_registers && found == nullptr; ++i)
      if (d.registers[i].offset == a) found = &d.registers[i];
    if (found == nullptr) break;
    const std::uint32_t v = rtl_->value(static_cast<std::size_t>(found - d.registers));
    std::memcpy(trans.get_data_ptr() + done, &v, 4);
  }
  return done;
}

std::size_t RtlCsrFace::counter_index(std::uint32_t lsb_reg) const {
  const auto it = counter_by_lsb_.find(lsb_reg);
  if (it == counter_by_lsb_.end())
    throw std::invalid_argument("the " + std::string(face_name(face_)) + " RTL has no counter at register index " +
                                std::to_string(lsb_reg));
  return it->second;
}

std::uint32_t RtlCsrFace::held(std::size_t c) const {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(pending_[c], std::numeric_limits<std::uint32_t>::max()));
}

void RtlCsrFace::drop_pending() {
  for (std::size_t c : active_) {
    pending_[c] = 0;
    rtl_->increment(c, 0);
  }
}

void RtlCsrFace::drive(std::size_t c) {
  rtl_->increment(c, held(c));
  if (!is_active_[c]) {
    is_active_[c] = true;
    active_.push_back(c);
  }
}

void RtlCsrFace::add_to_counter(const regfile::CounterRef& ref, std::uint64_t n) {
  const std::size_t c = counter_index(ref.lsb_reg);
  pending_[c] += n;
  drive(c);
  clock_.request_edge();
}

std::uint64_t RtlCsrFace::read_counter(const regfile::CounterRef& ref) const {
  const std::size_t c = counter_index(ref.lsb_reg);
  return (rtl_->count(c) + pending_[c]) & regfile::kCounterMask48;
}

void RtlCsrFace::clear_counters() {
  drop_pending();
  rtl_->clear_counters(true);
  clock_.request_edge();  // an edge after this one if the clear comes too late for it
}

void RtlCsrFace::on_edge() {
  // The RTL sampled the inputs as they are now, in this same evaluation phase. A clear drops the edge's
  // increments; otherwise each delivered what its input held.
  if (rtl_->clear_input()) {
    rtl_->clear_counters(false);
  } else {
    for (std::size_t c : active_) pending_[c] -= std::min<std::uint64_t>(pending_[c], rtl_->increment_input(c));
  }
  bool more = false;
  std::vector<std::size_t> still;
  for (std::size_t c : active_) {
    rtl_->increment(c, held(c));
    if (pending_[c] != 0 || rtl_->increment_input(c) != 0) still.push_back(c);  // the 0 is still to be sampled
    else is_active_[c] = false;
    more = more || pending_[c] != 0;
  }
  active_ = std::move(still);
  if (more) clock_.request_edge();
}

void RtlCsrFace::on_outputs() {
  for (std::size_t reg : rtl_->pulse_registers())
    if (const std::uint32_t bits = rtl_->pulses(reg); bits != 0)
      for (const auto& p : pulse_listeners_) p(reg, bits);
  for (const auto& c : change_listeners_) c();
}

void RtlCsrFace::reset() {
  // PRESETn low for a delta cycle: the flops reset asynchronously; counters waiting for an edge are dropped.
  drop_pending();
  bus_.presetn.write(false);
  reset_release_.notify(sc_core::SC_ZERO_TIME);
}

// ---- RtlCsrs ----------------------------------------------------------------------------------------------------

RtlCsrs::RtlCsrs(sc_core::sc_module_name name, RtlCsrsConfig config)
    : sc_core::sc_module(name),
      clock("pclk", config.pclk_period),
      top("top", Face::Top, clock),
      cluster("cluster", Face::Cluster, clock),
      protect("protected", Face::Protected, clock) {}

std::vector<std::string> RtlCsrs::trace_paths(const std::string& prefix) {
  return {prefix + ".top.fst", prefix + ".cluster.fst", prefix + ".protected.fst"};
}

void RtlCsrs::start_of_simulation() {
  if (fst_prefix_.empty()) return;
  const std::vector<std::string> paths = trace_paths(fst_prefix_);
  RtlCsrFace* faces[] = {&top, &cluster, &protect};
  for (std::size_t i = 0; i < paths.size(); ++i) {
    try {
      faces[i]->rtl().trace_open(paths[i]);
    } catch (const std::exception& e) {
      SC_REPORT_WARNING("/pevp/regfile_rtl/fst", e.what());
    }
  }
}

}  // namespace pevp::regfile_rtl
