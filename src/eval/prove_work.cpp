#include "eval/prove_work.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "util/text.h"

namespace ptxforge::eval {

namespace {

// M, N, K from a shape modifier (".m64n256k16"); nullopt where the instruction names none.
std::optional<std::array<uint64_t, 3>> shape_of(const ptx::Instruction& ins) {
  for (auto& m : ins.mods) {
    unsigned long long a = 0, b = 0, c = 0;
    int used = 0;
    std::string text(m);
    if (std::sscanf(text.c_str(), ".m%llun%lluk%llu%n", &a, &b, &c, &used) == 3 && used == static_cast<int>(text.size()))
      return std::array<uint64_t, 3>{a, b, c};
  }
  return std::nullopt;
}

// The entry parameter a register or name holds the address of, following `mov` and
// `cvta.param` within the function: every definition of the register must lead to the same
// parameter (a register defined from anything else, or from two parameters, leads nowhere).
std::optional<size_t> param_index(const ptx::Function& fn, std::string_view name, std::set<std::string>& seen) {
  for (size_t i = 0; i < fn.params.size(); ++i)
    for (auto& d : fn.params[i].names)
      if (d.name == name) return i;
  if (!starts_with(name, "%") || !seen.insert(std::string(name)).second) return std::nullopt;
  std::optional<size_t> found;
  bool other = false;
  ptx::for_each_statement(*fn.body, [&](const ptx::Statement& s) {
    auto* ins = s.get_if<ptx::Instruction>();
    if (!ins || ins->operands.empty() || ins->operands[0].kind != ptx::Operand::Kind::expr ||
        ins->operands[0].expr.text != name)
      return;
    bool copy = (ins->opcode == "mov" || (ins->opcode == "cvta" && ins->has_mod(".param"))) && ins->operands.size() == 2 &&
                ins->operands[1].kind == ptx::Operand::Kind::expr && ins->operands[1].expr.kind == ptx::Expr::Kind::name;
    if (!copy) {
      other = true;
      return;
    }
    std::string_view from = ins->operands[1].expr.text;
    if (from == name) return;  // cvta.param %r, %r: the same value in another space
    auto i = param_index(fn, from, seen);
    if (!i || (found && *found != *i)) other = true;
    else found = i;
  });
  return other ? std::nullopt : found;
}

uint64_t number_after(std::string_view cls, size_t word) {
  auto words = split(cls, ' ');
  if (words.size() <= word) return 0;
  return std::strtoull(std::string(words[word]).c_str(), nullptr, 10);
}

}  // namespace

std::string_view to_string(WorkUnit u) {
  switch (u) {
    case WorkUnit::macs: return "multiply-adds";
    case WorkUnit::bytes: return "bytes";
    case WorkUnit::executions: break;
  }
  return "warp executions";
}

WorkUnit unit_of_family(std::string_view f) {
  if (starts_with_dotted(f, "wgmma.mma_async") || starts_with_dotted(f, "mma") || starts_with_dotted(f, "wmma.mma"))
    return WorkUnit::macs;
  if (starts_with_dotted(f, "cp.async.bulk") || starts_with_dotted(f, "ldmatrix") || starts_with_dotted(f, "stmatrix"))
    return WorkUnit::bytes;
  return WorkUnit::executions;
}

std::string work_class(const ptx::Function& fn, const ptx::Instruction& ins) {
  std::string op = ins.full_opcode();
  if (starts_with_dotted(op, "wgmma.mma_async") || starts_with_dotted(op, "mma") || starts_with_dotted(op, "wmma.mma")) {
    auto s = shape_of(ins);
    if (!s) return "exec";
    uint64_t macs = (*s)[0] * (*s)[1] * (*s)[2];
    if (ins.has_mod(".sp") || starts_with_dotted(op, "wgmma.mma_async.sp") || starts_with_dotted(op, "mma.sp")) macs /= 2;
    if (starts_with_dotted(op, "wgmma.mma_async"))
      return fmt::format("mac {} {}x{}x{}", macs / 4, (*s)[0], (*s)[1], (*s)[2]);
    return fmt::format("mac {} -", macs);
  }
  if (starts_with_dotted(op, "ldmatrix") || starts_with_dotted(op, "stmatrix")) {
    uint64_t n = ins.has_mod(".x4") ? 4 : ins.has_mod(".x2") ? 2 : 1;
    uint64_t per = ins.has_mod(".m16n16") ? 256 : 128;  // 8x8 or 8x16 b16, or 16x16 b8
    return fmt::format("bytes {}", n * per);
  }
  if (starts_with_dotted(op, "cp.async.bulk.tensor")) {
    // The tensor map is the first part of the global address operand ([tmap, {x, y}]).
    for (auto& o : ins.operands) {
      if (o.kind != ptx::Operand::Kind::address || o.elems.size() < 2) continue;
      if (o.elems[0].kind != ptx::Operand::Kind::expr || o.elems[0].expr.kind != ptx::Expr::Kind::name) break;
      std::set<std::string> seen;
      if (!fn.is_entry) break;
      if (auto i = param_index(fn, o.elems[0].expr.text, seen)) return fmt::format("tma {} {}", std::string_view(fn.name), *i);
      break;
    }
    return "bytes 16";
  }
  if (starts_with_dotted(op, "cp.async.bulk") || starts_with_dotted(op, "cp.reduce.async.bulk")) {
    if (op.find("commit_group") != std::string::npos || op.find("wait_group") != std::string::npos) return "exec";
    for (auto& o : ins.operands)
      if (o.kind == ptx::Operand::Kind::expr && o.expr.kind == ptx::Expr::Kind::integer)
        return fmt::format("bytes {}", std::strtoull(std::string(o.expr.text).c_str(), nullptr, 0));
    return "bytes 16";
  }
  return "exec";
}

Result<uint64_t> work_weight(std::string_view cls, WorkUnit unit, const task::Task& task, const task::LaunchSpec& spec,
                             const task::SizeSet& set) {
  if (unit == WorkUnit::executions) return uint64_t{1};
  if (starts_with(cls, "mac ")) return unit == WorkUnit::macs ? number_after(cls, 1) : 0;
  if (starts_with(cls, "bytes ")) return unit == WorkUnit::bytes ? number_after(cls, 1) : 0;
  if (!starts_with(cls, "tma ") || unit != WorkUnit::bytes) return uint64_t{0};
  auto words = split(cls, ' ');
  if (words.size() != 3) return uint64_t{16};
  size_t index = number_after(cls, 2);
  // The smallest box among the launches of this entry (one launch may pass another map there).
  std::optional<uint64_t> smallest;
  for (auto& l : spec.launches) {
    if (l.entry != words[1] || index >= l.args.size()) continue;
    const task::Param* p = task.find_param(l.args[index]);
    const task::Param* over = p && p->kind == task::Param::tensor_map ? task.find_param(p->over) : nullptr;
    auto choice = std::find_if(spec.tensor_maps.begin(), spec.tensor_maps.end(),
                               [&](const task::TensorMapChoice& c) { return c.name == l.args[index]; });
    if (!over || choice == spec.tensor_maps.end()) return uint64_t{16};
    uint64_t bytes = task::dtype_size(over->dtype);
    for (auto& b : choice->box) {
      auto v = b.evaluate_int(set.values);
      if (!v) return Error{fmt::format("tensor map '{}': box: {}", choice->name, v.error().message)};
      bytes *= static_cast<uint64_t>(std::max<int64_t>(*v, 0));
    }
    smallest = std::min(smallest.value_or(bytes), bytes);
  }
  return smallest.value_or(16);
}

bool shape_in_sass(std::string_view cls, const toolchain::SassListing& reachable) {
  auto words = split(cls, ' ');
  if (words.size() != 3 || words[0] != "mac" || words[2] == "-") return true;
  std::string shape = fmt::format(".{}.", words[2]);
  for (auto& [op, n] : reachable.opcodes)
    if ((op + ".").find(shape) != std::string::npos) return true;
  return false;
}

}  // namespace ptxforge::eval
