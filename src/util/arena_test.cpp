#include "util/arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "util/small_vector.h"

namespace ptxforge {
namespace {

TEST(Arena, AllocationsAreAlignedAndDoNotOverlap) {
  Arena a;
  char* c = a.allocate_array<char>(3);
  auto* d = a.allocate_array<double>(2);
  auto* e = a.allocate_array<uint64_t>(1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d) % alignof(double), 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(e) % alignof(uint64_t), 0u);
  EXPECT_GE(reinterpret_cast<char*>(d), c + 3);
  EXPECT_GE(reinterpret_cast<char*>(e), reinterpret_cast<char*>(d + 2));
  EXPECT_EQ(a.allocate_array<int>(0), nullptr);
}

TEST(Arena, CopiesOutliveTheirSourceAndLargeRequestsGetTheirOwnBlock) {
  Arena a;
  std::string_view kept;
  {
    std::string s = "%rd12";
    kept = a.copy(s);
  }
  std::string big(1 << 20, 'x');  // larger than a first block
  std::string_view big_kept = a.copy(big);
  int small[3] = {1, 2, 3};
  int* copied = a.copy_array(small, 3);
  EXPECT_EQ(kept, "%rd12");
  EXPECT_EQ(big_kept, big);
  EXPECT_EQ(copied[2], 3);
  EXPECT_GE(a.bytes_reserved(), big.size());
}

TEST(SmallVector, StaysInlineThenGrowsKeepingItsElements) {
  SmallVector<int, 4> v;
  for (int i = 0; i < 4; ++i) v.push_back(i);
  const int* inline_data = v.begin();
  for (int i = 4; i < 100; ++i) v.push_back(i);
  ASSERT_EQ(v.size(), 100u);
  EXPECT_NE(v.begin(), inline_data);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(v[static_cast<size_t>(i)], i);
  v.clear();
  EXPECT_TRUE(v.empty());
}

}  // namespace
}  // namespace ptxforge
