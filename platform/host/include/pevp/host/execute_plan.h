// Runs a GEMM plan entirely in plain C++: local SBUF and PSUM byte buffers and a pe::ArrayExecutor stand in for the
// platform, each step's loads are written, its instructions decoded (isa::decode, plus the cross-instruction
// isa::StreamChecker) and executed, and its PSUM regions read back into C. This is the no-SystemC path of
// `pe-vp gemm` and the oracle the driver path through the SystemC platform is compared against.
#pragma once

#include "pevp/host/error.h"
#include "pevp/host/gemm_plan.h"
#include "pevp/host/matrix.h"
#include "pevp/host/operands.h"

namespace pevp::host {

// C (M x N) as the PE array computes it. SBUF, PSUM and C start filled with 0xFF bytes (NaN in every input format
// and in fp32), so a plan that reads SBUF it never loaded, or leaves part of C unread, shows up as NaN in C instead
// of passing by luck. Throws HostError when the operands do not fit the plan and ExecuteError, naming the step, the
// instruction index, its opcode and the broken rule, when an instruction is invalid or fails on the executor.
Matrix execute_plan(const GemmPlan& plan, const EncodedOperand& a, const EncodedOperand& b);

}  // namespace pevp::host
