#include "task/baselines.h"

#include <algorithm>
#include <cassert>
#include <optional>

#include <fmt/format.h>

#include "task/task_spec.h"

namespace ptxforge::task {

namespace {

bool has(const std::vector<std::string_view>& v, std::string_view k) { return std::find(v.begin(), v.end(), k) != v.end(); }

// The dtype of the buffer a [baseline] key names; nullopt when it names none (reported with the keys).
std::optional<DType> type_of(const Task& task, const Baseline& base, const char* key) {
  auto it = base.args.find(key);
  const Param* p = it == base.args.end() ? nullptr : task.find_param(it->second);
  return p && p->kind == Param::buffer ? std::optional<DType>(p->dtype) : std::nullopt;
}

// The operand types cublaslt_matmul computes with (worker/vendor/cublaslt.h): A and B alike (or
// fp8 of either kind, not both e5m2), C as wide as they are or f32; fp8 needs B stored n x k,
// and may carry block scales (a_scale and b_scale, u8).
std::vector<BaselineProblem> check_lt_matmul(const Task& task, const Baseline& base) {
  auto a = type_of(task, base, "a"), bt = type_of(task, base, "b"), c = type_of(task, base, "c");
  if (!a || !bt || !c) return {};
  auto fp8 = [](DType t) { return t == DType::e4m3 || t == DType::e5m2; };
  bool ok = false;
  if (*a == *bt && (*a == DType::f16 || *a == DType::bf16)) ok = *c == *a || *c == DType::f32;
  else if (*a == DType::f32 && *bt == DType::f32) ok = *c == DType::f32;
  else if (fp8(*a) && fp8(*bt) && !(*a == DType::e5m2 && *bt == DType::e5m2))
    ok = *c == DType::f16 || *c == DType::bf16 || *c == DType::f32;
  if (!ok)
    return {{"", fmt::format("cublaslt_matmul does not take a {}, b {}, c {}: it takes f16 or bf16 operands with "
                             "a c of their type or f32, f32 operands (tf32 tensor cores) with an f32 c, or fp8 "
                             "operands (not both e5m2) with an f16, bf16 or f32 c",
                             dtype_name(*a), dtype_name(*bt), dtype_name(*c))}};
  if (fp8(*a) && (!base.args.count("b_major") || base.args.at("b_major") != "k"))
    return {{"b_major", "cublaslt_matmul takes fp8 operands only with b_major = \"k\" (both operands K-contiguous)"}};
  // Block scaling (MXFP8, cuBLASLt's VEC32_UE8M0): one UE8M0 byte per 32 elements of k of each
  // row, in cuBLASLt's tiled layout; on both operands or on neither.
  bool sa = base.args.count("a_scale") > 0, sb = base.args.count("b_scale") > 0;
  if (sa != sb)
    return {{sa ? "a_scale" : "b_scale", "cublaslt_matmul takes block scales on both operands or on neither: give a_scale "
                                         "and b_scale (u8 buffers of UE8M0 scales, one per 32 elements of k)"}};
  if (sa && !fp8(*a))
    return {{"a_scale", fmt::format("cublaslt_matmul takes block scales (VEC32_UE8M0) with fp8 operands only, not a {}, b {}",
                                    dtype_name(*a), dtype_name(*bt))}};
  std::vector<BaselineProblem> out;
  for (const char* key : {"a_scale", "b_scale"})
    if (auto t = type_of(task, base, key); t && *t != DType::u8)
      out.push_back({key, fmt::format("cublaslt_matmul reads '{}' as UE8M0 scale bytes: it must be a u8 buffer, not {}", key,
                                      dtype_name(*t))});
  return out;
}

// cudnn_sdpa (worker/vendor/cudnn_sdpa.h): q, k, v and o of one 16-bit float type, lse f32; its
// outputs are compared with the reference's, so o and lse are outputs and every output is one.
std::vector<BaselineProblem> check_sdpa(const Task& task, const Baseline& base) {
  std::vector<BaselineProblem> out;
  auto q = type_of(task, base, "q");
  for (const char* key : {"k", "v", "o"}) {
    auto t = type_of(task, base, key);
    if (q && t && *t != *q)
      out.push_back({key, fmt::format("cudnn_sdpa takes q, k, v and o of one type: q is {}, {} is {}", dtype_name(*q), key,
                                      dtype_name(*t))});
  }
  if (q && *q != DType::f16 && *q != DType::bf16)
    out.push_back({"q", fmt::format("cudnn_sdpa takes f16 or bf16 q, k, v and o, not {}", dtype_name(*q))});
  if (auto lse = type_of(task, base, "lse"); lse && *lse != DType::f32)
    out.push_back({"lse", fmt::format("cudnn_sdpa writes lse as f32, not {}", dtype_name(*lse))});
  for (const char* key : {"o", "lse"}) {
    auto it = base.args.find(key);
    const Param* p = it == base.args.end() ? nullptr : task.find_param(it->second);
    if (p && p->kind == Param::buffer && !p->is_output())
      out.push_back({key, fmt::format("cudnn_sdpa writes '{}': it must be an output buffer", it->second)});
  }
  for (const Param& p : task.params) {
    if (!p.is_output()) continue;
    bool bound = false;
    for (const char* key : {"o", "lse"}) bound = bound || (base.args.count(key) && base.args.at(key) == p.name);
    if (!bound)
      out.push_back({"", fmt::format("cudnn_sdpa writes only o and lse, so the output '{}' must be one of them "
                                     "(the library's outputs are checked against the reference's)",
                                     p.name)});
  }
  return out;
}

const std::vector<std::string_view> kGemmSizes = {"m", "n", "k", "alpha"};

}  // namespace

bool BaselineSpec::takes(std::string_view key) const { return has(keys, key); }
bool BaselineSpec::is_size(std::string_view key) const { return has(size_keys, key); }
bool BaselineSpec::is_optional(std::string_view key) const { return has(optional_keys, key); }

const std::vector<BaselineSpec>& baseline_specs() {
  static const std::vector<BaselineSpec> specs = {
      {BaselineKind::cublas_sgemm, "cublas_sgemm", "cuBLAS sgemm", {"library", "m", "n", "k", "a", "b", "c"}, kGemmSizes, {"alpha"}},
      {BaselineKind::cublas_sgemv, "cublas_sgemv", "cuBLAS sgemv", {"library", "rows", "cols", "a", "x", "y"},
       {"rows", "cols", "alpha"}, {"alpha"}},
      {BaselineKind::cublaslt_matmul, "cublaslt_matmul", "cuBLASLt matmul",
       {"library", "m", "n", "k", "a", "b", "c", "b_major", "alpha", "a_scale", "b_scale"}, kGemmSizes,
       {"alpha", "a_scale", "b_scale"}, check_lt_matmul},
      {BaselineKind::cudnn_sdpa, "cudnn_sdpa", "cuDNN fused attention",
       {"library", "batch", "heads", "seq", "head_dim", "causal", "scale", "q", "k", "v", "o", "lse"},
       {"batch", "heads", "seq", "head_dim", "causal", "scale"}, {"scale", "lse"}, check_sdpa},
  };
  return specs;
}

const BaselineSpec& baseline_spec(BaselineKind kind) {
  for (auto& s : baseline_specs())
    if (s.kind == kind) return s;
  assert(false && "every BaselineKind has a row");
  return baseline_specs().front();
}

const BaselineSpec* find_baseline(std::string_view id) {
  for (auto& s : baseline_specs())
    if (s.id == id) return &s;
  return nullptr;
}

std::string known_baseline_ids() {
  std::string out;
  for (auto& s : baseline_specs()) out += (out.empty() ? "" : ", ") + std::string(s.id);
  return out;
}

}  // namespace ptxforge::task
