#include "ptx/printer.h"

#include <fmt/format.h>

namespace ptxforge::ptx {

namespace {

void print_expr(std::string& out, const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::name:
    case Expr::Kind::integer:
    case Expr::Kind::floating:
    case Expr::Kind::string: out += e.text; return;
    case Expr::Kind::unary: out += e.text; print_expr(out, e.args[0]); return;
    case Expr::Kind::binary:
      print_expr(out, e.args[0]);
      // "a%b" would lex back as a and the register %b (ptxas reads it so too).
      if (e.text == "%") out += " % ";
      else out += e.text;
      print_expr(out, e.args[1]);
      return;
    case Expr::Kind::ternary:
      print_expr(out, e.args[0]);
      out += " ? ";
      print_expr(out, e.args[1]);
      out += " : ";
      print_expr(out, e.args[2]);
      return;
    case Expr::Kind::call:
      out += e.text;
      out += '(';
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i) out += ", ";
        print_expr(out, e.args[i]);
      }
      out += ')';
      return;
    case Expr::Kind::paren:
      out += '(';
      print_expr(out, e.args[0]);
      out += ')';
      return;
  }
}

void print_operand(std::string& out, const Operand& o) {
  auto list = [&](const char* open, const char* close) {
    out += open;
    for (size_t i = 0; i < o.elems.size(); ++i) {
      if (i) out += ", ";
      print_operand(out, o.elems[i]);
    }
    out += close;
  };
  switch (o.kind) {
    case Operand::Kind::expr: print_expr(out, o.expr); return;
    case Operand::Kind::vector: list("{", "}"); return;
    case Operand::Kind::address: list("[", "]"); return;
    case Operand::Kind::list: list("(", ")"); return;
    case Operand::Kind::sink: out += '_'; return;
  }
}

// Words of a kept-verbatim directive, spaced so they read naturally and lex back the same.
void print_words(std::string& out, const List<Text>& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    Text w = words[i];
    bool tight_before = w == "," || w == ")" || w == ";" || w == "]" || (w == "(" && i > 0 && words[i - 1] != ",");
    bool prev_open = i > 0 && (words[i - 1] == "(" || words[i - 1] == "[");
    if (i > 0 && !tight_before && !prev_open) out += ' ';
    out += w;
  }
}

void print_directive(std::string& out, const Directive& d, const std::string& indent) {
  if (d.name == "@@DWARF") {
    out += indent;
    out += d.args[0];
    out += '\n';
    return;
  }
  out += indent;
  out += d.name;
  if (d.name == ".target") {
    for (size_t i = 0; i < d.args.size(); ++i) {
      out += i ? ", " : " ";
      out += d.args[i];
    }
    out += '\n';
    return;
  }
  if (!d.args.empty()) {
    out += ' ';
    print_words(out, d.args);
  }
  bool needs_semicolon = d.name == ".pragma" || d.name == ".branchtargets" || d.name == ".callprototype" ||
                         d.name == ".calltargets" || d.name == ".alias";
  if (needs_semicolon) out += ';';
  if (d.name == ".section") {
    out += "\n" + indent + "{\n";
    for (auto& line : d.body) {
      out += indent;
      out += '\t';
      out += line;
      out += '\n';
    }
    out += indent + "}";
  }
  out += '\n';
}

void print_decl_specs(std::string& out, const VarDecl& d) {
  bool first = true;
  auto word = [&](std::string_view w) {
    if (!first) out += ' ';
    out += w;
    first = false;
  };
  for (auto& l : d.linkage) word(l);
  if (!d.space.empty()) word(d.space);
  if (!d.attrs.empty()) {
    std::string a;
    print_words(a, d.attrs);
    word(a);
  }
  if (d.align) word(fmt::format(".align {}", d.align));
  if (d.vec) word(fmt::format(".v{}", d.vec));
  word(d.type);
  if (d.ptr) {
    word(".ptr");
    if (!d.ptr_space.empty()) word(d.ptr_space);
    if (d.ptr_align) word(fmt::format(".align {}", d.ptr_align));
  }
}

