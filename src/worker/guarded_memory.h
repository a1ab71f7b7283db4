// Places a case's candidate buffers with guard pages (gpu/guard_layout.h) through the
// driver's virtual-memory calls, behind a narrow interface so that the call sequence, every
// error path and the freeing order are tested with a fake driver. The real implementation
// (guarded_memory_cuda.cpp) lives in the worker; this header does not include the driver.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/guard_layout.h"

namespace ptxforge::gpu {

// Why a virtual-memory call failed. `out_of_memory`: the device has too little memory (the
// case fails as oom); otherwise the caller falls back to plain allocations.
struct VmmFailure {
  bool out_of_memory = false;
  std::string message;  // "cuMemCreate: CUDA_ERROR_NOT_SUPPORTED (801): ..."
};
using VmmStatus = std::optional<VmmFailure>;  // nullopt: done

// The driver's virtual-memory calls, one method each (cuMemAddressReserve, cuMemCreate,
// cuMemMap, cuMemSetAccess, cuMemUnmap, cuMemRelease, cuMemAddressFree).
class VmmApi {
 public:
  virtual ~VmmApi() = default;
  virtual size_t granularity() const = 0;
  virtual VmmStatus reserve(size_t bytes, uint64_t& address) = 0;
  virtual VmmStatus create(size_t bytes, uint64_t& handle) = 0;
  virtual VmmStatus map(uint64_t address, size_t bytes, uint64_t handle) = 0;
  virtual VmmStatus set_access(uint64_t address, size_t bytes) = 0;  // read-write for the device
  virtual void unmap(uint64_t address, size_t bytes) = 0;
  virtual void release(uint64_t handle) = 0;
  virtual void address_free(uint64_t address, size_t bytes) = 0;
};

// The buffers of one case, placed as a GuardPlan says. Freed on destruction: every mapping
// is unmapped and its memory released (last placed first), then the reservation is freed.
class GuardedCase {
 public:
  // Reserves, creates, maps and opens every slot. On a failure, everything done so far is
  // undone and `why` says what failed.
  static std::unique_ptr<GuardedCase> place(VmmApi& vmm, GuardPlan plan, VmmFailure& why);
  ~GuardedCase();
  GuardedCase(const GuardedCase&) = delete;
  GuardedCase& operator=(const GuardedCase&) = delete;

  const GuardPlan& plan() const { return plan_; }
  uint64_t base() const { return base_; }
  uint64_t data(size_t i) const { return base_ + plan_.slots[i].data_offset; }
  uint64_t map_start(size_t i) const { return base_ + plan_.slots[i].map_offset; }

 private:
  GuardedCase(VmmApi& vmm, GuardPlan plan) : vmm_(vmm), plan_(std::move(plan)) {}
  void free_all();

  struct Mapping {
    uint64_t address = 0;
    size_t bytes = 0;
    uint64_t handle = 0;
    bool mapped = false;
  };
  VmmApi& vmm_;
  GuardPlan plan_;
  uint64_t base_ = 0;
  bool reserved_ = false;
  std::vector<Mapping> mappings_;
};

}  // namespace ptxforge::gpu
