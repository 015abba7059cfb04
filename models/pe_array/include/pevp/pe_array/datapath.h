// The PE array's arithmetic as a replaceable part of the executor (docs/cosim.md "The datapath in the loop"). The
// executor keeps everything around the arithmetic -- the checks, the SBUF and PSUM addressing, the operand decode,
// the PSUM group semantics and the zeroing -- and hands a datapath only the dense stationary it loads and the
// matmul pass over decoded operands. pe_array.impl = rtl puts the Verilated PE tile here (pe_array_rtl/); without
// one the executor's own C++ kernels compute.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "pevp/pe_array/micro_op.h"

namespace pevp::pe {

struct Stationary;

// What the datapath's own clock took: the whole operation, and a matmul's first PSUM word.
struct DatapathTiming {
  std::uint64_t cycles = 0;
  std::uint64_t first_result = 0;
};

class Datapath {
 public:
  virtual ~Datapath() = default;
  // "RTL tile 32x32", for statistics and messages.
  virtual std::string name() const = 0;
  // Why this datapath cannot execute `op` (a weight load or matmul), or "". The reason leads with the
  // instruction's field as "field = value: ..." so the fault names it (the executor refuses the micro-op with it
  // before anything is read or written, rule exec.datapath).
  virtual std::string refusal(const MicroOp& op) const = 0;
  // A dense stationary was loaded: s.k x s.m decoded values of s.type, for s.tile.
  virtual DatapathTiming load(const Stationary& s) = 0;
  // dst[mi * n + j] = (accumulate ? dst[mi * n + j] + S : S), S = the sum over k < s.k of s.values[k * s.m + mi] *
  // moving[k * n + j] in the defined order (pevp/pe_array/compute.h), a NaN stored as kCanonicalNan. `moving` holds
  // decoded values of s.type.
  virtual DatapathTiming matmul(const Stationary& s, const float* moving, std::size_t n, bool accumulate,
                                float* dst) = 0;
};

}  // namespace pevp::pe
