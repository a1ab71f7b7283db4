#include "task/task_new.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <memory>

#include "task/task_spec.h"
#include "toolchain/nvcc.h"
#include "util/text.h"

namespace ptxforge::task {

namespace {

std::optional<std::string> dtype_of(const std::string& base) {
  static const std::map<std::string, std::string> types = {
      {"float", "f32"},          {"double", "f64"},       {"half", "f16"},           {"__half", "f16"},
      {"__nv_bfloat16", "bf16"}, {"int", "i32"},          {"int32_t", "i32"},        {"unsigned", "u32"},
      {"unsigned int", "u32"},   {"uint32_t", "u32"},     {"long long", "i64"},      {"int64_t", "i64"},
      {"unsigned long long", "u64"}, {"uint64_t", "u64"}, {"size_t", "u64"},         {"char", "i8"},
      {"signed char", "i8"},     {"int8_t", "i8"},        {"unsigned char", "u8"},   {"uint8_t", "u8"},
      {"short", "i16"},          {"int16_t", "i16"},      {"unsigned short", "u16"}, {"uint16_t", "u16"},
      {"__nv_fp8_e4m3", "e4m3"}, {"__nv_fp8_e5m2", "e5m2"}};
  auto it = types.find(base);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

}  // namespace

Result<std::vector<KernelParam>> parse_kernel_signature(const std::string& source, const std::string& entry) {
  size_t pos = 0;
  for (;;) {
    pos = source.find(entry, pos);
    if (pos == std::string::npos)
      return Error{fmt::format("no __global__ function '{}' in the source (declare it extern \"C\" __global__ void {}(...))", entry, entry)};
    size_t after = pos + entry.size();
    bool word = (pos == 0 || !(std::isalnum(static_cast<unsigned char>(source[pos - 1])) || source[pos - 1] == '_'));
    size_t paren = source.find_first_not_of(" \t\n", after);
    size_t global = source.rfind("__global__", pos);
    if (word && paren != std::string::npos && source[paren] == '(' && global != std::string::npos &&
        source.find(';', global) > pos) {
      pos = paren;
      break;
    }
    pos = after;
  }
  int depth = 0;
  size_t end = pos;
  for (; end < source.size(); ++end) {
    if (source[end] == '(') ++depth;
    if (source[end] == ')' && --depth == 0) break;
  }
  if (end >= source.size()) return Error{fmt::format("the parameter list of '{}' is not closed", entry)};
  std::vector<KernelParam> out;
  for (auto raw : split(std::string_view(source).substr(pos + 1, end - pos - 1), ',')) {
    std::string p(trim(raw));
    if (p.empty() || p == "void") continue;
    KernelParam kp;
    kp.pointer = p.find('*') != std::string::npos;
    std::vector<std::string> words;
    std::string cur;
    for (char c : p) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') cur += c;
      else {
        if (!cur.empty()) words.push_back(cur);
        cur.clear();
      }
    }
    if (!cur.empty()) words.push_back(cur);
    if (words.size() < 2) return Error{fmt::format("cannot read the parameter '{}' of '{}'", p, entry)};
    kp.name = words.back();
    words.pop_back();
    std::vector<std::string> base;
    for (auto& w : words) {
      if (w == "const") kp.is_const = true;
      else if (w != "__restrict__" && w != "restrict" && w != "__grid_constant__" && w != "volatile") base.push_back(w);
    }
    std::string type = fmt::format("{}", fmt::join(base, " "));
    auto dt = dtype_of(type);
    if (!dt) return Error{fmt::format("parameter '{}' of '{}' has type '{}', which tasks do not support yet", kp.name, entry, type)};
    kp.type = *dt;
    out.push_back(kp);
  }
  if (out.empty()) return Error{fmt::format("'{}' takes no parameters", entry)};
  return out;
}

std::string draft_task_toml(const std::string& entry, const std::vector<KernelParam>& params,
                            const std::string& reference_entry) {
  std::vector<std::string> sizes;
  for (auto& p : params)
    if (!p.pointer && p.type[0] != 'f' && p.type != "bf16") sizes.push_back(p.name);
  std::string count = sizes.empty() ? "1024" : fmt::format("{}", fmt::join(sizes, " * "));
  std::string out = fmt::format(
      "# Drafted by `ptxforge task new` from {entry}'s signature. Check every line marked CHECK.\n"
      "name = \"{entry}\"\nlevel = 1\n"
      "description = \"\"\"CHECK: say in one paragraph what {entry} computes.\"\"\"\n"
      "tags = [\"user\"]\nentry = \"{entry}\"\nmin_target = \"sm_80\"\ntime_budget_s = 4\n",
      fmt::arg("entry", entry));
  for (auto& p : params) {
    out += fmt::format("\n[[param]]\nname = \"{}\"\n", p.name);
    if (p.pointer) {
      out += fmt::format("dtype = \"{}\"\ncount = \"{}\"   # CHECK: elements\nrole = \"{}\"   # CHECK: in, out or inout\n", p.type,
                         count, p.is_const ? "in" : "out");
      if (p.is_const) out += "init = \"uniform(-1, 1)\"\n";
    } else {
      bool size = std::find(sizes.begin(), sizes.end(), p.name) != sizes.end();
      out += fmt::format("kind = \"scalar\"\ndtype = \"{}\"\nvalue = \"{}\"\n", p.type, size ? p.name : "alpha");
    }
  }
  bool has_alpha = false;
  for (auto& p : params) has_alpha = has_alpha || (!p.pointer && std::find(sizes.begin(), sizes.end(), p.name) == sizes.end());
  auto set = [&](const char* name, bool shown, int value) {
    std::string s = fmt::format("\n[[sizes]]\nname = \"{}\"\n{}", name, shown ? "" : "shown = false\n");
    for (auto& sz : sizes) s += fmt::format("{} = {}   # CHECK\n", sz, value);
    if (has_alpha) s += "alpha = 1.5   # CHECK: the value of the float scalars\n";
    return s;
  };
  out += set("small", true, 1024) + set("large", true, 1 << 20) + set("odd", false, 1000003);
  out += fmt::format("\n[reference]\nentry = \"{}\"\ngrid = \"(ceil_div({}, 256), 1, 1)\"   # CHECK: the launch reference.cu's kernel needs\n"
                     "block = \"(256, 1, 1)\"\n\n[tolerance]\nrtol = 1e-5\natol = 1e-6\n",
                     reference_entry.empty() ? entry : reference_entry, count);
  // Every buffer read or written once: the least a kernel must move.
  std::vector<std::string> bytes;
  for (auto& p : params)
    if (p.pointer)
      if (auto dt = parse_dtype(p.type)) bytes.push_back(fmt::format("{} * {}", dtype_size(*dt), count));
  out += fmt::format("\n[roofline]   # CHECK: what the kernel must move and compute; the time stage fails a kernel "
                     "faster than the GPU's peaks allow\nbytes = \"{}\"\nflops = \"{}\"\n",
                     bytes.empty() ? "1" : fmt::format("{}", fmt::join(bytes, " + ")), count);
  return out;
}

Result<std::string> find_entry_in_ptx(const std::string& ptx, const std::string& entry) {
  std::vector<std::string> names;
  for (auto line : split(ptx, '\n')) {
    size_t at = line.find(".entry ");
    if (at == std::string_view::npos) continue;
    std::string_view rest = trim(line.substr(at + 7));
    size_t end = 0;
    while (end < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[end])) || rest[end] == '_' || rest[end] == '$'))
      ++end;
    if (end) names.emplace_back(rest.substr(0, end));
  }
  for (auto& n : names)
    if (n == entry) return n;
  // A kernel without extern "C" has a C++ mangled name (_Z5twicePKfPfj): the one whose
  // demangled form is `entry(...)` is it.
  for (auto& n : names) {
    if (!starts_with(n, "_Z")) continue;  // not mangled ("f" alone would demangle as a type)
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(n.c_str(), nullptr, nullptr, &status), std::free);
    if (status == 0 && demangled && starts_with(demangled.get(), entry + "(")) return n;
  }
  return Error{fmt::format("nvcc's PTX has no kernel '{}' (its kernels: {}); declare it extern \"C\" __global__ void {}(...)",
                           entry, names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")), entry)};
}

Result<std::string> create_task_from_cuda(const std::string& dir, const std::string& cu_path, const std::string& entry) {
  namespace fs = std::filesystem;
  auto source = read_file(cu_path);
  if (!source) return source.error();
  auto params = parse_kernel_signature(*source, entry);
  if (!params) return params.error();
  std::error_code ec;
  if (fs::exists(dir + "/task.toml", ec)) return Error{fmt::format("{} already holds a task", dir)};
  // nvcc first: a task whose reference nvcc cannot build is no task, and nothing is written.
  auto ptx = toolchain::nvcc_ptx(cu_path, "sm_80");
  if (!ptx) return Error{fmt::format("{}\n(a task's reference is built with nvcc, so it must compile)", ptx.error().message)};
  auto reference_entry = find_entry_in_ptx(*ptx, entry);
  if (!reference_entry) return reference_entry.error();
  // The starting solution names its kernel as the task does, whatever nvcc called it.
  std::string solution = *ptx;
  if (*reference_entry != entry)
    for (size_t at = solution.find(*reference_entry); at != std::string::npos; at = solution.find(*reference_entry, at + entry.size()))
      solution.replace(at, reference_entry->size(), entry);
  fs::create_directories(dir, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", dir, ec.message())};
  std::string toml = draft_task_toml(entry, *params, *reference_entry);
  if (auto s = write_file(dir + "/task.toml", toml); !s) return s.error();
  if (auto s = write_file(dir + "/reference.cu", *source); !s) return s.error();
  auto t = parse_task(toml, dir + "/task.toml", dir);
  if (!t) return Error{"the drafted task.toml does not parse (a bug):\n" + t.error().message};
  std::string launch = fmt::format("// @launch grid={} block={}\n", t->reference.grid.text(), t->reference.block.text());
  if (auto s = write_file(dir + "/solution.ptx",
                          launch + "// nvcc's PTX of reference.cu: a correct starting point, not a hand-written solution\n" + solution);
      !s)
    return s.error();
  return dir + "/task.toml";
}

}  // namespace ptxforge::task
