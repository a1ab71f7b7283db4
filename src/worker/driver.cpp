#include "worker/driver.h"

#include <dlfcn.h>

#include <fmt/format.h>
#include <string_view>

namespace ptxforge::gpu {

namespace {

Result<const Driver*> load() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return Error{fmt::format("no CUDA driver: cannot load libcuda.so.1 ({}); a GPU and its driver are needed", dlerror())};
  using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto get = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!get) return Error{"the CUDA driver is too old: it has no cuGetProcAddress_v2 (need a CUDA 12+ driver)"};
  static Driver d;
  const char* missing = nullptr;
  auto resolve = [&](const char* name, void** slot, bool required = true) {
    CUdriverProcAddressQueryResult status{};
    // Asked for at CUDA 13.0, a name gives its newest signature, which must be the one
    // cuda.h declares under that name. cuCtxSynchronize is the exception: 13.0 added
    // cuCtxSynchronize_v2(CUcontext) under the same name, while cuda.h's cuCtxSynchronize
    // is the old (void) one; calling the new one through the old type reads a garbage
    // context and fails with CUDA_ERROR_CONTEXT_IS_DESTROYED (seen on the H200).
    int version = std::string_view(name) == "cuCtxSynchronize" ? 2000 : CUDA_VERSION;
    if (get(name, slot, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || !*slot)
      if (required && !missing) missing = name;
    if (!required && status != CU_GET_PROC_ADDRESS_SUCCESS) *slot = nullptr;
  };
#define PTXFORGE_RESOLVE(name) resolve(#name, reinterpret_cast<void**>(&d.name));
  PTXFORGE_DRIVER_FUNCTIONS(PTXFORGE_RESOLVE)
#undef PTXFORGE_RESOLVE
#define PTXFORGE_RESOLVE_OPTIONAL(name) resolve(#name, reinterpret_cast<void**>(&d.name), false);
  PTXFORGE_DRIVER_OPTIONAL_FUNCTIONS(PTXFORGE_RESOLVE_OPTIONAL)
#undef PTXFORGE_RESOLVE_OPTIONAL
  if (missing) return Error{fmt::format("the CUDA driver lacks {} (for CUDA {}.{})", missing, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10)};
  CUresult r = d.cuInit(0);
  if (r != CUDA_SUCCESS) return Error{fmt::format("cuInit failed: {}", describe(r))};
  int count = 0;
  if (d.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) return Error{"the CUDA driver sees no GPU"};
  return &d;
}

}  // namespace

Result<const Driver*> driver() {
  static Result<const Driver*> once = load();
  return once;
}

std::string describe(CUresult r) {
  auto d = driver();
  const char* name = nullptr;
  const char* text = nullptr;
  if (d) {
    (*d)->cuGetErrorName(r, &name);
    (*d)->cuGetErrorString(r, &text);
  }
  return fmt::format("{} ({}){}{}", name ? name : "CUDA error", static_cast<int>(r), text ? ": " : "", text ? text : "");
}

bool is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

Result<DeviceInfo> device_info(int ordinal) {
  auto dr = driver();
  if (!dr) return dr.error();
  const Driver& d = **dr;
  CUdevice dev;
  if (CUresult r = d.cuDeviceGet(&dev, ordinal); r != CUDA_SUCCESS) return Error{"cuDeviceGet: " + describe(r)};
  DeviceInfo info;
  char name[256] = {};
  d.cuDeviceGetName(name, sizeof name, dev);
  info.name = name;
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    d.cuDeviceGetAttribute(&v, a, dev);
    return v;
  };
  info.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.shared_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info.shared_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.shared_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  info.registers_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  info.registers_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  info.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info.clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info.memory_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  info.bus_width_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  d.cuDeviceTotalMem(&info.memory_bytes, dev);
  d.cuDriverGetVersion(&info.driver_version);
  info.ordinal = ordinal;
  d.cuDeviceGetCount(&info.device_count);
  return info;
}

}  // namespace ptxforge::gpu
