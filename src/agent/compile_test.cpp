// The compile loop with scripted replies and no GPU (a fake worker answers "no driver"):
// feedback carries the previous reply's diagnostics, replies without code become feedback,
// and a session resumes from every stage it can stop at.
#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>

#include "agent/compile.h"
#include "gpu/protocol.h"
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
  EXPECT_EQ(r->status, SessionStatus::assembled_not_verified) << "without a GPU nothing is called verified";
  auto second = read_file(dir_ + "/round-02/messages.json");
  ASSERT_TRUE(second.ok());
  EXPECT_NE(second->find("register '%w' is not declared"), std::string::npos) << "round 2 must see round 1's diagnostics";
  EXPECT_NE(second->find("add.f32 %z, %x, %w;"), std::string::npos) << "with the offending source line";
  for (auto f : {"/best.ptx", "/best.cubin", "/report.json", "/transcript.md", "/session.json", "/round-01/reply.md",
                 "/round-01/candidate.ptx", "/round-01/result.json", "/round-01/feedback.md"})
    EXPECT_TRUE(fs::exists(dir_ + f)) << f;
  auto report = read_file(dir_ + "/report.json");
  EXPECT_NE(report->find("\"gpu_verified\": false"), std::string::npos);
  EXPECT_NE(report->find("\"status\": \"assembled, NOT verified on a GPU\""), std::string::npos) << "report.json keeps its spelling";
  EXPECT_NE(read_file(dir_ + "/round-01/round.json")->find("\"stage\": \"check\""), std::string::npos);
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
  EXPECT_EQ(r->status, SessionStatus::pending);
  EXPECT_TRUE(fs::exists(dir_ + "/round-01/prompt.md"));
  EXPECT_NE(r->pending_message.find(dir_ + "/round-01/reply.md"), std::string::npos);
  // Resuming before a reply is written waits again, without damage.
  r = resume(dir_, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, SessionStatus::pending);
  ASSERT_TRUE(write_file(dir_ + "/round-01/reply.md", fenced(broken_)).ok());
  r = resume(dir_, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rounds.size(), 1u);
  EXPECT_EQ(r->status, SessionStatus::pending) << "round 2 waits for its reply";
  EXPECT_NE(read_file(dir_ + "/round-02/prompt.md")->find("is not declared"), std::string::npos);
  ASSERT_TRUE(write_file(dir_ + "/round-02/reply.md", fenced(solution_)).ok());
  r = resume(dir_, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rounds.size(), 2u);
  EXPECT_EQ(r->status, SessionStatus::assembled_not_verified);
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
  EXPECT_EQ(r->status_text().find("asked again"), std::string::npos) << r->status_text();
  EXPECT_TRUE(fs::exists(dir_ + "/round-02/round.json"));
  EXPECT_TRUE(r->rounds[1].assembled);
}

TEST_F(CompileTest, ProviderFailureKeepsTheSessionAndResumeContinues) {
  auto o = options("replay:" + replay_file({fenced(broken_)}));  // only one reply: round 2 fails
  auto r = compile(o, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status_text().rfind("stopped: replay:", 0), 0u) << r->status_text();
  EXPECT_TRUE(fs::exists(dir_ + "/round-02/error.txt"));
  write_replies({fenced(broken_), fenced(solution_)});  // the "model" is back
  r = resume(dir_, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rounds.size(), 2u);
  EXPECT_EQ(r->status, SessionStatus::assembled_not_verified);
}

TEST_F(CompileTest, MissingKeyIsAClearStopAndTheSessionStays) {
  const char* had = getenv("OPENAI_API_KEY");
  std::string saved = had ? had : "";
  unsetenv("OPENAI_API_KEY");
  unsetenv("OPENAI_BASE_URL");
  auto r = compile(options("openai:gpt-test"), llm::make_provider, no_gpu_worker());
  if (had) setenv("OPENAI_API_KEY", saved.c_str(), 1);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->status_text().find("OPENAI_API_KEY is not set"), std::string::npos) << r->status_text();
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

