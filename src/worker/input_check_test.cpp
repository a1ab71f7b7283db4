// The input check's kernel is PTX we write by hand, so it meets the same bar as a candidate's:
// our front end finds nothing in it and ptxas assembles it. (gpu.* tests run it: a candidate
// that writes its input fails verify, tests/adversarial/.)
#include "worker/input_check.h"

#include <gtest/gtest.h>

#include "ptx/front_end.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"

namespace ptxforge::gpu {
namespace {

TEST(InputCheck, KernelPassesOurFrontEndWithoutFindings) {
  auto r = ptx::check_source(input_check_ptx());
  EXPECT_TRUE(r.ok());
  for (auto& d : r.diags.list()) ADD_FAILURE() << d.loc.line << ": " << d.message;
}

TEST(InputCheck, KernelAssemblesForEveryTargetWeRunOn) {
  if (!find_cuda_tool("ptxas")) GTEST_SKIP() << "ptxas not installed";
  for (const char* arch : {"sm_80", "sm_90a"}) {
    toolchain::AssembleOptions o;
    o.arch = arch;
    auto r = toolchain::assemble_with_ptxas(input_check_ptx(), o);
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_TRUE(r->ok) << arch << ": " << r->log;
    ASSERT_NE(r->find("pf_first_diff"), nullptr);
  }
}

}  // namespace
}  // namespace ptxforge::gpu
