// PTX ISA versions and targets, and the rules that relate them: which .version a target
// needs, and whether a target satisfies an instruction's requirement (plain targets are
// forward compatible; `a` targets mean exactly that architecture; `f` targets a family).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxforge::ptx {

struct PtxVersion {
  int major = 0, minor = 0;
  auto operator<=>(const PtxVersion&) const = default;
  static std::optional<PtxVersion> parse(std::string_view s);  // "8.0"
  std::string str() const;
};

struct Target {
  int sm = 0;          // 90 for sm_90a
  char suffix = 0;     // 0, 'a' or 'f'
  auto operator<=>(const Target&) const = default;
  static std::optional<Target> parse(std::string_view s);  // "sm_90a"
  std::string str() const;
};

// The newest PTX ISA version this project knows (CUDA 13.0's ptxas).
constexpr PtxVersion kNewestPtx{9, 0};

// Every PTX ISA version, oldest first (used to find "the version that would work").
const std::vector<PtxVersion>& known_versions();
// Targets ptxas knows, lowest first.
const std::vector<Target>& known_targets();

// nullopt when `arch` names a target ptxas knows ("sm_90a"); else the nearest known one as a
// guess ("" when none is near), for a usage error that says "did you mean".
std::optional<std::string> unknown_target(std::string_view arch);

// The lowest .version that accepts `.target t`; nullopt for an unknown target.
std::optional<PtxVersion> min_version_for(const Target& t);

// Does a module compiled for `have` get a feature that needs `need`?
//   need sm_XX  : have.sm >= XX (any suffix)
//   need sm_XXa : have is exactly sm_XXa
//   need sm_XXf : have is sm_XXf or sm_XXa, or a later member of the same family (sm_YYf/a with
//                 YY in the family of XX)
bool satisfies(const Target& have, const Target& need);

}  // namespace ptxforge::ptx
