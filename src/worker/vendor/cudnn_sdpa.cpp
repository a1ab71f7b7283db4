#include "worker/vendor/cudnn_sdpa.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

namespace ptxforge::gpu {

using cudnn::Attr;
using cudnn::AttrType;
using cudnn::DataType;
using cudnn::Descriptor;
using cudnn::DescType;
using cudnn::PointwiseMode;
using cudnn::ReduceOp;

namespace {

// The tensors the caller binds (the rest are virtual: they live inside the fused kernel).
enum Uid : int64_t { kQ = 1, kK = 2, kV = 3, kO = 4, kStats = 5, kScale = 6, kNegInf = 7, kFirstVirtual = 100 };

using Shape = std::array<int64_t, 4>;

// Builds the operation graph one node at a time; the first failure is kept and every later
// step does nothing, so the graph reads as the flow it computes and is checked once.
class GraphBuilder {
 public:
  explicit GraphBuilder(const cudnn::Library& lib) : lib_(lib) {}

  void* tensor(int64_t uid, DataType type, Shape dims, Shape strides, bool is_virtual, bool by_value = false) {
    if (!error_.ok()) return nullptr;
    auto d = lib_.create(DescType::tensor);
    if (!d) return fail(d.error());
    int64_t alignment = 16;
    bool virt = is_virtual, value = by_value;
    for (Status s : {lib_.set(*d, Attr::tensor_data_type, AttrType::data_type, 1, &type, "a tensor's type"),
                     lib_.set(*d, Attr::tensor_dims, AttrType::int64, 4, dims.data(), "a tensor's dims"),
                     lib_.set(*d, Attr::tensor_strides, AttrType::int64, 4, strides.data(), "a tensor's strides"),
                     lib_.set(*d, Attr::tensor_uid, AttrType::int64, 1, &uid, "a tensor's id"),
                     lib_.set(*d, Attr::tensor_byte_alignment, AttrType::int64, 1, &alignment, "a tensor's alignment"),
                     lib_.set(*d, Attr::tensor_is_virtual, AttrType::boolean, 1, &virt, "a tensor's virtual flag"),
                     lib_.set(*d, Attr::tensor_is_by_value, AttrType::boolean, 1, &value, "a tensor's by-value flag"),
                     lib_.finalize(*d, fmt::format("tensor {}", uid).c_str())})
      if (!s) return fail(s.error());
    return keep(std::move(*d), false);
  }

  // A virtual tensor with the next free id.
  void* temp(DataType type, Shape dims, Shape strides) { return tensor(next_uid_++, type, dims, strides, true); }

  void matmul(void* a, void* b, void* c) {
    if (!error_.ok()) return;
    auto desc = lib_.create(DescType::matmul);
    if (!desc) return (void)fail(desc.error());
    DataType f32 = DataType::f32;
    if (!check(lib_.set(*desc, Attr::matmul_comp_type, AttrType::data_type, 1, &f32, "the matmul's compute type")) ||
        !check(lib_.finalize(*desc, "the matmul descriptor")))
      return;
    auto op = lib_.create(DescType::operation_matmul);
    if (!op) return (void)fail(op.error());
    void* raw_desc = keep(std::move(*desc), false);
    for (auto [attr, t] : {std::pair{Attr::op_matmul_a, a},
                           {Attr::op_matmul_b, b},
                           {Attr::op_matmul_c, c},
                           {Attr::op_matmul_desc, raw_desc}})
      if (!check(lib_.set(*op, attr, AttrType::descriptor, 1, &t, "a matmul operand"))) return;
    if (check(lib_.finalize(*op, "a matmul"))) keep(std::move(*op), true);
  }

