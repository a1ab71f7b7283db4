#include "ptx/symbols.h"

#include <charconv>

namespace ptxforge::ptx {

namespace {
// ptxas splits a register name into the part before its trailing digits and their number:
// %q03 is number 3 of %q (it clashes with %q<5>), while %q12 is not in %q1<5> (prefix %q1).
struct NumberedName {
  std::string_view prefix;
  uint64_t number = 0;
  bool ok = false;
};
NumberedName split_number(std::string_view name) {
  size_t at = name.size();
  while (at > 0 && name[at - 1] >= '0' && name[at - 1] <= '9') --at;
  NumberedName n;
  if (at == name.size() || name.size() - at > 9) return n;
  n.prefix = name.substr(0, at);
  std::from_chars(name.data() + at, name.data() + name.size(), n.number);
  n.ok = true;
  return n;
}
}  // namespace

const SymbolInfo* Scope::add(std::string_view name, SymbolInfo info) {
  auto [it, inserted] = names_.emplace(name, info);
  if (!inserted) return &it->second;
  NumberedName n = split_number(name);
  if (n.ok)
    for (auto& r : ranges_)
      if (r.prefix == n.prefix && n.number < r.count) return &r.info;
  return nullptr;
}

const SymbolInfo* Scope::add_range(std::string_view prefix, uint32_t count, SymbolInfo info) {
  // A second range of the same prefix clashes whatever the counts (ptxas: "Duplicate
  // definition of variable '%r<'"), and so does an earlier %r3 inside the new range; an
  // earlier %r0 does not (ptxas 13.0 accepts '.reg .b32 %r0; .reg .b32 %r<4>;').
  ranges_.reserve(ranges_.size() + 1);  // the push below must not move the clash we return
  const SymbolInfo* clash = nullptr;
  for (auto& r : ranges_)
    if (r.prefix == prefix) clash = &r.info;
  if (!clash)
    for (auto& [name, earlier] : names_) {
      NumberedName n = split_number(name);
      if (n.ok && n.prefix == prefix && n.number > 0 && n.number < count) {
        clash = &earlier;
        break;
      }
    }
  ranges_.push_back({prefix, count, info});
  return clash;
}

const SymbolInfo* Scope::find(std::string_view name) const {
  if (!names_.empty())
    if (auto it = names_.find(name); it != names_.end()) return &it->second;
  if (ranges_.empty()) return nullptr;
  // %r12: the prefix %r and the number 12, read from the end in one pass.
  size_t at = name.size();
  uint64_t idx = 0, scale = 1;
  while (at > 0 && name[at - 1] >= '0' && name[at - 1] <= '9') {
    if (name.size() - at == 9) return nullptr;  // more than 9 digits: in no range
    idx += static_cast<uint64_t>(name[at - 1] - '0') * scale;
    scale *= 10;
    --at;
  }
  size_t digits = name.size() - at;
  if (digits == 0) return nullptr;
  if (digits > 1 && name[at] == '0') return nullptr;  // %r01 is not in %r<N>
  std::string_view prefix = name.substr(0, at);
  for (auto& r : ranges_)
    if (flat_key_equal(r.prefix, prefix) && idx < r.count) return &r.info;
  return nullptr;
}

const SymbolInfo* ScopeStack::find(std::string_view name) const {
  Recent& r = recent_[(reinterpret_cast<uintptr_t>(name.data()) ^ name.size()) % recent_.size()];
  if (r.data == name.data() && r.size == name.size() && r.data) return r.found;
  const SymbolInfo* found = nullptr;
  for (size_t i = scopes_.size(); i-- > 0 && !found;) found = scopes_[i].find(name);
  r = {name.data(), name.size(), found};
  remembered_ = true;
  return found;
}

namespace {
std::string_view base_of(std::string_view name) {
  size_t dot = name.find('.');
  return dot == std::string_view::npos ? name : name.substr(0, dot);
}
}  // namespace

// Most names asked about are ordinary registers (%r12, %rd3, %f7, %p1): none of the special
// registers below starts with %f, %h or %b, the only one starting with %r is %reserved_..., and
// the only ones starting with %p are %pm0..%pm7 and their _64 forms.
namespace {
bool cannot_be_special(std::string_view name) {
  if (name.size() < 3 || name[0] != '%') return false;
  switch (name[1]) {
    case 'f':
    case 'h':
    case 'b': return true;
    case 'r': return name[2] != 'e';
    case 'p': return name[2] != 'm';
    default: return false;
  }
}
}  // namespace

std::string_view special_register_type(std::string_view name) {
  if (cannot_be_special(name)) return "";
  // One lookup of the name without its component (%tid.x -> %tid).
  static const FlatMap<std::string_view, std::string_view> types = [] {
    FlatMap<std::string_view, std::string_view> t;
    for (std::string_view n :
         {"%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", "%smid", "%nsmid", "%lanemask_eq",
          "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%clock", "%clock_hi", "%total_smem_size",
          "%aggr_smem_size", "%dynamic_smem_size", "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid",
          "%cluster_ctarank", "%cluster_nctarank", "%globaltimer_lo", "%globaltimer_hi", "%reserved_smem_offset_begin",
          "%reserved_smem_offset_end", "%reserved_smem_offset_cap", "%reserved_smem_offset_0",
          "%reserved_smem_offset_1", "%pm0", "%pm1", "%pm2", "%pm3", "%pm4", "%pm5", "%pm6", "%pm7", "WARP_SZ"})
      t.emplace(n, ".u32");
    for (std::string_view n : {"%clock64", "%gridid", "%globaltimer", "%pm0_64", "%pm1_64", "%pm2_64", "%pm3_64",
                               "%pm4_64", "%pm5_64", "%pm6_64", "%pm7_64", "%current_graph_exec"})
      t.emplace(n, ".u64");
    t.emplace("%is_explicit_cluster", ".pred");
    return t;
  }();
  std::string_view b = base_of(name);
  if (auto it = types.find(b); it != types.end()) return it->second;
  if (b.substr(0, 7) == "%envreg") return ".b32";
  return "";
}

bool is_special_register(std::string_view name) { return !special_register_type(name).empty(); }

bool special_register_reads_as(std::string_view name, std::string_view type) {
  bool integer = type.size() == 4 && (type[1] == 'u' || type[1] == 's' || type[1] == 'b');
  if (!integer) return false;
  std::string_view bits = type.substr(2);
  std::string_view b = base_of(name);
  if (b == "%gridid") return bits == "16" || bits == "32" || bits == "64";
  bool legacy16 = b == "%tid" || b == "%ntid" || b == "%ctaid" || b == "%nctaid";
  return legacy16 && name.size() > b.size() && bits == "16";
}

bool is_vector_special_register(std::string_view name) {
  return name == "%tid" || name == "%ntid" || name == "%ctaid" || name == "%nctaid" || name == "%clusterid" ||
         name == "%nclusterid" || name == "%cluster_ctaid" || name == "%cluster_nctaid";
}

bool is_x86_register(std::string_view name) {
  static const FlatSet<std::string_view> names = {
      "%rax", "%rbx", "%rcx", "%rdx", "%rsi", "%rdi", "%rsp", "%rbp", "%rip", "%eax", "%ebx", "%ecx",
      "%edx", "%esi", "%edi", "%esp", "%ebp", "%ax",  "%bx",  "%cx",  "%dx",  "%al",  "%ah",  "%bl",
      "%cl",  "%dl",  "%r8d", "%r9d", "%r10d", "%r11d", "%r12d", "%r13d", "%r14d", "%r15d"};
  if (names.count(name)) return true;
  return name.substr(0, 4) == "%xmm" || name.substr(0, 4) == "%ymm" || name.substr(0, 4) == "%zmm";
}

}  // namespace ptxforge::ptx
