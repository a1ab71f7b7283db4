// The element-wise family: random expression trees over one to three inputs (and an optional
// scalar), with vector loads, packed half2/bfloat162 math, fast-math intrinsics, dtype
// conversion on the way out, and the grid-loop knobs every family shares.
#include "data/generator_detail.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

namespace ptxforge::data::detail {
namespace {

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

}  // namespace

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

}  // namespace ptxforge::data::detail
