#include "toolchain/sass.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/paths.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::toolchain {

namespace {

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// The instruction text after a line's address comment, or empty when the line holds none.
std::string_view instruction_text(std::string_view line) {
  size_t open = line.find("/*");
  while (open != std::string_view::npos) {
    size_t close = line.find("*/", open + 2);
    if (close == std::string_view::npos) return {};
    std::string_view inside = line.substr(open + 2, close - open - 2);
    bool address = !inside.empty() && inside.size() <= 16;
    for (char c : inside) address = address && is_hex(c);
    if (address) {
      std::string_view rest = line.substr(close + 2);
      size_t end = rest.find(';');
      return end == std::string_view::npos ? std::string_view{} : trim(rest.substr(0, end));
    }
    open = line.find("/*", close + 2);
  }
  return {};
}

// The function a header line opens, or empty: nvdisasm's `.section .text.<name>,"ax",...`
// and cuobjdump's `Function : <name>`. `section` says whether the line opened a section at all
// (another section, .nv.info say, ends the current function).
std::string_view function_header(std::string_view line, bool& section) {
  std::string_view t = trim(line);
  section = false;
  if (starts_with(t, ".section")) {
    section = true;
    std::string_view rest = trim(t.substr(8));
    if (!starts_with(rest, ".text.")) return {};
    rest = rest.substr(6);
    return rest.substr(0, rest.find_first_of(", \t"));
  }
  if (starts_with(t, "Function :")) {
    section = true;
    return trim(t.substr(10));
  }
  return {};
}

// A call's target where the listing names it: nvdisasm writes `CALL.REL.NOINC `(name)`; a
// local label (`.L_x_4`) or an internal subroutine (`$name`) lies inside the caller's own
// section, so it adds no edge. nullopt: the target is not named (a register, an address).
std::optional<std::string_view> call_target(std::string_view ins) {
  size_t open = ins.find("`(");
  if (open == std::string_view::npos) return std::nullopt;
  size_t close = ins.find(')', open);
  if (close == std::string_view::npos) return std::nullopt;
  return ins.substr(open + 2, close - open - 2);
}

}  // namespace

int SassListing::count(std::string_view prefix) const {
  int n = 0;
  for (auto it = opcodes.lower_bound(prefix); it != opcodes.end() && starts_with(it->first, prefix); ++it)
    if (starts_with_dotted(it->first, prefix)) n += it->second;
  return n;
}

SassListing parse_sass_listing(std::string_view text) {
  SassListing out;
  SassFunction* fn = nullptr;
  for (std::string_view line : split(text, '\n')) {
    bool section = false;
    std::string_view header = function_header(line, section);
    if (section) {
      fn = header.empty() ? nullptr : &out.functions[std::string(header)];
      continue;
    }
    std::string_view ins = instruction_text(line);
    if (!ins.empty() && ins.front() == '{') ins = trim(ins.substr(1));  // dual-issue braces of older listings
    if (!ins.empty() && ins.front() == '@') {                            // guard: @P0, @!UP1, @PT
      size_t space = ins.find_first_of(" \t");
      ins = space == std::string_view::npos ? std::string_view{} : trim(ins.substr(space));
    }
    size_t end = ins.find_first_of(" \t");
    std::string_view opcode = ins.substr(0, end);
    if (opcode.empty() || !(opcode[0] >= 'A' && opcode[0] <= 'Z')) continue;
    ++out.opcodes[std::string(opcode)];
    ++out.instructions;
    if (!fn) continue;
    ++fn->opcodes[std::string(opcode)];
    if (!starts_with_dotted(opcode, "CALL")) continue;
    auto target = call_target(ins);
    if (!target) fn->calls_unknown = true;
    else if (!target->empty() && target->front() != '.' && target->front() != '$') fn->calls.emplace_back(*target);
  }
  return out;
}

Result<SassListing> SassListing::reachable_from(const std::vector<std::string>& entries,
                                                const std::vector<std::string>& all_entries) const {
  SassListing out;
  out.tool = tool;
  std::vector<std::string> todo;
  for (auto& e : entries) {
    if (!functions.count(e))
      return Error{fmt::format("the SASS listing has no function '{}' (it lists {} functions)", e, functions.size())};
    todo.push_back(e);
  }
  std::map<std::string, bool, std::less<>> seen;
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    auto it = functions.find(name);
    if (it == functions.end() || seen[name]) continue;
    seen[name] = true;
    const SassFunction& f = it->second;
    out.functions[name] = f;
    for (auto& [op, n] : f.opcodes) {
      out.opcodes[op] += n;
      out.instructions += n;
    }
    for (auto& c : f.calls) todo.push_back(c);
    if (f.calls_unknown)
      for (auto& [other, unused] : functions)
        if (std::find(all_entries.begin(), all_entries.end(), other) == all_entries.end()) todo.push_back(other);
  }
  return out;
}

