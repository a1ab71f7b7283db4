// Lookups over the instruction table: family by opcode and modifiers, type facts, modifier
// patterns and operand forms.
#include "ptx/isa.h"

#include <cassert>
#include <unordered_map>
#include <unordered_set>

#include "util/flat_map.h"
#include "util/text.h"

namespace ptxforge::ptx {

std::string manual_link(std::string_view anchor) { return std::string(kManualBase) + "#" + std::string(anchor); }

namespace {
// The table's strings split once, so checking an instruction never re-parses them.
struct FamilyRules {
  std::unordered_set<std::string_view> exact;  // types, modifiers and the words of the name
  std::vector<std::string_view> prefixes;      // "x*" patterns, without the '*'
  std::vector<std::vector<std::string_view>> forms;
  std::vector<const IsaOverride*> overrides;
  std::vector<Target> min_targets;
  bool type_required = false;
};

struct Index {
  std::unordered_map<std::string_view, const IsaFamily*> by_name;
  std::unordered_set<std::string_view> opcodes;
  std::vector<std::string_view> opcode_list;
  std::vector<FamilyRules> rules;  // parallel to isa_families()
  size_t max_parts = 1;
};

// The table's overrides by family, each family's in table order.
using OverridesByFamily = std::unordered_map<std::string_view, std::vector<const IsaOverride*>>;

FamilyRules rules_for(const IsaFamily& f, const OverridesByFamily& overrides) {
  FamilyRules r;
  for (auto t : split(f.types, ' '))
    if (!t.empty()) r.exact.insert(t);
  if (f.modifiers != "*")
    for (auto m : split(f.modifiers, ' ')) {
      if (m.empty()) continue;
      if (m.back() == '*') r.prefixes.push_back(m.substr(0, m.size() - 1));
      else r.exact.insert(m);
    }
  // A word of the family's own name may also stand later: match.any.sync is family match.sync.
  for (size_t pos = f.name.find('.'); pos != std::string_view::npos; pos = f.name.find('.', pos + 1))
    r.exact.insert(f.name.substr(pos, f.name.find('.', pos + 1) - pos));
  for (auto form : split(f.operands, '|')) {
    std::vector<std::string_view> kinds;
    if (!form.empty())
      for (auto k : split(form, ',')) kinds.push_back(k);
    r.forms.push_back(std::move(kinds));
  }
  if (auto it = overrides.find(f.name); it != overrides.end()) r.overrides = it->second;
  r.min_targets = parse_target_list(f.min_target);
  // The example's opcode names a type: the family takes none without it.
  if (f.detailed && !f.types.empty()) {
    std::string_view ex = f.example.substr(0, f.example.find_first_of(" \t"));
    for (size_t pos = ex.find('.'); pos != std::string_view::npos && !r.type_required; pos = ex.find('.', pos + 1))
      r.type_required = is_type_name(ex.substr(pos, ex.find('.', pos + 1) - pos));
  }
  return r;
}

// Built at the first lookup, and never destroyed: a `check` process is short, and freeing the
// table's thousands of nodes at exit cost about as much as building it.
const Index& index() {
  static const Index& idx = *new Index([] {
    Index i;
    OverridesByFamily overrides;
    for (auto& o : isa_overrides()) overrides[o.family].push_back(&o);
    i.rules.reserve(isa_families().size());
    for (auto& f : isa_families()) {
      i.rules.push_back(rules_for(f, overrides));
      i.by_name.emplace(f.name, &f);
      std::string_view op = f.name.substr(0, f.name.find('.'));
      if (i.opcodes.insert(op).second) i.opcode_list.push_back(op);
      size_t parts = 1;
      for (char c : f.name) parts += c == '.';
      i.max_parts = std::max(i.max_parts, parts);
    }
    return i;
  }());
  return idx;
}

const FamilyRules& rules_of(const IsaFamily& f) {
  const auto& fams = isa_families();
  assert(&f >= fams.data() && &f < fams.data() + fams.size());
  return index().rules[static_cast<size_t>(&f - fams.data())];
}
}  // namespace

const IsaFamily* find_family(std::string_view opcode, const List<Text>& mods, size_t* consumed) {
  const Index& idx = index();
  // Longest first: "cp" + .async.bulk.tensor before "cp" + .async.
  size_t max_mods = std::min(mods.size(), idx.max_parts - 1);
  std::string name(opcode);
  size_t ends[8] = {name.size()};
  for (size_t i = 0; i < max_mods && i + 1 < 8; ++i) {
    name += mods[i];
    ends[i + 1] = name.size();
  }
  max_mods = std::min<size_t>(max_mods, 7);
  for (size_t n = max_mods + 1; n-- > 1;) {
    auto it = idx.by_name.find(std::string_view(name).substr(0, ends[n]));
    if (it != idx.by_name.end()) {
      if (consumed) *consumed = n;
      return it->second;
    }
    // A family word with a sub-qualifier, "tcgen05.fence::before_thread_sync": the family is the
    // part before '::', and the whole word stays a modifier for the family to allow.
    std::string_view last = std::string_view(name).substr(ends[n - 1], ends[n] - ends[n - 1]);
    if (size_t colons = last.find("::"); colons != std::string_view::npos) {
      it = idx.by_name.find(std::string_view(name).substr(0, ends[n - 1] + colons));
      if (it != idx.by_name.end()) {
        if (consumed) *consumed = n - 1;
        return it->second;
      }
    }
  }
  // Modifiers may come in any order before the family's distinguishing word: "match.any.sync",
  // "mbarrier.arrive.expect_tx", "vote.ballot.sync" (nvcc's own spelling). Opcode + any one
  // later modifier is a closer match than the bare opcode ("vote" is the pre-6.4 form).
  for (size_t i = 1; i < mods.size(); ++i) {
    auto it = idx.by_name.find(std::string(opcode) + std::string(mods[i]));
    if (it != idx.by_name.end()) {
      if (consumed) *consumed = 0;  // the modifier stays in place and is allowed by the family
      return it->second;
    }
  }
  auto it = idx.by_name.find(opcode);
  if (it == idx.by_name.end()) return nullptr;
  if (consumed) *consumed = 0;
  return it->second;
}

namespace {
// Whether `ins`'s modifiers from `i` on spell `mods`: one modifier (".bf16") or a run of them
// (".shared::cta.global": a destination space followed by its source).
bool modifiers_at(const Instruction& ins, size_t i, std::string_view mods) {
  while (!mods.empty()) {
    size_t next = mods.find('.', 1);
    std::string_view one = mods.substr(0, next);
    if (i >= ins.mods.size() || ins.mods[i] != one) return false;
    ++i;
    mods = next == std::string_view::npos ? std::string_view{} : mods.substr(next);
  }
  return true;
}

// The requirements `ins` adds to its family's own: forms and modifiers with rows of their own.
// Appends them to `out`, or, when `out` is null, only says whether there are any.
bool extra_requirements(const Instruction& ins, const IsaFamily& f, const FamilyRules& rules, size_t consumed,
                        std::vector<IsaRequirement>* out) {
  bool any = false;
  // Forms rather than modifiers: three-input min/max (PTX 8.8, sm_100; confirmed with ptxas).
  if ((f.name == "min" || f.name == "max") && ins.operands.size() == 4) {
    if (!out) return true;
    any = true;
    out->push_back({{8, 8}, Target{100, 0}, {Target{100, 0}}, {std::nullopt}, std::string(f.name) + " with three inputs"});
  }
  for (const IsaOverride* o : rules.overrides) {
    for (size_t i = consumed; i < ins.mods.size(); ++i)
      if (modifiers_at(ins, i, o->modifier)) {
        if (!out) return true;
        any = true;
        auto targets = parse_target_list(o->min_target);
        // Name the instruction as written ("fence.proxy.async.shared::cta"), not family+modifier.
        out->push_back({o->min_ptx, targets.front(), targets, parse_target_versions(o->min_target), ins.full_opcode()});
        break;
      }
  }
  return any;
}
}  // namespace

std::vector<IsaRequirement> requirements_of(const Instruction& ins) {
  std::vector<IsaRequirement> reqs;
  size_t consumed = 0;
  const IsaFamily* f = find_family(ins.opcode, ins.mods, &consumed);
  if (!f) return reqs;
  const FamilyRules& rules = rules_of(*f);
  reqs.push_back({f->min_ptx, rules.min_targets.front(), rules.min_targets, parse_target_versions(f->min_target),
                  std::string(f->name)});
  extra_requirements(ins, *f, rules, consumed, &reqs);
  return reqs;
}

bool meets_requirements(const Instruction& ins, const IsaFamily& f, size_t consumed,
                        const std::optional<PtxVersion>& version, const std::vector<Target>& targets) {
  const FamilyRules& rules = rules_of(f);
  if (extra_requirements(ins, f, rules, consumed, nullptr)) return false;  // requirements_of weighs them
  if (version && *version < f.min_ptx) return false;
  for (auto& have : targets) {
    bool met = false;
    for (auto& need : rules.min_targets) met = met || satisfies(have, need);
    if (!met) return false;
  }
  return true;
}

std::vector<Target> parse_target_list(std::string_view s) {
  std::vector<Target> out;
  for (auto part : split(s, '|')) {
    auto t = Target::parse(part.substr(0, part.find('@')));
    assert(t && "the ISA table names a target that does not parse");
    out.push_back(*t);
  }
  return out;
}

std::vector<std::optional<PtxVersion>> parse_target_versions(std::string_view s) {
  std::vector<std::optional<PtxVersion>> out;
  for (auto part : split(s, '|')) {
    size_t at = part.find('@');
    std::optional<PtxVersion> v;
    if (at != std::string_view::npos) {
      v = PtxVersion::parse(part.substr(at + 1));
      assert(v && "the ISA table names a version that does not parse");
    }
    out.push_back(v);
  }
  return out;
}

PtxVersion IsaRequirement::ptx_on(const Target& have) const {
  std::optional<PtxVersion> best;
  for (size_t i = 0; i < any_of.size(); ++i) {
    if (!satisfies(have, any_of[i])) continue;
    PtxVersion v = i < any_of_ptx.size() && any_of_ptx[i] ? std::max(ptx, *any_of_ptx[i]) : ptx;
    if (!best || v < *best) best = v;
  }
  return best ? *best : ptx;
}

bool IsaRequirement::met_by(const Target& have) const {
  for (auto& t : any_of)
    if (satisfies(have, t)) return true;
  return false;
}

std::string IsaRequirement::targets_text() const {
  std::string s;
  for (size_t i = 0; i < any_of.size(); ++i) s += (i ? " or " : "") + any_of[i].str();
  return s;
}

bool is_known_opcode(std::string_view opcode) { return index().opcodes.count(opcode) > 0; }

std::vector<std::string_view> all_opcodes() { return index().opcode_list; }

namespace {
struct TypeInfo {
  int bits;
  char kind;
};
struct TypeEntry {
  std::string_view name;
  TypeInfo info;
};
constexpr TypeEntry kTypes[] = {
      {".pred", {1, 'p'}},    {".b8", {8, 'b'}},      {".b16", {16, 'b'}},     {".b32", {32, 'b'}},
      {".b64", {64, 'b'}},    {".b128", {128, 'b'}},  {".u8", {8, 'u'}},       {".u16", {16, 'u'}},
      {".u32", {32, 'u'}},    {".u64", {64, 'u'}},    {".s8", {8, 's'}},       {".s16", {16, 's'}},
      {".s32", {32, 's'}},    {".s64", {64, 's'}},    {".f16", {16, 'f'}},     {".f16x2", {32, 'f'}},
      {".f32", {32, 'f'}},    {".f64", {64, 'f'}},    {".bf16", {16, 'f'}},    {".bf16x2", {32, 'f'}},
      {".f32x2", {64, 'f'}},  {".tf32", {32, 'f'}},   {".u16x2", {32, 'u'}},   {".s16x2", {32, 's'}},
      {".e4m3", {8, 'f'}},    {".e5m2", {8, 'f'}},    {".e4m3x2", {16, 'f'}},  {".e5m2x2", {16, 'f'}},
      {".e2m1x2", {8, 'f'}},  {".e2m3x2", {16, 'f'}}, {".e3m2x2", {16, 'f'}},  {".ue8m0x2", {16, 'f'}},
      {".e4m3x4", {32, 'f'}}, {".e5m2x4", {32, 'f'}}, {".e2m1x4", {16, 'f'}},  {".e2m3x4", {32, 'f'}},
      {".e3m2x4", {32, 'f'}}, {".s2f6x2", {16, 'f'}}, {".u2", {2, 'u'}},       {".s2", {2, 's'}},
      {".u4", {4, 'u'}},      {".s4", {4, 's'}},      {".b1", {1, 'b'}},       {".e3m2", {8, 'f'}},
      {".e2m3", {8, 'f'}},    {".e2m1", {4, 'f'}},    {".texref", {64, 'o'}},  {".samplerref", {64, 'o'}},
      {".surfref", {64, 'o'}},
};

// .b8 .. .b128, .u8 .. .u64, .s8 .. .s64, .f16 .. .f64 and .pred: most of the types asked
// about, read off the spelling without a lookup.
inline const TypeInfo* plain_scalar(std::string_view t) {
  static constexpr TypeInfo kPlain[4][5] = {
      {{8, 'b'}, {16, 'b'}, {32, 'b'}, {64, 'b'}, {128, 'b'}},
      {{8, 'u'}, {16, 'u'}, {32, 'u'}, {64, 'u'}, {0, 0}},
      {{8, 's'}, {16, 's'}, {32, 's'}, {64, 's'}, {0, 0}},
      {{0, 0}, {16, 'f'}, {32, 'f'}, {64, 'f'}, {0, 0}},
  };
  static constexpr TypeInfo kPred{1, 'p'};
  if (t.size() < 3 || t.size() > 5 || t[0] != '.') return nullptr;
  int k = t[1] == 'b' ? 0 : t[1] == 'u' ? 1 : t[1] == 's' ? 2 : t[1] == 'f' ? 3 : -1;
  int wi = -1;
  switch (t.size()) {
    case 3: wi = t[2] == '8' ? 0 : -1; break;
    case 4: {
      char a = t[2], b = t[3];
      wi = a == '1' && b == '6' ? 1 : a == '3' && b == '2' ? 2 : a == '6' && b == '4' ? 3 : -1;
      break;
    }
    default:
      if (t[1] == 'p' && t[2] == 'r' && t[3] == 'e' && t[4] == 'd') return &kPred;
      wi = t[2] == '1' && t[3] == '2' && t[4] == '8' ? 4 : -1;
      break;
  }
  if (k < 0 || wi < 0 || kPlain[k][wi].bits == 0) return nullptr;
  return &kPlain[k][wi];
}

// The types other than the plain scalars, and names that are no type.
const TypeInfo* other_type(std::string_view type) {
  static const auto others = [] {
    FlatMap<std::string_view, const TypeInfo*> m;
    for (auto& e : kTypes) m.emplace(e.name, &e.info);
    return m;
  }();
  auto it = others.find(type);
  return it == others.end() ? nullptr : it->second;
}

// The validator asks about types several times per operand; most are plain scalars, decoded
// in line.
inline const TypeInfo* find_type(std::string_view type) {
  const TypeInfo* plain = plain_scalar(type);
  return plain ? plain : other_type(type);
}
}  // namespace

bool is_type_name(std::string_view mod) { return find_type(mod) != nullptr; }

TypeFacts type_facts(std::string_view type) {
  const TypeInfo* t = find_type(type);
  return t ? TypeFacts{t->bits, t->kind} : TypeFacts{};
}

int type_bits(std::string_view type) { return type_facts(type).bits; }

char type_kind(std::string_view type) { return type_facts(type).kind; }

bool family_allows_modifier(const IsaFamily& f, std::string_view mod) {
  if (f.modifiers == "*") return true;
  const FamilyRules& r = rules_of(f);
  if (r.exact.count(mod)) return true;
  for (auto p : r.prefixes)
    if (starts_with(mod, p)) return true;
  return false;
}

const std::vector<std::vector<std::string_view>>& operand_forms(const IsaFamily& f) { return rules_of(f).forms; }

bool family_requires_type(const IsaFamily& f) { return rules_of(f).type_required; }

}  // namespace ptxforge::ptx
