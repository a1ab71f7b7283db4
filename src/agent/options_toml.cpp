#include "agent/options_toml.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/text.h"

namespace ptxforge::agent {

namespace {

// The value as the command line would spell it, when its TOML type suits the option's kind.
Result<std::string> value_text(const toml::node& n, const OptionRow& row) {
  auto number_text = [](const toml::node& v) -> std::optional<std::string> {
    if (auto i = v.value_exact<int64_t>()) return std::to_string(*i);
    if (auto d = v.value_exact<double>()) return fmt::format("{}", *d);
    return std::nullopt;
  };
  switch (row.kind) {
    case ValueKind::text:  // a number stands for its text: target_speedup = 1.2
      if (auto s = n.value_exact<std::string>()) return *s;
      if (auto t = number_text(n)) return *t;
      return Error{fmt::format("'{}' must be a string", row.bench_key)};
    case ValueKind::integer:
      if (auto i = n.value_exact<int64_t>()) return std::to_string(*i);
      return Error{fmt::format("'{}' must be a whole number", row.bench_key)};
    case ValueKind::number:
      if (auto t = number_text(n)) return *t;
      return Error{fmt::format("'{}' must be a number", row.bench_key)};
    case ValueKind::boolean:
      if (auto b = n.value_exact<bool>()) return std::string(*b ? "true" : "false");
      return Error{fmt::format("'{}' must be true or false", row.bench_key)};
    case ValueKind::number_pair:
      if (const toml::array* a = n.as_array()) {
        std::string out;
        for (auto& e : *a) {
          auto t = number_text(e);
          if (!t) return Error{fmt::format("'{}' must be a list of numbers", row.bench_key)};
          out += (out.empty() ? "" : ",") + *t;
        }
        return out;
      }
      return Error{fmt::format("'{}' must be a list of two numbers", row.bench_key)};
  }
  return Error{"unreachable"};
}

const OptionRow* row_at(BenchPlace place, std::string_view key) {
  for (auto& r : option_rows())
    if (r.bench_place == place && r.bench_key == key) return &r;
  return nullptr;
}

}  // namespace

std::vector<std::string_view> toml_keys(BenchPlace place, const std::vector<std::string_view>& own) {
  std::vector<std::string_view> keys = own;
  for (auto& r : option_rows())
    if (r.bench_place == place && !r.bench_key.empty()) keys.push_back(r.bench_key);
  return keys;
}

std::vector<TomlProblem> read_toml_options(const toml::table& table, BenchPlace place, const std::vector<std::string_view>& own,
                                           std::string_view section, CompileOptions& o) {
  std::vector<TomlProblem> problems;
  for (auto& [k, node] : table) {
    std::string_view key = k.str();
    if (std::find(own.begin(), own.end(), key) != own.end()) continue;
    const OptionRow* row = row_at(place, key);
    if (!row) {
      std::vector<std::string_view> known = toml_keys(place, own);
      std::string guess = closest_match(key, known);
      std::string in = section.empty() ? "" : fmt::format(" in {}", section);
      if (!guess.empty()) {
        problems.push_back({&node, fmt::format("unknown key '{}'{}; did you mean '{}'", key, in, guess)});
      } else {
        std::sort(known.begin(), known.end());
        std::string list;
        for (auto& n : known) list += (list.empty() ? "" : ", ") + std::string(n);
        problems.push_back({&node, fmt::format("unknown key '{}'{} (known: {})", key, in, list)});
      }
      continue;
    }
    auto text = value_text(node, *row);
    if (!text) {
      problems.push_back({&node, text.error().message});
      continue;
    }
    if (auto st = row->parse(o, *text, key); !st) problems.push_back({&node, st.error().message});
    else if (auto r = check_range(*row, o, key); !r) problems.push_back({&node, r.error().message});
  }
  return problems;
}

}  // namespace ptxforge::agent
