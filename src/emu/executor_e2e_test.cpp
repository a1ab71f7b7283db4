// The executor on the real engine, end to end: the shipped vector_add and saxpy solutions pass
// on their tasks' small and tail sets against the committed reference PTX; a kernel that stops
// one element short fails with that element named, its expected value and "never written"; a
// kernel that stores the wrong value names the thread, CTA and line of the store. And the same
// job answered by the `ptxforge emu-worker` process through gpu::WorkerClient.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "emu/executor.h"
#include "gpu/worker_client.h"
#include "ptx/front_end.h"
#include "task/host_case.h"
#include "task/launch_spec.h"
#include "task/seeds.h"
#include "util/text.h"

namespace ptxforge::emu {
namespace {

namespace fs = std::filesystem;
const std::string kTasks = std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/";

// A verify job for `task` with the candidate PTX at `candidate` (its launch spec resolved as
// the parent does).
gpu::Job job_for(const std::string& task, const std::string& candidate, std::vector<std::string> sets) {
  gpu::Job j;
  j.kind = gpu::JobKind::verify;
  j.task_dir = kTasks + task;
  j.candidate_ptx = candidate;
  j.reference_ptx = kTasks + task + "/reference.ptx";
  j.seeds = 2;
  j.seed = 77;
  j.size_sets = std::move(sets);
  auto text = read_file(candidate);
  EXPECT_TRUE(text.ok());
  auto checked = ptx::check_source(*text);
  EXPECT_TRUE(checked.ok());
  auto spec = task::parse_launch_comments(*text, "k.ptx");
  auto t = task::load_task(j.task_dir);
  EXPECT_TRUE(spec.ok() && t.ok());
  EXPECT_TRUE(task::check_launch_spec(*spec, *t, checked.module, "k.ptx").ok());
  j.launch = *spec;
  return j;
}

// The vector_add solution with `from` replaced by `to`, written to a temporary k.ptx.
std::string edited_vector_add(const std::string& from, const std::string& to) {
  auto text = read_file(kTasks + "vector_add/solution.ptx");
  std::string s = *text;
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
  fs::path dir = fs::temp_directory_path() / fmt::format("emu_e2e_{}_{}", getpid(), std::hash<std::string>{}(to));
  fs::create_directories(dir);
  std::ofstream(dir / "k.ptx") << s;
  return (dir / "k.ptx").string();
}

uint32_t line_of(const std::string& file, const std::string& needle) {
  auto text = read_file(file);
  auto at = text->find(needle);
  return static_cast<uint32_t>(std::count(text->begin(), text->begin() + static_cast<long>(at), '\n') + 1);
}

TEST(EmuExecutorEndToEnd, TheShippedSolutionsPass) {
  Executor ex(&Machine::create);
  for (std::string task : {"vector_add", "saxpy"}) {
    gpu::Outcome o = ex.run(job_for(task, kTasks + task + "/solution.ptx", {"small", "tail"}));
    ASSERT_FALSE(o.failure) << task << ": " << o.failure->message;
    ASSERT_TRUE(o.verify);
    EXPECT_EQ(o.verify->cases.size(), 4u) << task;
    EXPECT_TRUE(o.verify->pass()) << task;
    for (auto& c : o.verify->cases) EXPECT_TRUE(c.wrong.empty()) << task;
    EXPECT_EQ(o.verify->engine, gpu::Engine::cpu);
    EXPECT_FALSE(o.verify->counts.empty()) << task << ": the engine counted its instructions";
  }
}

TEST(EmuExecutorEndToEnd, OneElementShortIsNamedAsNeverWritten) {
  // n - 1 elements: the last one of every case is never stored.
  std::string k = edited_vector_add("ld.param.u32 %n, [n];", "ld.param.u32 %n, [n];\n    sub.u32 %n, %n, 1;");
  Executor ex(&Machine::create);
  gpu::Outcome o = ex.run(job_for("vector_add", k, {"small"}));
  ASSERT_FALSE(o.failure) << o.failure->message;
  ASSERT_EQ(o.verify->cases.size(), 2u);
  const gpu::CaseResult& c = o.verify->cases[0];
  EXPECT_FALSE(c.pass);
  ASSERT_EQ(c.wrong.size(), 1u);
  EXPECT_EQ(c.wrong[0].output, "c");
  EXPECT_EQ(c.wrong[0].index, 1023u);
  EXPECT_TRUE(c.wrong[0].never_written);
  EXPECT_FALSE(c.wrong[0].writer);
  EXPECT_EQ(c.wrong[0].actual, "nan");
  auto t = task::load_task(kTasks + "vector_add");
  auto h = task::make_host_case(*t, *t->size_sets(false)[0], c.seed);
  float a, b;
  std::memcpy(&a, h->in.at("a").data() + 4 * 1023, 4);
  std::memcpy(&b, h->in.at("b").data() + 4 * 1023, 4);
  EXPECT_EQ(c.wrong[0].expected, fmt::format("{}", a + b));
  EXPECT_EQ(c.outputs[0].never_written, 1u);
  fs::remove_all(fs::path(k).parent_path());
}

TEST(EmuExecutorEndToEnd, AWrongStoreNamesItsThreadAndLine) {
  // c[i] = a[i]: (nearly) every element wrong, each with the thread that stored it.
  std::string k = edited_vector_add("st.global.f32 [%qc], %z;", "st.global.f32 [%qc], %x;");
  Executor ex(&Machine::create);
  gpu::Outcome o = ex.run(job_for("vector_add", k, {"small"}));
  ASSERT_FALSE(o.failure) << o.failure->message;
  const gpu::CaseResult& c = o.verify->cases[0];
  EXPECT_FALSE(c.pass);
  ASSERT_EQ(c.wrong.size(), gpu::CaseResult::kMaxWrongPerOutput);
  // Element i is stored by thread i % 256 of CTA i / 256 (grid of 4 blocks: one element per thread).
  for (const gpu::WrongElement& w : c.wrong) {
    EXPECT_FALSE(w.never_written);
    ASSERT_TRUE(w.writer);
    EXPECT_EQ(w.writer->thread.cta, (std::array<uint32_t, 3>{static_cast<uint32_t>(w.index / 256), 0, 0}));
    EXPECT_EQ(w.writer->thread.thread, (std::array<uint32_t, 3>{static_cast<uint32_t>(w.index % 256), 0, 0}));
    EXPECT_EQ(w.writer->line, line_of(k, "st.global.f32"));
  }
  EXPECT_EQ(c.wrong[0].index, c.outputs[0].first[0].index);
  fs::remove_all(fs::path(k).parent_path());
}

// The built ptxforge binary, beside this test binary's folder (build/tests -> build/tools/ptxforge).
std::string ptxforge_binary() {
  fs::path self = fs::read_symlink("/proc/self/exe");
  fs::path p = self.parent_path().parent_path() / "tools" / "ptxforge" / "ptxforge";
  return fs::exists(p) ? p.string() : "";
}

TEST(EmuWorker, AVerifyJobIsAnsweredByTheEngineProcess) {
  std::vector<std::string> argv = gpu::emu_worker_argv();
  ASSERT_EQ(argv.size(), 2u);
  EXPECT_EQ(argv[1], "emu-worker");
  std::string bin = ptxforge_binary();
  if (bin.empty()) GTEST_SKIP() << "the ptxforge binary is not built beside the tests";
  argv[0] = bin;  // in a test, "self" is the test binary
  gpu::WorkerClient w(argv);
  gpu::Outcome o = w.run(job_for("vector_add", kTasks + "vector_add/solution.ptx", {"small"}), std::chrono::seconds(60));
  ASSERT_FALSE(o.failure) << o.failure->message;
  ASSERT_TRUE(o.verify);
  EXPECT_EQ(o.verify->engine, gpu::Engine::cpu);
  EXPECT_EQ(o.verify->cases.size(), 2u);
  EXPECT_TRUE(o.verify->pass());
  auto info = gpu::ask_device_info(w);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->name, "ptxforge CPU engine");
  gpu::Job time = job_for("vector_add", kTasks + "vector_add/solution.ptx", {"small"});
  time.kind = gpu::JobKind::time;
  o = w.run(time, std::chrono::seconds(60));
  ASSERT_TRUE(o.failure);
  EXPECT_EQ(o.failure->kind, gpu::FailureKind::unsupported);
  EXPECT_EQ(o.failure->message, "not timed: CPU engine");
  EXPECT_EQ(w.starts(), 1) << "one process answered every job";
}

}  // namespace
}  // namespace ptxforge::emu
