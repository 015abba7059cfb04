// The sample streams the main job prints must be valid programs of their
// generation and must use what each generation adds.
#include <gtest/gtest.h>

#include "pevp/isa/decode.h"
#include "pevp/platform/samples.h"

namespace {
using namespace pevp;

TEST(Samples, EveryGenerationStreamIsValidIncludingStreamRules) {
  for (isa::Generation g : isa::kAllGenerations) {
    isa::StreamChecker checker;
    for (const auto& s : platform::sample_stream(g)) {
      const auto d = isa::decode(g, s.bytes);
      EXPECT_TRUE(d.valid()) << isa::name(g) << ": " << s.comment << ": " << d.violations.front().describe();
      EXPECT_TRUE(checker.check(d).empty()) << isa::name(g) << ": " << s.comment;
    }
  }
}

TEST(Samples, GenerationSpecificInstructionsAppearWhereTheyExist) {
  auto count = [](isa::Generation g, isa::Opcode op) {
    int n = 0;
    for (const auto& s : platform::sample_stream(g)) n += isa::decode(g, s.bytes).opcode == op;
    return n;
  };
  EXPECT_EQ(count(isa::Generation::CAYMAN, isa::Opcode::PE_MANAGE_SEED), 0);
  EXPECT_EQ(count(isa::Generation::MARIANA, isa::Opcode::PE_MANAGE_SEED), 1);
  EXPECT_EQ(count(isa::Generation::MARIANA, isa::Opcode::LDWEIGHTS_MX), 1);
  EXPECT_EQ(count(isa::Generation::MAVERICK, isa::Opcode::LDWEIGHTS_MX), 0);
}

}  // namespace
