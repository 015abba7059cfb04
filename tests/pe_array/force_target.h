// Makes the fast kernel dispatch to one SIMD target (hwy::SetSupportedTargetsForTest) until destroyed, so a test
// can run the AVX2 and SSE paths on an AVX-512 host too.
#pragma once

#include <hwy/targets.h>

#include <cstdint>

namespace pe_test {

class ForceTarget {
 public:
  explicit ForceTarget(std::int64_t target) { hwy::SetSupportedTargetsForTest(target); }
  ~ForceTarget() { hwy::SetSupportedTargetsForTest(0); }
  ForceTarget(const ForceTarget&) = delete;
  ForceTarget& operator=(const ForceTarget&) = delete;
};

}  // namespace pe_test
