#include "pevp/isa/generation.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace pevp::isa {

std::string_view name(Generation g) {
  switch (g) {
    case Generation::CAYMAN: return "CAYMAN";
    case Generation::MARIANA: return "MARIANA";
    case Generation::MARIANA_PLUS: return "MARIANA_PLUS";
    case Generation::MAVERICK: return "MAVERICK";
  }
  return "?";
}

std::optional<Generation> parse_generation(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  std::replace(s.begin(), s.end(), '-', '_');
  if (s == "CAYMAN" || s == "V3") return Generation::CAYMAN;
  if (s == "MARIANA" || s == "V4") return Generation::MARIANA;
  if (s == "MARIANA_PLUS" || s == "V4+" || s == "V4_PLUS") return Generation::MARIANA_PLUS;
  if (s == "MAVERICK" || s == "V5") return Generation::MAVERICK;
  return std::nullopt;
}

int core_version(Generation g) {
  switch (g) {
    case Generation::CAYMAN: return 3;
    case Generation::MARIANA:
    case Generation::MARIANA_PLUS: return 4;
    case Generation::MAVERICK: return 5;
  }
  return 0;
}

const Geometry& geometry(Generation g) {
  // FACTS.md "Geometry": SBUF 128 x 224 KiB (v3), 128 x 256 KiB (v4); PSUM
  // 128 x 16 KiB = 8 banks x 2 KiB on every generation. MAVERICK has no public
  // figures: the model keeps v4's memories and the spec's 256-column array.
  static const Geometry cayman{128, 224 * 1024, 16 * 1024, 2048, 8, 128, 128};
  static const Geometry mariana{128, 256 * 1024, 16 * 1024, 2048, 8, 128, 128};
  static const Geometry maverick{128, 256 * 1024, 16 * 1024, 2048, 8, 128, 256};
  switch (g) {
    case Generation::CAYMAN: return cayman;
    case Generation::MARIANA:
    case Generation::MARIANA_PLUS: return mariana;
    case Generation::MAVERICK: return maverick;
  }
  return mariana;
}

}  // namespace pevp::isa