  // y = mode(x, b, t); b and t may be null. `axis` is for gen_index.
  void pointwise(PointwiseMode mode, DataType precision, void* x, void* b, void* y, void* t = nullptr,
                 int64_t axis = -1) {
    if (!error_.ok()) return;
    auto desc = lib_.create(DescType::pointwise);
    if (!desc) return (void)fail(desc.error());
    if (!check(lib_.set(*desc, Attr::pointwise_mode, AttrType::pointwise_mode, 1, &mode, "a pointwise mode")) ||
        !check(lib_.set(*desc, Attr::pointwise_math_prec, AttrType::data_type, 1, &precision, "a pointwise precision")))
      return;
    if (mode == PointwiseMode::gen_index &&
        !check(lib_.set(*desc, Attr::pointwise_axis, AttrType::int64, 1, &axis, "the index axis")))
      return;
    if (!check(lib_.finalize(*desc, fmt::format("pointwise mode {}", static_cast<int>(mode)).c_str()))) return;
    auto op = lib_.create(DescType::operation_pointwise);
    if (!op) return (void)fail(op.error());
    void* raw_desc = keep(std::move(*desc), false);
    if (!check(lib_.set(*op, Attr::op_pointwise_descriptor, AttrType::descriptor, 1, &raw_desc,
                        "a pointwise descriptor")) ||
        !check(lib_.set(*op, Attr::op_pointwise_x, AttrType::descriptor, 1, &x, "a pointwise input")) ||
        !check(lib_.set(*op, Attr::op_pointwise_y, AttrType::descriptor, 1, &y, "a pointwise output")))
      return;
    if (b && !check(lib_.set(*op, Attr::op_pointwise_b, AttrType::descriptor, 1, &b, "a pointwise second input")))
      return;
    if (t && !check(lib_.set(*op, Attr::op_pointwise_t, AttrType::descriptor, 1, &t, "a pointwise third input")))
      return;
    if (check(lib_.finalize(*op, fmt::format("pointwise operation {}", static_cast<int>(mode)).c_str())))
      keep(std::move(*op), true);
  }

  void reduction(ReduceOp reduce, void* x, void* y) {
    if (!error_.ok()) return;
    auto desc = lib_.create(DescType::reduction);
    if (!desc) return (void)fail(desc.error());
    DataType f32 = DataType::f32;
    if (!check(lib_.set(*desc, Attr::reduction_operator, AttrType::reduction_operator, 1, &reduce,
                        "a reduction operator")) ||
        !check(
            lib_.set(*desc, Attr::reduction_comp_type, AttrType::data_type, 1, &f32, "a reduction's compute type")) ||
        !check(lib_.finalize(*desc, "a reduction descriptor")))
      return;
    auto op = lib_.create(DescType::operation_reduction);
    if (!op) return (void)fail(op.error());
    void* raw_desc = keep(std::move(*desc), false);
    for (auto [attr, v] :
         {std::pair{Attr::op_reduction_x, x}, {Attr::op_reduction_y, y}, {Attr::op_reduction_desc, raw_desc}})
      if (!check(lib_.set(*op, attr, AttrType::descriptor, 1, &v, "a reduction operand"))) return;
    if (check(lib_.finalize(*op, "a reduction"))) keep(std::move(*op), true);
  }

  const Status& error() const { return error_; }
  std::vector<Descriptor> take_descriptors() { return std::move(kept_); }
  const std::vector<void*>& operations() const { return ops_; }

 private:
  void* fail(const Error& e) {
    if (error_.ok()) error_ = e;
    return nullptr;
  }
  bool check(const Status& s) {
    if (!s) fail(s.error());
    return error_.ok();
  }
  void* keep(Descriptor d, bool is_operation) {
    void* raw = d.raw();
    kept_.push_back(std::move(d));
    if (is_operation) ops_.push_back(raw);
    return raw;
  }

