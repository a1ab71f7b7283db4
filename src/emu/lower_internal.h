// Shared state of the lowering files (lower.cpp: module variables, functions, names and
// operands; lower_ops.cpp: one instruction at a time). Not part of the engine's interface.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "emu/lower.h"
#include "emu/program.h"
#include "ptx/ast.h"

namespace ptxforge::emu::detail {

DT dt_from_text(std::string_view t);

// The .sem and .scope of a memory instruction or fence from its modifiers (PTX ISA, "Memory
// Consistency Model": operation types and scopes); `strong_default` is the order an atom/red
// or fence has when none is written.
void memory_model_of(const ptx::Instruction& ins, Inst& out, MemOrder strong_default);

inline Finding finding_at(FindingKind kind, std::string message, PtxPos pos) {
  Finding f;
  f.kind = kind;
  f.message = std::move(message);
  f.pos = pos;
  return f;
}  // ".f32" -> DT::f32; DT::none when not a type the engine runs

// `elem` bytes times every dimension of a declarator (an unsized one, a[], counts as 0), or
// nullopt when the product passes 2^64: a size that hostile PTX can declare and no memory holds.
inline std::optional<uint64_t> declared_bytes(uint64_t elem, const ptx::List<std::optional<uint64_t>>& dims) {
  uint64_t size = elem;
  for (auto& dim : dims)
    if (__builtin_mul_overflow(size, dim ? *dim : 0, &size)) return std::nullopt;
  return size;
}

struct Sym {
  enum class Kind : uint8_t { reg, pred, frame, kparam, var, func };
  Kind kind = Kind::reg;
  uint32_t index = 0;       // slot / predicate slot / var / function
  uint32_t count = 1;       // vector registers: slots used (.v2/.v4)
  Space space = Space::local;
  uint64_t offset = 0;      // frame / kernel parameter offset
  DT type = DT::none;
};

// A constant expression's value.
struct ConstVal {
  bool is_float = false;
  bool is_f32_bits = false;  // 0fXXXXXXXX: exact f32 bits in `bits`
  bool is_f64_bits = false;  // 0dXXXX...: exact f64 bits
  uint64_t bits = 0;         // integer value (two's complement) or float bits
  double f = 0;              // decimal float literal
};

class ModuleLowerer;

// Lowers one function's body.
class FnLowerer {
 public:
  FnLowerer(ModuleLowerer& m, Function& out, const ptx::Function& src) : m_(m), fn_(out), src_(src) {}
  bool run();  // false: err() holds the finding
  Finding& err() { return err_; }

  // Operands (lower.cpp).
  bool fail(const ptx::Instruction& ins, std::string message);
  bool unsupported(const ptx::Instruction& ins);
  const Sym* lookup(std::string_view name) const;
  // A register, predicate, immediate or special register read as `type` (immediates converted).
  bool value(const ptx::Operand& o, DT type, Opnd& out, const ptx::Instruction& ins);
  bool dest(const ptx::Operand& o, Opnd& out, const ptx::Instruction& ins);
  bool pred_operand(const ptx::Operand& o, Opnd& out, const ptx::Instruction& ins);
  // [base + offset] for an access in `space`.
  bool address(const ptx::Operand& o, Space space, Inst& out, const ptx::Instruction& ins);
  static std::optional<ConstVal> eval(const ptx::Expr& e);
  std::optional<uint32_t> label(std::string_view name) const;

  // One instruction (lower_ops.cpp).
  bool lower_instruction(const ptx::Instruction& ins, Inst& out);

  ModuleLowerer& module() { return m_; }
  Function& fn() { return fn_; }

 private:
  bool declare(const ptx::VarDecl& d);
  bool walk(const ptx::Block& b);
  bool collect_labels(const ptx::Block& b, uint32_t& count);
  Opnd symbol_address(const Sym& s, Space want, bool* ok) const;

  ModuleLowerer& m_;
  Function& fn_;
  const ptx::Function& src_;
  Finding err_;
  struct Range {
    std::string_view prefix;
    uint32_t count;
    Sym base;
  };
  struct Scope {
    std::unordered_map<std::string_view, Sym> names;
    std::vector<Range> ranges;
  };
  std::vector<Scope> scopes_;
  std::unordered_map<std::string_view, uint32_t> labels_;
  uint32_t frame_end_ = 0;
  std::deque<std::string> owned_;  // names made here (vector register components)
};

class ModuleLowerer {
 public:
  explicit ModuleLowerer(const ptx::Module& m) : src_(m) {}
  std::variant<Program, Finding> run();

  const Sym* global(std::string_view name) const {
    auto it = globals_.find(name);
    return it == globals_.end() ? nullptr : &it->second;
  }
  Program& program() { return prog_; }
  // A .shared variable declared in a function body: laid out with the module's (nullopt: none).
  std::optional<uint32_t> body_shared(const ptx::Declarator* d) const {
    auto it = body_shared_.find(d);
    if (it == body_shared_.end()) return std::nullopt;
    return it->second;
  }
  uint64_t var_address(uint32_t var, Space want) const;  // in the var's own space, or generic

 private:
  bool layout_var(const ptx::VarDecl& d, Finding& err, bool in_body = false);
  bool init_var(ModuleVar& v, const ptx::VarDecl& d, const ptx::Operand& init, Finding& err);

  const ptx::Module& src_;
  Program prog_;
  std::unordered_map<std::string_view, Sym> globals_;
  std::vector<uint32_t> extern_shared_;
  std::unordered_map<const ptx::Declarator*, uint32_t> body_shared_;
  uint64_t global_end_ = 0;
  uint64_t var_bytes_ = 0;  // every module and body variable's bytes, against the memory limit
};

}  // namespace ptxforge::emu::detail
