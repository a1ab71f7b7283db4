#include "worker/guarded_memory_cuda.h"

#include <fmt/format.h>

namespace ptxforge::gpu {

namespace {

class CudaVmm : public VmmApi {
 public:
  CudaVmm(const Driver& d, CUdevice dev, size_t granularity) : d_(d), granularity_(granularity) {
    prop_.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop_.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop_.location.id = dev;
  }
  size_t granularity() const override { return granularity_; }
  VmmStatus reserve(size_t bytes, uint64_t& address) override {
    CUdeviceptr p = 0;
    VmmStatus s = check(d_.cuMemAddressReserve(&p, bytes, granularity_, 0, 0), "cuMemAddressReserve");
    address = p;
    return s;
  }
  VmmStatus create(size_t bytes, uint64_t& handle) override {
    CUmemGenericAllocationHandle h = 0;
    VmmStatus s = check(d_.cuMemCreate(&h, bytes, &prop_, 0), "cuMemCreate");
    handle = h;
    return s;
  }
  VmmStatus map(uint64_t address, size_t bytes, uint64_t handle) override {
    return check(d_.cuMemMap(address, bytes, 0, handle, 0), "cuMemMap");
  }
  VmmStatus set_access(uint64_t address, size_t bytes) override {
    CUmemAccessDesc access{};
    access.location = prop_.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return check(d_.cuMemSetAccess(address, bytes, &access, 1), "cuMemSetAccess");
  }
  void unmap(uint64_t address, size_t bytes) override { d_.cuMemUnmap(address, bytes); }
  void release(uint64_t handle) override { d_.cuMemRelease(handle); }
  void address_free(uint64_t address, size_t bytes) override { d_.cuMemAddressFree(address, bytes); }

 private:
  static VmmStatus check(CUresult r, const char* what) {
    if (r == CUDA_SUCCESS) return std::nullopt;
    return VmmFailure{r == CUDA_ERROR_OUT_OF_MEMORY, fmt::format("{}: {}", what, describe(r))};
  }
  const Driver& d_;
  size_t granularity_;
  CUmemAllocationProp prop_{};
};

}  // namespace

Result<std::unique_ptr<VmmApi>> open_vmm(const Driver& d, CUdevice dev) {
  const char* missing = !d.cuMemGetAllocationGranularity ? "cuMemGetAllocationGranularity"
                        : !d.cuMemAddressReserve         ? "cuMemAddressReserve"
                        : !d.cuMemCreate                 ? "cuMemCreate"
                        : !d.cuMemMap                    ? "cuMemMap"
                        : !d.cuMemSetAccess              ? "cuMemSetAccess"
                        : !d.cuMemUnmap                  ? "cuMemUnmap"
                        : !d.cuMemRelease                ? "cuMemRelease"
                        : !d.cuMemAddressFree            ? "cuMemAddressFree"
                                                         : nullptr;
  if (missing) return Error{fmt::format("the driver lacks {}", missing)};
  int supported = 0;
  if (d.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev) != CUDA_SUCCESS || !supported)
    return Error{"the device does not support virtual memory management"};
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  size_t granularity = 0;
  if (CUresult r = d.cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM); r != CUDA_SUCCESS)
    return Error{"cuMemGetAllocationGranularity: " + describe(r)};
  if (granularity < kGuardDataAlign || (granularity & (granularity - 1)) != 0)
    return Error{fmt::format("unusable allocation granularity {}", granularity)};
  return std::unique_ptr<VmmApi>(new CudaVmm(d, dev, granularity));
}

}  // namespace ptxforge::gpu
