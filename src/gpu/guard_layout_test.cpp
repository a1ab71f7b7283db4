// The guard-page layout, for many sizes and granularities: the data ends where the mapping
// (or its <256-byte tail canary) ends, starts 256-aligned, and has unmapped windows around.
#include "gpu/guard_layout.h"

#include <gtest/gtest.h>

namespace ptxforge::gpu {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

void expect_sound(const GuardPlan& p, const std::vector<size_t>& bytes) {
  ASSERT_EQ(p.slots.size(), bytes.size());
  size_t at = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const GuardSlot& s = p.slots[i];
    SCOPED_TRACE(testing::Message() << "buffer " << i << " of " << bytes[i] << " bytes, granularity " << p.granularity);
    EXPECT_EQ(s.bytes, bytes[i]);
    EXPECT_EQ(s.slot_offset, at) << "slots follow each other";
    EXPECT_EQ(s.data_offset % kGuardDataAlign, 0u) << "the data starts 256-aligned";
    EXPECT_EQ(s.map_offset % p.granularity, 0u);
    EXPECT_EQ(s.map_bytes % p.granularity, 0u);
    EXPECT_GE(s.data_offset, s.map_offset);
    EXPECT_LE(s.data_end(), s.map_end());
    EXPECT_GE(s.head_canary(), kGuardHeadCanary);
    EXPECT_LT(s.head_canary(), kGuardHeadCanary + p.granularity);
    EXPECT_LT(s.tail_canary(), kGuardDataAlign) << "past the end there is at most the alignment's slack";
    EXPECT_EQ(s.tail_canary() == 0, bytes[i] % kGuardDataAlign == 0) << "a multiple of 256 ends right at the mapping's end";
    EXPECT_GE(s.map_offset - s.slot_offset, kGuardWindow) << "an unmapped window before";
    EXPECT_GE(s.slot_offset + s.slot_bytes - s.map_end(), kGuardWindow) << "an unmapped window after";
    EXPECT_FALSE(s.open);
    at += s.slot_bytes;
  }
  EXPECT_EQ(p.reserve_bytes, at);
  EXPECT_EQ(p.reserve_bytes % p.granularity, 0u);
}

TEST(GuardLayout, ManySizesAndGranularities) {
  for (size_t g : {size_t{4096}, size_t{64} << 10, 2 * kMiB, 32 * kMiB}) {
    std::vector<size_t> sizes = {0, 1, 3, 4, 12, 255, 256, 257, 4095, 4096, 4097, g - 4096, g - 4095, g - 1, g, g + 1,
                                 2 * g, 4000012, 64 * kMiB + 12, size_t{1} << 40};
    auto p = plan_guards(sizes, g);
    ASSERT_TRUE(p.ok()) << p.error().message;
    expect_sound(*p, sizes);
  }
}

TEST(GuardLayout, ExactFigures) {
  auto p = plan_guards({1024 * 4, 1000003 * 4, 0}, 2 * kMiB);
  ASSERT_TRUE(p.ok());
  const GuardSlot& a = p->slots[0];
  EXPECT_EQ(a.map_offset, kGuardWindow);
  EXPECT_EQ(a.map_bytes, 2 * kMiB);
  EXPECT_EQ(a.data_end(), a.map_end()) << "4096 bytes end on the last mapped byte";
  const GuardSlot& b = p->slots[1];
  EXPECT_EQ(b.map_bytes, 4 * kMiB) << "4000012 bytes + 4 KiB of canary take two granules";
  EXPECT_EQ(b.tail_canary(), 244u) << "4000012 rounds up to 4000256";
  const GuardSlot& z = p->slots[2];
  EXPECT_EQ(z.data_offset, z.map_end()) << "an empty buffer points at the first unmapped byte";
  EXPECT_EQ(z.map_bytes, 2 * kMiB);
}

TEST(GuardLayout, AnOpenSlotMapsItsWindows) {
  auto p = plan_guards({100, 5000}, 2 * kMiB, 1);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->slots[0].open);
  const GuardSlot& s = p->slots[1];
  EXPECT_TRUE(s.open);
  EXPECT_EQ(s.map_offset, s.slot_offset);
  EXPECT_EQ(s.map_bytes, s.slot_bytes);
  EXPECT_GE(s.head_canary(), kGuardWindow);
  EXPECT_GE(s.tail_canary(), kGuardWindow);
  auto closed = plan_guards({100, 5000}, 2 * kMiB);
  EXPECT_EQ(closed->slots[1].data_offset, s.data_offset) << "opening a slot does not move the data";
}

TEST(GuardLayout, BadInputIsAnError) {
  EXPECT_FALSE(plan_guards({16}, 0).ok());
  EXPECT_FALSE(plan_guards({16}, 3 * 4096).ok());
  EXPECT_FALSE(plan_guards({16}, 128).ok());
  EXPECT_FALSE(plan_guards({kGuardMaxBytes + 1}, 2 * kMiB).ok());
  EXPECT_FALSE(plan_guards({SIZE_MAX}, 2 * kMiB).ok());
  EXPECT_FALSE(plan_guards({16}, 2 * kMiB, 1).ok());
  auto none = plan_guards({}, 2 * kMiB);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->reserve_bytes, 0u);
}

}  // namespace
}  // namespace ptxforge::gpu
