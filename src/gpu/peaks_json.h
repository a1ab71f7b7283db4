// JSON form of DevicePeaks (nlohmann): the worker's answer and the cache file share it.
#pragma once

#include <nlohmann/json.hpp>

#include "gpu/peaks.h"

namespace ptxforge::gpu {
void to_json(nlohmann::json& j, const DevicePeaks& p);
void from_json(const nlohmann::json& j, DevicePeaks& p);
}  // namespace ptxforge::gpu
