#include "gpu/measurement.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ptxforge::gpu {

namespace {
constexpr std::pair<FailureKind, std::string_view> kFailureKinds[] = {
    {FailureKind::spec, "spec"},         {FailureKind::load, "load"},   {FailureKind::launch, "launch"},
    {FailureKind::fault, "fault"},       {FailureKind::oom, "oom"},     {FailureKind::library, "library"},
    {FailureKind::timeout, "timeout"},   {FailureKind::crash, "crash"}, {FailureKind::protocol, "protocol"},
    {FailureKind::driver, "driver"},     {FailureKind::unsupported, "unsupported"},
    {FailureKind::race, "race"},         {FailureKind::uninitialized, "uninitialized"},
    {FailureKind::misaligned, "misaligned"}, {FailureKind::barrier, "barrier"},
    {FailureKind::warp_sync, "warp_sync"},   {FailureKind::budget, "budget"}};
constexpr std::pair<Engine, std::string_view> kEngines[] = {{Engine::gpu, "gpu"}, {Engine::cpu, "cpu"}};
constexpr std::pair<GuardMode, std::string_view> kGuardModes[] = {
    {GuardMode::vmm, "vmm"}, {GuardMode::canary, "canary"}, {GuardMode::exact, "exact"}};
}  // namespace

std::string_view to_string(GuardMode g) {
  for (auto& [mode, name] : kGuardModes)
    if (mode == g) return name;
  return "?";
}

std::optional<GuardMode> guard_mode_from_string(std::string_view s) {
  for (auto& [mode, name] : kGuardModes)
    if (name == s) return mode;
  return std::nullopt;
}

std::string_view to_string(FailureKind k) {
  for (auto& [kind, name] : kFailureKinds)
    if (kind == k) return name;
  return "?";
}

std::optional<FailureKind> failure_kind_from_string(std::string_view s) {
  for (auto& [kind, name] : kFailureKinds)
    if (name == s) return kind;
  return std::nullopt;
}

std::string_view to_string(Engine e) {
  for (auto& [engine, name] : kEngines)
    if (engine == e) return name;
  return "?";
}

std::optional<Engine> engine_from_string(std::string_view s) {
  for (auto& [engine, name] : kEngines)
    if (name == s) return engine;
  return std::nullopt;
}

std::string DeviceInfo::arch() const {
  std::string a = fmt::format("sm_{}{}", cc_major, cc_minor);
  if (cc_major >= 9) a += "a";  // the arch-specific target unlocks wgmma, setmaxnreg, tcgen05
  return a;
}

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
