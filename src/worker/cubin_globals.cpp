#include "worker/cubin_globals.h"

#include <fmt/format.h>
#include <algorithm>
#include <cstring>
#include <optional>

namespace ptxforge::gpu {

namespace {

// Little-endian reads, bounds-checked: a short or damaged image never reads past its end.
struct Reader {
  std::string_view bytes;
  bool ok = true;
  template <typename T>
  T at(uint64_t offset) {
    T v{};
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) {
      ok = false;
      return v;
    }
    std::memcpy(&v, bytes.data() + offset, sizeof(T));  // ELF64 little-endian, as the host
    return v;
  }
  std::string name(uint64_t table_offset, uint64_t table_size, uint32_t index) {
    if (index >= table_size || table_offset > bytes.size() || bytes.size() - table_offset < table_size) {
      ok = false;
      return "";
    }
    const char* start = bytes.data() + table_offset + index;
    size_t max = table_size - index;
    return std::string(start, strnlen(start, max));
  }
};

struct Section {
  uint32_t name = 0, type = 0, link = 0;
  uint64_t offset = 0, size = 0, entsize = 0;
};

constexpr uint32_t kSymtab = 2;
constexpr uint8_t kObject = 1;

}  // namespace

Result<std::vector<GlobalSection>> cubin_global_sections(std::string_view elf) {
  Reader r{elf};
  if (elf.size() < 64 || std::memcmp(elf.data(),
                                     "\x7f"
                                     "ELF",
                                     4) != 0)
    return Error{"the cubin is not an ELF image"};
  if (elf[4] != 2 || elf[5] != 1) return Error{"the cubin is not a 64-bit little-endian ELF image"};
  uint64_t shoff = r.at<uint64_t>(0x28);
  uint16_t shentsize = r.at<uint16_t>(0x3A), shnum = r.at<uint16_t>(0x3C), shstrndx = r.at<uint16_t>(0x3E);
  if (shentsize < 64 || shstrndx >= shnum) return Error{"the cubin's section table is damaged"};
  std::vector<Section> sections(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t h = shoff + uint64_t{i} * shentsize;
    Section& s = sections[i];
    s.name = r.at<uint32_t>(h);
    s.type = r.at<uint32_t>(h + 4);
    s.offset = r.at<uint64_t>(h + 24);
    s.size = r.at<uint64_t>(h + 32);
    s.link = r.at<uint32_t>(h + 40);
    s.entsize = r.at<uint64_t>(h + 56);
  }
  if (!r.ok) return Error{"the cubin's section table lies past its end"};
  const Section& names = sections[shstrndx];
  std::vector<GlobalSection> out;
  std::vector<int> index_of(shnum, -1);  // ELF section index -> position in `out`
  for (uint16_t i = 0; i < shnum; ++i) {
    std::string n = r.name(names.offset, names.size, sections[i].name);
    if (n == ".nv.global" || n == ".nv.global.init") {
      index_of[i] = static_cast<int>(out.size());
      out.push_back({n, sections[i].size, {}});
    }
  }
  if (!r.ok) return Error{"the cubin's section names are damaged"};
  for (const Section& st : sections) {
    if (st.type != kSymtab) continue;
    if (st.entsize < 24 || st.link >= shnum) return Error{"the cubin's symbol table is damaged"};
    const Section& strings = sections[st.link];
    for (uint64_t e = 0; e + st.entsize <= st.size; e += st.entsize) {
      uint64_t at = st.offset + e;
      uint32_t name = r.at<uint32_t>(at);
      uint8_t info = r.at<uint8_t>(at + 4);
      uint16_t shndx = r.at<uint16_t>(at + 6);
      uint64_t value = r.at<uint64_t>(at + 8), size = r.at<uint64_t>(at + 16);
      if (!r.ok) return Error{"the cubin's symbol table lies past its end"};
      if ((info & 0xF) != kObject || shndx >= shnum || index_of[shndx] < 0) continue;
      GlobalSection& g = out[static_cast<size_t>(index_of[shndx])];
      if (value > g.size || g.size - value < size) return Error{fmt::format("symbol {} lies outside {}", name, g.name)};
      std::string n = r.name(strings.offset, strings.size, name);
      if (!r.ok) return Error{"the cubin's symbol names are damaged"};
      g.symbols.push_back({n, value, size});
    }
  }
  return out;
}

Result<GlobalRestorePlan> plan_global_restore(const std::vector<GlobalSection>& sections, const ResolveGlobal& resolve,
                                              uint64_t limit) {
  GlobalRestorePlan plan;
  std::vector<SectionRange> found;
  uint64_t total = 0;
  for (const GlobalSection& sec : sections) {
    if (sec.size == 0) continue;
    total += sec.size;
    if (total > limit)
      return Error{fmt::format(
          "the candidate's .global sections hold {} bytes or more, over the {} MiB that are restored before every "
          "timed trial",
          total, limit >> 20)};
    std::vector<SectionRange> slots;
    bool placed = !sec.symbols.empty();
    for (const GlobalSymbol& sym : sec.symbols) {
      if (sym.name.empty()) continue;
      auto at = resolve(sym.name);
      uint64_t bytes = at ? std::max<uint64_t>({at->size, sym.size, 1}) : 0;
      if (!at || at->base == 0 || at->base % kDriverSlotBytes != 0 || bytes > limit ||
          UINT64_MAX - at->base < bytes + kDriverSlotBytes) {
        placed = false;
        break;
      }
      slots.push_back({sec.name, at->base, (bytes + kDriverSlotBytes - 1) / kDriverSlotBytes * kDriverSlotBytes});
    }
    if (!placed || slots.empty()) {
      plan.unlocated.push_back(sec.name);
      continue;
    }
    found.insert(found.end(), slots.begin(), slots.end());
  }
  // One range per stretch of slots: adjacent ones are all the candidate's, and the two sections
  // may lie side by side.
  std::sort(found.begin(), found.end(), [](const SectionRange& a, const SectionRange& b) { return a.base < b.base; });
  for (SectionRange& r : found) {
    if (!plan.ranges.empty() && r.base <= plan.ranges.back().base + plan.ranges.back().size) {
      SectionRange& last = plan.ranges.back();
      last.size = std::max(last.base + last.size, r.base + r.size) - last.base;
      if (("+" + last.name + "+").find("+" + r.name + "+") == std::string::npos) last.name += "+" + r.name;
    } else {
      plan.ranges.push_back(r);
    }
  }
  return plan;
}

}  // namespace ptxforge::gpu
