#include "eval/physical_limit.h"

#include <cmath>

#include <fmt/format.h>

namespace ptxforge::eval {

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (std::fabs(bytes) >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

std::string format_rate(double per_s, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int p = 0;
  while (std::fabs(per_s) >= 1000 && p < 5) {
    per_s /= 1000;
    ++p;
  }
  return fmt::format("{:.3g} {}{}/s", per_s, prefixes[p], unit);
}

LimitCheck check_physical_limits(double bytes, double flops, double seconds, const LimitPeaks& peaks) {
  LimitCheck c;
  if (std::isnan(seconds) || seconds < 0) {
    c.pass = false;
    c.message = fmt::format("the measured time ({} s) is no measurement", seconds);
    return c;
  }
  if (seconds == 0) {
    // Work takes time: a kernel that must move bytes cannot take none.
    c.pass = bytes <= 0 && flops <= 0;
    if (!c.pass) c.message = fmt::format("a measured time of 0 s for a kernel that must move {}", format_bytes(bytes));
    return c;
  }
  c.bytes_per_s = bytes / seconds;
  c.flops_per_s = flops / seconds;
  const double allowed = 1 + kPhysicalLimitMargin;
  if (peaks.bytes_per_s > 0 && c.bytes_per_s > peaks.bytes_per_s * allowed) {
    c.pass = false;
    c.message = fmt::format("faster than this GPU can move {}: {} > {} peak (allowed with the {:.0f}% margin: {})",
                            format_bytes(bytes), format_rate(c.bytes_per_s, "B"), format_rate(peaks.bytes_per_s, "B"),
                            kPhysicalLimitMargin * 100, format_rate(peaks.bytes_per_s * allowed, "B"));
    return c;
  }
  const double flops_allowed = 1 + peaks.flops_margin;
  if (peaks.flops_per_s > 0 && c.flops_per_s > peaks.flops_per_s * flops_allowed) {
    c.pass = false;
    c.message = fmt::format("faster than this GPU can compute {:.4g} flops: {} > {} {} peak (allowed with the {:.0f}% margin: {})",
                            flops, format_rate(c.flops_per_s, "FLOP"), format_rate(peaks.flops_per_s, "FLOP"),
                            peaks.flops_kind, peaks.flops_margin * 100, format_rate(peaks.flops_per_s * flops_allowed, "FLOP"));
  }
  return c;
}

}  // namespace ptxforge::eval
