// `pe-vp disasm`: decode a binary stream of 64-byte instruction records, one
// readable line (or one JSON object) per record, with the rules each breaks.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "pevp/isa/generation.h"

namespace pevp::platform {

struct DisasmOptions {
  isa::Generation gen = isa::Generation::MARIANA;
  bool json = false;  // JSON Lines: one object per instruction
};

// Exit status of a disassembly: every record valid, or not.
enum class DisasmStatus : int { Ok = 0, InvalidRecords = 1 };

// Decodes `bytes` as consecutive 64-byte records into `out`. A record that
// breaks a rule is still printed with its fields, followed by its violations
// (each naming the record index); a trailing partial record is reported as an
// error. Never throws on any input.
DisasmStatus disassemble(const std::vector<std::uint8_t>& bytes, const DisasmOptions& options, std::ostream& out);

}  // namespace pevp::platform
