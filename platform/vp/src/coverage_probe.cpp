#include "pevp/platform/coverage_probe.h"

#include "pevp/arr_seq/arr_seq.h"

namespace pevp::platform {

CoverageProbe::CoverageProbe(Platform& platform, coverage::Collector& collector)
    : p_(platform),
      previous_observer_(platform.arr_seq.observer),
      previous_fault_observer_(platform.seq.fault_observer) {
  const isa::Generation gen = p_.config().gen;
  p_.arr_seq.observer = [this, &collector, gen](const pe::MicroOp& op, const arrseq::Slot& s) {
    if (previous_observer_) previous_observer_(op, s);
    collector.add(op, gen);
  };
  p_.seq.fault_observer = [this, &collector](const seq::ErrorRecord& e, const isa::Decoded& d) {
    if (previous_fault_observer_) previous_fault_observer_(e, d);
    collector.add_fault(e.rule_number);
  };
}

CoverageProbe::~CoverageProbe() {
  p_.arr_seq.observer = previous_observer_;
  p_.seq.fault_observer = previous_fault_observer_;
}

}  // namespace pevp::platform