  const cudnn::Library& lib_;
  Status error_ = ok_status();
  std::vector<Descriptor> kept_;
  std::vector<void*> ops_;
  int64_t next_uid_ = kFirstVirtual;
};

DataType io_type(task::DType t) { return t == task::DType::f16 ? DataType::f16 : DataType::bf16; }

}  // namespace

struct CudnnSdpa::Plan {
  std::vector<Descriptor> graph_parts;    // tensors and operations, alive as long as the plan
  Descriptor graph, engine_config, plan;  // the plan is destroyed first
  int64_t workspace = 0;
  bool stats = false, causal = false;
  // The by-value scalars: the variant packs point at these, so they live as long as the plan.
  float scale = 1.0f, neg_inf = 0.0f;
  std::map<std::array<CUdeviceptr, 5>, Descriptor> packs;  // by q, k, v, o, lse
};

Result<std::unique_ptr<CudnnSdpa>> CudnnSdpa::create(const Driver& d) {
  auto lib = cudnn::Library::load();
  if (!lib) return lib.error();
  return std::unique_ptr<CudnnSdpa>(new CudnnSdpa(d, std::move(*lib)));
}

CudnnSdpa::CudnnSdpa(const Driver& d, std::unique_ptr<cudnn::Library> lib) : d_(d), lib_(std::move(lib)) {}

CudnnSdpa::~CudnnSdpa() {
  plans_.clear();
  if (workspace_) d_.cuMemFree(workspace_);
}

// Grows the workspace; the old one is freed only once the new one exists, so a failed
// allocation leaves every plan with the workspace it had.
Status CudnnSdpa::ensure_workspace(size_t bytes) {
  if (bytes <= workspace_bytes_) return ok_status();
  CUdeviceptr grown = 0;
  if (CUresult rc = d_.cuMemAlloc(&grown, bytes); rc != CUDA_SUCCESS)
    return Error{fmt::format("allocating cuDNN's workspace of {} bytes: {}", bytes, describe(rc))};
  for (auto& [key, plan] : plans_) plan->packs.clear();  // they bind the old workspace
  if (workspace_) d_.cuMemFree(workspace_);
  workspace_ = grown;
  workspace_bytes_ = bytes;
  return ok_status();
}

Result<CudnnSdpa::Plan*> CudnnSdpa::plan_for(const SdpaCall& c) {
  auto key =
      std::make_tuple(c.batch, c.heads, c.seq, c.head_dim, c.causal, c.lse != 0, static_cast<int>(c.dtype), c.scale);
  if (auto it = plans_.find(key); it != plans_.end()) return it->second.get();
  const int64_t b = c.batch, h = c.heads, s = c.seq, d = c.head_dim;
  const Shape row_major = {h * s * d, s * d, d, 1};
  const Shape scores = {b, h, s, s}, score_strides = {h * s * s, s * s, s, 1};
  const Shape per_row = {b, h, s, 1}, per_row_strides = {h * s, s, 1, 1};
  const Shape scalar = {1, 1, 1, 1};
  const DataType io = io_type(c.dtype), f32 = DataType::f32;

  GraphBuilder g(*lib_);
  void* q = g.tensor(kQ, io, {b, h, s, d}, row_major, false);
  void* kt = g.tensor(kK, io, {b, h, d, s}, {h * s * d, s * d, 1, d}, false);  // K read as Kᵀ
  void* v = g.tensor(kV, io, {b, h, s, d}, row_major, false);
  void* o = g.tensor(kO, io, {b, h, s, d}, row_major, false);
  void* scale = g.tensor(kScale, f32, scalar, scalar, false, true);

  void* qk = g.temp(f32, scores, score_strides);
  g.matmul(q, kt, qk);
  void* scaled = g.temp(f32, scores, score_strides);
  g.pointwise(PointwiseMode::mul, f32, qk, scale, scaled);
  void* logits = scaled;
  if (c.causal) {  // keep column <= row, the rest becomes -inf
    void* row = g.temp(DataType::i32, scores, score_strides);
    g.pointwise(PointwiseMode::gen_index, f32, scaled, nullptr, row, nullptr, 2);
    void* col = g.temp(DataType::i32, scores, score_strides);
    g.pointwise(PointwiseMode::gen_index, f32, scaled, nullptr, col, nullptr, 3);
    void* keep = g.temp(DataType::boolean, scores, score_strides);
    g.pointwise(PointwiseMode::cmp_ge, DataType::boolean, row, col, keep);
    void* neg_inf = g.tensor(kNegInf, f32, scalar, scalar, false, true);
    logits = g.temp(f32, scores, score_strides);
    g.pointwise(PointwiseMode::binary_select, f32, scaled, neg_inf, logits, keep);
  }
  void* max = g.temp(f32, per_row, per_row_strides);
  g.reduction(ReduceOp::max, logits, max);
  void* shifted = g.temp(f32, scores, score_strides);
  g.pointwise(PointwiseMode::sub, f32, logits, max, shifted);
  void* e = g.temp(f32, scores, score_strides);
  g.pointwise(PointwiseMode::exp, f32, shifted, nullptr, e);
  void* sum = g.temp(f32, per_row, per_row_strides);
  g.reduction(ReduceOp::add, e, sum);
  if (c.lse) {
    void* stats = g.tensor(kStats, f32, per_row, per_row_strides, false);
    void* log_sum = g.temp(f32, per_row, per_row_strides);
    g.pointwise(PointwiseMode::log, f32, sum, nullptr, log_sum);
    g.pointwise(PointwiseMode::add, f32, max, log_sum, stats);
  }
  void* p = g.temp(io, scores, score_strides);  // the second product takes P in the inputs' type
  g.pointwise(PointwiseMode::div, f32, e, sum, p);
  g.matmul(p, v, o);
  if (!g.error().ok()) return g.error().error();

  auto plan = std::make_unique<Plan>();
  plan->stats = c.lse != 0;
  plan->causal = c.causal;
  plan->scale = c.scale;
  // cuDNN 9.10 and later mask with -inf; earlier versions want the lowest finite float.
  plan->neg_inf =
      lib_->version() >= 91000 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::lowest();
  auto graph = lib_->create(DescType::operation_graph);
  if (!graph) return graph.error();
  void* handle = lib_->handle();
  const auto& ops = g.operations();
  for (Status st : {lib_->set(*graph, Attr::graph_handle, AttrType::handle, 1, &handle, "the graph's handle"),
                    lib_->set(*graph, Attr::graph_ops, AttrType::descriptor, static_cast<int64_t>(ops.size()),
                              ops.data(), "the graph's operations"),
                    lib_->finalize(*graph, "the attention graph")})
    if (!st) return st.error();
  plan->graph_parts = g.take_descriptors();
  plan->graph = std::move(*graph);

  auto heur = lib_->create(DescType::engine_heuristics);
  if (!heur) return heur.error();
  int mode = cudnn::kHeurModeA;
  void* raw_graph = plan->graph.raw();
  for (Status st : {lib_->set(*heur, Attr::engineheur_operation_graph, AttrType::descriptor, 1, &raw_graph,
                              "the heuristic's graph"),
                    lib_->set(*heur, Attr::engineheur_mode, AttrType::heur_mode, 1, &mode, "the heuristic's mode"),
                    lib_->finalize(*heur, "the engine heuristic")})
    if (!st) return st.error();
  int64_t count = 0;
  if (auto st =
          lib_->get(*heur, Attr::engineheur_results, AttrType::descriptor, 0, &count, nullptr, "the number of engines");
      !st)
    return st.error();
  std::vector<Descriptor> configs;
  std::vector<void*> raw_configs;
  for (int64_t i = 0; i < count; ++i) {
    auto cfg = lib_->create(DescType::engine_config);
    if (!cfg) return cfg.error();
    raw_configs.push_back(cfg->raw());
    configs.push_back(std::move(*cfg));
  }
  if (count > 0)
    if (auto st = lib_->get(*heur, Attr::engineheur_results, AttrType::descriptor, count, &count, raw_configs.data(),
                            "the engines");
        !st)
      return st.error();
  std::string tried;
  for (int64_t i = 0; i < count; ++i) {
    auto ep = lib_->create(DescType::execution_plan);
    if (!ep) return ep.error();
    auto st = lib_->set(*ep, Attr::plan_handle, AttrType::handle, 1, &handle, "the plan's handle");
    if (st)
      st = lib_->set(*ep, Attr::plan_engine_config, AttrType::descriptor, 1, &raw_configs[i], "the plan's engine");
    if (st) st = lib_->finalize(*ep, "an execution plan");
    if (!st) {
      tried += fmt::format("\n  engine configuration {}: {}", i, st.error().message);
      continue;
    }
    int64_t returned = 0;
    auto ws = lib_->get(*ep, Attr::plan_workspace_size, AttrType::int64, 1, &returned, &plan->workspace,
                        "the workspace size");
    if (!ws) return ws.error();
    plan->engine_config = std::move(configs[i]);
    plan->plan = std::move(*ep);
    break;
  }
  if (!plan->plan.raw())
    return Error{
        fmt::format("cuDNN {} has no engine for attention with batch {}, {} heads, sequence {}, head dimension {}{}{}",
                    lib_->version(), b, h, s, d, c.causal ? ", causal" : "",
                    tried.empty() ? " (the heuristic offered none)" : tried)};
  if (auto st = ensure_workspace(static_cast<size_t>(plan->workspace)); !st) return st.error();
  Plan* raw = plan.get();
  plans_[key] = std::move(plan);
  return raw;
}

Status CudnnSdpa::run(const SdpaCall& c) {
  assert(c.q && c.k && c.v && c.o);
  // Measured with cuDNN 9.14 on an H200: a scale of 0 leaves every o NaN (lse is right).
  if (!(std::isfinite(c.scale) && c.scale != 0.0f))
    return Error{
        fmt::format("cuDNN's fused attention needs a finite, non-zero scale (got {}): with 0 it writes NaN", c.scale)};
  auto plan = plan_for(c);
  if (!plan) return plan.error();
  Plan& p = **plan;
  if (auto st = ensure_workspace(static_cast<size_t>(p.workspace)); !st) return st.error();
  // The variant pack binds this call's buffers; one is kept per set of buffers (verify and
  // the timing allocate their own), so a timed call is cuDNN's execute alone.
  const std::array<CUdeviceptr, 5> buffers = {c.q, c.k, c.v, c.o, c.lse};
  if (auto it = p.packs.find(buffers); it != p.packs.end()) return lib_->execute(p.plan, it->second);
  std::vector<int64_t> uids = {kQ, kK, kV, kO, kScale};
  std::vector<void*> pointers = {reinterpret_cast<void*>(c.q), reinterpret_cast<void*>(c.k),
                                 reinterpret_cast<void*>(c.v), reinterpret_cast<void*>(c.o), &p.scale};
  if (p.stats) {
    uids.push_back(kStats);
    pointers.push_back(reinterpret_cast<void*>(c.lse));
  }
  if (p.causal) {
    uids.push_back(kNegInf);
    pointers.push_back(&p.neg_inf);
  }
  auto pack = lib_->create(DescType::variant_pack);
  if (!pack) return pack.error();
  void* ws = reinterpret_cast<void*>(workspace_);
  const int64_t n = static_cast<int64_t>(uids.size());
  for (Status st :
       {lib_->set(*pack, Attr::variant_pack_uids, AttrType::int64, n, uids.data(), "the variant pack's ids"),
        lib_->set(*pack, Attr::variant_pack_pointers, AttrType::void_ptr, n, pointers.data(),
                  "the variant pack's pointers"),
        lib_->set(*pack, Attr::variant_pack_workspace, AttrType::void_ptr, 1, &ws, "the workspace"),
        lib_->finalize(*pack, "the variant pack")})
    if (!st) return st.error();
  if (p.packs.size() >= 64) p.packs.clear();
  auto& kept = p.packs[buffers] = std::move(*pack);
  return lib_->execute(p.plan, kept);
}

}  // namespace ptxforge::gpu
