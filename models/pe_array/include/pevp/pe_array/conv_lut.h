// The PE array's converter tables (ConvLutLoad, opcode 0xe4, v4+). The spec gives the opcode and the firmware
// handler's self-name and says the converter-table SRAM is outside its corpus; everything here is this model's
// definition (docs/pe-array-executor.md D-CONVLUT), not a spec fact: a table per narrow input dtype, one fp32 value
// per code, that replaces the format's decode of that dtype's codes at the multiplier input of later loads and
// matmuls, until another ConvLutLoad of the dtype or a reset.
#pragma once

#include <cstddef>
#include <string>

#include "pevp/isa/enums.h"

namespace pevp::pe {

// Entries of the table of `d`: one per code -- 256 for FP8_EXP2/3/4/5, 16 for FP4_EXP2 and INT4; 0 when `d` has no
// converter table (a dtype of 16 or 32 bits, or no matmul input).
std::size_t conv_lut_entries(isa::Dtype d);

// Why `d` cannot be a ConvLutLoad's lut_dtype at run time, or "".
std::string conv_lut_error(isa::Dtype d);

// The slot of `d` among the dtypes that have a table (0 .. kConvLutDtypes - 1); only for conv_lut_entries(d) != 0.
inline constexpr std::size_t kConvLutDtypes = 6;
std::size_t conv_lut_slot(isa::Dtype d);
isa::Dtype conv_lut_dtype(std::size_t slot);

}  // namespace pevp::pe
