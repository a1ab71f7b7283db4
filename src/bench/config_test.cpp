#include "bench/config.h"

#include <gtest/gtest.h>

#include <set>

namespace ptxforge::bench {
namespace {

const char* kTwoModels = R"(
name = "t"
samples = 3
rounds = 2
seeds = [5, 9]
[[models]]
name = "a"
spec = "cmd:true"
price = [1.0, 2.0]
[[models]]
spec = "replay:r.json"
[tasks]
names = ["vector_add", "saxpy"]
)";

TEST(BenchConfig, ReadsModelsTasksAndNumbers) {
  auto c = parse_config(kTwoModels, "bench.toml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->name, "t");
  ASSERT_EQ(c->models.size(), 2u);
  EXPECT_EQ(c->models[0].name, "a");
  EXPECT_TRUE(c->models[0].options.prices.known);
  EXPECT_EQ(c->models[1].name, "replay:r.json");  // the spec names an unnamed model
  EXPECT_EQ(c->options.samples, 3);
  EXPECT_EQ(c->seeds, (std::vector<uint64_t>{5, 9}));
}

TEST(BenchConfig, RequireGpuVerifyRunsEveryCellOnTheGpuOnly) {
  auto plain = parse_config(kTwoModels, "bench.toml");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_FALSE(plain->require_gpu_verify);
  EXPECT_EQ(plain->options.run.device, eval::Device::automatic);
  auto c = parse_config(std::string("require_gpu_verify = true\n") + kTwoModels, "bench.toml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->require_gpu_verify);
  EXPECT_EQ(c->options.run.device, eval::Device::gpu);
  for (auto& m : c->models) EXPECT_EQ(m.options.run.device, eval::Device::gpu) << m.name;
  auto cpu = parse_config(std::string("require_gpu_verify = true\n") + kTwoModels + "[run]\ndevice = \"cpu\"\n", "bench.toml");
  ASSERT_FALSE(cpu);
  EXPECT_NE(cpu.error().message.find("require_gpu_verify = true, but [run] device = \"cpu\""), std::string::npos)
      << cpu.error().message;
  auto typo = parse_config(std::string(kTwoModels) + "[run]\ndevice = \"cuda\"\n", "bench.toml");
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().message.find("takes auto, gpu or cpu, not 'cuda'"), std::string::npos) << typo.error().message;
}

TEST(BenchConfig, EveryProblemIsListedWithItsLine) {
  auto c = parse_config("samples = 0\nrounds = 2\nsamplse = 3\n[[models]]\nname = \"x\"\n[tasks]\n", "b.toml");
  ASSERT_FALSE(c);
  const std::string& e = c.error().message;
  EXPECT_NE(e.find("b.toml:1: samples must lie between 1 and 64"), std::string::npos) << e;
  EXPECT_NE(e.find("b.toml:3: unknown key 'samplse'; did you mean 'samples'"), std::string::npos) << e;
  EXPECT_NE(e.find("a model needs spec"), std::string::npos) << e;
}

TEST(BenchConfig, UnknownKeysAreErrorsWithTheFileTheLineAndAGuess) {
  auto c = parse_config("[[models]]\nspec = \"cmd:true\"\nmax_tokns = 5\n[run]\nsanitise = false\n[tasks]\nname = [\"x\"]\n",
                        "defs/b.toml");
  ASSERT_FALSE(c);
  const std::string& e = c.error().message;
  EXPECT_NE(e.find("defs/b.toml:3: unknown key 'max_tokns' in [[models]]; did you mean 'max_tokens'"), std::string::npos) << e;
  EXPECT_NE(e.find("defs/b.toml:5: unknown key 'sanitise' in [run]; did you mean 'sanitize'"), std::string::npos) << e;
  EXPECT_NE(e.find("defs/b.toml:7: unknown key 'name' in [tasks]; did you mean 'names'"), std::string::npos) << e;
}

TEST(BenchConfig, EachCellGetsTheBenchsOptionsWithItsModelsOwn) {
  auto c = parse_config(R"(
rounds = 4
arch = "sm_80"
[run]
sanitize = false
verify_seeds = 5
[[models]]
name = "hot"
spec = "cmd:a"
temperature = 0.9
max_tokens = 1000
[[models]]
spec = "cmd:b"
price = [1, 2]
[tasks]
names = ["vector_add"]
)",
                        "b.toml");
  ASSERT_TRUE(c) << c.error().message;
  auto cells = expand(*c, 1);
  ASSERT_TRUE(cells) << cells.error().message;
  ASSERT_EQ(cells->size(), 2u);
  agent::CompileOptions hot = cell_options(*c, (*cells)[0], "out/a"), plain = cell_options(*c, (*cells)[1], "out/b");
  for (auto* o : {&hot, &plain}) {
    EXPECT_EQ(o->rounds, 4);
    EXPECT_EQ(o->prompt.arch, "sm_80");
    EXPECT_EQ(o->run.arch, "sm_80");
    EXPECT_FALSE(o->run.sanitize);
    EXPECT_EQ(o->run.seeds, 5);
    EXPECT_EQ(o->run.seed, (*cells)[o == &hot ? 0 : 1].seed);
  }
  EXPECT_EQ(hot.model, "cmd:a");
  EXPECT_DOUBLE_EQ(hot.temperature, 0.9);
  EXPECT_EQ(hot.max_tokens, 1000);
  EXPECT_FALSE(hot.prices.known);
  EXPECT_EQ(plain.model, "cmd:b");
  EXPECT_DOUBLE_EQ(plain.temperature, agent::default_options().temperature) << "one model's keys are not another's";
  EXPECT_EQ(plain.max_tokens, 32768);
  EXPECT_TRUE(plain.prices.known);
  EXPECT_EQ(plain.out, "out/b");
}

TEST(BenchConfig, KeysLeftOutTakeTheOneDefault) {
  auto c = parse_config("[[models]]\nspec = \"cmd:true\"\n[tasks]\n", "b.toml");
  ASSERT_TRUE(c) << c.error().message;
  agent::CompileOptions d = agent::default_options();
  d.model = "cmd:true";
  const agent::CompileOptions& m = c->models[0].options;
  for (auto& row : agent::option_rows()) EXPECT_EQ(row.text(m), row.text(d)) << row.help;
  EXPECT_EQ(m.rounds, 8);
  EXPECT_TRUE(m.run.sanitize);
  EXPECT_EQ(m.prompt.arch, "") << "the GPU's, resolved when the bench runs";
  c->options.hardware_profile = "h200";  // asks no GPU
  resolve_arch(*c);
  EXPECT_EQ(c->models[0].options.prompt.arch, "sm_90a");
  EXPECT_EQ(c->models[0].options.run.arch, "sm_90a");
}

TEST(BenchConfig, TargetSpeedupMayBeRelativeToTheLibrary) {
  auto c = parse_config("target_speedup = \"1.0x:library\"\n[[models]]\nspec = \"cmd:true\"\n[tasks]\n", "b.toml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->options.target_base, agent::SpeedupBase::library);
  EXPECT_DOUBLE_EQ(c->options.target_speedup, 1.0);
  EXPECT_FALSE(parse_config("target_speedup = \"fast\"\n[[models]]\nspec = \"cmd:true\"\n[tasks]\n", "b.toml"));
}

TEST(BenchConfig, TheGridHasOneCellPerModelTaskModeKnowledgeAndSeed) {
  auto c = parse_config(kTwoModels, "bench.toml");
  ASSERT_TRUE(c);
  auto cells = expand(*c, 0);
  ASSERT_TRUE(cells) << cells.error().message;
  ASSERT_EQ(cells->size(), 2u * 2u * 2u);  // models × tasks × seeds
  std::set<std::string> ids, folders;
  for (size_t i = 0; i < cells->size(); ++i) {
    EXPECT_EQ((*cells)[i].index, static_cast<int>(i));
    ids.insert((*cells)[i].id);
    folders.insert((*cells)[i].folder);
  }
  EXPECT_EQ(ids.size(), cells->size());
  EXPECT_EQ(folders.size(), cells->size());
  EXPECT_EQ((*cells)[0].id, "a/level1/saxpy/implement/templates/seed-1");
  // Both models see the same inputs for the same task and seed (a fair comparison); another
  // seed gives other inputs.
  EXPECT_EQ((*cells)[0].seed, (*cells)[4].seed);
  EXPECT_NE((*cells)[0].seed, (*cells)[1].seed);
  // The same definition expands to the same grid on any machine.
  auto again = expand(*c, 123);
  for (size_t i = 0; i < cells->size(); ++i) EXPECT_EQ((*cells)[i].seed, (*again)[i].seed);
}

TEST(BenchConfig, ShardsCoverTheGridOnce) {
  auto c = parse_config(kTwoModels, "bench.toml");
  auto cells = expand(*c, 0);
  ASSERT_TRUE(cells);
  std::multiset<int> seen;
  for (int i = 0; i < 3; ++i)
    for (auto& cell : shard_cells(*cells, {i, 3})) seen.insert(cell.index);
  EXPECT_EQ(seen.size(), cells->size());
  EXPECT_EQ(std::set<int>(seen.begin(), seen.end()).size(), cells->size());
  EXPECT_TRUE(parse_shard("1/2"));
  EXPECT_FALSE(parse_shard("2/2"));
  EXPECT_FALSE(parse_shard("0/0"));
  EXPECT_FALSE(parse_shard("a/b"));
}

TEST(BenchConfig, ASelectionOfNoTaskIsAnError) {
  auto c = parse_config("[[models]]\nspec = \"cmd:true\"\n[tasks]\nglobs = [\"nothing*\"]\n", "b.toml");
  ASSERT_TRUE(c);
  EXPECT_FALSE(expand(*c, 1));
}

}  // namespace
}  // namespace ptxforge::bench
