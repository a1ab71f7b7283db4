// The GPU's measured peaks, the bounds of the physical-limit gate: no kernel moves bytes faster
// than the best copy or read stream the worker could drive, does FP32 flops faster than
// dependent-free FMA chains on every SM, or tensor-core flops faster than mma.sync and wgmma
// loops of its type (gpu/peak_kernels.h). Measured once in a fresh worker (JobKind::peaks;
// method in docs/design.md) and cached in a file keyed by the device's name and the driver
// version, so the parent reads them without loading the driver. A table per architecture
// (data-sheet rates scaled by the SM count and the boost clock) stands in for a tensor peak
// that could not be measured.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/measurement.h"
#include "gpu/peak_kernels.h"
#include "task/task_spec.h"
#include "util/result.h"

namespace ptxforge::gpu {

// What a cache file must hold to be read: 2 added the tensor-core loops, so an older file is
// measured again rather than leaving tensor tasks on the loose table bound.
constexpr int kPeaksFormat = 2;

// The best rate one tensor-core loop reached: dense flops (2 * m * n * k per instruction).
struct TensorPeak {
  TensorOp op = TensorOp::mma_sync;
  TensorType type = TensorType::f16;
  double flops_per_s = 0;
};

struct DevicePeaks {
  int format = kPeaksFormat;
  std::string device;      // DeviceInfo::name
  int driver_version = 0;  // DeviceInfo::driver_version
  double copy_bytes_per_s = 0;  // a device-to-device copy, read and write bytes counted
  double read_bytes_per_s = 0;  // a read-only stream
  double fma_flops_per_s = 0;   // FP32 FMA, two flops each
  std::vector<TensorPeak> tensor;  // every loop this GPU runs (none before sm_80)
  std::string tensor_note;         // loops that could not be measured, and why; empty when all were
  std::string measured_at;      // UTC, ISO 8601
  // The bound for any kernel's memory traffic: the better of the two streams.
  double memory_bytes_per_s() const { return copy_bytes_per_s > read_bytes_per_s ? copy_bytes_per_s : read_bytes_per_s; }
  // Every figure is a positive finite number, and the device is named.
  bool complete() const;
  // The fastest measured loop a task of this precision could use (f16 covers f16 and bf16,
  // fp8 is e4m3), over mma.sync and wgmma; nullopt when none was measured (int8 never is).
  std::optional<TensorPeak> best_tensor(task::TensorCores precision) const;
};

// Dense tensor-core flops per second for `precision` on this device, from a table per
// architecture (flops per SM per clock: sm_80, sm_90, sm_100) times SMs and the boost clock;
// nullopt for precision none or an architecture not in the table.
std::optional<double> tensor_peak_flops(const DeviceInfo& info, task::TensorCores precision);

// The cache file for a device: <cache dir>/peaks/<name>-<driver>.json, the name made safe.
std::string peaks_cache_path(const std::string& cache_dir, const DeviceInfo& info);
// The cached peaks, or an error saying why not (no file, unreadable, corrupt, incomplete,
// or written for another device or driver).
Result<DevicePeaks> read_peaks_cache(const std::string& path, const DeviceInfo& info);
// Writes atomically (a temporary file renamed), creating the folder.
Status write_peaks_cache(const std::string& path, const DevicePeaks& peaks);

std::string peaks_to_json(const DevicePeaks& p);
Result<DevicePeaks> peaks_from_json(std::string_view text);

class JobRunner;
// The device's peaks: from the cache unless `remeasure`, else measured by a fresh worker
// (a WorkerClient is restarted before and after, so no earlier job's context or kernels share
// the GPU with the loops) and cached. `source` (optional) says which: "cached <path>" or "measured now, cached in <path>".
Result<DevicePeaks> device_peaks(JobRunner& worker, const DeviceInfo& info, const std::string& cache_dir, bool remeasure,
                                 std::string* source = nullptr);

}  // namespace ptxforge::gpu
