#include "task/task_spec.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <toml++/toml.h>

#include "util/diagnostic.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::task {

namespace fs = std::filesystem;

std::string_view role_name(Role r) { return r == Role::in ? "in" : r == Role::out ? "out" : "inout"; }

std::string Distribution::text() const {
  switch (kind) {
    case uniform: return fmt::format("uniform({}, {})", a, b);
    case normal: return fmt::format("normal({}, {})", a, b);
    case integers: return fmt::format("int({}, {})", a, b);
    case zeros: return "zeros";
    case ones: return "ones";
    case iota: return "iota";
  }
  return "?";
}

Result<Distribution> Distribution::parse(std::string_view text) {
  std::string_view t = trim(text);
  Distribution d;
  if (t == "zeros") return Distribution{zeros, 0, 0};
  if (t == "ones") return Distribution{ones, 1, 1};
  if (t == "iota") return Distribution{iota, 0, 0};
  size_t open = t.find('(');
  if (open == std::string_view::npos || t.back() != ')')
    return Error{fmt::format("'{}' is not a distribution: use uniform(lo, hi), normal(mean, stddev), int(lo, hi), "
                             "zeros, ones or iota", text)};
  std::string_view fn = trim(t.substr(0, open));
  auto args = split(t.substr(open + 1, t.size() - open - 2), ',');
  if (fn == "uniform") d.kind = uniform;
  else if (fn == "normal") d.kind = normal;
  else if (fn == "int") d.kind = integers;
  else
    return Error{fmt::format("unknown distribution '{}'; use uniform, normal, int, zeros, ones or iota", fn)};
  if (args.size() != 2) return Error{fmt::format("'{}' takes two numbers", fn)};
  try {
    d.a = std::stod(std::string(trim(args[0])));
    d.b = std::stod(std::string(trim(args[1])));
  } catch (const std::exception&) {
    return Error{fmt::format("'{}': its arguments must be numbers", text)};
  }
  if (d.kind != normal && d.a > d.b) return Error{fmt::format("'{}': the low end is above the high end", text)};
  return d;
}

size_t Param::param_bytes() const {
  switch (kind) {
    case buffer: return 8;
    case scalar: return dtype_size(dtype);
    case tensor_map: return 128;
  }
  return 0;
}

