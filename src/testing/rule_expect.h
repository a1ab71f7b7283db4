// The assertion every rule-agreement test makes on a class of generated cases: ptxas judges
// each, `check` must flag every line ptxas rejects (at that line) and none it accepts, and the
// class must hold both kinds, or it proves nothing. Skips where ptxas is not installed.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/rule_agreement.h"
#include "util/paths.h"

namespace ptxforge::ptx::testing {

inline void expect_agreement(const std::string& rule_class, const std::vector<RuleCase>& cases,
                             const RuleHeader& h = {}) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  auto st = agree_with_ptxas(cases, h);
  std::printf("%s on %s: %s\n", rule_class.c_str(), h.target.c_str(), st.summary(rule_class).c_str());
  for (auto& p : st.problems) ADD_FAILURE() << rule_class << " (" << h.target << "): " << p;
  EXPECT_EQ(st.false_alarms, 0);
  EXPECT_EQ(st.we_flag, st.ptxas_rejects);
  EXPECT_GT(st.ptxas_rejects, 0) << "the class has no rejected case: it tests nothing";
  EXPECT_LT(st.ptxas_rejects, st.cases) << "the class has no accepted case: it cannot show a false alarm";
}

// The same for whole-module cases (agree_modules_with_ptxas): one module per case, for rules
// ptxas judges per module or reports once per module.
inline void expect_module_agreement(const std::string& rule_class, const std::vector<ModuleCase>& cases,
                                    const std::string& arch = "sm_90a") {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  auto st = agree_modules_with_ptxas(cases, arch);
  std::printf("%s\n", st.summary(rule_class).c_str());
  for (auto& p : st.problems) ADD_FAILURE() << rule_class << ": " << p;
  EXPECT_EQ(st.false_alarms, 0);
  EXPECT_EQ(st.we_flag, st.ptxas_rejects);
  EXPECT_GT(st.ptxas_rejects, 0) << "the class has no rejected case: it tests nothing";
  EXPECT_LT(st.ptxas_rejects, st.cases) << "the class has no accepted case: it cannot show a false alarm";
}

}  // namespace ptxforge::ptx::testing
