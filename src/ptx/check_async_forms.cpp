// Rules on the shape of an opcode that hold across the Hopper and Blackwell families (wgmma,
// the bulk and tensor copies, mbarrier, fence, barrier.cluster, ld/stmatrix, mapa, redux,
// multimem, cluster launch control, setmaxnreg, elect, griddepcontrol, packed .f32x2 arithmetic
// and the narrow-float cvt): a modifier written twice, the number of type modifiers, a
// predicate register used as an address, the operation word of barrier.cluster, the memory
// order and scope pairs of fence and mbarrier, and the grammar of clusterlaunchcontrol. These
// are the mistakes one-line edits of real kernels make (rules_forms_test.cpp proves each class
// against ptxas 13.0: "Multiple .X modifiers specified", "Unexpected instruction types",
// "Modifier '.release' requires scope", ".proxykind modifier required", ...).
#include <array>
#include <string>
#include <vector>

#include "ptx/check_async_internal.h"

namespace ptxforge::ptx::async_rules {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool one_of(std::string_view m, std::initializer_list<std::string_view> l) {
  for (auto x : l)
    if (m == x) return true;
  return false;
}

bool packed_type(std::string_view t) {
  return one_of(t, {".e4m3x2", ".e5m2x2", ".e2m1x2", ".e2m3x2", ".e3m2x2", ".ue8m0x2", ".e4m3x4", ".e5m2x4", ".e2m1x4",
                    ".e2m3x4", ".e3m2x4", ".f16x2", ".bf16x2"});
}

// How many type modifiers the instruction takes: 0 when this file does not judge it.
int types_wanted(std::string_view fam, const Instruction& ins) {
  if (fam == "wgmma.mma_async" || fam == "wgmma.mma_async.sp") return 3;
  if (fam == "cvt") return 2;
  if (fam == "mapa" || fam == "redux.sync" || starts(fam, "mbarrier.") || starts(fam, "multimem.") ||
      fam == "cp.reduce.async.bulk" || fam == "add" || fam == "sub" || fam == "mul" || fam == "fma" ||
      fam == "movmatrix")
    return 1;
  if (fam == "ldmatrix" || fam == "stmatrix") {
    for (auto& m : ins.mods)
      if (starts(m, ".b8x16")) return 0;  // the decompressing forms name their formats as types
    return 1;
  }
  return 0;
}

// The families whose opcodes this file judges; add/sub/mul/fma only in their .f32x2 form, cvt
// only to or from a packed type.
bool judged(std::string_view fam, const Instruction& ins, const Resolved& r) {
  static constexpr std::array<std::string_view, 8> kPrefixes = {
      "wgmma.", "cp.async.bulk", "cp.reduce.async.bulk", "tensormap.", "mbarrier.", "clusterlaunchcontrol.",
      "multimem.", "prefetch"};
  for (auto p : kPrefixes)
    if (starts(fam, p)) return true;
  if (one_of(fam, {"setmaxnreg", "elect.sync", "fence", "ldmatrix", "stmatrix", "movmatrix", "griddepcontrol",
                   "redux.sync", "mapa", "barrier.cluster"}))
    return true;
  if (one_of(fam, {"add", "sub", "mul", "fma"})) return ins.has_mod(".f32x2");
  if (fam == "cvt") {
    // One to or from a packed type; and any cvt written with a single type.
    int n = 0;
    for (size_t i = r.consumed; i < ins.mods.size(); ++i) n += is_type_name(ins.mods[i]);
    return n == 1 || packed_type(r.type) || packed_type(r.src_type);
  }
  return false;
}

// A modifier written twice ("Multiple .aligned modifiers specified", "Duplicate .acquire
// modifier", "Unexpected instruction types" for a repeated type). ptxas takes a repeated
// .sync, .satfinite and .NaN, and a repeated .relu on cvt; types of the multi-type families
// are counted by types() instead.
bool repeated(CheckContext& ctx, const Instruction& ins, std::string_view fam) {
  bool multi_type = fam == "cvt" || starts(fam, "wgmma.mma_async");
  for (size_t i = 1; i < ins.mods.size(); ++i) {
    std::string_view m = ins.mods[i];
    if (m == ".sync" || m == ".satfinite" || m == ".NaN") continue;
    if (fam == "cvt" && m == ".relu") continue;
    if (multi_type && is_type_name(m)) continue;
    for (size_t j = 0; j < i; ++j) {
      if (ins.mods[j] != m) continue;
      auto& d = at_opcode(ctx, ins, fmt::format("'{}' names '{}' twice", ins.full_opcode(), m), "illegal-modifier");
      d.hint = fmt::format("write '{}' once", m);
      return true;
    }
  }
  return false;
}

bool types(CheckContext& ctx, const Instruction& ins, const Resolved& r, std::string_view fam) {
  int want = types_wanted(fam, ins);
  if (!want) return false;
  std::vector<std::string_view> have;
  for (size_t i = r.consumed; i < ins.mods.size(); ++i)
    if (is_type_name(ins.mods[i])) have.push_back(ins.mods[i]);
  if (static_cast<int>(have.size()) == want) return false;
  if (have.empty() && fam == "cvt") return false;  // check_operands.cpp: missing-type
  std::string op = ins.full_opcode();
  std::string list;
  for (auto t : have) list += t;
  const char* what = want == 1 ? "one type" : want == 2 ? "two types (destination, then source)"
                                                        : "three types (D, then A and B)";
  auto& d = at_opcode(ctx, ins,
                      have.empty() ? fmt::format("'{}' needs a type", op)
                                   : fmt::format("'{}' takes {}, found {} ({})", op, what, have.size(), list),
                      have.empty() ? "missing-type" : static_cast<int>(have.size()) < want ? "missing-type"
                                                                                          : "illegal-modifier");
  if (want == 1) {
    std::string allowed;
    for (auto t : split(r.family->types, ' '))
      if (!t.empty()) allowed += (allowed.empty() ? "" : " ") + std::string(t);
    d.hint = allowed.empty() ? std::string("write one type") : fmt::format("write one of: {}", allowed);
  } else {
    d.hint = want == 2 ? "write cvt<.rnd>.<dtype>.<atype>, e.g. cvt.rn.bf16x2.f32"
                       : "write wgmma.mma_async.sync.aligned.<shape>.<dtype>.<atype>.<btype>, e.g. .f32.bf16.bf16";
  }
  return true;
}

// [%p1]: ptxas "Illegal to use symbol '%p1' of type .pred as address operand". (A tensor
// operand [tmap, {coordinates}] is not judged: ptxas takes a predicate as its tensor map.)
void pred_addresses(CheckContext& ctx, const Instruction& ins) {
  for (auto& o : ins.operands) {
    if (o.kind != Operand::Kind::address || o.elems.size() != 1 || o.elems[0].kind != Operand::Kind::expr) continue;
    const Expr* e = &o.elems[0].expr;
    if (e->kind == Expr::Kind::binary && !e->args.empty()) e = &e->args[0];
    const SymbolInfo* s = reg_of(ctx, *e);
    if (!s || s->type != ".pred") continue;
    auto& d = at_operand(ctx, o, fmt::format("'{}' is a predicate: an address is an integer register or a variable",
                                             e->text),
                         "operand-type");
    d.hint = "address through a .b32 (shared) or .b64 register";
  }
}

// barrier.cluster.{arrive,wait}: the operation comes first ("Not a name of any known
// instruction: 'barrier.cluster'" without it, "Unknown modifier '.arrive'" after another).
void barrier_cluster(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  size_t at = ins.mods.size();
  for (size_t i = r.consumed; i < ins.mods.size(); ++i)
    if (ins.mods[i] == ".arrive" || ins.mods[i] == ".wait") {
      at = i;
      break;
    }
  if (at == r.consumed && at < ins.mods.size()) {
    if (ins.has_mod(".arrive") && ins.has_mod(".wait")) {
      auto& d = at_opcode(ctx, ins, "'barrier.cluster' is either .arrive or .wait, not both", "illegal-modifier");
      d.hint = "write barrier.cluster.arrive; and barrier.cluster.wait; as two instructions";
    }
    return;
  }
  auto& d = at_opcode(ctx, ins,
                      at == ins.mods.size() ? "'barrier.cluster' needs its operation: .arrive or .wait"
                                            : fmt::format("'{}': the operation {} comes right after barrier.cluster",
                                                          ins.full_opcode(), ins.mods[at]),
                      at == ins.mods.size() ? "missing-modifier" : "illegal-modifier");
  d.hint = "write barrier.cluster.arrive{.release|.relaxed}{.aligned}; or barrier.cluster.wait{.acquire}{.aligned};";
}

bool is_sem(std::string_view m) { return one_of(m, {".sc", ".acq_rel", ".acquire", ".release", ".relaxed"}); }
bool is_scope(std::string_view m) { return one_of(m, {".cta", ".cluster", ".gpu", ".sys"}); }

// fence: a memory order needs a scope; fence.proxy needs a proxy kind, and the alias/async
// kinds take no order; fence.mbarrier_init is exactly .release.cluster.
void fence(CheckContext& ctx, const Instruction& ins) {
  std::string_view sem, scope;
  for (auto& m : ins.mods) {
    if (is_sem(m)) sem = m;
    if (is_scope(m)) scope = m;
    if (m.find("restrict") != std::string_view::npos) return;  // sync_restrict/op_restrict forms: left to ptxas
  }
  std::string op = ins.full_opcode();
  auto report = [&](std::string msg, const char* id, std::string hint) {
    auto& d = at_opcode(ctx, ins, std::move(msg), id);
    d.hint = std::move(hint);
  };
  if (ins.has_mod(".mbarrier_init")) {
    if (sem != ".release" || scope != ".cluster")
      report(fmt::format("'{}': fence.mbarrier_init is written .release.cluster", op),
             sem.empty() || scope.empty() ? "missing-modifier" : "illegal-modifier",
             "write fence.mbarrier_init.release.cluster;");
    return;
  }
  if (ins.has_mod(".proxy")) {
    bool tensormap = ins.has_mod(".tensormap::generic");
    bool plain = ins.has_mod(".alias") || ins.has_mod(".async");
    bool generic = false;
    for (auto& m : ins.mods) generic |= starts(m, ".async::generic");
    if (!tensormap && !plain && !generic) {
      report(fmt::format("'{}' names no proxy kind", op), "missing-modifier",
             "write fence.proxy.async{.global|.shared::cta|.shared::cluster}; or fence.proxy.alias;");
      return;
    }
    if (tensormap && sem != ".release" && sem != ".acquire") {
      report(fmt::format("'{}': the tensormap proxy fence is a .release or an .acquire", op),
             sem.empty() ? "missing-modifier" : "illegal-modifier",
             "write fence.proxy.tensormap::generic.release.gpu; (or .acquire.gpu [tmap], 128;)");
      return;
    }
    if (tensormap && sem == ".acquire") {  // "No state space qualifier expected" (the release form takes one)
      for (auto& m : ins.mods)
        if (is_space(m) || m == ".shared") {
          report(fmt::format("'{}': the acquiring tensormap proxy fence takes no state space ({})", op, m), "state-space",
                 "write fence.proxy.tensormap::generic.acquire.gpu [tmap], 128; (or .release.gpu;)");
          return;
        }
    }
    // The release form takes no operands; the acquire form names the tensor map and its size, 128.
    if (tensormap && sem == ".release" && !ins.operands.empty()) {
      report(fmt::format("'{}' takes no operands: only the .acquire form names [tmap], 128", op), "operand-count",
             "write fence.proxy.tensormap::generic.release.gpu;");
      return;
    }
    if (tensormap && sem == ".acquire" && ins.operands.size() == 2)
      if (auto v = literal(ins.operands[1]); v && *v != 128) {
        auto& d = at_operand(ctx, ins.operands[1],
                             fmt::format("'{}' covers a whole tensor map: the size is 128, not {}", op, *v),
                             "immediate-value");
        d.hint = "write 128";
        return;
      }
    if (plain && !tensormap && !generic && (!sem.empty() || !scope.empty())) {
      report(fmt::format("'{}': fence.proxy.{} takes no memory order or scope", op,
                         ins.has_mod(".alias") ? "alias" : "async"),
             "illegal-modifier", "write fence.proxy.async.shared::cta; (orders the generic and async proxies)");
      return;
    }
    int spaces = 0;
    for (auto& m : ins.mods) spaces += is_space(m) || m == ".shared";
    if (spaces > 1) {
      report(fmt::format("'{}' names more than one state space", op), "state-space",
             "write one: fence.proxy.async.shared::cta; (or .global, .shared::cluster), or none for all");
      return;
    }
    if (ins.has_mod(".async") && ins.has_mod(".shared")) {
      report(fmt::format("'{}': fence.proxy.async names .shared::cta or .shared::cluster, not .shared", op),
             "state-space", "write fence.proxy.async.shared::cta;");
      return;
    }
  }
  if (!sem.empty() && scope.empty())
    report(fmt::format("'{}': the memory order {} needs a scope", op, sem), "missing-modifier",
           fmt::format("add .cta, .cluster, .gpu or .sys: {}.gpu", op));
}

// mbarrier: one address operand ("Arguments mismatch" for a second); .expect_tx on arrive and
// .parity on the waits come right after the operation word ("Unknown modifier '.expect_tx'").
bool mbarrier_shape(CheckContext& ctx, const Instruction& ins, const Resolved& r, std::string_view fam) {
  std::string op = ins.full_opcode();
  int addresses = 0;
  for (auto& o : ins.operands) {
    if (o.kind != Operand::Kind::address) continue;
    if (++addresses < 2) continue;
    auto& d = at_operand(ctx, o, fmt::format("'{}' takes one address, the mbarrier's", op), "operand-kind");
    d.hint = "the other operands are registers or immediates (a state, a count, a phase parity)";
    return true;
  }
  std::string_view word = fam == "mbarrier.arrive" || fam == "mbarrier.arrive_drop" ? ".expect_tx"
                          : fam == "mbarrier.try_wait" || fam == "mbarrier.test_wait" ? ".parity"
                                                                                       : "";
  if (word.empty() || !ins.has_mod(word) || (r.consumed < ins.mods.size() && ins.mods[r.consumed] == word)) return false;
  auto& d = at_opcode(ctx, ins, fmt::format("'{}': {} comes right after {}", op, word, fam), "illegal-modifier");
  d.hint = fmt::format("write {}{}{{.sem.scope}}.shared::cta.b64", fam, word);
  return true;
}

// mbarrier: a memory order and a scope come together ("Modifier '.release' requires scope",
// "Modifier '.cta' requires order").
void mbarrier_order(CheckContext& ctx, const Instruction& ins) {
  std::string_view sem, scope;
  for (auto& m : ins.mods) {
    if (is_sem(m)) sem = m;
    if (is_scope(m)) scope = m;
  }
  if (sem.empty() == scope.empty()) return;
  std::string op = ins.full_opcode();
  auto& d = at_opcode(ctx, ins,
                      sem.empty() ? fmt::format("'{}': the scope {} goes with a memory order", op, scope)
                                  : fmt::format("'{}': the memory order {} needs a scope", op, sem),
                      "missing-modifier");
  d.hint = sem.empty() ? fmt::format("write .release{} (arrive) or .acquire{} (waits), or drop {}", scope, scope, scope)
                       : fmt::format("write {}.cta or {}.cluster", sem, sem);
}

// clusterlaunchcontrol.try_cancel.async{.shared::cta}.mbarrier::complete_tx::bytes
//     {.multicast::cluster::all}.b128 [addr], [mbar];
// clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, response;
// clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {x, y, z, _}, response;
// clusterlaunchcontrol.query_cancel.get_first_ctaid::{x,y,z}.b32.b128 r, response;
void cluster_launch_control(CheckContext& ctx, const Instruction& ins, const Resolved& r, std::string_view fam) {
  std::string op = ins.full_opcode();
  bool cancel = fam == "clusterlaunchcontrol.try_cancel";
  const char* form = cancel ? "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 "
                              "[response], [mbar];"
                            : "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p, %response; or "
                              ".get_first_ctaid::x.b32.b128 %r, %response; or .get_first_ctaid.v4.b32.b128 "
                              "{%x, %y, %z, _}, %response;";
  for (size_t i = r.consumed; i < ins.mods.size(); ++i) {
    std::string_view m = ins.mods[i];
    bool ok = cancel ? one_of(m, {".async", ".shared::cta", ".mbarrier::complete_tx::bytes", ".multicast::cluster::all",
                                  ".b128"})
                     : one_of(m, {".is_canceled", ".get_first_ctaid", ".get_first_ctaid::x", ".get_first_ctaid::y",
                                  ".get_first_ctaid::z", ".v4", ".pred", ".b32", ".b128"});
    if (ok) continue;
    bool space = m == ".shared::cluster" || m == ".shared" || m == ".global";
    auto& d = at_opcode(ctx, ins, space ? fmt::format("'{}': the response and the mbarrier are in .shared::cta", op)
                                        : fmt::format("'{}' does not take the modifier '{}'", op, m),
                        space ? "state-space" : "unknown-modifier");
    d.hint = fmt::format("write {}", form);
    return;
  }
  auto need = [&](std::string_view m, const char* id) {
    if (ins.has_mod(m)) return false;
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' needs '{}'", op, m), id);
    d.hint = fmt::format("write {}", form);
    return true;
  };
  if (cancel) {
    if (need(".async", "missing-modifier") || need(".mbarrier::complete_tx::bytes", "missing-modifier") ||
        need(".b128", "missing-type"))
      return;
    if (ins.operands.size() != 2 || ins.operands[0].kind != Operand::Kind::address ||
        ins.operands[1].kind != Operand::Kind::address) {
      auto& d = at_opcode(ctx, ins, fmt::format("'{}' takes two addresses: [response], [mbar]", op), "operand-count");
      d.hint = fmt::format("write {}", form);
    }
    return;
  }
  int words = ins.has_mod(".is_canceled") + ins.has_mod(".get_first_ctaid") + ins.has_mod(".get_first_ctaid::x") +
              ins.has_mod(".get_first_ctaid::y") + ins.has_mod(".get_first_ctaid::z");
  if (words != 1) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' asks one question: .is_canceled or .get_first_ctaid", op),
                        words ? "illegal-modifier" : "missing-modifier");
    d.hint = fmt::format("write {}", form);
    return;
  }
  bool pred = ins.has_mod(".is_canceled"), v4 = ins.has_mod(".get_first_ctaid");
  std::string_view want = pred ? ".pred.b128" : v4 ? ".v4.b32.b128" : ".b32.b128";
  std::string have;
  for (auto& m : ins.mods)
    if (m == ".v4" || m == ".pred" || m == ".b32" || m == ".b128") have += m;
  // The response type .b128 comes last ("Unexpected instruction types" otherwise).
  bool same = ins.mods.back() == ".b128" && ins.has_mod(".v4") == v4 && ins.has_mod(".pred") == pred &&
              ins.has_mod(".b32") == !pred;
  if (!same) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' is typed {}, not '{}'", op, want, have), "illegal-modifier");
    d.hint = fmt::format("write {}", form);
    return;
  }
  if (ins.operands.size() != 2) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' takes 2 operands, found {}", op, ins.operands.size()), "operand-count");
    d.hint = fmt::format("write {}", form);
    return;
  }
  const Operand& out = ins.operands[0];
  const Operand& resp = ins.operands[1];
  if (v4) {
    if (out.kind != Operand::Kind::vector || out.elems.size() != 4) {
      auto& d = at_operand(ctx, out, fmt::format("'{}' writes a vector of four .b32 registers", op), "vector-width");
      d.hint = "write {%x, %y, %z, _}";
    } else {
      for (auto& e : out.elems)
        if (const SymbolInfo* s = reg_of(ctx, e); s && type_bits(s->type) != 32) {
          auto& d = at_operand(ctx, e, fmt::format("'{}' writes 32-bit coordinates; '{}' is {}", op, e.expr.text, s->type),
                               "operand-type");
          d.hint = "write {%x, %y, %z, _} with .b32 registers";
          break;
        }
    }
  } else if (out.kind != Operand::Kind::expr) {
    auto& d = at_operand(ctx, out, fmt::format("'{}' writes one {} register", op, pred ? "predicate" : ".b32"),
                         "operand-kind");
    d.hint = fmt::format("write {}", form);
  } else if (const SymbolInfo* s = reg_of(ctx, out); s && (pred ? s->type != ".pred" : type_bits(s->type) != 32)) {
    auto& d = at_operand(ctx, out, fmt::format("'{}' writes a {}; '{}' is {}", op, pred ? "predicate" : "32-bit value",
                                               out.expr.text, s->type),
                         "operand-type");
    d.hint = fmt::format("write {}", form);
  }
  if (const SymbolInfo* s = resp.kind == Operand::Kind::expr ? reg_of(ctx, resp) : nullptr; s && s->type != ".b128") {
    auto& d = at_operand(ctx, resp, fmt::format("the response of '{}' is a .b128 register; '{}' is {}", op,
                                                resp.expr.text, s->type),
                         "operand-type");
    d.hint = "load the response written by try_cancel into a .b128 register: ld.shared.b128 %q, [response];";
  } else if (resp.kind != Operand::Kind::expr) {
    auto& d = at_operand(ctx, resp, fmt::format("the response of '{}' is a .b128 register", op), "operand-kind");
    d.hint = "load it first: ld.shared.b128 %q, [response];";
  }
}

