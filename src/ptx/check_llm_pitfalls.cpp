// Warnings for PTX that ptxas accepts but that is almost always a bug when a model wrote it:
//   missing-cvta       .global access through a kernel-parameter pointer never converted
//                      with cvta.to.global
//   uninitialized-reg  a register read but never written (or, in loop-free code, read first)
//   setmaxnreg-no-cap  setmaxnreg in an entry without .maxnreg: ptxas drops it (C7508)
//   divergent-barrier  bar.sync or an .aligned instruction under a guard that depends on
//                      the thread index
#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "ptx/check_context.h"

namespace ptxforge::ptx {

namespace {

// Families whose first operand is written (beyond those whose form starts with d, w or p).
bool first_operand_is_dest(const Instruction& ins, const Resolved& r) {
  if (!r.family) return false;
  std::string_view ops = r.family->operands;
  if (!ops.empty() && (ops[0] == 'd' || ops[0] == 'w' || ops[0] == 'p')) return true;
  static const FlatSet<std::string_view> extra = {
      "popc", "clz", "bfind", "getctarank", "mbarrier.pending_count", "shfl.sync", "vote.sync", "match.sync",
      "elect.sync", "set", "slct", "dp4a", "dp2a", "lop3", "cvt.pack", "createpolicy", "multimem.ld_reduce", "mma",
      "ldmatrix", "mbarrier.arrive", "mbarrier.arrive_drop", "wgmma.mma_async", "isspacep", "atom", "tex", "tld4",
      "txq", "suld", "suq", "vote", "shfl", "mma.sp", "wgmma.mma_async.sp", "wmma.load", "wmma.mma", "istypep",
      "clusterlaunchcontrol.query_cancel", "tcgen05.ld", "movmatrix"};
  if (extra.count(r.family->name)) return true;
  return (r.family->name == "bar" || r.family->name == "barrier") && ins.has_mod(".red");
}

void names_in(const Operand& o, ExprRefs& out) { collect_names(o, out); }

bool has_header_style_qualifier(const Instruction& ins) {
  static const FlatSet<std::string_view> qualifiers = {
      ".nc", ".ca", ".cg", ".cs", ".lu", ".cv", ".wb", ".wt", ".volatile", ".relaxed", ".acquire", ".release",
      ".acq_rel", ".weak", ".mmio", ".cta", ".cluster", ".gpu", ".sys", ".L2::cache_hint"};
  for (auto m : ins.mods)
    if (qualifiers.count(m) || m.substr(0, 5) == ".L1::" || m.substr(0, 5) == ".L2::") return true;
  return false;
}

bool in_range(std::string_view n, std::string_view prefix, uint32_t count) {
  if (n.size() <= prefix.size() || n.substr(0, prefix.size()) != prefix) return false;
  std::string_view digits = n.substr(prefix.size());
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos) return false;
  if (digits.size() > 1 && digits[0] == '0') return false;
  uint32_t v = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), v);
  return v < count;
}

bool is_reg_name(std::string_view n) { return !n.empty() && n[0] == '%' && !is_special_register(n); }

struct FunctionWalk {
  CheckContext& ctx;
  const Function& f;
  bool has_backward_branch = false;
  FlatSet<std::string_view> declared_regs;
  std::vector<std::pair<std::string_view, uint32_t>> declared_ranges;

  void declare(const VarDecl& d) {
    if (d.space != ".reg") return;
    for (auto& n : d.names) {
      if (n.range) declared_ranges.emplace_back(n.name, *n.range);
      else declared_regs.insert(n.name);
    }
  }

