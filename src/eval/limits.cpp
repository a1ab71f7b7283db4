// The policy limits of limits.h over a parsed module: one walk over every variable
// declaration (module scope, parameter lists, nested blocks) and over the functions declared
// without a body.
#include "eval/limits.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>

#include "ptx/isa.h"

namespace ptxforge::eval {

namespace {

constexpr uint64_t kMax = UINT64_MAX;

uint64_t mul_sat(uint64_t a, uint64_t b) { return a != 0 && b > kMax / a ? kMax : a * b; }
uint64_t add_sat(uint64_t a, uint64_t b) { return b > kMax - a ? kMax : a + b; }
uint64_t round_up_sat(uint64_t v, uint64_t a) {
  if (a <= 1) return v;
  uint64_t r = v % a;
  return r == 0 ? v : add_sat(v, a - r);
}

// The scalars an initializer holds: `{1, 2, {3, 4}}` is 4, `42` and `generic(a)` are 1.
uint64_t initializer_scalars(const ptx::Operand& o) {
  if (o.kind != ptx::Operand::Kind::vector && o.kind != ptx::Operand::Kind::list) return 1;
  uint64_t n = 0;
  for (auto& e : o.elems) n = add_sat(n, initializer_scalars(e));
  return n;
}

// One finding per rule is enough to act on; a module breaking a limit hundreds of times
// (a generated one) would otherwise bury the feedback.
class Findings {
 public:
  explicit Findings(Diagnostics& d) : diags_(d) {}
  Diagnostic* add(std::string_view id, SourceLoc loc, uint32_t length, std::string message, std::string hint) {
    for (auto& seen : ids_)
      if (seen == id) return nullptr;
    ids_.emplace_back(id);
    Diagnostic& d = diags_.error(loc, std::move(message), std::string(id));
    d.length = std::max<uint32_t>(length, 1);
    d.hint = std::move(hint);
    return &d;
  }

 private:
  Diagnostics& diags_;
  std::vector<std::string> ids_;
};

struct SpaceRule {
  std::string_view space, id;
  uint64_t Limits::*limit;
  const char* hint;
};

const std::array<SpaceRule, 3> kSpaceRules = {{
    {".local", "limit-local", &Limits::local_bytes,
     "no thread can have that much local memory; keep per-thread arrays small (registers or shared memory)"},
    {".shared", "limit-shared", &Limits::shared_bytes,
     "no GPU has that much shared memory per block; dynamic shared memory is declared "
     "'.extern .shared .align 16 .b8 smem[];' and sized by the launch spec's smem"},
    {".param", "limit-param", &Limits::param_bytes,
     "pass large data through a buffer parameter (a pointer), not by value"},
}};

class Walker {
 public:
  Walker(const Limits& limits, Findings& out) : limits_(limits), out_(out) {}

  void variable(const ptx::VarDecl& d) {
    for (auto& n : d.names) declarator(d, n);
  }

  void block(const ptx::Block& b) {
    ptx::for_each_statement(b, [&](const ptx::Statement& s) {
      if (auto* v = s.get_if<ptx::VarDecl>()) variable(*v);
    });
  }

 private:
  void declarator(const ptx::VarDecl& d, const ptx::Declarator& n) {
    if (d.space == ".reg" || d.space == ".sreg") return;  // registers are ptxas's to allocate and bound
    uint32_t len = static_cast<uint32_t>(n.name.size());
    if (d.align > limits_.align)
      out_.add("limit-align", n.loc, len,
               fmt::format("variable '{}' asks for .align {}; ptxforge allows at most .align {}", n.name, d.align,
                           limits_.align),
               "align to what the accesses need (1024 covers swizzled shared memory for TMA and wgmma); a larger "
               "alignment only pads the cubin and the memory each load of it takes");
    uint64_t bytes = variable_bytes(d, n);
    for (auto& rule : kSpaceRules)
      if (d.space == rule.space && bytes > limits_.*rule.limit)
        out_.add(rule.id, n.loc, len,
                 fmt::format("{} variable '{}' takes {}; ptxforge allows at most {} per {} variable", rule.space, n.name,
                             byte_text(bytes), byte_text(limits_.*rule.limit), rule.space),
                 rule.hint);
    if (d.space == ".global" || d.space == ".const") {
      // Laid out in declaration order, each at its alignment, one section per space and kind
      // (initialised data apart, as ptxas places it): the gaps are memory, and cubin bytes for
      // initialised data, as much as the variables are.
      bool data = d.space == ".const" || static_cast<bool>(n.init);
      uint64_t align = std::max<uint64_t>(d.align, 1);
      uint64_t& at = d.space == ".const" ? const_end_ : data ? global_data_end_ : global_end_;
      at = add_sat(round_up_sat(at, align), bytes);
      uint64_t in_data = add_sat(global_data_end_, const_end_);
      uint64_t total = add_sat(global_end_, in_data);
      if (data && in_data > limits_.module_data_bytes)
        out_.add("limit-module-data", n.loc, len,
                 fmt::format("the module's initialised .global and its .const variables reach {} at '{}' (alignment "
                             "gaps included); ptxforge allows at most {}, which ptxas would write into the cubin",
                             byte_text(in_data), n.name, byte_text(limits_.module_data_bytes)),
                 "keep initialised tables small; compute large ones in the kernel or leave them uninitialised");
      if (total > limits_.module_bytes)
        out_.add("limit-module-bytes", n.loc, len,
                 fmt::format("the module's .global and .const variables reach {} at '{}' (alignment gaps included); "
                             "ptxforge allows at most {} in all",
                             byte_text(total), n.name, byte_text(limits_.module_bytes)),
                 "keep module variables to small tables; memory a kernel works in is a task buffer or a @scratch "
                 "buffer of the launch spec");
    }
  }

