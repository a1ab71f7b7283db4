// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") and cuGetProcAddress,
// so nothing links libcuda: the same binary runs (and its tests start) on machines without
// a GPU, where driver() returns an error that says so. Only files under gpu/ include this.
#pragma once

#include <cuda.h>

#include <string>

#include "util/result.h"

namespace ptxforge::gpu {

struct Driver {
#define PTXFORGE_DRIVER_FUNCTIONS(X)                                                                              \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceGetAttribute) \
  X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuModuleLoadDataEx)  \
  X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncSetAttribute) X(cuFuncGetAttribute) X(cuMemAlloc)            \
  X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8) X(cuMemsetD32) X(cuMemsetD32Async) X(cuLaunchKernelEx)           \
  X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy)              \
  X(cuGetErrorName) X(cuGetErrorString) X(cuTensorMapEncodeTiled) X(cuMemGetInfo) X(cuCtxGetLimit)
#define PTXFORGE_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  PTXFORGE_DRIVER_FUNCTIONS(PTXFORGE_DRIVER_MEMBER)
#undef PTXFORGE_DRIVER_MEMBER
};

// Loads the driver once per process and calls cuInit. The error says what is missing.
Result<const Driver*> driver();

// "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered"
std::string describe(CUresult r);
// Errors after which the context is unusable and the process must be restarted.
bool is_sticky(CUresult r);

// Facts `ptxforge doctor` and the prompt's hardware section show.
struct DeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  int max_threads_per_block = 0;
  int shared_per_block = 0, shared_per_block_optin = 0, shared_per_sm = 0;
  int registers_per_block = 0, registers_per_sm = 0;
  int l2_bytes = 0;
  size_t memory_bytes = 0;
  int clock_khz = 0, memory_clock_khz = 0, bus_width_bits = 0;
  int driver_version = 0;  // 13000 for 13.0
  std::string arch() const;  // "sm_90a" for 9.0 (the arch-specific target of the device)
};
Result<DeviceInfo> device_info(int ordinal = 0);

}  // namespace ptxforge::gpu
