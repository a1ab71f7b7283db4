#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>

#include "agent/prompt.h"
#include "gpu/guard_layout.h"
#include "ptx/parser.h"
#include "task/buffers.h"
#include "task/launch_spec.h"
#include "task/task_spec.h"
#include "util/paths.h"

namespace ptxforge::agent {
namespace {

const std::string kRoot = PTXFORGE_SOURCE_DIR;

struct Fixture {
  task::Task vector_add = *task::load_task(kRoot + "/tasks/level1/vector_add");
  task::Task tma = *task::load_task(kRoot + "/tests/tasks/tma_copy");
  std::vector<KnowledgeDoc> knowledge = *load_knowledge(kRoot + "/knowledge");
  Hardware hw = *find_hardware("h200");
  std::string text(const task::Task& t, PromptOptions o) {
    auto m = build_prompt(t, o, hw, knowledge);
    EXPECT_TRUE(m.ok());
    std::string all;
    for (auto& msg : *m) all += "[" + msg.role + "]\n" + msg.content + "\n";
    return all;
  }
};

TEST(Prompt, KnowledgeLevelsAddTheirParts) {
  Fixture f;
  PromptOptions o;
  o.knowledge = KnowledgeLevel::none;
  std::string none = f.text(f.vector_add, o);
  EXPECT_NE(none.find("[system]"), std::string::npos);
  EXPECT_NE(none.find("Entry name: `vector_add`"), std::string::npos);
  EXPECT_NE(none.find("## Answer format"), std::string::npos);
  EXPECT_EQ(none.find("## Hardware"), std::string::npos);
  EXPECT_EQ(none.find("odd"), std::string::npos) << "held-back sizes never reach the model";
  o.knowledge = KnowledgeLevel::hardware;
  EXPECT_NE(f.text(f.vector_add, o).find("132 SMs"), std::string::npos);
  o.knowledge = KnowledgeLevel::templates;
  std::string templates = f.text(f.vector_add, o);
  EXPECT_NE(templates.find("Card: global and shared memory"), std::string::npos);
  EXPECT_EQ(templates.find("Contract:"), std::string::npos);
  EXPECT_EQ(templates.find("<!-- level"), std::string::npos) << "metadata lines stay out of prompts";
  o.knowledge = KnowledgeLevel::contracts;
  std::string tma = f.text(f.tma, o);
  EXPECT_NE(tma.find("Contract: mbarrier, TMA"), std::string::npos);
  EXPECT_EQ(tma.find("Contract: wgmma"), std::string::npos);
  EXPECT_NE(tma.find(".entry tma_tile"), std::string::npos) << "the complete TMA example is shown";
  EXPECT_EQ(tma.find("<!-- run:"), std::string::npos) << "the examples' GPU-test annotations stay out of prompts";
  o.knowledge = KnowledgeLevel::full;
  EXPECT_NE(f.text(f.vector_add, o).find("Negative examples"), std::string::npos);
}

TEST(Prompt, PartsCanBeLeftOutAndTranslateShowsTheSource) {
  Fixture f;
  PromptOptions o;
  o.knowledge = KnowledgeLevel::none;
  o.role = false;
  o.format = false;
  std::string bare = f.text(f.vector_add, o);
  EXPECT_EQ(bare.find("[system]"), std::string::npos);
  EXPECT_EQ(bare.find("## Answer format"), std::string::npos);
  o = PromptOptions{};
  o.mode = Mode::translate;
  std::string tr = f.text(f.vector_add, o);
  EXPECT_NE(tr.find("extern \"C\" __global__ void vector_add_ref"), std::string::npos);
  EXPECT_EQ(tr.find("Element-wise sum"), std::string::npos) << "translate mode shows the source, not the description";
  if (find_cuda_tool("nvcc")) {
    o = PromptOptions{};
    o.knowledge = KnowledgeLevel::none;
    o.fewshot_nvcc = true;
    std::string fs = f.text(f.vector_add, o);
    EXPECT_NE(fs.find("## What nvcc produces"), std::string::npos);
    EXPECT_NE(fs.find(".visible .entry vector_add_ref("), std::string::npos);
  }
}

TEST(Prompt, AMangledReferenceKernelIsShownByItsSourceName) {
  Fixture f;
  task::Task t = f.vector_add;
  t.reference.entry = "_Z14vector_add_refPKfS0_Pfj";  // as nvcc names it without extern "C"
  PromptOptions o;
  o.mode = Mode::translate;
  std::string tr = f.text(t, o);
  EXPECT_NE(tr.find("translate the kernel `vector_add_ref` below"), std::string::npos);
  EXPECT_EQ(tr.find("_Z14vector_add_ref"), std::string::npos);
}

TEST(Prompt, NamesTheLaunchSymbolsAndSaysDivisionIsIntegral) {
  Fixture f;
  PromptOptions o;
  o.knowledge = KnowledgeLevel::none;
  std::string sgemm = f.text(*task::load_task(kRoot + "/tasks/level1/sgemm"), o);
  EXPECT_NE(sgemm.find("Size symbols for `@launch` and `@scratch` expressions: `k`, `m`, `n` ("), std::string::npos) << sgemm;
  EXPECT_NE(sgemm.find("`/` and `%` there are integer division and remainder"), std::string::npos) << sgemm;
  std::string va = f.text(f.vector_add, o);
  EXPECT_NE(va.find("expressions: `n` ("), std::string::npos) << va;
  o.mode = Mode::translate;
  EXPECT_NE(f.text(f.vector_add, o).find("expressions: `n` ("), std::string::npos) << "translate mode launches too";
}

TEST(Prompt, SaysWhatEachBufferHoldsBeforeARunAndThatLaunchesAreTimedTogether) {
  Fixture f;
  PromptOptions o;
  o.knowledge = KnowledgeLevel::none;
  std::string va = f.text(f.vector_add, o);
  EXPECT_NE(va.find("outputs (`c`) are poisoned (every word 0xFFBADBAD"), std::string::npos) << va;
  EXPECT_EQ(va.find("in-out buffers"), std::string::npos) << "vector_add has none";
  EXPECT_NE(va.find("`@scratch` buffers are zero-filled"), std::string::npos) << va;
  EXPECT_NE(va.find("all your `@launch` lines, in order, on one stream: they are timed together as one run"), std::string::npos);
  std::string hist = f.text(*task::load_task(kRoot + "/tasks/level1/histogram"), o);
  EXPECT_NE(hist.find("in-out buffers (`bins`) hold their initial contents again"), std::string::npos) << hist;
  EXPECT_EQ(hist.find("outputs ("), std::string::npos) << "histogram's only output is in-out: nothing is poisoned";
  EXPECT_EQ(task::kPoisonWord, 0xFFBADBADu) << "the prompt quotes the poison word";
}

// The scratch-parameter syntax the prompt teaches is the one the launch-spec checker accepts.
TEST(Prompt, TheScratchParameterSyntaxItShowsIsAccepted) {
  Fixture f;
  PromptOptions o;
  o.knowledge = KnowledgeLevel::none;
  std::string va = f.text(f.vector_add, o);
  std::string shown = "args=(a, b, c, n, tmp)";
  ASSERT_NE(va.find("`// @launch grid=(...) block=(...) " + shown + "`"), std::string::npos) << va;
  ASSERT_NE(va.find("`// @scratch name=tmp dtype=f32 count=EXPR`"), std::string::npos) << va;
  std::string ptx = "// @launch grid=(ceil_div(n, 256), 1, 1) block=(256, 1, 1) " + shown +
                    "\n// @scratch name=tmp dtype=f32 count=ceil_div(n, 256)\n"
                    ".version 8.0\n.target sm_90a\n.address_size 64\n"
                    ".visible .entry vector_add(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n, .param .u64 tmp)\n"
                    "{\n  ret;\n}\n";
  auto spec = task::parse_launch_comments(ptx, "c.ptx");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  Diagnostics d;
  ptx::Module m = ptx::parse(ptx, d);
  auto checked = task::check_launch_spec(*spec, f.vector_add, m, "c.ptx");
  EXPECT_TRUE(checked.ok()) << checked.error().message;
}

TEST(Prompt, StatesTheAlignmentTheHarnessGivesEveryBuffer) {
  Fixture f;
  PromptOptions o;
  o.knowledge = KnowledgeLevel::none;
  EXPECT_EQ(gpu::kGuardDataAlign, 256u);
  EXPECT_NE(f.text(f.vector_add, o).find("Every buffer, scratch included, starts on a 256-byte boundary"), std::string::npos);
}

// Every task of the suite with a [baseline] names its library, with or without the system prompt.
TEST(Prompt, EveryTaskWithALibraryBaselineNamesIt) {
  Fixture f;
  int with_baseline = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(kRoot + "/tasks")) {
    if (e.path().filename() != "task.toml") continue;
    auto t = task::load_task(e.path().parent_path().string());
    ASSERT_TRUE(t.ok()) << t.error().message;
    PromptOptions o;
    o.knowledge = KnowledgeLevel::none;
    std::string with_role = f.text(*t, o);
    o.role = false;
    std::string bare = f.text(*t, o);
    if (!t->baseline) {
      EXPECT_EQ(with_role.find("the vendor library"), std::string::npos) << t->name;
      continue;
    }
    ++with_baseline;
    std::string name = std::string(task::baseline_spec(t->baseline->kind).display_name);
    EXPECT_TRUE(name.find("cuBLAS") != std::string::npos || name.find("cuDNN") != std::string::npos)
        << t->name << ": " << name;
    EXPECT_NE(bare.find(fmt::format("Timed against the kernel nvcc builds from the reference and against {}, the vendor library",
                                    name)),
              std::string::npos)
        << t->name << "\n" << bare;
    EXPECT_NE(with_role.find("timed against the kernel nvcc builds from the reference and against " + name), std::string::npos)
        << t->name;
  }
  EXPECT_GE(with_baseline, 4);
}

TEST(Prompt, StatesTheReplyTokenLimit) {
  Fixture f;
  PromptOptions o;
  o.knowledge = KnowledgeLevel::none;
  EXPECT_EQ(f.text(f.vector_add, o).find("Your reply may be at most"), std::string::npos) << "no limit given, none stated";
  o.max_tokens = 12000;
  EXPECT_NE(f.text(f.vector_add, o).find("Your reply may be at most 12000 tokens. A reply cut at that limit is not checked"),
            std::string::npos);
}

TEST(Prompt, ARepairShowsTheFailedKernelAndItsVerdictBeforeTheFormat) {
  Fixture f;
  PromptOptions o;
  o.knowledge = KnowledgeLevel::none;
  std::string fresh = f.text(f.vector_add, o);
  EXPECT_EQ(fresh.find("An earlier attempt"), std::string::npos);
  o.repair_candidate = ".version 8.0\n.target sm_90a\n// FAILED-KERNEL-MARK";
  o.repair_feedback = "verify: out[7] = 0, expected 3 (FEEDBACK-MARK)";
  std::string repair = f.text(f.vector_add, o);
  size_t section = repair.find("## An earlier attempt that failed");
  ASSERT_NE(section, std::string::npos);
  size_t kernel = repair.find("```ptx\n.version 8.0\n.target sm_90a\n// FAILED-KERNEL-MARK\n```", section);
  size_t verdict = repair.find("### The verdict\nverify: out[7] = 0, expected 3 (FEEDBACK-MARK)\n", section);
  EXPECT_NE(kernel, std::string::npos) << repair.substr(section);
  EXPECT_NE(verdict, std::string::npos);
  EXPECT_LT(kernel, verdict);
  EXPECT_GT(repair.find("## Answer format", section), verdict) << "the format still closes the prompt";
  EXPECT_LT(repair.find("# Task vector_add"), section) << "the task comes first";
}

}  // namespace
}  // namespace ptxforge::agent
