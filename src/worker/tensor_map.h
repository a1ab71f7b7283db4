// Encoding a task's tensor map with the candidate's choices (box, swizzle, interleave, L2
// promotion, out-of-bounds fill) through cuTensorMapEncodeTiled, as host code would before
// passing it to a TMA kernel by value (`.param .align 64 .b8 tm[128]`).
#pragma once

#include "worker/driver.h"
#include "task/launch_spec.h"

namespace ptxforge::gpu {

Result<CUtensorMap> encode_tensor_map(const Driver& d, const task::Param& map, const task::TensorMapChoice& choice,
                                      task::DType element, CUdeviceptr base, const task::Bindings& symbols);

}  // namespace ptxforge::gpu
