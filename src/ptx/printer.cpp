#include "ptx/printer.h"

#include <cstring>

#include <fmt/format.h>

namespace ptxforge::ptx {

namespace {

void print_expr(std::string& out, const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::name: out += e.text; out += e.selector(); return;
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

bool loc_before(SourceLoc a, SourceLoc b) { return a.line < b.line || (a.line == b.line && a.col < b.col); }
bool known(SourceLoc l) { return l.line != 0; }

// Puts a module's comments back among the printed lines. Every printed line comes from a node
// with a source location (nodes a rewrite added have none): the comments before that location
// go on lines of their own above it, and those that followed code on a source line go at the
// end of the line printed from it. Section body lines have no locations, but their texts are
// views into the module's source, so their place in it is known.
class CommentPlacer {
 public:
  CommentPlacer(std::string& out, const Module* m) : out_(out) {
    if (m) comments_ = m->comments, source_ = m->source;
  }

  // The comments before `loc`, each on a line of its own.
  void above(SourceLoc loc, std::string_view indent) {
    if (!known(loc)) return;
    while (pending() && loc_before(peek().loc, loc)) put_own_line(indent);
  }
  // The comments that followed code before `next` (the source location of the next printed
  // line; unknown: only those on `from`'s own line), at the end of the line printed from `from`.
  void at_end(SourceLoc from, SourceLoc next) {
    if (!known(from)) return;
    while (pending() && !peek().own_line &&
           (known(next) ? loc_before(peek().loc, next) : peek().loc.line == from.line))
      if (!put_trailing()) break;
  }
  // The same for a section body line, whose place is where its text starts in the source.
  void above(Text line, std::string_view indent) {
    if (!in_source(line)) return;
    while (pending() && peek().text.data() < line.data()) put_own_line(indent);
  }
  void at_end(Text line) {
    if (!in_source(line)) return;
    const char* end = line.data() + line.size();
    while (pending() && peek().text.data() < end) ++next_;  // comments inside the line's text stay there
    while (pending() && !peek().own_line && !std::memchr(end, '\n', static_cast<size_t>(peek().text.data() - end)))
      if (!put_trailing()) break;
  }
  // Whatever is left: comments after the last node, or in a module with no nodes.
  void rest() {
    while (pending()) put_own_line("");
  }

 private:
  bool pending() const { return next_ < comments_.size(); }
  const Comment& peek() const { return comments_[next_]; }
  bool in_source(Text t) const {
    return pending() && !source_.empty() && t.data() >= source_.data() && t.data() <= source_.data() + source_.size();
  }
  void put_own_line(std::string_view indent) {
    out_ += indent;
    out_ += comments_[next_++].text;
    out_ += '\n';
  }
  // Appends the next comment to the current line; false once a line comment has ended it.
  bool put_trailing() {
    Text t = comments_[next_++].text;
    out_ += ' ';
    out_ += t;
    return !t.starts_with("//");
  }

  std::string& out_;
  List<Comment> comments_;
  Text source_;
  size_t next_ = 0;
};

void print_directive(std::string& out, const Directive& d, const std::string& indent, CommentPlacer& c,
                     SourceLoc next) {
  c.above(d.loc, indent);
  if (d.name == "@@DWARF") {  // the line runs to its end: nothing may follow it
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
  } else if (!d.args.empty()) {
    out += ' ';
    print_words(out, d.args);
  }
  bool needs_semicolon = d.name == ".pragma" || d.name == ".branchtargets" || d.name == ".callprototype" ||
                         d.name == ".calltargets" || d.name == ".alias";
  if (needs_semicolon) out += ';';
  if (d.name == ".section") {
    c.at_end(d.loc, {});
    out += "\n" + indent + "{\n";
    std::string inner = indent + "\t";
    for_each_section_line(d, [&](Text line) {
      c.above(line, inner);
      out += inner;
      out += line;
      c.at_end(line);
      out += '\n';
    });
    c.above(d.end, inner);
    out += indent + "}";
    c.at_end(d.end, next);
  } else {
    c.at_end(d.loc, next);
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

// Where a statement's printed line comes from: a guarded instruction begins at its guard.
SourceLoc statement_loc(const Statement& s) {
  return s.visit([](auto& n) {
    if constexpr (std::is_same_v<std::decay_t<decltype(n)>, Instruction>) return n.guard ? n.guard->loc : n.loc;
    else return n.loc;
  });
}

// `indent` is the statements'; braces and labels go one tab out.
void print_block(std::string& out, const Block& b, const std::string& indent, CommentPlacer& c, SourceLoc next) {
  std::string outer = indent.substr(0, indent.size() - 1);
  c.above(b.loc, outer);
  out += outer + "{";
  c.at_end(b.loc, b.stmts.empty() ? b.end : statement_loc(b.stmts[0]));
  out += '\n';
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    const Statement& s = b.stmts[i];
    SourceLoc loc = statement_loc(s);
    SourceLoc after = i + 1 < b.stmts.size() ? statement_loc(b.stmts[i + 1]) : b.end;
    s.visit([&](auto& n) {
      using T = std::decay_t<decltype(n)>;
      if constexpr (std::is_same_v<T, Directive>) {
        print_directive(out, n, indent, c, after);
      } else if constexpr (std::is_same_v<T, Block>) {
        print_block(out, n, indent + "\t", c, after);
      } else {
        c.above(loc, indent);
        if constexpr (std::is_same_v<T, Instruction>) {
          out += indent;
          print_instruction(out, n);
        } else if constexpr (std::is_same_v<T, Label>) {
          out += outer;
          out += n.name;
          out += ':';
        } else {
          out += indent;
          print_var_decl(out, n);
          out += ';';
        }
        c.at_end(loc, after);
        out += '\n';
      }
    });
  }
  c.above(b.end, indent);
  out += outer + "}";
  c.at_end(b.end, next);
  out += '\n';
}

void print_param_list(std::string& out, const List<VarDecl>& params, bool multiline, CommentPlacer& c,
                      SourceLoc next) {
  if (!multiline) {  // comments inside go after the line
    out += "(";
    for (size_t i = 0; i < params.size(); ++i) {
      if (i) out += ", ";
      print_var_decl(out, params[i]);
    }
    out += ")";
    return;
  }
  out += "(\n";
  for (size_t i = 0; i < params.size(); ++i) {
    c.above(params[i].loc, "\t");
    out += '\t';
    print_var_decl(out, params[i]);
    if (i + 1 < params.size()) out += ",";
    c.at_end(params[i].loc, i + 1 < params.size() ? params[i + 1].loc : next);
    out += '\n';
  }
  out += ")";
}

void print_function(std::string& out, const Function& f, CommentPlacer& c, SourceLoc next) {
  c.above(known(f.start) ? f.start : f.loc, "");
  for (auto& l : f.linkage) {
    out += l;
    out += ' ';
  }
  out += f.is_entry ? ".entry" : ".func";
  if (!f.attrs.empty()) {
    out += ' ';
    print_words(out, f.attrs);
  }
  // Where the line after the header comes from.
  SourceLoc after_header = !f.perf.empty() ? f.perf[0].loc : f.body ? f.body->loc : next;
  if (f.has_ret_list) {
    out += ' ';
    print_param_list(out, f.rets, false, c, after_header);
  }
  out += ' ';
  out += f.name;
  if (f.has_param_list) print_param_list(out, f.params, f.params.size() > 1, c, after_header);
  c.at_end(f.loc, after_header);
  out += '\n';
  for (size_t i = 0; i < f.perf.size(); ++i)
    print_directive(out, f.perf[i], "", c, i + 1 < f.perf.size() ? f.perf[i + 1].loc : f.body ? f.body->loc : next);
  if (f.body) {
    print_block(out, *f.body, "\t", c, next);
  } else {
    out += ";\n";
  }
}

SourceLoc item_loc(const TopItem& it) {
  return std::visit(
      [](auto& n) {
        if constexpr (std::is_same_v<std::decay_t<decltype(n)>, Function>) return known(n.start) ? n.start : n.loc;
        else return n.loc;
      },
      it.node);
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
  CommentPlacer none(s, nullptr);
  print_directive(s, d, "", none, {});
  return s;
}

std::string print(const Module& m) {
  std::string out;
  CommentPlacer c(out, &m);
  for (size_t i = 0; i < m.items.size(); ++i) {
    const TopItem& it = m.items[i];
    bool is_func = std::holds_alternative<Function>(it.node);
    if (i > 0 && (is_func || std::holds_alternative<Function>(m.items[i - 1].node))) out += '\n';
    SourceLoc next = i + 1 < m.items.size() ? item_loc(m.items[i + 1]) : SourceLoc{};
    std::visit(
        [&](auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, Directive>) {
            print_directive(out, n, "", c, next);
          } else if constexpr (std::is_same_v<T, VarDecl>) {
            c.above(n.loc, "");
            print_var_decl(out, n);
            out += ';';
            c.at_end(n.loc, next);
            out += '\n';
          } else {
            print_function(out, n, c, next);
          }
        },
        it.node);
  }
  c.rest();
  return out;
}

}  // namespace ptxforge::ptx
