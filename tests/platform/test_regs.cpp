// `pe-vp regs` output, against the spec's numbers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "pevp/platform/regs.h"

namespace {
using namespace pevp;

TEST(Regs, JsonListsEveryExpandedRegisterWithFields) {
  std::ostringstream out;
  platform::print_regfile(**platform::regfile_by_name("top"), true, out);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["regfile"], "tpb_arr_seq_top_host_visible");
  ASSERT_EQ(j["registers"].size(), 358u);
  const auto& q = j["registers"][0];
  EXPECT_EQ(q["name"], "queue_cfg");
  EXPECT_EQ(q["offset"], 0);
  ASSERT_EQ(q["fields"].size(), 3u);
  EXPECT_EQ(q["fields"][2]["name"], "disable_dependency_check");
  EXPECT_EQ(q["fields"][2]["lsb"], 8);
  const auto& p = j["registers"][1];
  EXPECT_EQ(p["name"], "perf_cntr_cfg");
  EXPECT_EQ(p["fields"][1]["access"], "PulseOnW");
}

TEST(Regs, ProtectedTextShowsThrottleReset) {
  std::ostringstream out;
  platform::print_regfile(**platform::regfile_by_name("protected"), false, out);
  EXPECT_NE(out.str().find("throttle_cfg"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("disable_throttle[8:0]"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("reset 0x1ff"), std::string::npos) << out.str();
}

TEST(Regs, UnknownNameIsRejected) {
  EXPECT_FALSE(platform::regfile_by_name("bogus").has_value());
  EXPECT_TRUE(platform::regfile_by_name("vp").has_value());
}

}  // namespace
