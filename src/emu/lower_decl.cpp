// Lowering, a function's declarations and body: registers (ranges, vectors, predicates) to
// slots, .local and .param variables and a func's parameters to frame offsets, entry
// parameters to the kernel parameter buffer, labels to instruction indices, and the
// instructions in order with their guards.
#include <fmt/format.h>

#include "emu/limits.h"
#include "emu/lower_internal.h"

namespace ptxforge::emu::detail {

namespace {

uint32_t type_bytes(std::string_view type) {
  int b = dt_bits(dt_from_text(type));
  return b <= 8 ? 1 : static_cast<uint32_t>(b / 8);
}

}  // namespace


bool FnLowerer::declare(const ptx::VarDecl& d) {
  auto& scope = scopes_.back();
  DT t = dt_from_text(d.type);
  if (d.space == ".reg") {
    uint32_t width = d.vec ? d.vec : 1;
    for (auto& n : d.names) {
      Sym s;
      s.kind = t == DT::pred ? Sym::Kind::pred : Sym::Kind::reg;
      s.type = t;
      uint32_t& counter = t == DT::pred ? fn_.preds : fn_.slots;
      uint32_t count = n.range ? *n.range : 1;
      if (uint64_t{counter} + uint64_t{count} * width > limits::kMaxRegisterSlots) {
        err_ = finding_at(FindingKind::limit, "too many registers for the CPU engine", {n.loc.line, n.loc.col});
        return false;
      }
      s.index = counter;
      s.count = width;
      if (n.range) scope.ranges.push_back({n.name, count, s});
      else scope.names[n.name] = s;
      counter += count * width;
      if (width > 1 && !n.range) {  // %v.x / %v.r ...: one slot per component
        static const char* comp[4][2] = {{".x", ".r"}, {".y", ".g"}, {".z", ".b"}, {".w", ".a"}};
        for (uint32_t i = 0; i < width && i < 4; ++i)
          for (auto c : comp[i]) {
            Sym e = s;
            e.index += i;
            e.count = 1;
            scope.names[owned_.emplace_back(std::string(n.name) + c)] = e;
          }
      }
    }
    return true;
  }
  if (d.space == ".local" || d.space == ".param") {
    uint32_t elem = type_bytes(d.type) * (d.vec ? d.vec : 1);
    uint32_t align = std::max<uint32_t>(d.align ? d.align : elem, 1);
    for (auto& n : d.names) {
      uint64_t size = declared_bytes(elem, n.dims).value_or(UINT64_MAX);
      if (n.init) {
        err_ = finding_at(FindingKind::unsupported, "not supported by the CPU engine: an initialised .local variable",
                {n.loc.line, n.loc.col});
        return false;
      }
      uint64_t off = (uint64_t{frame_end_} + align - 1) / align * align;
      if (size > limits::kMaxLocalPerThread || off + size > limits::kMaxLocalPerThread) {
        err_ = finding_at(FindingKind::limit, "a frame larger than the CPU engine's .local limit", {n.loc.line, n.loc.col});
        return false;
      }
      frame_end_ = static_cast<uint32_t>(off + size);
      fn_.frame_align = std::max(fn_.frame_align, align);
      Sym s;
      s.kind = Sym::Kind::frame;
      s.space = d.space == ".local" ? Space::local : Space::param;
      s.offset = off;
      s.type = t;
      scope.names[n.name] = s;
    }
    return true;
  }
  if (d.space == ".shared") {
    for (auto& n : d.names) {
      auto index = m_.body_shared(&n);
      if (!index) return fail(ptx::Instruction{}, "a .shared variable the module layout missed");
      Sym s;
      s.kind = Sym::Kind::var;
      s.index = *index;
      scope.names[n.name] = s;
    }
    return true;
  }
  if (d.space == ".global" || d.space == ".const") {
    err_ = finding_at(FindingKind::unsupported,
            fmt::format("not supported by the CPU engine: a {} variable declared inside a function", d.space),
            {d.loc.line, d.loc.col});
    return false;
  }
  err_ = finding_at(FindingKind::unsupported, fmt::format("not supported by the CPU engine: {} variables", d.space),
          {d.loc.line, d.loc.col});
  return false;
}

bool FnLowerer::collect_labels(const ptx::Block& b, uint32_t& count) {
  for (auto& st : b.stmts) {
    if (auto* l = st.get_if<ptx::Label>()) labels_[l->name] = count;
    else if (st.is<ptx::Instruction>()) ++count;
    else if (auto* inner = st.get_if<ptx::Block>()) collect_labels(*inner, count);
  }
  return count <= limits::kMaxInstructions;
}

bool FnLowerer::walk(const ptx::Block& b) {
  scopes_.emplace_back();
  for (auto& st : b.stmts)
    if (auto* d = st.get_if<ptx::VarDecl>())
      if (!declare(*d)) return false;
  for (auto& st : b.stmts) {
    if (auto* ins = st.get_if<ptx::Instruction>()) {
      Inst out;
      out.line = ins->loc.line;
      out.col = ins->loc.col;
      if (ins->guard) {
        const Sym* s = lookup(ins->guard->reg);
        if (!s || s->kind != Sym::Kind::pred) return fail(*ins, "guard is not a predicate");
        out.guard = static_cast<int32_t>(s->index);
        out.guard_neg = ins->guard->negated;
      }
      if (!lower_instruction(*ins, out)) return false;
      fn_.code.push_back(out);
      fn_.opcodes.push_back(ins->full_opcode());
    } else if (auto* inner = st.get_if<ptx::Block>()) {
      if (!walk(*inner)) return false;
    }
  }
  scopes_.pop_back();
  return true;
}

bool FnLowerer::run() {
  fn_.name = std::string(src_.name);
  fn_.is_entry = src_.is_entry;
  scopes_.emplace_back();
  // Parameters: an entry's in the kernel parameter buffer, a func's (and its returns) in its frame.
  // The kernel's parameter buffer is bounded by the most any GPU accepts, a func's parameters by
  // the per-thread frame limit: the harness builds a parameter's bytes at its declared size.
  auto place = [&](const ptx::VarDecl& d, std::vector<ParamSlot>& slots, bool kernel) {
    uint32_t elem = type_bytes(d.type) * (d.vec ? d.vec : 1);
    for (auto& n : d.names) {
      uint64_t size = declared_bytes(elem, n.dims).value_or(UINT64_MAX);
      uint32_t align = std::max<uint32_t>(d.align ? d.align : elem, 1);
      uint32_t& end = kernel ? fn_.param_bytes : frame_end_;
      uint64_t off = (uint64_t{end} + align - 1) / align * align;
      uint64_t max = kernel ? limits::kMaxKernelParamBytes : limits::kMaxLocalPerThread;
      if (size > max || off + size > max) {
        err_ = finding_at(FindingKind::limit,
                          kernel ? fmt::format("kernel parameters larger than {} bytes, the most a GPU accepts", max)
                                 : std::string("a frame larger than the CPU engine's .local limit"),
                          {n.loc.line, n.loc.col});
        return false;
      }
      end = static_cast<uint32_t>(off + size);
      slots.push_back({static_cast<uint32_t>(off), static_cast<uint32_t>(size)});
      Sym s;
      s.kind = kernel ? Sym::Kind::kparam : Sym::Kind::frame;
      s.space = Space::param;
      s.offset = off;
      s.type = dt_from_text(d.type);
      scopes_.back().names[n.name] = s;
      if (d.space == ".reg") {  // a .reg parameter of a .func: a register the call fills
        s.kind = Sym::Kind::reg;
      }
    }
    return true;
  };
  for (auto& p : src_.params)
    if (!place(p, fn_.params, src_.is_entry)) return false;
  for (auto& r : src_.rets)
    if (!place(r, fn_.rets, false)) return false;
  for (auto& p : src_.params)
    if (p.space == ".reg") return fail(ptx::Instruction{}, "not supported by the CPU engine: .reg parameters");
  if (!src_.body) {
    fn_.declared_only = true;
    return true;
  }
  uint32_t count = 0;
  if (!collect_labels(*src_.body, count)) {
    err_ = finding_at(FindingKind::limit, "too many instructions for the CPU engine", {src_.loc.line, src_.loc.col});
    return false;
  }
  if (!walk(*src_.body)) return false;
  // Falling off the end of a body returns; line 0 marks the instruction as not written.
  Inst end;
  end.op = Op::ret;
  fn_.code.push_back(end);
  fn_.opcodes.push_back("ret");
  fn_.frame_bytes = (frame_end_ + 15) / 16 * 16;
  return true;
}

}  // namespace ptxforge::emu::detail
