// csrs.impl = rtl: the arr_seq CSR block's three spec faces (top, cluster, protected) as the generated register
// RTL, Verilated, each behind a TLM-2.0 -> APB4 bridge (apb::TlmToApb) on its own APB bus, on one gated PCLK.
// Each face is a regfile::ExternalFace: ArrSeqCsrs routes the face's window to it, and the sequencer's view
// (queue_cfg, the cluster fields, throttle_cfg, the per-tile counters, the cntr_rst pulse) is read from and
// driven onto the RTL's pins. docs/cosim.md.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <unordered_map>
#include <vector>

#include "pevp/apb/apb_bus.h"
#include "pevp/apb/tlm_to_apb.h"
#include "pevp/regfile/external_face.h"
#include "pevp/regfile_rtl/rtl_regfile.h"

namespace pevp::regfile_rtl {

// A PCLK that runs only while someone needs it -- a bus transfer in flight, or counter inputs waiting for an
// edge -- so an idle platform has no events and the simulation can end. Its rising edges lie on the grid of a
// free-running clock of the same period (k x period), so when an edge happens does not depend on who woke it.
class GatedClock : public sc_core::sc_module {
 public:
  sc_core::sc_signal<bool> clk;

  GatedClock(sc_core::sc_module_name name, sc_core::sc_time period);

  // The clock runs while holds > 0.
  void hold();
  void release();
  // At least one more rising edge.
  void request_edge();
  sc_core::sc_time period() const { return period_; }
  std::uint64_t rising_edges() const { return edges_; }

 private:
  void run();
  sc_core::sc_time period_;
  unsigned holds_ = 0;
  bool edge_wanted_ = false;
  std::uint64_t edges_ = 0;
  sc_core::sc_event wake_;
};

struct RtlCsrsConfig {
  // PCLK of the RTL faces' APB buses. Model choice D-APB-TIME: 100 MHz, as the TLM faces' 20 ns per access.
  sc_core::sc_time pclk_period = sc_core::sc_time(10, sc_core::SC_NS);
};

// One spec face: TLM target -> TlmToApb -> ApbBus -> the Verilated register file.
class RtlCsrFace : public sc_core::sc_module, public regfile::ExternalFace {
 public:
  tlm_utils::simple_target_socket<RtlCsrFace> front;

  RtlCsrFace(sc_core::sc_module_name name, Face face, GatedClock& clock);

  tlm::tlm_target_socket<>& target() override { return front; }
  std::uint32_t value(std::size_t reg) const override { return rtl_->value(reg); }
  void add_to_counter(const regfile::CounterRef& c, std::uint64_t n) override;
  // The count the RTL holds plus what is waiting for the next edge.
  std::uint64_t read_counter(const regfile::CounterRef& c) const override;
  void clear_counters() override;
  void on_change(std::function<void()> changed) override { change_listeners_.push_back(std::move(changed)); }
  void on_pulse(std::function<void(std::size_t, std::uint32_t)> pulse) override {
    pulse_listeners_.push_back(std::move(pulse));
  }
  void reset() override;

  RtlRegFile& rtl() { return *rtl_; }
  apb::ApbBus& bus() { return bus_; }
  const apb::TlmToApb& bridge() const { return bridge_; }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // Debug reads see the RTL's state (no bus cycles); debug writes are refused (0 bytes): the RTL's flops have
  // no back door.
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  void on_edge();     // at every rising PCLK edge: what the counter inputs delivered
  void on_outputs();  // an RW or PulseOnW output changed
  std::size_t counter_index(std::uint32_t lsb_reg) const;
  std::uint32_t held(std::size_t counter) const;  // what the increment input carries: pending, at most 2^32 - 1
  void drive(std::size_t counter);
  void drop_pending();  // forget every increment not yet taken (a clear or a reset)

  Face face_;
  GatedClock& clock_;
  apb::ApbBus bus_;
  apb::TlmToApb bridge_;
  tlm_utils::simple_initiator_socket<RtlCsrFace> to_bridge_;
  std::unique_ptr<RtlRegFile> rtl_;
  std::unordered_map<std::uint32_t, std::size_t> counter_by_lsb_;
  std::vector<std::uint64_t> pending_;  // increments not yet delivered, per counter
  std::vector<std::size_t> active_;     // counters with pending increments or a driven input
  std::vector<bool> is_active_;
  std::vector<std::function<void()>> change_listeners_;
  std::vector<std::function<void(std::size_t, std::uint32_t)>> pulse_listeners_;
  sc_core::sc_event reset_release_;
};

// The three faces on one gated clock.
class RtlCsrs : public sc_core::sc_module {
 public:
  GatedClock clock;
  RtlCsrFace top;
  RtlCsrFace cluster;
  RtlCsrFace protect;

  // Throws std::runtime_error when this build has no RTL.
  explicit RtlCsrs(sc_core::sc_module_name name, RtlCsrsConfig config = {});

  regfile::ExternalFaces faces() { return {&top, &cluster, &protect}; }

  // FST waveforms of the three faces' RTL from the start of the simulation: <prefix>.top.fst,
  // <prefix>.cluster.fst, <prefix>.protected.fst (Verilator opens a waveform only once elaboration is done). A file
  // that cannot be opened is reported as a warning /pevp/regfile_rtl/fst and the run goes on.
  void trace_from_start(std::string prefix) { fst_prefix_ = std::move(prefix); }
  static std::vector<std::string> trace_paths(const std::string& prefix);

 private:
  void start_of_simulation() override;
  std::string fst_prefix_;
};

}  // namespace pevp::regfile_rtl