const Param* Task::find_param(std::string_view n) const {
  for (auto& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

Tolerance Task::tolerance_for(const std::string& output) const {
  auto it = tolerance.find(output);
  if (it != tolerance.end()) return it->second;
  auto all = tolerance.find("*");
  return all != tolerance.end() ? all->second : Tolerance{};
}

std::vector<const SizeSet*> Task::size_sets(bool include_held_back) const {
  std::vector<const SizeSet*> out;
  for (auto& s : sizes)
    if (s.shown || include_held_back) out.push_back(&s);
  return out;
}

namespace {

// Walks the TOML tree, collecting every problem with its position.
class Reader {
 public:
  Reader(Diagnostics& d) : diags_(d) {}

  static SourceLoc loc_of(const toml::node* n) {
    if (!n) return {};
    auto b = n->source().begin;
    return {static_cast<uint32_t>(b.line), static_cast<uint32_t>(b.column)};
  }
  void error(const toml::node* at, std::string msg, SourceLoc fallback = {}) {
    SourceLoc l = at ? loc_of(at) : fallback;
    diags_.error(l, std::move(msg), "task");
  }

  std::optional<std::string> string(const toml::table& t, std::string_view key, bool required, SourceLoc where) {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) error(nullptr, fmt::format("missing key '{}'", key), where);
      return std::nullopt;
    }
    if (auto v = n->value<std::string>()) return *v;
    if (auto i = n->value<int64_t>()) return std::to_string(*i);  // `count = 1024` is an expression too
    if (auto d = n->value<double>()) return fmt::format("{}", *d);
    error(n, fmt::format("'{}' must be a string", key));
    return std::nullopt;
  }
  std::optional<SizeExpr> expr(const toml::table& t, std::string_view key, bool required, SourceLoc where) {
    auto s = string(t, key, required, where);
    if (!s) return std::nullopt;
    auto e = SizeExpr::parse(*s);
    if (!e) {
      error(t.get(key), fmt::format("bad expression for '{}': {}", key, e.error().message));
      return std::nullopt;
    }
    note_symbols(*e, t.get(key));
    return *e;
  }
  std::optional<Dim3Expr> dim3(const toml::table& t, std::string_view key, bool required, SourceLoc where) {
    auto s = string(t, key, required, where);
    if (!s) return std::nullopt;
    auto e = Dim3Expr::parse(*s);
    if (!e) {
      error(t.get(key), fmt::format("bad shape for '{}': {}", key, e.error().message));
      return std::nullopt;
    }
    for (auto* x : {&e->x, &e->y, &e->z}) note_symbols(*x, t.get(key));
    return *e;
  }
  std::vector<SizeExpr> expr_list(const toml::table& t, std::string_view key) {
    std::vector<SizeExpr> out;
    const toml::node* n = t.get(key);
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a) {
      error(n, fmt::format("'{}' must be a list of expressions", key));
      return out;
    }
    for (auto& item : *a) {
      std::optional<std::string> s;
      if (auto v = item.value<std::string>()) s = *v;
      else if (auto i = item.value<int64_t>()) s = std::to_string(*i);
      if (!s) {
        error(&item, fmt::format("'{}' entries must be expressions", key));
        continue;
      }
      auto e = SizeExpr::parse(*s);
      if (!e) {
        error(&item, e.error().message);
        continue;
      }
      note_symbols(*e, &item);
      out.push_back(*e);
    }
    return out;
  }
  double number(const toml::table& t, std::string_view key, double fallback) {
    const toml::node* n = t.get(key);
    if (!n) return fallback;
    if (auto d = n->value<double>()) return *d;
    error(n, fmt::format("'{}' must be a number", key));
    return fallback;
  }

  // Every symbol an expression uses, with where it was used, for the size-set check.
  void note_symbols(const SizeExpr& e, const toml::node* at) {
    for (auto& s : e.symbols()) used_.push_back({s, loc_of(at)});
  }
  struct Use {
    std::string symbol;
    SourceLoc loc;
  };
  const std::vector<Use>& used() const { return used_; }

 private:
  Diagnostics& diags_;
  std::vector<Use> used_;
};

void read_params(Reader& r, const toml::table& root, Task& task, Diagnostics& diags) {
  const toml::array* params = root["param"].as_array();
  if (!params || params->empty()) {
    diags.error({1, 1}, "the task has no [[param]] entries: list the kernel's parameters in order", "task");
    return;
  }
  for (auto& node : *params) {
    const toml::table* t = node.as_table();
    if (!t) continue;
    SourceLoc where = Reader::loc_of(&node);
    Param p;
    p.line = static_cast<int>(where.line);
    p.name = r.string(*t, "name", true, where).value_or("?");
    if (task.find_param(p.name)) r.error(t->get("name"), fmt::format("parameter '{}' is listed twice", p.name));
    std::string kind = r.string(*t, "kind", false, where).value_or("buffer");
    if (kind == "buffer") p.kind = Param::buffer;
    else if (kind == "scalar") p.kind = Param::scalar;
    else if (kind == "tensor_map") p.kind = Param::tensor_map;
    else r.error(t->get("kind"), fmt::format("unknown kind '{}'; use buffer, scalar or tensor_map", kind));
    if (p.kind != Param::tensor_map) {
      std::string dt = r.string(*t, "dtype", true, where).value_or("f32");
      if (auto d = parse_dtype(dt)) p.dtype = *d;
      else
        r.error(t->get("dtype"), fmt::format("unknown dtype '{}'; use f16, bf16, f32, f64, i8..i64 or u8..u64", dt));
    }
    if (p.kind == Param::buffer) {
      if (auto e = r.expr(*t, "count", true, where)) p.count = *e;
      std::string role = r.string(*t, "role", true, where).value_or("in");
      if (role == "in") p.role = Role::in;
      else if (role == "out") p.role = Role::out;
      else if (role == "inout") p.role = Role::inout;
      else r.error(t->get("role"), fmt::format("unknown role '{}'; use in, out or inout", role));
      std::string init = r.string(*t, "init", false, where).value_or(p.role == Role::out ? "zeros" : "uniform(-1, 1)");
      auto d = Distribution::parse(init);
      if (d) p.init = *d;
      else r.error(t->get("init"), d.error().message);
      p.shape = r.expr_list(*t, "shape");
    } else if (p.kind == Param::scalar) {
      if (auto e = r.expr(*t, "value", true, where)) p.value = *e;
    } else {
      p.over = r.string(*t, "over", true, where).value_or("");
      p.dims = r.expr_list(*t, "dims");
      p.strides = r.expr_list(*t, "strides");
      if (p.dims.empty() || p.dims.size() > 5) r.error(t->get("dims"), "a tensor map needs 1 to 5 dims", where);
      if (p.strides.size() + 1 != p.dims.size())
        r.error(t->get("strides"), "a tensor map needs one byte stride per dimension after the first", where);
    }
    task.params.push_back(std::move(p));
  }
  for (auto& p : task.params) {
    if (p.kind != Param::tensor_map) continue;
    const Param* b = task.find_param(p.over);
    if (!b || b->kind != Param::buffer)
      diags.error({static_cast<uint32_t>(p.line), 1}, fmt::format("tensor map '{}' is over '{}', which is not a buffer parameter", p.name, p.over), "task");
  }
}

