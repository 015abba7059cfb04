#include "pevp/platform/disasm.h"

#include <iomanip>
#include <ostream>

#include "pevp/isa_text/assembly.h"
#include "pevp/isa/decode.h"
#include "pevp/isa_text/format.h"

namespace pevp::platform {

DisasmStatus disassemble(const std::vector<std::uint8_t>& bytes, const DisasmOptions& options, std::ostream& out) {
  using namespace pevp::isa;
  const std::size_t records = bytes.size() / kInstructionBytes;
  const std::size_t trailing = bytes.size() % kInstructionBytes;
  bool all_valid = trailing == 0;
  StreamChecker stream;
  // The directive makes the text self-describing: `pe-vp asm` with another
  // --gen refuses it instead of assembling different bytes.
  if (!options.json) out << ".gen " << name(options.gen) << '\n';
  // On another geometry sbuf[P] / psum[P] mean other bytes: the text says which, and `pe-vp asm` checks it.
  const ArrayGeometry geo = options.geometry.value_or(preset_geometry(options.gen));
  if (!options.json && geo != preset_geometry(options.gen)) out << ".geometry " << geometry_operands(geo) << '\n';
  for (std::size_t i = 0; i < records; ++i) {
    Decoded d = decode(options.gen, geo, bytes.data() + i * kInstructionBytes);
    for (auto& v : stream.check(d)) d.violations.push_back(std::move(v));
    all_valid = all_valid && d.valid();
    if (options.json) {
      nlohmann::json j = to_json(d);
      j["index"] = i;
      out << j.dump() << '\n';
      continue;
    }
    out << to_assembly(d) << "  # [" << std::setw(4) << std::setfill('0') << i << std::setfill(' ') << "]\n";
    for (const Violation& v : d.violations) out << "#   ! instruction " << i << ": " << v.describe() << '\n';
  }
  if (trailing != 0) {
    const std::string message = std::to_string(trailing) + " trailing byte(s) at offset " +
                                std::to_string(records * kInstructionBytes) +
                                " do not make a whole 64-byte instruction";
    if (options.json)
      out << nlohmann::json{{"index", records}, {"valid", false}, {"error", message}}.dump() << '\n';
    else
      out << "#   ! " << message << '\n';
  }
  return all_valid ? DisasmStatus::Ok : DisasmStatus::InvalidRecords;
}

}  // namespace pevp::platform
