#include "worker/vendor/cublaslt.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "util/paths.h"

#if __has_include(<cublasLt.h>)
#include <cublasLt.h>  // only to check the values this file declares, below
#define PTXFORGE_HAVE_CUBLASLT_H 1
#endif

namespace ptxforge::gpu {

namespace {

// cuBLASLt's C API as this file uses it, declared here (int enums, opaque handles) so that no
// cuBLAS header is needed; the values are those of cublasLt.h and library_types.h (CUDA 12/13).
using Handle = void*;
struct HeuristicResult {  // cublasLtMatmulHeuristicResult_t
  uint64_t algo[8];
  size_t workspace_size;
  int state;
  float waves;
  int reserved[4];
};
constexpr int kOpN = 0, kOpT = 1;
constexpr int kDescTransA = 3, kDescTransB = 4;  // CUBLASLT_MATMUL_DESC_TRANSA/B
constexpr int kDescAScalePointer = 17, kDescBScalePointer = 18;  // CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER
constexpr int kDescAScaleMode = 31, kDescBScaleMode = 32;        // CUBLASLT_MATMUL_DESC_A/B_SCALE_MODE
constexpr int32_t kScaleVec32Ue8m0 = 2;                          // CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0
constexpr int kPrefMaxWorkspace = 1;             // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
constexpr int kPrefReductionSchemeMask = 3;       // CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK
constexpr uint32_t kReduceInComputeType = 2;      // CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE
constexpr int kCompute32F = 68, kCompute32FFastTf32 = 77;
constexpr int kR32F = 0;
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

int cuda_type(task::DType t) {
  switch (t) {
    case task::DType::f16: return 2;    // CUDA_R_16F
    case task::DType::bf16: return 14;  // CUDA_R_16BF
    case task::DType::f32: return 0;    // CUDA_R_32F
    case task::DType::e4m3: return 28;  // CUDA_R_8F_E4M3
    case task::DType::e5m2: return 29;  // CUDA_R_8F_E5M2
    default: return -1;
  }
}

// Where the toolkit's header is at hand (CUDA 12.8+ here and on the GPU machine), the values
// above are checked against it at compile time; the file still builds without it.
#ifdef PTXFORGE_HAVE_CUBLASLT_H
static_assert(kOpN == CUBLAS_OP_N && kOpT == CUBLAS_OP_T);
static_assert(kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA && kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB);
static_assert(kDescAScalePointer == CUBLASLT_MATMUL_DESC_A_SCALE_POINTER &&
              kDescBScalePointer == CUBLASLT_MATMUL_DESC_B_SCALE_POINTER);
static_assert(kDescAScaleMode == CUBLASLT_MATMUL_DESC_A_SCALE_MODE && kDescBScaleMode == CUBLASLT_MATMUL_DESC_B_SCALE_MODE);
static_assert(kScaleVec32Ue8m0 == CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0);
static_assert(kPrefMaxWorkspace == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
static_assert(kPrefReductionSchemeMask == CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK);
static_assert(kReduceInComputeType == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE);
static_assert(kCompute32F == CUBLAS_COMPUTE_32F && kCompute32FFastTf32 == CUBLAS_COMPUTE_32F_FAST_TF32 && kR32F == CUDA_R_32F);
static_assert(sizeof(HeuristicResult) == sizeof(cublasLtMatmulHeuristicResult_t));
#endif

}  // namespace

int64_t block_scale_bytes(int64_t rows, int64_t k) { return (rows + 127) / 128 * 128 * ((k + 127) / 128 * 4); }

struct CublasLt::Api {
  int (*create)(Handle*) = nullptr;
  int (*destroy)(Handle) = nullptr;
  int (*desc_create)(Handle*, int compute, int scale) = nullptr;
  int (*desc_destroy)(Handle) = nullptr;
  int (*desc_set)(Handle, int attr, const void*, size_t) = nullptr;
  int (*layout_create)(Handle*, int type, uint64_t rows, uint64_t cols, int64_t ld) = nullptr;
  int (*layout_destroy)(Handle) = nullptr;
  int (*pref_create)(Handle*) = nullptr;
  int (*pref_destroy)(Handle) = nullptr;
  int (*pref_set)(Handle, int attr, const void*, size_t) = nullptr;
  int (*heuristic)(Handle, Handle desc, Handle a, Handle b, Handle c, Handle d, Handle pref, int requested,
                   HeuristicResult* results, int* returned) = nullptr;
  int (*matmul)(Handle, Handle desc, const void* alpha, const void* A, Handle a, const void* B, Handle b, const void* beta,
                const void* C, Handle c, void* D, Handle d, const void* algo, void* workspace, size_t workspace_bytes,
                void* stream) = nullptr;
  Handle handle = nullptr;
};

struct CublasLt::Plan {
  const Api* api = nullptr;
  Handle desc = nullptr, a = nullptr, b = nullptr, c = nullptr;
  HeuristicResult best{};
  ~Plan() {
    for (Handle l : {a, b, c})
      if (l) api->layout_destroy(l);
    if (desc) api->desc_destroy(desc);
  }
};

Result<std::unique_ptr<CublasLt>> CublasLt::create(const Driver& d) {
  void* h = open_cuda_library("libcublasLt.so.13");
  if (!h) h = open_cuda_library("libcublasLt.so.12");
  if (!h) h = open_cuda_library("libcublasLt.so");
  if (!h) return Error{fmt::format("cuBLASLt not found (looked in {}/lib64 and the library path)", cuda_home())};
  auto api = std::make_unique<Api>();
  auto load = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    return fn != nullptr;
  };
  bool all = load(api->create, "cublasLtCreate") && load(api->destroy, "cublasLtDestroy") &&
             load(api->desc_create, "cublasLtMatmulDescCreate") && load(api->desc_destroy, "cublasLtMatmulDescDestroy") &&
             load(api->desc_set, "cublasLtMatmulDescSetAttribute") && load(api->layout_create, "cublasLtMatrixLayoutCreate") &&
             load(api->layout_destroy, "cublasLtMatrixLayoutDestroy") && load(api->pref_create, "cublasLtMatmulPreferenceCreate") &&
             load(api->pref_destroy, "cublasLtMatmulPreferenceDestroy") &&
             load(api->pref_set, "cublasLtMatmulPreferenceSetAttribute") &&
             load(api->heuristic, "cublasLtMatmulAlgoGetHeuristic") && load(api->matmul, "cublasLtMatmul");
  if (!all) return Error{"cuBLASLt lacks an expected function"};
  if (int rc = api->create(&api->handle); rc != 0) return Error{fmt::format("cublasLtCreate failed with status {}", rc)};
  std::unique_ptr<CublasLt> lt(new CublasLt(d, std::move(api)));
  if (CUresult rc = d.cuMemAlloc(&lt->workspace_, kWorkspaceBytes); rc != CUDA_SUCCESS)
    return Error{fmt::format("allocating cuBLASLt's {} MiB workspace: {}", kWorkspaceBytes >> 20, describe(rc))};
  return lt;
}

CublasLt::CublasLt(const Driver& d, std::unique_ptr<Api> api) : d_(d), api_(std::move(api)) {}

CublasLt::~CublasLt() {
  plans_.clear();
  if (workspace_) d_.cuMemFree(workspace_);
  if (api_->handle) api_->destroy(api_->handle);
}

// Row-major C (m x n) = A (m x k) B is column-major Ct (n x m) = Bt At: cuBLASLt's first
// operand is the task's B, its second the task's A.
Result<const CublasLt::Plan*> CublasLt::plan_for(const LtMatmul& mm) {
  auto key = std::make_tuple(mm.m, mm.n, mm.k, static_cast<int>(mm.a), static_cast<int>(mm.b), static_cast<int>(mm.c), mm.b_k_major,
                             mm.block_scaled());
  if (auto it = plans_.find(key); it != plans_.end()) return it->second.get();
  int ta = cuda_type(mm.a), tb = cuda_type(mm.b), tc = cuda_type(mm.c);
  if (ta < 0 || tb < 0 || tc < 0) return Error{"cuBLASLt: an operand type it does not take"};
  auto plan = std::make_unique<Plan>();
  plan->api = api_.get();
  const Api& a = *api_;
  int compute = mm.a == task::DType::f32 ? kCompute32FFastTf32 : kCompute32F;
  auto fail = [](const char* what, int rc) { return Error{fmt::format("cuBLASLt: {} failed with status {}", what, rc)}; };
  if (int rc = a.desc_create(&plan->desc, compute, kR32F)) return fail("cublasLtMatmulDescCreate", rc);
  int trans_first = mm.b_k_major ? kOpT : kOpN, trans_second = kOpN;
  a.desc_set(plan->desc, kDescTransA, &trans_first, sizeof trans_first);
  a.desc_set(plan->desc, kDescTransB, &trans_second, sizeof trans_second);
  if (mm.block_scaled()) {
    // One UE8M0 scale per 32 elements of k on both operands; the pointers are set per call.
    int32_t mode = kScaleVec32Ue8m0;
    for (int attr : {kDescAScaleMode, kDescBScaleMode})
      if (int rc = a.desc_set(plan->desc, attr, &mode, sizeof mode)) return fail("setting the VEC32_UE8M0 scale mode", rc);
  }
  int rc = mm.b_k_major ? a.layout_create(&plan->a, tb, mm.k, mm.n, mm.k) : a.layout_create(&plan->a, tb, mm.n, mm.k, mm.n);
  if (rc) return fail("cublasLtMatrixLayoutCreate (B)", rc);
  if ((rc = a.layout_create(&plan->b, ta, mm.k, mm.m, mm.k))) return fail("cublasLtMatrixLayoutCreate (A)", rc);
  if ((rc = a.layout_create(&plan->c, tc, mm.n, mm.m, mm.n))) return fail("cublasLtMatrixLayoutCreate (C)", rc);
  Handle pref = nullptr;
  if ((rc = a.pref_create(&pref))) return fail("cublasLtMatmulPreferenceCreate", rc);
  uint64_t ws = kWorkspaceBytes;
  a.pref_set(pref, kPrefMaxWorkspace, &ws, sizeof ws);
  // Split-k partial sums are added in the compute type (f32), never in place in a 16-bit
  // output: at 1000x1003x328 bf16 the heuristic's first choice otherwise reduces four partial
  // products in bf16 and misses an f32-accumulated reference by up to 5 ulps.
  uint32_t schemes = kReduceInComputeType;
  a.pref_set(pref, kPrefReductionSchemeMask, &schemes, sizeof schemes);
  int returned = 0;
  rc = a.heuristic(a.handle, plan->desc, plan->a, plan->b, plan->c, plan->c, pref, 1, &plan->best, &returned);
  a.pref_destroy(pref);
  if (rc || returned == 0)
    return Error{fmt::format("cuBLASLt has no algorithm for this {}x{}x{} product{} (status {})", mm.m, mm.n, mm.k,
                             mm.block_scaled() ? " with VEC32_UE8M0 block scales (Blackwell and CUDA 12.8 or later only)" : "", rc)};
  const Plan* p = plan.get();
  plans_[key] = std::move(plan);
  return p;
}

Status CublasLt::run(const LtMatmul& mm) {
  auto plan = plan_for(mm);
  if (!plan) return plan.error();
  const float zero = 0.0f;
  const Plan& p = **plan;
  if (mm.block_scaled()) {
    // cuBLASLt's A is the task's B (see plan_for), so its A scales are the task's B scales.
    const void* first = reinterpret_cast<const void*>(mm.B_scale);
    const void* second = reinterpret_cast<const void*>(mm.A_scale);
    if (int rc = api_->desc_set(p.desc, kDescAScalePointer, &first, sizeof first))
      return Error{fmt::format("cuBLASLt: setting the scale pointer of B failed with status {}", rc)};
    if (int rc = api_->desc_set(p.desc, kDescBScalePointer, &second, sizeof second))
      return Error{fmt::format("cuBLASLt: setting the scale pointer of A failed with status {}", rc)};
  }
  int rc = api_->matmul(api_->handle, p.desc, &mm.alpha, reinterpret_cast<const void*>(mm.B), p.a, reinterpret_cast<const void*>(mm.A),
                        p.b, &zero, reinterpret_cast<const void*>(mm.C), p.c, reinterpret_cast<void*>(mm.C), p.c, p.best.algo,
                        reinterpret_cast<void*>(workspace_), kWorkspaceBytes, nullptr);
  if (rc != 0) return Error{fmt::format("cublasLtMatmul failed with status {}", rc)};
  return ok_status();
}

}  // namespace ptxforge::gpu
