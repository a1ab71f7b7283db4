// The kernel generator: each family is a function from the random stream and a dtype to a
// Draft (a source with $NAME where the symbol goes, and the knobs chosen). Sources are
// written as templates with $VARS filled in (see fill), then tidied so that optional pieces
// leave no blank lines behind. Every draw is sequenced in its own statement: the order in
// which C++ evaluates function arguments is unspecified, and the output must not depend on it.
#include "data/generator.h"

#include <fmt/format.h>

#include <cassert>
#include <initializer_list>
#include <set>
#include <string_view>
#include <utility>

namespace ptxforge::data {
namespace {

// splitmix64 (Vigna): the same numbers everywhere, unlike std::uniform_int_distribution.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int range(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1)); }
  bool chance(int percent) { return static_cast<int>(next() % 100) < percent; }
  template <typename T>
  T pick(std::initializer_list<T> items) { return items.begin()[next() % items.size()]; }
  template <typename T>
  void shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[next() % i]);
  }

 private:
  uint64_t state_;
};

// Deals a shuffled round of every item before repeating one, so a short run can't miss a
// family or a dtype by bad luck.
template <typename T>
class Deck {
 public:
  explicit Deck(std::vector<T> items) : items_(std::move(items)), pos_(items_.size()) {}
  T draw(Rng& rng) {
    if (pos_ == items_.size()) {
      rng.shuffle(items_);
      pos_ = 0;
    }
    return items_[pos_++];
  }

 private:
  std::vector<T> items_;
  size_t pos_;
};

// ---- dtypes -------------------------------------------------------------------------------

enum class DType { f32, f64, i32, f16, bf16, fp8 };
struct TypeInfo {
  const char* tag;
  const char* ctype;
  const char* acc;  // what arithmetic is done in
  int bytes;
};
constexpr TypeInfo kTypes[] = {{"f32", "float", "float", 4},   {"f64", "double", "double", 8},
                               {"i32", "int", "int", 4},       {"f16", "__half", "float", 2},
                               {"bf16", "__nv_bfloat16", "float", 2}, {"fp8", "__nv_fp8_e4m3", "float", 1}};
const TypeInfo& info(DType t) { return kTypes[static_cast<int>(t)]; }
std::string tag(DType t) { return info(t).tag; }
std::string ctype(DType t) { return info(t).ctype; }
std::string acc_of(DType t) { return info(t).acc; }

// Conversions through float only: every one of them exists for sm_80 in CUDA 12 and 13.
std::string to_acc(DType t, const std::string& x) {
  switch (t) {
    case DType::f16: return "__half2float(" + x + ")";
    case DType::bf16: return "__bfloat162float(" + x + ")";
    case DType::fp8: return "static_cast<float>(" + x + ")";
    default: return x;
  }
}
// `v`, of accumulator type `acc`, stored as a `t`.
std::string store_as(DType t, const std::string& acc, const std::string& v) {
  const std::string x = acc == acc_of(t) ? v : fmt::format("static_cast<{}>({})", acc_of(t), v);
  switch (t) {
    case DType::f16: return "__float2half_rn(" + x + ")";
    case DType::bf16: return "__float2bfloat16_rn(" + x + ")";
    case DType::fp8: return "__nv_fp8_e4m3(" + x + ")";
    default: return x;
  }
}
std::string headers(std::initializer_list<DType> types) {
  bool f16 = false, bf16 = false, fp8 = false;
  for (DType t : types) {
    f16 = f16 || t == DType::f16;
    bf16 = bf16 || t == DType::bf16;
    fp8 = fp8 || t == DType::fp8;
  }
  return std::string(f16 ? "#include <cuda_fp16.h>\n" : "") + (bf16 ? "#include <cuda_bf16.h>\n" : "") +
         (fp8 ? "#include <cuda_fp8.h>\n" : "");
}
std::string zero(const std::string& acc) { return acc == "float" ? "0.0f" : acc == "double" ? "0.0" : "0"; }
std::string one(const std::string& acc) { return acc == "float" ? "1.0f" : acc == "double" ? "1.0" : "1"; }
std::string lowest(const std::string& acc) {
  return acc == "float" ? "-3.402823466e+38f" : acc == "double" ? "-1.7976931348623157e+308" : "(-2147483647 - 1)";
}
std::string highest(const std::string& acc) {
  return acc == "float" ? "3.402823466e+38f" : acc == "double" ? "1.7976931348623157e+308" : "2147483647";
}
// A math function for the accumulator type: fn("float", "fmax") is "fmaxf".
std::string fn(const std::string& acc, const std::string& base) { return acc == "float" ? base + "f" : base; }
// A small exact constant (a multiple of 1/8), parenthesised when negative.
std::string constant(Rng& rng, const std::string& acc) {
  const int sign = rng.chance(30) ? -1 : 1;
  if (acc == "int") {
    const int k = sign * rng.range(1, 9);
    return k < 0 ? fmt::format("({})", k) : std::to_string(k);
  }
  const int k = sign * rng.range(1, 40);
  const std::string s = fmt::format("{:.3f}{}", k / 8.0, acc == "float" ? "f" : "");
  return k < 0 ? "(" + s + ")" : s;
}

// ---- vectors ------------------------------------------------------------------------------

bool has_native_vector(DType t, int w) {
  switch (t) {
    case DType::f32:
    case DType::i32: return w == 2 || w == 4;
    case DType::f64:
    case DType::f16:
    case DType::bf16: return w == 2;
    default: return false;
  }
}
std::string vec_type(DType t, int w, bool native) {
  if (native && has_native_vector(t, w)) {
    switch (t) {
      case DType::f32: return w == 2 ? "float2" : "float4";
      case DType::i32: return w == 2 ? "int2" : "int4";
      case DType::f64: return "double2";
      case DType::f16: return "__half2";
      default: return "__nv_bfloat162";
    }
  }
  return fmt::format("vec_{}x{}", tag(t), w);
}
// The aligned struct a vector load goes through when CUDA has no vector type for it.
std::string vec_def(DType t, int w, bool native) {
  if (w == 1 || (native && has_native_vector(t, w))) return "";
  return fmt::format("struct __align__({}) vec_{}x{} {{\n  {} v[{}];\n}};\n", info(t).bytes * w, tag(t), w, ctype(t), w);
}
std::string lane(const std::string& var, DType t, int w, bool native, int l) {
  if (w == 1) return var;
  if (native && has_native_vector(t, w)) return var + "." + "xyzw"[l];
  return fmt::format("{}.v[{}]", var, l);
}

// ---- text ---------------------------------------------------------------------------------

using Params = std::map<std::string, std::string>;
using Vars = std::map<std::string, std::string>;

struct Draft {
  std::string stem;    // the name without its index
  std::string source;  // $NAME where the kernel's symbol goes
  Params params;
  std::vector<std::string> entries{""};  // suffixes of the extern "C" kernels after the name
};

// Replaces $UPPERCASE placeholders; a multi-line value takes the indentation of its line.
// $NAME is left for generate_kernels to fill once the name is known.
std::string fill(std::string_view tmpl, const Vars& vars) {
  std::string out;
  for (size_t i = 0; i < tmpl.size();) {
    if (tmpl[i] != '$') {
      out += tmpl[i++];
      continue;
    }
    size_t j = i + 1;
    while (j < tmpl.size() && ((tmpl[j] >= 'A' && tmpl[j] <= 'Z') || (tmpl[j] >= '0' && tmpl[j] <= '9'))) ++j;
    const std::string key(tmpl.substr(i + 1, j - i - 1));
    auto it = vars.find(key);
    assert(it != vars.end() || key == "NAME");
    if (it == vars.end()) {
      out.append(tmpl.substr(i, j - i));  // nvcc rejects a leftover $, so a test would notice
    } else {
      const size_t line_start = out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1;
      size_t k = line_start;
      while (k < out.size() && out[k] == ' ') ++k;
      const std::string pad = out.substr(line_start, k - line_start);
      std::string_view v = it->second;
      while (!v.empty() && v.back() == '\n') v.remove_suffix(1);
      for (char c : v) {
        out += c;
        if (c == '\n') out += pad;
      }
    }
    i = j;
  }
  return out;
}

// Drops blank lines inside braces, runs of blank lines, and trailing blanks: what optional
// template pieces leave behind when they are empty.
std::string tidy(const std::string& text) {
  std::string out;
  int depth = 0;
  bool last_blank = true;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    const bool blank = line.find_first_not_of(' ') == std::string::npos;
    if (blank && (depth > 0 || last_blank)) continue;
    out += blank ? "" : line;
    out += '\n';
    last_blank = blank;
    for (char c : line) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
  }
  while (out.size() > 1 && out[out.size() - 2] == '\n') out.pop_back();
  return out;
}

