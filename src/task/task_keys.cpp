#include "task/task_keys.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "task/baselines.h"
#include "util/text.h"

namespace ptxforge::task {

namespace {

using Keys = std::vector<std::string_view>;

const Keys kTop = {"name",      "level",     "description", "tags",     "entry",     "min_target",
                   "time_budget_s", "required_instructions", "sanitize_sizes", "cpu_sizes", "param", "sizes", "reference",
                   "tolerance", "roofline",  "baseline", "min_executed", "min_work", "device_heap_bytes"};
const Keys kBuffer = {"name", "kind", "dtype", "count", "role", "init", "shape"};
const Keys kScalar = {"name", "kind", "dtype", "value"};
const Keys kTensorMap = {"name", "kind", "over", "dims", "strides"};
const Keys kReference = {"entry", "grid", "block", "smem", "cluster"};
const Keys kTolerance = {"rtol", "atol", "min_match"};
const Keys kRoofline = {"bytes", "flops", "tensor_cores"};
const Keys kSizeSet = {"name", "shown", "init"};

bool contains(const Keys& keys, std::string_view k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); }

void unknown(const toml::key& k, const Keys& known, std::string_view where, Diagnostics& diags, std::string extra = "") {
  std::string guess = closest_match(k.str(), known);
  diags.error(key_loc(k),
              fmt::format("unknown key '{}' in {}{}{}", k.str(), where,
                          guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess),
                          extra.empty() ? fmt::format(" (known: {})", fmt::join(known, ", ")) : extra),
              "task");
}

void check_table(const toml::table& t, const Keys& known, std::string_view where, Diagnostics& diags) {
  for (auto& [k, v] : t)
    if (!contains(known, k.str())) unknown(k, known, where, diags);
}

void check_param(const toml::table& t, Diagnostics& diags) {
  std::string kind = "buffer";
  if (auto s = t["kind"].value<std::string>()) kind = *s;
  const Keys* known = kind == "scalar" ? &kScalar : kind == "tensor_map" ? &kTensorMap : kind == "buffer" ? &kBuffer : nullptr;
  if (!known) return;  // an unknown kind is reported where the kind is read
  std::string where = fmt::format("a {} [[param]]", kind);
  for (auto& [k, v] : t) {
    if (contains(*known, k.str())) continue;
    std::string owner;
    for (auto [name, keys] : {std::pair{"buffer", &kBuffer}, {"scalar", &kScalar}, {"tensor_map", &kTensorMap}})
      if (contains(*keys, k.str())) owner = owner.empty() ? name : owner;
    if (!owner.empty())
      diags.error(key_loc(k), fmt::format("'{}' is not a key of a {} parameter (it belongs to kind = \"{}\")", k.str(), kind, owner),
                  "task");
    else
      unknown(k, *known, where, diags);
  }
}

}  // namespace

SourceLoc key_loc(const toml::key& k) {
  auto b = k.source().begin;
  return {static_cast<uint32_t>(b.line), static_cast<uint32_t>(b.column)};
}

const std::vector<std::string_view>& size_set_keys() { return kSizeSet; }

void check_task_keys(const toml::table& root, Diagnostics& diags) {
  check_table(root, kTop, "the task (top level)", diags);
  if (auto* params = root["param"].as_array())
    for (auto& p : *params)
      if (auto* t = p.as_table()) check_param(*t, diags);
  if (auto* t = root["reference"].as_table()) check_table(*t, kReference, "[reference]", diags);
  if (auto* t = root["roofline"].as_table()) check_table(*t, kRoofline, "[roofline]", diags);
  if (auto* t = root["tolerance"].as_table()) {
    for (auto& [k, v] : *t) {
      if (auto* sub = v.as_table()) check_table(*sub, kTolerance, fmt::format("[tolerance.{}]", k.str()), diags);
      else if (!contains(kTolerance, k.str()))
        unknown(k, kTolerance, "[tolerance]", diags, " (known: rtol, atol, min_match, or a table [tolerance.<output>])");
    }
  }
  if (auto* t = root["baseline"].as_table()) {
    std::string library = t->get("library") ? t->get("library")->value_or<std::string>("") : "";
    if (const BaselineSpec* spec = find_baseline(library)) {
      check_table(*t, spec->keys, fmt::format("[baseline] for {}", library), diags);
      for (auto k : spec->keys)
        if (!t->contains(k) && !spec->is_optional(k))
          diags.error({static_cast<uint32_t>(t->source().begin.line), 1},
                      fmt::format("[baseline] for {} needs '{}'", library, k), "task");
    }
  }
}

}  // namespace ptxforge::task
