#include "ptx/target.h"

#include <charconv>

#include <fmt/format.h>

#include "util/text.h"

namespace ptxforge::ptx {

std::optional<PtxVersion> PtxVersion::parse(std::string_view s) {
  size_t dot = s.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= s.size()) return std::nullopt;
  PtxVersion v;
  auto a = std::from_chars(s.data(), s.data() + dot, v.major);
  auto b = std::from_chars(s.data() + dot + 1, s.data() + s.size(), v.minor);
  if (a.ec != std::errc() || a.ptr != s.data() + dot || b.ec != std::errc() || b.ptr != s.data() + s.size())
    return std::nullopt;
  return v;
}

std::string PtxVersion::str() const { return fmt::format("{}.{}", major, minor); }

std::optional<Target> Target::parse(std::string_view s) {
  if (s.substr(0, 3) != "sm_" && s.substr(0, 8) != "compute_") return std::nullopt;
  s.remove_prefix(s[0] == 's' ? 3 : 8);
  Target t;
  auto r = std::from_chars(s.data(), s.data() + s.size(), t.sm);
  if (r.ec != std::errc() || t.sm <= 0) return std::nullopt;
  std::string_view rest(r.ptr, s.data() + s.size() - r.ptr);
  if (rest == "a" || rest == "f") t.suffix = rest[0];
  else if (!rest.empty()) return std::nullopt;
  return t;
}

std::string Target::str() const { return suffix ? fmt::format("sm_{}{}", sm, suffix) : fmt::format("sm_{}", sm); }

const std::vector<PtxVersion>& known_versions() {
  static const std::vector<PtxVersion> v = [] {
    std::vector<PtxVersion> out;
    for (int m = 0; m <= 5; ++m) out.push_back({1, m});
    for (int m = 0; m <= 3; ++m) out.push_back({2, m});
    for (int m = 0; m <= 2; ++m) out.push_back({3, m});
    for (int m = 0; m <= 3; ++m) out.push_back({4, m});
    out.push_back({5, 0});
    for (int m = 0; m <= 5; ++m) out.push_back({6, m});
    for (int m = 0; m <= 8; ++m) out.push_back({7, m});
    for (int m = 0; m <= 8; ++m) out.push_back({8, m});
    out.push_back({9, 0});
    return out;
  }();
  return v;
}

namespace {
struct TargetRow {
  const char* name;
  PtxVersion min;
};
// Minimum .version per target: the manual's target notes, confirmed against CUDA 13.0's
// ptxas for sm_75 and later (the targets it still accepts).
constexpr TargetRow kTargets[] = {
    {"sm_50", {4, 0}},   {"sm_52", {4, 1}},   {"sm_53", {4, 2}},   {"sm_60", {5, 0}},   {"sm_61", {5, 0}},
    {"sm_62", {5, 0}},   {"sm_70", {6, 0}},   {"sm_72", {6, 1}},   {"sm_75", {6, 3}},   {"sm_80", {7, 0}},
    {"sm_86", {7, 1}},   {"sm_87", {7, 4}},   {"sm_88", {9, 0}},   {"sm_89", {7, 8}},   {"sm_90", {7, 8}},
    {"sm_90a", {8, 0}},  {"sm_100", {8, 6}},  {"sm_100a", {8, 6}}, {"sm_100f", {8, 8}}, {"sm_103", {8, 8}},
    {"sm_103a", {8, 8}}, {"sm_103f", {8, 8}}, {"sm_110", {9, 0}},  {"sm_110a", {9, 0}}, {"sm_110f", {9, 0}},
    {"sm_120", {8, 7}},  {"sm_120a", {8, 7}}, {"sm_120f", {8, 8}}, {"sm_121", {8, 8}},  {"sm_121a", {8, 8}},
    {"sm_121f", {8, 8}},
};

// Families for `f` targets: members share the major architecture and are not older.
int family_of(int sm) { return sm / 10; }
}  // namespace

const std::vector<Target>& known_targets() {
  static const std::vector<Target> v = [] {
    std::vector<Target> out;
    for (auto& r : kTargets) out.push_back(*Target::parse(r.name));
    return out;
  }();
  return v;
}

std::optional<std::string> unknown_target(std::string_view arch) {
  std::vector<std::string> names;
  for (auto& t : known_targets()) {
    names.push_back(t.str());
    if (names.back() == arch) return std::nullopt;
  }
  std::vector<std::string_view> views(names.begin(), names.end());
  return arch.size() <= 16 ? closest_match(arch, views) : std::string();
}

std::optional<PtxVersion> min_version_for(const Target& t) {
  for (auto& r : kTargets)
    if (Target::parse(r.name) == t) return r.min;
  return std::nullopt;
}

bool satisfies(const Target& have, const Target& need) {
  switch (need.suffix) {
    case 'a': return have.sm == need.sm && have.suffix == 'a';
    case 'f':
      return (have.suffix == 'a' || have.suffix == 'f') && family_of(have.sm) == family_of(need.sm) &&
             have.sm >= need.sm;
    default: return have.sm >= need.sm;
  }
}

}  // namespace ptxforge::ptx