std::string indent(const std::string& code, int spaces) {
  std::string out;
  size_t start = 0;
  while (start < code.size()) {
    size_t end = code.find('\n', start);
    if (end == std::string::npos) end = code.size();
    if (end > start) out += std::string(spaces, ' ');
    out.append(code, start, end - start);
    out += '\n';
    start = end + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// "#pragma unroll" lines: -1 none, 0 plain (full unroll where the trip count is known), N.
std::string unroll_line(int u) { return u < 0 ? "" : u == 0 ? "#pragma unroll\n" : fmt::format("#pragma unroll {}\n", u); }

// ---- knobs every family shares -------------------------------------------------------------

struct Knobs {
  bool restrict_ = false;
  std::string bounds;  // "" or "__launch_bounds__(...) "
  std::string idx;     // the index type
};
Knobs draw_knobs(Rng& rng, int threads, std::initializer_list<const char*> idx_types, Params& p) {
  Knobs k;
  k.restrict_ = rng.chance(60);
  const bool bounds = rng.chance(50);
  const int min_blocks = rng.pick({1, 1, 2, 4});
  if (bounds && min_blocks > 1 && threads * min_blocks <= 2048)
    k.bounds = fmt::format("__launch_bounds__({}, {}) ", threads, min_blocks);
  else if (bounds)
    k.bounds = fmt::format("__launch_bounds__({}) ", threads);
  k.idx = rng.pick(idx_types);
  p["block"] = std::to_string(threads);
  p["restrict"] = k.restrict_ ? "yes" : "no";
  p["launch_bounds"] = k.bounds.empty() ? "no" : k.bounds.substr(18, k.bounds.size() - 20);
  p["index_type"] = k.idx;
  return k;
}
std::string restrict_of(const Knobs& k) { return k.restrict_ ? " __restrict__" : ""; }
// A shared-memory row's padding: " + 1", or nothing for none.
std::string plus(int pad) { return pad ? fmt::format(" + {}", pad) : ""; }

// A loop of `v` over [offset, limit) spread across the grid: grid-stride (with an optional
// unroll pragma), or `unroll` chunks of one block's width per thread with a bounds check.
struct Loop {
  bool grid_stride = true;
  int unroll = -1;  // grid-stride: the pragma; otherwise the items per thread (>= 1)
  std::string idx = "int";
  std::string block = "blockDim.x";
};
std::string grid_loop(const Loop& l, const std::string& v, const std::string& offset, const std::string& limit,
                      const std::string& body) {
  const std::string& t = l.idx;
  if (l.grid_stride)
    return fmt::format("{0}for ({1} {2} = {3}({1})blockIdx.x * ({1}){4} + threadIdx.x; {2} < {5}; {2} += ({1})gridDim.x * ({1}){4}) {{\n{6}}}\n",
                       unroll_line(l.unroll), t, v, offset, l.block, limit, indent(body, 2));
  if (l.unroll <= 1)
    return fmt::format("if (const {0} {1} = {2}({0})blockIdx.x * ({0}){3} + threadIdx.x; {1} < {4}) {{\n{5}}}\n", t, v,
                       offset, l.block, limit, indent(body, 2));
  return fmt::format(
      "#pragma unroll\nfor (int k = 0; k < {6}; ++k) {{\n  if (const {0} {1} = {2}(({0})blockIdx.x * {6} + k) * ({0}){3} + threadIdx.x; {1} < {4}) {{\n{5}  }}\n}}\n",
      t, v, offset, l.block, limit, indent(body, 4), l.unroll);
}
Loop draw_loop(Rng& rng, const std::string& idx, const std::string& block, Params& p) {
  Loop l;
  l.grid_stride = rng.chance(55);
  l.unroll = l.grid_stride ? rng.pick({-1, 1, 2, 4, 8}) : rng.pick({1, 2, 4, 8});
  l.idx = idx;
  l.block = block;
  p["grid_stride"] = l.grid_stride ? "yes" : "no";
  p[l.grid_stride ? "unroll" : "items_per_thread"] = std::to_string(l.unroll);
  return l;
}

// ---- element-wise -------------------------------------------------------------------------

// Random expression trees over x0..x{inputs-1} (and `alpha` when the kernel takes a scalar).
class ExprGen {
 public:
  ExprGen(Rng& rng, std::string type, int inputs, bool scalar, bool fast)
      : rng_(rng), type_(std::move(type)), inputs_(inputs), scalar_(scalar), fast_(fast) {}

  std::string build(int depth) {
    std::string e = node(depth);
    for (int k = 0; k < inputs_; ++k) {
      if (used_ & (1u << k)) continue;
      const bool packed = type_ == "__half2" || type_ == "__nv_bfloat162";
      const char* op = packed ? rng_.pick({"__hadd2", "__hmul2", "__hsub2"}) : rng_.pick({"+", "-", "*"});
      e = packed ? fmt::format("{}({}, x{})", op, e, k) : fmt::format("({} {} x{})", e, op, k);
    }
    return e;
  }

 private:
  std::string leaf() {
    const int r = rng_.range(0, 99);
    if (r < 15) {
      const std::string c = constant(rng_, type_ == "int" ? "int" : "float");
      if (type_ == "__half2") return "__float2half2_rn(" + c + ")";
      if (type_ == "__nv_bfloat162") return "__float2bfloat162_rn(" + c + ")";
      return type_ == "double" ? constant(rng_, "double") : c;
    }
    if (scalar_ && r < 27) return "alpha";
    const int k = rng_.range(0, inputs_ - 1);
    used_ |= 1u << k;
    return fmt::format("x{}", k);
  }
  std::string node(int depth) {
    if (depth <= 0 || rng_.chance(20)) return leaf();
    if (type_ == "int") return int_node(depth);
    if (type_ == "float" || type_ == "double") return float_node(depth);
    return packed_node(depth);
  }
  std::string float_node(int depth) {
    const std::string& t = type_;
    const bool f = t == "float" && fast_;
    const std::string a = node(depth - 1);
    switch (rng_.range(0, 15)) {
      case 0: { const std::string b = node(depth - 1); return fmt::format("({} + {})", a, b); }
      case 1: { const std::string b = node(depth - 1); return fmt::format("({} - {})", a, b); }
      case 2: { const std::string b = node(depth - 1); return fmt::format("({} * {})", a, b); }
      case 3: {
        const std::string b = node(depth - 1);
        const std::string c = node(depth - 1);
        return fmt::format("{}({}, {}, {})", fn(t, "fma"), a, b, c);
      }
      case 4: { const std::string b = node(depth - 1); return fmt::format("{}({}, {})", fn(t, "fmin"), a, b); }
      case 5: { const std::string b = node(depth - 1); return fmt::format("{}({}, {})", fn(t, "fmax"), a, b); }
      case 6: return select(a, depth);
      case 7: return f ? fmt::format("__expf({})", a) : fmt::format("{}({})", fn(t, "exp"), a);
      case 8:
        if (f) return fmt::format("__logf(fabsf({}) + 1.0f)", a);
        return fmt::format("{}({}({}))", fn(t, "log1p"), fn(t, "fabs"), a);
      case 9: return fmt::format("{}({}({}))", fn(t, "sqrt"), fn(t, "fabs"), a);
      case 10: return fmt::format("{}({}({}) + {})", fn(t, "rsqrt"), fn(t, "fabs"), a, one(t));
      case 11: return fmt::format("{}({})", fn(t, "tanh"), a);
      case 12: return fmt::format("{}({})", fn(t, "fabs"), a);
      case 13: {
        const std::string b = node(depth - 1);
        if (f) return fmt::format("__fdividef({}, fabsf({}) + 1.0f)", a, b);
        return fmt::format("({} / ({}({}) + {}))", a, fn(t, "fabs"), b, one(t));
      }
      case 14: return f ? fmt::format("__sinf({})", a) : fmt::format("{}({})", fn(t, "cos"), a);
      default: return fmt::format("({} / ({} + {}(-{})))", one(t), one(t), f ? "__expf" : fn(t, "exp"), a);
    }
  }
  std::string int_node(int depth) {
    const std::string a = node(depth - 1);
    switch (rng_.range(0, 14)) {
      case 0: { const std::string b = node(depth - 1); return fmt::format("({} + {})", a, b); }
      case 1: { const std::string b = node(depth - 1); return fmt::format("({} - {})", a, b); }
      case 2: { const std::string b = node(depth - 1); return fmt::format("({} * {})", a, b); }
      case 3: { const std::string b = node(depth - 1); return fmt::format("min({}, {})", a, b); }
      case 4: { const std::string b = node(depth - 1); return fmt::format("max({}, {})", a, b); }
      case 5: return select(a, depth);
      case 6: { const std::string b = node(depth - 1); return fmt::format("({} ^ {})", a, b); }
      case 7: { const std::string b = node(depth - 1); return fmt::format("({} & {})", a, b); }
      case 8: { const std::string b = node(depth - 1); return fmt::format("({} | {})", a, b); }
      case 9: return fmt::format("({} >> {})", a, rng_.range(1, 7));
      case 10: return fmt::format("__popc({})", a);
      case 11: return fmt::format("__clz({})", a);
      case 12: { const std::string b = node(depth - 1); return fmt::format("__mulhi({}, {})", a, b); }
      case 13: return fmt::format("abs({})", a);
      default: return fmt::format("static_cast<int>(__brev(static_cast<unsigned>({})))", a);
    }
  }
  std::string packed_node(int depth) {
    const std::string a = node(depth - 1);
    switch (rng_.range(0, 7)) {
      case 0: { const std::string b = node(depth - 1); return fmt::format("__hadd2({}, {})", a, b); }
      case 1: { const std::string b = node(depth - 1); return fmt::format("__hsub2({}, {})", a, b); }
      case 2: { const std::string b = node(depth - 1); return fmt::format("__hmul2({}, {})", a, b); }
      case 3: {
        const std::string b = node(depth - 1);
        const std::string c = node(depth - 1);
        return fmt::format("__hfma2({}, {}, {})", a, b, c);
      }
      case 4: { const std::string b = node(depth - 1); return fmt::format("__hmax2({}, {})", a, b); }
      case 5: { const std::string b = node(depth - 1); return fmt::format("__hmin2({}, {})", a, b); }
      case 6: return fmt::format("__habs2({})", a);
      default: return fmt::format("__hneg2({})", a);
    }
  }
  std::string select(const std::string& a, int depth) {
    const std::string b = node(depth - 1);
    const std::string c = node(depth - 1);
    const std::string d = node(depth - 1);
    const char* cmp = rng_.pick({">", "<", ">=", "<=", "=="});
    return fmt::format("({} {} {} ? {} : {})", a, cmp, b, c, d);
  }

  Rng& rng_;
  std::string type_;
  int inputs_;
  bool scalar_, fast_;
  unsigned used_ = 0;
};

Draft make_elementwise(Rng& rng, DType in) {
  Draft d;
  Params& p = d.params;
  DType out = in;
  if (rng.chance(in == DType::fp8 ? 50 : 25))
    out = rng.pick({DType::f32, DType::f16, DType::bf16, DType::fp8, DType::f64, DType::i32});
  const std::string acc = acc_of(in);
  const int inputs = rng.range(1, 3);
  const int w = (in == DType::f64 || out == DType::f64) ? rng.pick({1, 2}) : rng.pick({1, 2, 4});
  const bool native = rng.chance(70);
  const bool packed = w == 2 && native && in == out && (in == DType::f16 || in == DType::bf16) && rng.chance(60);
  const bool fast = acc == "float" && rng.chance(50);
  const bool scalar = !packed && rng.chance(30);
  const bool helper = packed || rng.chance(70);
  const char* inl = rng.pick({"__forceinline__", "__forceinline__", "inline", "__noinline__"});
  const int depth = rng.range(1, 4);
  const int block = rng.pick({64, 128, 256, 256, 512, 1024});
  const Knobs k = draw_knobs(rng, block, {"int", "long long", "unsigned", "size_t"}, p);
  const Loop loop = draw_loop(rng, k.idx, "blockDim.x", p);
  const std::string h2 = in == DType::f16 ? "__half2" : "__nv_bfloat162";
  ExprGen gen(rng, packed ? h2 : acc, inputs, scalar, fast);
  const std::string expr = gen.build(depth);
  const std::string R = restrict_of(k);
  const std::vector<std::string> names = {"a", "b", "c"};

  auto conv = [&](const std::string& v) { return packed ? v : store_as(out, acc, v); };
  // Statements computing one element from the inputs' values `xs` into `target`.
  auto assign = [&](const std::string& target, const std::vector<std::string>& xs) {
    if (helper) return fmt::format("{} = {};\n", target, conv("ew_op(" + join(xs, ", ") + (scalar ? ", alpha)" : ")")));
    std::string s = "{\n";
    for (int i = 0; i < inputs; ++i) s += fmt::format("  const {} x{} = {};\n", acc, i, xs[i]);
    return s + fmt::format("  {} = {};\n}}\n", target, conv(expr));
  };
  auto scalar_body = [&](const std::string& j) {
    std::vector<std::string> xs;
    for (int i = 0; i < inputs; ++i) {
      const std::string x = names[i] + "[" + j + "]";
      xs.push_back(!packed ? to_acc(in, x) : in == DType::f16 ? "__half2half2(" + x + ")" : "__bfloat162bfloat162(" + x + ")");
    }
    if (!packed) return assign("out[" + j + "]", xs);
    const std::string low = in == DType::f16 ? "__low2half" : "__low2bfloat16";
    return fmt::format("out[{}] = {}(ew_op({}));\n", j, low, join(xs, ", "));
  };

  std::string body;
  if (w == 1) {
    body = grid_loop(loop, "i", "", "n", scalar_body("i"));
  } else {
    const std::string vin = vec_type(in, w, native), vout = vec_type(out, w, native);
    body = fmt::format("const {} nvec = n / {};\n", k.idx, w);
    for (int i = 0; i < inputs; ++i)
      body += fmt::format("const {0}*{1} {2}_v = reinterpret_cast<const {0}*>({2});\n", vin, R, names[i]);
    body += fmt::format("{0}*{1} out_v = reinterpret_cast<{0}*>(out);\n", vout, R);
    std::string vb;
    if (packed) {
      std::vector<std::string> xs;
      for (int i = 0; i < inputs; ++i) xs.push_back(names[i] + "_v[i]");
      vb = fmt::format("out_v[i] = ew_op({});\n", join(xs, ", "));
    } else {
      for (int i = 0; i < inputs; ++i) vb += fmt::format("const {} v{} = {}_v[i];\n", vin, names[i], names[i]);
      vb += vout + " vo;\n";
      for (int l = 0; l < w; ++l) {
        std::vector<std::string> xs;
        for (int i = 0; i < inputs; ++i) xs.push_back(to_acc(in, lane("v" + names[i], in, w, native, l)));
        vb += assign(lane("vo", out, w, native, l), xs);
      }
      vb += "out_v[i] = vo;\n";
    }
    body += grid_loop(loop, "i", "", "nvec", vb);
    Loop tail = loop;
    tail.unroll = loop.grid_stride ? -1 : 1;
    body += grid_loop(tail, "j", fmt::format("nvec * {} + ", w), "n", scalar_body("j"));
  }

  std::vector<std::string> args, params;
  for (int i = 0; i < inputs; ++i) {
    args.push_back(fmt::format("{} x{}", packed ? h2 : acc, i));
    params.push_back(fmt::format("const {}*{} {}", ctype(in), R, names[i]));
  }
  if (scalar) args.push_back(acc + " alpha");
  params.push_back(fmt::format("{}*{} out", ctype(out), R));
  if (scalar) params.push_back(acc + " alpha");
  params.push_back(k.idx + " n");
  const std::string op = helper ? fmt::format("static __device__ {} {} ew_op({}) {{\n  return {};\n}}\n", inl,
                                              packed ? h2 : acc, join(args, ", "), expr)
                                : "";
  const std::string vecs = vec_def(in, w, native) + (out == in ? "" : vec_def(out, w, native));
  d.source = fill(R"($HEADERS

$VECS

$OP

extern "C" __global__ void $LB$NAME($PARAMS) {
  $BODY
}
)",
                  {{"HEADERS", headers({in, out})}, {"VECS", vecs}, {"OP", op}, {"LB", k.bounds},
                   {"PARAMS", join(params, ", ")}, {"BODY", body}});
  p["dtype"] = tag(in);
  p["out_dtype"] = tag(out);
  p["inputs"] = std::to_string(inputs);
  p["vector_width"] = std::to_string(w);
  p["native_vectors"] = w > 1 && native ? "yes" : "no";
  p["packed_math"] = packed ? "yes" : "no";
  p["fast_math"] = fast ? "yes" : "no";
  p["expression"] = helper ? std::string("function ") + inl : "inline";
  p["scalar_arg"] = scalar ? "yes" : "no";
  p["depth"] = std::to_string(depth);
  d.stem = fmt::format("ew_{}{}_v{}_u{}", tag(in), out == in ? "" : "_to_" + tag(out), w, std::max(loop.unroll, 1));
  return d;
}

// ---- reductions ---------------------------------------------------------------------------

std::string combine_of(const std::string& op, const std::string& acc) {
  if (op == "max") return acc == "int" ? "max(a, b)" : fn(acc, "fmax") + "(a, b)";
  if (op == "min") return acc == "int" ? "min(a, b)" : fn(acc, "fmin") + "(a, b)";
  return "a + b";
}
std::string identity_of(const std::string& op, const std::string& acc) {
  return op == "max" ? lowest(acc) : op == "min" ? highest(acc) : zero(acc);
}

Draft make_reduction(Rng& rng, DType t) {
  Draft d;
  Params& p = d.params;
  const std::string op = rng.pick({"sum", "sum", "max", "min", "sumsq", "abssum"});
  const bool additive = op == "sum" || op == "sumsq" || op == "abssum";
  std::string acc = acc_of(t);
  if (t == DType::f32 && additive && rng.chance(25)) acc = "double";
  const int block = rng.pick({64, 128, 256, 256, 512, 1024});
  const std::string strategy = acc == "int" ? rng.pick({"tree", "tree_warp", "shfl", "cg", "redux", "redux"})
                                            : rng.pick({"tree", "tree_warp", "shfl", "shfl", "cg"});
  const bool xor_shuffle = rng.chance(50);
  const int w = t == DType::f64 ? rng.pick({1, 2}) : rng.pick({1, 2, 4});
  const bool native = rng.chance(60);
  const Knobs k = draw_knobs(rng, block, {"int", "long long", "size_t"}, p);
  const Loop loop = draw_loop(rng, k.idx, "kBlock", p);
  const bool atomic_ok = additive || acc == "int";
  const bool atomic = atomic_ok && rng.chance(50);
  const bool finalize = !atomic && rng.chance(50);
  const std::string R = restrict_of(k);

  std::string warp;
  if (strategy == "redux") {
    warp = fmt::format("return __reduce_{}_sync(0xffffffffu, v);", additive ? "add" : op);
  } else if (strategy == "cg") {
    warp = fmt::format("return cg::reduce(cg::tiled_partition<32>(cg::this_thread_block()), v, cg::{}<{}>());",
                       additive ? "plus" : op == "max" ? "greater" : "less", acc);
  } else if (strategy != "tree") {
    warp = fmt::format("#pragma unroll\nfor (int o = 16; o > 0; o >>= 1) v = combine(v, __shfl_{}_sync(0xffffffffu, v, o));\nreturn v;",
                       xor_shuffle ? "xor" : "down");
  }
  std::string block_code;
  if (strategy == "tree" || strategy == "tree_warp") {
    block_code = fmt::format(
        "__shared__ {} smem[kBlock];\nsmem[threadIdx.x] = v;\n__syncthreads();\n#pragma unroll\n"
        "for (int s = kBlock / 2; s > {}; s >>= 1) {{\n  if (threadIdx.x < s) smem[threadIdx.x] = combine(smem[threadIdx.x], smem[threadIdx.x + s]);\n  __syncthreads();\n}}\n",
        acc, strategy == "tree" ? 0 : 32);
    block_code += strategy == "tree" ? "return smem[0];"
                                     : "if (threadIdx.x < 32) v = warp_reduce(combine(smem[threadIdx.x], smem[threadIdx.x + 32]));\nreturn v;";
  } else {
    block_code = fmt::format(
        "__shared__ {0} partial[kBlock / 32];\nconst int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\nv = warp_reduce(v);\n"
        "if (lane == 0) partial[warp] = v;\n__syncthreads();\nif (warp == 0) {{\n  v = lane < kBlock / 32 ? partial[lane] : {1};\n  v = warp_reduce(v);\n}}\nreturn v;",
        acc, identity_of(op, acc));
  }
  const std::string term = op == "sumsq" ? "x * x" : op != "abssum" ? "x" : acc == "int" ? "abs(x)" : fn(acc, "fabs") + "(x)";

  std::string load;
  if (w == 1) {
    load = grid_loop(loop, "i", "", "n", "acc = combine(acc, term(in[i]));\n");
  } else {
    const std::string vt = vec_type(t, w, native);
    load = fmt::format("const {0} nvec = n / {1};\nconst {2}*{3} in_v = reinterpret_cast<const {2}*>(in);\n", k.idx, w, vt, R);
    std::string vb = fmt::format("const {} v = in_v[i];\n", vt);
    for (int l = 0; l < w; ++l) vb += fmt::format("acc = combine(acc, term({}));\n", lane("v", t, w, native, l));
    load += grid_loop(loop, "i", "", "nvec", vb);
    Loop tail = loop;
    tail.unroll = loop.grid_stride ? -1 : 1;
    load += grid_loop(tail, "j", fmt::format("nvec * {} + ", w), "n", "acc = combine(acc, term(in[j]));\n");
  }
  const std::string store = atomic ? fmt::format("atomic{}(out, acc);", additive ? "Add" : op == "max" ? "Max" : "Min")
                                   : "out[blockIdx.x] = acc;";
  const std::string fin = finalize ? R"(extern "C" __global__ void $LB$NAME_finalize(const $ACC*$R partials, $ACC*$R out, int count) {
  $ACC acc = $IDENT;
  for (int i = threadIdx.x; i < count; i += kBlock) acc = combine(acc, partials[i]);
  acc = block_reduce(acc);
  if (threadIdx.x == 0) *out = acc;
}
)" : "";
  const std::string tmpl = R"($HEADERS

