// The rule ids models/isa/src/validate.cpp reports, read from the source (every
// `Rule::k...` it names, mapped to its id through the rule table of rules.h) so
// that a new rule without a test case (test_rules.cpp) fails a test.
#pragma once

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "pevp/isa/rules.h"

namespace isa_test {

inline std::set<std::string> validate_cpp_rule_ids() {
  static const std::map<std::string, std::string> by_enumerator = {
#define PEVP_RULE_NAME(name, number, id) {#name, id},
      PEVP_RULES(PEVP_RULE_NAME)
#undef PEVP_RULE_NAME
  };
  std::ifstream in(PEVP_VALIDATE_CPP);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string src = ss.str();
  const std::regex named("Rule::(k[A-Za-z0-9]+)");
  std::set<std::string> ids;
  for (auto it = std::sregex_iterator(src.begin(), src.end(), named); it != std::sregex_iterator(); ++it) {
    const auto found = by_enumerator.find((*it)[1]);
    ids.insert(found == by_enumerator.end() ? "unknown enumerator " + std::string((*it)[1]) : found->second);
  }
  return ids;
}

}  // namespace isa_test
