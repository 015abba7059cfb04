#include "pevp/isa/decode.h"

#include <cstring>
#include <stdexcept>

namespace pevp::isa {

std::string Violation::describe() const {
  std::string s;
  if (!field.empty()) s = field + " = " + std::to_string(value) + ": ";
  return s + message + " [" + rule + "]";
}

const DecodedField* Decoded::field(std::string_view path) const {
  if (index != nullptr) {
    const auto it = index->find(path);
    return it == index->end() ? nullptr : &fields[it->second];
  }
  for (const auto& f : fields)
    if (f.leaf.path == path) return &f;
  return nullptr;
}

std::int64_t Decoded::get(std::string_view path) const {
  const DecodedField* f = field(path);
  if (!f) throw std::out_of_range("instruction has no field '" + std::string(path) + "'");
  return f->value;
}

std::int64_t Decoded::get_or(std::string_view path, std::int64_t fallback) const {
  const DecodedField* f = field(path);
  return f ? f->value : fallback;
}

Decoded decode(Generation g, const std::uint8_t* bytes64) {
  Decoded d;
  d.gen = g;
  std::memcpy(d.raw.data(), bytes64, kInstructionBytes);
  d.opcode_byte = d.raw[0];
  d.opcode = opcode_from_byte(d.opcode_byte, g);
  if (d.opcode) {
    d.layout = &layout_of(g, struct_of(*d.opcode));
    const auto& leaves = leaves_of(*d.layout, d.raw.data());
    d.index = &leaf_index_of(*d.layout, d.raw.data());
    d.fields.reserve(leaves.size());
    for (const Leaf& leaf : leaves) d.fields.push_back({leaf, read_leaf_signed(d.raw.data(), leaf)});
  } else {
    d.fields.push_back({Leaf{"header.opcode", 0, 1, 0, 0, ValueKind::Opcode, false, "header"}, d.opcode_byte});
  }
  d.violations = validate(d);
  return d;
}

std::string firmware_self_name(const Decoded& d) {
  if (!d.opcode) return "";
  std::string n(firmware_self_name(*d.opcode));
  if (*d.opcode == Opcode::PE_MANAGE_SEED) {
    const auto mode = d.get("mode");
    n += mode == 1 ? "(LOAD)" : mode == 2 ? "(SAVE)" : "";
  }
  return n;
}

Decoded decode(Generation g, const RawInstruction& bytes) { return decode(g, bytes.data()); }

}  // namespace pevp::isa
