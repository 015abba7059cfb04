// The PE micro-op roster (spec 000 section 2): opcodes, the operand struct each
// one carries (the struct2opcode map), and which exist in which generation.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "pevp/isa/generation.h"

namespace pevp::isa {

enum class Opcode : std::uint8_t {
  LDWEIGHTS = 0x01,
  MATMUL = 0x02,
  PE_REG_WRITE = 0x03,
  LDTAGS = 0x06,
  MATMUL_SPARSE = 0x07,
  PE_MANAGE_SEED = 0x08,
  LDWEIGHTS_MX = 0x09,
  MATMUL_MX = 0x0A,
  CONV_LUT_LOAD = 0xe4,
};

inline constexpr Opcode kAllOpcodes[] = {
    Opcode::LDWEIGHTS,      Opcode::MATMUL,       Opcode::PE_REG_WRITE,
    Opcode::LDTAGS,         Opcode::MATMUL_SPARSE, Opcode::PE_MANAGE_SEED,
    Opcode::LDWEIGHTS_MX,   Opcode::MATMUL_MX,    Opcode::CONV_LUT_LOAD};

// The 64-byte operand struct families. S_PE_REG_WRITE and S2_CONVLUT are the
// VP's own layouts (the spec names no struct for them; docs/model-decisions.md).
enum class StructKind : std::uint8_t {
  S3_LW,
  S3D3_MM,
  S4D3_MM,
  S2S1D2_PE_SEED,
  SMX1_LW,
  SMX1D3_MM,
  S3_LT,
  S_PE_REG_WRITE,
  S2_CONVLUT,
};

std::string_view name(Opcode op);        // "LDWEIGHTS"
std::string_view name(StructKind kind);  // "S3_LW"
std::optional<Opcode> parse_opcode(std::string_view text);  // by name, any case

// struct2opcode, inverted: the struct an opcode carries.
StructKind struct_of(Opcode op);

// Whether the opcode is part of the generation's instruction set. CAYMAN has
// {0x01, 0x02, 0x03, 0x06, 0x07}; the v4 parts add {0x08, 0x09, 0x0A, 0xe4};
// MAVERICK keeps all of them in its enum (validity rules then say which are
// usable there).
bool exists_in(Opcode op, Generation g);
// Whether a valid instruction of `op` can exist on `g`: exists_in, less the opcodes MAVERICK keeps in its enum but
// refuses (the v4 MX path LDWEIGHTS_MX / MATMUL_MX, rule mx.separate_ops_v4; PE_MANAGE_SEED, pe_seed.v4_only). The
// validity rules ask it, and so does the coverage model (what can be a hole).
bool usable_in(Opcode op, Generation g);
// Whether LDWEIGHTS / MATMUL take an MX source through the MXTENSOR_V2 pattern member on `g` (MAVERICK; rule
// mempattern.mx_v5_only elsewhere).
bool mx_in_dense_ops(Generation g);
// Whether `g` has MX sources at all: its own MX opcodes or the MXTENSOR_V2 member.
bool has_mx(Generation g);
// Decodes a raw header byte into an opcode of `g`, or nothing.
std::optional<Opcode> opcode_from_byte(std::uint8_t byte, Generation g);

}  // namespace pevp::isa
