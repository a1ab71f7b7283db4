#include "agent/knowledge.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "util/text.h"

namespace ptxforge::agent {

namespace fs = std::filesystem;

Result<KnowledgeLevel> parse_knowledge_level(const std::string& s) {
  if (s == "none") return KnowledgeLevel::none;
  if (s == "hardware") return KnowledgeLevel::hardware;
  if (s == "templates") return KnowledgeLevel::templates;
  if (s == "contracts") return KnowledgeLevel::contracts;
  if (s == "full") return KnowledgeLevel::full;
  return Error{fmt::format("unknown knowledge level '{}'; use none, hardware, templates, contracts or full", s)};
}

std::string_view knowledge_level_name(KnowledgeLevel l) {
  switch (l) {
    case KnowledgeLevel::none: return "none";
    case KnowledgeLevel::hardware: return "hardware";
    case KnowledgeLevel::templates: return "templates";
    case KnowledgeLevel::contracts: return "contracts";
    case KnowledgeLevel::full: return "full";
  }
  return "?";
}

Result<std::vector<KnowledgeDoc>> load_knowledge(const std::string& dir) {
  std::vector<KnowledgeDoc> out;
  std::error_code ec;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); ++it)
    if (it->path().extension() == ".md" && it->path().filename() != "README.md") files.push_back(it->path());
  if (ec) return Error{fmt::format("cannot read the knowledge folder {}: {}", dir, ec.message())};
  std::sort(files.begin(), files.end());
  for (auto& f : files) {
    auto text = read_file(f.string());
    if (!text) return text.error();
    KnowledgeDoc d;
    d.path = f.string();
    d.text = *text;
    std::string_view first = split(*text, '\n')[0];
    if (!starts_with(first, "<!--"))
      return Error{fmt::format("{}: the first line must be `<!-- level: ...; families: ... -->`", d.path)};
    std::string_view meta = trim(first.substr(4, first.find("-->") - 4));
    for (auto part : split(meta, ';')) {
      auto kv = split(part, ':');
      if (kv.size() < 2) continue;
      std::string_view key = trim(kv[0]), value = trim(part.substr(part.find(':') + 1));
      if (key == "level") {
        auto l = parse_knowledge_level(std::string(value));
        if (!l) return Error{fmt::format("{}: {}", d.path, l.error().message)};
        d.level = *l;
      } else if (key == "families") {
        for (auto fam : split(value, ','))
          if (!trim(fam).empty()) d.families.emplace_back(trim(fam));
      }
    }
    for (auto line : split(*text, '\n'))
      if (starts_with(line, "# ")) {
        d.title = std::string(trim(line.substr(2)));
        break;
      }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<const KnowledgeDoc*> select_knowledge(const std::vector<KnowledgeDoc>& all, KnowledgeLevel level,
                                                  const std::vector<std::string>& required) {
  std::vector<const KnowledgeDoc*> out;
  for (auto& d : all) {
    if (d.level > level || d.level < KnowledgeLevel::templates) continue;
    bool relevant = d.families.empty() || level == KnowledgeLevel::full;
    for (auto& f : d.families)
      for (auto& r : required) relevant = relevant || starts_with(r, f) || starts_with(f, r);
    if (relevant) out.push_back(&d);
  }
  return out;
}

}  // namespace ptxforge::agent
