// The stencil and transpose families: 1-D and 2-D stencils through a shared-memory tile
// (literal, symmetric, __constant__ or parameter weights), and tiled matrix transposes
// (padded, swizzled or plain shared memory, optional scaling and batching).
#include "data/generator_detail.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

namespace ptxforge::data::detail {
namespace {

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

}  // namespace

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

}  // namespace ptxforge::data::detail
