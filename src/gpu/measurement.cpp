#include "gpu/measurement.h"

#include <algorithm>
#include <cmath>

namespace ptxforge::gpu {

TimingStats summarize(std::vector<double> v) {
  TimingStats s;
  s.trials = static_cast<int>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min_ms = v.front();
  s.median_ms = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean_ms = sum / static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - s.mean_ms) * (x - s.mean_ms);
  s.stdev_ms = v.size() > 1 ? std::sqrt(var / static_cast<double>(v.size() - 1)) : 0;
  return s;
}

}  // namespace ptxforge::gpu
