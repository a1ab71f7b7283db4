#include "ptx/target.h"

#include <gtest/gtest.h>

namespace ptxforge::ptx {
namespace {

Target t(const char* s) { return *Target::parse(s); }

TEST(Target, ParsesAndPrints) {
  EXPECT_EQ(t("sm_90a").sm, 90);
  EXPECT_EQ(t("sm_90a").suffix, 'a');
  EXPECT_EQ(t("sm_100f").str(), "sm_100f");
  EXPECT_FALSE(Target::parse("sm_"));
  EXPECT_FALSE(Target::parse("sm_90b"));
  EXPECT_FALSE(Target::parse("gfx90a"));
  EXPECT_EQ(PtxVersion::parse("8.0")->str(), "8.0");
  EXPECT_FALSE(PtxVersion::parse("8"));
}

TEST(Target, CompatibilityRules) {
  EXPECT_TRUE(satisfies(t("sm_90a"), t("sm_80")));  // plain: forward compatible
  EXPECT_TRUE(satisfies(t("sm_100"), t("sm_90")));
  EXPECT_FALSE(satisfies(t("sm_80"), t("sm_90")));
  EXPECT_TRUE(satisfies(t("sm_90a"), t("sm_90a")));  // a: exactly that architecture
  EXPECT_FALSE(satisfies(t("sm_90"), t("sm_90a")));
  EXPECT_FALSE(satisfies(t("sm_100a"), t("sm_90a")));
  EXPECT_TRUE(satisfies(t("sm_103f"), t("sm_100f")));  // f: the family
  EXPECT_FALSE(satisfies(t("sm_120f"), t("sm_100f")));
  EXPECT_FALSE(satisfies(t("sm_100"), t("sm_100f")));
}

TEST(Target, MinimumVersions) {
  EXPECT_EQ(min_version_for(t("sm_90a"))->str(), "8.0");
  EXPECT_EQ(min_version_for(t("sm_90"))->str(), "7.8");
  EXPECT_EQ(min_version_for(t("sm_120"))->str(), "8.7");
  EXPECT_FALSE(min_version_for(t("sm_91")));
}

}  // namespace
}  // namespace ptxforge::ptx
