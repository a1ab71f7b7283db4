#include "bench/config.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "agent/options_toml.h"
#include "task/seeds.h"
#include "task/task_spec.h"
#include "util/text.h"

namespace ptxforge::bench {

namespace {

// Collects every problem of bench.toml with its line, so one run shows them all.
struct Problems {
  std::string file;
  std::vector<std::string> lines;
  void add(const toml::node* at, const std::string& msg) {
    if (at) lines.push_back(fmt::format("{}:{}: {}", file, at->source().begin.line, msg));
    else lines.push_back(fmt::format("{}: {}", file, msg));
  }
};

template <typename T>
std::vector<T> list_of(const toml::table& t, std::string_view key, Problems& p) {
  std::vector<T> out;
  const toml::node* n = t.get(key);
  if (!n) return out;
  if (auto v = n->value<T>()) return {*v};  // a single value stands for a list of one
  const toml::array* a = n->as_array();
  if (!a) {
    p.add(n, fmt::format("'{}' must be a list", key));
    return out;
  }
  for (auto& e : *a) {
    if (auto v = e.value<T>()) out.push_back(*v);
    else p.add(&e, fmt::format("an element of '{}' has the wrong type", key));
  }
  return out;
}

// A label safe in a folder name: letters, digits, '.', '-' and '_' kept, the rest '_'.
std::string slug(std::string_view s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return out.substr(0, 60);
}

void add_all(Problems& p, const std::vector<agent::TomlProblem>& problems) {
  for (auto& q : problems) p.add(q.at, q.message);
}

// Each model's options are the bench's with the model's own keys read over them.
void read_models(const toml::table& root, BenchConfig& c, Problems& p) {
  const toml::array* models = root["models"].as_array();
  if (!models || models->empty()) {
    p.add(nullptr, "no [[models]]: a bench needs at least one model (spec = \"cmd:...\", \"replay:...\", \"openai:...\")");
    return;
  }
  std::set<std::string> names;
  for (auto& node : *models) {
    const toml::table* t = node.as_table();
    if (!t) {
      p.add(&node, "each [[models]] entry must be a table");
      continue;
    }
    ModelEntry m{"", c.options};
    add_all(p, agent::read_toml_options(*t, agent::BenchPlace::model, {"name"}, "[[models]]", m.options));
    if (!t->contains("spec")) p.add(&node, "a model needs spec = \"<provider>:<model>\"");
    if (m.options.model == "manual") p.add(&node, "a bench cannot wait for manual replies: use a provider, cmd: or replay:");
    m.name = (*t)["name"].value_or(m.options.model);
    if (!names.insert(m.name).second) p.add(&node, fmt::format("two models are named '{}'; give each a name", m.name));
    c.models.push_back(std::move(m));
  }
}

}  // namespace

Result<BenchConfig> parse_config(std::string_view text, const std::string& file_name) {
  toml::table root;
  try {
    root = toml::parse(text, file_name);
  } catch (const toml::parse_error& e) {
    return Error{fmt::format("{}:{}: {}", file_name, e.source().begin.line, e.description())};
  }
  Problems p{file_name, {}};
  BenchConfig c;
  c.name = root["name"].value_or(std::filesystem::path(file_name).stem().string());
  if (const toml::table* t = root["tasks"].as_table()) {
    c.tasks.names = list_of<std::string>(*t, "names", p);
    c.tasks.globs = list_of<std::string>(*t, "globs", p);
    for (auto l : list_of<int64_t>(*t, "levels", p)) c.tasks.levels.push_back(static_cast<int>(l));
    c.tasks.tags = list_of<std::string>(*t, "tags", p);
    // No option lives in [tasks]: this only reports its unknown keys.
    add_all(p, agent::read_toml_options(*t, agent::BenchPlace::none, {"names", "globs", "levels", "tags"}, "[tasks]", c.options));
  } else {
    p.add(nullptr, "no [tasks]: name the tasks (names, globs, levels, tags)");
  }
  if (root.contains("modes")) {
    c.modes.clear();
    for (auto& m : list_of<std::string>(root, "modes", p)) {
      if (m == "implement") c.modes.push_back(agent::Mode::implement);
      else if (m == "translate") c.modes.push_back(agent::Mode::translate);
      else p.add(root.get("modes"), fmt::format("unknown mode '{}' (implement, translate)", m));
    }
  }
  if (root.contains("knowledge")) {
    c.knowledge.clear();
    for (auto& k : list_of<std::string>(root, "knowledge", p)) {
      auto l = agent::parse_knowledge_level(k);
      if (l) c.knowledge.push_back(*l);
      else p.add(root.get("knowledge"), l.error().message);
    }
  }
  if (const toml::node* seeds = root.get("seeds")) {
    for (auto& s : list_of<int64_t>(root, "seeds", p)) {
      if (s < 0) p.add(seeds, "seeds are non-negative integers");
      c.seeds.push_back(static_cast<uint64_t>(s));
    }
    std::set<uint64_t> distinct(c.seeds.begin(), c.seeds.end());
    if (distinct.size() != c.seeds.size()) p.add(seeds, "a seed is listed twice");
  }
  // The loop's options: the top level's and [run]'s keys are rows of the option table, read
  // before the models, which start from them. Any other key is unknown.
  add_all(p, agent::read_toml_options(root, agent::BenchPlace::top,
                                      {"name", "models", "tasks", "modes", "knowledge", "seeds", "run", "require_gpu_verify"}, "",
                                      c.options));
  if (const toml::node* run = root.get("run")) {
    if (const toml::table* t = run->as_table()) add_all(p, agent::read_toml_options(*t, agent::BenchPlace::run, {}, "[run]", c.options));
    else p.add(run, "[run] must be a table");
  }
  if (const toml::node* req = root.get("require_gpu_verify")) {
    if (auto b = req->value<bool>()) c.require_gpu_verify = *b;
    else p.add(req, "require_gpu_verify takes true or false");
    if (c.require_gpu_verify) {
      if (c.options.run.device == eval::Device::cpu)
        p.add(req, "require_gpu_verify = true, but [run] device = \"cpu\" verifies on the CPU engine only");
      c.options.run.device = eval::Device::gpu;
    }
  }
  read_models(root, c, p);
  if (!p.lines.empty()) {
    std::string all;
    for (auto& l : p.lines) all += (all.empty() ? "" : "\n") + l;
    return Error{all};
  }
  return c;
}

Result<BenchConfig> load_config(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse_config(*text, path);
}

Result<std::vector<Cell>> expand(const BenchConfig& c, uint64_t bench_seed) {
  auto all = task::list_task_dirs();
  if (!all) return all.error();
  // The tasks, each once, in the suite's order: named ones and glob matches (all tasks when
  // neither is given), then kept only where the level and tag filters say.
  std::vector<std::pair<std::string, std::string>> chosen;  // (suite name, folder)
  auto suite_name = [](const std::string& dir) {
    std::filesystem::path p(dir);
    return p.parent_path().filename().string() + "/" + p.filename().string();
  };
  std::set<std::string> wanted;
  for (auto& n : c.tasks.names) {
    auto dir = task::find_task_dir(n);
    if (!dir) return Error{fmt::format("[tasks] names: {}", dir.error().message)};
    wanted.insert(std::filesystem::weakly_canonical(*dir).string());
  }
  for (auto& dir : *all) {
    std::string name = suite_name(dir);
    bool named = wanted.count(std::filesystem::weakly_canonical(dir).string()) > 0;
    bool globbed = std::any_of(c.tasks.globs.begin(), c.tasks.globs.end(),
                               [&](const std::string& g) { return fnmatch(g.c_str(), name.c_str(), 0) == 0; });
    if (named || globbed || (c.tasks.names.empty() && c.tasks.globs.empty())) chosen.emplace_back(name, dir);
  }
  std::vector<Cell> cells;
  std::vector<std::pair<std::string, task::Task>> tasks;
  for (auto& [name, dir] : chosen) {
    auto t = task::load_task(dir);
    if (!t) return Error{fmt::format("task {}: {}", name, t.error().message)};
    if (!c.tasks.levels.empty() && std::find(c.tasks.levels.begin(), c.tasks.levels.end(), t->level) == c.tasks.levels.end())
      continue;
    if (!c.tasks.tags.empty() && std::none_of(t->tags.begin(), t->tags.end(), [&](const std::string& tag) {
          return std::find(c.tasks.tags.begin(), c.tasks.tags.end(), tag) != c.tasks.tags.end();
        }))
      continue;
    tasks.emplace_back(name, std::move(*t));
  }
  if (tasks.empty()) return Error{"[tasks] selects no task of the suite"};
  std::vector<uint64_t> seeds = c.seeds.empty() ? std::vector<uint64_t>{bench_seed} : c.seeds;
  for (auto& m : c.models)
    for (auto& [name, t] : tasks)
      for (auto mode : c.modes)
        for (auto k : c.knowledge)
          for (size_t s = 0; s < seeds.size(); ++s) {
            Cell cell;
            cell.index = static_cast<int>(cells.size());
            cell.model = &m;
            cell.task = name;
            cell.task_dir = t.dir;
            cell.level = t.level;
            cell.has_library = t.baseline.has_value();
            cell.mode = mode;
            cell.knowledge = k;
            cell.seed_index = static_cast<int>(s) + 1;
            // A cell's inputs derive from its seed and its task: every model of the bench meets the
            // same inputs on a task (a fair comparison), and a shard reproduces its cells exactly.
            cell.seed = task::derive_seed(seeds[s], task::SeedUse::round, task::size_set_key(name), 0);
            std::string mode_name = mode == agent::Mode::translate ? "translate" : "implement";
            cell.id = fmt::format("{}/{}/{}/{}/seed-{}", m.name, name, mode_name, agent::knowledge_level_name(k), s + 1);
            cell.folder = fmt::format("{:04}-{}", cell.index, slug(fmt::format("{}__{}__{}__{}__s{}", m.name, name, mode_name,
                                                                              agent::knowledge_level_name(k), s + 1)));
            cells.push_back(std::move(cell));
          }
  return cells;
}

Result<Shard> parse_shard(std::string_view text) {
  auto parts = split(text, '/');
  if (parts.size() == 2) {
    std::string a(trim(parts[0])), b(trim(parts[1]));
    char *ea = nullptr, *eb = nullptr;
    long i = std::strtol(a.c_str(), &ea, 10), n = std::strtol(b.c_str(), &eb, 10);
    if (!a.empty() && !b.empty() && *ea == '\0' && *eb == '\0' && n >= 1 && n <= 100000 && i >= 0 && i < n)
      return Shard{static_cast<int>(i), static_cast<int>(n)};
  }
  return Error{fmt::format("'{}' is not a shard: give i/N with 0 <= i < N (e.g. 0/2)", text)};
}

std::vector<Cell> shard_cells(const std::vector<Cell>& cells, Shard s) {
  std::vector<Cell> out;
  for (auto& c : cells)
    if (c.index % s.count == s.index) out.push_back(c);
  return out;
}

void resolve_arch(BenchConfig& c) {
  agent::resolve_arch(c.options);
  for (auto& m : c.models) {
    m.options.prompt.arch = c.options.prompt.arch;
    m.options.run.arch = c.options.run.arch;
  }
}

// The bench's own options are in each model's (read_models).
agent::CompileOptions cell_options(const BenchConfig&, const Cell& cell, const std::string& out) {
  agent::CompileOptions o = cell.model->options;
  o.task_dir = cell.task_dir;
  o.prompt.mode = cell.mode;
  o.prompt.knowledge = cell.knowledge;
  o.run.seed = cell.seed;
  o.out = out;
  return o;
}

}  // namespace ptxforge::bench