void print_declarator(std::string& out, const Declarator& n) {
  out += n.name;
  if (n.range) out += fmt::format("<{}>", *n.range);
  for (auto& dim : n.dims) out += dim ? fmt::format("[{}]", *dim) : "[]";
  if (n.init) {
    out += " = ";
    print_operand(out, *n.init);
  }
}

void print_var_decl(std::string& out, const VarDecl& d) {
  print_decl_specs(out, d);
  for (size_t i = 0; i < d.names.size(); ++i) {
    out += i ? ", " : " ";
    print_declarator(out, d.names[i]);
  }
}

void print_instruction(std::string& out, const Instruction& ins) {
  if (ins.guard) out += fmt::format("@{}{} ", ins.guard->negated ? "!" : "", ins.guard->reg);
  out += ins.opcode;
  for (auto& m : ins.mods) out += m;
  for (size_t i = 0; i < ins.operands.size(); ++i) {
    out += i ? ", " : " ";
    print_operand(out, ins.operands[i]);
  }
  out += ';';
}

void print_block(std::string& out, const Block& b, const std::string& indent) {
  out += indent.substr(0, indent.size() - 1) + "{\n";
  for (auto& s : b.stmts) {
    std::visit(
        [&](auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, Instruction>) {
            out += indent;
            print_instruction(out, n);
            out += '\n';
          } else if constexpr (std::is_same_v<T, Label>) {
            out.append(indent, 0, indent.size() - 1);
            out += n.name;
            out += ":\n";
          } else if constexpr (std::is_same_v<T, VarDecl>) {
            out += indent;
            print_var_decl(out, n);
            out += ";\n";
          } else if constexpr (std::is_same_v<T, Directive>) {
            print_directive(out, n, indent);
          } else if constexpr (std::is_same_v<T, Block>) {
            print_block(out, n, indent + "\t");
          }
        },
        s.node);
  }
  out += indent.substr(0, indent.size() - 1) + "}\n";
}

void print_param_list(std::string& out, const List<VarDecl>& params, bool multiline) {
  out += "(";
  for (size_t i = 0; i < params.size(); ++i) {
    out += multiline ? "\n\t" : (i ? " " : "");
    print_var_decl(out, params[i]);
    if (i + 1 < params.size()) out += ",";
  }
  out += multiline && !params.empty() ? "\n)" : ")";
}

void print_function(std::string& out, const Function& f) {
  for (auto& l : f.linkage) {
    out += l;
    out += ' ';
  }
  out += f.is_entry ? ".entry" : ".func";
  if (!f.attrs.empty()) {
    out += ' ';
    print_words(out, f.attrs);
  }
  if (f.has_ret_list) {
    out += ' ';
    print_param_list(out, f.rets, false);
  }
  out += ' ';
  out += f.name;
  if (f.has_param_list) print_param_list(out, f.params, f.params.size() > 1);
  out += '\n';
  for (auto& p : f.perf) print_directive(out, p, "");
  if (f.body) {
    print_block(out, *f.body, "\t");
  } else {
    out += ";\n";
  }
}

}  // namespace

std::string print(const Expr& e) {
  std::string s;
  print_expr(s, e);
  return s;
}

std::string print(const Operand& o) {
  std::string s;
  print_operand(s, o);
  return s;
}

std::string print(const Instruction& ins) {
  std::string s;
  print_instruction(s, ins);
  return s;
}

std::string print(const VarDecl& d) {
  std::string s;
  print_var_decl(s, d);
  return s;
}

std::string print(const Directive& d) {
  std::string s;
  print_directive(s, d, "");
  return s;
}

std::string print(const Module& m) {
  std::string out;
  const TopItem* prev = nullptr;
  for (auto& it : m.items) {
    bool is_func = std::holds_alternative<Function>(it.node);
    if (prev && (is_func || std::holds_alternative<Function>(prev->node))) out += '\n';
    std::visit(
        [&](auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, Directive>) {
            print_directive(out, n, "");
          } else if constexpr (std::is_same_v<T, VarDecl>) {
            print_var_decl(out, n);
            out += ";\n";
          } else {
            print_function(out, n);
          }
        },
        it.node);
    prev = &it;
  }
  return out;
}

}  // namespace ptxforge::ptx
