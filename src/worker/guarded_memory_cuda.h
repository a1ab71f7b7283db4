// The driver's virtual-memory calls behind gpu::VmmApi, in the worker only. open_vmm says
// why guard pages are unavailable (entry points missing, the device attribute
// CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED is 0, no granularity), so the
// executor can fall back to plain allocations with canaries and say so in the record.
#pragma once

#include <memory>

#include "worker/driver.h"
#include "worker/guarded_memory.h"
#include "util/result.h"

namespace ptxforge::gpu {

Result<std::unique_ptr<VmmApi>> open_vmm(const Driver& d, CUdevice dev);

}  // namespace ptxforge::gpu
