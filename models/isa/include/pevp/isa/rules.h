// The VP rule table: one stable number per rule id, so an error record read over
// the CSRs (vp_seq err_info.rule_id, 16 bits) names the broken rule. Three ranges:
//   0x001..  ISA validity rules (validate.cpp, docs/isa.md), static per instruction;
//   0x100..  execution rules of the PE array (executor.cpp: the access pattern at
//            execution time, PSUM groups, the loaded stationary);
//   0x200..  SEQ / firmware rules (not modelled yet, semaphore misuse, ...).
// Numbers are append-only: a released number never changes meaning. The table is a
// model decision (D-RULE-TABLE, docs/model-decisions.md); docs/errors.md lists it.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace pevp::isa {

inline constexpr std::uint16_t kUnknownRule = 0xFFFF;

// The rule's number, or kUnknownRule for an id the table does not have.
std::uint16_t rule_number(std::string_view rule_id);
// The id of a number, or "" when unknown.
std::string_view rule_id(std::uint16_t number);
// Every (number, id) pair in number order.
const std::vector<std::pair<std::uint16_t, std::string_view>>& rule_table();

}  // namespace pevp::isa
