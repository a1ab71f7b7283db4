#include "ptx/rewrite.h"

#include <fmt/format.h>

#include "ptx/isa.h"

namespace ptxforge::ptx {

namespace {

template <typename F>
void for_each_instruction(const Module& m, F&& f) {
  for (auto& it : m.items)
    if (auto* fn = std::get_if<Function>(&it.node); fn && fn->body)
      for_each_statement(*fn->body, [&](const Statement& s) {
        if (auto* ins = s.get_if<Instruction>()) f(*ins);
      });
}

Directive* find_directive(Module& m, std::string_view name) {
  for (auto& it : m.items)
    if (auto* d = std::get_if<Directive>(&it.node); d && d->name == name) return d;
  return nullptr;
}

// Puts a header directive where it belongs: .version first, .target second, .address_size third.
void set_directive(Module& m, std::string_view name, const std::vector<std::string>& args) {
  List<Text> words = m.keep_words(args);
  if (Directive* d = find_directive(m, name)) {
    d->args = words;
    return;
  }
  size_t pos = 0;
  if (name != ".version")
    for (size_t i = 0; i < m.items.size(); ++i)
      if (auto* d = std::get_if<Directive>(&m.items[i].node);
          d && (d->name == ".version" || (name == ".address_size" && d->name == ".target")))
        pos = i + 1;
  std::vector<TopItem> items(m.items.begin(), m.items.end());
  items.insert(items.begin() + static_cast<std::ptrdiff_t>(pos), TopItem{Directive{m.keep(name), words, {}, {}, {}}});
  m.items = m.keep(items);
}

}  // namespace

BodyNeeds body_needs(const Module& m) {
  BodyNeeds needs;
  std::optional<Target> exact;
  for_each_instruction(m, [&](const Instruction& ins) {
    for (auto& r : requirements_of(ins)) {
      needs.ptx = std::max(needs.ptx, r.ptx);
      if (r.target.suffix) exact = exact ? std::max(*exact, r.target) : r.target;
      else needs.target.sm = std::max(needs.target.sm, r.target.sm);
    }
  });
  if (exact && exact->sm >= needs.target.sm) needs.target = *exact;
  return needs;
}

bool rewrite_header(Module& m, const HeaderChange& change, Diagnostics& diags) {
  bool had_version = m.version() != nullptr, had_target = m.target() != nullptr;
  BodyNeeds needs = body_needs(m);
  std::string target_name;
  if (change.target) {
    target_name = *change.target;
  } else if (had_target) {
    auto names = m.target_names();
    target_name = names.empty() ? "" : names[0];
  } else if (change.add_header) {
    Target t = needs.target;
    if (!t.suffix && t.sm < 75) t.sm = 75;  // the oldest architecture CUDA 13's ptxas accepts
    target_name = t.str();
  }
  auto target = Target::parse(target_name);
  if (!target || !min_version_for(*target)) {
    diags.error({}, fmt::format("unknown target '{}'", target_name), "bad-target").hint =
        "targets look like sm_80, sm_90, sm_90a, sm_100a";
    return false;
  }
  PtxVersion version = needs.ptx;
  if (change.version) {
    auto v = PtxVersion::parse(*change.version);
    if (!v || *v > kNewestPtx) {
      diags.error({}, fmt::format("'{}' is not a supported PTX ISA version", *change.version), "bad-version").hint =
          fmt::format("versions run up to {}", kNewestPtx.str());
      return false;
    }
    version = *v;
  } else if (had_version && !change.target) {
    version = PtxVersion::parse(m.version_text()).value_or(needs.ptx);
  } else if (had_version) {
    version = std::max(PtxVersion::parse(m.version_text()).value_or(needs.ptx), *min_version_for(*target));
  } else {
    version = std::max(needs.ptx, *min_version_for(*target));
  }
  bool ok = true;
  if (version < *min_version_for(*target)) {
    auto& d = diags.error({}, fmt::format(".target {} needs .version {} or later, not {}", target->str(),
                                          min_version_for(*target)->str(), version.str()), "version-target");
    d.hint = "pick a newer --ptx-version or an older --retarget";
    ok = false;
  }
  for_each_instruction(m, [&](const Instruction& ins) {
    for (auto& r : requirements_of(ins)) {
      if (version < r.ptx) {
        auto& d = diags.error(ins.loc, fmt::format("'{}' needs .version {} or later", r.what, r.ptx.str()),
                              "needs-version");
        d.length = static_cast<uint32_t>(ins.full_opcode().size());
        ok = false;
      }
      if (!r.met_by(*target)) {
        auto& d = diags.error(ins.loc, fmt::format("'{}' is not available on {} (needs {})", r.what, target->str(),
                                                   r.targets_text()), "needs-target");
        d.length = static_cast<uint32_t>(ins.full_opcode().size());
        ok = false;
      }
    }
  });
  if (!ok) return false;
  if (!change.add_header || !had_version || change.version || change.target)
    set_directive(m, ".version", {version.str()});
  if (!change.add_header || !had_target || change.target) {
    std::vector<std::string> args{target->str()};
    if (had_target) {
      // Keep options such as "debug" or texmode_* that follow the architecture.
      auto names = m.target_names();
      for (size_t i = 1; i < names.size(); ++i) args.push_back(names[i]);
    }
    set_directive(m, ".target", args);
  }
  if (!find_directive(m, ".address_size")) set_directive(m, ".address_size", {"64"});
  return true;
}

}  // namespace ptxforge::ptx
