#include <gtest/gtest.h>

#include "eval/suite.h"
#include "testing/fake_worker.h"
#include "util/paths.h"

namespace ptxforge::eval {
namespace {

gpu::CaseResult trivial(const char* kind, const char* set, bool passes) {
  gpu::CaseResult c;
  c.trivial = kind;
  c.size_set = set;
  c.pass = passes;
  task::Comparison o;
  o.output = "y";
  o.count = 10;
  o.mismatches = passes ? 0 : 10;
  c.outputs.push_back(o);
  return c;
}

TEST(SuiteAudit, ATrivialOutputIsAHoleOnlyWhenNoSizeSetRejectsIt) {
  // Copying the input is the right answer for a 1-element scan; the large size catches it.
  auto a = audit_trivial_cases({trivial("input-copy", "one", true), trivial("input-copy", "large", false),
                                trivial("zeros", "one", true), trivial("zeros", "large", true)},
                               "");
  EXPECT_EQ(a.kinds, 2);
  ASSERT_EQ(a.holes.size(), 1u);
  EXPECT_NE(a.holes[0].find("'zeros' passes on all 2 size sets"), std::string::npos);
}

TEST(SuiteAudit, TheReferenceMustAgreeWithTheLibraryEverywhere) {
  auto a = audit_trivial_cases({trivial("library", "small", true), trivial("library", "odd", false)}, "cublas_sgemm");
  EXPECT_EQ(a.kinds, 0);
  EXPECT_EQ(a.library_checks, 2);
  ASSERT_EQ(a.disagreements.size(), 1u);
  EXPECT_NE(a.disagreements[0].find("cublas_sgemm differ on size set 'odd': 10 of 10"), std::string::npos);
}

TEST(SuiteValidation, TheStatusFollowsTheRunTheAuditAndTheGpu) {
  TaskValidation v;
  v.no_gpu = true;
  EXPECT_EQ(v.status(), ValidationStatus::not_verified);
  v.no_gpu = false;
  EXPECT_EQ(v.status(), ValidationStatus::failed) << "verify failed on a GPU";
  v.run.gpu_verified = v.run.passed = v.warm.gpu_verified = true;
  EXPECT_EQ(v.status(), ValidationStatus::failed) << "verified_by says who verified; gpu_verified alone is not read";
  v.run.verified_by = v.warm.verified_by = VerifiedBy::gpu;
  EXPECT_EQ(v.status(), ValidationStatus::passed);
  v.run.gpu_verified = v.warm.gpu_verified = false;
  v.run.verified_by = v.warm.verified_by = VerifiedBy::cpu_engine;
  EXPECT_EQ(v.status(), ValidationStatus::passed) << "a task validates on the CPU engine too";
  v.audit.holes.push_back("an output that is 'zeros' passes on all 2 size sets");
  EXPECT_EQ(v.status(), ValidationStatus::failed);
  v.audit.holes.clear();
  v.error = "fault: ...";
  EXPECT_EQ(v.status(), ValidationStatus::failed);
  EXPECT_EQ(to_string(ValidationStatus::not_verified), "not_verified");
  EXPECT_EQ(to_string(ValidationStatus::invalid), "invalid");
}

// A worker that passes the solution and reports, for the trivial job, that an all-zero output
// matches on every size set: the task cannot tell a lazy kernel from a right one.
TEST(SuiteValidation, ATaskThatATrivialOutputPassesFailsValidation) {
  if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
  auto t = task::load_task(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/vector_add");
  ASSERT_TRUE(t) << t.error().message;
  gpu::FakeWorker worker;
  worker.answer = [](const gpu::Job& job) {
    gpu::Outcome o;
    if (job.kind == gpu::JobKind::device) {
      o.device = gpu::DeviceInfo{};
      o.device->name = "Fake GPU";
      o.device->cc_major = 9;
    } else if (job.kind == gpu::JobKind::verify || job.kind == gpu::JobKind::trivial) {
      gpu::VerifyReport v;
      for (const char* set : {"small", "large"}) {
        if (job.kind == gpu::JobKind::verify) {
          gpu::CaseResult c = trivial("", set, true);
          v.cases.push_back(c);
        } else {
          v.cases.push_back(trivial("zeros", set, true));
          v.cases.push_back(trivial("unwritten", set, false));
        }
      }
      o.verify = v;
    }
    return o;
  };
  Pipeline pipeline(worker);
  TaskValidation v = validate_task(pipeline, *t, /*time=*/false);
  EXPECT_TRUE(v.run.passed);
  ASSERT_EQ(v.audit.holes.size(), 1u);
  EXPECT_NE(v.audit.holes[0].find("'zeros' passes on all 2 size sets"), std::string::npos);
  EXPECT_EQ(v.status(), ValidationStatus::failed);
  ASSERT_NE(worker.last(gpu::JobKind::trivial), nullptr) << "validate asks the worker for the trivial outputs";
}

}  // namespace
}  // namespace ptxforge::eval
