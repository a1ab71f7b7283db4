// Internals of the kernel generator shared by generator.cpp and the family files
// (gen_*.cpp): the random stream, the dtype and vector helpers, the template filler, the
// knobs every family draws, and one make_<family> per family. Not part of the public API.
//
// Each make_<family> turns the random stream and a dtype into a Draft: a source with $NAME
// where the symbol goes, the stem of its name, its extern "C" entry suffixes and the knobs
// chosen. generate_kernels names it, tidies it and turns it into a GeneratedKernel.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ptxforge::data::detail {

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

// ---- dtypes -------------------------------------------------------------------------------

enum class DType { f32, f64, i32, f16, bf16, fp8 };
struct TypeInfo {
  const char* tag;
  const char* ctype;
  const char* acc;  // what arithmetic is done in
  int bytes;
};
const TypeInfo& info(DType t);
std::string tag(DType t);
std::string ctype(DType t);
std::string acc_of(DType t);

// Conversions through float only: every one of them exists for sm_80 in CUDA 12 and 13.
std::string to_acc(DType t, const std::string& x);
// `v`, of accumulator type `acc`, stored as a `t`.
std::string store_as(DType t, const std::string& acc, const std::string& v);
// The #include lines the types need.
std::string headers(std::initializer_list<DType> types);
std::string zero(const std::string& acc);
std::string one(const std::string& acc);
std::string lowest(const std::string& acc);
std::string highest(const std::string& acc);
// A math function for the accumulator type: fn("float", "fmax") is "fmaxf".
std::string fn(const std::string& acc, const std::string& base);
// A small exact constant (a multiple of 1/8), parenthesised when negative.
std::string constant(Rng& rng, const std::string& acc);

// ---- vectors ------------------------------------------------------------------------------

bool has_native_vector(DType t, int w);
std::string vec_type(DType t, int w, bool native);
// The aligned struct a vector load goes through when CUDA has no vector type for it.
std::string vec_def(DType t, int w, bool native);
std::string lane(const std::string& var, DType t, int w, bool native, int l);

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
std::string fill(std::string_view tmpl, const Vars& vars);
// Drops blank lines inside braces, runs of blank lines, and trailing blanks: what optional
// template pieces leave behind when they are empty.
std::string tidy(const std::string& text);
std::string indent(const std::string& code, int spaces);
std::string join(const std::vector<std::string>& items, const std::string& sep);
// "#pragma unroll" lines: -1 none, 0 plain (full unroll where the trip count is known), N.
std::string unroll_line(int u);

// ---- knobs every family shares -------------------------------------------------------------

struct Knobs {
  bool restrict_ = false;
  std::string bounds;  // "" or "__launch_bounds__(...) "
  std::string idx;     // the index type
};
Knobs draw_knobs(Rng& rng, int threads, std::initializer_list<const char*> idx_types, Params& p);
std::string restrict_of(const Knobs& k);
// A shared-memory row's padding: " + 1", or nothing for none.
std::string plus(int pad);

// A loop of `v` over [offset, limit) spread across the grid: grid-stride (with an optional
// unroll pragma), or `unroll` chunks of one block's width per thread with a bounds check.
struct Loop {
  bool grid_stride = true;
  int unroll = -1;  // grid-stride: the pragma; otherwise the items per thread (>= 1)
  std::string idx = "int";
  std::string block = "blockDim.x";
};
std::string grid_loop(const Loop& l, const std::string& v, const std::string& offset, const std::string& limit,
                      const std::string& body);
Loop draw_loop(Rng& rng, const std::string& idx, const std::string& block, Params& p);

// ---- the families ---------------------------------------------------------------------------

Draft make_elementwise(Rng& rng, DType in);  // gen_elementwise.cpp
Draft make_reduction(Rng& rng, DType t);     // gen_reduce_scan.cpp
Draft make_scan(Rng& rng, DType t);          // gen_reduce_scan.cpp
Draft make_stencil(Rng& rng, DType t);       // gen_stencil_transpose.cpp
Draft make_transpose(Rng& rng, DType t);     // gen_stencil_transpose.cpp
Draft make_gemm(Rng& rng, DType t);          // gen_gemm.cpp

}  // namespace ptxforge::data::detail
