// The reduction and scan families: block-level reductions (shared-memory trees, warp
// shuffles, cooperative groups) with atomic or two-pass grids, and block-level scans
// (Hillis-Steele, Kogge-Stone, Blelloch, warp shuffles) with optional block sums.
#include "data/generator_detail.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

namespace ptxforge::data::detail {
namespace {

// ---- reductions ---------------------------------------------------------------------------

std::string combine_of(const std::string& op, const std::string& acc) {
  if (op == "max") return acc == "int" ? "max(a, b)" : fn(acc, "fmax") + "(a, b)";
  if (op == "min") return acc == "int" ? "min(a, b)" : fn(acc, "fmin") + "(a, b)";
  return "a + b";
}
std::string identity_of(const std::string& op, const std::string& acc) {
  return op == "max" ? lowest(acc) : op == "min" ? highest(acc) : zero(acc);
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

}  // namespace

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

}  // namespace ptxforge::data::detail
