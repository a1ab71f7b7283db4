#include "task/launch_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <map>
#include <optional>
#include <toml++/toml.h>

#include "util/text.h"

namespace ptxforge::task {

namespace {

using Fields = std::map<std::string, std::string, std::less<>>;

bool is_key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// At `i`: `name =` (spaces allowed around '='), the start of the next field? Returns the
// position of the '=' when it is.
std::optional<size_t> key_at(std::string_view s, size_t i) {
  size_t j = i;
  while (j < s.size() && is_key_char(s[j])) ++j;
  if (j == i) return std::nullopt;
  while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
  if (j >= s.size() || s[j] != '=') return std::nullopt;
  return j;
}

// `key=value key=(a, b)`. Values are expressions and may hold spaces anywhere
// (`grid=(32 + 2 * ceil_div(n, 8192), 1, 1)`, `smem=4 * 256`): a value runs to the next
// `name=` outside parentheses, or to the end of the line.
Result<Fields> split_fields(std::string_view s) {
  Fields out;
  size_t i = 0;
  auto skip_space = [&](size_t k) {
    while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
    return k;
  };
  while ((i = skip_space(i)) < s.size()) {
    auto eq = key_at(s, i);
    if (!eq) return Error{fmt::format("expected key=value at '{}'", s.substr(i, std::min<size_t>(20, s.size() - i)))};
    std::string key(trim(s.substr(i, *eq - i)));
    size_t j = *eq + 1, end = j;
    int depth = 0;
    while (j < s.size()) {
      char c = s[j];
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (depth == 0 && (c == ' ' || c == '\t')) {
        size_t next = skip_space(j);
        if (next >= s.size() || key_at(s, next)) break;
        j = next;
        continue;
      }
      end = ++j;
    }
    if (depth != 0) return Error{fmt::format("unbalanced parentheses in '{}'", key)};
    if (out.count(key)) return Error{fmt::format("'{}' is given twice", key)};
    std::string value(trim(s.substr(*eq + 1, end - *eq - 1)));
    if (value.empty()) return Error{fmt::format("'{}' has no value", key)};
    out[key] = value;
    i = j;
  }
  return out;
}

Status unknown_keys(const Fields& f, std::initializer_list<std::string_view> known) {
  std::vector<std::string_view> k(known);
  for (auto& [key, v] : f) {
    bool ok = false;
    for (auto x : k) ok = ok || x == key;
    if (!ok) {
      std::string guess = closest_match(key, k);
      return Error{fmt::format("unknown key '{}'{}", key, guess.empty() ? "" : "; did you mean '" + guess + "'?")};
    }
  }
  return ok_status();
}

std::vector<std::string> name_list(std::string_view v) {
  std::string_view t = trim(v);
  if (!t.empty() && t.front() == '(' && t.back() == ')') t = t.substr(1, t.size() - 2);
  std::vector<std::string> out;
  for (auto p : split(t, ','))
    if (!trim(p).empty()) out.emplace_back(trim(p));
  return out;
}

Result<Launch> launch_from(const Fields& f) {
  if (auto s = unknown_keys(f, {"entry", "grid", "block", "cluster", "smem", "args"}); !s) return s.error();
  Launch l;
  auto get = [&](std::string_view k) -> const std::string* {
    auto it = f.find(k);
    return it == f.end() ? nullptr : &it->second;
  };
  if (auto* e = get("entry")) l.entry = *e;
  for (auto [key, slot] : {std::pair{"grid", &l.grid}, std::pair{"block", &l.block}}) {
    const std::string* v = get(key);
    if (!v) return Error{fmt::format("missing {}=(x, y, z)", key)};
    auto d = Dim3Expr::parse(*v);
    if (!d) return Error{fmt::format("{}: {}", key, d.error().message)};
    *slot = *d;
  }
  if (auto* v = get("cluster")) {
    auto d = Dim3Expr::parse(*v);
    if (!d) return Error{fmt::format("cluster: {}", d.error().message)};
    l.cluster = *d;
    l.has_cluster = true;
  }
  auto smem = SizeExpr::parse(get("smem") ? *get("smem") : "0");
  if (!smem) return Error{fmt::format("smem: {}", smem.error().message)};
  l.smem = *smem;
  if (auto* v = get("args")) l.args = name_list(*v);
  return l;
}

Result<Scratch> scratch_from(const Fields& f) {
  if (auto s = unknown_keys(f, {"name", "dtype", "count"}); !s) return s.error();
  Scratch sc;
  auto n = f.find("name"), d = f.find("dtype"), c = f.find("count");
  if (n == f.end() || d == f.end() || c == f.end()) return Error{"a scratch buffer needs name=, dtype= and count="};
  sc.name = n->second;
  auto dt = parse_dtype(d->second);
  if (!dt) return Error{fmt::format("unknown dtype '{}'", d->second)};
  sc.dtype = *dt;
  auto e = SizeExpr::parse(c->second);
  if (!e) return Error{fmt::format("count: {}", e.error().message)};
  sc.count = *e;
  return sc;
}

Result<TensorMapChoice> tensor_map_from(const Fields& f) {
  if (auto s = unknown_keys(f, {"name", "box", "swizzle", "interleave", "l2", "oob"}); !s) return s.error();
  TensorMapChoice t;
  auto get = [&](std::string_view k, std::string fallback) {
    auto it = f.find(k);
    return it == f.end() ? fallback : it->second;
  };
  t.name = get("name", "");
  if (t.name.empty()) return Error{"a tensor map choice needs name="};
  for (auto& b : name_list(get("box", ""))) {
    auto e = SizeExpr::parse(b);
    if (!e) return Error{fmt::format("box: {}", e.error().message)};
    t.box.push_back(*e);
  }
  if (t.box.empty()) return Error{"a tensor map choice needs box=(...)"};
  t.swizzle = get("swizzle", "none");
  t.interleave = get("interleave", "none");
  t.l2_promotion = get("l2", "none");
  t.oob_fill = get("oob", "zero");
  auto one_of = [](const std::string& v, std::initializer_list<const char*> ok) {
    for (auto* o : ok)
      if (v == o) return true;
    return false;
  };
  if (!one_of(t.swizzle, {"none", "32B", "64B", "128B"})) return Error{"swizzle must be none, 32B, 64B or 128B"};
  if (!one_of(t.interleave, {"none", "16B", "32B"})) return Error{"interleave must be none, 16B or 32B"};
  if (!one_of(t.l2_promotion, {"none", "64B", "128B", "256B"})) return Error{"l2 must be none, 64B, 128B or 256B"};
  if (!one_of(t.oob_fill, {"zero", "nan"})) return Error{"oob must be zero or nan"};
  return t;
}

std::string at(const std::string& file, int line, const std::string& msg) {
  return fmt::format("{}:{}: error: {}", file, line, msg);
}

}  // namespace

bool is_launch_spec_line(std::string_view line) {
  std::string_view t = trim(line);
  if (!starts_with(t, "//")) return false;
  t = trim(t.substr(2));
  return starts_with(t, "@launch") || starts_with(t, "@scratch") || starts_with(t, "@tensormap");
}

Result<LaunchSpec> parse_launch_comments(std::string_view text, const std::string& file_name) {
  LaunchSpec spec;
  int line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    std::string_view t = trim(line);
    if (!starts_with(t, "//")) continue;
    t = trim(t.substr(2));
    if (!starts_with(t, "@")) continue;
    size_t sp = t.find_first_of(" \t");
    std::string_view word = t.substr(0, sp);
    std::string_view rest = sp == std::string_view::npos ? std::string_view() : t.substr(sp);
    auto fields = split_fields(rest);
    if (!fields) return Error{at(file_name, line_no, fields.error().message)};
    if (word == "@launch") {
      auto l = launch_from(*fields);
      if (!l) return Error{at(file_name, line_no, l.error().message)};
      spec.launches.push_back(*l);
      spec.launch_lines.push_back(line_no);
    } else if (word == "@scratch") {
      auto s = scratch_from(*fields);
      if (!s) return Error{at(file_name, line_no, s.error().message)};
      s->line = line_no;
      spec.scratch.push_back(*s);
    } else if (word == "@tensormap") {
      auto tm = tensor_map_from(*fields);
      if (!tm) return Error{at(file_name, line_no, tm.error().message)};
      tm->line = line_no;
      spec.tensor_maps.push_back(*tm);
    } else {
      std::string guess = closest_match(word, {"@launch", "@scratch", "@tensormap"});
      return Error{at(file_name, line_no, fmt::format("unknown launch directive '{}'{}", word,
                                                      guess.empty() ? "" : "; did you mean '" + guess + "'?"))};
    }
  }
  if (spec.launches.empty())
    return Error{fmt::format("{}: no launch spec: add a line such as "
                             "`// @launch grid=(ceil_div(n,256),1,1) block=(256,1,1) smem=0`", file_name)};
  return spec;
}

