// The shipped knowledge is checked, not trusted: every complete PTX module in it passes our
// front end and assembles with ptxas; every negative example is rejected by our front end;
// every complete module names the task it runs against on a GPU (tests/knowledge/run.sh),
// and its launch spec resolves against that task.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <regex>

#include "agent/knowledge.h"
#include "ptx/front_end.h"
#include "task/launch_spec.h"
#include "task/task_spec.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::agent {
namespace {

const std::string kRoot = PTXFORGE_SOURCE_DIR;
const std::string kDir = kRoot + "/knowledge";

struct Block {
  std::string lang, code;
  std::string before;  // the line right before the opening fence, trimmed
  int line = 0;        // the opening fence's line
};

std::vector<Block> blocks(const std::string& text) {
  std::vector<Block> out;
  bool in = false;
  std::string prev;
  int n = 0;
  for (auto line : split(text, '\n')) {
    ++n;
    if (starts_with(trim(line), "```")) {
      if (!in) out.push_back({std::string(trim(trim(line).substr(3))), "", prev, n});
      in = !in;
    } else if (in) {
      out.back().code += std::string(line) + "\n";
    }
    prev = std::string(trim(line));
  }
  return out;
}

bool is_complete_module(const Block& b) { return b.lang == "ptx" && b.code.find(".version") != std::string::npos; }

TEST(Knowledge, LoadsWithMetadataAndSelectsByLevelAndFamily) {
  auto docs = load_knowledge(kDir);
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  ASSERT_GE(docs->size(), 8u);
  EXPECT_TRUE(select_knowledge(*docs, KnowledgeLevel::hardware, {}).empty());
  auto templates = select_knowledge(*docs, KnowledgeLevel::templates, {});
  auto contracts_tma = select_knowledge(*docs, KnowledgeLevel::contracts, {"cp.async.bulk.tensor"});
  auto full = select_knowledge(*docs, KnowledgeLevel::full, {});
  EXPECT_LT(templates.size(), contracts_tma.size());
  EXPECT_EQ(full.size(), docs->size());
  bool has_tma = false, has_wgmma = false;
  for (auto* d : contracts_tma) {
    has_tma = has_tma || d->title.find("TMA") != std::string::npos;
    has_wgmma = has_wgmma || d->title.find("wgmma") != std::string::npos;
  }
  EXPECT_TRUE(has_tma);
  EXPECT_FALSE(has_wgmma) << "a TMA task does not get the wgmma contract below --knowledge full";
}

TEST(Knowledge, ExamplesAreValidAndNegativeExamplesAreCaught) {
  auto docs = load_knowledge(kDir);
  ASSERT_TRUE(docs.ok());
  int good = 0, bad = 0;
  bool have_ptxas = find_cuda_tool("ptxas").has_value();
  for (auto& d : *docs) {
    for (auto& b : blocks(d.text)) {
      const std::string& code = b.code;
      if (is_complete_module(b)) {
        ++good;
        auto r = ptx::check_source(code);
        EXPECT_FALSE(r.diags.has_errors()) << d.path << ":\n" << code;
        if (have_ptxas) {
          toolchain::AssembleOptions o;
          o.arch = "sm_90a";
          auto a = toolchain::assemble(code, o);
          ASSERT_TRUE(a.ok());
          EXPECT_TRUE(a->ok) << d.path << ": ptxas rejects an example:\n" << a->log;
        }
      } else if (b.lang == "ptx-bad") {
        ++bad;
        EXPECT_TRUE(ptx::check_source(code).diags.has_errors()) << d.path << ": a negative example passes:\n" << code;
      }
    }
  }
  EXPECT_GE(good, 3);
  EXPECT_GE(bad, 5);
}

// The line right before a complete module's fence says what it runs against on a GPU:
//   <!-- run: tests/tasks/NAME -->                      (the module has `// @launch` lines)
//   <!-- run: tests/tasks/NAME launch="grid=... block=..." -->   (it has none)
// The task must load, and the launch spec (the annotation's, else the module's own lines)
// must resolve against the task and the module, as `ptxforge run` resolves it.
TEST(Knowledge, EveryCompleteExampleNamesTheTaskItRunsAgainst) {
  auto docs = load_knowledge(kDir);
  ASSERT_TRUE(docs.ok());
  const std::regex note(R"re(^<!--\s*run:\s*(\S+)(\s+launch="([^"]*)")?\s*-->$)re");
  int examples = 0;
  for (auto& d : *docs) {
    for (auto& b : blocks(d.text)) {
      if (!is_complete_module(b)) continue;
      ++examples;
      std::string where = fmt::format("{}:{}", d.path, b.line);
      std::smatch m;
      if (!std::regex_match(b.before, m, note)) {
        ADD_FAILURE() << where << ": a complete example needs `<!-- run: tests/tasks/NAME -->` on the line right before "
                      << "its fence, naming the task tests/knowledge/run.sh verifies it against";
        continue;
      }
      std::string dir = kRoot + "/" + m[1].str(), launch = m[3].str();
      if (!std::filesystem::is_regular_file(dir + "/task.toml")) {
        ADD_FAILURE() << where << ": its task " << m[1].str() << " has no task.toml";
        continue;
      }
      auto t = task::load_task(dir);
      if (!t) {
        ADD_FAILURE() << where << ": its task does not load:\n" << t.error().message;
        continue;
      }
      bool has_launch_lines = b.code.find("// @launch") != std::string::npos;
      EXPECT_FALSE(m[2].matched && has_launch_lines) << where << ": the annotation and the example both give a launch";
      EXPECT_TRUE(m[2].matched || has_launch_lines) << where << ": no launch: add `// @launch` lines or launch=\"...\"";
      auto fe = ptx::check_source(b.code);
      ASSERT_TRUE(fe.ok()) << where;
      std::string spec_text = m[2].matched ? "// @launch " + launch + "\n" + b.code : b.code;
      auto spec = task::parse_launch_comments(spec_text, where);
      ASSERT_TRUE(spec) << spec.error().message;
      auto s = task::check_launch_spec(*spec, *t, fe.module, where);
      EXPECT_TRUE(s) << where << ": the launch does not fit task " << m[1].str() << ": " << s.error().message;
    }
  }
  EXPECT_GE(examples, 5);
}

}  // namespace
}  // namespace ptxforge::agent
