// The task bodies of the API over every shipped task: the shown sets are named, and no
// held-back set's name or size shows anywhere in a body (a client could fit a kernel to them).
#include "serve/task_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

namespace ptxforge::serve {
namespace {

using json = nlohmann::json;

// `word` in `text` with no letter, digit or '_' on either side.
bool has_word(const std::string& text, const std::string& word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    bool left = at == 0 || !is_word(text[at - 1]);
    bool right = at + word.size() >= text.size() || !is_word(text[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

std::string number_text(double v) { return std::to_string(int64_t(std::llround(v))); }

TEST(TaskJson, ListNamesEveryTaskWithOneLineSummaries) {
  auto cat = TaskCatalog::load({});
  ASSERT_TRUE(cat.ok()) << cat.error().message;
  json j = json::parse(task_list_json(*cat));
  ASSERT_EQ(j["tasks"].size(), cat->entries().size());
  for (size_t i = 0; i < cat->entries().size(); ++i) {
    auto& t = j["tasks"][i];
    EXPECT_EQ(t["name"], cat->entries()[i].name);
    EXPECT_EQ(t["level"], cat->entries()[i].task.level);
    std::string s = t["summary"];
    EXPECT_FALSE(s.empty()) << t["name"];
    EXPECT_EQ(s.find('\n'), std::string::npos);
    EXPECT_LE(s.size(), 200u);
  }
  EXPECT_EQ(j["tasks"][0].size(), 3u);  // name, level, summary: nothing else
}

TEST(TaskJson, SummaryIsTheFirstSentence) {
  task::Task t;
  t.description = "Element-wise sum.\nA memory-bound kernel. More text.";
  EXPECT_EQ(task_summary(t), "Element-wise sum.");
  t.description = "  no stop here  ";
  EXPECT_EQ(task_summary(t), "no stop here");
}

TEST(TaskJson, BodyShowsShownSetsOnly) {
  auto cat = TaskCatalog::load({});
  ASSERT_TRUE(cat.ok()) << cat.error().message;
  int held_back_sets = 0;
  for (auto& e : cat->entries()) {
    std::string body = task_json(e);
    json j = json::parse(body);
    EXPECT_EQ(j["name"], e.name);
    EXPECT_FALSE(j["prompt"].get<std::string>().empty());
    EXPECT_EQ(j["required"].get<std::vector<std::string>>(), e.task.required_instructions);
    EXPECT_EQ(j.size(), 5u);
    if (e.task.baseline) EXPECT_TRUE(j["baseline"].is_string()) << e.name;
    else EXPECT_TRUE(j["baseline"].is_null()) << e.name;

    std::set<std::string> shown_names, shown_values;
    for (auto* s : e.task.size_sets(false)) {
      shown_names.insert(s->name);
      for (auto& [k, v] : s->values) shown_values.insert(number_text(v));
    }
    EXPECT_EQ(j["shown_size_sets"].get<std::set<std::string>>(), shown_names) << e.name;
    for (auto& s : e.task.sizes) {
      if (s.shown) continue;
      ++held_back_sets;
      // As a JSON string anywhere; as a word where the name is not also an everyday word ("one").
      EXPECT_EQ(body.find("\\\"" + s.name + "\\\""), std::string::npos) << e.name << ": held-back set '" << s.name << "' shows";
      EXPECT_EQ(body.find("\"" + s.name + "\""), std::string::npos) << e.name << ": held-back set '" << s.name << "' shows";
      if (s.name.size() > 3) EXPECT_FALSE(has_word(body, s.name)) << e.name << ": held-back set '" << s.name << "' shows";
      for (auto& [k, v] : s.values) {
        std::string n = number_text(v);
        // Small numbers turn up in any text (tile widths, "2 inputs"); a distinctive size must not.
        if (n.size() < 3 || shown_values.count(n)) continue;
        EXPECT_FALSE(has_word(body, n)) << e.name << ": held-back size " << k << "=" << n << " shows";
      }
    }
  }
  EXPECT_GT(held_back_sets, 10);  // the check above had something to check
}

}  // namespace
}  // namespace ptxforge::serve
