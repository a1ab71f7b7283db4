// The shipped knowledge is checked, not trusted: every complete PTX module in it passes our
// front end and assembles with ptxas for its own `.target`; every negative example is
// rejected by our front end at the line it marks as wrong; every complete module names the
// task it runs against on a GPU (tests/knowledge/run.sh), its launch spec resolves against
// that task, and any GPU that satisfies the task's min_target can run it (so the GPU test's
// skip for a target the GPU lacks is decided by the task, not guessed).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <regex>

#include "agent/knowledge.h"
#include "ptx/front_end.h"
#include "ptx/target.h"
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

// What a module was written for: the first name of its `.target` ("sm_100a"), "" if none.
std::string own_target(const ptx::Module& m) {
  auto names = m.target_names();
  return names.empty() ? "" : names.front();
}

// A negative example marks its wrong line with a trailing `// wrong: why` comment; the
// front end must report an error on that line (1-based within the block).
constexpr std::string_view kWrongMarker = "// wrong:";
std::vector<uint32_t> marked_lines(const std::string& code) {
  std::vector<uint32_t> out;
  uint32_t n = 0;
  for (auto line : split(code, '\n')) {
    ++n;
    if (line.find(kWrongMarker) != std::string_view::npos) out.push_back(n);
  }
  return out;
}

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

// The Blackwell documents reach the tasks that need them, at their level, and no others.
TEST(Knowledge, BlackwellDocumentsFollowTheirFamilies) {
  auto docs = load_knowledge(kDir);
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  auto titled = [](const std::vector<const KnowledgeDoc*>& picked, std::string_view word) {
    for (auto* d : picked)
      if (d->title.find(word) != std::string::npos) return true;
    return false;
  };
  auto tc = std::vector<std::string>{"tcgen05.mma", "tcgen05.alloc", "cp.async.bulk.tensor"};
  EXPECT_TRUE(titled(select_knowledge(*docs, KnowledgeLevel::contracts, tc), "tcgen05"));
  EXPECT_TRUE(titled(select_knowledge(*docs, KnowledgeLevel::contracts, tc), "Blackwell's TMA"));
  EXPECT_FALSE(titled(select_knowledge(*docs, KnowledgeLevel::templates, tc), "tcgen05"))
      << "the tcgen05 contract is a contract: not below --knowledge contracts";
  EXPECT_FALSE(titled(select_knowledge(*docs, KnowledgeLevel::contracts, {"wgmma.mma_async"}), "tcgen05"));
  auto clc = std::vector<std::string>{"clusterlaunchcontrol.try_cancel"};
  EXPECT_TRUE(titled(select_knowledge(*docs, KnowledgeLevel::templates, clc), "cluster launch control"));
  EXPECT_FALSE(titled(select_knowledge(*docs, KnowledgeLevel::templates, {"ld.global"}), "cluster launch control"));
}

TEST(Knowledge, ExamplesAreValidAndNegativeExamplesAreCaught) {
  auto docs = load_knowledge(kDir);
  ASSERT_TRUE(docs.ok());
  int good = 0, bad = 0;
  bool have_ptxas = find_cuda_tool("ptxas").has_value();
  for (auto& d : *docs) {
    for (auto& b : blocks(d.text)) {
      const std::string& code = b.code;
      std::string where = fmt::format("{}:{}", d.path, b.line);
      if (is_complete_module(b)) {
        ++good;
        auto r = ptx::check_source(code);
        EXPECT_FALSE(r.diags.has_errors()) << where << ":\n" << code;
        std::string target = own_target(r.module);
        EXPECT_TRUE(ptx::Target::parse(target).has_value()) << where << ": an example needs `.target sm_XY`";
        if (have_ptxas && !target.empty()) {
          toolchain::AssembleOptions o;
          o.arch = target;  // an sm_100a example assembles for sm_100a, whatever GPU is here
          auto a = toolchain::assemble(code, o);
          ASSERT_TRUE(a.ok());
          EXPECT_TRUE(a->ok) << where << ": ptxas rejects an example for " << target << ":\n" << a->log;
        }
      } else if (b.lang == "ptx-bad") {
        ++bad;
        auto r = ptx::check_source(code);
        EXPECT_TRUE(r.diags.has_errors()) << where << ": a negative example passes:\n" << code;
        auto wrong = marked_lines(code);
        EXPECT_EQ(wrong.size(), 1u) << where << ": a negative example marks its one wrong line with `// wrong: why`";
        for (uint32_t line : wrong) {
          bool at_line = false;
          for (auto& diag : r.diags.list()) at_line = at_line || (diag.severity == Severity::error && diag.loc.line == line);
          EXPECT_TRUE(at_line) << where << ": no error on the line marked wrong (" << line << " of the block):\n" << code;
        }
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
      // The GPU test runs the example on a GPU exactly when the GPU's target satisfies the
      // task's min_target: every such target must also satisfy the module's own .target.
      auto need = ptx::Target::parse(t->min_target);
      auto own = ptx::Target::parse(own_target(fe.module));
      ASSERT_TRUE(need && own) << where << ": min_target " << t->min_target << ", .target " << own_target(fe.module);
      for (auto& gpu : ptx::known_targets()) {
        if (!ptx::satisfies(gpu, *need) || ptx::satisfies(gpu, *own)) continue;
        ADD_FAILURE() << where << ": a " << gpu.str() << " GPU satisfies task " << m[1].str() << "'s min_target "
                      << t->min_target << " but cannot run a module for " << own->str()
                      << "; make the task's min_target the module's target";
        break;  // one GPU target says it
      }
    }
  }
  EXPECT_GE(examples, 5);
}

}  // namespace
}  // namespace ptxforge::agent
