// The tensor-engine clock: simulated time <-> engine cycles. A value type, so the
// SEQ and the sequencer each keep one (with its own memo of the current cycle)
// and the SEQ needs no reference into the sequencer to tell the time.
#pragma once

#include <cmath>
#include <cstdint>

#include <systemc>

namespace pevp::arrseq {

using Cycle = std::uint64_t;

class EngineClock {
 public:
  explicit EngineClock(double clock_ghz)
      : ps_per_cycle_(1000.0 / clock_ghz), resolution_ps_(sc_core::sc_get_time_resolution().to_seconds() * 1e12) {}

  // The first cycle boundary at or after t, a boundary being where to_time() puts it: rounded to the nearest
  // resolution unit, so up to half a unit after the exact c x ps_per_cycle. A time within half a unit after the
  // exact boundary is at it, which keeps to_cycles(to_time(c)) == c: at 2.4 GHz cycle 2410 is 1004166.67 ps,
  // to_time makes it 1004167 ps, and that is still cycle 2410, not 2411 -- else a thread that waited until a
  // cycle's time would find itself a cycle later than one woken a picosecond before, and a schedule would depend
  // on when software's bus accesses synchronised the SEQ.
  Cycle to_cycles(const sc_core::sc_time& t) const {
    // sc_time's integer value is in units of the time resolution (1 ps unless changed).
    const double ps = static_cast<double>(t.value()) * resolution_ps_;
    const double c = std::ceil((ps - 0.5 * resolution_ps_) / ps_per_cycle_ - 1e-6);
    return c > 0 ? static_cast<Cycle>(c) : 0;
  }
  sc_core::sc_time to_time(Cycle c) const {
    // As sc_time(to_ps(c), SC_PS) rounds it, without that constructor's unit lookups.
    return sc_core::sc_time::from_value(
        static_cast<sc_core::sc_time::value_type>(static_cast<double>(to_ps(c)) / resolution_ps_ + 0.5));
  }
  std::uint64_t to_ps(Cycle c) const { return static_cast<std::uint64_t>(static_cast<double>(c) * ps_per_cycle_ + 0.5); }
  // The cycle of the current simulated time; remembered, since it is asked for
  // several times per instruction while time stands still.
  Cycle now() const {
    const sc_core::sc_time t = sc_core::sc_time_stamp();
    if (t.value() != now_value_) {
      now_value_ = t.value();
      now_cycle_ = to_cycles(t);
    }
    return now_cycle_;
  }

 private:
  double ps_per_cycle_;
  double resolution_ps_;  // sc_time's unit
  mutable sc_core::sc_time::value_type now_value_ = 0;
  mutable Cycle now_cycle_ = 0;
};

}  // namespace pevp::arrseq
