// Human and machine renderings of decoded instructions: one readable line per
// instruction, and JSON whose keys are the spec's field names.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "pevp/isa/decode.h"

namespace pevp::isa {

// The printable name of a leaf's value ("BFLOAT16", "SINGLE", "0x2000000"), or
// the number when the value has no name.
std::string value_text(const Leaf& leaf, std::int64_t value);

// One line: "MATMUL in_dtype=BFLOAT16 ... src_mem_pattern={start_addr=0x0 ...}".
// Zero-valued reserved bytes and defaulted debug fields are left out.
std::string to_text(const Decoded& d);

// Every decoded field keyed by its path (enum values by name where the value has
// one), plus "generation", "opcode", "struct", "valid" and "violations".
nlohmann::json to_json(const Decoded& d);

}  // namespace pevp::isa