Result<SassListing> disassemble(const std::string& cubin) {
  auto nvdisasm = find_cuda_tool("nvdisasm");
  auto cuobjdump = find_cuda_tool("cuobjdump");
  if (!nvdisasm && !cuobjdump)
    return Error{fmt::format("neither nvdisasm nor cuobjdump found (looked in {}/bin and PATH)", cuda_home())};
  auto dir = TempDir::create("ptxforge-sass");
  if (!dir) return dir.error();
  std::string path = dir->path() + "/candidate.cubin";
  if (auto w = write_file(path, cubin); !w) return w.error();
  std::string failures;
  auto attempt = [&](const std::string& tool, std::vector<std::string> argv) -> std::optional<SassListing> {
    auto proc = run_process(argv, std::chrono::seconds(60));
    if (!proc) {
      failures += fmt::format("{}: {}; ", tool, proc.error().message);
      return std::nullopt;
    }
    if (proc->exit_code != 0) {
      failures += fmt::format("{} exited with {}: {}; ", tool, proc->exit_code, trim(proc->err));
      return std::nullopt;
    }
    SassListing l = parse_sass_listing(proc->out);
    l.tool = tool;
    if (l.instructions == 0) {
      failures += fmt::format("{} listed no instructions; ", tool);
      return std::nullopt;
    }
    return l;
  };
  if (nvdisasm)
    if (auto l = attempt("nvdisasm", {*nvdisasm, path})) return *l;
  if (cuobjdump)
    if (auto l = attempt("cuobjdump", {*cuobjdump, "-sass", path})) return *l;
  return Error{"cannot disassemble the cubin: " + failures.substr(0, failures.size() - 2)};
}

// Each row is confirmed on sm_90a by sass_rows_test: its example kernel assembles and the
// listing holds one of the row's opcodes. SASS that has no distinctive opcode (mapa and
// ld.shared::cluster become plain loads) has no row.
const std::vector<SassFamily>& sass_family_table() {
  static const std::vector<SassFamily> table = {
      {"wgmma.mma_async", {"HGMMA", "QGMMA", "IGMMA", "BGMMA"}},
      {"wgmma.fence", {"WARPGROUP.ARRIVE"}},
      {"wgmma.wait_group", {"WARPGROUP.DEPBAR"}},
      {"cp.async.bulk.tensor", {"UTMALDG", "UTMASTG", "UTMAPF", "UTMAREDG"}},
      {"cp.async.bulk", {"UBLKCP"}},
      {"cp.reduce.async.bulk", {"UBLKRED"}},
      {"cp.async", {"LDGSTS"}},
      {"cp.async.commit_group", {"LDGDEPBAR"}},
      {"cp.async.wait_group", {"DEPBAR"}},
      {"cp.async.wait_all", {"DEPBAR"}},
      {"mbarrier.init", {"SYNCS.EXCH"}},
      {"mbarrier.arrive", {"SYNCS.ARRIVE"}},
      {"mbarrier.try_wait", {"SYNCS.PHASECHK"}},
      {"mbarrier.test_wait", {"SYNCS.PHASECHK"}},
      {"fence.proxy.async", {"FENCE.VIEW.ASYNC"}},
      {"mma", {"HMMA", "IMMA", "DMMA", "BMMA"}},
      {"wmma.mma", {"HMMA", "IMMA", "DMMA", "BMMA"}},
      {"ldmatrix", {"LDSM"}},
      {"stmatrix", {"STSM"}},
      {"setmaxnreg", {"USETMAXREG"}},
      {"barrier.cluster.arrive", {"UCGABAR_ARV"}},
      {"barrier.cluster.wait", {"UCGABAR_WAIT"}},
      {"elect.sync", {"ELECT"}},
      {"redux.sync", {"REDUX", "CREDUX"}},
      {"match", {"MATCH"}},
      {"shfl.sync", {"SHFL"}},
      {"dp4a", {"IDP.4A"}},
  };
  return table;
}

std::optional<std::vector<std::string_view>> sass_for_family(std::string_view family) {
  const auto& table = sass_family_table();
  auto under = [](std::string_view name, std::string_view prefix) {
    return starts_with(name, prefix) && (name.size() == prefix.size() || name[prefix.size()] == '.');
  };
  for (auto& row : table)
    if (row.ptx == family) return row.sass;
  std::vector<std::string_view> below;
  for (auto& row : table)
    if (under(row.ptx, family))
      for (auto s : row.sass)
        if (std::find(below.begin(), below.end(), s) == below.end()) below.push_back(s);
  if (!below.empty()) return below;
  const SassFamily* above = nullptr;
  for (auto& row : table)
    if (under(family, row.ptx) && (!above || row.ptx.size() > above->ptx.size())) above = &row;
  if (above) return above->sass;
  return std::nullopt;
}

}  // namespace ptxforge::toolchain
