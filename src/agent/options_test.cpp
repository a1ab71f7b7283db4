// The option table: every option round-trips through the command line (CLI11 built from the
// table), session.json (written, then read) and bench.toml (parsed), each giving the value it
// was given and, where the option is left out, the one default. Bad values and unknown keys
// are errors that name the option.
#include "agent/options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/compile.h"
#include "agent/options_cli.h"
#include "agent/options_toml.h"
#include "agent/session.h"

namespace ptxforge::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kRoot = PTXFORGE_SOURCE_DIR;

// A value for every option, as the command line spells it, unlike its default. A new row needs
// one here (SampleValuesCoverEveryRow fails until it has).
const std::map<Option, std::string> kSamples = {
    {Option::model, "cmd:echo hi"},       {Option::mode, "translate"},           {Option::knowledge, "contracts"},
    {Option::fewshot_nvcc, "true"},       {Option::prompt_rules, "false"},       {Option::prompt_format, "false"},
    {Option::repair_candidate, ".version 8.0\n// a failed kernel\n"},          {Option::repair_feedback, "verify failed"},
    {Option::arch, "sm_80"},              {Option::run_arch, "sm_90"},           {Option::hardware, "h200"},
    {Option::rounds, "5"},                {Option::samples, "3"},                {Option::target_speedup, "1.5x:library"},
    {Option::target_base, "library"},     {Option::cache, "false"},              {Option::temperature, "0.7"},
    {Option::max_tokens, "999"},          {Option::verify_seeds, "7"},           {Option::seed, "16"},
    {Option::held_back, "false"},         {Option::time, "false"},               {Option::sanitize, "false"},
    {Option::allow_suspicious, "true"},   {Option::profile, "true"},             {Option::prove_ncu, "true"},
    {Option::verify_timeout, "5000"},     {Option::price, "2.5,10"},             {Option::price_in, "2.5"},
    {Option::price_out, "10"},            {Option::prices_known, "true"},
    {Option::device, "cpu"}};

// Every option of `o` as the table reads it: its text and its session.json value, one line
// each, so a mismatch names the option.
std::vector<std::string> fingerprint(const CompileOptions& o) {
  std::vector<std::string> out;
  for (auto& r : option_rows()) {
    std::string line = fmt::format("#{} text={}", static_cast<int>(r.id), r.text(o));
    if (r.save) line += " session=" + r.save(o).dump();
    out.push_back(line);
  }
  return out;
}

// The options with `id` set to its sample value through the row itself.
CompileOptions with_sample(Option id) {
  CompileOptions o = default_options();
  EXPECT_TRUE(option_row(id).parse(o, kSamples.at(id), "test").ok());
  return o;
}

Result<CompileOptions> parse_cli(std::vector<std::string> argv) {
  CLI::App app("test", "compile");
  CliOptions loop(app, cli_options(), default_options());
  std::reverse(argv.begin(), argv.end());  // CLI11 takes them last first
  try {
    app.parse(argv);
  } catch (const CLI::ParseError& e) {
    return Error{e.what()};
  }
  return loop.apply();
}

std::string toml_literal(const OptionRow& row, const std::string& text) {
  switch (row.kind) {
    case ValueKind::text:
      return json(text).dump();  // a JSON string is a TOML basic string for these samples
    case ValueKind::number_pair:
      return "[" + text + "]";
    default:
      return text;
  }
}

Result<CompileOptions> parse_toml(BenchPlace place, const std::string& text) {
  toml::table t = toml::parse(text);
  CompileOptions o = default_options();
  auto problems = read_toml_options(t, place, {}, "", o);
  if (!problems.empty()) return Error{problems.front().message};
  return o;
}

