#include "pevp/arr_seq/cost_model.h"

namespace pevp::arrseq {

sc_core::sc_time CostModel::duration(const pe::MicroOp&, const pe::ExecStats&) const {
  return sc_core::SC_ZERO_TIME;  // functional model: no time passes (timing issue: docs/timing.md)
}

}  // namespace pevp::arrseq