  void collect() {
    FlatSet<std::string_view> seen_labels;
    for (auto& p : f.params) declare(p);
    for (auto& p : f.rets) declare(p);
    for_each_statement(*f.body, [&](const Statement& s) {
      if (auto* d = s.get_if<VarDecl>()) declare(*d);
      if (auto* l = s.get_if<Label>()) seen_labels.insert(l->name);
      if (auto* ins = s.get_if<Instruction>()) {
        if (ins->opcode == "bra" || ins->opcode == "brx") {
          for (auto& o : ins->operands) {
            ExprRefs ns;
            names_in(o, ns);
            for (auto* n : ns)
              if (seen_labels.count(n->text)) has_backward_branch = true;
          }
          if (ins->opcode == "brx") has_backward_branch = true;  // jump tables: be conservative
        }
      }
    });
  }
};

void check_uninitialized(CheckContext& ctx, FunctionWalk& w) {
  // Inputs: .reg parameters of a .func.
  FlatMap<std::string_view, size_t> first_write;
  for (auto* list : {&w.f.params, &w.f.rets})
    for (auto& p : *list)
      if (p.space == ".reg")
        for (auto& n : p.names) first_write.emplace(n.name, 0);
  struct Read {
    const Expr* name;
    size_t index;
  };
  std::vector<Read> reads;
  for (size_t i = 0; i < ctx.fn_instructions.size(); ++i) {
    const Instruction& ins = *ctx.fn_instructions[i].first;
    const Resolved& r = ctx.fn_instructions[i].second;
    if (!r.family || !r.family->detailed) {
      if (ins.opcode != "call") return;  // unknown semantics: no claims about this function
    }
    size_t first_src = 0;
    if (ins.opcode == "call") {
      if (!ins.operands.empty() && ins.operands[0].kind == Operand::Kind::list) {
        ExprRefs ns;
        names_in(ins.operands[0], ns);
        for (auto* n : ns) first_write.emplace(n->text, i + 1);
        first_src = 1;
      }
    } else if (first_operand_is_dest(ins, r) && !ins.operands.empty()) {
      const Operand& d = ins.operands[0];
      if (d.kind != Operand::Kind::address) {
        ExprRefs ns;
        names_in(d, ns);
        for (auto* n : ns) first_write.emplace(n->text, i + 1);
        first_src = 1;
      }
    }
    for (size_t k = first_src; k < ins.operands.size(); ++k) {
      ExprRefs ns;
      names_in(ins.operands[k], ns);
      for (auto* n : ns) reads.push_back({n, i + 1});
    }
  }
  // Undeclared registers already have an error; only declared ones are judged here.
  auto declared = [&](std::string_view n) {
    return w.declared_regs.count(n) > 0 || std::any_of(w.declared_ranges.begin(), w.declared_ranges.end(),
                                                        [&](auto& r) { return in_range(n, r.first, r.second); });
  };
  FlatSet<std::string_view> reported;
  for (auto& rd : reads) {
    std::string_view n = rd.name->text;
    auto it = first_write.find(n);
    bool written_before = it != first_write.end() && (w.has_backward_branch || it->second <= rd.index);
    if (written_before || !is_reg_name(n) || reported.count(n) || !declared(n)) continue;
    if (it == first_write.end()) {
      reported.insert(n);
      auto& d = ctx.diags.warning(rd.name->loc, fmt::format("register '{}' is read but never written in '{}'", n, w.f.name),
                                  "uninitialized-reg");
      d.length = static_cast<uint32_t>(n.size());
      d.hint = "its value is undefined; initialize it (mov) or check for a typo in the register name";
    } else if (!w.has_backward_branch && it->second > rd.index) {
      reported.insert(n);
      auto& d = ctx.diags.warning(rd.name->loc, fmt::format("register '{}' is read before it is written", n),
                                  "uninitialized-reg");
      d.length = static_cast<uint32_t>(n.size());
    }
  }
}

// Arithmetic that can build an address from a base: the result of any of these with a
// converted operand is still a converted address (base + stride, base + (i << 2), i*4 + base).
bool is_address_arith(std::string_view fam) {
  return fam == "mov" || fam == "add" || fam == "sub" || fam == "mad" || fam == "mul" || fam == "shl" ||
         fam == "cvt" || fam == "and" || fam == "or" || fam == "xor" || fam == "selp" || fam == "addc" || fam == "madc";
}

