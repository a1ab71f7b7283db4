#include "task/expr.h"

#include <cmath>
#include <fmt/format.h>

#include "util/text.h"

namespace ptxforge::task {

struct SizeExpr::Node {
  enum Kind { kNumber, kSymbol, kUnaryMinus, kBinary, kCall } kind;
  Number number;
  std::string name;  // symbol or function name
  char op = 0;       // + - * / %
  std::vector<std::shared_ptr<const Node>> args;
};

namespace {

using NodePtr = std::shared_ptr<const SizeExpr::Node>;

struct ParseError {
  size_t pos;
  std::string message;
};

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  NodePtr parse_all() {
    NodePtr n = sum();
    skip_space();
    if (pos_ < s_.size()) fail(fmt::format("unexpected '{}'", s_[pos_]));
    return n;
  }

 private:
  [[noreturn]] void fail(std::string message) { throw ParseError{pos_, std::move(message)}; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static NodePtr binary(char op, NodePtr a, NodePtr b) {
    auto n = std::make_shared<SizeExpr::Node>();
    n->kind = SizeExpr::Node::kBinary;
    n->op = op;
    n->args = {std::move(a), std::move(b)};
    return n;
  }
  NodePtr sum() {
    NodePtr n = product();
    for (;;) {
      if (eat('+')) n = binary('+', n, product());
      else if (eat('-')) n = binary('-', n, product());
      else return n;
    }
  }
  NodePtr product() {
    NodePtr n = unary();
    for (;;) {
      if (eat('*')) n = binary('*', n, unary());
      else if (eat('/')) n = binary('/', n, unary());
      else if (eat('%')) n = binary('%', n, unary());
      else return n;
    }
  }
  NodePtr unary() {
    if (eat('-')) {
      auto n = std::make_shared<SizeExpr::Node>();
      n->kind = SizeExpr::Node::kUnaryMinus;
      n->args = {unary()};
      return n;
    }
    if (eat('+')) return unary();
    return primary();
  }
  NodePtr primary() {
    skip_space();
    if (pos_ >= s_.size()) fail("expression ends too early");
    char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      NodePtr n = sum();
      if (!eat(')')) fail("expected ')'");
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
      std::string name(s_.substr(start, pos_ - start));
      auto n = std::make_shared<SizeExpr::Node>();
      if (eat('(')) {
        size_t name_pos = start;
        n->kind = SizeExpr::Node::kCall;
        n->name = name;
        if (!eat(')')) {
          do n->args.push_back(sum());
          while (eat(','));
          if (!eat(')')) fail("expected ',' or ')' in the arguments of '" + name + "'");
        }
        size_t want = name == "ceil_div" || name == "min" || name == "max" || name == "round_up" ? 2
                      : name == "log2" || name == "next_pow2"                                   ? 1
                                                                                                 : 0;
        if (want == 0) {
          pos_ = name_pos;
          std::string guess = closest_match(name, {"ceil_div", "min", "max", "round_up", "log2", "next_pow2"});
          fail(fmt::format("unknown function '{}'{}", name, guess.empty() ? "" : "; did you mean '" + guess + "'?"));
        }
        if (n->args.size() != want) {
          pos_ = name_pos;
          fail(fmt::format("'{}' takes {} argument{}, got {}", name, want, want == 1 ? "" : "s", n->args.size()));
        }
        return n;
      }
      n->kind = SizeExpr::Node::kSymbol;
      n->name = name;
      return n;
    }
    fail(fmt::format("unexpected '{}'", c));
  }
  NodePtr number() {
    size_t start = pos_;
    bool is_float = false;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E') {
        is_float = true;
        ++pos_;
        if ((c == 'e' || c == 'E') && pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
      } else if (c == '_') {
        ++pos_;  // 1_000_000
      } else {
        break;
      }
    }
    std::string digits;
    for (char c : s_.substr(start, pos_ - start))
      if (c != '_') digits += c;
    auto n = std::make_shared<SizeExpr::Node>();
    n->kind = SizeExpr::Node::kNumber;
    try {
      size_t used = 0;
      if (is_float) {
        n->number = {false, 0, std::stod(digits, &used)};
      } else {
        n->number = {true, static_cast<int64_t>(std::stoll(digits, &used)), 0};
      }
      if (used != digits.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      pos_ = start;
      fail(fmt::format("bad number '{}'", digits));
    }
    return n;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

Result<Number> eval(const SizeExpr::Node& n, const Bindings& env) {
  using N = SizeExpr::Node;
  switch (n.kind) {
    case N::kNumber:
      return n.number;
    case N::kSymbol: {
      auto it = env.find(n.name);
      if (it == env.end()) return Error{fmt::format("unknown size symbol '{}'", n.name)};
      double v = it->second;
      if (v == std::floor(v) && std::fabs(v) < 9.0e15) return Number{true, static_cast<int64_t>(v), 0};
      return Number{false, 0, v};
    }
    case N::kUnaryMinus: {
      auto a = eval(*n.args[0], env);
      if (!a) return a;
      return a->is_int ? Number{true, -a->i, 0} : Number{false, 0, -a->d};
    }
    case N::kBinary:
    case N::kCall:
      break;
  }
  std::vector<Number> v;
  for (auto& a : n.args) {
    auto r = eval(*a, env);
    if (!r) return r;
    v.push_back(*r);
  }
  bool ints = true;
  for (auto& x : v) ints = ints && x.is_int;
  auto as_int = [](int64_t i) { return Number{true, i, 0}; };
  auto as_float = [](double d) { return Number{false, 0, d}; };
  if (n.kind == N::kCall) {
    if (n.name == "min") return ints ? as_int(std::min(v[0].i, v[1].i)) : as_float(std::min(v[0].as_double(), v[1].as_double()));
    if (n.name == "max") return ints ? as_int(std::max(v[0].i, v[1].i)) : as_float(std::max(v[0].as_double(), v[1].as_double()));
    if (!ints) return Error{fmt::format("'{}' takes whole numbers", n.name)};
    if (n.name == "log2") {
      if (v[0].i <= 0) return Error{"log2 of a number that is not positive"};
      int64_t r = 0;
      while ((int64_t{1} << (r + 1)) <= v[0].i) ++r;
      return as_int(r);
    }
    if (n.name == "next_pow2") {
      int64_t r = 1;
      while (r < v[0].i) r <<= 1;
      return as_int(r);
    }
    if (v[1].i == 0) return Error{fmt::format("division by zero in '{}'", n.name)};
    int64_t q = (v[0].i + v[1].i - 1) / v[1].i;
    return as_int(n.name == "ceil_div" ? q : q * v[1].i);  // ceil_div or round_up
  }
  switch (n.op) {
    case '+': return ints ? as_int(v[0].i + v[1].i) : as_float(v[0].as_double() + v[1].as_double());
    case '-': return ints ? as_int(v[0].i - v[1].i) : as_float(v[0].as_double() - v[1].as_double());
    case '*': return ints ? as_int(v[0].i * v[1].i) : as_float(v[0].as_double() * v[1].as_double());
    case '/':
      if (ints) {
        if (v[1].i == 0) return Error{"division by zero"};
        return as_int(v[0].i / v[1].i);
      }
      return as_float(v[0].as_double() / v[1].as_double());
    case '%':
      if (!ints) return Error{"'%' takes whole numbers"};
      if (v[1].i == 0) return Error{"division by zero in '%'"};
      return as_int(v[0].i % v[1].i);
  }
  assert(false && "unknown operator");
  return Error{"internal: unknown operator"};
}

void collect_symbols(const SizeExpr::Node& n, std::vector<std::string>& out) {
  if (n.kind == SizeExpr::Node::kSymbol) {
    for (auto& s : out)
      if (s == n.name) return;
    out.push_back(n.name);
  }
  for (auto& a : n.args) collect_symbols(*a, out);
}

}  // namespace

Result<SizeExpr> SizeExpr::parse(std::string_view text) {
  try {
    SizeExpr e;
    e.root_ = Parser(text).parse_all();
    e.text_ = std::string(trim(text));
    return e;
  } catch (const ParseError& err) {
    return Error{fmt::format("in '{}' at column {}: {}", text, err.pos + 1, err.message)};
  }
}

Result<Number> SizeExpr::evaluate(const Bindings& symbols) const {
  if (!root_) return Error{"empty expression"};
  auto r = eval(*root_, symbols);
  if (!r) return Error{fmt::format("'{}': {}", text_, r.error().message)};
  return r;
}

Result<int64_t> SizeExpr::evaluate_int(const Bindings& symbols, bool allow_negative) const {
  auto r = evaluate(symbols);
  if (!r) return r.error();
  if (!r->is_int) {
    if (r->d != std::floor(r->d)) return Error{fmt::format("'{}' is {}, not a whole number", text_, r->d)};
    return static_cast<int64_t>(r->d);
  }
  if (r->i < 0 && !allow_negative) return Error{fmt::format("'{}' is negative ({})", text_, r->i)};
  return r->i;
}

std::vector<std::string> SizeExpr::symbols() const {
  std::vector<std::string> out;
  if (root_) collect_symbols(*root_, out);
  return out;
}

Result<Dim3Expr> Dim3Expr::parse(std::string_view text) {
  std::string_view t = trim(text);
  std::vector<std::string_view> parts;
  if (!t.empty() && t.front() == '(' && t.back() == ')') {
    // split on top-level commas only: `(ceil_div(n,256),1,1)`
    std::string_view inner = t.substr(1, t.size() - 2);
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= inner.size(); ++i) {
      if (i == inner.size() || (inner[i] == ',' && depth == 0)) {
        parts.push_back(inner.substr(start, i - start));
        start = i + 1;
      } else if (inner[i] == '(') {
        ++depth;
      } else if (inner[i] == ')') {
        --depth;
      }
    }
  } else {
    parts.push_back(t);
  }
  if (parts.empty() || parts.size() > 3)
    return Error{fmt::format("'{}' is not a shape: write (x, y, z), (x, y) or x", text)};
  Dim3Expr d;
  SizeExpr* slots[3] = {&d.x, &d.y, &d.z};
  for (size_t i = 0; i < 3; ++i) {
    auto e = SizeExpr::parse(i < parts.size() ? parts[i] : std::string_view("1"));
    if (!e) return e.error();
    *slots[i] = std::move(*e);
  }
  return d;
}

Result<std::array<int64_t, 3>> Dim3Expr::evaluate(const Bindings& symbols) const {
  std::array<int64_t, 3> out{};
  const SizeExpr* slots[3] = {&x, &y, &z};
  for (int i = 0; i < 3; ++i) {
    auto v = slots[i]->evaluate_int(symbols);
    if (!v) return v.error();
    if (*v < 1) return Error{fmt::format("'{}' evaluates to {}; a dimension must be at least 1", slots[i]->text(), *v)};
    out[i] = *v;
  }
  return out;
}

std::string Dim3Expr::text() const { return fmt::format("({}, {}, {})", x.text(), y.text(), z.text()); }

}  // namespace ptxforge::task
