// Targets and versions: parsing, the compatibility rules of `a` and `f` targets, and the
// arch-specific rows of the ISA table as ptxas 13 has them on Hopper and Blackwell.
#include "ptx/target.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ptx/front_end.h"
#include "ptx/isa.h"

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

// The families as ptxas 13 has them: sm_100f holds sm_100 and sm_103, sm_110f only sm_110
// (CUDA 12.9's sm_101), sm_120f sm_120 and sm_121.
TEST(Target, BlackwellFamilies) {
  EXPECT_TRUE(satisfies(t("sm_100a"), t("sm_100f")));
  EXPECT_TRUE(satisfies(t("sm_103a"), t("sm_100f")));
  EXPECT_TRUE(satisfies(t("sm_103f"), t("sm_100f")));
  EXPECT_FALSE(satisfies(t("sm_100f"), t("sm_103f")));  // a family target names its oldest member
  EXPECT_FALSE(satisfies(t("sm_110a"), t("sm_100f")));
  EXPECT_TRUE(satisfies(t("sm_110a"), t("sm_110f")));
  EXPECT_TRUE(satisfies(t("sm_121a"), t("sm_120f")));
  EXPECT_FALSE(satisfies(t("sm_120a"), t("sm_100f")));
  EXPECT_FALSE(satisfies(t("sm_100f"), t("sm_100a")));  // `a` features are not the family's
  EXPECT_EQ(min_version_for(t("sm_110a"))->str(), "9.0");
  EXPECT_EQ(min_version_for(t("sm_100f"))->str(), "8.8");
}

// Instructions that once needed exactly sm_90a are family features on Blackwell: a module
// for any Blackwell `a` or `f` target may use them, a plain target may not.
TEST(Target, ArchSpecificRowsOnBlackwell) {
  auto errors_on = [](const char* target, const char* version, const std::string& line) {
    std::string text = fmt::format(".version {}\n.target {}\n.address_size 64\n.visible .entry k(.param .u64 p)\n"
                                   ".maxnreg 128\n{{\n.reg .b64 %rd<4>;\n{}\nret;\n}}\n", version, target, line);
    auto r = check_source(text, ValidateOptions{false});
    std::vector<std::string> ids;
    for (auto& d : r.diags.list())
      if (d.severity == Severity::error) ids.push_back(d.check_id);
    return ids;
  };
  const std::string setmaxnreg = "setmaxnreg.inc.sync.aligned.u32 240;";
  const std::string replace = "tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;";
  for (const char* tg : {"sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_120a", "sm_120f", "sm_121a"}) {
    EXPECT_TRUE(errors_on(tg, "9.0", setmaxnreg).empty()) << tg;
    EXPECT_TRUE(errors_on(tg, "9.0", replace).empty()) << tg;
  }
  EXPECT_EQ(errors_on("sm_100a", "8.6", setmaxnreg).size(), 0u);  // sm_100a's own minimum suffices
  EXPECT_EQ(errors_on("sm_100", "9.0", setmaxnreg), std::vector<std::string>{"needs-target"});
  EXPECT_EQ(errors_on("sm_90", "9.0", replace), std::vector<std::string>{"needs-target"});
  // tcgen05: the sm_100 and sm_110 families, not sm_120.
  EXPECT_TRUE(errors_on("sm_103a", "9.0", "tcgen05.fence::before_thread_sync;").empty());
  EXPECT_TRUE(errors_on("sm_110f", "9.0", "tcgen05.fence::before_thread_sync;").empty());
  EXPECT_EQ(errors_on("sm_120a", "9.0", "tcgen05.fence::before_thread_sync;"), std::vector<std::string>{"needs-target"});
}

}  // namespace
}  // namespace ptxforge::ptx

namespace ptxforge::ptx {
namespace {

TEST(UnknownTarget, KnownTargetsPassAndOthersGetTheNearestAsAGuess) {
  EXPECT_FALSE(unknown_target("sm_90a").has_value());
  EXPECT_FALSE(unknown_target("sm_100f").has_value());
  EXPECT_EQ(unknown_target("sm_99a"), "sm_90a");
  ASSERT_TRUE(unknown_target("compute_90; rm -rf /").has_value());
  EXPECT_EQ(*unknown_target(std::string(100, 'x')), "");  // too long to guess from
}

}  // namespace
}  // namespace ptxforge::ptx
