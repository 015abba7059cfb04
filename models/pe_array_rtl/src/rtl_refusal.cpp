// What the RTL tile runs and what it refuses: no RTL needed to say so.
#include <string>

#include "pevp/isa/enums.h"
#include "pevp/pe_array_rtl/rtl_datapath.h"

namespace pevp::pe_array_rtl {

namespace {
std::string field(const char* name, std::int64_t value, const std::string& why) {
  return std::string(name) + " = " + std::to_string(value) + ": " + why + " (pe_array.impl = rtl)";
}
}  // namespace

std::string refusal(const pe::MicroOp& op, unsigned rows, unsigned cols) {
  using pe::MicroOpKind;
  if (op.kind == MicroOpKind::PeRegWrite)
    return field("reg_addr", op.reg_addr, "the RTL tile has no PE registers");
  if (op.conv_lut) return field("lut_dtype", op.in_dtype_raw, "the RTL tile has no converter table");
  if (op.seed != pe::SeedMove::None || op.unmodelled.seed_mode != 0)
    return field("seed_mode", op.unmodelled.seed_mode, "the RTL tile moves no stochastic-rounding seeds");
  if (op.sparse != pe::SparseRole::None)
    return field("tag_weight_mode", static_cast<std::int64_t>(op.sparse),
                 "the RTL tile has no structured sparsity");
  if (op.mx) return field("in_dtype", op.in_dtype_raw, "the RTL tile takes no MX source");
  if (op.in_dtype != isa::Dtype::BFLOAT16 && op.in_dtype != isa::Dtype::FP16)
    return field("in_dtype", op.in_dtype_raw, "the RTL tile multiplies BFLOAT16 and FP16 only");
  if (op.fp32_mode != isa::Fp32Mode::None)
    return field("fp32_mode", op.fp32_mode_raw, "the RTL tile has no fp32 multiplier modes");
  if (op.transpose) return field("xpose_mode", 1, "the RTL tile has no transpose path");
  if (op.double_row) return field("perf_opt", 1, "the RTL tile feeds one contraction row per PE row");
  if (op.k > rows) return field("num_active_rows", op.k, "more than the RTL tile's " + std::to_string(rows) + " rows");
  if (op.m > cols)
    return field("num_active_cols", op.m, "more than the RTL tile's " + std::to_string(cols) + " columns");
  if (op.kind == MicroOpKind::Matmul && op.out_dtype != 0 &&
      op.out_dtype != static_cast<std::int64_t>(isa::Dtype::FP32))
    return field("out_dtype", op.out_dtype, "the RTL tile's PSUM port writes FP32 only");
  return "";
}

}  // namespace pevp::pe_array_rtl