TEST(OptionTable, EveryOptionHasOneRowAndEverySpellingIsUnique) {
  std::set<Option> ids;
  std::set<std::string_view> flags, sessions;
  std::set<std::pair<BenchPlace, std::string_view>> bench;
  for (auto& r : option_rows()) {
    EXPECT_TRUE(ids.insert(r.id).second) << "two rows for option #" << static_cast<int>(r.id);
    EXPECT_EQ(&option_row(r.id), &r);
    if (r.cli_form != CliForm::none) EXPECT_TRUE(flags.insert(r.cli).second) << r.cli;
    if (!r.session_key.empty()) EXPECT_TRUE(sessions.insert(r.session_key).second) << r.session_key;
    if (!r.bench_key.empty()) EXPECT_TRUE(bench.insert({r.bench_place, r.bench_key}).second) << r.bench_key;
    EXPECT_EQ(r.bench_key.empty(), r.bench_place == BenchPlace::none) << "row #" << static_cast<int>(r.id);
    EXPECT_FALSE(r.help.empty()) << "row #" << static_cast<int>(r.id);
    EXPECT_TRUE(r.text && r.parse) << "row #" << static_cast<int>(r.id);
    EXPECT_EQ(r.session_key.empty(), !r.save) << "row #" << static_cast<int>(r.id);
    EXPECT_EQ(static_cast<bool>(r.save), static_cast<bool>(r.load));
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(Option::device) + 1) << "an Option without a row";
}

TEST(OptionTable, SampleValuesCoverEveryRowAndDifferFromTheDefault) {
  for (auto& r : option_rows()) {
    ASSERT_TRUE(kSamples.count(r.id)) << "no sample value for option #" << static_cast<int>(r.id);
    CompileOptions o = with_sample(r.id);
    EXPECT_EQ(r.text(o), kSamples.at(r.id)) << "text and parse are not inverses for option #" << static_cast<int>(r.id);
    EXPECT_NE(fingerprint(o), fingerprint(default_options())) << "the sample of #" << static_cast<int>(r.id) << " changed nothing";
  }
}

TEST(OptionTable, OneDefaultAndItIsTheOneTheCommandLineDocuments) {
  EXPECT_EQ(default_text(option_row(Option::max_tokens)), "32768");
  EXPECT_EQ(default_text(option_row(Option::rounds)), "8");
  EXPECT_EQ(default_text(option_row(Option::temperature)), "0.2");
  EXPECT_EQ(default_text(option_row(Option::verify_seeds)), "3");
  EXPECT_EQ(default_text(option_row(Option::sanitize)), "true") << "compile sanitizes unless --no-sanitize";
  EXPECT_EQ(default_text(option_row(Option::arch)), "") << "the architecture is resolved: the GPU's, else sm_90a";
  EXPECT_EQ(default_text(option_row(Option::seed)), "") << "no seed: a fresh one every round";
  // A flag only makes sense against its default.
  for (auto& r : option_rows()) {
    if (r.cli_form == CliForm::flag_sets) EXPECT_EQ(default_text(r), "false") << r.cli;
    if (r.cli_form == CliForm::flag_clears || r.cli_form == CliForm::omit_part) EXPECT_EQ(default_text(r), "true") << r.cli;
  }
  // Anything built from the default options agrees with them.
  EXPECT_EQ(CompileOptions{}.max_tokens, 32768);
  EXPECT_EQ(llm::Request{}.max_tokens, 32768);
}

