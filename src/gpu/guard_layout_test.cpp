// The guard-page layout, for many sizes and granularities: the data ends where the mapping
// (or its <256-byte tail canary) ends, starts 256-aligned, and has unmapped windows around.
#include "gpu/guard_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>

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

// ---- plain placement with slack (memcheck, initcheck) ----------------------------------------

// The data in an allocation at `base`: where it must lie, for every size and base.
void expect_slack_sound(uint64_t base, size_t bytes, size_t g, uint64_t seed, size_t index) {
  SCOPED_TRACE(testing::Message() << bytes << " bytes at base " << std::hex << base << std::dec << ", granularity " << g
                                  << ", seed " << seed << ", buffer " << index);
  auto slot = plan_slack(bytes, g, seed, index);
  ASSERT_TRUE(slot) << slot.error().message;
  size_t off = slack_data_offset(base, *slot, g);
  const size_t padded = (bytes + 255) / 256 * 256;
  EXPECT_EQ((base + off) % kGuardDataAlign, 0u) << "the data starts 256-aligned";
  EXPECT_EQ((base + off + padded) % g, 0u) << "its rounded end on a granularity boundary, as under guard pages";
  EXPECT_GE(off, slot->min_head) << "the slack before it";
  EXPECT_GE(slot->min_head, kGuardHeadCanary);
  EXPECT_LE(off + bytes, slot->alloc_bytes) << "inside the allocation";
  if (base % g == 0) EXPECT_LT(slot->alloc_bytes - off - bytes, kGuardDataAlign) << "the allocation ends where the rounded data does";
  else EXPECT_LT(slot->alloc_bytes - off - bytes, g + kGuardDataAlign);
}

TEST(SlackLayout, EveryBufferEndsWhereGuardPagesWouldEndItWhateverTheBase) {
  for (size_t g : {size_t{256}, size_t{64} << 10, 2 * kMiB})
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{4}, size_t{255}, size_t{256}, size_t{257}, size_t{4096}, 2 * kMiB - 1,
                         2 * kMiB, 2 * kMiB + 1, size_t{67'108'864} + 12})
      for (uint64_t base : {uint64_t{0x7f0000000000}, uint64_t{0x7f0000000200}, uint64_t{0x7f00001ffe00}, uint64_t{0x7f0000100000}})
        for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{0xdeadbeefcafef00d}})
          expect_slack_sound(base, bytes, g, seed, 3);
}

TEST(SlackLayout, AKernelSeesTheSameAlignmentAsUnderGuardPages) {
  // The low bits a kernel can test (its pointer modulo the granularity) are the same under
  // verify's guard pages and the sanitizer's slack, for every buffer of a case.
  const std::vector<size_t> bytes = {4 * 1000, 4 * 4096, 1, 3 * kMiB + 100, 16};
  auto plan = plan_guards(bytes, 2 * kMiB);
  ASSERT_TRUE(plan);
  const uint64_t reservation = 0x7f4000000000;  // the driver aligns reservations to the granularity
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto slot = plan_slack(bytes[i], 2 * kMiB, 42, i);
    ASSERT_TRUE(slot);
    const uint64_t alloc = 0x7f8000000000 + i * 64 * kMiB;
    EXPECT_EQ((alloc + slack_data_offset(alloc, *slot, 2 * kMiB)) % (2 * kMiB), (reservation + plan->slots[i].data_offset) % (2 * kMiB))
        << "buffer " << i;
  }
}

TEST(SlackLayout, TheSlackIsTheSeedsAndOnlyTheSeeds) {
  // Deterministic: the same seed, buffer and size give the same slot.
  for (size_t i = 0; i < 4; ++i) {
    auto a = plan_slack(1000, 2 * kMiB, 7, i), b = plan_slack(1000, 2 * kMiB, 7, i);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->min_head, b->min_head);
    EXPECT_EQ(a->alloc_bytes, b->alloc_bytes);
  }
  // Another seed moves it: of 32 seeds, (nearly) every one gives buffer 0 its own slack, and
  // the buffers of one seed differ from each other.
  std::set<size_t> heads, in_case;
  for (uint64_t seed = 0; seed < 32; ++seed) heads.insert(plan_slack(1000, 2 * kMiB, seed, 0)->min_head);
  for (size_t i = 0; i < 32; ++i) in_case.insert(plan_slack(1000, 2 * kMiB, 99, i)->min_head);
  EXPECT_GE(heads.size(), 30u);
  EXPECT_GE(in_case.size(), 30u);
  // The drawn part spans the granularity, in 256-byte steps.
  size_t lo = SIZE_MAX, hi = 0;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    size_t h = plan_slack(64, 2 * kMiB, seed, 1)->min_head;
    EXPECT_EQ(h % kGuardDataAlign, 0u);
    lo = std::min(lo, h);
    hi = std::max(hi, h);
  }
  EXPECT_LT(lo, kGuardHeadCanary + 64 * 1024);
  EXPECT_GT(hi, kGuardHeadCanary + 2 * kMiB - 64 * 1024);
  EXPECT_LT(hi, kGuardHeadCanary + 2 * kMiB);
}

TEST(SlackLayout, BadInputIsAnErrorNotACrash) {
  EXPECT_FALSE(plan_slack(16, 100, 1, 0)) << "not a power of two";
  EXPECT_FALSE(plan_slack(16, 128, 1, 0)) << "below 256";
  auto huge = plan_slack(kGuardMaxBytes + 1, 2 * kMiB, 1, 0);
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("larger than"), std::string::npos);
  EXPECT_TRUE(plan_slack(kGuardMaxBytes, 2 * kMiB, 1, 0)) << "the largest allowed size still plans";
}

}  // namespace
}  // namespace ptxforge::gpu