  const Limits& limits_;
  Findings& out_;
  uint64_t global_end_ = 0, global_data_end_ = 0, const_end_ = 0;
};

}  // namespace

std::string byte_text(uint64_t bytes) {
  if (bytes == kMax) return "more than 16 EiB";
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

uint64_t variable_bytes(const ptx::VarDecl& d, const ptx::Declarator& n) {
  int bits = ptx::type_bits(d.type);
  // Opaque handles (.texref, .samplerref, .surfref) have no bit width here; 8 bytes each.
  uint64_t bytes = bits > 0 ? std::max<uint64_t>(static_cast<uint64_t>(bits) / 8, 1) : 8;
  if (d.vec > 1) bytes = mul_sat(bytes, d.vec);
  uint64_t known = 1;
  bool unsized = false;
  for (auto& dim : n.dims) {
    if (dim) known = mul_sat(known, *dim);
    else unsized = true;
  }
  uint64_t elements = known;
  if (unsized) elements = n.init ? std::max(known, initializer_scalars(*n.init)) : 0;
  return mul_sat(bytes, elements);
}

bool is_device_allocator(std::string_view name) {
  // malloc/free (what `new` and `delete` compile to as well), the aligned allocator, and the
  // device runtime's cudaMalloc/cudaFree, which draw on the same heap.
  static constexpr std::array<std::string_view, 5> kNames = {"malloc", "free", "__nv_aligned_device_malloc", "cudaMalloc",
                                                             "cudaFree"};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

Diagnostics check_policy(const ptx::Module& m, const PolicyInput& in, const Limits& limits) {
  Diagnostics diags;
  Findings out(diags);
  if (in.cuda_bytes > limits.cuda_bytes)
    out.add("limit-candidate-size", {}, 1,
            fmt::format("the CUDA source is {}; ptxforge allows at most {}", byte_text(in.cuda_bytes),
                        byte_text(limits.cuda_bytes)),
            "");
  if (in.ptx_bytes > limits.ptx_bytes)
    out.add("limit-candidate-size", {}, 1,
            fmt::format("the PTX is {}; ptxforge allows at most {}", byte_text(in.ptx_bytes), byte_text(limits.ptx_bytes)),
            "a kernel fits in far less: use loops instead of unrolling everything by hand");
  Walker walk(limits, out);
  for (auto& item : m.items) {
    if (auto* v = std::get_if<ptx::VarDecl>(&item.node)) walk.variable(*v);
    auto* f = std::get_if<ptx::Function>(&item.node);
    if (!f) continue;
    for (auto& p : f->rets) walk.variable(p);
    for (auto& p : f->params) walk.variable(p);
    if (f->body) walk.block(*f->body);
    // A declaration without a body is resolved by ptxas: for these names, to the driver's heap.
    if (!f->body && is_device_allocator(f->name) && in.device_heap_bytes == 0)
      out.add("device-heap", f->loc, static_cast<uint32_t>(f->name.size()),
              fmt::format("'{}' is the device allocator, and this task grants no device heap (device_heap_bytes = 0): "
                          "the heap outlives a launch, so it could carry results from one run to the next",
                          f->name),
              "compute in registers, shared memory or a @scratch buffer of the launch spec");
  }
  return diags;
}

Diagnostics check_cubin_size(uint64_t cubin_bytes, const Limits& limits) {
  Diagnostics diags;
  if (cubin_bytes > limits.cubin_bytes)
    diags.error({}, fmt::format("ptxas produced a cubin of {}; ptxforge allows at most {}", byte_text(cubin_bytes),
                                byte_text(limits.cubin_bytes)),
                "limit-cubin-size")
        .hint = "a kernel's machine code is far smaller: look for huge initialised variables or unrolled code";
  return diags;
}

}  // namespace ptxforge::eval
