// The shipped knowledge is checked, not trusted: every complete PTX module in it passes our
// front end and assembles with ptxas; every negative example is rejected by our front end.
#include <gtest/gtest.h>

#include "agent/knowledge.h"
#include "ptx/front_end.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::agent {
namespace {

const std::string kDir = std::string(PTXFORGE_SOURCE_DIR) + "/knowledge";

std::vector<std::pair<std::string, std::string>> blocks(const std::string& text) {  // (lang, code)
  std::vector<std::pair<std::string, std::string>> out;
  bool in = false;
  for (auto line : split(text, '\n')) {
    if (starts_with(trim(line), "```")) {
      if (!in) out.push_back({std::string(trim(trim(line).substr(3))), ""});
      in = !in;
    } else if (in) {
      out.back().second += std::string(line) + "\n";
    }
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

TEST(Knowledge, ExamplesAreValidAndNegativeExamplesAreCaught) {
  auto docs = load_knowledge(kDir);
  ASSERT_TRUE(docs.ok());
  int good = 0, bad = 0;
  bool have_ptxas = find_cuda_tool("ptxas").has_value();
  for (auto& d : *docs) {
    for (auto& [lang, code] : blocks(d.text)) {
      if (lang == "ptx" && code.find(".version") != std::string::npos) {
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
      } else if (lang == "ptx-bad") {
        ++bad;
        EXPECT_TRUE(ptx::check_source(code).diags.has_errors()) << d.path << ": a negative example passes:\n" << code;
      }
    }
  }
  EXPECT_GE(good, 3);
  EXPECT_GE(bad, 5);
}

}  // namespace
}  // namespace ptxforge::agent
