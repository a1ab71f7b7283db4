#include "task/task_spec.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <toml++/toml.h>

#include "task/task_keys.h"
#include "util/diagnostic.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::task {

namespace fs = std::filesystem;

std::string_view role_name(Role r) { return r == Role::in ? "in" : r == Role::out ? "out" : "inout"; }

std::string_view to_string(TensorCores t) {
  switch (t) {
    case TensorCores::none: return "none";
    case TensorCores::tf32: return "tf32";
    case TensorCores::f16: return "f16";
    case TensorCores::fp8: return "fp8";
    case TensorCores::int8: return "int8";
  }
  return "?";
}

std::optional<TensorCores> tensor_cores_from_string(std::string_view s) {
  for (auto t : {TensorCores::none, TensorCores::tf32, TensorCores::f16, TensorCores::fp8, TensorCores::int8})
    if (to_string(t) == s) return t;
  if (s == "bf16") return TensorCores::f16;  // the same rate
  return std::nullopt;
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

const Distribution& Task::init_for(const SizeSet& s, const Param& p) const {
  auto it = s.init.find(p.name);
  return it != s.init.end() ? it->second : p.init;
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

  void error_at(SourceLoc l, std::string msg) { diags_.error(l, std::move(msg), "task"); }

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
        r.error(t->get("dtype"), fmt::format("unknown dtype '{}'; use {}", dt, dtype_names()));
    }
    if (p.kind == Param::buffer) {
      if (auto e = r.expr(*t, "count", true, where)) p.count = *e;
      std::string role = r.string(*t, "role", true, where).value_or("in");
      if (role == "in") p.role = Role::in;
      else if (role == "out") p.role = Role::out;
      else if (role == "inout") p.role = Role::inout;
      else r.error(t->get("role"), fmt::format("unknown role '{}'; use in, out or inout", role));
      if (p.role == Role::out && t->get("init"))
        r.error(t->get("init"), "an output with role \"out\" is poisoned before the candidate runs, so its init is never "
                                "used; use role = \"inout\" to give it starting contents");
      std::string init = r.string(*t, "init", false, where).value_or(p.role == Role::out ? "zeros" : "uniform(-1, 1)");
      auto d = Distribution::parse(init);
      if (d) p.init = *d;
      else r.error(t->get("init"), d.error().message);
      if (d && p.role != Role::out)
        if (auto why = d->unfit_for(p.dtype); !why.empty()) r.error(t->get("init"), why);
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

// A size symbol as written in a [[sizes]] entry, for the "is it used" check.
struct SizeKey {
  std::string set, symbol;
  SourceLoc loc;
};

void read_size_inits(Reader& r, const toml::node& node, const Task& task, SizeSet& s) {
  const toml::table* t = node.as_table();
  if (!t) {
    r.error(&node, "'init' in a size set must be a table: init.x = \"sorted(uniform(0, 1))\"");
    return;
  }
  for (auto& [k, v] : *t) {
    std::string name(k.str());
    const Param* p = task.find_param(name);
    if (!p || p->kind != Param::buffer || p->role == Role::out) {
      std::vector<std::string_view> inputs;
      for (auto& q : task.params)
        if (q.kind == Param::buffer && q.role != Role::out) inputs.push_back(q.name);
      std::string guess = closest_match(name, inputs);
      r.error_at(key_loc(k), fmt::format("init for '{}', which is not an input buffer (role in or inout){}", name,
                                         guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess)));
      continue;
    }
    auto text = v.value<std::string>();
    if (!text) {
      r.error(&v, fmt::format("init.{} must be a string such as \"uniform(0, 1)\"", name));
      continue;
    }
    auto d = Distribution::parse(*text);
    if (!d) {
      r.error(&v, d.error().message);
      continue;
    }
    if (auto why = d->unfit_for(p->dtype); !why.empty()) {
      r.error(&v, why);
      continue;
    }
    s.init[name] = *d;
  }
}

void read_sizes(Reader& r, const toml::table& root, Task& task, Diagnostics& diags, std::vector<SizeKey>& keys) {
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
    for (auto& s2 : task.sizes)
      if (s2.name == s.name) r.error(t->get("name"), fmt::format("size set '{}' is listed twice", s.name));
    for (auto& [k, v] : *t) {
      if (k == "name") continue;
      if (k == "shown") {
        if (auto b = v.value<bool>()) s.shown = *b;
        else r.error(&v, "'shown' must be true or false");
        continue;
      }
      if (k == "init") {
        read_size_inits(r, v, task, s);
        continue;
      }
      if (auto d = v.value<double>()) {
        s.values[std::string(k.str())] = *d;
        keys.push_back({s.name, std::string(k.str()), key_loc(k)});
      } else {
        r.error(&v, fmt::format("size '{}' must be a number", k.str()));
      }
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

// A size symbol that no expression uses is a typo ("nn = 1000") or a size that changes
// nothing: either way the size set does not test what its author meant.
void check_unused_sizes(const Reader& r, const std::vector<SizeKey>& keys, Diagnostics& diags) {
  std::vector<std::string_view> used;
  for (auto& u : r.used()) used.push_back(u.symbol);
  for (auto& k : keys) {
    if (std::find(used.begin(), used.end(), k.symbol) != used.end()) continue;
    std::string guess = closest_match(k.symbol, used);
    diags.error(k.loc,
                fmt::format("size '{}' in size set '{}' is not used by any expression (counts, values, launches, "
                            "roofline, baseline){}",
                            k.symbol, k.set, guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess)),
                "task");
  }
}

// [roofline] is required: the physical-limit gate of the time stage needs the bytes a kernel
// must move and the flops it must do, on every size set.
void read_roofline(Reader& r, const toml::table& root, Task& task, Diagnostics& diags) {
  const toml::table* rl = root["roofline"].as_table();
  if (!rl) {
    diags.error({1, 1},
                "missing [roofline] table: bytes and flops, expressions of the sizes giving the bytes a kernel must "
                "move (all inputs read, all outputs written) and the flops it must do",
                "task");
    return;
  }
  SourceLoc at = Reader::loc_of(rl);
  task.roofline_bytes = r.expr(*rl, "bytes", true, at);
  task.roofline_flops = r.expr(*rl, "flops", true, at);
  if (auto tc = r.string(*rl, "tensor_cores", false, at)) {
    if (auto v = tensor_cores_from_string(*tc)) task.tensor_cores = *v;
    else r.error(rl->get("tensor_cores"), fmt::format("unknown tensor_cores '{}'; use none, tf32, f16 (or bf16), fp8 or int8", *tc));
  }
}

// Once every symbol is known to be bound: the roofline must say something on every size set.
void check_roofline_values(const Task& task, const toml::table& root, Diagnostics& diags) {
  const toml::table* rl = root["roofline"].as_table();
  if (!rl || !task.roofline_bytes || !task.roofline_flops) return;
  for (auto& s : task.sizes) {
    auto b = task.roofline_bytes->evaluate(s.values);
    if (b && !(b->as_double() > 0))
      diags.error(Reader::loc_of(rl->get("bytes")),
                  fmt::format("roofline bytes are {} on size set '{}': every kernel reads its inputs, so this must be "
                              "above zero",
                              b->as_double(), s.name),
                  "task");
    auto f = task.roofline_flops->evaluate(s.values);
    if (f && f->as_double() < 0)
      diags.error(Reader::loc_of(rl->get("flops")), fmt::format("roofline flops are negative on size set '{}'", s.name), "task");
  }
}

// [min_work] floors must be finite amounts of at least zero on every size set.
void check_min_executed_values(const Task& task, const toml::table& root, Diagnostics& diags) {
  const toml::table* me = root["min_work"].as_table();
  if (!me) return;
  for (auto& [family, floor] : task.min_executed)
    for (auto& s : task.sizes) {
      auto v = floor.evaluate(s.values);
      if (!v || !std::isfinite(v->as_double()) || v->as_double() < 0 || v->as_double() > 1e18)
        diags.error(Reader::loc_of(me->get(family)),
                    fmt::format("[min_work] for '{}' on size set '{}' is {}: it must be an amount from 0 to 1e18", family,
                                s.name, v ? fmt::format("{}", v->as_double()) : v.error().message),
                    "task");
    }
}

// device_heap_bytes: a whole number of bytes, 0 (the default: no heap) up to 16 GiB.
void read_device_heap(Reader& r, const toml::table& root, Task& task) {
  const toml::node* n = root.get("device_heap_bytes");
  if (!n) return;
  constexpr int64_t kMaxHeap = int64_t{16} << 30;
  auto v = n->value_exact<int64_t>();
  if (!v || *v < 0 || *v > kMaxHeap) {
    r.error(n, fmt::format("device_heap_bytes is a whole number of bytes from 0 to {} (16 GiB): the device heap "
                           "malloc/free may use; 0 or absent forbids them",
                           kMaxHeap));
    return;
  }
  task.device_heap_bytes = static_cast<uint64_t>(*v);
}

// sanitize_sizes, cpu_sizes: a list of [[sizes]] names; a name that is no size set is an
// error at load (a typo would otherwise fall back to the default sets unseen).
std::vector<std::string> size_set_names(Reader& r, const toml::table& root, const Task& task, std::string_view key) {
  std::vector<std::string> out;
  const toml::node* node = root.get(key);
  if (!node) return out;
  const toml::array* sets = node->as_array();
  if (!sets) {
    r.error(node, fmt::format("{} is a list of size-set names, e.g. [\"small\"]", key));
    return out;
  }
  std::vector<std::string_view> names;
  for (auto& s : task.sizes) names.push_back(s.name);
  for (auto& v : *sets) {
    auto name = v.value<std::string>();
    if (!name) {
      r.error(&v, fmt::format("{} lists size-set names (strings)", key));
    } else if (std::find(names.begin(), names.end(), *name) == names.end()) {
      std::string guess = closest_match(*name, names);
      r.error(&v, fmt::format("{} names '{}', which is not a size set{}", key, *name,
                              guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess)));
    } else if (std::find(out.begin(), out.end(), *name) == out.end()) {
      out.push_back(*name);
    }
  }
  return out;
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
  read_device_heap(r, root, task);
  if (auto* tags = root["tags"].as_array())
    for (auto& t : *tags)
      if (auto s = t.value<std::string>()) task.tags.push_back(*s);
  if (auto* req = root["required_instructions"].as_array())
    for (auto& t : *req) {
      auto s = t.value<std::string>();
      if (!s) {
        r.error(
            &t,
            "required_instructions lists opcode families as strings (\"mma.sync\", or \"mma.sync | wgmma.mma_async\")");
        continue;
      }
      std::vector<std::string> group;
      for (auto part : split(*s, '|')) {
        std::string family(trim(part));
        if (family.empty() || family.find_first_of(" \t") != std::string::npos) {
          r.error(&t, fmt::format("'{}' is not an opcode family or alternatives of them (\"a | b\")", *s));
          group.clear();
          break;
        }
        if (std::find(task.required_instructions.begin(), task.required_instructions.end(), family) !=
            task.required_instructions.end()) {
          r.error(&t, fmt::format("'{}' is named twice in required_instructions", family));
          continue;
        }
        group.push_back(family);
        task.required_instructions.push_back(family);
      }
      if (!group.empty()) task.required_groups.push_back(std::move(group));
    }
  // [min_executed] counted warp executions, which the smallest shapes met at a fraction of the
  // work; a file that still says it would otherwise get a far laxer floor without a word.
  if (root.contains("min_executed"))
    r.error(root.get("min_executed"),
            "[min_executed] (warp executions) is replaced by [min_work]: the work each required family must do on a "
            "case, in its unit (multiply-adds for mma and wgmma, bytes for TMA and ldmatrix, else warp executions); "
            "see docs/task-format.md");
  if (const toml::table* me = root["min_work"].as_table()) {
    for (auto& [k, v] : *me) {
      std::string family(k.str());
      if (std::find(task.required_instructions.begin(), task.required_instructions.end(), family) ==
          task.required_instructions.end()) {
        r.error(&v, fmt::format("[min_work] names '{}', which is not in required_instructions", family));
        continue;
      }
      if (auto e = r.expr(*me, k.str(), true, Reader::loc_of(me))) task.min_executed.emplace(family, *e);
    }
  } else if (root.contains("min_work")) {
    r.error(root.get("min_work"), "min_work must be a table: \"family\" = \"expression of the sizes\"");
  }
  // Alternatives share their floor, so a floor on some of them alone would let the others carry
  // the work unchecked.
  for (auto& g : task.required_groups) {
    size_t floored = 0;
    for (auto& f : g) floored += task.min_executed.count(f);
    if (floored != 0 && floored != g.size())
      r.error(root.get("min_work"), fmt::format("[min_work]: the alternatives {} need a floor each, or none of them "
                                                    "(with some alone, the others could carry the work unchecked)",
                                                    fmt::join(g, " | ")));
  }

  check_task_keys(root, diags);
  read_params(r, root, task, diags);
  std::vector<SizeKey> size_keys;
  read_sizes(r, root, task, diags, size_keys);
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
      else if (!is_float(p->dtype) && (t->contains("rtol") || t->contains("atol")))
        r.error(&v, fmt::format("'{}' is {}: integer outputs are compared exactly, so rtol and atol do not apply (min_match does)",
                                k.str(), dtype_name(p->dtype)));
      task.tolerance[std::string(k.str())] = {r.number(*t, "rtol", defaults.rtol), r.number(*t, "atol", defaults.atol),
                                              r.number(*t, "min_match", defaults.min_match)};
    }
  }
  read_roofline(r, root, task, diags);
  if (const toml::table* b = root["baseline"].as_table()) {
    Baseline base;
    std::string id = r.string(*b, "library", true, Reader::loc_of(b)).value_or("");
    const BaselineSpec* spec = find_baseline(id);
    if (spec) base.kind = spec->kind;
    else r.error(b->get("library"), fmt::format("unknown library baseline '{}'; known: {}", id, known_baseline_ids()));
    for (auto& [k, v] : *b) {
      if (k == "library") continue;
      if (k == "b_major") {
        auto s = v.value<std::string>();
        if (!s || (*s != "n" && *s != "k"))
          r.error(&v, "b_major is \"n\" (B is k x n, row-major) or \"k\" (B is stored n x k: each column of B contiguous)");
        else base.args["b_major"] = *s;
        continue;
      }
      if (spec && spec->is_size(k.str())) {
        // An expression: a string, or a number (`scale = 0.125`) kept as its text.
        if (auto text = r.string(*b, k.str(), false, Reader::loc_of(b))) base.args[std::string(k.str())] = *text;
        r.expr(*b, k.str(), false, Reader::loc_of(b));  // reports a bad expression and notes its symbols
      } else if (auto name = v.value<std::string>()) {
        base.args[std::string(k.str())] = *name;
        const Param* p = task.find_param(*name);
        if (!p || p->kind != Param::buffer)
          r.error(&v, fmt::format("baseline '{}' must name a buffer parameter, not '{}'", k.str(), *name));
      } else {
        r.error(&v, fmt::format("baseline '{}' names a buffer parameter: give its name as a string", k.str()));
      }
    }
    if (spec && spec->check)
      for (auto& problem : spec->check(task, base))
        r.error(!problem.key.empty() && b->get(problem.key) ? b->get(problem.key) : b->get("library"), problem.message);
    task.baseline = base;
  }
  task.sanitize_sizes = size_set_names(r, root, task, "sanitize_sizes");
  task.cpu_sizes = size_set_names(r, root, task, "cpu_sizes");
  bool has_output = false;
  for (auto& p : task.params) has_output = has_output || p.is_output();
  if (!task.params.empty() && !has_output && !diags.has_errors()) diags.error(top, "the task has no output buffer (role out or inout)", "task");
  check_symbols(r, task, diags);
  check_unused_sizes(r, size_keys, diags);
  if (!diags.has_errors()) check_roofline_values(task, root, diags);
  if (!diags.has_errors()) check_min_executed_values(task, root, diags);
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