$CG

$VECS

constexpr int kBlock = $BS;

static __device__ __forceinline__ $ACC combine($ACC a, $ACC b) { return $COMBINE; }

static __device__ __forceinline__ $ACC term($T v) {
  const $ACC x = $TOACC;
  return $TERM;
}

$WARP

static __device__ $ACC block_reduce($ACC v) {
  $BLOCKCODE
}

extern "C" __global__ void $LB$NAME(const $T*$R in, $ACC*$R out, $IDX n) {
  $ACC acc = $IDENT;
  $LOAD
  acc = block_reduce(acc);
  if (threadIdx.x == 0) $STORE
}

)" + fin;
  d.source = fill(tmpl, {{"HEADERS", headers({t})},
                         {"CG", strategy == "cg" ? "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\nnamespace cg = cooperative_groups;\n" : ""},
                         {"VECS", vec_def(t, w, native)}, {"BS", std::to_string(block)}, {"ACC", acc}, {"T", ctype(t)},
                         {"COMBINE", combine_of(op, acc)},
                         {"TOACC", to_acc(t, "v")}, {"TERM", term},
                         {"WARP", warp.empty() ? "" : fmt::format("static __device__ __forceinline__ {} warp_reduce({} v) {{\n{}}}\n", acc, acc, indent(warp, 2))},
                         {"BLOCKCODE", block_code}, {"LB", k.bounds}, {"R", R}, {"IDX", k.idx},
                         {"IDENT", identity_of(op, acc)}, {"LOAD", load}, {"STORE", store}});
  if (finalize) d.entries.push_back("_finalize");
  p["dtype"] = tag(t);
  p["acc"] = acc;
  p["op"] = op;
  p["strategy"] = strategy;
  p["shuffle"] = strategy == "tree_warp" || strategy == "shfl" ? (xor_shuffle ? "xor" : "down") : "none";
  p["vector_width"] = std::to_string(w);
  p["grid"] = atomic ? "atomic" : finalize ? "partials+finalize" : "partials";
  d.stem = fmt::format("red_{}_{}_{}_b{}", tag(t), op, strategy, block);
  return d;
}

