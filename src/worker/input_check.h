// Whether a candidate left its read-only inputs as they were, checked on the GPU. Right after
// an input is uploaded, before the candidate runs, a device copy of it is taken; afterwards a
// small kernel compares the buffer with the copy word by word and keeps the lowest index that
// differs. Nothing but that index crosses the bus, where reading every input back to the host
// and comparing it there cost most of a warm verify (a 268 MB matrix per case for gemv).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>
#include <string>

#include "worker/driver.h"
#include "util/result.h"

namespace ptxforge::gpu {

// The comparing kernel: pf_first_diff(a, b, n, out) lowers the u64 at `out` to the least i < n
// where the 32-bit words a[i] and b[i] differ (red.min; `out` starts at all ones).
std::string input_check_ptx();

class InputCheck {
 public:
  // Loads the kernel into the current context; an error says why (the caller then reads the
  // inputs back instead).
  static Result<InputCheck> create(const Driver& d, int sms);
  InputCheck(InputCheck&&) noexcept;
  InputCheck& operator=(InputCheck&&) = delete;
  ~InputCheck();

  // The first byte at which the device buffers `now` and `was` (both `bytes` long) differ, or
  // nullopt when they are equal; a driver error is returned as it came.
  CUresult first_difference(CUdeviceptr now, CUdeviceptr was, size_t bytes, std::optional<size_t>& at) const;

 private:
  InputCheck(const Driver& d, CUmodule m, CUfunction f, CUdeviceptr out, int sms)
      : d_(&d), module_(m), fn_(f), out_(out), sms_(sms) {}
  const Driver* d_;
  CUmodule module_ = nullptr;
  CUfunction fn_ = nullptr;
  CUdeviceptr out_ = 0;  // the u64 the kernel lowers
  int sms_ = 1;
};

}  // namespace ptxforge::gpu
