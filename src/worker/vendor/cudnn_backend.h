// cuDNN's backend (graph) API, loaded with dlopen like cuBLAS: descriptors are created, given
// attributes, finalized, and a finalized execution plan runs with a variant pack of device
// pointers. The enum values are those of cudnn_graph.h (cuDNN 9), declared here so that no cuDNN
// header is needed; only the names this project uses are listed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/result.h"

namespace ptxforge::gpu::cudnn {

enum class DescType : int {  // cudnnBackendDescriptorType_t
  pointwise = 0,
  engine_config = 3,
  engine_heuristics = 4,
  execution_plan = 5,
  operation_pointwise = 13,
  operation_graph = 15,
  variant_pack = 16,
  tensor = 17,
  matmul = 18,
  operation_matmul = 19,
  reduction = 21,
  operation_reduction = 22,
};

enum class AttrType : int {  // cudnnBackendAttributeType_t
  handle = 0,
  data_type = 1,
  boolean = 2,
  int64 = 3,
  void_ptr = 6,
  heur_mode = 8,
  pointwise_mode = 14,
  descriptor = 15,
  reduction_operator = 18,
};

enum class Attr : int {  // cudnnBackendAttributeName_t
  pointwise_mode = 0,
  pointwise_math_prec = 1,
  pointwise_axis = 9,
  engineheur_mode = 200,
  engineheur_operation_graph = 201,
  engineheur_results = 202,
  plan_handle = 400,
  plan_engine_config = 401,
  plan_workspace_size = 402,
  op_pointwise_descriptor = 750,
  op_pointwise_x = 751,
  op_pointwise_b = 752,
  op_pointwise_y = 753,
  op_pointwise_t = 758,
  graph_handle = 800,
  graph_ops = 801,
  tensor_byte_alignment = 900,
  tensor_data_type = 901,
  tensor_dims = 902,
  tensor_strides = 903,
  tensor_uid = 906,
  tensor_is_virtual = 907,
  tensor_is_by_value = 908,
  variant_pack_uids = 1000,
  variant_pack_pointers = 1001,
  variant_pack_workspace = 1003,
  matmul_comp_type = 1500,
  op_matmul_a = 1520,
  op_matmul_b = 1521,
  op_matmul_c = 1522,
  op_matmul_desc = 1523,
  reduction_operator = 1600,
  reduction_comp_type = 1601,
  op_reduction_x = 1610,
  op_reduction_y = 1611,
  op_reduction_desc = 1612,
};

enum class DataType : int { f32 = 0, f16 = 2, i32 = 4, bf16 = 9, boolean = 11 };  // cudnnDataType_t

enum class PointwiseMode : int {  // cudnnPointwiseMode_t
  add = 0,
  mul = 1,
  div = 6,
  sub = 9,
  exp = 13,
  log = 15,
  cmp_ge = 303,
  gen_index = 501,
  binary_select = 601,
};

enum class ReduceOp : int { add = 0, max = 3 };  // cudnnReduceTensorOp_t
constexpr int kHeurModeA = 3;                    // CUDNN_HEUR_MODE_A

struct Api;

// One backend descriptor, destroyed with its owner.
class Descriptor {
 public:
  Descriptor() = default;
  Descriptor(const Api* api, void* raw) : api_(api), raw_(raw) {}
  Descriptor(Descriptor&& o) noexcept : api_(o.api_), raw_(o.raw_) { o.raw_ = nullptr; }
  Descriptor& operator=(Descriptor&& o) noexcept;
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor();
  void* raw() const { return raw_; }

 private:
  const Api* api_ = nullptr;
  void* raw_ = nullptr;
};

// The loaded library and one cuDNN handle (bound to the context current when it was made).
class Library {
 public:
  static Result<std::unique_ptr<Library>> load();
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  size_t version() const;  // 91400 for 9.14.0
  void* handle() const { return handle_; }

  Result<Descriptor> create(DescType t) const;
  // Sets one attribute; `what` names the step in the error ("the score matrix's dims").
  Status set(const Descriptor& d, Attr a, AttrType t, int64_t count, const void* values, const char* what) const;
  Status set(const Descriptor& d, Attr a, const Descriptor& value, const char* what) const {
    void* raw = value.raw();
    return set(d, a, AttrType::descriptor, 1, &raw, what);
  }
  Status get(const Descriptor& d, Attr a, AttrType t, int64_t requested, int64_t* count, void* values,
             const char* what) const;
  Status finalize(const Descriptor& d, const char* what) const;
  Status execute(const Descriptor& plan, const Descriptor& variant_pack) const;

  // "CUDNN_STATUS_NOT_SUPPORTED (9): <cuDNN's last error message>"
  std::string describe(int status) const;

 private:
  explicit Library(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
  void* handle_ = nullptr;
};

}  // namespace ptxforge::gpu::cudnn
