#include "gpu/peaks.h"

#include <cmath>
#include <ctime>
#include <stdexcept>
#include <filesystem>

#include <unistd.h>

#include <fmt/format.h>

#include "gpu/peaks_json.h"
#include "gpu/worker_client.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::gpu {

namespace fs = std::filesystem;
using nlohmann::json;

bool DevicePeaks::complete() const {
  auto good = [](double v) { return std::isfinite(v) && v > 0; };
  for (auto& t : tensor)
    if (!good(t.flops_per_s)) return false;
  return !device.empty() && good(copy_bytes_per_s) && good(read_bytes_per_s) && good(fma_flops_per_s);
}

std::optional<TensorPeak> DevicePeaks::best_tensor(task::TensorCores precision) const {
  auto covers = [&](TensorType t) {
    switch (precision) {
      case task::TensorCores::f16: return t == TensorType::f16 || t == TensorType::bf16;
      case task::TensorCores::tf32: return t == TensorType::tf32;
      case task::TensorCores::fp8: return t == TensorType::e4m3;
      default: return false;
    }
  };
  std::optional<TensorPeak> best;
  for (auto& t : tensor)
    if (covers(t.type) && (!best || t.flops_per_s > best->flops_per_s)) best = t;
  return best;
}

void to_json(json& j, const DevicePeaks& p) {
  json tensor = json::array();
  for (auto& t : p.tensor)
    tensor.push_back({{"op", std::string(to_string(t.op))}, {"type", std::string(to_string(t.type))}, {"flops_per_s", t.flops_per_s}});
  j = {{"format", p.format},
       {"device", p.device},
       {"driver_version", p.driver_version},
       {"copy_bytes_per_s", p.copy_bytes_per_s},
       {"read_bytes_per_s", p.read_bytes_per_s},
       {"fma_flops_per_s", p.fma_flops_per_s},
       {"tensor", tensor},
       {"tensor_note", p.tensor_note},
       {"measured_at", p.measured_at}};
}

void from_json(const json& j, DevicePeaks& p) {
  p.format = j.value("format", 1);  // files from before the field are format 1
  p.device = j.at("device").get<std::string>();
  p.driver_version = j.at("driver_version").get<int>();
  p.copy_bytes_per_s = j.at("copy_bytes_per_s").get<double>();
  p.read_bytes_per_s = j.at("read_bytes_per_s").get<double>();
  p.fma_flops_per_s = j.at("fma_flops_per_s").get<double>();
  p.tensor.clear();
  if (j.contains("tensor"))
    for (auto& t : j.at("tensor")) {
      auto op = tensor_op_from_string(t.at("op").get<std::string>());
      auto type = tensor_type_from_string(t.at("type").get<std::string>());
      if (!op || !type) throw std::runtime_error("unknown tensor loop " + t.dump());
      p.tensor.push_back({*op, *type, t.at("flops_per_s").get<double>()});
    }
  p.tensor_note = j.value("tensor_note", "");
  p.measured_at = j.value("measured_at", "");
}

std::string peaks_to_json(const DevicePeaks& p) { return json(p).dump(2) + "\n"; }

Result<DevicePeaks> peaks_from_json(std::string_view text) {
  try {
    return json::parse(text).get<DevicePeaks>();
  } catch (const std::exception& e) {
    return Error{fmt::format("not a peaks record: {}", e.what())};
  }
}

std::optional<double> tensor_peak_flops(const DeviceInfo& info, task::TensorCores precision) {
  // Dense flops per SM per clock (no sparsity): tf32, f16/bf16, fp8, int8 (ops). From the
  // vendors' data sheets: A100 312 TFLOP/s f16 at 108 SMs and 1.41 GHz; H100 SXM 989 at 132
  // SMs and 1.83 GHz; B200 2250 at 148 SMs and about 1.86 GHz. fp8 is absent before sm_89,
  // where a kernel cannot use it; f16's rate is then the bound.
  struct Row {
    int major;
    double tf32, f16, fp8, int8;
  };
  static const Row kRows[] = {{8, 1024, 2048, 2048, 4096}, {9, 2048, 4096, 8192, 8192}, {10, 4096, 8192, 16384, 16384}};
  if (precision == task::TensorCores::none || info.sms <= 0 || info.clock_khz <= 0) return std::nullopt;
  if (info.cc_major == 8 && info.cc_minor != 0) return std::nullopt;  // sm_86/sm_89 differ per product
  for (auto& r : kRows) {
    if (r.major != info.cc_major) continue;
    double per_clock = precision == task::TensorCores::tf32   ? r.tf32
                       : precision == task::TensorCores::f16  ? r.f16
                       : precision == task::TensorCores::fp8  ? r.fp8
                                                              : r.int8;
    return per_clock * info.sms * info.clock_khz * 1e3;
  }
  return std::nullopt;
}

