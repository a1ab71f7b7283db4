// The sandbox the compilers run in: what its command line grants, and, where bubblewrap
// works, what a program inside can and cannot see (the environment, files outside its work
// folder, the network), and the refusal of untrusted work where there is no sandbox.
#include "util/sandbox.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "util/text.h"
#include "testing/test_env.h"

namespace ptxforge {
namespace {

using namespace std::chrono_literals;


// The paths bound into the sandbox (the second operand of each --ro-bind / --bind).
std::vector<std::string> bound(const std::vector<std::string>& a, const std::string& flag) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 2 < a.size(); ++i)
    if (a[i] == flag) out.push_back(a[i + 2]);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(Sandbox, CommandLineGrantsOnlyWhatAToolNeeds) {
  SandboxSpec spec;
  spec.work_dir = "/tmp/ptxforge-work";
  auto a = bwrap_argv("/usr/bin/bwrap", spec, {"/opt/tool", "-x"});
  for (const char* flag : {"--unshare-all", "--die-with-parent", "--clearenv", "--new-session", "--proc", "--dev"})
    EXPECT_TRUE(has(a, flag)) << flag;
  EXPECT_EQ(a[a.size() - 3], "--");
  EXPECT_EQ(a.back(), "-x");
  auto ro = bound(a, "--ro-bind"), rw = bound(a, "--bind");
  EXPECT_EQ(rw, std::vector<std::string>{"/tmp/ptxforge-work"}) << "one writable folder, the work folder";
  for (auto& p : ro) {
    EXPECT_FALSE(starts_with(p, "/usr/share")) << p;
    EXPECT_FALSE(starts_with(p, "/home") || starts_with(p, "/root")) << p;
    EXPECT_TRUE(!starts_with(p, "/etc") || p == "/etc/ld.so.cache") << p << ": only the loader's cache from /etc";
    EXPECT_FALSE(p == "/" || p == "/usr" || p == "/work") << p;
    if (const char* d = std::getenv("PTXFORGE_DATA_DIR")) {
      EXPECT_FALSE(starts_with(p, d)) << p;
    }
  }
  // --setenv NAME VALUE: exactly PATH, HOME and LANG.
  std::vector<std::string> names;
  for (size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == "--setenv") names.push_back(a[i + 1]);
  EXPECT_EQ(names, (std::vector<std::string>{"PATH", "HOME", "LANG"}));
  auto host = bound(bwrap_argv("/usr/bin/bwrap", SandboxSpec{"", {}, true}, {"/x"}), "--ro-bind");
  EXPECT_TRUE(has(host, "/usr/include")) << "nvcc's host compiler reads the C++ headers";
  EXPECT_FALSE(has(bound(a, "--ro-bind"), "/usr/include")) << "NVRTC does not get them";
}

bool bwrap_works() { return sandbox_choice().mode == SandboxMode::bwrap; }

// A shell inside the sandbox (with the host tools bound, for sh and cat).
Result<ProcessResult> sandboxed_sh(const std::string& script, const std::string& work_dir) {
  SandboxSpec spec;
  spec.work_dir = work_dir;
  spec.host_compiler = true;
  return run_sandboxed({"/bin/sh", "-c", script}, 20s, ProcessOptions{}, spec, Trust::untrusted);
}

TEST(Sandbox, InsideSeesNoSecretNoOtherFileAndNoNetwork) {
  if (!bwrap_works()) GTEST_SKIP() << "no working bubblewrap here: " << sandbox_choice().why;
  ScopedEnv secret("PTXFORGE_TEST_SECRET", "canary-xyz-env");
  ScopedEnv key("OPENAI_API_KEY", "canary-xyz-key");
  auto work = TempDir::create("ptxforge-sbx-work");
  auto other = TempDir::create("ptxforge-sbx-other");
  ASSERT_TRUE(work.ok() && other.ok());
  ASSERT_TRUE(write_file(other->path() + "/task.toml", "held_back = \"canary-xyz-file\"\n").ok());
  std::string script = "cat /proc/self/environ; echo; cat /proc/1/environ; env; cat " + other->path() +
                       "/task.toml; ls /home /root /usr/share " + std::string(std::getenv("PWD") ? std::getenv("PWD") : "/work") +
                       "; cat /proc/net/dev; echo written > " + work->path() + "/out.txt; echo done";
  auto r = sandboxed_sh(script, work->path());
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::string all = r->out + r->err;
  EXPECT_EQ(all.find("canary-xyz"), std::string::npos) << all;
  EXPECT_NE(r->out.find("done"), std::string::npos) << all;
  auto written = read_file(work->path() + "/out.txt");
  ASSERT_TRUE(written.ok()) << "the work folder is writable: " << all;
  EXPECT_EQ(*written, "written\n");
  // /proc/net/dev lists the interfaces of the sandbox's own network namespace: loopback only.
  EXPECT_EQ(r->out.find("eth"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("PATH=/usr/bin:/bin"), std::string::npos) << r->out;
}

TEST(Sandbox, ToolkitIsReadOnlyAndTmpIsPrivate) {
  if (!bwrap_works()) GTEST_SKIP() << "no working bubblewrap here: " << sandbox_choice().why;
  auto work = TempDir::create("ptxforge-sbx-work");
  ASSERT_TRUE(work.ok());
  ASSERT_TRUE(write_file("/tmp/ptxforge-sbx-outside-canary", "canary-xyz-tmp").ok());
  auto r = sandboxed_sh("cat /tmp/ptxforge-sbx-outside-canary; touch /usr/lib/ptxforge-x && echo WROTE; echo ok", work->path());
  std::filesystem::remove("/tmp/ptxforge-sbx-outside-canary");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((r->out + r->err).find("canary-xyz"), std::string::npos) << "the host's /tmp is not the sandbox's";
  EXPECT_EQ(r->out.find("WROTE"), std::string::npos) << "system folders are read-only";
  EXPECT_NE(r->out.find("ok"), std::string::npos);
}

TEST(Sandbox, WithoutSandboxUntrustedWorkIsRefusedAndTrustedRuns) {
  ScopedEnv none("PTXFORGE_SANDBOX", "none");
  EXPECT_EQ(sandbox_choice().mode, SandboxMode::none);
  auto refused = run_sandboxed({"/bin/true"}, 10s, {}, {}, Trust::untrusted);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("bubblewrap"), std::string::npos) << refused.error().message;
  EXPECT_NE(refused.error().message.find("PTXFORGE_SANDBOX=none"), std::string::npos) << refused.error().message;
  ScopedEnv secret("PTXFORGE_TEST_SECRET", "canary-xyz-plain");
  auto trusted = run_sandboxed({"/bin/sh", "-c", "env; echo ran"}, 10s, {}, {}, Trust::trusted);
  ASSERT_TRUE(trusted.ok());
  EXPECT_NE(trusted->out.find("ran"), std::string::npos);
  EXPECT_EQ(trusted->out.find("canary-xyz"), std::string::npos) << "the clean environment still applies";
}

TEST(Sandbox, UnknownModeFailsClosed) {
  ScopedEnv bogus("PTXFORGE_SANDBOX", "off-please");
  auto c = sandbox_choice();
  EXPECT_EQ(c.mode, SandboxMode::none);
  EXPECT_NE(c.why.find("off-please"), std::string::npos);
  EXPECT_FALSE(run_sandboxed({"/bin/true"}, 10s, {}, {}, Trust::untrusted).ok());
}

TEST(Sandbox, CallerCannotOptACompilerIntoTheParentEnvironment) {
  ScopedEnv none("PTXFORGE_SANDBOX", "none");
  ScopedEnv secret("ANTHROPIC_API_KEY", "canary-xyz-inherit");
  ProcessOptions o;
  o.env = ChildEnv::inherit;
  auto r = run_sandboxed({"/bin/sh", "-c", "env"}, 10s, o, {}, Trust::trusted);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out.find("canary-xyz"), std::string::npos);
}

TEST(Sandbox, BytesAreShownInTheirLargestWholeUnit) {
  EXPECT_EQ(format_bytes(uint64_t{4} << 30), "4 GiB");
  EXPECT_EQ(format_bytes(uint64_t{256} << 20), "256 MiB");
  EXPECT_EQ(format_bytes(1536), "1536 bytes");
}

}  // namespace
}  // namespace ptxforge
