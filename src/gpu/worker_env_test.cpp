// The GPU worker runs candidate kernels and reads task files; no credential of the parent may
// reach it. A fake worker (a shell script) answers every job with its own environment.
#include <gtest/gtest.h>

#include <cstdlib>

#include "gpu/worker_client.h"

namespace ptxforge::gpu {
namespace {

using namespace std::chrono_literals;

TEST(WorkerEnvironment, NoCredentialReachesTheWorker) {
  setenv("OPENAI_API_KEY", "canary-xyz-openai", 1);
  setenv("ANTHROPIC_API_KEY", "canary-xyz-anthropic", 1);
  setenv("PTXFORGE_TEST_SECRET", "canary-xyz-secret", 1);
  setenv("SOME_SERVICE_TOKEN", "canary-xyz-token", 1);
  setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  // The reply's message is the worker's environment, quotes and backslashes removed.
  WorkerClient w({"/bin/sh", "-c",
                  R"sh(while read l; do printf '{"failure":{"kind":"driver","message":"%s"},"fatal":false}\n' )sh"
                  R"sh("$(env | tr '\n' ' ' | tr -d '"\\')"; done)sh"});
  Job j;
  j.kind = JobKind::verify;
  j.task_dir = "tasks/level1/vector_add";
  Outcome o = w.run(j, 10s);
  for (const char* n : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PTXFORGE_TEST_SECRET", "SOME_SERVICE_TOKEN"}) unsetenv(n);
  ASSERT_TRUE(o.failure.has_value());
  const std::string& env = o.failure->message;
  EXPECT_NE(env.find("PATH="), std::string::npos) << "the fake worker answered with its environment: " << env;
  EXPECT_NE(env.find("CUDA_VISIBLE_DEVICES=0"), std::string::npos) << "device selection still reaches it";
  EXPECT_EQ(env.find("canary-xyz"), std::string::npos) << env;
}

}  // namespace
}  // namespace ptxforge::gpu