void read_sizes(Reader& r, const toml::table& root, Task& task, Diagnostics& diags) {
  const toml::array* sizes = root["sizes"].as_array();
  if (!sizes || sizes->empty()) {
    diags.error({1, 1}, "the task has no [[sizes]] entries", "task");
    return;
  }
  for (auto& node : *sizes) {
    const toml::table* t = node.as_table();
    if (!t) continue;
    SizeSet s;
    s.name = r.string(*t, "name", true, Reader::loc_of(&node)).value_or("?");
    for (auto& [k, v] : *t) {
      if (k == "name") continue;
      if (k == "shown") {
        if (auto b = v.value<bool>()) s.shown = *b;
        else r.error(&v, "'shown' must be true or false");
        continue;
      }
      if (auto d = v.value<double>()) s.values[std::string(k.str())] = *d;
      else r.error(&v, fmt::format("size '{}' must be a number", k.str()));
    }
    task.sizes.push_back(std::move(s));
  }
  if (task.size_sets(false).empty()) diags.error({1, 1}, "no size set is shown (every one has shown = false)", "task");
}

void read_launch(Reader& r, const toml::table& t, SourceLoc where, Launch& l) {
  l.entry = r.string(t, "entry", true, where).value_or("");
  if (auto g = r.dim3(t, "grid", true, where)) l.grid = *g;
  if (auto b = r.dim3(t, "block", true, where)) l.block = *b;
  if (auto c = r.dim3(t, "cluster", false, where)) {
    l.cluster = *c;
    l.has_cluster = true;
  }
  l.smem = r.expr(t, "smem", false, where).value_or(*SizeExpr::parse("0"));
}

void check_symbols(const Reader& r, const Task& task, Diagnostics& diags) {
  for (auto& use : r.used()) {
    for (auto& s : task.sizes) {
      if (s.values.count(use.symbol)) continue;
      std::vector<std::string_view> names;
      for (auto& [k, v] : s.values) names.push_back(k);
      std::string guess = closest_match(use.symbol, names);
      diags.error(use.loc, fmt::format("symbol '{}' is not set in size set '{}'{}", use.symbol, s.name,
                                       guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess)),
                  "task");
      break;
    }
  }
}

}  // namespace

