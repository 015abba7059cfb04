// The exceptions of pevp_host. Every failure a host program can meet -- a malformed .npy file, GEMM options that
// cannot be planned, a plan that does not execute -- is one of these, with a message that names the file or field
// and the rule broken, so `pe-vp gemm` can print it and exit non-zero instead of crashing.
#pragma once

#include <stdexcept>

namespace pevp::host {

// Base of every pevp_host error; also used for argument mismatches between the helpers (operand shapes, dtypes).
class HostError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A .npy file that cannot be read or written; the message starts with the file name.
class NpyError : public HostError {
 public:
  using HostError::HostError;
};

// GEMM options or a shape the planner rejects; the message names the option ("options.tile_n") and the rule.
class PlanError : public HostError {
 public:
  using HostError::HostError;
};

// A plan step that failed on the plain-C++ executor; the message names the step, the instruction and the rule.
class ExecuteError : public HostError {
 public:
  using HostError::HostError;
};

}  // namespace pevp::host
