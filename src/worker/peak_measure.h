// Measuring the GPU's peaks in the worker (gpu/peaks.h says what they bound): a copy and a
// read-only stream over buffers far larger than the L2, and dependent-free FP32 FMA chains on
// every SM, each the best of several timed runs. The kernels are PTX, compiled by the driver.
#pragma once

#include <string>

#include "worker/driver.h"
#include "gpu/peak_kernels.h"
#include "gpu/peaks.h"

namespace ptxforge::gpu {

Result<DevicePeaks> measure_peaks(const Driver& d, const DeviceInfo& info);

}  // namespace ptxforge::gpu
