#include "agent/options_cli.h"

#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace ptxforge::agent {

std::vector<Option> cli_options() {
  std::vector<Option> out;
  for (auto& r : option_rows())
    if (r.cli_form != CliForm::none) out.push_back(r.id);
  return out;
}

namespace {
// What the help shows for the value (the slot itself is text, read by the row).
std::string type_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::integer: return "INT";
    case ValueKind::number: return "FLOAT";
    case ValueKind::number_pair: return "IN,OUT";
    case ValueKind::boolean: return "BOOL";
    case ValueKind::text: break;
  }
  return "TEXT";
}
}  // namespace

CliOptions::CliOptions(CLI::App& app, const std::vector<Option>& which, CompileOptions start) : start_(std::move(start)) {
  std::vector<std::string> parts;
  for (Option id : which) {
    const OptionRow& row = option_row(id);
    std::string name(row.cli), help(row.help);
    switch (row.cli_form) {
      case CliForm::none:
        break;
      case CliForm::value: {
        Slot& s = slots_.emplace_back();
        s.row = &row;
        s.opt = app.add_option(name, s.text, help)->type_name(type_name(row.kind));
        if (std::string d = row.text(start_); !d.empty()) s.opt->default_str(d);
        break;
      }
      case CliForm::flag_sets:
      case CliForm::flag_clears: {
        Slot& s = slots_.emplace_back();
        s.row = &row;
        s.opt = app.add_flag(name, s.set, help);
        break;
      }
      case CliForm::omit_part:
        parts.push_back(name);
        break;
    }
  }
  if (!parts.empty()) {
    std::string list;
    for (auto& p : parts) list += (list.empty() ? "" : ", ") + p;
    omit_opt_ = app.add_option("--omit", omit_, fmt::format("leave a prompt part out, for ablations: {} (repeatable)", list))
                    ->check(CLI::IsMember(parts));
  }
}

Result<CompileOptions> CliOptions::apply() const {
  CompileOptions o = start_;
  for (const Slot& s : slots_) {
    if (s.opt->count() == 0) continue;
    const OptionRow& row = *s.row;
    Status st = row.cli_form == CliForm::value ? row.parse(o, s.text, row.cli)
                                               : row.parse(o, row.cli_form == CliForm::flag_sets ? "true" : "false", row.cli);
    if (!st) return st.error();
    if (auto r = check_range(row, o, row.cli); !r) return r.error();
  }
  for (auto& part : omit_)
    for (auto& row : option_rows())
      if (row.cli_form == CliForm::omit_part && row.cli == part)
        if (auto st = row.parse(o, "false", "--omit"); !st) return st.error();
  return o;
}

bool CliOptions::given(Option id) const {
  for (const Slot& s : slots_)
    if (s.row->id == id) return s.opt->count() > 0;
  const OptionRow& row = option_row(id);
  return row.cli_form == CliForm::omit_part && std::find(omit_.begin(), omit_.end(), row.cli) != omit_.end();
}

CLI::Option* CliOptions::flag(Option id) const {
  for (const Slot& s : slots_)
    if (s.row->id == id) return s.opt;
  return option_row(id).cli_form == CliForm::omit_part ? omit_opt_ : nullptr;
}

}  // namespace ptxforge::agent
