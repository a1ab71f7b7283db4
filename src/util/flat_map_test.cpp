#include "util/flat_map.h"

#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>

#include <gtest/gtest.h>

namespace ptxforge {
namespace {

TEST(FlatMap, EmptyMapFindsNothingAndAllocatesNothing) {
  FlatMap<std::string_view, int> m;
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.find("x"), m.end());
  EXPECT_EQ(m.count("x"), 0u);
  EXPECT_EQ(m.erase("x"), 0u);
  EXPECT_EQ(m.begin(), m.end());
}

TEST(FlatMap, EmplaceKeepsTheFirstValue) {
  FlatMap<std::string_view, int> m;
  auto [it, fresh] = m.emplace("%r1", 1);
  EXPECT_TRUE(fresh);
  EXPECT_EQ(it->second, 1);
  auto [again, fresh2] = m.emplace("%r1", 2);
  EXPECT_FALSE(fresh2);
  EXPECT_EQ(again->second, 1);
  m["%r1"] = 5;
  EXPECT_EQ(m.find("%r1")->second, 5);
  EXPECT_EQ(m.size(), 1u);
}

// Against std::unordered_map: random inserts, erases and lookups over a pool of keys that
// share prefixes and lengths (like register names), across many growths.
TEST(FlatMap, AgreesWithUnorderedMapUnderRandomEdits) {
  std::vector<std::string> pool;
  for (int i = 0; i < 3000; ++i) pool.push_back("%r" + std::to_string(i));
  for (int i = 0; i < 500; ++i) pool.push_back("$L__BB" + std::to_string(i) + "_" + std::to_string(i * 7));
  pool.push_back("");
  std::mt19937 rng(7);
  FlatMap<std::string_view, int> flat;
  std::unordered_map<std::string_view, int> ref;
  for (int step = 0; step < 200000; ++step) {
    std::string_view k = pool[rng() % pool.size()];
    switch (rng() % 4) {
      case 0:
      case 1: {
        int v = static_cast<int>(rng());
        bool a = flat.emplace(k, v).second;
        bool b = ref.emplace(k, v).second;
        ASSERT_EQ(a, b) << k;
        break;
      }
      case 2: ASSERT_EQ(flat.erase(k), ref.erase(k)) << k; break;
      default: {
        auto f = flat.find(k);
        auto r = ref.find(k);
        ASSERT_EQ(f == flat.end(), r == ref.end()) << k;
        if (r != ref.end()) ASSERT_EQ(f->second, r->second);
      }
    }
    ASSERT_EQ(flat.size(), ref.size());
  }
  std::map<std::string_view, int> a(ref.begin(), ref.end()), b;
  for (auto& [k, v] : flat) b.emplace(k, v);
  EXPECT_EQ(a, b);
}

TEST(FlatMap, PointerKeysAndReserve) {
  std::vector<int> xs(10000);
  FlatMap<const int*, size_t> m;
  m.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) m.emplace(&xs[i], i);
  for (size_t i = 0; i < xs.size(); ++i) ASSERT_EQ(m.find(&xs[i])->second, i);
  int other = 0;
  EXPECT_EQ(m.count(&other), 0u);
}

TEST(FlatSet, InsertEraseCount) {
  FlatSet<std::string_view> s{"a", "b"};
  EXPECT_TRUE(s.contains("a"));
  EXPECT_FALSE(s.insert("a").second);
  EXPECT_TRUE(s.insert("c").second);
  EXPECT_EQ(s.erase("b"), 1u);
  EXPECT_EQ(s.count("b"), 0u);
  std::set<std::string_view> seen;
  s.for_each([&](std::string_view k) { seen.insert(k); });
  EXPECT_EQ(seen, (std::set<std::string_view>{"a", "c"}));
}

}  // namespace
}  // namespace ptxforge
