#include "eval/time_gate.h"

#include <fmt/format.h>

namespace ptxforge::eval {

GatePeaks gate_peaks(const task::Task& task, const Result<gpu::DevicePeaks>& measured,
                     const std::optional<gpu::DeviceInfo>& info) {
  GatePeaks g;
  if (!measured) {
    g.note = "not checked against the GPU's peaks: " + measured.error().message;
    return g;
  }
  g.limits.bytes_per_s = measured->memory_bytes_per_s();
  g.limits.flops_per_s = measured->fma_flops_per_s;
  g.note = fmt::format("peaks of {}: memory {}, FP32 FMA {}", measured->device, format_rate(g.limits.bytes_per_s, "B"),
                       format_rate(g.limits.flops_per_s, "FLOP"));
  if (task.tensor_cores != task::TensorCores::none) {
    const std::string_view precision = task::to_string(task.tensor_cores);
    if (auto best = measured->best_tensor(task.tensor_cores); best && best->flops_per_s > g.limits.flops_per_s) {
      g.limits.flops_per_s = best->flops_per_s;
      g.limits.flops_margin = kMeasuredTensorMargin;
      g.limits.flops_kind = fmt::format("{} tensor-core", precision);
      g.note += fmt::format(", {} tensor cores {} (measured: the {} {} loop; {:.0f}% margin)", precision,
                            format_rate(best->flops_per_s, "FLOP"), gpu::to_string(best->op), gpu::to_string(best->type),
                            kMeasuredTensorMargin * 100);
      return g;
    }
    std::optional<double> tensor = info ? gpu::tensor_peak_flops(*info, task.tensor_cores) : std::nullopt;
    const std::string why = measured->tensor_note.empty() ? "no loop of that type ran on this GPU" : measured->tensor_note;
    if (tensor && *tensor > g.limits.flops_per_s) {
      g.limits.flops_per_s = *tensor;
      g.limits.flops_kind = fmt::format("{} tensor-core", precision);
      g.note += fmt::format(", {} tensor cores {} (table, boost clock; not measured: {}; {:.0f}% margin)", precision,
                            format_rate(*tensor, "FLOP"), why, kPhysicalLimitMargin * 100);
    } else if (!tensor) {
      // Without a tensor peak for this GPU the flops cannot be bounded; the bytes still are.
      g.limits.flops_per_s = 0;
      g.note += fmt::format("; flops not bounded: no {} tensor-core figure for this GPU", task::to_string(task.tensor_cores));
    }
  }
  return g;
}

LimitPeaks peaks_at_least_the_library(const LimitPeaks& peaks, double bytes, double flops, double library_fastest_s,
                                      std::string& note) {
  LimitPeaks p = peaks;
  note.clear();
  if (library_fastest_s <= 0) return p;
  const double lib_flops = flops / library_fastest_s, lib_bytes = bytes / library_fastest_s;
  if (p.flops_per_s > 0 && lib_flops > p.flops_per_s) {
    note = fmt::format("the library reached {}, above the {} peak of {}: that bound is raised to it", format_rate(lib_flops, "FLOP"),
                       p.flops_kind, format_rate(p.flops_per_s, "FLOP"));
    p.flops_per_s = lib_flops;
  }
  if (p.bytes_per_s > 0 && lib_bytes > p.bytes_per_s) {
    note += fmt::format("{}the library moved {}, above the memory peak of {}: that bound is raised to it", note.empty() ? "" : "; ",
                        format_rate(lib_bytes, "B"), format_rate(p.bytes_per_s, "B"));
    p.bytes_per_s = lib_bytes;
  }
  return p;
}

TimeVerdict judge_times(const task::Task& task, const gpu::TimeReport& times, const LimitPeaks& peaks) {
  TimeVerdict v;
  for (auto& s : times.sizes) {
    const task::SizeSet* set = nullptr;
    for (auto& candidate : task.sizes)
      if (candidate.name == s.size_set) set = &candidate;
    if (s.library && s.candidate.median_ms > 0 && s.library->median_ms / s.candidate.median_ms > kSuspiciousLibraryRatio)
      v.problems.push_back(fmt::format("suspicious: {:.1f}x faster than {} on '{}' (more than {:.0f}x)",
                                       s.library->median_ms / s.candidate.median_ms, s.library_name, s.size_set,
                                       kSuspiciousLibraryRatio));
    if (!set || !task.roofline_bytes || !task.roofline_flops) continue;
    auto bytes = task.roofline_bytes->evaluate(set->values);
    auto flops = task.roofline_flops->evaluate(set->values);
    if (!bytes || !flops) continue;  // a loaded task evaluates on every size set
    LimitRow row;
    row.size_set = s.size_set;
    row.bytes = bytes->as_double();
    row.flops = flops->as_double();
    row.fastest_ms = s.candidate.min_ms;
    row.median_ms = s.candidate.median_ms;
    if (s.library && s.library->median_ms > 0 && s.candidate.median_ms > 0) {
      // How close the library runs to each bound; the nearer one decides.
      const double library_s = s.library->median_ms / 1e3;
      double near = 0;
      std::string bound;
      if (peaks.flops_per_s > 0 && row.flops > 0 && row.flops / library_s / peaks.flops_per_s > near) {
        near = row.flops / library_s / peaks.flops_per_s;
        bound = peaks.flops_kind + " peak";
      }
      if (peaks.bytes_per_s > 0 && row.bytes > 0 && row.bytes / library_s / peaks.bytes_per_s > near) {
        near = row.bytes / library_s / peaks.bytes_per_s;
        bound = "memory peak";
      }
      const double ratio = s.library->median_ms / s.candidate.median_ms;
      if (near >= kLibraryNearPeak && ratio > kNearPeakLibraryRatio && ratio <= kSuspiciousLibraryRatio)  // above: the 10x rule
        v.problems.push_back(fmt::format("suspicious: {:.2f}x faster than {} on '{}', where {} runs at {:.0f}% of the {} "
                                         "(more than {:.1f}x where the library is within {:.0f}% of a peak)",
                                         ratio, s.library_name, s.size_set, s.library_name, 100 * near, bound,
                                         kNearPeakLibraryRatio, 100 * (1 - kLibraryNearPeak)));
    }
    LimitPeaks held = peaks;
    if (s.library) {
      std::string note;
      held = peaks_at_least_the_library(peaks, row.bytes, row.flops, s.library->min_ms / 1e3, note);
      if (!note.empty()) v.notes.push_back(fmt::format("on '{}': {}", s.size_set, note));
    }
    LimitCheck c = check_physical_limits(row.bytes, row.flops, s.candidate.min_ms / 1e3, held);
    row.bytes_per_s = c.bytes_per_s;
    row.flops_per_s = c.flops_per_s;
    row.pass = c.pass;
    if (!c.pass)
      v.problems.push_back(fmt::format("impossible time on '{}': the fastest of {} trials ({:.4f} ms; median {:.4f} ms) is {}",
                                       s.size_set, s.candidate.trials, s.candidate.min_ms, s.candidate.median_ms, c.message));
    v.rows.push_back(row);
  }
  return v;
}

}  // namespace ptxforge::eval