TEST(SessionStatus, SpelledOnceBothWaysAsReportJsonHasThem) {
  for (auto st : {SessionStatus::verified, SessionStatus::assembled_not_verified, SessionStatus::not_verified,
                  SessionStatus::pending, SessionStatus::stopped})
    EXPECT_EQ(session_status_from_string(to_string(st)), st);
  EXPECT_EQ(to_string(SessionStatus::assembled_not_verified), "assembled, NOT verified on a GPU");
  CompileResult r;
  r.status = SessionStatus::stopped;
  r.stop_reason = "OPENAI_API_KEY is not set";
  EXPECT_EQ(r.status_text(), "stopped: OPENAI_API_KEY is not set");
  EXPECT_NE(r.summary().find("status: stopped: OPENAI_API_KEY is not set"), std::string::npos);
  EXPECT_FALSE(session_status_from_string("done").has_value());
}

TEST(CompileSummary, TheLastRoundIsNamedWhereItIsNotTheBest) {
  CompileResult r;
  r.session = "s";
  r.status = SessionStatus::verified;
  RoundSummary good;
  good.round = 1;
  good.extracted = good.assembled = good.passed = good.gpu_verified = true;
  good.verdict = "passed";
  good.speedup_vs_nvcc = 1.1;
  RoundSummary worse;
  worse.round = 2;
  worse.extracted = true;
  worse.stage = "check";
  worse.verdict = "FAILED at check: 1 error";
  r.rounds = {good, worse};
  r.best = good;
  std::string text = r.summary();
  EXPECT_NE(text.find("status: verified\nlast round: round 2 — "), std::string::npos) << text;
  r.rounds = {good};
  EXPECT_EQ(r.summary().find("last round"), std::string::npos);  // the best is the last: nothing to add
}

TEST_F(CompileTest, SavedOptionsComeBackWhole) {
  auto o = options("manual");
  o.prompt.arch = "sm_80";
  o.run.arch = "sm_80";
  o.prompt.mode = Mode::translate;
  o.prompt.knowledge = KnowledgeLevel::contracts;
  o.prompt.fewshot_nvcc = true;
  o.prompt.role = false;
  o.rounds = 5;
  o.samples = 3;
  o.target_speedup = 1.5;
  o.temperature = 0.7;
  o.max_tokens = 999;
  o.run.seeds = 7;
  o.run.held_back = false;
  o.run.time = false;
  o.run.sanitize = true;
  o.prices = {2.5, 10, true};
  o.prompt.repair_candidate = ".version 8.0\n// a failed kernel\n";
  o.prompt.repair_feedback = "verify failed: out[3] = 2, expected 5\n";
  std::string saved = session_options_json(o);
  auto back = session_options_from(saved, dir_);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(session_options_json(*back), saved);
  EXPECT_EQ(back->run.arch, "sm_80") << "--arch is not lost on resume";
  EXPECT_EQ(back->prompt.arch, "sm_80");
  EXPECT_EQ(back->run.seeds, 7);
  EXPECT_TRUE(back->run.sanitize);
  EXPECT_EQ(back->prompt.knowledge, KnowledgeLevel::contracts);
  EXPECT_EQ(back->prompt.repair_candidate, o.prompt.repair_candidate) << "a repair session resumes as a repair";
  EXPECT_EQ(back->prompt.repair_feedback, o.prompt.repair_feedback);
  EXPECT_EQ(fs::weakly_canonical(back->task_dir), fs::weakly_canonical(o.task_dir));
  EXPECT_NE(saved.find("\"suite\": \"level1/vector_add\""), std::string::npos) << "a suite task is saved by name: " << saved;
  EXPECT_EQ(saved.find(kRoot), std::string::npos) << "no path of this checkout in session.json";
}

TEST_F(CompileTest, ASessionResumesAfterItAndItsTaskMove) {
  std::string from = dir_ + "-a", to = dir_ + "-b";
  fs::remove_all(from);
  fs::remove_all(to);
  fs::create_directories(from);
  fs::copy(kRoot + "/tasks/level1/vector_add", from + "/task", fs::copy_options::recursive);
  auto o = options("manual");
  o.task_dir = from + "/task";
  o.out = from + "/session";
  auto r = compile(o, llm::make_provider, no_gpu_worker());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, SessionStatus::pending);
  EXPECT_EQ(read_file(from + "/session/session.json")->find(from), std::string::npos) << "the task is saved relative to the session";
  fs::rename(from, to);  // another machine, another place
  ASSERT_TRUE(write_file(to + "/session/round-01/reply.md", fenced(solution_)).ok());
  r = resume(to + "/session", llm::make_provider, no_gpu_worker(), false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, SessionStatus::assembled_not_verified);
  EXPECT_TRUE(fs::exists(to + "/session/best.ptx"));
  // The saved round finds its candidate in its new place too.
  r = resume(to + "/session", llm::make_provider, no_gpu_worker(), false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->best.has_value());
  EXPECT_EQ(r->best->candidate, to + "/session/round-01/candidate.ptx");
}