TEST(OptionTable, EveryOptionRoundTripsThroughTheCommandLine) {
  int tried = 0;
  for (auto& r : option_rows()) {
    std::vector<std::string> argv;
    if (r.cli_form == CliForm::value) argv = {std::string(r.cli), kSamples.at(r.id)};
    else if (r.cli_form == CliForm::flag_sets || r.cli_form == CliForm::flag_clears) argv = {std::string(r.cli)};
    else if (r.cli_form == CliForm::omit_part) argv = {"--omit", std::string(r.cli)};
    else continue;
    ++tried;
    auto o = parse_cli(argv);
    ASSERT_TRUE(o.ok()) << r.cli << ": " << o.error().message;
    EXPECT_EQ(fingerprint(*o), fingerprint(with_sample(r.id))) << r.cli;
  }
  EXPECT_GE(tried, 20);
  auto none = parse_cli({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(fingerprint(*none), fingerprint(default_options())) << "no flag given: the one default";
}

TEST(OptionTable, TheCommandLineShowsTheDefaultsAndSaysWhatWasGiven) {
  CLI::App app("test", "compile");
  CompileOptions start = default_options();
  start.rounds = 3;  // a command may start elsewhere (fixit)
  CliOptions loop(app, {Option::rounds, Option::max_tokens, Option::seed}, start);
  std::string help = app.help();
  EXPECT_NE(help.find("32768"), std::string::npos) << help;
  EXPECT_NE(help.find("reply token limit"), std::string::npos) << help;
  EXPECT_EQ(help.find("--temperature"), std::string::npos) << "only the options asked for";
  std::vector<std::string> argv = {"0x10", "--seed"};  // CLI11 takes them last first
  app.parse(argv);
  auto o = loop.apply();
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->rounds, 3);
  EXPECT_EQ(o->run.seed, 16u);
  EXPECT_TRUE(loop.given(Option::seed));
  EXPECT_FALSE(loop.given(Option::rounds));
}

TEST(OptionTable, BadCommandLineValuesAreErrorsThatNameTheFlag) {
  std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--max-tokens", "0"}, "--max-tokens must be at least 1"},
      {{"--max-tokens", "lots"}, "--max-tokens takes a whole number, not 'lots'"},
      {{"--max-tokens", "99999999999"}, "--max-tokens takes a whole number"},
      {{"--rounds", "101"}, "--rounds must lie between 1 and 100"},
      {{"--temperature", "3"}, "--temperature must lie between 0 and 2"},
      {{"--temperature", "nan"}, "--temperature takes a number"},
      {{"--mode", "fast"}, "--mode takes implement or translate, not 'fast'"},
      {{"--knowledge", "most"}, "--knowledge: unknown knowledge level 'most'"},
      {{"--arch", "sm_9x"}, "'sm_9x' is not a target ptxas knows"},
      {{"--price", "2.5"}, "--price takes two numbers"},
      {{"--price", "-1,2"}, "--price takes two numbers that are not negative"},
      {{"--seed", "x1"}, "--seed takes a whole number"},
      {{"--target-speedup", "fast"}, "--target-speedup: 'fast' is not a target speedup"},
      {{"--omit", "everything"}, "everything"}};
  for (auto& [argv, message] : cases) {
    auto o = parse_cli(argv);
    ASSERT_FALSE(o.ok()) << argv[0] << " " << argv[1] << " was taken";
    EXPECT_NE(o.error().message.find(message), std::string::npos) << o.error().message;
  }
}

class OptionSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/options-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  CompileOptions with_task(CompileOptions o) {
    o.task_dir = kRoot + "/tasks/level1/vector_add";
    o.out = dir_;
    return o;
  }
  std::string dir_;
};

TEST_F(OptionSessionTest, EveryOptionRoundTripsThroughSessionJson) {
  int tried = 0;
  for (auto& r : option_rows()) {
    if (r.session_key.empty()) continue;
    ++tried;
    CompileOptions o = with_task(with_sample(r.id));
    std::string text = session_options_json(o);
    EXPECT_TRUE(json::parse(text).contains(std::string(r.session_key))) << r.session_key;
    auto back = session_options_from(text, dir_);
    ASSERT_TRUE(back.ok()) << r.session_key << ": " << back.error().message;
    EXPECT_EQ(fingerprint(*back), fingerprint(o)) << r.session_key;
  }
  EXPECT_GE(tried, 25);
  // The price is saved as three keys.
  CompileOptions priced = with_task(with_sample(Option::price));
  auto back = session_options_from(session_options_json(priced), dir_);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(fingerprint(*back), fingerprint(priced));
}

