// Lowering, the module level: .global/.const/.shared variables laid out once with their
// initializers, every function lowered, and each function's instructions ordered for the
// scheduler (reverse post-order over the control-flow graph, docs/emu.md section 3).
#include <cstring>

#include <fmt/format.h>

#include "emu/limits.h"
#include "emu/lower_internal.h"
#include "emu/memory.h"

namespace ptxforge::emu::detail {

uint64_t const_bits(const ConstVal& v, DT type);

uint64_t ModuleLowerer::var_address(uint32_t var, Space want) const {
  const ModuleVar& v = prog_.vars[var];
  if (v.space == Space::global) return kModuleGlobalBase + v.offset;
  return v.offset + (want == Space::generic ? window_base(v.space) : 0);
}

namespace {

uint32_t elem_bytes(std::string_view type) {
  int b = dt_bits(dt_from_text(type));
  return b <= 8 ? 1 : static_cast<uint32_t>(b / 8);
}

void flatten(const ptx::Operand& o, std::vector<const ptx::Operand*>& out) {
  if (o.kind == ptx::Operand::Kind::vector)
    for (auto& e : o.elems) flatten(e, out);
  else out.push_back(&o);
}

// Reverse post-order of the control-flow graph from instruction 0; unreachable code after.
void order(Function& fn) {
  size_t n = fn.code.size();
  fn.rpo.assign(n, 0);
  if (n == 0) return;
  auto succs = [&](uint32_t i, uint32_t out[2]) {
    const Inst& in = fn.code[i];
    int k = 0;
    bool uncond = in.guard < 0;
    bool ends = (in.op == Op::ret || in.op == Op::exit || in.op == Op::trap) && uncond;
    if (in.op == Op::bra) {
      out[k++] = in.target;
      if (!uncond && i + 1 < n) out[k++] = i + 1;
    } else if (!ends && i + 1 < n) {
      out[k++] = i + 1;
    }
    return k;
  };
  std::vector<uint8_t> seen(n, 0);
  std::vector<uint32_t> post;
  post.reserve(n);
  std::vector<std::pair<uint32_t, int>> stack{{0, 0}};
  seen[0] = 1;
  while (!stack.empty()) {
    auto& [i, next] = stack.back();
    uint32_t s[2];
    int k = succs(i, s);
    if (next < k) {
      uint32_t t = s[next++];
      if (!seen[t]) {
        seen[t] = 1;
        stack.push_back({t, 0});
      }
    } else {
      post.push_back(i);
      stack.pop_back();
    }
  }
  uint32_t idx = 0;
  for (auto it = post.rbegin(); it != post.rend(); ++it) fn.rpo[*it] = idx++;
  for (uint32_t i = 0; i < n; ++i)
    if (!seen[i]) fn.rpo[i] = idx++;
}

}  // namespace

bool ModuleLowerer::init_var(ModuleVar& v, const ptx::VarDecl& d, const ptx::Operand& init, Finding& err) {
  std::vector<const ptx::Operand*> elems;
  flatten(init, elems);
  uint32_t eb = elem_bytes(d.type);
  DT t = dt_from_text(d.type);
  for (size_t i = 0; i < elems.size(); ++i) {
    uint64_t at = i * eb;
    if (at + eb > v.size) break;
    const ptx::Operand& o = *elems[i];
    if (o.kind != ptx::Operand::Kind::expr) continue;
    const ptx::Expr* e = &o.expr;
    if (e->kind == ptx::Expr::Kind::call && e->text == "generic" && e->args.size() == 1) e = &e->args[0];
    uint64_t addend = 0;
    if (e->kind == ptx::Expr::Kind::binary && e->text == "+" && e->args[0].kind == ptx::Expr::Kind::name) {
      if (auto c = FnLowerer::eval(e->args[1])) addend = c->bits;
      e = &e->args[0];
    }
    if (e->kind == ptx::Expr::Kind::name) {
      const Sym* s = global(e->text);
      if (!s || s->kind != Sym::Kind::var) {
        err = finding_at(FindingKind::unsupported,
               fmt::format("not supported by the CPU engine: the initializer '{}'", e->text), {o.loc.line, o.loc.col});
        return false;
      }
      v.relocs.push_back({at, s->index, addend, static_cast<uint8_t>(eb)});
      continue;
    }
    auto c = FnLowerer::eval(*e);
    if (!c) {
      err = finding_at(FindingKind::unsupported, "not supported by the CPU engine: this initializer", {o.loc.line, o.loc.col});
      return false;
    }
    uint64_t bits = const_bits(*c, t);
    std::memcpy(v.init.data() + at, &bits, eb > 8 ? 8 : eb);
  }
  return true;
}

bool ModuleLowerer::layout_var(const ptx::VarDecl& d, Finding& err, bool in_body) {
  Space sp = d.space == ".global" ? Space::global : d.space == ".const" ? Space::const_ : Space::shared;
  uint32_t eb = elem_bytes(d.type) * (d.vec ? d.vec : 1);
  uint32_t align = std::max<uint32_t>(d.align ? d.align : eb, 1);
  for (auto& n : d.names) {
    ModuleVar v;
    v.name = std::string(n.name);
    v.space = sp;
    uint64_t count = 1;
    bool unsized = false, overflow = false;
    for (auto& dim : n.dims) {
      if (!dim) unsized = true;
      else overflow |= __builtin_mul_overflow(count, *dim, &count);
    }
    if (unsized && n.init) {  // a[] = {1, 2, 3}
      std::vector<const ptx::Operand*> elems;
      flatten(*n.init, elems);
      overflow |= __builtin_mul_overflow(uint64_t{elems.size()}, count ? count : 1, &count);
      unsized = false;
    }
    overflow |= __builtin_mul_overflow(unsized ? 0 : count, uint64_t{eb}, &v.size);
    // Every variable's bytes count against one limit, whatever its space: the machine holds
    // them (and .shared ones in every resident CTA), so many variables under the limit each
    // must not add up to more than the engine allocates.
    if (overflow || v.size > limits::kMaxAllocatedBytes ||
        __builtin_add_overflow(var_bytes_, v.size, &var_bytes_) || var_bytes_ > limits::kMaxAllocatedBytes) {
      err = finding_at(FindingKind::limit,
                       fmt::format("'{}' takes the module's variables past the CPU engine's memory limit of {} bytes",
                                   n.name, limits::kMaxAllocatedBytes),
                       {n.loc.line, n.loc.col});
      return false;
    }
    // Only an initializer needs an image: a variable without one starts as zeros (.global,
    // .const) or never written (.shared, in every CTA), and a huge one costs no copy.
    if (n.init) v.init.assign(v.size, 0);
    uint32_t index = static_cast<uint32_t>(prog_.vars.size());
    if (sp == Space::shared) {
      if (unsized) extern_shared_.push_back(index);
      else {
        v.offset = (prog_.shared_static + align - 1) / align * align;
        prog_.shared_static = v.offset + v.size;
      }
    } else if (sp == Space::const_) {
      v.offset = (prog_.const_bytes + 255) / 256 * 256;
      prog_.const_bytes = v.offset + v.size + 256;
    } else {
      v.offset = (global_end_ + 255) / 256 * 256;
      global_end_ = v.offset + std::max<uint64_t>(v.size, 1) + kAllocGap;
    }
    Sym s;
    s.kind = Sym::Kind::var;
    s.index = index;
    if (in_body) body_shared_[&n] = index;
    else globals_[n.name] = s;
    prog_.vars.push_back(std::move(v));
    if (n.init && !init_var(prog_.vars.back(), d, *n.init, err)) return false;
  }
  return true;
}

std::variant<Program, Finding> ModuleLowerer::run() {
  Finding err;
  std::vector<const ptx::Function*> fns;
  for (auto& item : src_.items) {
    if (auto* d = std::get_if<ptx::VarDecl>(&item.node)) {
      if (d->space == ".global" || d->space == ".const" || d->space == ".shared") {
        if (!layout_var(*d, err)) return err;
      } else {
        return finding_at(FindingKind::unsupported,
                       fmt::format("not supported by the CPU engine: module-scope {} variables", d->space),
                       {d->loc.line, d->loc.col});
      }
    } else if (auto* f = std::get_if<ptx::Function>(&item.node)) {
      // A declaration followed by the definition: one function, the definition.
      auto it = globals_.find(f->name);
      if (it != globals_.end() && it->second.kind == Sym::Kind::func) {
        if (f->body) fns[it->second.index] = f;
        continue;
      }
      Sym s;
      s.kind = Sym::Kind::func;
      s.index = static_cast<uint32_t>(fns.size());
      globals_[f->name] = s;
      fns.push_back(f);
    }
  }
  // .shared variables of function bodies: static for the whole launch like the module's.
  for (const ptx::Function* f : fns) {
    if (!f->body) continue;
    bool ok = true;
    ptx::for_each_statement(*f->body, [&](const ptx::Statement& st) {
      if (auto* d = st.get_if<ptx::VarDecl>(); d && ok && d->space == ".shared") ok = layout_var(*d, err, true);
    });
    if (!ok) return err;
  }
  // Dynamic shared memory starts after every static variable, 16-byte aligned (wider .align
  // on an extern variable raises it).
  uint64_t dyn = (prog_.shared_static + 15) / 16 * 16;
  for (uint32_t i : extern_shared_) prog_.vars[i].offset = dyn;
  prog_.shared_static = dyn;
  prog_.fns.resize(fns.size());
  for (size_t i = 0; i < fns.size(); ++i) {
    FnLowerer fl(*this, prog_.fns[i], *fns[i]);
    if (!fl.run()) return fl.err();
    order(prog_.fns[i]);
  }
  return std::move(prog_);
}

}  // namespace ptxforge::emu::detail

namespace ptxforge::emu {
std::variant<Program, Finding> lower(const ptx::Module& module) { return detail::ModuleLowerer(module).run(); }
}  // namespace ptxforge::emu