// ---- scans --------------------------------------------------------------------------------

// An exclusive scan of one value per thread across the block; *total gets the block's total.
std::string scan_method(Rng& rng, const std::string& method, const std::string& acc, const std::string& ident,
                        bool pad, Params& p) {
  const std::string u = unroll_line(rng.pick({-1, 0}));
  if (method == "hillis_steele")
    return fmt::format(
        "__shared__ {0} buf[2][kBlock];\nconst int t = threadIdx.x;\nint cur = 0;\nbuf[0][t] = v;\n__syncthreads();\n{2}"
        "for (int off = 1; off < kBlock; off <<= 1) {{\n  const {0} x = buf[cur][t];\n  buf[cur ^ 1][t] = t >= off ? scan_op(buf[cur][t - off], x) : x;\n"
        "  cur ^= 1;\n  __syncthreads();\n}}\n*total = buf[cur][kBlock - 1];\nreturn t > 0 ? buf[cur][t - 1] : {1};",
        acc, ident, u);
  if (method == "kogge_stone")
    return fmt::format(
        "__shared__ {0} s[kBlock];\nconst int t = threadIdx.x;\ns[t] = v;\n__syncthreads();\n{2}"
        "for (int off = 1; off < kBlock; off <<= 1) {{\n  const {0} y = t >= off ? s[t - off] : {1};\n  __syncthreads();\n"
        "  s[t] = scan_op(y, s[t]);\n  __syncthreads();\n}}\n*total = s[kBlock - 1];\nreturn t > 0 ? s[t - 1] : {1};",
        acc, ident, u);
  if (method == "blelloch") {
    p["bank_padding"] = pad ? "yes" : "no";
    auto at = [&](const std::string& i) { return pad ? fmt::format("s[({0}) + (({0}) >> 5)]", i) : "s[" + i + "]"; };
    return fmt::format(
        "__shared__ {0} s[kBlock{1}];\n__shared__ {0} block_total;\nconst int t = threadIdx.x;\n{2} = v;\n__syncthreads();\n{8}"
        "for (int d = 1; d < kBlock; d <<= 1) {{\n  const int i = (t + 1) * (d << 1) - 1;\n  if (i < kBlock) {3} = scan_op({4}, {3});\n  __syncthreads();\n}}\n"
        "if (t == 0) {{\n  block_total = {5};\n  {5} = {6};\n}}\n__syncthreads();\n{8}"
        "for (int d = kBlock >> 1; d >= 1; d >>= 1) {{\n  const int i = (t + 1) * (d << 1) - 1;\n  if (i < kBlock) {{\n"
        "    const {0} x = {4};\n    {4} = {3};\n    {3} = scan_op({3}, x);\n  }}\n  __syncthreads();\n}}\n*total = block_total;\nreturn {7};",
        acc, pad ? " + kBlock / 32" : "", at("t"), at("i"), at("i - d"), at("kBlock - 1"), ident, at("t"), u);
  }
  return fmt::format(
      "__shared__ {0} warp_total[32];\nconst int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n{0} x = v;\n#pragma unroll\n"
      "for (int o = 1; o < 32; o <<= 1) {{\n  const {0} y = __shfl_up_sync(0xffffffffu, x, o);\n  if (lane >= o) x = scan_op(y, x);\n}}\n"
      "if (lane == 31) warp_total[warp] = x;\n__syncthreads();\nif (warp == 0) {{\n  {0} w = lane < kBlock / 32 ? warp_total[lane] : {1};\n"
      "  #pragma unroll\n  for (int o = 1; o < 32; o <<= 1) {{\n    const {0} y = __shfl_up_sync(0xffffffffu, w, o);\n    if (lane >= o) w = scan_op(y, w);\n  }}\n"
      "  warp_total[lane] = w;\n}}\n__syncthreads();\nconst {0} prefix = warp > 0 ? warp_total[warp - 1] : {1};\n"
      "const {0} up = __shfl_up_sync(0xffffffffu, x, 1);\n*total = warp_total[kBlock / 32 - 1];\nreturn lane > 0 ? scan_op(prefix, up) : prefix;",
      acc, ident);
}

