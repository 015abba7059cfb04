// The Verilated register files behind RtlRegFile: one template over the Verilated model and its generated pins
// (<name>_rtl.h), instantiated for the four files.
#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn
#include "pevp/regfile_rtl/rtl_regfile.h"

#include <stdexcept>
#include <string>
#include <verilated.h>
#include <verilated_fst_sc.h>

#include "tpb_arr_seq_cluster_host_visible_rtl.h"
#include "tpb_arr_seq_top_host_visible_rtl.h"
#include "tpb_arr_seq_top_protected_rtl.h"
#include "vp_seq_rtl.h"

namespace pevp::regfile_rtl {

bool rtl_available() { return true; }

namespace {

template <class Table>
std::vector<CounterRegs> counter_list(const Table& table) {
  std::vector<CounterRegs> out;
  for (const auto& c : table) out.push_back(CounterRegs{c.lsb, c.msb});
  return out;
}

template <class Model, class Pins>
class RtlFace final : public RtlRegFile {
 public:
  template <class Table, class PulseTable>
  RtlFace(sc_core::sc_module_name name, Face face, apb::ApbBus& bus, const Table& counters, const PulseTable& pulses)
      : RtlRegFile(name, face),
        model_("rtl"),
        presetn_("presetn_rtl", true),
        counters_(counter_list(counters)),
        pulse_regs_(pulses.begin(), pulses.end()),
        bus_(bus) {
    model_.PCLK(pclk);
    model_.PRESETn(presetn_);
    model_.PSEL(bus.psel);
    model_.PENABLE(bus.penable);
    model_.PWRITE(bus.pwrite);
    model_.PADDR(bus.paddr);
    model_.PWDATA(bus.pwdata);
    model_.PSTRB(bus.pstrb);
    model_.PPROT(bus.pprot);
    model_.PRDATA(bus.prdata);
    model_.PREADY(bus.pready);
    model_.PSLVERR(bus.pslverr);
    pins_.bind(model_);
    // PRESETn as the RTL sees it: a falling edge in the first delta cycle (the power-on reset; the flops reset
    // asynchronously on it), then the bus's.
    sc_core::sc_spawn(
        [this] {
          presetn_.write(false);
          sc_core::wait(sc_core::SC_ZERO_TIME);
          for (;;) {
            presetn_.write(bus_.presetn.read());
            sc_core::wait(bus_.presetn.value_changed_event());
          }
        },
        "presetn");
  }
  ~RtlFace() override { trace_close(); }

  std::uint32_t value(std::size_t reg) const override { return pins_.value(reg); }
  std::uint32_t pulses(std::size_t reg) const override { return pins_.pulses(reg); }
  bool drive_ro(std::size_t reg, std::size_t field, std::uint32_t v) override {
    return field < 64 && pins_.drive_ro(reg, field, v);
  }
  const std::vector<CounterRegs>& counters() const override { return counters_; }
  void increment(std::size_t counter, std::uint32_t n) override { pins_.increment(counter, n); }
  std::uint64_t count(std::size_t counter) const override { return pins_.count(counter); }
  void clear_counters(bool on) override { pins_.clear_counters(on); }
  std::uint32_t increment_input(std::size_t counter) const override { return pins_.increment_input(counter); }
  bool clear_input() const override { return pins_.clear_input(); }
  std::vector<const sc_core::sc_event*> output_events() const override {
    std::vector<const sc_core::sc_event*> out;
    pins_.output_events(out);
    return out;
  }
  const std::vector<std::size_t>& pulse_registers() const override { return pulse_regs_; }

  void trace_open(const std::string& path) override {
    trace_close();
    trace_ = std::make_unique<VerilatedFstSc>();
    model_.trace(trace_.get(), 99);
    trace_->open(path.c_str());
    if (!trace_->isOpen()) {
      retired_.push_back(std::move(trace_));
      throw std::runtime_error(path + ": cannot open the FST file");
    }
  }
  void trace_close() override {
    if (!trace_) return;
    trace_->close();
    // The kernel keeps calling a trace file it was given (VerilatedFstSc registers itself and has no way to
    // unregister): a closed one ignores the calls, a deleted one would be called after its end.
    retired_.push_back(std::move(trace_));
  }

 private:
  Model model_;
  Pins pins_;
  sc_core::sc_signal<bool> presetn_;
  std::vector<CounterRegs> counters_;
  std::vector<std::size_t> pulse_regs_;
  std::unique_ptr<VerilatedFstSc> trace_;
  std::vector<std::unique_ptr<VerilatedFstSc>> retired_;  // closed, still registered with the kernel
  apb::ApbBus& bus_;
};

}  // namespace

std::unique_ptr<RtlRegFile> make_rtl_regfile(sc_core::sc_module_name name, Face face, apb::ApbBus& bus,
                                             RtlRegFileConfig config) {
  if (config.privileged_only != (face == Face::Protected))
    throw std::invalid_argument(std::string("the ") + std::string(face_name(face)) +
                                " register file's RTL is built with PRIVILEGED_ONLY = " +
                                (face == Face::Protected ? "1" : "0") + "; privileged_only = " +
                                (config.privileged_only ? "true" : "false") + " would need another Verilation");
  if (bus.addr_bits() != face_desc(face).addr_width)
    throw std::invalid_argument("the " + std::string(face_name(face)) + " register file's PADDR is " +
                                std::to_string(face_desc(face).addr_width) + " bits, the bus has " +
                                std::to_string(bus.addr_bits()));
  // Waveforms can be asked for at any time (trace_open); the models must know before they are built.
  Verilated::traceEverOn(true);
  switch (face) {
    case Face::Top:
      return std::make_unique<RtlFace<Vtpb_arr_seq_top_host_visible, rtl::tpb_arr_seq_top_host_visible::Pins>>(
          name, face, bus, rtl::tpb_arr_seq_top_host_visible::kCounterRegs, rtl::tpb_arr_seq_top_host_visible::kPulseRegs);
    case Face::Cluster:
      return std::make_unique<
          RtlFace<Vtpb_arr_seq_cluster_host_visible, rtl::tpb_arr_seq_cluster_host_visible::Pins>>(
          name, face, bus, rtl::tpb_arr_seq_cluster_host_visible::kCounterRegs, rtl::tpb_arr_seq_cluster_host_visible::kPulseRegs);
    case Face::Protected:
      return std::make_unique<RtlFace<Vtpb_arr_seq_top_protected, rtl::tpb_arr_seq_top_protected::Pins>>(
          name, face, bus, rtl::tpb_arr_seq_top_protected::kCounterRegs, rtl::tpb_arr_seq_top_protected::kPulseRegs);
    case Face::Vp: break;
  }
  return std::make_unique<RtlFace<Vvp_seq, rtl::vp_seq::Pins>>(name, face, bus, rtl::vp_seq::kCounterRegs,
                                                   rtl::vp_seq::kPulseRegs);
}

}  // namespace pevp::regfile_rtl