Result<LaunchSpec> parse_launch_toml(std::string_view text, const std::string& file_name) {
  toml::table root;
  try {
    root = toml::parse(text, file_name);
  } catch (const toml::parse_error& e) {
    return Error{at(file_name, static_cast<int>(e.source().begin.line), std::string(e.description()))};
  }
  LaunchSpec spec;
  auto each = [&](const char* key, const std::function<Status(const Fields&, int)>& fn) -> Status {
    const toml::array* a = root[key].as_array();
    if (!a) return ok_status();
    for (auto& node : *a) {
      const toml::table* t = node.as_table();
      int line = static_cast<int>(node.source().begin.line);
      if (!t) return Error{at(file_name, line, fmt::format("[[{}]] must be a table", key))};
      Fields f;
      for (auto& [k, v] : *t) {
        if (auto s = v.value<std::string>()) f[std::string(k.str())] = *s;
        else if (auto i = v.value<int64_t>()) f[std::string(k.str())] = std::to_string(*i);
        else if (auto* arr = v.as_array()) {
          std::string joined = "(";
          for (auto& x : *arr) {
            if (joined.size() > 1) joined += ",";
            if (auto s = x.value<std::string>()) joined += *s;
            else if (auto i = x.value<int64_t>()) joined += std::to_string(*i);
          }
          f[std::string(k.str())] = joined + ")";
        }
      }
      if (auto s = fn(f, line); !s) return Error{at(file_name, line, s.error().message)};
    }
    return ok_status();
  };
  Status s = each("launch", [&](const Fields& f, int line) -> Status {
    auto l = launch_from(f);
    if (!l) return l.error();
    spec.launches.push_back(*l);
    spec.launch_lines.push_back(line);
    return ok_status();
  });
  if (s) s = each("scratch", [&](const Fields& f, int line) -> Status {
    auto sc = scratch_from(f);
    if (!sc) return sc.error();
    sc->line = line;
    spec.scratch.push_back(*sc);
    return ok_status();
  });
  if (s) s = each("tensor_map", [&](const Fields& f, int line) -> Status {
    auto tm = tensor_map_from(f);
    if (!tm) return tm.error();
    tm->line = line;
    spec.tensor_maps.push_back(*tm);
    return ok_status();
  });
  if (!s) return s.error();
  if (spec.launches.empty()) return Error{fmt::format("{}: no [[launch]] table", file_name)};
  return spec;
}