Draft make_scan(Rng& rng, DType t) {
  Draft d;
  Params& p = d.params;
  const std::string acc = acc_of(t);
  const std::string op = rng.chance(70) ? "add" : "max";
  const bool inclusive = rng.chance(50);
  int block = rng.pick({64, 128, 256, 256, 512, 1024});
  int items = rng.pick({1, 2, 4, 8});
  while (block * items * (acc == "double" ? 8 : 4) > 16384) items /= 2;
  const std::string method = rng.pick({"hillis_steele", "kogge_stone", "blelloch", "warp_shfl"});
  const bool staged = rng.chance(50);
  const bool sums = rng.chance(60);
  const bool add_offsets = sums && rng.chance(50);
  const bool pad = rng.chance(50);
  const Knobs k = draw_knobs(rng, block, {"int", "long long", "size_t"}, p);
  const std::string ident = op == "add" ? zero(acc) : lowest(acc);
  const std::string scan = scan_method(rng, method, acc, ident, pad, p);
  const std::string R = restrict_of(k);

  std::string load, store;
  if (staged) {
    load = fmt::format(
        "#pragma unroll\nfor (int k = 0; k < kItems; ++k) {{\n  const {0} i = base + ({0})k * kBlock + threadIdx.x;\n"
        "  stage[k * kBlock + threadIdx.x] = i < n ? {1} : {2};\n}}\n__syncthreads();\n#pragma unroll\n"
        "for (int k = 0; k < kItems; ++k) items[k] = stage[threadIdx.x * kItems + k];\n__syncthreads();",
        k.idx, to_acc(t, "in[i]"), ident);
    store = fmt::format(
        "#pragma unroll\nfor (int k = 0; k < kItems; ++k) stage[threadIdx.x * kItems + k] = items[k];\n__syncthreads();\n#pragma unroll\n"
        "for (int k = 0; k < kItems; ++k) {{\n  const {0} i = base + ({0})k * kBlock + threadIdx.x;\n  if (i < n) out[i] = {1};\n}}",
        k.idx, store_as(t, acc, "stage[k * kBlock + threadIdx.x]"));
  } else {
    load = fmt::format(
        "#pragma unroll\nfor (int k = 0; k < kItems; ++k) {{\n  const {0} i = base + ({0})threadIdx.x * kItems + k;\n  items[k] = i < n ? {1} : {2};\n}}",
        k.idx, to_acc(t, "in[i]"), ident);
    store = fmt::format(
        "#pragma unroll\nfor (int k = 0; k < kItems; ++k) {{\n  const {0} i = base + ({0})threadIdx.x * kItems + k;\n  if (i < n) out[i] = {1};\n}}",
        k.idx, store_as(t, acc, "items[k]"));
  }
  const std::string apply =
      inclusive ? "#pragma unroll\nfor (int k = 0; k < kItems; ++k) items[k] = scan_op(prefix, items[k]);"
                : fmt::format("{} run = prefix;\n#pragma unroll\nfor (int k = 0; k < kItems; ++k) {{\n  const {} next = scan_op(prefix, items[k]);\n"
                              "  items[k] = run;\n  run = next;\n}}",
                              acc, acc);
  const std::string offsets = add_offsets ? R"(
extern "C" __global__ void $LB$NAME_add_offsets($T*$R data, const $ACC*$R offsets, $IDX n) {
  const $ACC offset = offsets[blockIdx.x];
  const $IDX base = ($IDX)blockIdx.x * kTile;
  #pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const $IDX i = base + ($IDX)k * kBlock + threadIdx.x;
    if (i < n) data[i] = $ADDOFF;
  }
}
)" : "";
  d.source = fill(R"($HEADERS

constexpr int kBlock = $BS;
constexpr int kItems = $ITEMS;
constexpr int kTile = kBlock * kItems;

static __device__ __forceinline__ $ACC scan_op($ACC a, $ACC b) { return $COMBINE; }

static __device__ $ACC block_exclusive_scan($ACC v, $ACC* total) {
  $SCAN
}

extern "C" __global__ void $LB$NAME(const $T*$R in, $T*$R out, $SUMS$IDX n) {
  $STAGE
  const $IDX base = ($IDX)blockIdx.x * kTile;
  $ACC items[kItems];
  $LOAD
  #pragma unroll
  for (int k = 1; k < kItems; ++k) items[k] = scan_op(items[k - 1], items[k]);
  $ACC total;
  const $ACC prefix = block_exclusive_scan(items[kItems - 1], &total);
  $APPLY
  $STORE
  $SUMSTORE
}
)" + offsets,
                  {{"HEADERS", headers({t})}, {"BS", std::to_string(block)}, {"ITEMS", std::to_string(items)},
                   {"ACC", acc}, {"T", ctype(t)}, {"COMBINE", combine_of(op, acc)}, {"SCAN", scan}, {"LB", k.bounds},
                   {"R", R}, {"IDX", k.idx}, {"SUMS", sums ? fmt::format("{}*{} block_sums, ", acc, R) : ""},
                   {"STAGE", staged ? fmt::format("__shared__ {} stage[kTile];", acc) : ""}, {"LOAD", load},
                   {"APPLY", apply}, {"STORE", store},
                   {"SUMSTORE", sums ? "if (threadIdx.x == 0) block_sums[blockIdx.x] = total;" : ""},
                   {"ADDOFF", store_as(t, acc, "scan_op(offset, " + to_acc(t, "data[i]") + ")")}});
  if (add_offsets) d.entries.push_back("_add_offsets");
  p["dtype"] = tag(t);
  p["op"] = op;
  p["kind"] = inclusive ? "inclusive" : "exclusive";
  p["method"] = method;
  p["items_per_thread"] = std::to_string(items);
  p["staged"] = staged ? "yes" : "no";
  p["block_sums"] = add_offsets ? "yes+add_offsets" : sums ? "yes" : "no";
  d.stem = fmt::format("scan_{}_{}_{}_{}", tag(t), inclusive ? "incl" : "excl", op, method);
  return d;
}

// ---- stencils -----------------------------------------------------------------------------

// The taps: literal weights written out, or a loop over a weight array (`warr`).
struct Taps {
  std::string mode;  // "literal", "symmetric", "constant", "param"
  std::string code;
  std::string decl;  // the __constant__ array, if any
  std::string param; // the weight pointer parameter, if any
};
Taps draw_taps_mode(Rng& rng, const std::string& acc, const std::string& R) {
  Taps t;
  t.mode = rng.pick({"literal", "symmetric", "constant", "param"});
  if (t.mode == "param") t.param = fmt::format("const {}*{} weights, ", acc, R);
  return t;
}
std::string weight_array(Rng& rng, const std::string& acc, int count) {
  std::vector<std::string> w;
  for (int i = 0; i < count; ++i) w.push_back(constant(rng, acc));
  return join(w, ", ");
}
// One tap: "s += w * x;", or "s = fmaf(w, x, s);" where there is a floating-point fma.
std::string tap(const std::string& acc, bool use_fma, const std::string& w, const std::string& x) {
  return use_fma && acc != "int" ? fmt::format("s = {}({}, {}, s);\n", fn(acc, "fma"), w, x) : fmt::format("s += {} * {};\n", w, x);
}

