// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") and cuGetProcAddress,
// so nothing links libcuda: the same binary runs (and its tests start) on machines without
// a GPU, where driver() returns an error that says so. Only the worker's files (executor,
// worker_main, tensor_map, library_baseline, cublaslt, cudnn_sdpa, peak_measure, guarded_memory_cuda,
// input_check) include this: the parent process asks the worker (JobKind::device) and never
// loads libcuda itself.
#pragma once

#include <cuda.h>

#include <string>

#include "gpu/measurement.h"
#include "util/result.h"

namespace ptxforge::gpu {

struct Driver {
#define PTXFORGE_DRIVER_FUNCTIONS(X)                                                                              \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceGetAttribute) \
  X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuModuleLoadDataEx)  \
  X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncSetAttribute) X(cuFuncGetAttribute) X(cuMemAlloc)            \
  X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8) X(cuMemsetD32) X(cuMemsetD32Async) X(cuLaunchKernelEx)           \
  X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy)              \
  X(cuGetErrorName) X(cuGetErrorString) X(cuTensorMapEncodeTiled) X(cuMemGetInfo) X(cuCtxGetLimit) X(cuCtxSetLimit)          \
  X(cuMemcpyDtoD) X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuModuleGetGlobal)
// Loaded when present, nullptr otherwise: the virtual-memory calls that place candidate
// buffers with guard pages (worker/guarded_memory_cuda.cpp falls back to cuMemAlloc without them).
#define PTXFORGE_DRIVER_OPTIONAL_FUNCTIONS(X)                                                                   \
  X(cuMemGetAllocationGranularity) X(cuMemAddressReserve) X(cuMemCreate) X(cuMemMap) X(cuMemSetAccess)          \
  X(cuMemUnmap) X(cuMemRelease) X(cuMemAddressFree)
#define PTXFORGE_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  PTXFORGE_DRIVER_FUNCTIONS(PTXFORGE_DRIVER_MEMBER)
  PTXFORGE_DRIVER_OPTIONAL_FUNCTIONS(PTXFORGE_DRIVER_MEMBER)
#undef PTXFORGE_DRIVER_MEMBER
};

// Loads the driver once per process and calls cuInit. The error says what is missing.
Result<const Driver*> driver();

// "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered"
std::string describe(CUresult r);
// Errors after which the context is unusable and the process must be restarted.
bool is_sticky(CUresult r);

// The device's facts (gpu/measurement.h), read from the driver: called in the worker only.
Result<DeviceInfo> device_info(int ordinal = 0);

}  // namespace ptxforge::gpu