// A session.json as the code before the option table wrote it: it still resumes, and is
// written back the same, key for key and byte for byte, with only the new key added.
TEST_F(OptionSessionTest, ASessionSavedBeforeTheTableResumesUnchanged) {
  const std::string old = R"({
  "allow_suspicious": false,
  "arch": "sm_90a",
  "cache": true,
  "fewshot_nvcc": false,
  "hardware_profile": "h200",
  "held_back": true,
  "knowledge": "templates",
  "max_tokens": 32768,
  "mode": "implement",
  "model": "manual",
  "price_in": 2.5,
  "price_out": 10.0,
  "prices_known": true,
  "profile": false,
  "prompt_format": true,
  "prompt_rules": false,
  "repair_candidate": "",
  "repair_feedback": "",
  "rounds": 8,
  "run_arch": "sm_90a",
  "samples": 1,
  "sanitize": true,
  "seed": "16",
  "seeds": 3,
  "target_base": "nvcc",
  "target_speedup": 1.5,
  "task": {
    "suite": "level1/vector_add"
  },
  "temperature": 0.2,
  "time": true,
  "verify_timeout_ms": 30000
})";
  auto o = session_options_from(old, dir_);
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_FALSE(o->prompt.role);
  EXPECT_EQ(o->run.seed, 16u);
  EXPECT_TRUE(o->prices.known);
  json expected = json::parse(old);
  expected["prove_ncu"] = false;
  expected["device"] = "auto";  // sessions saved before --device verify as auto does
  EXPECT_EQ(session_options_json(*o), expected.dump(2));
}

TEST_F(OptionSessionTest, KeysMissingFromAnOlderSessionKeepTheDefaults) {
  auto o = session_options_from(R"({"task": {"suite": "level1/vector_add"}, "model": "manual", "arch": "sm_80"})", dir_);
  ASSERT_TRUE(o.ok()) << o.error().message;
  CompileOptions expected = default_options();
  expected.model = "manual";
  expected.prompt.arch = expected.run.arch = "sm_80";  // no run_arch: the run's target is the prompt's
  auto mine = fingerprint(*o), theirs = fingerprint(expected);
  EXPECT_EQ(mine, theirs);
  auto bad = session_options_from(R"({"task": {"suite": "level1/vector_add"}, "model": "m", "max_tokens": "many"})", dir_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("session.json is damaged: 'max_tokens'"), std::string::npos) << bad.error().message;
}

TEST(OptionTable, EveryOptionRoundTripsThroughBenchToml) {
  int tried = 0;
  for (auto& r : option_rows()) {
    if (r.bench_key.empty()) continue;
    ++tried;
    std::string text = fmt::format("{} = {}\n", r.bench_key, toml_literal(r, kSamples.at(r.id)));
    auto o = parse_toml(r.bench_place, text);
    ASSERT_TRUE(o.ok()) << text << o.error().message;
    EXPECT_EQ(fingerprint(*o), fingerprint(with_sample(r.id))) << text;
    // In any other place the key is unknown.
    for (BenchPlace other : {BenchPlace::top, BenchPlace::model, BenchPlace::run})
      if (other != r.bench_place) EXPECT_FALSE(parse_toml(other, text).ok()) << text;
  }
  EXPECT_GE(tried, 14);
  for (BenchPlace place : {BenchPlace::top, BenchPlace::model, BenchPlace::run}) {
    auto o = parse_toml(place, "");
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(fingerprint(*o), fingerprint(default_options())) << "nothing given: the one default";
  }
  // A number stands for a text option's text.
  auto t = parse_toml(BenchPlace::top, "target_speedup = 1.2\n");
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->target_speedup, 1.2);
}