// Those that carry an unconverted parameter pointer on: copies and offsets of it.
bool is_pointer_copy(std::string_view fam) {
  return fam == "mov" || fam == "add" || fam == "sub" || fam == "mad" || fam == "cvt";
}

bool is_cta_or_warp_barrier(const Instruction& ins, std::string_view fam) {
  return ((fam == "bar" || fam == "barrier") && !ins.has_mod(".arrive")) || ins.has_mod(".aligned");
}

// Global accesses through an unconverted parameter pointer. Only the plain forms warn: CUDA's
// own headers apply .nc (__ldg), cache operators (__ldcs, __stwt), eviction hints and
// memory-order qualifiers (cuda::atomic_ref, acquire loads) to generic pointers.
bool is_plain_global_access(const Instruction& ins, std::string_view fam) {
  return (fam == "ld" || fam == "st" || fam == "atom" || fam == "red" || fam == "ldu") && ins.has_mod(".global") &&
         !has_header_style_qualifier(ins);
}

void check_cvta_and_barriers(CheckContext& ctx, FunctionWalk& w) {
  if (!ctx.want_warnings()) return;
  // Both warnings follow values through the function; a function with no guarded barrier has
  // no use for what depends on the thread index, and only a kernel's plain global accesses can
  // go through one of its parameters unconverted.
  bool track_threads = false, track_params = false;
  for (auto& [ip, r] : ctx.fn_instructions) {
    if (!r.family) continue;
    track_threads |= ip->guard && is_cta_or_warp_barrier(*ip, r.family->name);
    track_params |= w.f.is_entry && !w.f.params.empty() && is_plain_global_access(*ip, r.family->name);
  }
  if (!track_threads && !track_params) return;
  FlatSet<std::string_view> param_ptr;   // holds a kernel parameter pointer, not converted
  // Derives from a cvta result. An address is converted when any part of it is: real kernels
  // add to a converted base a stride or offset that came from another parameter (and so looks
  // like an unconverted pointer), and the sum is a global address all the same.
  FlatSet<std::string_view> converted;
  FlatSet<std::string_view> thread_dep;  // depends on the thread index
  FlatSet<std::string_view> warned;
  FlatSet<std::string_view> entry_params;
  if (w.f.is_entry)
    for (auto& p : w.f.params)
      for (auto& n : p.names) entry_params.insert(n.name);
  for (auto& [ip, r] : ctx.fn_instructions) {
    const Instruction& ins = *ip;
    if (!r.family) continue;
    std::string_view fam = r.family->name;
    bool dest_first = first_operand_is_dest(ins, r) && !ins.operands.empty() &&
                      ins.operands[0].kind != Operand::Kind::address;
    ExprRefs dests, srcs;
    for (size_t k = 0; k < ins.operands.size(); ++k) names_in(ins.operands[k], k == 0 && dest_first ? dests : srcs);

    // Divergent barriers.
    if (ins.guard && thread_dep.count(ins.guard->reg)) {
      if (is_cta_or_warp_barrier(ins, fam)) {
        auto& d = ctx.diags.warning(ins.loc, fmt::format("'{}' is guarded by '{}', which depends on the thread index",
                                                         ins.full_opcode(), ins.guard->reg), "divergent-barrier");
        d.length = static_cast<uint32_t>(ins.full_opcode().size());
        d.hint = "every thread of the CTA (or warp, for .aligned) must execute it together; branch around the work, "
                 "not the barrier";
      }
    }
    bool src_thread = false, src_param = false, src_converted = false;
    for (auto* s : srcs) {
      if (track_threads &&
          (s->text.starts_with("%tid") || s->text.starts_with("%laneid") || thread_dep.count(s->text)))
        src_thread = true;
      if (param_ptr.count(s->text)) src_param = true;
      if (converted.count(s->text)) src_converted = true;
    }
    // Parameter pointers and their derivations.
    if (fam == "ld" && ins.has_mod(".param") && !dests.empty() && ins.operands.size() >= 2) {
      ExprRefs addr;
      names_in(ins.operands[1], addr);
      bool from_entry_param = false;
      for (auto* a : addr) from_entry_param |= entry_params.count(a->text) > 0;
      for (auto* d : dests) converted.erase(d->text);
      if (from_entry_param && (r.type == ".u64" || r.type == ".b64" || r.type == ".s64"))
        for (auto* d : dests) param_ptr.insert(d->text);
      continue;
    }
    if (fam == "cvta") {
      for (auto* d : dests) {
        param_ptr.erase(d->text);
        if (ins.has_mod(".to")) converted.insert(d->text);
      }
    } else if (dest_first && is_address_arith(fam)) {
      // A converted part makes the result converted, whatever else is added to it.
      for (auto* d : dests) {
        bool conv = src_converted, param = src_param && !src_converted && is_pointer_copy(fam);
        if (conv) converted.insert(d->text);
        else converted.erase(d->text);
        if (param) param_ptr.insert(d->text);
        else param_ptr.erase(d->text);
      }
    } else if (dest_first) {
      for (auto* d : dests) {
        param_ptr.erase(d->text);
        converted.erase(d->text);
      }
    }
    if (dest_first && track_threads)
      for (auto* d : dests) {
        if (src_thread) thread_dep.insert(d->text);
        else thread_dep.erase(d->text);
      }
    if (track_params && is_plain_global_access(ins, fam)) {
      for (auto& o : ins.operands) {
        if (o.kind != Operand::Kind::address) continue;
        ExprRefs addr;
        names_in(o, addr);
        for (auto* a : addr) {
          if (!param_ptr.count(a->text) || warned.count(a->text)) continue;
          warned.insert(a->text);
          auto& d = ctx.diags.warning(a->loc, fmt::format("'{}' accesses .global memory through '{}', a kernel parameter "
                                                          "pointer never converted with cvta.to.global",
                                                          ins.full_opcode(), a->text), "missing-cvta");
          d.length = static_cast<uint32_t>(a->text.size());
          d.hint = fmt::format("convert it once after loading: cvta.to.global.u64 {0}, {0};", a->text);
        }
      }
    }
  }
}