// ldmatrix/stmatrix/movmatrix name their shape ("Shape modifier required"), ld/stmatrix their
// matrix count once (".num modifier required"); movmatrix moves
// 32-bit registers ("Arguments mismatch" for 16- or 64-bit ones; ptxas takes a predicate).
void matrix_shape(CheckContext& ctx, const Instruction& ins, std::string_view fam) {
  std::string op = ins.full_opcode();
  bool shape = false;
  for (auto& m : ins.mods) shape |= one_of(m, {".m8n8", ".m16n16", ".m8n16", ".m16n8"});
  if (!shape) {
    auto& d = at_opcode(ctx, ins, fmt::format("'{}' names no shape", op), "missing-modifier");
    d.hint = fmt::format("write {}.sync.aligned.m8n8...", fam);
    return;
  }
  if (fam != "movmatrix") {
    // The matrix count ("'.num' modifier required"), once.
    int nums = 0;
    for (auto& m : ins.mods) nums += one_of(m, {".x1", ".x2", ".x4"});
    if (nums != 1) {
      auto& d = at_opcode(ctx, ins,
                          nums ? fmt::format("'{}' names more than one matrix count", op)
                               : fmt::format("'{}' names no matrix count (.x1, .x2 or .x4)", op),
                          nums ? "illegal-modifier" : "missing-modifier");
      d.hint = fmt::format("write {}.sync.aligned.m8n8.x4...: .x4 moves four 8x8 matrices", fam);
    }
    return;
  }
  for (auto& o : ins.operands)
    if (const SymbolInfo* s = reg_of(ctx, o); s && type_bits(s->type) != 32 && type_kind(s->type) != 'p') {
      auto& d = at_operand(ctx, o, fmt::format("'{}' moves 32-bit registers; '{}' is {}", op, o.expr.text, s->type),
                           "operand-type");
      d.hint = "use .b32 registers (two .f16/.bf16 packed in each)";
      return;
    }
}

}  // namespace

void check_async_forms(CheckContext& ctx, const Instruction& ins, const Resolved& r) {
  std::string_view fam = r.family->name;
  if (starts(fam, "tcgen05.") || !judged(fam, ins, r)) return;  // tcgen05: check_tcgen05.cpp
  pred_addresses(ctx, ins);
  if (repeated(ctx, ins, fam) || types(ctx, ins, r, fam)) return;
  if (fam == "barrier.cluster") barrier_cluster(ctx, ins, r);
  else if (fam == "fence") fence(ctx, ins);
  else if (starts(fam, "mbarrier.")) {
    if (!mbarrier_shape(ctx, ins, r, fam)) mbarrier_order(ctx, ins);
  } else if (fam == "ldmatrix" || fam == "stmatrix" || fam == "movmatrix") matrix_shape(ctx, ins, fam);
  else if (starts(fam, "clusterlaunchcontrol.")) cluster_launch_control(ctx, ins, r, fam);
}

}  // namespace ptxforge::ptx::async_rules
