// The rule ids written in models/isa/src/validate.cpp, read from the source so
// that a new rule without a test case (test_rules.cpp) or without a number in
// the VP rule table (test_rule_table.cpp) fails a test.
#pragma once

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace isa_test {

inline std::set<std::string> validate_cpp_rule_ids() {
  std::ifstream in(PEVP_VALIDATE_CPP);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string src = ss.str();
  // Dotted string literals: rule ids, and a few field paths the rules read.
  const std::regex lit("\"([a-z0-9_]+\\.[a-z0-9_]+)\"");
  // Field paths only (they never appear as a rule id).
  const std::set<std::string> paths{"events.wait_sem",     "events.wait_value",   "events.update_sem",
                                    "events.update_value", "tile_sel.row_sel",    "tile_sel.col_sel",
                                    "flags.xpose_mode",    "header.opcode",       "src_mem_pattern.start_addr",
                                    "src_mem_pattern.scale_addr", "src_mem_pattern.num_elem",
                                    "dst_mem_pattern.start_addr", "src_seed_mem_pattern.start_addr",
                                    "dst_seed_mem_pattern.start_addr"};
  std::set<std::string> ids;
  for (auto it = std::sregex_iterator(src.begin(), src.end(), lit); it != std::sregex_iterator(); ++it)
    if (!paths.count((*it)[1])) ids.insert((*it)[1]);
  return ids;
}

}  // namespace isa_test
