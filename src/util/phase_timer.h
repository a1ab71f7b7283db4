// Wall time by phase: the GPU worker and the CPU engine both report where a verify job's time
// went (gpu::VerifyPhases), each phase a sum of scopes.
#pragma once

#include <chrono>

namespace ptxforge {

// Seconds on the steady clock (differences only).
inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Adds the wall time of its scope to one phase's total, exception or not.
class PhaseTimer {
 public:
  explicit PhaseTimer(double& total) : total_(total), t0_(now_s()) {}
  ~PhaseTimer() { total_ += now_s() - t0_; }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  double& total_;
  double t0_;
};

}  // namespace ptxforge