Draft make_stencil_1d(Rng& rng, DType t, Draft d) {
  Params& p = d.params;
  const std::string acc = acc_of(t);
  const int radius = rng.range(1, 3);
  const int block = rng.pick({64, 128, 256, 256, 512, 1024});
  const int items = rng.pick({1, 1, 2, 4});
  const std::string boundary = rng.pick({"zero", "clamp", "wrap"});
  const bool halo_style = rng.chance(50);
  const bool tiles_grid_stride = rng.chance(40);
  const bool use_fma = rng.chance(50);
  const bool ldg = t != DType::fp8 && rng.chance(30);
  const Knobs k = draw_knobs(rng, block, {"int", "long long"}, p);
  const std::string R = restrict_of(k);
  Taps taps = draw_taps_mode(rng, acc, R);
  auto at = [](int off) { return fmt::format("tile[l + {}]", off); };
  if (taps.mode == "literal") {
    for (int dd = -radius; dd <= radius; ++dd) taps.code += tap(acc, use_fma, constant(rng, acc), at(radius + dd));
  } else if (taps.mode == "symmetric") {
    taps.code = tap(acc, use_fma, constant(rng, acc), at(radius));
    for (int dd = 1; dd <= radius; ++dd)
      taps.code += tap(acc, use_fma, constant(rng, acc), fmt::format("({} + {})", at(radius - dd), at(radius + dd)));
  } else {
    const std::string arr = taps.mode == "constant" ? "c_weights" : "weights";
    if (taps.mode == "constant")
      taps.decl = fmt::format("__constant__ {} c_weights[2 * kRadius + 1] = {{{}}};\n", acc, weight_array(rng, acc, 2 * radius + 1));
    taps.code = "#pragma unroll\nfor (int d = 0; d <= 2 * kRadius; ++d) " + tap(acc, use_fma, arr + "[d]", "tile[l + d]");
  }
  const std::string src = ldg ? "__ldg(&in[j])" : "in[j]";
  std::string load;
  if (boundary == "zero")
    load = fmt::format("if (i < 0 || i >= n) return {};\nconst {} j = i;\nreturn {};", zero(acc), k.idx, to_acc(t, src));
  else if (boundary == "clamp")
    load = fmt::format("const {} j = i < 0 ? 0 : (i >= n ? n - 1 : i);\nreturn {};", k.idx, to_acc(t, src));
  else
    load = fmt::format("const {} j = i < 0 ? i + n : (i >= n ? i - n : i);\nreturn {};", k.idx, to_acc(t, src));
  const std::string fill_tile =
      halo_style ? "#pragma unroll\nfor (int k = 0; k < kItems; ++k) tile[kRadius + tx + k * kBlock] = load_at(in, t0 + tx + k * kBlock, n);\n"
                   "if (tx < kRadius) {\n  tile[tx] = load_at(in, t0 + tx - kRadius, n);\n  tile[kRadius + kTile + tx] = load_at(in, t0 + kTile + tx, n);\n}\n"
                 : "for (int j = tx; j < kTile + 2 * kRadius; j += kBlock) tile[j] = load_at(in, t0 + j - kRadius, n);\n";
  const std::string compute = fmt::format(
      "#pragma unroll\nfor (int k = 0; k < kItems; ++k) {{\n  const int l = tx + k * kBlock;\n  if (t0 + l < n) {{\n    {} s = {};\n{}    out[t0 + l] = {};\n  }}\n}}\n",
      acc, zero(acc), indent(taps.code, 4), store_as(t, acc, "s"));
  std::string body;
  if (tiles_grid_stride)
    body = fmt::format("for ({0} t0 = ({0})blockIdx.x * kTile; t0 < n; t0 += ({0})gridDim.x * kTile) {{\n{1}  __syncthreads();\n{2}  __syncthreads();\n}}\n",
                       k.idx, indent(fill_tile, 2), indent(compute, 2));
  else
    body = fmt::format("const {} t0 = ({})blockIdx.x * kTile;\n{}__syncthreads();\n{}", k.idx, k.idx, fill_tile, compute);
  d.source = fill(R"($HEADERS

constexpr int kRadius = $RADIUS;
constexpr int kBlock = $BS;
constexpr int kItems = $ITEMS;
constexpr int kTile = kBlock * kItems;
$WDECL

static __device__ __forceinline__ $ACC load_at(const $T* in, $IDX i, $IDX n) {
  $LOAD
}

extern "C" __global__ void $LB$NAME(const $T*$R in, $T*$R out, $WPARAM$IDX n) {
  __shared__ $ACC tile[kTile + 2 * kRadius];
  const int tx = threadIdx.x;
  $BODY
}
)",
                  {{"HEADERS", headers({t})}, {"RADIUS", std::to_string(radius)}, {"BS", std::to_string(block)},
                   {"ITEMS", std::to_string(items)}, {"WDECL", taps.decl}, {"ACC", acc}, {"T", ctype(t)},
                   {"IDX", k.idx}, {"LOAD", load}, {"LB", k.bounds}, {"R", R}, {"WPARAM", taps.param}, {"BODY", body}});
  p["dims"] = "1";
  p["radius"] = std::to_string(radius);
  p["items_per_thread"] = std::to_string(items);
  p["boundary"] = boundary;
  p["tile_fill"] = halo_style ? "halo" : "loop";
  p["grid_stride"] = tiles_grid_stride ? "yes" : "no";
  p["weights"] = taps.mode;
  p["fma"] = use_fma ? "yes" : "no";
  p["ldg"] = ldg ? "yes" : "no";
  d.stem = fmt::format("st1d_{}_r{}_{}", tag(t), radius, taps.mode);
  return d;
}

Draft make_stencil_2d(Rng& rng, DType t, Draft d) {
  Params& p = d.params;
  const std::string acc = acc_of(t);
  const int bytes = acc == "double" ? 8 : 4;
  int radius = 1, bx = 32, by = 8, rows = 1, pad = 0;
  for (int tries = 0; tries < 64; ++tries) {
    radius = rng.range(1, 3);
    bx = rng.pick({16, 32, 32, 64});
    by = rng.pick({1, 2, 4, 8, 16});
    rows = rng.pick({1, 1, 2, 4});
    pad = rng.pick({0, 0, 1, 2});
    const int threads = bx * by;
    if (threads >= 64 && threads <= 1024 && (by * rows + 2 * radius) * (bx + 2 * radius + pad) * bytes <= 40 * 1024) break;
    radius = 1, bx = 32, by = 8, rows = 1, pad = 0;
  }
  const bool box = rng.chance(40);
  const std::string boundary = rng.pick({"zero", "clamp"});
  const bool use_fma = rng.chance(50);
  const Knobs k = draw_knobs(rng, bx * by, {"int", "long long", "size_t"}, p);
  const std::string R = restrict_of(k);
  Taps taps = draw_taps_mode(rng, acc, R);
  if (taps.mode == "symmetric") taps.mode = "literal";
  auto at = [](int dy, int dx) { return fmt::format("tile[ly + {}][tx + {}]", dy, dx); };
  const int n = 2 * radius + 1;
  if (taps.mode == "literal") {
    for (int dy = 0; dy < n; ++dy)
      for (int dx = 0; dx < n; ++dx)
        if (box || dy == radius || dx == radius) taps.code += tap(acc, use_fma, constant(rng, acc), at(dy, dx));
  } else {
    const std::string arr = taps.mode == "constant" ? "c_weights" : "weights";
    const int count = box ? n * n : radius + 1;
    if (taps.mode == "constant")
      taps.decl = fmt::format("__constant__ {} c_weights[{}] = {{{}}};\n", acc, count, weight_array(rng, acc, count));
    if (box)
      taps.code = "#pragma unroll\nfor (int dy = 0; dy <= 2 * kRadius; ++dy) {\n  #pragma unroll\n  for (int dx = 0; dx <= 2 * kRadius; ++dx) " +
                  tap(acc, use_fma, arr + "[dy * (2 * kRadius + 1) + dx]", "tile[ly + dy][tx + dx]") + "}\n";
    else
      taps.code = tap(acc, use_fma, arr + "[0]", "tile[ly + kRadius][tx + kRadius]") + "#pragma unroll\nfor (int d = 1; d <= kRadius; ++d) " +
                  tap(acc, use_fma, arr + "[d]",
                      "(tile[ly + kRadius][tx + kRadius - d] + tile[ly + kRadius][tx + kRadius + d] + tile[ly + kRadius - d][tx + kRadius] + "
                      "tile[ly + kRadius + d][tx + kRadius])");
  }
  const std::string load =
      boundary == "zero"
          ? fmt::format("if (x < 0 || x >= width || y < 0 || y >= height) return {};\nreturn {};", zero(acc),
                        to_acc(t, fmt::format("in[({})y * pitch + x]", k.idx)))
          : fmt::format("x = min(max(x, 0), width - 1);\ny = min(max(y, 0), height - 1);\nreturn {};",
                        to_acc(t, fmt::format("in[({})y * pitch + x]", k.idx)));
  d.source = fill(R"($HEADERS

constexpr int kRadius = $RADIUS;
constexpr int kBlockX = $BX;
constexpr int kBlockY = $BY;
constexpr int kRows = $ROWS;
constexpr int kTileW = kBlockX + 2 * kRadius;
constexpr int kTileH = kBlockY * kRows + 2 * kRadius;
$WDECL

static __device__ __forceinline__ $ACC load_at(const $T* in, int x, int y, int width, int height, int pitch) {
  $LOAD
}

extern "C" __global__ void $LB$NAME(const $T*$R in, $T*$R out, $WPARAMint width, int height, int pitch) {
  __shared__ $ACC tile[kTileH][kTileW$PAD];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x0 = blockIdx.x * kBlockX, y0 = blockIdx.y * (kBlockY * kRows);
  for (int j = ty; j < kTileH; j += kBlockY)
    for (int i = tx; i < kTileW; i += kBlockX) tile[j][i] = load_at(in, x0 + i - kRadius, y0 + j - kRadius, width, height, pitch);
  __syncthreads();
  const int gx = x0 + tx;
  #pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int ly = ty + k * kBlockY;
    const int gy = y0 + ly;
    if (gx < width && gy < height) {
      $ACC s = $ZERO;
      $TAPS
      out[($IDX)gy * pitch + gx] = $STORE;
    }
  }
}
)",
                  {{"HEADERS", headers({t})}, {"RADIUS", std::to_string(radius)}, {"BX", std::to_string(bx)},
                   {"BY", std::to_string(by)}, {"ROWS", std::to_string(rows)}, {"WDECL", taps.decl}, {"ACC", acc},
                   {"T", ctype(t)}, {"LOAD", load}, {"LB", k.bounds}, {"R", R}, {"WPARAM", taps.param},
                   {"PAD", plus(pad)}, {"ZERO", zero(acc)}, {"TAPS", taps.code}, {"IDX", k.idx},
                   {"STORE", store_as(t, acc, "s")}});
  p["dims"] = "2";
  p["radius"] = std::to_string(radius);
  p["block_xy"] = fmt::format("{}x{}", bx, by);
  p["rows_per_thread"] = std::to_string(rows);
  p["shape"] = box ? "box" : "star";
  p["boundary"] = boundary;
  p["smem_pad"] = std::to_string(pad);
  p["weights"] = taps.mode;
  p["fma"] = use_fma ? "yes" : "no";
  d.stem = fmt::format("st2d_{}_r{}_{}_{}x{}", tag(t), radius, box ? "box" : "star", bx, by);
  return d;
}

