#include "pevp/isa/opcode.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace pevp::isa {

std::string_view name(Opcode op) {
  switch (op) {
    case Opcode::LDWEIGHTS: return "LDWEIGHTS";
    case Opcode::MATMUL: return "MATMUL";
    case Opcode::PE_REG_WRITE: return "PE_REG_WRITE";
    case Opcode::LDTAGS: return "LDTAGS";
    case Opcode::MATMUL_SPARSE: return "MATMUL_SPARSE";
    case Opcode::PE_MANAGE_SEED: return "PE_MANAGE_SEED";
    case Opcode::LDWEIGHTS_MX: return "LDWEIGHTS_MX";
    case Opcode::MATMUL_MX: return "MATMUL_MX";
    case Opcode::CONV_LUT_LOAD: return "CONV_LUT_LOAD";
  }
  return "?";
}

std::string_view name(StructKind kind) {
  switch (kind) {
    case StructKind::S3_LW: return "S3_LW";
    case StructKind::S3D3_MM: return "S3D3_MM";
    case StructKind::S4D3_MM: return "S4D3_MM";
    case StructKind::S2S1D2_PE_SEED: return "S2S1D2_PE_SEED";
    case StructKind::SMX1_LW: return "SMX1_LW";
    case StructKind::SMX1D3_MM: return "SMX1D3_MM";
    case StructKind::S3_LT: return "S3_LT";
    case StructKind::S_PE_REG_WRITE: return "S_PE_REG_WRITE";
    case StructKind::S2_CONVLUT: return "S2_CONVLUT";
  }
  return "?";
}

std::optional<Opcode> parse_opcode(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  for (Opcode op : kAllOpcodes)
    if (s == name(op)) return op;
  return std::nullopt;
}

StructKind struct_of(Opcode op) {
  switch (op) {
    case Opcode::LDWEIGHTS: return StructKind::S3_LW;
    case Opcode::MATMUL: return StructKind::S3D3_MM;
    case Opcode::PE_REG_WRITE: return StructKind::S_PE_REG_WRITE;
    case Opcode::LDTAGS: return StructKind::S3_LT;
    case Opcode::MATMUL_SPARSE: return StructKind::S4D3_MM;
    case Opcode::PE_MANAGE_SEED: return StructKind::S2S1D2_PE_SEED;
    case Opcode::LDWEIGHTS_MX: return StructKind::SMX1_LW;
    case Opcode::MATMUL_MX: return StructKind::SMX1D3_MM;
    case Opcode::CONV_LUT_LOAD: return StructKind::S2_CONVLUT;
  }
  return StructKind::S3_LW;
}

bool exists_in(Opcode op, Generation g) {
  switch (op) {
    case Opcode::LDWEIGHTS:
    case Opcode::MATMUL:
    case Opcode::PE_REG_WRITE:
    case Opcode::LDTAGS:
    case Opcode::MATMUL_SPARSE: return true;
    case Opcode::PE_MANAGE_SEED:
    case Opcode::LDWEIGHTS_MX:
    case Opcode::MATMUL_MX:
    case Opcode::CONV_LUT_LOAD: return is_v4_plus(g);
  }
  return false;
}

bool usable_in(Opcode op, Generation g) {
  if (!exists_in(op, g)) return false;
  switch (op) {
    case Opcode::PE_MANAGE_SEED:
    case Opcode::LDWEIGHTS_MX:
    case Opcode::MATMUL_MX: return is_v4(g);
    default: return true;
  }
}

bool mx_in_dense_ops(Generation g) { return is_maverick(g); }

bool has_mx(Generation g) { return usable_in(Opcode::LDWEIGHTS_MX, g) || mx_in_dense_ops(g); }

std::optional<Opcode> opcode_from_byte(std::uint8_t byte, Generation g) {
  for (Opcode op : kAllOpcodes)
    if (static_cast<std::uint8_t>(op) == byte && exists_in(op, g)) return op;
  return std::nullopt;
}

}  // namespace pevp::isa
