// GuardedCase against a fake driver: the reserve/create/map/access sequence, the freeing
// order, and every call failing in turn (nothing leaks, the failure is passed on).
#include "worker/guarded_memory.h"

#include <gtest/gtest.h>

#include <map>

namespace ptxforge::gpu {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

class FakeVmm : public VmmApi {
 public:
  std::vector<std::string> log;
  std::string fail_at;  // "create#2": the second create fails
  bool oom = false;
  std::map<uint64_t, size_t> reserved, mapped;
  std::map<uint64_t, size_t> handles;  // live handles
  uint64_t next_address = 0x7f0000000000, next_handle = 1;

  size_t granularity() const override { return 2 * kMiB; }
  VmmStatus reserve(size_t bytes, uint64_t& address) override {
    if (auto f = step("reserve")) return f;
    address = next_address;
    next_address += bytes;
    reserved[address] = bytes;
    return std::nullopt;
  }
  VmmStatus create(size_t bytes, uint64_t& handle) override {
    if (auto f = step("create")) return f;
    handle = next_handle++;
    handles[handle] = bytes;
    return std::nullopt;
  }
  VmmStatus map(uint64_t address, size_t bytes, uint64_t handle) override {
    if (auto f = step("map")) return f;
    EXPECT_TRUE(handles.count(handle));
    mapped[address] = bytes;
    return std::nullopt;
  }
  VmmStatus set_access(uint64_t address, size_t bytes) override {
    if (auto f = step("access")) return f;
    EXPECT_EQ(mapped.at(address), bytes);
    return std::nullopt;
  }
  void unmap(uint64_t address, size_t bytes) override {
    log.push_back("unmap");
    EXPECT_EQ(mapped.at(address), bytes);
    mapped.erase(address);
  }
  void release(uint64_t handle) override {
    log.push_back("release");
    EXPECT_EQ(handles.erase(handle), 1u);
  }
  void address_free(uint64_t address, size_t bytes) override {
    log.push_back("free");
    EXPECT_TRUE(mapped.empty()) << "every mapping is gone before the reservation is freed";
    EXPECT_EQ(reserved.at(address), bytes);
    reserved.erase(address);
  }
  bool clean() const { return reserved.empty() && mapped.empty() && handles.empty(); }

 private:
  std::map<std::string, int> counts_;
  VmmStatus step(const std::string& what) {
    std::string name = what + "#" + std::to_string(++counts_[what]);
    log.push_back(name);
    if (name == fail_at) return VmmFailure{oom, what + " failed"};
    return std::nullopt;
  }
};

GuardPlan plan(std::vector<size_t> bytes) {
  auto p = plan_guards(bytes, 2 * kMiB);
  EXPECT_TRUE(p.ok());
  return *p;
}

TEST(GuardedCase, PlacesEverySlotThenFreesInOrder) {
  FakeVmm vmm;
  VmmFailure why;
  {
    auto c = GuardedCase::place(vmm, plan({4096, 12}), why);
    ASSERT_NE(c, nullptr) << why.message;
    EXPECT_EQ(vmm.log, (std::vector<std::string>{"reserve#1", "create#1", "map#1", "access#1", "create#2", "map#2", "access#2"}));
    EXPECT_EQ(c->data(0), c->base() + c->plan().slots[0].data_offset);
    EXPECT_EQ(c->map_start(1), c->base() + c->plan().slots[1].map_offset);
    EXPECT_EQ(vmm.mapped.size(), 2u);
    vmm.log.clear();
  }
  EXPECT_EQ(vmm.log, (std::vector<std::string>{"unmap", "release", "unmap", "release", "free"}));
  EXPECT_TRUE(vmm.clean());
}

TEST(GuardedCase, EveryCallFailingLeavesNothingBehind) {
  for (std::string at : {"reserve#1", "create#1", "map#1", "access#1", "create#2", "map#2", "access#2", "create#3"}) {
    for (bool oom : {false, true}) {
      SCOPED_TRACE(at);
      FakeVmm vmm;
      vmm.fail_at = at;
      vmm.oom = oom;
      VmmFailure why;
      auto c = GuardedCase::place(vmm, plan({100, 200, 300}), why);
      EXPECT_EQ(c, nullptr);
      EXPECT_EQ(why.out_of_memory, oom) << "the kind of failure is passed on";
      EXPECT_NE(why.message.find("failed"), std::string::npos);
      EXPECT_TRUE(vmm.clean()) << "reserved " << vmm.reserved.size() << ", mapped " << vmm.mapped.size() << ", handles "
                               << vmm.handles.size();
    }
  }
}

TEST(GuardedCase, NoBuffersReservesNothing) {
  FakeVmm vmm;
  VmmFailure why;
  auto c = GuardedCase::place(vmm, plan({}), why);
  ASSERT_NE(c, nullptr);
  c.reset();
  EXPECT_TRUE(vmm.log.empty());
}

}  // namespace
}  // namespace ptxforge::gpu
