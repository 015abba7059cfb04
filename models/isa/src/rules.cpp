// The VP rule table (rules.h): the numbers are written in PEVP_RULES.
#include "pevp/isa/rules.h"

#include <algorithm>

namespace pevp::isa {
namespace {

std::vector<std::pair<std::uint16_t, std::string_view>> build() {
  std::vector<std::pair<std::uint16_t, std::string_view>> t = {
#define PEVP_RULE_ENTRY(name, number, id) {number, id},
      PEVP_RULES(PEVP_RULE_ENTRY)
#undef PEVP_RULE_ENTRY
  };
  std::sort(t.begin(), t.end());
  return t;
}

const std::vector<std::pair<std::uint16_t, std::string_view>>& table() {
  static const auto t = build();
  return t;
}

}  // namespace

std::string_view id(Rule rule) { return rule_id(static_cast<std::uint16_t>(rule)); }

const std::vector<std::pair<std::uint16_t, std::string_view>>& rule_table() { return table(); }

std::uint16_t rule_number(std::string_view id) {
  for (const auto& [n, name] : table())
    if (name == id) return n;
  return kUnknownRule;
}

std::string_view rule_id(std::uint16_t number) {
  const auto& t = table();
  auto it = std::lower_bound(t.begin(), t.end(), number, [](const auto& e, std::uint16_t n) { return e.first < n; });
  return it != t.end() && it->first == number ? it->second : std::string_view{};
}

}  // namespace pevp::isa
