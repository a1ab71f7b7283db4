// The kernel generator's public API and the run: the decks that deal families and dtypes, the
// dedup of repeated sources, and the naming; plus the helpers every family shares (declared in
// generator_detail.h). The families themselves live in gen_*.cpp. Each family is a function
// from the random stream and a dtype to a Draft (a source with $NAME where the symbol goes,
// and the knobs chosen). Sources are written as templates with $VARS filled in (see fill),
// then tidied so that optional pieces leave no blank lines behind. Every draw is sequenced in
// its own statement: the order in which C++ evaluates function arguments is unspecified, and
// the output must not depend on it.
#include "data/generator.h"

#include <fmt/format.h>

#include <cassert>
#include <initializer_list>
#include <set>
#include <string_view>
#include <utility>

#include "data/generator_detail.h"

namespace ptxforge::data {
namespace detail {

// ---- dtypes -------------------------------------------------------------------------------

namespace {
constexpr TypeInfo kTypes[] = {{"f32", "float", "float", 4},   {"f64", "double", "double", 8},
                               {"i32", "int", "int", 4},       {"f16", "__half", "float", 2},
                               {"bf16", "__nv_bfloat16", "float", 2}, {"fp8", "__nv_fp8_e4m3", "float", 1}};
}  // namespace
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

}  // namespace detail

using namespace detail;

namespace {

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
