#include "agent/gpu_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace ptxforge::agent {
namespace {

GpuPool two_fake_gpus() { return GpuPool({{0, {"/bin/false"}}, {1, {"/bin/false"}}}); }

TEST(GpuPool, LeasesSpreadOverFreeGpus) {
  GpuPool pool = two_fake_gpus();
  auto a = pool.acquire();
  auto b = pool.acquire();
  EXPECT_NE(a.ordinal(), b.ordinal());
  EXPECT_NE(&a.pipeline(), &b.pipeline());
}

TEST(GpuPool, TheLeastUsedFreeGpuIsTaken) {
  GpuPool pool = two_fake_gpus();
  { auto a = pool.acquire(); }  // GPU 0 once
  { auto b = pool.acquire(); }  // then GPU 1, the less used
  { auto c = pool.acquire(); }
  { auto d = pool.acquire(); }
  EXPECT_EQ(pool.uses(0), 2);
  EXPECT_EQ(pool.uses(1), 2);
}

TEST(GpuPool, NoGpuIsLeasedTwiceAtOnce) {
  GpuPool pool = two_fake_gpus();
  std::atomic<int> busy[2] = {0, 0};
  std::atomic<bool> overlap{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        auto lease = pool.acquire();
        if (busy[lease.ordinal()]++ != 0) overlap = true;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --busy[lease.ordinal()];
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_FALSE(overlap);
  EXPECT_EQ(pool.uses(0) + pool.uses(1), 120);
  EXPECT_GT(pool.uses(0), 0);
  EXPECT_GT(pool.uses(1), 0);
}

TEST(GpuPool, ParsesGpuLists) {
  EXPECT_TRUE(parse_gpu_list("all")->empty());
  EXPECT_EQ(*parse_gpu_list("0,1"), (std::vector<int>{0, 1}));
  EXPECT_EQ(*parse_gpu_list(" 3 "), (std::vector<int>{3}));
  EXPECT_FALSE(parse_gpu_list("0,0"));
  EXPECT_FALSE(parse_gpu_list("x"));
  EXPECT_FALSE(parse_gpu_list("-1"));
  EXPECT_FALSE(parse_gpu_list(""));
  EXPECT_EQ(resolve_gpus({2, 5}), (std::vector<int>{2, 5}));
}

}  // namespace
}  // namespace ptxforge::agent
