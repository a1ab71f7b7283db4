#include <gtest/gtest.h>

#include <filesystem>

#include <unistd.h>

#include "gpu/fake_worker.h"
#include "gpu/peaks.h"
#include "util/text.h"

namespace ptxforge::gpu {
namespace {

namespace fs = std::filesystem;

DeviceInfo h200() {
  DeviceInfo i;
  i.name = "NVIDIA H200";
  i.driver_version = 13000;
  i.cc_major = 9;
  i.sms = 132;
  i.clock_khz = 1980000;
  return i;
}

DevicePeaks measured() {
  DevicePeaks p;
  p.copy_bytes_per_s = 4.25e12;
  p.read_bytes_per_s = 4.4e12;
  p.fma_flops_per_s = 6.5e13;
  return p;
}

class PeaksCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/peaks-test-" + std::to_string(::getpid());
    fs::remove_all(dir_);
    worker_.answer = [this](const Job& job) {
      Outcome o;
      if (job.kind == JobKind::peaks) o.peaks = measured();
      else o.failure = Failure{FailureKind::protocol, "unexpected job", ""};
      return o;
    };
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
  FakeWorker worker_;
};

TEST_F(PeaksCache, MeasuresOnFirstNeedThenReadsTheCache) {
  std::string source;
  auto p = device_peaks(worker_, h200(), dir_, false, &source);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(worker_.jobs.size(), 1u);
  EXPECT_EQ(p->device, "NVIDIA H200") << "the parent names the device, not the worker";
  EXPECT_EQ(p->driver_version, 13000);
  EXPECT_FALSE(p->measured_at.empty());
  EXPECT_NE(source.find("measured now"), std::string::npos) << source;
  std::string path = peaks_cache_path(dir_, h200());
  EXPECT_EQ(path, dir_ + "/peaks/NVIDIA_H200-13000.json");
  ASSERT_TRUE(fs::exists(path));
  auto again = device_peaks(worker_, h200(), dir_, false, &source);
  ASSERT_TRUE(again);
  EXPECT_EQ(worker_.jobs.size(), 1u) << "read from the cache, no second measurement";
  EXPECT_DOUBLE_EQ(again->copy_bytes_per_s, 4.25e12);
  EXPECT_DOUBLE_EQ(again->memory_bytes_per_s(), 4.4e12);
  EXPECT_EQ(source, "cached in " + path);
  ASSERT_TRUE(device_peaks(worker_, h200(), dir_, /*remeasure=*/true));
  EXPECT_EQ(worker_.jobs.size(), 2u);
}

TEST_F(PeaksCache, ACorruptOrForeignCacheIsMeasuredAgainAndReplaced) {
  std::string path = peaks_cache_path(dir_, h200());
  fs::create_directories(fs::path(path).parent_path());
  for (std::string bad : {std::string("not json"), std::string("{\"device\": \"NVIDIA H200\"}"),
                          std::string("{\"device\":\"NVIDIA H200\",\"driver_version\":13000,\"copy_bytes_per_s\":-1,"
                                      "\"read_bytes_per_s\":1,\"fma_flops_per_s\":1}"),
                          std::string("{\"device\":\"NVIDIA H100\",\"driver_version\":13000,\"copy_bytes_per_s\":1,"
                                      "\"read_bytes_per_s\":1,\"fma_flops_per_s\":1}"),
                          std::string("")}) {
    ASSERT_TRUE(write_file(path, bad));
    auto cached = read_peaks_cache(path, h200());
    EXPECT_FALSE(cached) << bad;
    size_t before = worker_.jobs.size();
    std::string source;
    auto p = device_peaks(worker_, h200(), dir_, false, &source);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ(worker_.jobs.size(), before + 1) << bad;
    EXPECT_NE(source.find(cached.error().message), std::string::npos) << source;
    EXPECT_TRUE(read_peaks_cache(path, h200())) << "replaced by a good record";
  }
}

TEST_F(PeaksCache, AFailedOrEmptyMeasurementIsAnErrorAndNothingIsCached) {
  worker_.answer = [](const Job&) {
    Outcome o;
    o.failure = Failure{FailureKind::driver, "no CUDA driver", ""};
    return o;
  };
  auto p = device_peaks(worker_, h200(), dir_, false);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("no CUDA driver"), std::string::npos);
  worker_.answer = [](const Job&) {
    Outcome o;
    o.peaks = DevicePeaks{};  // all zeros
    return o;
  };
  EXPECT_FALSE(device_peaks(worker_, h200(), dir_, false));
  EXPECT_FALSE(fs::exists(peaks_cache_path(dir_, h200())));
}

TEST(Peaks, JsonRoundTrip) {
  DevicePeaks p = measured();
  p.device = "X";
  p.driver_version = 12080;
  p.measured_at = "2026-01-01T00:00:00Z";
  auto back = peaks_from_json(peaks_to_json(p));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->device, "X");
  EXPECT_EQ(back->driver_version, 12080);
  EXPECT_DOUBLE_EQ(back->fma_flops_per_s, 6.5e13);
  EXPECT_EQ(back->measured_at, p.measured_at);
}

TEST(Peaks, TensorTableScalesWithSmsAndClock) {
  DeviceInfo i = h200();
  EXPECT_NEAR(*tensor_peak_flops(i, task::TensorCores::f16), 1.0705e15, 1e12);
  EXPECT_NEAR(*tensor_peak_flops(i, task::TensorCores::tf32), 1.0705e15 / 2, 1e12);
  EXPECT_FALSE(tensor_peak_flops(i, task::TensorCores::none));
  i.cc_major = 7;
  EXPECT_FALSE(tensor_peak_flops(i, task::TensorCores::f16)) << "no row: no figure, never a guess";
}

}  // namespace
}  // namespace ptxforge::gpu