Draft make_stencil(Rng& rng, DType t) {
  Draft d;
  d.params["dtype"] = tag(t);
  return rng.chance(50) ? make_stencil_1d(rng, t, std::move(d)) : make_stencil_2d(rng, t, std::move(d));
}

// ---- transposes ---------------------------------------------------------------------------

Draft make_transpose(Rng& rng, DType t) {
  Draft d;
  Params& p = d.params;
  DType out = t;
  if (rng.chance(25)) out = rng.pick({DType::f32, DType::f16, DType::bf16, DType::fp8});
  const int tile = rng.pick({16, 32, 32, 64});
  const int rows = tile == 16 ? rng.pick({4, 8, 16}) : tile == 32 ? rng.pick({2, 4, 8, 8, 16, 32}) : rng.pick({1, 2, 4, 8, 16});
  const std::string layout = rng.pick({"pad", "pad", "pad", "swizzle", "none"});
  const int pad = layout != "pad" ? 0 : info(t).bytes >= 4 ? 1 : rng.pick({1, 2, 4});
  const bool smem_acc = rng.chance(30);  // convert on the way in instead of on the way out
  const bool scale = rng.chance(30);
  const bool batched = rng.chance(30);
  const int unroll = rng.pick({-1, 0, 0, 1});
  const Knobs k = draw_knobs(rng, tile * rows, {"int", "size_t", "long long"}, p);
  const std::string R = restrict_of(k);
  const std::string acc = acc_of(t);
  auto col = [&](const std::string& r, const std::string& c) {
    return layout == "swizzle" ? fmt::format("({}) ^ (({}) & (kTile - 1))", c, r) : c;
  };
  const std::string element = fmt::format("in[({})(y + j) * cols + x]", k.idx);
  const std::string loaded = smem_acc ? to_acc(t, element) : element;
  const std::string cell = "tile[threadIdx.x][" + col("threadIdx.x", "threadIdx.y + j") + "]";
  std::string value = smem_acc ? cell : to_acc(t, cell);
  if (scale) value = "alpha * " + value;
  const std::string stored = (!smem_acc && !scale && out == t) ? cell : store_as(out, acc, value);
  d.source = fill(R"($HEADERS

constexpr int kTile = $TILE;
constexpr int kRows = $ROWS;

extern "C" __global__ void $LB$NAME(const $T*$R in, $OT*$R out, int rows, int cols$ALPHA) {
  __shared__ $ST tile[kTile][kTile$PAD];
  $BATCH
  int x = blockIdx.x * kTile + threadIdx.x;
  int y = blockIdx.y * kTile + threadIdx.y;
  $UNROLL
  for (int j = 0; j < kTile; j += kRows)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][$STCOL] = $LOADED;
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  $UNROLL
  for (int j = 0; j < kTile; j += kRows)
    if (x < rows && y + j < cols) out[($IDX)(y + j) * rows + x] = $STORED;
}
)",
                         {{"HEADERS", headers({t, out})}, {"TILE", std::to_string(tile)}, {"ROWS", std::to_string(rows)},
                          {"LB", k.bounds}, {"T", ctype(t)}, {"OT", ctype(out)}, {"R", R},
                          {"ALPHA", scale ? ", " + acc + " alpha" : ""}, {"ST", smem_acc ? acc : ctype(t)},
                          {"PAD", plus(pad)},
                          {"BATCH", batched ? "const size_t plane = (size_t)rows * cols * blockIdx.z;\nin += plane;\nout += plane;" : ""},
                          {"UNROLL", unroll_line(unroll)}, {"STCOL", col("threadIdx.y + j", "threadIdx.x")},
                          {"LOADED", loaded}, {"STORED", stored}, {"IDX", k.idx}});
  p["dtype"] = tag(t);
  p["out_dtype"] = tag(out);
  p["tile"] = std::to_string(tile);
  p["rows_per_pass"] = std::to_string(rows);
  p["smem_layout"] = layout == "pad" ? fmt::format("pad{}", pad) : layout;
  p["smem_type"] = smem_acc ? acc : ctype(t);
  p["scale"] = scale ? "yes" : "no";
  p["batched"] = batched ? "yes" : "no";
  p["unroll"] = std::to_string(unroll);
  d.stem = fmt::format("tr_{}{}_t{}x{}", tag(t), out == t ? "" : "_to_" + tag(out), tile, rows);
  return d;
}

// ---- GEMMs --------------------------------------------------------------------------------