TEST(OptionTable, BadBenchTomlValuesAndUnknownKeysAreErrorsThatNameTheKey) {
  std::vector<std::tuple<BenchPlace, std::string, std::string>> cases = {
      {BenchPlace::top, "rounds = \"three\"", "'rounds' must be a whole number"},
      {BenchPlace::top, "rounds = 0", "rounds must lie between 1 and 100"},
      {BenchPlace::top, "arch = \"sm_9x\"", "arch: 'sm_9x' is not a target ptxas knows"},
      {BenchPlace::run, "time = 1", "'time' must be true or false"},
      {BenchPlace::run, "verify_seeds = 65", "verify_seeds must lie between 1 and 64"},
      {BenchPlace::model, "price = [1.0]", "price takes two numbers"},
      {BenchPlace::model, "price = [1.0, \"x\"]", "'price' must be a list of numbers"},
      {BenchPlace::model, "max_tokens = 0", "max_tokens must be at least 1"},
      {BenchPlace::model, "max_tokns = 5", "unknown key 'max_tokns'; did you mean 'max_tokens'"},
      {BenchPlace::run, "zzzzzz = 5", "unknown key 'zzzzzz' (known: allow_suspicious, device, held_back, profile, prove_ncu, sanitize"},
      {BenchPlace::run, "device = \"cuda\"", "device takes auto, gpu or cpu, not 'cuda'"}};
  for (auto& [place, text, message] : cases) {
    auto o = parse_toml(place, text);
    ASSERT_FALSE(o.ok()) << text << " was taken";
    EXPECT_NE(o.error().message.find(message), std::string::npos) << o.error().message;
  }
  // Every problem of a table is reported, each at its key.
  toml::table t = toml::parse("rounds = 0\nsamples = 2\nsampels = 3\n");
  CompileOptions o = default_options();
  auto problems = read_toml_options(t, BenchPlace::top, {}, "", o);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(o.samples, 2) << "the good keys are still read";
}

TEST(OptionTable, TheArchitectureIsResolvedOnlyWhereLeftOpen) {
  CompileOptions o = default_options();
  o.hardware_profile = "h200";
  resolve_arch(o);
  EXPECT_EQ(o.prompt.arch, "sm_90a");
  EXPECT_EQ(o.run.arch, "sm_90a");
  CompileOptions given = default_options();
  ASSERT_TRUE(option_row(Option::arch).parse(given, "sm_80", "--arch").ok());
  given.hardware_profile = "h200";
  resolve_arch(given);
  EXPECT_EQ(given.prompt.arch, "sm_80");
  EXPECT_EQ(given.run.arch, "sm_80");
}

TEST(OptionTable, ASessionWithoutOutIsNamedAfterItsTaskAndTheTime) {
  std::tm t{};
  t.tm_year = 2026 - 1900;
  t.tm_mon = 11;
  t.tm_mday = 1;
  t.tm_hour = 10;
  t.tm_min = 15;
  t.tm_sec = 0;
  t.tm_isdst = -1;
  std::time_t when = std::mktime(&t);  // local time, as the name is
  EXPECT_EQ(default_session_dir("/x/tasks/level1/vector_add", when), "sessions/vector_add-20261201-101500");
  EXPECT_EQ(default_session_dir("tasks/level1/saxpy/", when), "sessions/saxpy-20261201-101500");
  EXPECT_NE(default_session_dir("saxpy", when), default_session_dir("saxpy", when + 1)) << "one second apart";
}

TEST(OptionTable, CheckRangesNamesTheFlagOfEachOption) {
  CompileOptions o = default_options();
  EXPECT_TRUE(check_ranges(o).ok());
  o.max_tokens = 0;
  auto s = check_ranges(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "--max-tokens must be at least 1");
  o = default_options();
  o.run.prove_ncu = true;
  o.samples = 65;
  s = check_ranges(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "--samples must lie between 1 and 64");
}

}  // namespace
}  // namespace ptxforge::agent