std::string peaks_cache_path(const std::string& cache_dir, const DeviceInfo& info) {
  std::string safe;
  for (char c : info.name) safe += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  if (safe.empty()) safe = "unnamed";
  return (fs::path(cache_dir) / "peaks" / fmt::format("{}-{}.json", safe, info.driver_version)).string();
}

Result<DevicePeaks> read_peaks_cache(const std::string& path, const DeviceInfo& info) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Error{fmt::format("no cached peaks at {}", path)};
  auto text = read_file(path);
  if (!text) return text.error();
  auto p = peaks_from_json(*text);
  if (!p) return Error{fmt::format("the cached peaks in {} are corrupt ({})", path, p.error().message)};
  if (p->format < kPeaksFormat)
    return Error{fmt::format("the cached peaks in {} are format {}, from before the tensor-core loops (format {})", path, p->format,
                             kPeaksFormat)};
  if (!p->complete()) return Error{fmt::format("the cached peaks in {} are incomplete (a figure is missing, zero or negative)", path)};
  if (p->device != info.name || p->driver_version != info.driver_version)
    return Error{fmt::format("the cached peaks in {} are for {} (driver {}), not this {} (driver {})", path, p->device,
                             p->driver_version, info.name, info.driver_version)};
  return p;
}

Status write_peaks_cache(const std::string& path, const DevicePeaks& peaks) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", fs::path(path).parent_path().string(), ec.message())};
  std::string tmp = fmt::format("{}.tmp{}", path, static_cast<long>(::getpid()));
  if (auto s = write_file(tmp, peaks_to_json(peaks)); !s) return s;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Error{fmt::format("cannot write {}: {}", path, ec.message())};
  }
  return ok_status();
}

Result<DevicePeaks> device_peaks(JobRunner& worker, const DeviceInfo& info, const std::string& cache_dir, bool remeasure,
                                 std::string* source) {
  std::string path = peaks_cache_path(cache_dir, info);
  std::string why_not_cached;
  if (!remeasure) {
    auto cached = read_peaks_cache(path, info);
    if (cached) {
      if (source) *source = "cached in " + path;
      return cached;
    }
    why_not_cached = cached.error().message;
  }
  Job job;
  job.kind = JobKind::peaks;
  // A fresh worker: no module, allocation or kernel of an earlier job shares the GPU with the
  // loops; and the next job starts fresh too, without the loops' modules.
  auto* client = dynamic_cast<WorkerClient*>(&worker);
  if (client) client->stop();
  Outcome o = worker.run(job, std::chrono::seconds(180));
  if (client) client->stop();
  if (o.failure) return Error{fmt::format("measuring the peaks failed: {}: {}", to_string(o.failure->kind), o.failure->message)};
  if (!o.peaks) return Error{"the worker did not measure the peaks"};
  DevicePeaks p = *o.peaks;
  p.format = kPeaksFormat;
  p.device = info.name;
  p.driver_version = info.driver_version;
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  p.measured_at = stamp;
  if (!p.complete()) return Error{"the worker's peak measurement is incomplete (a figure is zero or missing)"};
  auto written = write_peaks_cache(path, p);
  if (source)
    *source = written ? fmt::format("measured now{}, cached in {}", why_not_cached.empty() ? "" : " (" + why_not_cached + ")", path)
                      : fmt::format("measured now, not cached: {}", written.error().message);
  return p;
}

}  // namespace ptxforge::gpu
