// The service's task catalog: every task is loaded once at start, so that a client's task name
// is only ever a key into this table and never reaches the file system. Names are relative to
// their root ("level1/vector_add" under tasks/, "my_op" under a --tasks folder).
#include "serve/task_catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>

#include "util/paths.h"

namespace ptxforge::serve {
namespace fs = std::filesystem;

namespace {

// The same rule a request's "task" field obeys (docs/serve.md): a name outside it can never be
// a catalog entry, so a lookup with one fails before any comparison.
bool usable_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '/' || name.back() == '/') return false;
  if (name.find("..") != std::string_view::npos || name.find("//") != std::string_view::npos) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '/' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string_view last_part(std::string_view name) {
  auto slash = name.rfind('/');
  return slash == std::string_view::npos ? name : name.substr(slash + 1);
}

bool has_task_file(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "task.toml", ec);
}

// The task folders of one --tasks folder: the folder itself, or its children and grandchildren
// that hold a task.toml, each with its client name. Hidden folders are left out.
Result<std::vector<std::pair<std::string, std::string>>> scan_extra(const std::string& root) {
  std::vector<std::pair<std::string, std::string>> out;  // {name, dir}
  std::error_code ec;
  fs::path base(root);
  if (!fs::is_directory(base, ec)) return Error{fmt::format("--tasks folder '{}' is not a folder", root)};
  if (has_task_file(base)) {
    out.emplace_back(fs::absolute(base, ec).lexically_normal().filename().string(), root);
    if (out.back().first.empty()) out.back().first = fs::absolute(base, ec).lexically_normal().parent_path().filename().string();
    return out;
  }
  auto children = [&](const fs::path& dir) -> Result<std::vector<fs::path>> {
    std::vector<fs::path> dirs;
    std::error_code e;
    for (auto it = fs::directory_iterator(dir, e); !e && it != fs::directory_iterator(); it.increment(e))
      if (it->is_directory(e) && it->path().filename().string().front() != '.') dirs.push_back(it->path());
    if (e) return Error{fmt::format("cannot list task folder {}: {}", dir.string(), e.message())};
    std::sort(dirs.begin(), dirs.end());
    return dirs;
  };
  auto level1 = children(base);
  if (!level1) return level1.error();
  for (auto& d1 : *level1) {
    if (has_task_file(d1)) {
      out.emplace_back(d1.filename().string(), d1.string());
      continue;
    }
    auto level2 = children(d1);
    if (!level2) return level2.error();
    for (auto& d2 : *level2)
      if (has_task_file(d2)) out.emplace_back(d1.filename().string() + "/" + d2.filename().string(), d2.string());
  }
  return out;
}

}  // namespace

TaskCatalog::TaskCatalog(std::vector<Entry> entries)
    : entries_(std::make_shared<const std::vector<Entry>>(std::move(entries))) {}

Result<TaskCatalog> TaskCatalog::load(const std::vector<std::string>& extra_dirs) {
  std::vector<std::pair<std::string, std::string>> found;  // {name, dir}
  auto shipped = task::list_task_dirs();
  if (!shipped) return shipped.error();
  auto data = data_dir();
  fs::path root = data ? fs::path(*data) / "tasks" : fs::path();
  for (auto& dir : *shipped) found.emplace_back(fs::path(dir).lexically_relative(root).generic_string(), dir);
  for (auto& extra : extra_dirs) {
    auto more = scan_extra(extra);
    if (!more) return more.error();
    found.insert(found.end(), more->begin(), more->end());
  }

  std::vector<Entry> entries;
  std::map<std::string, std::string> seen;  // name -> dir, for the duplicate error
  for (auto& [name, dir] : found) {
    if (!usable_name(name))
      return Error{fmt::format("task folder '{}' has a name clients cannot use ('{}': letters, digits, '_', '.', '-' and '/' only)", dir, name)};
    if (auto it = seen.find(name); it != seen.end())
      return Error{fmt::format("two tasks named '{}': {} and {}", name, it->second, dir)};
    seen.emplace(name, dir);
    auto t = task::load_task(dir);
    if (!t) return Error{fmt::format("task '{}' ({}) does not load:\n{}", name, dir, t.error().message)};
    entries.push_back(Entry{name, dir, std::move(*t)});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return TaskCatalog(std::move(entries));
}

const TaskCatalog::Entry* TaskCatalog::find(std::string_view name) const {
  if (!usable_name(name)) return nullptr;
  for (auto& e : *entries_)
    if (e.name == name) return &e;
  // A bare name ("vector_add") stands for the one entry whose last part it is; a name with a
  // folder in it is only ever a full name.
  if (name.find('/') != std::string_view::npos) return nullptr;
  const Entry* match = nullptr;
  for (auto& e : *entries_) {
    if (last_part(e.name) != name) continue;
    if (match) return nullptr;  // ambiguous
    match = &e;
  }
  return match;
}

}  // namespace ptxforge::serve