void check_setmaxnreg(CheckContext& ctx, FunctionWalk& w) {
  if (!w.f.is_entry) return;
  // ptxas knows the register count at entry from .maxnreg, or from .maxntid together with
  // .minnctapersm (both fix how many registers a thread may have).
  bool maxntid = false, minnctapersm = false;
  for (auto& p : w.f.perf) {
    if (p.name == ".maxnreg") return;
    maxntid |= p.name == ".maxntid";
    minnctapersm |= p.name == ".minnctapersm";
  }
  if (maxntid && minnctapersm) return;
  for (auto& entry : ctx.fn_instructions) {
    const Instruction* ins = entry.first;
    if (ins->opcode != "setmaxnreg") continue;
    auto& d = ctx.diags.warning(ins->loc, fmt::format("'{}' in kernel '{}' without a register cap: ptxas ignores it "
                                                      "(C7508)", ins->full_opcode(), w.f.name), "setmaxnreg-no-cap");
    d.length = static_cast<uint32_t>(ins->full_opcode().size());
    d.hint = "add '.maxnreg N' after the kernel's parameter list, or '.minnctapersm N' beside its '.maxntid' "
             "(or compile with -maxrregcount and no .maxntid)";
    return;
  }
}

}  // namespace

void check_function_pitfalls(CheckContext& ctx, const Function& f) {
  FunctionWalk w{ctx, f, false, {}, {}};
  w.collect();
  check_uninitialized(ctx, w);
  check_cvta_and_barriers(ctx, w);
  check_setmaxnreg(ctx, w);
}

}  // namespace ptxforge::ptx
