#include "pevp/isa_text/json.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pevp/isa_text/format.h"

namespace pevp::isa {

namespace {
// The value an enum name stands for, by asking value_text for every candidate.
std::optional<std::int64_t> value_from_name(const Leaf& leaf, const std::string& text) {
  for (std::int64_t v = 0; v < 256; ++v)
    if (value_text(leaf, v) == text) return v;
  return std::nullopt;
}

std::vector<std::uint8_t> bytes_from_hex(std::string_view path, const std::string& text, std::size_t size) {
  if (text.size() != 2 * size) throw EncodeError(std::string(path) + ": expected " + std::to_string(2 * size) + " hex digits");
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < size; ++i) {
    const std::string byte = text.substr(2 * i, 2);
    if (!std::isxdigit(static_cast<unsigned char>(byte[0])) || !std::isxdigit(static_cast<unsigned char>(byte[1])))
      throw EncodeError(std::string(path) + ": '" + text + "' is not hex");
    out.push_back(static_cast<std::uint8_t>(std::stoul(byte, nullptr, 16)));
  }
  return out;
}
}  // namespace

void set_json(Encoder& e, std::string_view path, const nlohmann::json& value) {
  if (value.is_number_integer()) {
    e.set(path, value.get<std::int64_t>());
    return;
  }
  if (!value.is_string()) throw EncodeError(std::string(path) + ": expected a number or a name, got " + value.dump());
  const std::string text = value.get<std::string>();
  const Leaf* leaf = e.leaf(path);
  if (leaf == nullptr) throw EncodeError(e.struct_name() + " has no field '" + std::string(path) + "'");
  if (leaf->kind == ValueKind::Reserved) {
    e.set_reserved(path, bytes_from_hex(path, text, leaf->size));
    return;
  }
  if (text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0) {
    std::size_t used = 0;
    std::uint64_t v = 0;
    try {
      v = std::stoull(text.substr(2), &used, 16);
    } catch (const std::logic_error&) {
      used = 0;
    }
    const bool digits_only = text.size() > 2 && used == text.size() - 2 &&
                             std::all_of(text.begin() + 2, text.end(),
                                         [](unsigned char c) { return std::isxdigit(c) != 0; });
    if (!digits_only || v > static_cast<std::uint64_t>(INT64_MAX))
      throw EncodeError(std::string(path) + ": '" + text + "' is not a hex number");
    e.set(path, static_cast<std::int64_t>(v));
    return;
  }
  if (auto v = value_from_name(*leaf, text)) {
    e.set(path, *v);
    return;
  }
  throw EncodeError(std::string(path) + ": '" + text + "' names no value of this field");
}

RawInstruction encode_json(Generation g, const nlohmann::json& object) {
  if (!object.is_object()) throw EncodeError("an instruction must be a JSON object");
  if (!object.contains("opcode") || !object["opcode"].is_string())
    throw EncodeError("an instruction needs an \"opcode\" name");
  const auto op = parse_opcode(object["opcode"].get<std::string>());
  if (!op) throw EncodeError("unknown opcode '" + object["opcode"].get<std::string>() + "'");
  Encoder enc(g, *op);
  auto ignored = [](const std::string& key) {
    return key == "opcode" || key == "generation" || key == "struct" || key == "valid" || key == "violations" ||
           key == "index" || (key.size() > 7 && key.compare(key.size() - 7, 7, ".member") == 0);
  };
  // Start addresses first: their marker bits pick the union members.
  for (const auto& [key, value] : object.items())
    if (!ignored(key) && key.size() > 11 && key.compare(key.size() - 11, 11, ".start_addr") == 0)
      set_json(enc, key, value);
  for (const auto& [key, value] : object.items())
    if (!ignored(key)) set_json(enc, key, value);
  return enc.bytes();
}

}  // namespace pevp::isa
