// The host side of a case (task/host_case.h), shared by the GPU worker and the CPU engine:
// counts and scalars from the size set, inputs only for in/inout buffers, the same bytes for
// the same seed and other bytes for another, and a count that does not evaluate named.
#include "task/host_case.h"

#include <gtest/gtest.h>

#include <cstring>

namespace ptxforge::task {
namespace {

Task vector_add() {
  auto t = load_task(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/vector_add");
  EXPECT_TRUE(t.ok());
  return *t;
}

const SizeSet& set_named(const Task& t, const std::string& name) {
  for (auto* s : t.size_sets(true))
    if (s->name == name) return *s;
  throw std::runtime_error("no size set " + name);
}

TEST(HostCase, CountsScalarsAndInputsComeFromTheSizeSet) {
  Task t = vector_add();
  auto h = make_host_case(t, set_named(t, "tail"), 11);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->counts.at("a"), 4099u);
  EXPECT_EQ(h->counts.at("c"), 4099u);
  EXPECT_EQ(h->in.count("c"), 0u) << "an output has no initial contents";
  ASSERT_EQ(h->in.at("a").size(), 4 * 4099u);
  uint32_t n;
  std::memcpy(&n, h->scalars.at("n").data(), 4);
  EXPECT_EQ(n, 4099u);
  EXPECT_EQ(h->scalars.at("n")[4], 0) << "zero-padded past the u32";
  // uniform(-1, 1): every element inside the range.
  for (size_t i = 0; i < 4099; ++i) {
    float v;
    std::memcpy(&v, h->in.at("b").data() + 4 * i, 4);
    ASSERT_TRUE(v >= -1.0f && v <= 1.0f) << i << ": " << v;
  }
}

TEST(HostCase, TheSameSeedGivesTheSameBytesAndAnotherSeedOthers) {
  Task t = vector_add();
  const SizeSet& s = set_named(t, "small");
  auto one = make_host_case(t, s, 5), again = make_host_case(t, s, 5), other = make_host_case(t, s, 6);
  ASSERT_TRUE(one.ok() && again.ok() && other.ok());
  EXPECT_EQ(one->in.at("a"), again->in.at("a"));
  EXPECT_NE(one->in.at("a"), other->in.at("a"));
  EXPECT_NE(one->in.at("a"), one->in.at("b")) << "each buffer draws its own stream";
}

TEST(HostCase, ACountThatDoesNotEvaluateIsAnErrorNamingTheParameter) {
  Task t = vector_add();
  SizeSet s = set_named(t, "small");
  s.values.erase("n");
  auto h = make_host_case(t, s, 1);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().message.rfind("count of 'a': ", 0), 0u) << h.error().message;
}

}  // namespace
}  // namespace ptxforge::task
