// `pe-vp disasm`: decode a binary stream of 64-byte instruction records into the
// assembly text of docs/assembly.md (which `pe-vp asm` turns back into the same
// bytes), or one JSON object per record; each broken rule is a comment line.
#pragma once

#include <optional>

#include "pevp/isa/geometry.h"

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "pevp/isa/generation.h"

namespace pevp::platform {

struct DisasmOptions {
  DisasmOptions(isa::Generation gen_ = isa::Generation::MARIANA, bool json_ = false,
                std::optional<isa::ArrayGeometry> geometry_ = std::nullopt)
      : gen(gen_), json(json_), geometry(geometry_) {}
  isa::Generation gen = isa::Generation::MARIANA;
  bool json = false;  // JSON Lines: one object per instruction
  // The machine the records are decoded for (--set geometry.*); none: the preset.
  std::optional<isa::ArrayGeometry> geometry;
};

// Exit status of a disassembly: every record valid, or not.
enum class DisasmStatus : int { Ok = 0, InvalidRecords = 1 };

// Decodes `bytes` as consecutive 64-byte records into `out`. Text output opens
// with `.gen G`, then one assembly line per record ending in `# [index]`; a
// record that breaks a rule is still printed in full (so it re-assembles with
// --allow-invalid), followed by comment lines naming its index and each rule. A
// trailing partial record is reported as an error comment. Never throws on any
// input.
DisasmStatus disassemble(const std::vector<std::uint8_t>& bytes, const DisasmOptions& options, std::ostream& out);

}  // namespace pevp::platform
