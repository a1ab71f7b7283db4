#include <gtest/gtest.h>

#include "agent/prompt.h"
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

}  // namespace
}  // namespace ptxforge::agent