TEST_F(CompileTest, BadOptionsLeaveNoSessionFolder) {
  for (auto bad : {std::pair<std::string, std::string>{"model", "opnai:x"}, {"arch", "sm_9x"}, {"hardware", "h999"},
                   {"seeds", "0"}, {"temperature", "-1"}}) {
    auto o = options("manual");
    if (bad.first == "model") o.model = bad.second;
    if (bad.first == "arch") o.run.arch = o.prompt.arch = bad.second;
    if (bad.first == "hardware") o.hardware_profile = bad.second;
    if (bad.first == "seeds") o.run.seeds = 0;
    if (bad.first == "temperature") o.temperature = -1;
    auto r = compile(o, llm::make_provider, no_gpu_worker());
    EXPECT_FALSE(r.ok()) << bad.first;
    EXPECT_FALSE(fs::exists(dir_)) << bad.first << " made a folder";
  }
  auto o = options("replay:/nonexistent/replies.json");
  EXPECT_FALSE(compile(o, llm::make_provider, no_gpu_worker()).ok());
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(CompileTest, DefaultSessionFoldersDoNotCollide) {
  auto a = claim_session_dir(dir_ + "/sessions/vector_add-20261201-101500");
  auto b = claim_session_dir(dir_ + "/sessions/vector_add-20261201-101500");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(fs::is_directory(*a) && fs::is_directory(*b));
}

TEST_F(CompileTest, ResumingWhereThereIsAGpuVerifiesRoundsOnlyAssembledWithoutOne) {
  RoundSummary assembled;
  assembled.no_gpu = assembled.assembled = true;
  EXPECT_TRUE(needs_gpu_reverify(assembled, true));
  EXPECT_FALSE(needs_gpu_reverify(assembled, false));
  RoundSummary failed_check;
  failed_check.no_gpu = true;
  EXPECT_FALSE(needs_gpu_reverify(failed_check, true)) << "nothing to verify";

  auto o = options("replay:" + replay_file({fenced(solution_)}));
  ASSERT_TRUE(compile(o, llm::make_provider, no_gpu_worker()).ok());
  // A worker that notes each start: verifying a candidate starts one.
  std::string starts = dir_ + "-worker-starts";
  fs::remove(starts);
  std::vector<std::string> noting = {"/bin/sh", "-c", "echo started >> '" + starts + "'; " + no_gpu_worker()[2]};
  ProviderFactory refusing = [](const std::string&, const llm::ProviderOptions& po) {
    return llm::make_provider("cmd:echo 'asked again' >&2; exit 7", po);
  };
  auto r = resume(dir_, refusing, noting, false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(fs::exists(starts)) << "no GPU here: the saved verdict stands";
  r = resume(dir_, refusing, noting, true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(fs::exists(starts)) << "a GPU here: the assembled round is verified again";
  ASSERT_EQ(r->rounds.size(), 1u) << "from the saved reply, without asking the model";
  EXPECT_EQ(r->status_text().find("asked again"), std::string::npos) << r->status_text();
}

// A worker that plays a GPU: every candidate verifies, and the n-th time job answers from
// time-<n>.json (its count kept in a file: the client restarts the worker around a peaks job).
std::vector<std::string> timing_worker(const std::string& dir, const std::vector<double>& candidate_ms) {
  gpu::Outcome device;
  device.device = gpu::DeviceInfo{};
  device.device->name = "Fake GPU";
  device.device->cc_major = 9;
  EXPECT_TRUE(write_file(dir + "/device.json", gpu::encode_outcome(device) + "\n").ok());
  gpu::Outcome verify;
  verify.verify = gpu::VerifyReport{};
  gpu::CaseResult c;
  c.size_set = "small";
  c.seed_index = 1;
  c.pass = true;
  verify.verify->cases.push_back(c);
  EXPECT_TRUE(write_file(dir + "/verify.json", gpu::encode_outcome(verify) + "\n").ok());
  for (size_t i = 0; i < candidate_ms.size(); ++i) {
    gpu::Outcome time;
    time.time = gpu::TimeReport{};
    gpu::SizeTiming st;
    st.size_set = "large";
    st.candidate.median_ms = candidate_ms[i];
    st.candidate.min_ms = candidate_ms[i] * 0.95;
    st.candidate.trials = 40;
    st.reference.median_ms = 0.2;
    st.reference.min_ms = 0.19;
    st.reference.trials = 40;
    st.input_sets = 4;
    time.time->sizes.push_back(st);
    time.time->trials_pass = time.time->reverify_pass = true;
    EXPECT_TRUE(write_file(fmt::format("{}/time-{}.json", dir, i + 1), gpu::encode_outcome(time) + "\n").ok());
  }
  std::string script = fmt::format(
      R"(D='{}'; while read l; do case "$l" in
  *'"op":"device_info"'*) cat "$D/device.json";;
  *'"op":"verify"'*) cat "$D/verify.json";;
  *'"op":"time"'*) n=$(( $(cat "$D/count" 2>/dev/null || echo 0) + 1 )); echo $n > "$D/count"; cat "$D/time-$n.json";;
  *) echo '{{"failure":{{"kind":"driver","message":"not in this fake"}},"fatal":false}}';;
esac; done)",
      dir);
  return {"/bin/sh", "-c", script};
}

