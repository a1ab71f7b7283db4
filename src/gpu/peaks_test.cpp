#include <gtest/gtest.h>

#include <filesystem>

#include <unistd.h>

#include "testing/fake_worker.h"
#include "gpu/peaks.h"
#include "gpu/peaks_json.h"
#include "gpu/worker_client.h"
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

TEST(PeaksFreshWorker, TheMeasurementGetsAWorkerOfItsOwnAndTheNextJobAnother) {
  // A worker that answers every job with peaks (tensor loops included) and never exits.
  DevicePeaks answer = measured();
  answer.device = "w";
  answer.tensor = {{TensorOp::wgmma, TensorType::f16, 8.2e14}};
  std::string line = "{\"peaks\":" + nlohmann::json::parse(peaks_to_json(answer)).dump() + "}";
  WorkerClient w({"/bin/sh", "-c", "while read l; do echo '" + line + "'; done"});
  Job job;
  job.kind = JobKind::device;
  w.run(job, std::chrono::seconds(5));  // an earlier job: the worker is up
  ASSERT_EQ(w.starts(), 1);
  std::string dir = ::testing::TempDir() + "/peaks-fresh-" + std::to_string(::getpid());
  auto p = device_peaks(w, h200(), dir, /*remeasure=*/true);
  fs::remove_all(dir);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(w.starts(), 2) << "the measurement ran in a worker started for it";
  EXPECT_FALSE(w.running()) << "and that worker is gone before the next job";
  ASSERT_EQ(p->tensor.size(), 1u);
  EXPECT_DOUBLE_EQ(p->tensor[0].flops_per_s, 8.2e14);
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

TEST(Peaks, TensorLoopsRoundTripAndAnOlderFormatIsMeasuredAgain) {
  DevicePeaks p = measured();
  p.device = "X";
  p.tensor = {{TensorOp::wgmma, TensorType::bf16, 8.3e14}, {TensorOp::mma_sync, TensorType::e4m3, 9.1e14}};
  p.tensor_note = "wgmma tf32: loading: CUDA_ERROR_INVALID_PTX";
  auto back = peaks_from_json(peaks_to_json(p));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->tensor.size(), 2u);
  EXPECT_EQ(back->tensor[1].op, TensorOp::mma_sync);
  EXPECT_EQ(back->tensor[1].type, TensorType::e4m3);
  EXPECT_DOUBLE_EQ(back->tensor[0].flops_per_s, 8.3e14);
  EXPECT_EQ(back->tensor_note, p.tensor_note);
  EXPECT_EQ(back->format, kPeaksFormat);
  // An unknown loop is a corrupt record, not a silently dropped figure.
  std::string text = peaks_to_json(p);
  text.replace(text.find("\"e4m3\""), 6, "\"fp4\"");
  EXPECT_FALSE(peaks_from_json(text));
  // A negative tensor figure makes the record incomplete.
  p.tensor[0].flops_per_s = -1;
  EXPECT_FALSE(p.complete());
  // A record without the format field is format 1: read_peaks_cache refuses it, so
  // device_peaks measures the tensor loops instead of leaving the table bound in place.
  auto old = peaks_from_json(R"({"device":"NVIDIA H200","driver_version":13000,"copy_bytes_per_s":1,"read_bytes_per_s":1,"fma_flops_per_s":1})");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->format, 1);
}

TEST_F(PeaksCache, ACacheFromBeforeTheTensorLoopsIsReplaced) {
  std::string path = peaks_cache_path(dir_, h200());
  fs::create_directories(fs::path(path).parent_path());
  ASSERT_TRUE(write_file(path, R"({"device":"NVIDIA H200","driver_version":13000,"copy_bytes_per_s":1,)"
                               R"("read_bytes_per_s":1,"fma_flops_per_s":1})"));
  auto cached = read_peaks_cache(path, h200());
  ASSERT_FALSE(cached);
  EXPECT_NE(cached.error().message.find("format 1, from before the tensor-core loops"), std::string::npos) << cached.error().message;
  ASSERT_TRUE(device_peaks(worker_, h200(), dir_, false));
  EXPECT_EQ(worker_.jobs.size(), 1u);
  auto now = read_peaks_cache(path, h200());
  ASSERT_TRUE(now) << now.error().message;
  EXPECT_EQ(now->format, kPeaksFormat);
}

TEST(Peaks, BestTensorPicksTheFastestLoopOfThePrecisionsTypes) {
  DevicePeaks p = measured();
  p.tensor = {{TensorOp::mma_sync, TensorType::f16, 5.6e14}, {TensorOp::wgmma, TensorType::bf16, 8.3e14},
              {TensorOp::wgmma, TensorType::f16, 8.2e14},   {TensorOp::wgmma, TensorType::tf32, 4.1e14},
              {TensorOp::wgmma, TensorType::e4m3, 1.6e15}};
  auto f16 = p.best_tensor(task::TensorCores::f16);
  ASSERT_TRUE(f16);
  EXPECT_EQ(f16->type, TensorType::bf16) << "f16 tasks take bf16 too: the faster of the two bounds them";
  EXPECT_DOUBLE_EQ(p.best_tensor(task::TensorCores::tf32)->flops_per_s, 4.1e14);
  EXPECT_DOUBLE_EQ(p.best_tensor(task::TensorCores::fp8)->flops_per_s, 1.6e15);
  EXPECT_FALSE(p.best_tensor(task::TensorCores::int8)) << "no int8 loop: the table stands in";
  EXPECT_FALSE(p.best_tensor(task::TensorCores::none));
  EXPECT_FALSE(measured().best_tensor(task::TensorCores::f16)) << "nothing measured";
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
