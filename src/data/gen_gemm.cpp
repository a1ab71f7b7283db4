// The GEMM family: shared-memory tiled matrix multiplies with per-thread register tiles,
// nn/tn/nt operand layouts, padded or k-major shared tiles, and none/relu/bias epilogues.
#include "data/generator_detail.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

namespace ptxforge::data::detail {

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

}  // namespace ptxforge::data::detail