Draft make_gemm(Rng& rng, DType t) {
  Draft d;
  Params& p = d.params;
  const std::string acc = acc_of(t);
  const int bytes = acc == "double" ? 8 : 4;
  int bm = 32, bn = 32, bk = 8, tm = 2, tn = 2, pad_a = 0, pad_b = 0;
  for (int tries = 0; tries < 64; ++tries) {
    bm = rng.pick({16, 32, 64, 64, 128});
    bn = rng.pick({16, 32, 64, 64, 128});
    bk = rng.pick({8, 16, 32});
    tm = rng.pick({1, 2, 4, 8});
    tn = rng.pick({1, 2, 4, 8});
    pad_a = rng.pick({0, 0, 1, 4});
    pad_b = rng.pick({0, 0, 1, 4});
    const int threads = (bm / tm) * (bn / tn);
    const int smem = (bk * (bm + pad_a) + bk * (bn + pad_b)) * bytes;
    if (tm <= bm && tn <= bn && threads >= 64 && threads <= 1024 && tm * tn <= 64 && smem <= 40 * 1024) break;
    bm = 32, bn = 32, bk = 8, tm = 2, tn = 2, pad_a = 0, pad_b = 0;
  }
  DType out = t;
  if ((t == DType::f16 || t == DType::bf16 || t == DType::fp8) && rng.chance(50)) out = DType::f32;
  const std::string layout = rng.pick({"nn", "nn", "tn", "nt"});
  const bool a_transposed_smem = rng.chance(50);
  const bool strided = rng.chance(50);
  const bool fragments = rng.chance(60);
  const bool block_2d = rng.chance(40);
  const int k_unroll = rng.pick({-1, 0, 0, 2, 4});
  const bool beta = rng.chance(50);
  const std::string epilogue = rng.pick({"none", "none", "relu", "bias"});
  const Knobs k = draw_knobs(rng, (bm / tm) * (bn / tn), {"int", "size_t"}, p);
  const std::string R = restrict_of(k);

  auto as = [&](const std::string& r, const std::string& c) {
    return a_transposed_smem ? fmt::format("As[{}][{}]", c, r) : fmt::format("As[{}][{}]", r, c);
  };
  const std::string row = strided ? "ty + i * (kBM / kTM)" : "ty * kTM + i";
  const std::string column = strided ? "tx + j * (kBN / kTN)" : "tx * kTN + j";
  // Loads: the fastest-moving thread index walks the contiguous dimension in global memory.
  const std::string load_a =
      layout == "tn"
          ? fmt::format("const int r = e % kBM, c = e / kBM;\n{} = (row0 + r < M && k0 + c < K) ? {} : {};", as("r", "c"),
                        to_acc(t, fmt::format("A[({})(k0 + c) * M + row0 + r]", k.idx)), zero(acc))
          : fmt::format("const int r = e / kBK, c = e % kBK;\n{} = (row0 + r < M && k0 + c < K) ? {} : {};", as("r", "c"),
                        to_acc(t, fmt::format("A[({})(row0 + r) * K + k0 + c]", k.idx)), zero(acc));
  const std::string load_b =
      layout == "nt"
          ? fmt::format("const int r = e % kBK, c = e / kBK;\nBs[r][c] = (k0 + r < K && col0 + c < N) ? {} : {};",
                        to_acc(t, fmt::format("B[({})(col0 + c) * K + k0 + r]", k.idx)), zero(acc))
          : fmt::format("const int r = e / kBN, c = e % kBN;\nBs[r][c] = (k0 + r < K && col0 + c < N) ? {} : {};",
                        to_acc(t, fmt::format("B[({})(k0 + r) * N + col0 + c]", k.idx)), zero(acc));
  std::string inner;
  if (fragments)
    inner = fmt::format(
        "{0} a[kTM], b[kTN];\n#pragma unroll\nfor (int i = 0; i < kTM; ++i) a[i] = {1};\n#pragma unroll\n"
        "for (int j = 0; j < kTN; ++j) b[j] = Bs[kk][{2}];\n#pragma unroll\nfor (int i = 0; i < kTM; ++i)\n  #pragma unroll\n"
        "  for (int j = 0; j < kTN; ++j) acc[i][j] += a[i] * b[j];",
        acc, as(row, "kk"), column);
  else
    inner = fmt::format("#pragma unroll\nfor (int i = 0; i < kTM; ++i)\n  #pragma unroll\n  for (int j = 0; j < kTN; ++j) acc[i][j] += {} * Bs[kk][{}];",
                        as(row, "kk"), column);
  std::string epi = fmt::format("{} v = alpha * acc[i][j];\n", acc);
  if (beta) epi += fmt::format("v += beta * {};\n", to_acc(out, fmt::format("C[({})r * N + c]", k.idx)));
  if (epilogue == "bias") epi += "v += bias[c];\n";
  if (epilogue == "relu") epi += fmt::format("v = v > {0} ? v : {0};\n", zero(acc));
  epi += fmt::format("C[({})r * N + c] = {};", k.idx, store_as(out, acc, "v"));
  d.source = fill(R"($HEADERS

constexpr int kBM = $BM, kBN = $BN, kBK = $BK;
constexpr int kTM = $TM, kTN = $TN;
constexpr int kThreads = (kBM / kTM) * (kBN / kTN);

extern "C" __global__ void $LB$NAME(const $T*$R A, const $T*$R B, $OT*$R C, $BIASint M, int N, int K, $ACC alpha$BETA) {
  __shared__ $ACC As[$ASHAPE];
  __shared__ $ACC Bs[kBK][kBN$PADB];
  const int tid = $TID;
  const int tx = tid % (kBN / kTN), ty = tid / (kBN / kTN);
  const int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
  $ACC acc[kTM][kTN];
  #pragma unroll
  for (int i = 0; i < kTM; ++i)
    #pragma unroll
    for (int j = 0; j < kTN; ++j) acc[i][j] = $ZERO;
  for (int k0 = 0; k0 < K; k0 += kBK) {
    for (int e = tid; e < kBM * kBK; e += kThreads) {
      $LOADA
    }
    for (int e = tid; e < kBK * kBN; e += kThreads) {
      $LOADB
    }
    __syncthreads();
    $KUNROLL
    for (int kk = 0; kk < kBK; ++kk) {
      $INNER
    }
    __syncthreads();
  }
  #pragma unroll
  for (int i = 0; i < kTM; ++i) {
    #pragma unroll
    for (int j = 0; j < kTN; ++j) {
      const int r = row0 + $ROW, c = col0 + $COL;
      if (r < M && c < N) {
        $EPI
      }
    }
  }
}
)",
                  {{"HEADERS", headers({t, out})}, {"BM", std::to_string(bm)}, {"BN", std::to_string(bn)},
                   {"BK", std::to_string(bk)}, {"TM", std::to_string(tm)}, {"TN", std::to_string(tn)}, {"LB", k.bounds},
                   {"T", ctype(t)}, {"OT", ctype(out)}, {"R", R},
                   {"BIAS", epilogue == "bias" ? fmt::format("const {}*{} bias, ", acc, R) : ""}, {"ACC", acc},
                   {"BETA", beta ? ", " + acc + " beta" : ""},
                   {"ASHAPE", a_transposed_smem ? "kBK][kBM" + plus(pad_a) : "kBM][kBK" + plus(pad_a)},
                   {"PADB", plus(pad_b)},
                   {"TID", block_2d ? "threadIdx.y * (kBN / kTN) + threadIdx.x" : "threadIdx.x"}, {"ZERO", zero(acc)},
                   {"LOADA", load_a}, {"LOADB", load_b}, {"KUNROLL", unroll_line(k_unroll)}, {"INNER", inner},
                   {"ROW", row}, {"COL", column}, {"EPI", epi}});
  p["dtype"] = tag(t);
  p["out_dtype"] = tag(out);
  p["tile"] = fmt::format("{}x{}x{}", bm, bn, bk);
  p["thread_tile"] = fmt::format("{}x{}", tm, tn);
  p["layout"] = layout;
  p["smem_a"] = a_transposed_smem ? "k-major" : "m-major";
  p["smem_pad"] = fmt::format("{},{}", pad_a, pad_b);
  p["thread_map"] = strided ? "strided" : "blocked";
  p["register_fragments"] = fragments ? "yes" : "no";
  p["block_dims"] = block_2d ? fmt::format("{}x{}", bn / tn, bm / tm) : "1d";
  p["k_unroll"] = std::to_string(k_unroll);
  p["beta"] = beta ? "yes" : "no";
  p["epilogue"] = epilogue;
  d.stem = fmt::format("gemm_{}_{}x{}x{}_{}x{}", tag(t), bm, bn, bk, tm, tn);
  return d;
}

// ---- the run ------------------------------------------------------------------------------

enum Family { kElementwise, kReduction, kScan, kStencil, kTranspose, kGemm };

Draft make(Family f, Rng& rng, DType t) {
  switch (f) {
    case kElementwise: return make_elementwise(rng, t);
    case kReduction: return make_reduction(rng, t);
    case kScan: return make_scan(rng, t);
    case kStencil: return make_stencil(rng, t);
    case kTranspose: return make_transpose(rng, t);
    default: return make_gemm(rng, t);
  }
}

}  // namespace

const std::vector<std::string>& kernel_families() {
  static const std::vector<std::string> names = {"elementwise", "reduction", "scan", "stencil", "transpose", "gemm"};
  return names;
}

const std::vector<std::string>& kernel_dtypes() {
  static const std::vector<std::string> tags = {"f32", "f64", "i32", "f16", "bf16", "fp8"};
  return tags;
}

std::vector<GeneratedKernel> generate_kernels(uint64_t seed, int count) {
  using enum DType;
  Rng rng(seed);
  // Element-wise kernels are the most varied, so they get two places in each round.
  Deck<Family> families({kElementwise, kElementwise, kReduction, kScan, kStencil, kTranspose, kGemm});
  std::vector<Deck<DType>> dtypes = {
      Deck<DType>({f32, f64, i32, f16, bf16, fp8}), Deck<DType>({f32, f64, i32, f16, bf16}),
      Deck<DType>({f32, f64, i32, f16, bf16}),      Deck<DType>({f32, f64, i32, f16, bf16}),
      Deck<DType>({f32, f64, i32, f16, bf16, fp8}), Deck<DType>({f32, f64, i32, f16, bf16, fp8})};
  std::set<std::string> seen;  // sources before naming: a repeat would differ only in its name
  std::vector<GeneratedKernel> out;
  for (int i = 0; i < count; ++i) {
    const Family f = families.draw(rng);
    const DType t = dtypes[f].draw(rng);
    Draft d = make(f, rng, t);
    for (int retry = 0; retry < 32 && seen.count(d.source); ++retry) d = make(f, rng, t);
    seen.insert(d.source);
    GeneratedKernel k;
    k.name = fmt::format("{}_{:04}", d.stem, i);
    k.family = kernel_families()[f];
    k.source = tidy(d.source);
    for (size_t at; (at = k.source.find("$NAME")) != std::string::npos;) k.source.replace(at, 5, k.name);
    std::vector<std::string> entries;
    for (const std::string& suffix : d.entries) entries.push_back(k.name + suffix);
    k.params = std::move(d.params);
    k.params["family"] = k.family;
    k.params["kernels"] = join(entries, ",");
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace ptxforge::data