Result<Task> parse_task(std::string_view text, const std::string& file_name, const std::string& dir) {
  Diagnostics diags;
  SourceText src(file_name, text);
  toml::table root;
  try {
    root = toml::parse(text, file_name);
  } catch (const toml::parse_error& e) {
    auto b = e.source().begin;
    diags.error({static_cast<uint32_t>(b.line), static_cast<uint32_t>(b.column)}, std::string(e.description()), "toml");
    return Error{render_text(diags, src)};
  }
  Reader r(diags);
  Task task;
  task.dir = dir;
  SourceLoc top{1, 1};
  task.name = r.string(root, "name", true, top).value_or("");
  task.description = r.string(root, "description", true, top).value_or("");
  task.entry = r.string(root, "entry", true, top).value_or("");
  task.level = static_cast<int>(r.number(root, "level", 1));
  task.min_target = r.string(root, "min_target", false, top).value_or("sm_80");
  task.time_budget_s = r.number(root, "time_budget_s", 10);
  if (auto* tags = root["tags"].as_array())
    for (auto& t : *tags)
      if (auto s = t.value<std::string>()) task.tags.push_back(*s);
  if (auto* req = root["required_instructions"].as_array())
    for (auto& t : *req)
      if (auto s = t.value<std::string>()) task.required_instructions.push_back(*s);
  if (auto b = root["racecheck"].value<bool>()) task.racecheck = *b;

  read_params(r, root, task, diags);
  read_sizes(r, root, task, diags);
  if (const toml::table* ref = root["reference"].as_table()) {
    read_launch(r, *ref, Reader::loc_of(ref), task.reference);
  } else {
    diags.error(top, "missing [reference] table: the entry and launch of reference.cu's kernel", "task");
  }
  if (const toml::table* tol = root["tolerance"].as_table()) {
    Tolerance defaults{r.number(*tol, "rtol", 1e-5), r.number(*tol, "atol", 1e-6), r.number(*tol, "min_match", 1.0)};
    task.tolerance["*"] = defaults;
    for (auto& [k, v] : *tol) {
      const toml::table* t = v.as_table();
      if (!t) continue;
      const Param* p = task.find_param(k.str());
      if (!p || !p->is_output()) r.error(&v, fmt::format("tolerance for '{}', which is not an output buffer", k.str()));
      task.tolerance[std::string(k.str())] = {r.number(*t, "rtol", defaults.rtol), r.number(*t, "atol", defaults.atol),
                                              r.number(*t, "min_match", defaults.min_match)};
    }
  }
  if (const toml::table* rl = root["roofline"].as_table()) {
    task.roofline_bytes = r.expr(*rl, "bytes", false, Reader::loc_of(rl));
    task.roofline_flops = r.expr(*rl, "flops", false, Reader::loc_of(rl));
  }
  if (const toml::table* b = root["baseline"].as_table()) {
    Baseline base;
    base.library = r.string(*b, "library", true, Reader::loc_of(b)).value_or("");
    if (base.library != "cublas_sgemm" && base.library != "cublas_sgemv")
      r.error(b->get("library"), fmt::format("unknown library baseline '{}'; known: cublas_sgemm, cublas_sgemv", base.library));
    for (auto& [k, v] : *b) {
      if (k == "library") continue;
      if (auto s = v.value<std::string>()) base.args[std::string(k.str())] = *s;
      else if (auto i = v.value<int64_t>()) base.args[std::string(k.str())] = std::to_string(*i);
    }
    task.baseline = base;
  }
  bool has_output = false;
  for (auto& p : task.params) has_output = has_output || p.is_output();
  if (!task.params.empty() && !has_output && !diags.has_errors()) diags.error(top, "the task has no output buffer (role out or inout)", "task");
  check_symbols(r, task, diags);
  if (diags.has_errors()) {
    diags.sort_by_location();
    return Error{render_text(diags, src)};
  }
  return task;
}

Result<Task> load_task(const std::string& dir) {
  std::string path = (fs::path(dir) / "task.toml").string();
  auto text = read_file(path);
  if (!text) return text.error();
  return parse_task(*text, path, dir);
}

Result<std::vector<std::string>> list_task_dirs() {
  auto data = data_dir();
  if (!data) return Error{"no data directory found (set PTXFORGE_DATA_DIR to the folder that holds tasks/)"};
  fs::path root = fs::path(*data) / "tasks";
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); ++it)
    if (it->path().filename() == "task.toml") out.push_back(it->path().parent_path().string());
  if (ec) return Error{fmt::format("cannot list tasks in {}: {}", root.string(), ec.message())};
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::string> find_task_dir(const std::string& name) {
  std::error_code ec;
  if (fs::exists(fs::path(name) / "task.toml", ec)) return name;
  auto all = list_task_dirs();
  if (!all) return all.error();
  std::vector<std::string> names;
  for (auto& d : *all) {
    fs::path p(d);
    std::string level_name = p.parent_path().filename().string() + "/" + p.filename().string();
    if (name == level_name || name == p.filename().string()) return d;
    names.push_back(p.filename().string());
  }
  std::vector<std::string_view> views(names.begin(), names.end());
  std::string guess = closest_match(name, views);
  return Error{fmt::format("no task '{}' (neither a folder with task.toml nor a task under the data directory){}", name,
                           guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess))};
}

}  // namespace ptxforge::task
