// A child's environment and limits: no credential reaches a child unless the caller opts in,
// and the limits the kernel enforces stop a child that writes, allocates or computes too much.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>

#include "util/sandbox.h"
#include "util/subprocess.h"
#include "util/text.h"
#include "testing/test_env.h"

namespace ptxforge {
namespace {

using namespace std::chrono_literals;


TEST(ChildEnvironment, AllowlistKeepsWhatToolsNeedAndDropsCredentials) {
  const char* parent[] = {"PATH=/usr/bin", "HOME=/home/u", "TMPDIR=/tmp/x", "LANG=C.UTF-8", "LC_ALL=C",
                          "CUDA_VISIBLE_DEVICES=1", "LD_LIBRARY_PATH=/opt/lib", "PTXFORGE_CACHE_DIR=/c",
                          "OPENAI_API_KEY=sk-1", "ANTHROPIC_API_KEY=sk-2", "PTXFORGE_TEST_SECRET=canary-xyz",
                          "PTXFORGE_API_KEY=k", "CUDA_AUTH_TOKEN=t", "GITHUB_TOKEN=g", "AWS_SECRET_ACCESS_KEY=a",
                          "DB_PASSWORD=p", "SSH_AUTH_SOCK=/s", "SHELL=/bin/bash", "USER=u", "=broken", "NOEQUALS",
                          nullptr};
  std::vector<std::string> env = clean_environment(parent);
  std::string all;
  for (auto& e : env) all += e + "\n";
  for (const char* kept : {"PATH=/usr/bin", "HOME=/home/u", "TMPDIR=/tmp/x", "LANG=C.UTF-8", "LC_ALL=C",
                           "CUDA_VISIBLE_DEVICES=1", "LD_LIBRARY_PATH=/opt/lib", "PTXFORGE_CACHE_DIR=/c"})
    EXPECT_NE(all.find(std::string(kept) + "\n"), std::string::npos) << kept << " is kept";
  for (const char* dropped : {"OPENAI", "ANTHROPIC", "canary", "PTXFORGE_API_KEY", "CUDA_AUTH_TOKEN", "GITHUB", "AWS",
                              "PASSWORD", "SSH_AUTH", "SHELL", "USER=", "broken", "NOEQUALS"})
    EXPECT_EQ(all.find(dropped), std::string::npos) << dropped << " must not reach a child:\n" << all;
}

TEST(ChildEnvironment, SecretNamesAreCaughtWhateverTheirPrefix) {
  for (const char* n : {"OPENAI_API_KEY", "anthropic_api_key", "X_TOKEN", "HF_TOKEN", "MY_SECRET", "PTXFORGE_TEST_SECRET",
                        "SECRET_THING", "A_PASSWORD", "NPM_AUTH", "CUDA_KEY", "PTXFORGE_ACCESS_KEY_ID", "GH_PAT"})
    EXPECT_TRUE(is_secret_name(n)) << n;
  for (const char* n : {"PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "PTXFORGE_CACHE_DIR", "HOME", "LANG"})
    EXPECT_FALSE(is_secret_name(n)) << n;
}

TEST(ChildEnvironment, RunProcessChildSeesNoCanaryUnlessItOptsIn) {
  ScopedEnv a("PTXFORGE_TEST_SECRET", "canary-xyz-1");
  ScopedEnv b("OPENAI_API_KEY", "canary-xyz-2");
  ScopedEnv c("SOME_SERVICE_TOKEN", "canary-xyz-3");
  ScopedEnv d("CUDA_VISIBLE_DEVICES", "0");
  auto clean = run_process({"/bin/sh", "-c", "env; cat /proc/self/environ"}, 10s);
  ASSERT_TRUE(clean.ok()) << clean.error().message;
  EXPECT_EQ(clean->out.find("canary-xyz"), std::string::npos) << clean->out;
  EXPECT_NE(clean->out.find("CUDA_VISIBLE_DEVICES=0"), std::string::npos) << "device selection still reaches the child";
  EXPECT_NE(clean->out.find("PATH="), std::string::npos);

  ProcessOptions inherit;
  inherit.env = ChildEnv::inherit;
  auto full = run_process({"/bin/sh", "-c", "env"}, 10s, inherit);
  ASSERT_TRUE(full.ok());
  EXPECT_NE(full->out.find("canary-xyz-2"), std::string::npos) << "the opt-in passes the environment on";
}

TEST(ChildEnvironment, ExtraVariablesAreAddedAndReplace) {
  ProcessOptions o;
  o.extra_env = {"LANG=C", "PTXFORGE_PROBE=1"};
  auto r = run_process({"/bin/sh", "-c", "echo \"$LANG/$PTXFORGE_PROBE\""}, 10s, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(trim(r->out), "C/1");
}

TEST(ResourceLimits, FileSizeLimitKillsAWriterAndIsNamed) {
  auto dir = TempDir::create("ptxforge-limits");
  ASSERT_TRUE(dir.ok());
  ProcessOptions o;
  o.cwd = dir->path();
  o.limits.file_size_bytes = 1 << 20;
  auto r = run_process({"/bin/sh", "-c", "head -c 4000000 /dev/zero > big"}, 20s, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->exit_code, 0);
  EXPECT_LE(std::filesystem::file_size(dir->path() + "/big"), 1u << 20) << "the write stopped at the limit";
  // head dies of SIGXFSZ; a shell that did not exec it reports that as 128+25.
  EXPECT_TRUE(r->signal == SIGXFSZ || r->exit_code == 128 + SIGXFSZ) << r->signal << " " << r->exit_code;
  EXPECT_EQ(limit_hit(*r, o.limits, 20s), "the 1 MiB file-size limit");
}

TEST(ResourceLimits, AddressSpaceLimitStopsABigAllocation) {
  ProcessOptions o;
  o.limits.address_space_bytes = uint64_t{256} << 20;
  auto r = run_process({"dd", "if=/dev/zero", "of=/dev/null", "bs=512M", "count=1"}, 20s, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->exit_code, 0) << "dd needs a 512 MiB buffer under a 256 MiB limit";
  auto free = run_process({"dd", "if=/dev/zero", "of=/dev/null", "bs=512M", "count=1"}, 20s);
  ASSERT_TRUE(free.ok());
  EXPECT_EQ(free->exit_code, 0) << "without the limit the same command works: " << free->err;
}

TEST(ResourceLimits, CpuLimitStopsASpinningChildBeforeTheWallClock) {
  ProcessOptions o;
  o.limits.cpu_seconds = 1;
  auto r = run_process({"/bin/sh", "-c", "while :; do :; done"}, 30s, o);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->timed_out);
  EXPECT_LT(r->seconds, 10);
  EXPECT_EQ(limit_hit(*r, o.limits, 30s), "the 1 s CPU-time limit");
}

TEST(ResourceLimits, CoreDumpsAreOffAndTimeoutIsNamed) {
  auto r = run_process({"/bin/sh", "-c", "ulimit -c"}, 10s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(trim(r->out), "0") << "a core dump would write the child's memory to disk";
  auto slow = run_process({"sleep", "5"}, 200ms);
  ASSERT_TRUE(slow.ok());
  EXPECT_TRUE(slow->timed_out);
  EXPECT_EQ(limit_hit(*slow, {}, 200ms), "the 0.2 s wall-clock limit");
}

}  // namespace
}  // namespace ptxforge
