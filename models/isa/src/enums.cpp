#include "pevp/isa/enums.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace pevp::isa {
namespace {
struct DtypeInfo {
  Dtype d;
  const char* name;
  unsigned bits;
};
constexpr DtypeInfo kDtypes[] = {
    {Dtype::INVALID, "INVALID", 0}, {Dtype::INT8, "INT8", 8},          {Dtype::UINT8, "UINT8", 8},
    {Dtype::INT16, "INT16", 16},    {Dtype::UINT16, "UINT16", 16},     {Dtype::BFLOAT16, "BFLOAT16", 16},
    {Dtype::FP16, "FP16", 16},      {Dtype::INT32, "INT32", 32},       {Dtype::UINT32, "UINT32", 32},
    {Dtype::FP32, "FP32", 32},      {Dtype::FP32R, "FP32R", 32},       {Dtype::FP8_EXP3, "FP8_EXP3", 8},
    {Dtype::FP8_EXP4, "FP8_EXP4", 8}, {Dtype::FP8_EXP5, "FP8_EXP5", 8}, {Dtype::FP4_EXP2, "FP4_EXP2", 4},
    {Dtype::FP8_EXP2, "FP8_EXP2", 8}, {Dtype::INT4, "INT4", 4},         {Dtype::SFP8_E8, "SFP8_E8", 8},
};
const DtypeInfo* find(Dtype d) {
  for (const auto& i : kDtypes)
    if (i.d == d) return &i;
  return nullptr;
}
}  // namespace

std::string_view name(Dtype d) {
  const DtypeInfo* i = find(d);
  return i ? i->name : "";
}
bool is_known_dtype(std::uint8_t ordinal) { return find(static_cast<Dtype>(ordinal)) != nullptr; }
unsigned dtype_bits(Dtype d) {
  const DtypeInfo* i = find(d);
  return i ? i->bits : 0;
}
bool is_fp8(Dtype d) {
  return d == Dtype::FP8_EXP2 || d == Dtype::FP8_EXP3 || d == Dtype::FP8_EXP4 || d == Dtype::FP8_EXP5;
}
std::optional<num::Format> element_format(Generation g, Dtype d) {
  switch (d) {
    case Dtype::BFLOAT16: return num::Format::BF16;
    case Dtype::FP16: return num::Format::FP16;
    case Dtype::FP8_EXP2: return num::Format::FP8_E2M5;
    case Dtype::FP8_EXP3: return num::Format::FP8_E3M4;
    case Dtype::FP8_EXP4: return is_v4_plus(g) ? num::Format::FP8_E4M3FN : num::Format::FP8_E4M3;
    case Dtype::FP8_EXP5: return num::Format::FP8_E5M2;
    case Dtype::FP4_EXP2: return num::Format::FP4_E2M1;
    case Dtype::INT4: return num::Format::INT4;
    case Dtype::SFP8_E8: return num::Format::E8M0;
    default: return std::nullopt;
  }
}

std::optional<Dtype> parse_dtype(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const auto& i : kDtypes)
    if (s == i.name) return i.d;
  return std::nullopt;
}

std::string_view name(Fp32Mode m) {
  switch (m) {
    case Fp32Mode::None: return "None";
    case Fp32Mode::Low: return "Low";
    case Fp32Mode::High: return "High";
    case Fp32Mode::Low_High: return "Low_High";
  }
  return "";
}

std::string_view name(PeSeedMode m) {
  switch (m) {
    case PeSeedMode::NONE: return "NONE";
    case PeSeedMode::LOAD_SEED: return "LOAD_SEED";
    case PeSeedMode::SAVE_SEED: return "SAVE_SEED";
  }
  return "";
}

std::string_view name(MxPerfMode m) {
  switch (m) {
    case MxPerfMode::NONE: return "NONE";
    case MxPerfMode::QUAD_ROW: return "QUAD_ROW";
    case MxPerfMode::QUAD_ROW_INTERLEAVE: return "QUAD_ROW_INTERLEAVE";
    case MxPerfMode::QUAD_ROW_TILED: return "QUAD_ROW_TILED";
    case MxPerfMode::OCT_ROW: return "OCT_ROW";
    case MxPerfMode::OCT_ROW_INTERLEAVE: return "OCT_ROW_INTERLEAVE";
    case MxPerfMode::OCT_ROW_TILED: return "OCT_ROW_TILED";
  }
  return "";
}

std::string psum_flags_name(std::uint8_t flags) {
  switch (flags) {
    case psum_flags::MULTI_MID: return "MULTI_MID";
    case psum_flags::MULTI_START: return "MULTI_START";
    case psum_flags::MULTI_END: return "MULTI_END";
    case psum_flags::SINGLE: return "SINGLE";
    case psum_flags::BEGIN_ACCUM_MATMUL_GROUP: return "BEGIN_ACCUM";
    case psum_flags::BEGIN_ACCUM_MATMUL_GROUP | psum_flags::END_MATMUL_GROUP: return "BEGIN_ACCUM|END";
    default: return "";
  }
}

std::optional<GroupSpan> decode_group_mask(std::uint8_t mask) {
  switch (mask) {
    case 0x1: return GroupSpan{0, 1};
    case 0x2: return GroupSpan{1, 1};
    case 0x4: return GroupSpan{2, 1};
    case 0x8: return GroupSpan{3, 1};
    case 0x3: return GroupSpan{0, 2};
    case 0xC: return GroupSpan{2, 2};
    case 0xF: return GroupSpan{0, 4};
    default: return std::nullopt;
  }
}

std::uint8_t group_mask(unsigned first_group, unsigned group_count) {
  const bool size_ok = group_count == 1 || group_count == 2 || group_count == 4;
  if (!size_ok || first_group % group_count != 0 || first_group + group_count > 4) return 0;
  return static_cast<std::uint8_t>(((1u << group_count) - 1) << first_group);
}

}  // namespace pevp::isa
