#include "pevp/isa_text/format.h"

#include "pevp/isa/hex.h"

#include <sstream>

#include "pevp/isa/enums.h"

namespace pevp::isa {

namespace {

std::string reserved_hex(const Decoded& d, const Leaf& leaf) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (unsigned i = 0; i < leaf.size; ++i) {
    const std::uint8_t b = d.raw[leaf.offset + i];
    s += digits[b >> 4];
    s += digits[b & 0xF];
  }
  return s;
}

bool skip_in_text(const DecodedField& f) {
  if (f.leaf.kind == ValueKind::Reserved || f.leaf.path.find("reserved_bitfield") != std::string::npos)
    return f.value == 0;
  if (f.leaf.path == "header.opcode" || f.leaf.path == "header.inst_word_len") return true;
  if (f.leaf.top == "header" || f.leaf.top == "events") return f.value == 0;
  return false;
}
}  // namespace

std::string value_text(const Leaf& leaf, std::int64_t value) {
  const auto u8 = static_cast<std::uint8_t>(value);
  std::string_view named;
  switch (leaf.kind) {
    case ValueKind::Address: return hex(static_cast<std::uint64_t>(value));
    case ValueKind::Opcode: return hex(static_cast<std::uint64_t>(value));
    case ValueKind::Dtype:
      if (value == 0) return "0";
      named = name(static_cast<Dtype>(u8));
      break;
    case ValueKind::Fp32Mode:
      if (value <= 3) named = name(static_cast<Fp32Mode>(u8));
      break;
    case ValueKind::SeedMode:
      if (value <= 2) named = name(static_cast<PeSeedMode>(u8));
      break;
    case ValueKind::MxPerfMode:
      if (value <= 6) named = name(static_cast<MxPerfMode>(u8));
      break;
    case ValueKind::PsumAccumulateFlags: {
      const std::string n = psum_flags_name(u8);
      if (!n.empty()) return n;
      break;
    }
    case ValueKind::ZeroRegion:
      if (value <= 3) return "BANKS_" + std::to_string(zero_region_banks(static_cast<ZeroRegion>(u8)));
      break;
    case ValueKind::GroupMask: return hex(static_cast<std::uint64_t>(value));
    case ValueKind::WaitMode:
      if (value == 0) named = "NONE";
      if (value == 1) named = "WAIT_GE";
      if (value == 2) named = "WAIT_EQ";
      break;
    case ValueKind::UpdateMode: {
      static const char* names[] = {"NONE", "SET", "INCREMENT", "DECREMENT"};
      if (value <= 3) named = names[value];
      break;
    }
    case ValueKind::AccumulateMode: named = value ? "ACCUMULATE" : "OVERWRITE"; break;
    case ValueKind::LoadOrder: named = value ? "FIRST_COL_FIRST" : "LAST_COL_FIRST"; break;
    case ValueKind::TileRowSize:
      if (value == tile_size::R64) named = "R64";
      if (value == tile_size::R128) named = "R128";
      break;
    case ValueKind::TileColSize:
      if (value == tile_size::C128) named = "C128";
      if (value == tile_size::C256) named = "C256";
      break;
    case ValueKind::PerfOpt:
      if (value == 0) named = "NONE";
      if (value == 1) named = "FP8_DOUBLE_ROW";
      break;
    default: break;
  }
  return named.empty() ? std::to_string(value) : std::string(named);
}

std::string to_text(const Decoded& d) {
  std::ostringstream o;
  if (!d.opcode) {
    o << "UNKNOWN opcode=" << hex(d.opcode_byte) << " raw=";
    for (auto b : d.raw) o << "0123456789abcdef"[b >> 4] << "0123456789abcdef"[b & 0xF];
    return o.str();
  }
  o << name(*d.opcode);
  // Leaves of one composite print inside "top={...}"; the elements of an array
  // ("num_elem[0]", "num_elem[1]", ...) print as "num_elem=[a,b]".
  std::string_view open_top;
  std::string open_array;
  auto close_array = [&] {
    if (!open_array.empty()) o << ']';
    open_array.clear();
  };
  for (const auto& f : d.fields) {
    if (skip_in_text(f)) continue;
    const std::string text =
        f.leaf.kind == ValueKind::Reserved ? reserved_hex(d, f.leaf) : value_text(f.leaf, f.value);
    const bool composite = f.leaf.path != f.leaf.top;
    const std::string_view key = composite ? f.leaf.path.substr(f.leaf.top.size() + 1) : f.leaf.path;
    const auto bracket = key.find('[');
    const std::string array(bracket == std::string_view::npos ? std::string_view() : key.substr(0, bracket));
    if (!open_array.empty() && (array != open_array || open_top != f.leaf.top)) close_array();
    if (!open_top.empty() && open_top != f.leaf.top) {
      o << '}';
      open_top = {};
    }
    if (!array.empty() && array == open_array) {
      o << ',' << text;
      continue;
    }
    if (composite && open_top.empty()) {
      o << ' ' << f.leaf.top << "={";
      open_top = f.leaf.top;
    } else {
      o << ' ';
    }
    if (array.empty()) {
      o << key << '=' << text;
    } else {
      o << array << "=[" << text;
      open_array = array;
    }
  }
  close_array();
  if (!open_top.empty()) o << '}';
  return o.str();
}

nlohmann::json to_json(const Decoded& d) {
  nlohmann::json j = nlohmann::json::object();
  j["generation"] = std::string(name(d.gen));
  j["opcode"] = d.opcode ? std::string(name(*d.opcode)) : hex(d.opcode_byte);
  if (d.layout) j["struct"] = std::string(name(d.layout->kind));
  for (const auto& f : d.fields) {
    if (f.leaf.path == "header.opcode") continue;  // "opcode" above
    if (f.leaf.kind == ValueKind::Reserved) {
      j[f.leaf.path] = reserved_hex(d, f.leaf);
      continue;
    }
    const std::string text = value_text(f.leaf, f.value);
    const bool named = f.leaf.kind != ValueKind::Unsigned && f.leaf.kind != ValueKind::Signed &&
                       f.leaf.kind != ValueKind::Address && f.leaf.kind != ValueKind::GroupMask &&
                       text != std::to_string(f.value);
    if (named)
      j[f.leaf.path] = text;
    else
      j[f.leaf.path] = f.value;
  }
  if (d.layout) {
    for (const FieldDesc& fd : d.layout->fields)
      if (fd.part == Part::MemPattern3D)
        j[std::string(fd.name) + ".member"] =
            std::string(name(pattern_member(static_cast<std::uint32_t>(d.get(std::string(fd.name) + ".start_addr")))));
  }
  j["valid"] = d.valid();
  nlohmann::json v = nlohmann::json::array();
  for (const auto& x : d.violations)
    v.push_back({{"field", x.field}, {"value", x.value}, {"rule", x.rule}, {"message", x.message}});
  j["violations"] = v;
  return j;
}

}  // namespace pevp::isa
