// Helpers for the front-end unit tests: a kernel wrapper with the usual registers declared,
// the check ids a source produces, and its one diagnostic.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ptx/front_end.h"

namespace ptxforge::ptx::testing {

inline std::string kernel(const std::string& body, const std::string& target = "sm_90a",
                          const std::string& version = "8.0", const std::string& header_extra = "") {
  return ".version " + version + "\n.target " + target + "\n.address_size 64\n" + header_extra +
         ".visible .entry k(.param .u64 p, .param .u32 n)\n{\n"
         ".reg .b32 %r<10>;\n.reg .b64 %rd<10>;\n.reg .f32 %f<10>;\n.reg .pred %p<4>;\n.reg .b16 %h<4>;\n"
         ".reg .f64 %fd<4>;\n.reg .u32 %u<4>;\n" + body + "\nret;\n}\n";
}

inline std::vector<std::string> ids(const std::string& text, bool warnings = true) {
  ValidateOptions o;
  o.warnings = warnings;
  auto r = check_source(text, o);
  std::vector<std::string> out;
  for (auto& d : r.diags.list()) out.push_back(d.check_id);
  return out;
}

inline CheckResult check(const std::string& text) { return check_source(text); }

// The one diagnostic a source was expected to get (a failure, and an empty one, when it got
// another number: the test's own expectations then fail on it without a crash).
inline const Diagnostic& only(const CheckResult& r) {
  static const Diagnostic none;
  EXPECT_EQ(r.diags.list().size(), 1u);
  return r.diags.list().empty() ? none : r.diags.list()[0];
}

}  // namespace ptxforge::ptx::testing
