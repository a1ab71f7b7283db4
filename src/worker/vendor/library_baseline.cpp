#include "worker/vendor/library_baseline.h"

#include <dlfcn.h>

#include <cassert>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "util/paths.h"

namespace ptxforge::gpu {

// cuBLAS's C API, declared here (int enums, opaque handle) so no cuBLAS header is needed.
struct LibraryBaseline::Api {
  using Handle = void*;
  int (*create)(Handle*) = nullptr;
  int (*destroy)(Handle) = nullptr;
  int (*sgemm)(Handle, int, int, int, int, int, const float*, const float*, int, const float*, int, const float*, float*, int) = nullptr;
  int (*sgemv)(Handle, int, int, int, const float*, const float*, int, const float*, int, const float*, float*, int) = nullptr;
  Handle handle = nullptr;
};

namespace {
constexpr int kOpN = 0, kOpT = 1;

// A [baseline] key that is an expression of the sizes (alpha, scale, seq, m, ...), parsed.
Result<task::SizeExpr> size_expr(const task::Baseline& b, const char* key) {
  auto it = b.args.find(key);
  if (it == b.args.end()) return Error{fmt::format("baseline {} needs '{}'", task::baseline_spec(b.kind).id, key)};
  return task::SizeExpr::parse(it->second);
}

// The same, evaluated.
Result<double> size_value(const task::Baseline& b, const char* key, const task::Bindings& symbols) {
  auto e = size_expr(b, key);
  if (!e) return e.error();
  auto v = e->evaluate(symbols);
  if (!v) return v.error();
  return v->as_double();
}

// A library loaded on its first use: the first attempt's error is kept and not retried.
template <typename T, typename Create>
bool load_once(std::unique_ptr<T>& slot, std::string& error, Create create) {
  if (!slot && error.empty()) {
    auto made = create();
    if (made) slot = std::move(*made);
    else error = made.error().message;
  }
  return slot != nullptr;
}
}  // namespace

Result<std::unique_ptr<LibraryBaseline>> LibraryBaseline::create(const Driver& d) {
  void* h = open_cuda_library("libcublas.so.13");
  if (!h) h = open_cuda_library("libcublas.so");
  if (!h) return Error{fmt::format("cuBLAS not found (looked in {}/lib64 and the library path)", cuda_home())};
  auto api = std::make_unique<Api>();
  api->create = reinterpret_cast<decltype(api->create)>(dlsym(h, "cublasCreate_v2"));
  api->destroy = reinterpret_cast<decltype(api->destroy)>(dlsym(h, "cublasDestroy_v2"));
  api->sgemm = reinterpret_cast<decltype(api->sgemm)>(dlsym(h, "cublasSgemm_v2"));
  api->sgemv = reinterpret_cast<decltype(api->sgemv)>(dlsym(h, "cublasSgemv_v2"));
  if (!api->create || !api->destroy || !api->sgemm || !api->sgemv) return Error{"cuBLAS lacks an expected function"};
  if (int rc = api->create(&api->handle); rc != 0) return Error{fmt::format("cublasCreate failed with status {}", rc)};
  return std::unique_ptr<LibraryBaseline>(new LibraryBaseline(d, std::move(api)));
}

LibraryBaseline::LibraryBaseline(const Driver& d, std::unique_ptr<Api> api) : d_(d), api_(std::move(api)) {}
LibraryBaseline::~LibraryBaseline() {
  lt_.reset();
  sdpa_.reset();
  if (api_ && api_->handle) api_->destroy(api_->handle);
}

Status LibraryBaseline::run(const task::Task& t, const task::Bindings& symbols,
                            const std::map<std::string, CUdeviceptr>& buffers) {
  assert(t.baseline);
  // One runner per row of task/baselines.h; the switch has no default, so a new kind that has
  // no runner is a compiler warning here.
  switch (t.baseline->kind) {
    case task::BaselineKind::cublas_sgemm: return run_sgemm(t, symbols, buffers);
    case task::BaselineKind::cublas_sgemv: return run_sgemv(t, symbols, buffers);
    case task::BaselineKind::cublaslt_matmul: return run_lt_matmul(t, symbols, buffers);
    case task::BaselineKind::cudnn_sdpa: return run_sdpa(t, symbols, buffers);
  }
  return Error{fmt::format("no runner for library baseline {}", task::baseline_spec(t.baseline->kind).id)};
}

namespace {
// The integer value of a size key, and the device pointer of a buffer key, of a [baseline].
Result<int64_t> int_arg(const task::Baseline& b, const char* key, const task::Bindings& symbols) {
  auto e = size_expr(b, key);
  if (!e) return e.error();
  return e->evaluate_int(symbols);
}
Result<float*> float_buffer(const task::Baseline& b, const char* key, const std::map<std::string, CUdeviceptr>& buffers) {
  auto id = task::baseline_spec(b.kind).id;
  auto it = b.args.find(key);
  if (it == b.args.end()) return Error{fmt::format("baseline {} needs '{}'", id, key)};
  auto p = buffers.find(it->second);
  if (p == buffers.end()) return Error{fmt::format("baseline {}: '{}' is not a buffer", id, it->second)};
  return reinterpret_cast<float*>(p->second);
}
constexpr float kOne = 1.0f, kZero = 0.0f;
}  // namespace

// [baseline] library = "cublas_sgemm": m, n, k; a, b, c row-major f32.
Status LibraryBaseline::run_sgemm(const task::Task& t, const task::Bindings& symbols,
                                  const std::map<std::string, CUdeviceptr>& buffers) {
  const task::Baseline& b = *t.baseline;
  auto m = int_arg(b, "m", symbols), n = int_arg(b, "n", symbols), k = int_arg(b, "k", symbols);
  auto A = float_buffer(b, "a", buffers), B = float_buffer(b, "b", buffers), C = float_buffer(b, "c", buffers);
  for (auto* r : {&m, &n, &k})
    if (!*r) return r->error();
  for (auto* r : {&A, &B, &C})
    if (!*r) return r->error();
  // Row-major C (m x n) = A (m x k) B (k x n)  <=>  column-major C^T = B^T A^T.
  int rc = api_->sgemm(api_->handle, kOpN, kOpN, static_cast<int>(*n), static_cast<int>(*m), static_cast<int>(*k), &kOne,
                       *B, static_cast<int>(*n), *A, static_cast<int>(*k), &kZero, *C, static_cast<int>(*n));
  if (rc != 0) return Error{fmt::format("cublasSgemm failed with status {}", rc)};
  return ok_status();
}

// [baseline] library = "cublas_sgemv": rows, cols; a (rows x cols, row-major), x, y f32.
Status LibraryBaseline::run_sgemv(const task::Task& t, const task::Bindings& symbols,
                                  const std::map<std::string, CUdeviceptr>& buffers) {
  const task::Baseline& b = *t.baseline;
  auto rows = int_arg(b, "rows", symbols), cols = int_arg(b, "cols", symbols);
  auto A = float_buffer(b, "a", buffers), X = float_buffer(b, "x", buffers), Y = float_buffer(b, "y", buffers);
  for (auto* r : {&rows, &cols})
    if (!*r) return r->error();
  for (auto* r : {&A, &X, &Y})
    if (!*r) return r->error();
  // Row-major A (rows x cols) is column-major A^T (cols x rows): y = (A^T)^T x.
  int rc = api_->sgemv(api_->handle, kOpT, static_cast<int>(*cols), static_cast<int>(*rows), &kOne, *A,
                       static_cast<int>(*cols), *X, 1, &kZero, *Y, 1);
  if (rc != 0) return Error{fmt::format("cublasSgemv failed with status {}", rc)};
  return ok_status();
}

// [baseline] library = "cublaslt_matmul": m, n, k (and alpha); a, b, c of the types
// task/baselines.cpp allows; b_major = "k" for B stored n x k; a_scale and b_scale for
// block-scaled fp8.
Status LibraryBaseline::run_lt_matmul(const task::Task& t, const task::Bindings& symbols,
                                      const std::map<std::string, CUdeviceptr>& buffers) {
  const task::Baseline& b = *t.baseline;
  LtMatmul mm;
  auto m = int_arg(b, "m", symbols), n = int_arg(b, "n", symbols), k = int_arg(b, "k", symbols);
  for (auto* r : {&m, &n, &k})
    if (!*r) return r->error();
  mm.m = *m;
  mm.n = *n;
  mm.k = *k;
  for (auto [key, ptr, type] : {std::tuple{"a", &mm.A, &mm.a}, std::tuple{"b", &mm.B, &mm.b}, std::tuple{"c", &mm.C, &mm.c}}) {
    auto p = float_buffer(b, key, buffers);
    if (!p) return p.error();
    *ptr = reinterpret_cast<CUdeviceptr>(*p);
    const task::Param* param = t.find_param(b.args.at(key));
    assert(param);
    *type = param->dtype;
  }
  auto major = b.args.find("b_major");
  mm.b_k_major = major != b.args.end() && major->second == "k";
  // Block scales (both or neither, task/baselines.cpp): each buffer must hold the tiles cuBLASLt reads.
  if (b.args.count("a_scale") && b.args.count("b_scale")) {
    for (auto [key, ptr, rows] : {std::tuple{"a_scale", &mm.A_scale, mm.m}, std::tuple{"b_scale", &mm.B_scale, mm.n}}) {
      auto p = float_buffer(b, key, buffers);
      if (!p) return p.error();
      const task::Param* param = t.find_param(b.args.at(key));
      assert(param);
      auto count = param->count.evaluate_int(symbols);
      if (!count) return count.error();
      if (*count * static_cast<int64_t>(task::dtype_size(param->dtype)) < block_scale_bytes(rows, mm.k))
        return Error{fmt::format("baseline cublaslt_matmul: '{}' holds {} bytes, VEC32_UE8M0 scales of {} rows of k = {} take {}",
                                 b.args.at(key), *count * task::dtype_size(param->dtype), rows, mm.k, block_scale_bytes(rows, mm.k))};
      *ptr = reinterpret_cast<CUdeviceptr>(*p);
    }
  }
  if (b.args.count("alpha")) {
    auto alpha = size_value(b, "alpha", symbols);
    if (!alpha) return alpha.error();
    mm.alpha = static_cast<float>(*alpha);
  }
  if (!load_once(lt_, lt_error_, [&] { return CublasLt::create(d_); })) return Error{lt_error_};
  return lt_->run(mm);
}

// [baseline] library = "cudnn_sdpa": batch, heads, seq, head_dim, causal (and scale, else
// 1/sqrt(head_dim)) are expressions of the sizes; q, k, v, o (and lse) name the buffers.
Status LibraryBaseline::run_sdpa(const task::Task& t, const task::Bindings& symbols, const Buffers& buffers) {
  const task::Baseline& b = *t.baseline;
  auto value = [&](const char* key) { return size_value(b, key, symbols); };
  SdpaCall call;
  for (auto [key, out] :
       {std::pair{"batch", &call.batch}, {"heads", &call.heads}, {"seq", &call.seq}, {"head_dim", &call.head_dim}}) {
    auto v = value(key);
    if (!v) return v.error();
    if (!(*v >= 1 && *v <= (1 << 30)))
      return Error{fmt::format("baseline cudnn_sdpa: {} is {}, not a count from 1 to 2^30", key, *v)};
    *out = static_cast<int64_t>(*v);
  }
  auto causal = value("causal");
  if (!causal) return causal.error();
  call.causal = *causal != 0;
  call.scale = 1.0f / std::sqrt(static_cast<float>(call.head_dim));
  if (b.args.count("scale")) {
    auto s = value("scale");
    if (!s) return s.error();
    call.scale = static_cast<float>(*s);
  }
  // Each buffer must hold what cuDNN will read or write: [batch][heads][seq][head_dim], or one
  // f32 per row for lse.
  const int64_t rows = call.batch * call.heads * call.seq;
  for (auto [key, ptr, need] :
       {std::tuple{"q", &call.q, rows * call.head_dim}, std::tuple{"k", &call.k, rows * call.head_dim},
        std::tuple{"v", &call.v, rows * call.head_dim}, std::tuple{"o", &call.o, rows * call.head_dim},
        std::tuple{"lse", &call.lse, rows}}) {
    auto it = b.args.find(key);
    if (it == b.args.end()) {
      if (std::string(key) == "lse") continue;
      return Error{fmt::format("baseline cudnn_sdpa needs '{}'", key)};
    }
    auto p = buffers.find(it->second);
    const task::Param* param = t.find_param(it->second);
    if (p == buffers.end() || !param)
      return Error{fmt::format("baseline cudnn_sdpa: '{}' is not a buffer", it->second)};
    auto count = param->count.evaluate_int(symbols);
    if (!count) return count.error();
    if (*count < need)
      return Error{fmt::format("baseline cudnn_sdpa: buffer '{}' holds {} elements, the attention needs {}", it->second,
                               *count, need)};
    *ptr = p->second;
    if (std::string(key) == "q") call.dtype = param->dtype;
  }
  if (!load_once(sdpa_, sdpa_error_, [&] { return CudnnSdpa::create(d_); })) return Error{sdpa_error_};
  return sdpa_->run(call);
}

}  // namespace ptxforge::gpu
