// The VP rule table (rules.h): every rule id a model can report has a stable,
// unique number in its range, and numbers map back to their ids. The ids are
// read from the sources themselves, so a new rule without a number fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "pevp/isa/rules.h"
#include "validate_source.h"

namespace {

using namespace pevp;

std::set<std::string> literals(const char* path, const std::string& pattern) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string src = ss.str();
  std::set<std::string> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(src.begin(), src.end(), re); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

TEST(RuleTable, NumbersAreUniqueSortedAndRoundTrip) {
  const auto& t = isa::rule_table();
  ASSERT_FALSE(t.empty());
  std::set<std::string_view> ids;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(t[i - 1].first, t[i].first);
    }
    EXPECT_TRUE(ids.insert(t[i].second).second) << "duplicate id " << t[i].second;
    EXPECT_EQ(isa::rule_number(t[i].second), t[i].first);
    EXPECT_EQ(isa::rule_id(t[i].first), t[i].second);
  }
  EXPECT_EQ(isa::rule_number("no.such_rule"), isa::kUnknownRule);
  EXPECT_EQ(isa::rule_id(0), "");
  EXPECT_EQ(isa::rule_id(0x1FF), "");
}

TEST(RuleTable, TheEnumCarriesTheNumbers) {
  EXPECT_EQ(static_cast<std::uint16_t>(isa::Rule::kOpcodeUnknown), 0x001);
  EXPECT_EQ(static_cast<std::uint16_t>(isa::Rule::kMmInDtype), 0x008);
  EXPECT_EQ(static_cast<std::uint16_t>(isa::Rule::kExecPsumGroupUnopened), 0x113);
  EXPECT_EQ(isa::id(isa::Rule::kSeqNotModelled), "seq.not_modelled");
  EXPECT_EQ(isa::rule_number(isa::id(isa::Rule::kConvlutLutDtype)), 0x039);
}

TEST(RuleTable, FixedNumbersDoNotMove) {
  // Numbers are part of the CSR contract (err_info.rule_id): pin a few.
  EXPECT_EQ(isa::rule_number("opcode.unknown"), 0x001);
  EXPECT_EQ(isa::rule_number("mm.in_dtype"), 0x008);
  EXPECT_EQ(isa::rule_number("convlut.lut_dtype"), 0x039);
  EXPECT_EQ(isa::rule_number("exec.opcode"), 0x100);
  EXPECT_EQ(isa::rule_number("exec.psum_group_unopened"), 0x113);
  EXPECT_EQ(isa::rule_number("seq.not_modelled"), 0x200);
}

TEST(RuleTable, EveryIsaRuleHasANumberInTheIsaRange) {
  const auto ids = isa_test::validate_cpp_rule_ids();
  ASSERT_GT(ids.size(), 40u);
  for (const auto& id : ids) {
    const auto n = isa::rule_number(id);
    EXPECT_TRUE(n >= 0x001 && n < 0x100) << id << " -> " << n;
  }
}

TEST(RuleTable, EveryExecutionRuleHasANumberInTheExecRange) {
  const auto ids = literals(PEVP_EXECUTOR_CPP, "ExecResult::error\\(\"([a-z0-9_.]+)\"");
  ASSERT_GT(ids.size(), 10u);
  for (const auto& id : ids) {
    const auto n = isa::rule_number(id);
    EXPECT_TRUE(n >= 0x100 && n < 0x200) << id << " -> " << n;
  }
}

TEST(RuleTable, EverySeqRuleHasANumberInTheSeqRange) {
  std::set<std::string> ids;
  for (const char* path : {PEVP_SEQ_CPP, PEVP_PE_ARRAY_CPP, PEVP_FIRMWARE_CPP})
    for (const auto& id : literals(path, "\"(seq\\.[a-z0-9_]+)\"")) ids.insert(id);
  ASSERT_GE(ids.size(), 3u);  // seq.not_modelled keeps its number though no handler reports it any more
  for (const auto& id : ids) {
    const auto n = isa::rule_number(id);
    EXPECT_TRUE(n >= 0x200 && n < 0x300) << id << " -> " << n;
  }
}

}  // namespace
