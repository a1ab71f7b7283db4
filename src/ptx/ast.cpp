#include "ptx/ast.h"

#include <charconv>

#include <algorithm>

namespace ptxforge::ptx {

std::vector<Text> section_lines(const Directive& d) {
  std::vector<Text> lines;
  for_each_section_line(d, [&](Text line) { lines.push_back(line); });
  return lines;
}

bool Directive::operator==(const Directive& o) const {
  if (name != o.name || args != o.args) return false;
  if (body.empty() || o.body.empty()) return body.empty() && o.body.empty();
  return section_lines(*this) == section_lines(o);
}

std::string Instruction::full_opcode() const {
  std::string s(opcode);
  for (auto& m : mods) s += m;
  return s;
}

std::string_view Instruction::spelling() const {
  const char* end = opcode.data() + opcode.size();
  for (auto& m : mods) {
    if (m.data() != end) return {};
    end += m.size();
  }
  return {opcode.data(), static_cast<size_t>(end - opcode.data())};
}

bool Instruction::has_mod(std::string_view m) const {
  for (auto& x : mods)
    if (x == m) return true;
  return false;
}

const Directive* Module::version() const {
  for (auto& it : items)
    if (auto* d = std::get_if<Directive>(&it.node); d && d->name == ".version") return d;
  return nullptr;
}

const Directive* Module::target() const {
  for (auto& it : items)
    if (auto* d = std::get_if<Directive>(&it.node); d && d->name == ".target") return d;
  return nullptr;
}

std::string Module::version_text() const {
  auto* v = version();
  return v && !v->args.empty() ? std::string(v->args[0]) : "";
}

std::vector<std::string> Module::target_names() const {
  std::vector<std::string> out;
  if (auto* t = target())
    for (auto& a : t->args)
      if (a != ",") out.emplace_back(a);
  return out;
}

bool Module::targets_debug() const {
  auto names = target_names();
  return std::find(names.begin(), names.end(), "debug") != names.end();
}

List<Text> Module::keep_words(const std::vector<std::string>& words) {
  std::vector<Text> kept;
  for (auto& w : words) kept.push_back(keep(w));
  return keep(kept);
}

std::optional<uint64_t> integer_literal_value(std::string_view t) {
  if (!t.empty() && (t.back() == 'U' || t.back() == 'u')) t.remove_suffix(1);
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) base = 16, t.remove_prefix(2);
  else if (t.size() > 2 && t[0] == '0' && (t[1] == 'b' || t[1] == 'B')) base = 2, t.remove_prefix(2);
  else if (t.size() > 1 && t[0] == '0') base = 8, t.remove_prefix(1);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

}  // namespace ptxforge::ptx