namespace {

const ptx::Function* find_entry(const ptx::Module& m, std::string_view name) {
  for (auto& item : m.items)
    if (auto* f = std::get_if<ptx::Function>(&item.node))
      if (f->is_entry && f->name == name && f->body) return f;
  return nullptr;
}

// Bytes of one .param declaration: `.param .u64 p` is 8, `.param .align 64 .b8 tm[128]` 128.
size_t param_size(const ptx::VarDecl& d, const ptx::Declarator& n) {
  static const std::map<std::string, size_t, std::less<>> sizes = {
      {".b8", 1}, {".u8", 1}, {".s8", 1}, {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2}, {".bf16", 2},
      {".b32", 4}, {".u32", 4}, {".s32", 4}, {".f32", 4}, {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}};
  auto it = sizes.find(d.type);
  size_t s = it == sizes.end() ? 0 : it->second;
  if (d.vec) s *= d.vec;
  for (auto& dim : n.dims) s *= dim.value_or(0);
  return s;
}

}  // namespace

Status check_launch_spec(LaunchSpec& spec, const Task& task, const ptx::Module& module, const std::string& file) {
  std::vector<std::string> entries;
  for (auto& item : module.items)
    if (auto* f = std::get_if<ptx::Function>(&item.node))
      if (f->is_entry && f->body) entries.emplace_back(f->name);
  for (auto& sc : spec.scratch) {
    if (task.find_param(sc.name)) return Error{at(file, sc.line, fmt::format("scratch '{}' has the name of a task parameter", sc.name))};
  }
  for (auto& tm : spec.tensor_maps) {
    const Param* p = task.find_param(tm.name);
    if (!p || p->kind != Param::tensor_map)
      return Error{at(file, tm.line, fmt::format("'{}' is not one of the task's tensor maps", tm.name))};
    if (tm.box.size() != p->dims.size())
      return Error{at(file, tm.line, fmt::format("box has {} dims, tensor map '{}' has {}", tm.box.size(), tm.name, p->dims.size()))};
  }
  for (auto& p : task.params) {
    if (p.kind != Param::tensor_map) continue;
    bool chosen = false;
    for (auto& tm : spec.tensor_maps) chosen = chosen || tm.name == p.name;
    if (!chosen) return Error{fmt::format("{}: the task passes tensor map '{}': add `// @tensormap name={} box=(...)`", file, p.name, p.name)};
  }
  for (size_t i = 0; i < spec.launches.size(); ++i) {
    Launch& l = spec.launches[i];
    int line = i < spec.launch_lines.size() ? spec.launch_lines[i] : 0;
    if (l.entry.empty()) l.entry = spec.launches.size() == 1 || entries.size() != 1 ? task.entry : entries[0];
    const ptx::Function* f = find_entry(module, l.entry);
    if (!f) {
      std::vector<std::string_view> names(entries.begin(), entries.end());
      std::string guess = closest_match(l.entry, names);
      return Error{at(file, line, fmt::format("the module has no .entry '{}'{}", l.entry,
                                              guess.empty() ? (entries.empty() ? "" : "; it defines " + entries[0])
                                                            : "; did you mean '" + guess + "'?"))};
    }
    if (l.args.empty())
      for (auto& p : task.params) l.args.push_back(p.name);
    size_t nparams = 0;
    for (auto& d : f->params) nparams += d.names.size();
    if (nparams != l.args.size())
      return Error{at(file, line, fmt::format(".entry {} takes {} parameter{}, the launch passes {} ({})", l.entry, nparams,
                                              nparams == 1 ? "" : "s", l.args.size(), fmt::join(l.args, ", ")))};
    size_t k = 0;
    for (auto& d : f->params) {
      for (auto& n : d.names) {
        const std::string& arg = l.args[k++];
        size_t want = 0;
        if (const Param* p = task.find_param(arg)) want = p->param_bytes();
        else {
          for (auto& sc : spec.scratch) want = sc.name == arg ? 8 : want;
          if (want == 0) {
            std::vector<std::string_view> names;
            for (auto& p : task.params) names.push_back(p.name);
            for (auto& sc : spec.scratch) names.push_back(sc.name);
            std::string guess = closest_match(arg, names);
            return Error{at(file, line, fmt::format("'{}' is neither a task parameter nor a scratch buffer{}", arg,
                                                    guess.empty() ? "" : "; did you mean '" + guess + "'?"))};
          }
        }
        size_t have = param_size(d, n);
        if (have != want)
          return Error{at(file, line, fmt::format("parameter {} of .entry {} ('{}') is {} bytes, but '{}' needs {}", k, l.entry,
                                                  n.name, have, arg, want))};
      }
    }
  }
  return ok_status();
}

}  // namespace ptxforge::task
