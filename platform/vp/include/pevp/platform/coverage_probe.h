// `--coverage FILE`: the functional coverage of a run (pevp/coverage, docs/coverage.md), fed from the typed data
// that already flows -- each micro-op the sequencer schedules (its observer) and each fault the SEQ finds (its fault
// observer, the refused instructions' rules).
//
// Like MicroOpLog, it chains the micro-op observer set before it and gives it back when it goes (make it after the
// recorder's hooks, destroy it before them), and it takes the SEQ's fault observer for its life. Without a probe
// nothing is sampled: the models pay their one empty std::function test.
#pragma once

#include <functional>

#include "pevp/coverage/collector.h"
#include "pevp/platform/platform.h"

namespace pevp::platform {

class CoverageProbe {
 public:
  CoverageProbe(Platform& platform, coverage::Collector& collector);
  ~CoverageProbe();
  CoverageProbe(const CoverageProbe&) = delete;
  CoverageProbe& operator=(const CoverageProbe&) = delete;

 private:
  Platform& p_;
  std::function<void(const pe::MicroOp&, const arrseq::Slot&)> previous_observer_;
  std::function<void(const seq::ErrorRecord&, const isa::Decoded&)> previous_fault_observer_;
};

}  // namespace pevp::platform
