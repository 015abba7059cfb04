// Generations of the PE (TensorE) engine the ISA layer speaks, and what each
// one's memories look like (spec 000 sections 2, 11; FACTS.md "Geometry").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pevp::isa {

// The spec's code names. MARIANA_PLUS is a NeuronCore-v4 variant with the same
// instruction set and struct layouts as MARIANA.
enum class Generation : std::uint8_t { CAYMAN, MARIANA, MARIANA_PLUS, MAVERICK };

inline constexpr Generation kAllGenerations[] = {Generation::CAYMAN, Generation::MARIANA,
                                                 Generation::MARIANA_PLUS, Generation::MAVERICK};

std::string_view name(Generation g);
// Accepts the code name in any case, or v3 / v4 / v4+ / v5.
std::optional<Generation> parse_generation(std::string_view text);

// NeuronCore major version: CAYMAN 3, MARIANA and MARIANA_PLUS 4, MAVERICK 5.
int core_version(Generation g);
inline bool is_v4_plus(Generation g) { return core_version(g) >= 4; }
inline bool is_v4(Generation g) { return core_version(g) == 4; }
inline bool is_maverick(Generation g) { return g == Generation::MAVERICK; }

}  // namespace pevp::isa
