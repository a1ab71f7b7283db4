#include "ptx/symbols.h"

#include <gtest/gtest.h>

namespace ptxforge::ptx {
namespace {

// The quick rejection of ordinary register names must never turn a special register away.
TEST(SpecialRegisters, EveryFamilyIsKnownAndOrdinaryRegistersAreNot) {
  for (std::string_view n :
       {"%tid.x", "%ntid.y", "%laneid", "%warpid", "%nwarpid", "%ctaid.z", "%nctaid.x", "%smid", "%nsmid",
        "%lanemask_eq", "%lanemask_gt", "%clock", "%clock_hi", "%clock64", "%pm0", "%pm7", "%pm0_64", "%pm7_64",
        "%envreg0", "%envreg31", "%globaltimer", "%globaltimer_lo", "%total_smem_size", "%aggr_smem_size",
        "%dynamic_smem_size", "%reserved_smem_offset_begin", "%reserved_smem_offset_0", "%clusterid.x",
        "%cluster_ctarank", "%is_explicit_cluster", "%gridid", "%current_graph_exec", "WARP_SZ"})
    EXPECT_TRUE(is_special_register(n)) << n;
  for (std::string_view n : {"%r1", "%rd12", "%rs3", "%f0", "%fd9", "%p2", "%h1", "%hh4", "%b7", "%r", "%pred", "%q"})
    EXPECT_FALSE(is_special_register(n)) << n;
  EXPECT_EQ(special_register_type("%pm3_64"), ".u64");
  EXPECT_EQ(special_register_type("%reserved_smem_offset_end"), ".u32");
}

TEST(Scope, RangesAndNamesShareAScope) {
  Scope s;
  SymbolInfo info;
  info.type = ".b32";
  EXPECT_EQ(s.add_range("%r", 4, info), nullptr);
  ASSERT_NE(s.find("%r3"), nullptr);
  EXPECT_EQ(s.find("%r4"), nullptr);
  EXPECT_EQ(s.find("%r03"), nullptr) << "%r03 is not in %r<4>";
  SymbolInfo pred;
  pred.type = ".pred";
  EXPECT_NE(s.add("%r2", pred), nullptr) << "%r2 is already in %r<4>";
  EXPECT_EQ(s.add("%p", pred), nullptr);
  EXPECT_EQ(s.find("%p")->type, ".pred");
}

// Lookups are remembered; an addition through top() or module(), a push or a pop must
// forget them, so that a name declared later (or in an inner block) is seen.
TEST(ScopeStack, RememberedLookupsFollowDeclarations) {
  const std::string text = "%x %x";
  std::string_view x = std::string_view(text).substr(0, 2);
  ScopeStack st;
  st.push();
  EXPECT_EQ(st.find(x), nullptr);
  SymbolInfo outer;
  outer.type = ".b32";
  st.top().add(x, outer);
  ASSERT_NE(st.find(x), nullptr);
  EXPECT_EQ(st.find(x)->type, ".b32");
  st.push();
  SymbolInfo inner;
  inner.type = ".f32";
  st.top().add(x, inner);
  EXPECT_EQ(st.find(x)->type, ".f32") << "the inner declaration hides the outer one";
  st.pop();
  EXPECT_EQ(st.find(x)->type, ".b32");
  EXPECT_EQ(st.find(std::string_view(text).substr(3, 2))->type, ".b32") << "same name, another view";
  st.module().add("%y", inner);
  EXPECT_EQ(st.find("%y")->type, ".f32");
}

}  // namespace
}  // namespace ptxforge::ptx
