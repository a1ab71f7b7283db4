#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>

#include "agent/compile.h"
#include "agent/feedback.h"
#include "agent/session_layout.h"
#include "eval/pipeline.h"
#include "testing/fake_worker.h"
#include "task/task_spec.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::agent {
namespace {

TEST(Feedback, ASanitizerReportGoesBackWithItsMeaning) {
  task::Task t = *task::load_task(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/reduce_sum");
  Hardware hw = *find_hardware("h200");
  eval::RunRecord r;
  r.gpu_verified = true;
  r.stage(eval::StageId::verify).status = eval::StageStatus::passed;
  eval::StageResult& san = r.stage(eval::StageId::sanitize);
  san.status = eval::StageStatus::failed;
  san.summary = "racecheck: 1 error: Error: Race reported between Write access at reduce_sum+0x1a0; and Read access at "
                "reduce_sum+0x1c0 [31 hazards]; by thread (0,0,0) in block (0,0,0)";
  san.held_back = true;
  san.model_summary = "racecheck: 1 error: Error: Race reported between Write access at reduce_sum+0x1a0; and Read access at "
                      "reduce_sum+0x1c0 [31 hazards]";
  std::string fb = feedback_for(t, r, hw);
  EXPECT_NE(fb.find("## compute-sanitizer\nThe results were correct, but racecheck: 1 error: Error: Race reported"), std::string::npos)
      << fb;
  EXPECT_NE(fb.find("no bar.sync between them"), std::string::npos) << fb;
  EXPECT_EQ(fb.find("by thread"), std::string::npos) << "a held-back run's thread and block stay out";
  EXPECT_NE(fb.find("Result: FAILED at sanitize: racecheck"), std::string::npos) << fb;
}

TEST(Feedback, ATensorCoreTaskIsMeasuredAgainstTheTensorCorePeak) {
  task::Task t = *task::load_task(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level2/hgemm_mma");
  Hardware hw = *find_hardware("h200");
  eval::RunRecord r;
  gpu::TimeReport tr;
  gpu::SizeTiming st;
  st.size_set = "4096";
  st.candidate.median_ms = 0.25;  // 2 * 4096^3 flops in 0.25 ms: 549.8 TFLOP/s
  tr.sizes.push_back(st);
  r.time = tr;
  std::string line = roofline_summary(t, r, hw);
  double f16 = *hw.peak_tensor_tflops(task::TensorCores::f16);
  EXPECT_NEAR(f16, 4096.0 * 132 * 1.98e9 / 1e12, 1) << "H200: 4096 dense f16 flops per SM per clock";
  EXPECT_NE(line.find(fmt::format("549.76 TFLOP/s = {:.0f}% of the {:.1f} TFLOP/s f16 tensor-core peak", 100 * 549.755813888 / f16, f16)),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("FP32"), std::string::npos) << line;
  EXPECT_NE(hw.describe().find("Dense tensor-core peaks about 1071 TFLOP/s f16/bf16, 535 tf32, 2141 fp8"), std::string::npos)
      << hw.describe();
}

TEST(Feedback, WrongResultsPerformanceAndTheHeldBackSizesStayHidden) {
  task::Task t = *task::load_task(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/vector_add");
  Hardware hw = *find_hardware("h200");
  eval::RunRecord r;
  r.stage(eval::StageId::check).status = eval::StageStatus::passed;
  eval::StageResult& verify = r.stage(eval::StageId::verify);
  verify.status = eval::StageStatus::failed;
  verify.summary = "size set 'odd' (held back), seed 1: ...";
  verify.held_back = true;
  verify.model_summary = "a held-back size, seed 1: ...";
  gpu::VerifyReport v;
  gpu::CaseResult c;
  c.size_set = "odd";
  c.shown = false;
  c.seed = 0x5EED;
  c.seed_index = 1;
  task::Comparison cmp;
  cmp.output = "c";
  cmp.count = 1000003;
  cmp.mismatches = 3;
  cmp.pass = false;
  cmp.first = {{1000000, 1.5, 0.0}};
  cmp.never_written = 3;
  cmp.hint = "3 elements were never written";
  c.outputs.push_back(cmp);
  v.cases.push_back(c);
  r.verify = v;
  std::string fb = feedback_for(t, r, hw);
  EXPECT_NE(fb.find("a held-back size (not shown to you)"), std::string::npos) << fb;
  EXPECT_EQ(fb.find("odd"), std::string::npos) << "the held-back set's name and sizes are not revealed";
  // Its class, not its numbers: a count or an index would give the size away.
  EXPECT_NE(fb.find("- output 'c' is wrong: part of the output was never written\n"), std::string::npos) << fb;
  EXPECT_EQ(fb.find("1000003"), std::string::npos) << fb;
  EXPECT_EQ(fb.find("1000000"), std::string::npos) << fb;
  EXPECT_NE(fb.find("Result: FAILED at verify: a held-back size, seed 1: ..."), std::string::npos) << fb;

  // A fault on a held-back size: the failure's flag keeps its place out of the feedback.
  r.verify.reset();
  r.failure = gpu::Failure{gpu::FailureKind::fault, "CUDA_ERROR_ILLEGAL_ADDRESS (700)", "size set 'odd', seed 1", true};
  fb = feedback_for(t, r, hw);
  EXPECT_NE(fb.find("## Runtime failure (fault)\nfault: CUDA_ERROR_ILLEGAL_ADDRESS — on a held-back size (not shown to you)"),
            std::string::npos) << fb;
  EXPECT_EQ(fb.find("odd"), std::string::npos) << fb;
  r.failure->held_back = false;
  r.failure->where = "size set 'small', seed 1";
  EXPECT_NE(feedback_for(t, r, hw).find("— size set 'small', seed 1"), std::string::npos) << "shown sizes are named";

  eval::RunRecord fast;
  fast.passed = true;
  fast.gpu_verified = true;
  gpu::TimeReport tr;
  gpu::SizeTiming st;
  st.size_set = "large";
  st.candidate.median_ms = 0.063;
  st.reference.median_ms = 0.065;
  tr.sizes.push_back(st);
  tr.trials_pass = true;
  tr.reverify_pass = true;
  fast.time = tr;
  fb = feedback_for(t, fast, hw);
  EXPECT_NE(fb.find("large: 0.0630 ms; nvcc's kernel 0.0650 ms (1.03x)"), std::string::npos) << fb;
  EXPECT_NE(fb.find("GB/s = 66% of the 4814 GB/s peak"), std::string::npos) << fb;  // 12 B x 16M / 63 us
  EXPECT_LE(feedback_for(t, fast, hw, 100).size(), 160u) << "capped";
}

// The pipeline's own records, through a fake worker whose GPU fails on held-back sizes: the
// feedback never names them, whichever way the failure came.
TEST(Feedback, TheModelNeverSeesAHeldBackSizeSetOfARealRecord) {
  if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
  std::string root = PTXFORGE_SOURCE_DIR;
  task::Task t = *task::load_task(root + "/tasks/level1/vector_add");
  Hardware hw = *find_hardware("h200");
  for (bool fault : {false, true}) {
    gpu::FakeWorker gpu;
    gpu.answer = [&](const gpu::Job& job) {
      gpu::Outcome o;
      if (job.kind != gpu::JobKind::verify) {
        o.failure = gpu::Failure{gpu::FailureKind::driver, "no GPU", ""};
        return o;
      }
      if (fault) {
        o.failure = gpu::Failure{gpu::FailureKind::fault, "CUDA_ERROR_ILLEGAL_ADDRESS (700)", "size set 'tiny', seed 3", true};
        return o;
      }
      gpu::VerifyReport v;
      gpu::CaseResult c;
      c.size_set = "tiny";
      c.shown = false;
      c.seed = 0x5EED;
      c.seed_index = 3;
      c.problems.push_back("guard after 'c' was overwritten");
      v.cases.push_back(c);
      o.verify = v;
      return o;
    };
    eval::Pipeline p(gpu);
    eval::RunRecord r = p.run(t, root + "/tasks/level1/vector_add/solution.ptx", {});
    ASSERT_NE(r.verdict().find("tiny"), std::string::npos) << "a person is told: " << r.verdict();
    std::string fb = feedback_for(t, r, hw);
    EXPECT_EQ(fb.find("tiny"), std::string::npos) << fb;
    EXPECT_NE(fb.find("held-back size"), std::string::npos) << fb;
  }
}

// A failing held-back case with distinctive numbers (777777 elements, 654321 wrong, the first
// at index 123457, guard offset 3111108, values 4321.5 and 0.000123) goes through the pipeline
// (a fake worker stands in for the GPU) into everything a model reads: the model's verdict,
// every stage's model text, feedback.md (the next round's prompt and the repair prompt) and
// the verdict exported training data takes from it. None of those numbers may appear there,
// while the person's verdict keeps them and the same case on a shown size shows them all.
gpu::CaseResult case_with_secrets(bool shown) {
  gpu::CaseResult c;
  c.size_set = shown ? "small" : "odd";
  c.shown = shown;
  c.seed_index = 2;
  c.problems = {"write past the end of 'c': 98765 guard bytes changed, the first at byte offset 3111108 (element 777777)",
                "input 'a' was modified (first changed element: 123457)"};
  task::Comparison o;
  o.output = "c";
  o.count = 777777;
  o.mismatches = 654321;
  o.pass = false;
  o.max_abs_error = 4321.5;
  o.max_rel_error = 0.000123;
  o.first = {{123457, 4321.5, 0.000123}};
  o.hint = "only the first 123457 of 777777 elements are correct: does the grid cover the whole output, and does the index "
           "include the block index?";
  c.outputs.push_back(o);
  return c;
}

const std::vector<std::string> kSecrets = {"777777", "123457", "654321", "3111108", "98765", "4321.5", "0.000123", "odd"};

TEST(HeldBackLeak, NoNumberOfAHeldBackCaseReachesAnythingTheModelReads) {
  if (!find_cuda_tool("ptxas") || !find_cuda_tool("nvcc")) GTEST_SKIP() << "needs ptxas and nvcc";
  std::string root = PTXFORGE_SOURCE_DIR;
  task::Task t = *task::load_task(root + "/tasks/level1/vector_add");
  Hardware hw = *find_hardware("h200");
  enum class Way { wrong_results, fault, both_problems_only };
  for (Way way : {Way::wrong_results, Way::fault, Way::both_problems_only}) {
    gpu::FakeWorker gpu;
    gpu.answer = [&](const gpu::Job& job) {
      gpu::Outcome o;
      if (job.kind != gpu::JobKind::verify) {
        o.failure = gpu::Failure{gpu::FailureKind::driver, "no GPU", ""};
        return o;
      }
      if (way == Way::fault) {
        o.failure = gpu::Failure{gpu::FailureKind::fault,
                                 "out-of-bounds access near buffer 'c' (write past the end of 'c': 98765 guard bytes "
                                 "changed, the first at byte offset 3111108 (element 777777)): running the candidate: "
                                 "CUDA_ERROR_ILLEGAL_ADDRESS (700)",
                                 "size set 'odd', seed 2", true};
        return o;
      }
      gpu::VerifyReport v;
      gpu::CaseResult fine;
      fine.size_set = "small";
      fine.seed_index = 1;
      fine.pass = true;
      v.cases.push_back(fine);
      v.cases.push_back(case_with_secrets(false));
      if (way == Way::both_problems_only) v.cases.back().outputs.clear();
      o.verify = v;
      return o;
    };
    eval::Pipeline p(gpu);
    eval::RunRecord r = p.run(t, root + "/tasks/level1/vector_add/solution.ptx", {});
    ASSERT_NE(r.verdict().find("3111108"), std::string::npos) << "the person's verdict keeps the detail: " << r.verdict();
    std::string fb = feedback_for(t, r, hw);
    std::vector<std::pair<std::string, std::string>> model_facing = {
        {"the model's verdict", r.verdict(eval::Audience::model)},
        {"feedback.md", fb},
        {"the exported verdict", verdict_in_feedback(fb)}};
    for (auto& st : r.stages) model_facing.push_back({std::string(eval::to_string(st.id)), st.text(eval::Audience::model)});
    for (auto& [what, text] : model_facing)
      for (auto& secret : kSecrets)
        EXPECT_EQ(text.find(secret), std::string::npos) << what << " holds '" << secret << "':\n" << text;
    EXPECT_NE(fb.find("held-back size"), std::string::npos) << fb;
    EXPECT_FALSE(verdict_in_feedback(fb).empty());
    // Each way still says what went wrong, in words.
    if (way == Way::wrong_results) {
      EXPECT_NE(fb.find("- output 'c' is wrong: only a leading part of the output is correct"), std::string::npos) << fb;
      EXPECT_NE(fb.find("- write past the end of 'c'\n"), std::string::npos) << fb;
      EXPECT_NE(fb.find("- input 'a' was modified\n"), std::string::npos) << fb;
    }
    if (way == Way::fault) {
      EXPECT_NE(fb.find("fault: out-of-bounds access near buffer 'c' — on a held-back size"), std::string::npos) << fb;
    }
  }
}

TEST(HeldBackLeak, AShownCaseKeepsEveryNumber) {
  task::Task t = *task::load_task(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/vector_add");
  Hardware hw = *find_hardware("h200");
  eval::RunRecord r;
  eval::StageResult& verify = r.stage(eval::StageId::verify);
  verify.status = eval::StageStatus::failed;
  verify.summary = "size set 'small', seed 2: ...";
  gpu::VerifyReport v;
  v.cases.push_back(case_with_secrets(true));
  r.verify = v;
  std::string fb = feedback_for(t, r, hw);
  for (auto& secret : {"777777", "123457", "654321", "3111108", "4321.5", "0.000123"})
    EXPECT_NE(fb.find(secret), std::string::npos) << "a shown case loses '" << secret << "':\n" << fb;
  EXPECT_NE(fb.find("On size set 'small', seed 2:"), std::string::npos) << fb;
}

TEST(HeldBackLeak, TheExportedVerdictIsTheOneTheModelWasTold) {
  EXPECT_EQ(verdict_in_feedback("Note on your reply:\n- x\n\nResult: FAILED at verify: a held-back size, seed 1: output "
                                "'c' is wrong\n\n## Wrong results\n"),
            "FAILED at verify: a held-back size, seed 1: output 'c' is wrong");
  EXPECT_EQ(verdict_in_feedback(feedback_no_code("no ```ptx block")), "");
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// ptxas's performance notes arrive as info lines (notes) and warnings with a C-code; they go
// back to the model once per code, with how often ptxas said it, capped, apart from the plain
// warnings.
TEST(Feedback, PtxasPerformanceNotesReachTheModelOncePerCodeAndCapped) {
  task::Task t = *task::load_task(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level2/hgemm_mma");
  Hardware hw = *find_hardware("h200");
  std::string log =
      "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to the "
      "presence of Extern calls in the function 'hgemm'.\n"
      "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to the "
      "presence of Extern calls in the function 'hgemm'.\n"
      "ptxas k.ptx, line 2; warning : (C7517) warpgroup.wait is injected in around line 2 by compiler to allow use of "
      "registers defined by GMMA in function 'hgemm'\n"
      "ptxas k.ptx, line 1; warning : something odd\n"
      "ptxas info    : Compiling entry function 'hgemm' for 'sm_90a'\n";
  for (int i = 0; i < 7; ++i)
    log += fmt::format("ptxas info    : (C7519) warpgroup.arrive is injected in around line {} by compiler to allow use "
                       "of registers in GMMA in function 'hgemm'\n",
                       100 + i);
  toolchain::AssembleResult a;
  parse_ptxas_output(log, "a\nb\n", a);
  eval::RunRecord r;
  r.source_text = "a\nb\n";
  for (auto& d : a.diags.list()) r.diagnostics.add(d);
  r.stage(eval::StageId::check).status = eval::StageStatus::passed;
  r.stage(eval::StageId::assemble).status = eval::StageStatus::passed;
  eval::StageResult& v = r.stage(eval::StageId::verify);
  v.status = eval::StageStatus::failed;
  v.summary = "size set 'small', seed 1: 3 of 64 elements wrong";
  std::string fb = feedback_for(t, r, hw);
  ASSERT_NE(fb.find("## ptxas performance notes\n"), std::string::npos) << fb;
  EXPECT_NE(fb.find("- (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to the presence "
                    "of Extern calls in the function 'hgemm' (2 times)\n"),
            std::string::npos)
      << fb;
  EXPECT_EQ(count(fb, "(C7515)"), 1u) << fb;
  EXPECT_NE(fb.find("- (C7519) warpgroup.arrive is injected in around line 100 by compiler to allow use of registers in GMMA "
                    "in function 'hgemm' (7 times)\n"),
            std::string::npos)
      << fb;
  EXPECT_EQ(count(fb, "(C7519)"), 1u) << fb;
  EXPECT_NE(fb.find("- line 2: (C7517) warpgroup.wait is injected"), std::string::npos) << fb;
  EXPECT_EQ(count(fb, "(C7517)"), 1u) << "a coded warning is listed as a note, not again as a warning\n" << fb;
  size_t warnings = fb.find("## Warnings");
  ASSERT_NE(warnings, std::string::npos) << fb;
  EXPECT_NE(fb.find("something odd", warnings), std::string::npos) << "plain warnings stay where they were";
  EXPECT_EQ(fb.find("Compiling entry"), std::string::npos);

  // Capped at six codes.
  toolchain::AssembleResult many;
  std::string many_log;
  for (int code = 7500; code < 7510; ++code)
    many_log += fmt::format("ptxas info    : (C{}) Potential Performance Loss: reason {}\n", code, code);
  parse_ptxas_output(many_log, "", many);
  eval::RunRecord m;
  m.stage(eval::StageId::verify) = v;
  for (auto& d : many.diags.list()) m.diagnostics.add(d);
  fb = feedback_for(t, m, hw);
  EXPECT_EQ(count(fb, "Potential Performance Loss: reason"), 6u) << fb;
  EXPECT_NE(fb.find("- ... and 4 more\n"), std::string::npos) << fb;

  // No notes: no section.
  eval::RunRecord quiet;
  quiet.stage(eval::StageId::verify) = v;
  EXPECT_EQ(feedback_for(t, quiet, hw).find("ptxas performance notes"), std::string::npos);
}

eval::RunRecord verified_and_timed(double candidate_ms, double nvcc_ms, std::optional<double> library_ms) {
  eval::RunRecord r;
  for (auto id : {eval::StageId::check, eval::StageId::assemble, eval::StageId::verify, eval::StageId::time})
    r.stage(id).status = eval::StageStatus::passed;
  r.passed = true;
  r.gpu_verified = true;
  gpu::TimeReport tr;
  tr.trials_pass = tr.reverify_pass = true;
  gpu::SizeTiming st;
  st.size_set = "1024";
  st.candidate.median_ms = candidate_ms;
  st.reference.median_ms = nvcc_ms;
  if (library_ms) {
    st.library = gpu::TimingStats{};
    st.library->median_ms = *library_ms;
    st.library_name = "cuBLAS sgemm";
  }
  tr.sizes.push_back(st);
  r.time = tr;
  return r;
}

const char* kFixIt = "Fix the problems";

// The last line says what to do next; "fix the problems" only when something failed.
TEST(Feedback, TheClosingLineFitsTheRound) {
  task::Task t = *task::load_task(std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/sgemm");
  Hardware hw = *find_hardware("h200");
  eval::RunRecord slow = verified_and_timed(1.0, 1.5, 0.87);
  std::string fb = feedback_for(t, slow, hw);
  EXPECT_EQ(fb.find(kFixIt), std::string::npos) << fb;
  EXPECT_TRUE(ends_with(fb, "The kernel is correct. Make it faster if you can, keeping it correct; answer with the complete module."))
      << fb;

  fb = feedback_for(t, slow, hw, SpeedupTarget{1.0, SpeedupBase::library});
  EXPECT_EQ(fb.find(kFixIt), std::string::npos) << fb;
  EXPECT_NE(fb.find("Verified at 0.87x cuBLAS sgemm; the target is 1.0x the library: make it faster"), std::string::npos) << fb;
  fb = feedback_for(t, slow, hw, SpeedupTarget{1.6, SpeedupBase::nvcc});
  EXPECT_NE(fb.find("Verified at 1.50x nvcc's kernel; the target is 1.6x nvcc: make it faster"), std::string::npos) << fb;
  fb = feedback_for(t, slow, hw, SpeedupTarget{1.25, SpeedupBase::nvcc});
  EXPECT_NE(fb.find("Verified at 1.50x nvcc's kernel, which meets the target of 1.25x nvcc"), std::string::npos) << fb;
  EXPECT_EQ(fb.find("make it faster"), std::string::npos) << fb;

  eval::RunRecord untimed = slow;
  untimed.time.reset();
  fb = feedback_for(t, untimed, hw, SpeedupTarget{1.0, SpeedupBase::library});
  EXPECT_NE(fb.find("not measured in this run, so the target (1.0x the library) is not judged"), std::string::npos) << fb;
  EXPECT_EQ(fb.find(kFixIt), std::string::npos) << fb;

  // Assembled, but no GPU here: nothing failed, nothing to fix.
  eval::RunRecord no_gpu;
  no_gpu.stage(eval::StageId::check).status = eval::StageStatus::passed;
  no_gpu.stage(eval::StageId::assemble).status = eval::StageStatus::passed;
  eval::StageResult& v = no_gpu.stage(eval::StageId::verify);
  v.status = eval::StageStatus::skipped;
  v.summary = "NOT verified on a GPU: no CUDA driver";
  no_gpu.failure = gpu::Failure{gpu::FailureKind::driver, "no CUDA driver", ""};
  fb = feedback_for(t, no_gpu, hw, SpeedupTarget{1.0, SpeedupBase::library});
  EXPECT_EQ(fb.find(kFixIt), std::string::npos) << fb;
  EXPECT_NE(fb.find("assembled, but it could not be run here: there is no GPU on this machine"), std::string::npos) << fb;

  // A failure still asks for a fix.
  eval::RunRecord broken = no_gpu;
  broken.stage(eval::StageId::verify).status = eval::StageStatus::failed;
  broken.stage(eval::StageId::verify).summary = "size set '1024', seed 1: 5 of 9 elements wrong";
  broken.failure.reset();
  EXPECT_TRUE(ends_with(feedback_for(t, broken, hw), "launch lines first.")) << feedback_for(t, broken, hw);
  EXPECT_NE(feedback_for(t, broken, hw).find(kFixIt), std::string::npos);
}

TEST(Feedback, ATruncatedReplyAsksForAShorterModule) {
  std::string fb = feedback_truncated(16384, "Let me think about tiling. First, ...");
  EXPECT_NE(fb.find("Your reply was cut at 16384 tokens (the limit), so none of it was checked: the code block had not even begun."),
            std::string::npos)
      << fb;
  EXPECT_NE(fb.find("begun. Answer with a shorter module: one ```ptx block"), std::string::npos) << fb;
  EXPECT_EQ(fb.find(kFixIt), std::string::npos);
  fb = feedback_truncated(8000, "```ptx\n// @launch grid=(1,1,1) block=(1,1,1)\n.version 8.0\n.visible .entry k(");
  EXPECT_NE(fb.find("cut at 8000 tokens (the limit), so none of it was checked. Answer"), std::string::npos) << fb;
}

// The loop: a reply the model was stopped in is not extracted or checked; the round says so,
// the model is told its limit, and the next round goes on. No ptxas or GPU is needed: neither
// round has a module to check.
TEST(Feedback, TheLoopDoesNotCheckATruncatedReply) {
  std::string dir = ::testing::TempDir() + "/cut-session-" + std::to_string(::getpid());
  std::string replies = dir + "-replies.json";
  ASSERT_TRUE(write_file(replies, R"({"replies": [
      {"text": "```ptx\n// @launch grid=(ceil_div(n,256),1,1) block=(256,1,1)\n.version 8.0\n.target sm_90a\n.visible .entry vector_add(", "truncated": true},
      "I could not finish."]})")
                  .ok());
  CompileOptions o;
  o.task_dir = std::string(PTXFORGE_SOURCE_DIR) + "/tasks/level1/vector_add";
  o.model = "replay:" + replies;
  o.out = dir;
  o.rounds = 2;
  o.cache = false;
  o.max_tokens = 4000;
  o.prompt.knowledge = KnowledgeLevel::none;
  o.hardware_profile = "h200";
  std::vector<std::string> no_gpu = {"/bin/sh", "-c", "while read l; do echo '{\"failure\":{\"kind\":\"driver\",\"message\":\"x\"}}'; done"};
  auto r = compile(o, llm::make_provider, no_gpu);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rounds.size(), 2u);
  EXPECT_EQ(r->rounds[0].verdict, kTruncatedVerdict);
  EXPECT_FALSE(r->rounds[0].extracted);
  std::string round1 = layout::round(dir, 1);
  EXPECT_FALSE(file_exists(layout::candidate(round1, false))) << "a cut reply is not written out as a candidate";
  EXPECT_FALSE(file_exists(layout::result(round1))) << "nor checked";
  auto fb = read_file(layout::feedback(round1));
  ASSERT_TRUE(fb.ok());
  EXPECT_NE(fb->find("Your reply was cut at 4000 tokens (the limit)"), std::string::npos) << *fb;
  auto first = load_messages(round1);
  ASSERT_TRUE(first.ok());
  EXPECT_NE(first->back().content.find("Your reply may be at most 4000 tokens"), std::string::npos) << "the prompt states the limit";
  auto second = load_messages(layout::round(dir, 2));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->back().content, *fb) << "the next round is told";
  EXPECT_NE(r->rounds[1].verdict.find("no kernel in the reply"), std::string::npos) << r->rounds[1].verdict;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::remove(replies, ec);
}

}  // namespace
}  // namespace ptxforge::agent
