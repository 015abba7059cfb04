// Converter tables: which dtypes have one and how big (see conv_lut.h).
#include "pevp/pe_array/conv_lut.h"

#include <array>

namespace pevp::pe {

namespace {
constexpr std::array<isa::Dtype, kConvLutDtypes> kDtypes = {isa::Dtype::FP8_EXP2, isa::Dtype::FP8_EXP3,
                                                            isa::Dtype::FP8_EXP4, isa::Dtype::FP8_EXP5,
                                                            isa::Dtype::FP4_EXP2, isa::Dtype::INT4};
}  // namespace

std::size_t conv_lut_entries(isa::Dtype d) {
  switch (d) {
    case isa::Dtype::FP8_EXP2:
    case isa::Dtype::FP8_EXP3:
    case isa::Dtype::FP8_EXP4:
    case isa::Dtype::FP8_EXP5: return 256;
    case isa::Dtype::FP4_EXP2:
    case isa::Dtype::INT4: return 16;
    default: return 0;
  }
}

std::string conv_lut_error(isa::Dtype d) {
  if (conv_lut_entries(d) != 0) return {};
  const std::string_view n = isa::name(d);
  return "dtype " + (n.empty() ? std::to_string(static_cast<unsigned>(d)) : std::string(n)) +
         " has no converter table: a table converts the codes of an 8-bit or 4-bit input dtype (FP8_EXP2/3/4/5, "
         "FP4_EXP2, INT4)";
}

std::size_t conv_lut_slot(isa::Dtype d) {
  for (std::size_t i = 0; i < kDtypes.size(); ++i)
    if (kDtypes[i] == d) return i;
  return kDtypes.size();
}

isa::Dtype conv_lut_dtype(std::size_t slot) { return kDtypes.at(slot); }

}  // namespace pevp::pe