TEST_F(CompileTest, ASlowerRoundIsToldToStartFromTheBestOne) {
  std::string fake = dir_ + "-gpu";
  fs::remove_all(fake);
  fs::create_directories(fake);
  // Round 1 at 1.00x nvcc, round 2 at 0.80x: below the target, and slower than round 1.
  auto worker = timing_worker(fake, {0.2, 0.25});
  std::string slower = solution_;
  slower.insert(slower.find(".visible .entry"), "// round two\n");
  auto o = options("replay:" + replay_file({fenced(solution_), fenced(slower)}));
  o.rounds = 2;
  o.run.sanitize = false;
  o.target_speedup = 2;
  auto r = compile(o, llm::make_provider, worker);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rounds.size(), 2u) << r->summary();
  ASSERT_TRUE(r->rounds[0].gpu_verified) << r->rounds[0].verdict;
  EXPECT_NEAR(r->rounds[0].speedup_vs_nvcc, 1.0, 1e-9);
  EXPECT_NEAR(r->rounds[1].speedup_vs_nvcc, 0.8, 1e-9);
  EXPECT_EQ(read_file(dir_ + "/round-01/feedback.md")->find("## Your rounds so far"), std::string::npos) << "round 1 has no history";
  auto fb = read_file(dir_ + "/round-02/feedback.md");
  ASSERT_TRUE(fb.ok());
  EXPECT_NE(fb->find("Round 1 -> 2: 1.00x -> 0.80x nvcc, 20% slower."), std::string::npos) << *fb;
  EXPECT_NE(fb->find("Start from round 1's kernel, not this one:\n```ptx\n" + solution_), std::string::npos) << *fb;
  EXPECT_LE(fb->size(), 8000u);
  // The session's best is the round the feedback named.
  ASSERT_TRUE(r->best.has_value());
  EXPECT_EQ(r->best->round, 1);
  EXPECT_EQ(read_file(dir_ + "/best.ptx")->find("// round two"), std::string::npos);
  // Evaluated again after a crash (the model not asked again): the same words.
  for (auto f : {"round.json", "result.json", "feedback.md", "candidate.ptx"}) fs::remove(dir_ + "/round-02/" + f);
  ASSERT_TRUE(write_file(fake + "/count", "1\n").ok());
  ProviderFactory refusing = [](const std::string&, const llm::ProviderOptions& po) {
    return llm::make_provider("cmd:echo 'asked again' >&2; exit 7", po);
  };
  auto again = resume(dir_, refusing, worker);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->rounds.size(), 2u) << again->summary();
  EXPECT_EQ(*read_file(dir_ + "/round-02/feedback.md"), *fb);
}

}  // namespace
}  // namespace ptxforge::agent
