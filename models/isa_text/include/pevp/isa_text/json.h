// Instructions as JSON: the decoder's to_json (format.h) read back. Field
// values are numbers, "0x..." strings, or the names to_json prints (enum values
// by name, reserved bytes as hex).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "pevp/isa/encode.h"

namespace pevp::isa {

// Sets one leaf from a JSON value. Throws EncodeError naming the path.
void set_json(Encoder& e, std::string_view path, const nlohmann::json& value);

// Encodes a to_json()-shaped object (keys "generation" is optional, "opcode"
// required; "valid", "violations", "struct", "index" ignored). Start addresses
// are applied first so union members resolve.
RawInstruction encode_json(Generation g, const nlohmann::json& object);

}  // namespace pevp::isa
