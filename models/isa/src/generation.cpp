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

}  // namespace pevp::isa
