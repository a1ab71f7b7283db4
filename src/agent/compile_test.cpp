// The compile loop with scripted replies and no GPU (a fake worker answers "no driver"):
// feedback carries the previous reply's diagnostics, replies without code become feedback,
// and a session resumes from every stage it can stop at.
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/compile.h"
#include "task/task_spec.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::agent {
namespace {

namespace fs = std::filesystem;
const std::string kRoot = PTXFORGE_SOURCE_DIR;

std::vector<std::string> no_gpu_worker() {
  return {"/bin/sh", "-c", R"(while read l; do echo '{"failure":{"kind":"driver","message":"no CUDA driver"},"fatal":false}'; done)"};
}

std::string fenced(const std::string& ptx) { return "Here it is.\n\n```ptx\n" + ptx + "```\n"; }

class CompileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
    solution_ = *read_file(kRoot + "/tasks/level1/vector_add/solution.ptx");
    broken_ = solution_;
    broken_.replace(broken_.find("add.f32 %z, %x, %y;"), 19, "add.f32 %z, %x, %w;");
    dir_ = ::testing::TempDir() + "/session-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
  }
  CompileOptions options(const std::string& model) {
    CompileOptions o;
    o.task_dir = kRoot + "/tasks/level1/vector_add";
    o.model = model;
    o.out = dir_;
    o.rounds = 4;
    o.cache = false;
    o.prompt.knowledge = KnowledgeLevel::hardware;
    o.hardware_profile = "h200";
    return o;
  }
  // Writes the replay file the session's `replay:` model reads, and returns its path.
  std::string replay_file(const std::vector<std::string>& replies) {
    write_replies(replies);
    return dir_ + "-replies.json";
  }
  void write_replies(const std::vector<std::string>& replies) {
    std::string j = "{\"produced_by\": \"test\", \"replies\": [";
    for (size_t i = 0; i < replies.size(); ++i) {
      std::string esc;
      for (char c : replies[i]) {
        if (c == '"' || c == '\\') esc += '\\';
        if (c == '\n') {
          esc += "\\n";
          continue;
        }
        esc += c;
      }
      j += (i ? ", \"" : "\"") + esc + "\"";
    }
    ASSERT_TRUE(write_file(dir_ + "-replies.json", j + "]}").ok());
  }
  std::string solution_, broken_, dir_;
};

TEST_F(CompileTest, BrokenThenFixedFeedsTheDiagnosticsBack) {
  auto o = options("replay:" + replay_file({fenced(broken_), fenced(solution_)}));
  auto r = compile(o, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rounds.size(), 2u);
  EXPECT_EQ(r->rounds[0].stage, "check");
  EXPECT_TRUE(r->rounds[1].assembled);
  EXPECT_EQ(r->status, "assembled, NOT verified on a GPU") << "without a GPU nothing is called verified";
  auto second = read_file(dir_ + "/round-02/messages.json");
  ASSERT_TRUE(second.ok());
  EXPECT_NE(second->find("register '%w' is not declared"), std::string::npos) << "round 2 must see round 1's diagnostics";
  EXPECT_NE(second->find("add.f32 %z, %x, %w;"), std::string::npos) << "with the offending source line";
  for (auto f : {"/best.ptx", "/best.cubin", "/report.json", "/transcript.md", "/session.json", "/round-01/reply.md",
                 "/round-01/candidate.ptx", "/round-01/result.json", "/round-01/feedback.md"})
    EXPECT_TRUE(fs::exists(dir_ + f)) << f;
  auto report = read_file(dir_ + "/report.json");
  EXPECT_NE(report->find("\"gpu_verified\": false"), std::string::npos);
  EXPECT_NE(r->summary().find("NOT verified on a GPU"), std::string::npos);
}

TEST_F(CompileTest, AReplyWithoutCodeBecomesFeedback) {
  auto o = options("replay:" + replay_file({"I would tile it in shared memory.", fenced(solution_)}));
  auto r = compile(o, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->rounds.size(), 2u);
  EXPECT_EQ(r->rounds[0].stage, "extract");
  auto fb = read_file(dir_ + "/round-01/feedback.md");
  EXPECT_NE(fb->find("no PTX kernel found"), std::string::npos);
}

