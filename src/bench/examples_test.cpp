// The bench definitions shipped in examples/bench/ are the first thing a new user runs, so
// each must be one the real parser takes and whose grid spans tasks of the suite; the
// scripted one must need nothing from outside (no key, no network); the others must name a
// provider that reads its key from the environment, failing with the variable's name when it
// is missing. tests/examples_bench.sh runs the scripted one end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/config.h"
#include "llm/provider.h"
#include "testing/test_env.h"
#include "util/text.h"

namespace ptxforge::bench {
namespace {

namespace fs = std::filesystem;

const std::string kRoot = PTXFORGE_SOURCE_DIR;

std::vector<std::string> example_files() {
  std::vector<std::string> files;
  for (auto& e : fs::directory_iterator(kRoot + "/examples/bench"))
    if (e.path().extension() == ".toml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// A model's provider spec ("openai:gpt-5"), as the parser keeps it.
const std::string& spec_of(const ModelEntry& m) { return m.options.model; }
std::string kind_of(const ModelEntry& m) { return spec_of(m).substr(0, spec_of(m).find(':')); }

BenchConfig parsed(const std::string& file) {
  auto text = read_file(kRoot + "/examples/bench/" + file);
  EXPECT_TRUE(text.ok()) << file;
  if (!text) return {};
  auto c = parse_config(*text, file);
  EXPECT_TRUE(c.ok()) << file << ": " << (c ? "" : c.error().message);
  return c ? *c : BenchConfig{};
}

TEST(BenchExamples, EveryExampleParsesAndSpansTasksOfTheSuite) {
  auto files = example_files();
  ASSERT_GE(files.size(), 4u) << "scripted, openai, anthropic, local";
  for (auto& f : files) {
    auto text = read_file(f);
    ASSERT_TRUE(text.ok()) << f;
    auto c = parse_config(*text, f);
    ASSERT_TRUE(c.ok()) << f << ":\n" << c.error().message;
    EXPECT_FALSE(c->models.empty()) << f;
    auto cells = expand(*c, 1);
    ASSERT_TRUE(cells.ok()) << f << ": " << cells.error().message;
    EXPECT_FALSE(cells->empty()) << f;
    EXPECT_FALSE(c->seeds.empty()) << f << ": seeds make a run repeatable and shardable";
  }
}

// scripted.toml runs with no key and no network: every model replays a file of the repository.
TEST(BenchExamples, TheScriptedOneNeedsNothingFromOutside) {
  BenchConfig c = parsed("scripted.toml");
  ASSERT_FALSE(c.models.empty());
  ScopedEnv no_openai("OPENAI_API_KEY", nullptr), no_base("OPENAI_BASE_URL", nullptr), no_anthropic("ANTHROPIC_API_KEY", nullptr);
  for (auto& m : c.models) {
    ASSERT_EQ(kind_of(m), "replay") << spec_of(m);
    std::string file = spec_of(m).substr(spec_of(m).find(':') + 1);
    EXPECT_FALSE(fs::path(file).is_absolute()) << "relative to the repository root, where the example is run: " << file;
    auto p = llm::make_provider("replay:" + kRoot + "/" + file, {});
    ASSERT_TRUE(p.ok()) << p.error().message;
  }
  auto cells = expand(c, 1);
  ASSERT_TRUE(cells.ok()) << cells.error().message;
  for (auto& cell : *cells) EXPECT_EQ(cell.task, "level1/saxpy") << "the replies are saxpy's";
}

// The real providers read their keys from the environment: unset, the error names the
// variable; set, the provider is made (nothing is sent until a request).
TEST(BenchExamples, RealProvidersReadTheirKeyFromTheEnvironment) {
  struct Case {
    const char* file;
    const char* kind;
    const char* key;
  };
  for (const Case& k : {Case{"openai.toml", "openai", "OPENAI_API_KEY"}, Case{"anthropic.toml", "anthropic", "ANTHROPIC_API_KEY"}}) {
    BenchConfig c = parsed(k.file);
    ASSERT_FALSE(c.models.empty()) << k.file;
    ScopedEnv no_base("OPENAI_BASE_URL", nullptr), no_anthropic_base("ANTHROPIC_BASE_URL", nullptr);
    for (auto& m : c.models) {
      EXPECT_EQ(kind_of(m), k.kind) << k.file;
      {
        ScopedEnv unset(k.key, nullptr);
        auto p = llm::make_provider(spec_of(m), {});
        ASSERT_FALSE(p.ok()) << k.file << ": made without " << k.key;
        EXPECT_NE(p.error().message.find(k.key), std::string::npos) << p.error().message;
      }
      ScopedEnv set(k.key, "sk-not-a-real-key");
      auto p = llm::make_provider(spec_of(m), {});
      EXPECT_TRUE(p.ok()) << k.file << ": " << (p ? "" : p.error().message);
    }
  }
  // A local OpenAI-compatible server: the base URL, and no key.
  BenchConfig c = parsed("local.toml");
  ASSERT_FALSE(c.models.empty());
  ScopedEnv base("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"), no_key("OPENAI_API_KEY", nullptr);
  for (auto& m : c.models) {
    EXPECT_EQ(kind_of(m), "openai") << spec_of(m);
    auto p = llm::make_provider(spec_of(m), {});
    EXPECT_TRUE(p.ok()) << (p ? "" : p.error().message);
  }
}

}  // namespace
}  // namespace ptxforge::bench