TEST_F(CompileTest, ManualStopsAndResumesFromTheWrittenReply) {
  auto o = options("manual");
  auto r = compile(o, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, "pending");
  EXPECT_TRUE(fs::exists(dir_ + "/round-01/prompt.md"));
  EXPECT_NE(r->pending_message.find(dir_ + "/round-01/reply.md"), std::string::npos);
  // Resuming before a reply is written waits again, without damage.
  r = resume(dir_, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, "pending");
  ASSERT_TRUE(write_file(dir_ + "/round-01/reply.md", fenced(broken_)).ok());
  r = resume(dir_, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rounds.size(), 1u);
  EXPECT_EQ(r->status, "pending") << "round 2 waits for its reply";
  EXPECT_NE(read_file(dir_ + "/round-02/prompt.md")->find("is not declared"), std::string::npos);
  ASSERT_TRUE(write_file(dir_ + "/round-02/reply.md", fenced(solution_)).ok());
  r = resume(dir_, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rounds.size(), 2u);
  EXPECT_EQ(r->status, "assembled, NOT verified on a GPU");
}

TEST_F(CompileTest, ResumeAfterACrashBeforeEvaluationDoesNotAskTheModelAgain) {
  auto o = options("replay:" + replay_file({fenced(broken_), fenced(solution_)}));
  ASSERT_TRUE(compile(o, llm::make_provider, no_gpu_worker()).ok());
  // As if the process died after saving round 2's reply, before evaluating it.
  for (auto f : {"round.json", "result.json", "feedback.md", "candidate.ptx"}) fs::remove(dir_ + "/round-02/" + f);
  // A model that fails if asked: the saved reply must be used instead.
  ProviderFactory refusing = [](const std::string&, const llm::ProviderOptions& po) {
    return llm::make_provider("cmd:echo 'asked again' >&2; exit 7", po);
  };
  auto r = resume(dir_, refusing, no_gpu_worker());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rounds.size(), 2u);
  EXPECT_EQ(r->status.find("asked again"), std::string::npos) << r->status;
  EXPECT_TRUE(fs::exists(dir_ + "/round-02/round.json"));
  EXPECT_TRUE(r->rounds[1].assembled);
}

TEST_F(CompileTest, ProviderFailureKeepsTheSessionAndResumeContinues) {
  auto o = options("replay:" + replay_file({fenced(broken_)}));  // only one reply: round 2 fails
  auto r = compile(o, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status.rfind("stopped: replay:", 0), 0u) << r->status;
  EXPECT_TRUE(fs::exists(dir_ + "/round-02/error.txt"));
  write_replies({fenced(broken_), fenced(solution_)});  // the "model" is back
  r = resume(dir_, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rounds.size(), 2u);
  EXPECT_EQ(r->status, "assembled, NOT verified on a GPU");
}

TEST_F(CompileTest, MissingKeyIsAClearStopAndTheSessionStays) {
  const char* had = getenv("OPENAI_API_KEY");
  std::string saved = had ? had : "";
  unsetenv("OPENAI_API_KEY");
  unsetenv("OPENAI_BASE_URL");
  auto r = compile(options("openai:gpt-test"), llm::make_provider, no_gpu_worker());
  if (had) setenv("OPENAI_API_KEY", saved.c_str(), 1);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->status.find("OPENAI_API_KEY is not set"), std::string::npos) << r->status;
  EXPECT_TRUE(fs::exists(dir_ + "/session.json"));
  EXPECT_FALSE(compile(options("manual"), llm::make_provider, no_gpu_worker()).ok()) << "a second start in the same folder";
}

TEST_F(CompileTest, TranslateModeShowsTheCudaSourceAndSamplesRunApart) {
  auto o = options("replay:" + replay_file({fenced(solution_)}));
  o.prompt.mode = Mode::translate;
  o.samples = 2;
  auto r = compile(o, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rounds.size(), 2u);
  auto prompt = read_file(dir_ + "/sample-1/round-01/prompt.md");
  ASSERT_TRUE(prompt.ok());
  EXPECT_NE(prompt->find("extern \"C\" __global__ void vector_add_ref"), std::string::npos);
  EXPECT_NE(prompt->find("Compile this CUDA kernel to PTX"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ + "/sample-2/round-01/round.json"));
}

}  // namespace
}  // namespace ptxforge::agent
