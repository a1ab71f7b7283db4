// The golden vectors' generator (golden_gen.h): family kernels as PTX text, and instances from
// the keyed PRF. The kernels are deliberately plain (a chain of setp/bra on the form id, one
// block per form) so that the only instruction whose semantics matter is the form's own.
#include "emu/golden_gen.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <map>

#include <fmt/format.h>

#include "ptx/front_end.h"
#include "task/prf.h"

namespace ptxforge::emu {
namespace {

using GT = GoldenType;

// The golden key: fixed forever, so that a recording's instances can be drawn again ("golden27").
constexpr uint64_t kGoldenSeed = 0x676f6c64656e3237ull;

bool is_float(GT t) { return t == GT::f16 || t == GT::bf16 || t == GT::f32 || t == GT::f64; }

// The register name of operand `slot` (0 = the result, 1 + k = input k) of type t.
std::string reg(GT t, int slot) {
  const int bits = golden_register_bits(t);
  if (bits == 1) return slot == 0 ? "%pd" : fmt::format("%pi{}", slot);
  return fmt::format("{}{}", bits == 16 ? "%h" : bits == 32 ? "%r" : "%x", slot);
}

// The template with %d %a %b %c %e replaced by the form's registers.
std::string instantiate(const GoldenForm& f) {
  constexpr std::string_view kInputs = "abce";
  std::string out;
  const std::string& s = f.ptx;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool token = s[i] == '%' && i + 1 < s.size() && (i + 2 >= s.size() || !std::isalnum(static_cast<unsigned char>(s[i + 2])));
    if (token && s[i + 1] == 'd') {
      out += reg(f.result, 0);
      ++i;
      continue;
    }
    if (token) {
      const size_t k = kInputs.find(s[i + 1]);
      if (k != std::string_view::npos && k < f.inputs.size()) {
        out += reg(f.inputs[k], static_cast<int>(k) + 1);
        ++i;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::string entry_name(std::string_view family) {
  std::string e = "golden_";
  for (char c : family) e += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return e;
}

// One form's block: load its inputs at their widths, execute, store the result register.
void emit_form(std::string& out, uint32_t id, const GoldenForm& f) {
  out += fmt::format("F{}:\n", id);
  for (size_t k = 0; k < f.inputs.size(); ++k) {
    const int bits = golden_register_bits(f.inputs[k]);
    const size_t off = 8 * (k + 1);
    if (bits == 1) {
      out += fmt::format("  ld.global.u32 %t6, [%rd2+{}];\n  setp.ne.u32 {}, %t6, 0;\n", off, reg(f.inputs[k], int(k) + 1));
    } else {
      out += fmt::format("  ld.global.b{} {}, [%rd2+{}];\n", bits, reg(f.inputs[k], int(k) + 1), off);
    }
  }
  out += "  " + instantiate(f) + ";\n";
  switch (golden_register_bits(f.result)) {
    case 1: out += "  selp.u64 %rd4, 1, 0, %pd;\n"; break;
    case 16: out += "  cvt.u64.u16 %rd4, %h0;\n"; break;
    case 32: out += "  cvt.u64.u32 %rd4, %r0;\n"; break;
    default: out += "  mov.b64 %rd4, %x0;\n"; break;
  }
  out += "  st.global.u64 [%rd3], %rd4;\n  ret;\n";
}

void emit_entry(std::string& out, const GoldenFamily& fam) {
  const auto& forms = golden_forms();
  out += fmt::format(".visible .entry {}(.param .u64 golden_in, .param .u64 golden_out, .param .u32 golden_n)\n{{\n",
                     fam.entry);
  out += "  .reg .pred %p, %pd, %pi<5>;\n  .reg .b16 %h<5>;\n  .reg .b32 %r<5>;\n  .reg .b64 %x<5>;\n";
  out += "  .reg .b32 %t<7>;\n  .reg .b64 %rd<5>;\n";
  out += "  mov.u32 %t0, %ctaid.x;\n  mov.u32 %t1, %ntid.x;\n  mov.u32 %t2, %tid.x;\n";
  out += "  mad.lo.u32 %t3, %t0, %t1, %t2;\n  ld.param.u32 %t4, [golden_n];\n";
  out += "  setp.ge.u32 %p, %t3, %t4;\n  @%p bra DONE;\n";
  out += "  ld.param.u64 %rd0, [golden_in];\n  ld.param.u64 %rd1, [golden_out];\n";
  out += "  cvta.to.global.u64 %rd0, %rd0;\n  cvta.to.global.u64 %rd1, %rd1;\n";
  out += fmt::format("  mul.wide.u32 %rd2, %t3, {};\n  add.u64 %rd2, %rd0, %rd2;\n", 8 * (1 + fam.arity));
  out += "  mul.wide.u32 %rd3, %t3, 8;\n  add.u64 %rd3, %rd1, %rd3;\n";
  out += "  ld.global.u32 %t5, [%rd2];\n";
  for (uint32_t id : fam.forms) out += fmt::format("  setp.eq.u32 %p, %t5, {};\n  @%p bra F{};\n", id, id);
  out += fmt::format("  mov.b64 %rd4, {:#x};\n  st.global.u64 [%rd3], %rd4;\n  ret;\n", kGoldenNoForm);
  for (uint32_t id : fam.forms) emit_form(out, id, forms[id]);
  out += "DONE:\n  ret;\n}\n";
}

std::string header() {
  return fmt::format("// Golden-vector generator kernels (src/emu/golden_gen.cpp).\n.version {}\n.target {}\n.address_size 64\n\n",
                     kGoldenVersion, kGoldenTarget);
}

// PTX ISA, cvt: the packed e2m1x2, e2m3x2, e3m2x2 and ue8m0x2 conversions need sm_100a and
// PTX 8.6. The checker does not refuse all of them at sm_90 (ptxas does), so they are named here.
const char* newer_target_feature(std::string_view ptx) {
  for (const char* f : {".e2m1x2", ".e2m3x2", ".e3m2x2", ".ue8m0x2"}) {
    if (ptx.find(f) != std::string_view::npos) return f;
  }
  return nullptr;
}

GoldenPlan make_plan() {
  GoldenPlan plan;
  const auto& forms = golden_forms();
  std::map<std::string, size_t> index;
  for (uint32_t id = 0; id < forms.size(); ++id) {
    const GoldenForm& f = forms[id];
    // A form the checker rejects (a newer target's instruction, or a form no assembler takes)
    // cannot be recorded on the H200: it is left out, with the checker's reason.
    if (const char* feature = newer_target_feature(f.ptx)) {
      plan.skipped.push_back({id, fmt::format("cvt with {} needs sm_100a (PTX ISA 8.6), beyond {}", feature, kGoldenTarget)});
      continue;
    }
    GoldenFamily alone{f.family, entry_name(f.family), f.inputs.size(), {id}};
    auto checked = ptx::check_source(golden_module(alone));
    if (!checked.ok()) {
      std::string why = "rejected for " + std::string(kGoldenTarget);
      for (const auto& d : checked.diags.list()) {
        if (d.severity == Severity::error) {
          why += ": " + d.message;
          break;
        }
      }
      plan.skipped.push_back({id, why});
      continue;
    }
    auto [it, fresh] = index.emplace(f.family, plan.families.size());
    if (fresh) plan.families.push_back(GoldenFamily{f.family, entry_name(f.family), f.inputs.size(), {}});
    plan.families[it->second].forms.push_back(id);
  }
  return plan;
}

std::vector<uint64_t> masked_unique(std::initializer_list<uint64_t> values, int bits) {
  std::vector<uint64_t> out;
  for (uint64_t v : values) {
    v &= golden_mask(bits);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

// Moderate magnitudes: sign, an exponent within [lo, hi] of the bias, random mantissa bits.
uint64_t moderate(GT t, uint64_t w, int lo, int hi) {
  int mant = 23, bias = 127, bits = 32;
  if (t == GT::f64) mant = 52, bias = 1023, bits = 64;
  if (t == GT::f16) mant = 10, bias = 15, bits = 16, lo = std::max(lo, -14), hi = std::min(hi, 15);
  if (t == GT::bf16) mant = 7, bits = 16;
  const uint64_t e = static_cast<uint64_t>(bias + lo + static_cast<int>((w >> 1) % static_cast<uint64_t>(hi - lo + 1)));
  const uint64_t m = (w >> 12) & golden_mask(mant);
  return ((w & 1) << (bits - 1)) | (e << mant) | m;
}

// The exponent range of moderate inputs: the approximations' interesting domains.
std::pair<int, int> moderate_range(const GoldenForm& f) {
  if (f.ptx.starts_with("sin.") || f.ptx.starts_with("cos.")) return {-12, 3};
  if (f.ptx.starts_with("ex2.")) return {-8, 7};
  if (f.ptx.starts_with("tanh.")) return {-12, 4};
  return {-20, 20};
}

// Input k of instance j. Edge instances (j % 3 == 0) walk each operand's edge list with a
// stride prime to its length, so that every edge value of every operand appears once the form
// has 3x its longest list of instances (golden_instance_count), paired differently per operand.
uint64_t draw(const GoldenForm& f, size_t k, size_t j, uint64_t w, uint64_t sel) {
  const GT t = f.inputs[k];
  const bool count = golden_is_count(f, k);
  auto edges = golden_edges(t, count);
  const int bits = golden_type_bits(t);
  if (j % 3 == 0) {
    const size_t n = edges.size();
    size_t stride = 1, coprime = 0;
    for (size_t s : {size_t{1}, size_t{5}, size_t{7}, size_t{11}, size_t{13}, size_t{17}}) {
      if (std::gcd(s, n) != 1) continue;
      stride = s;
      if (coprime++ == k) break;
    }
    return edges[(j / 3 * stride + 3 * k) % n];
  }
  if (sel % 8 == 0) return edges[w % edges.size()];
  const uint64_t kind = (sel >> 3) % 4;
  if (count) return (kind == 0 ? w % 0x200 : w % 81) & golden_mask(bits);
  if (kind == 3) return (edges[w % edges.size()] + ((sel >> 5) % 3) - 1) & golden_mask(bits);  // next to an edge
  if (is_float(t) && kind != 0) {
    auto [lo, hi] = moderate_range(f);
    return moderate(t, w, lo, hi);
  }
  if (!is_float(t) && kind == 2) return static_cast<uint64_t>(static_cast<int64_t>(w % 256) - 128) & golden_mask(bits);
  return w & golden_mask(bits);
}

}  // namespace

const GoldenFamily* GoldenPlan::find(std::string_view family) const {
  for (const auto& f : families) {
    if (f.name == family) return &f;
  }
  return nullptr;
}

const GoldenPlan& golden_plan() {
  static const GoldenPlan plan = make_plan();
  return plan;
}

std::string golden_module(std::span<const GoldenFamily* const> families) {
  std::string out = header();
  for (const GoldenFamily* f : families) emit_entry(out, *f);
  return out;
}

std::string golden_module(const GoldenFamily& family) {
  const GoldenFamily* one[] = {&family};
  return golden_module(one);
}

int golden_register_bits(GoldenType t) {
  const int bits = golden_type_bits(t);
  return bits == 8 ? 16 : bits;
}

uint64_t golden_mask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

bool golden_is_count(const GoldenForm& f, size_t input) {
  if (f.family == "int.shift") return input == 1;
  if (f.family == "int.shf") return input == 2;
  if (f.family == "int.bfe") return input >= 1;
  if (f.family == "int.bfi") return input >= 2;
  return false;
}

std::span<const uint64_t> golden_edges(GoldenType t, bool count) {
  static const std::vector<uint64_t> counts = {0, 1, 8, 15, 16, 31, 32, 33, 63, 64, 65, 127, 255, 256, 0xffffffffull};
  // qNaN, sNaN, -qNaN, +-0, +-min subnormal, +-max subnormal, +-min normal, +-max finite,
  // +-inf, 1, -1, 0.5, next to 1, 1.5, 2.5 (ties for the integer roundings), then the
  // boundaries of the conversions: 2^23/2^52 (integer spacing), 2^31, -2^31, 2^32, 2^63, 2^64,
  // the f16 maximum and the halfway point above it, the f16 smallest subnormal and half of it.
  static const std::vector<uint64_t> f32 = {
      0x7fc00000, 0x7f800001, 0xffc00000, 0, 0x80000000, 1, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000,
      0x80800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x3f800000, 0xbf800000, 0x3f000000,
      0x3f7fffff, 0x3f800001, 0x3fc00000, 0x40200000, 0xc0200000, 0x4b000000, 0x4effffff, 0x4f000000,
      0xcf000000, 0xcf000001, 0x4f800000, 0x5f000000, 0x5f800000, 0x477fe000, 0x477ff000, 0x33800000,
      0x33000000, 0x38800000, 0x3f800100, 0x3f801000};
  static const std::vector<uint64_t> f64 = {
      0x7ff8000000000000, 0x7ff0000000000001, 0xfff8000000000000, 0, 0x8000000000000000, 1, 0x8000000000000001,
      0x000fffffffffffff, 0x800fffffffffffff, 0x0010000000000000, 0x8010000000000000, 0x7fefffffffffffff,
      0xffefffffffffffff, 0x7ff0000000000000, 0xfff0000000000000, 0x3ff0000000000000, 0xbff0000000000000,
      0x3fe0000000000000, 0x3fefffffffffffff, 0x3ff0000000000001, 0x3ff8000000000000, 0x4004000000000000,
      0x4330000000000000, 0x41e0000000000000, 0xc1e0000000000000, 0x41f0000000000000, 0x43e0000000000000,
      0x43f0000000000000, 0x47efffffe0000000, 0x47effffff0000000, 0x36a0000000000000, 0x3690000000000000,
      0x3810000000000000, 0x3ff0000010000000};
  static const std::vector<uint64_t> f16 = {0x7e00, 0x7c01, 0xfe00, 0, 0x8000, 1, 0x8001, 0x03ff, 0x83ff, 0x0400,
                                            0x8400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x3c00, 0xbc00, 0x3800,
                                            0x3bff, 0x3c01, 0x3e00, 0x4100, 0x6400, 0x7800};
  static const std::vector<uint64_t> bf16 = {0x7fc0, 0x7f81, 0xffc0, 0, 0x8000, 1, 0x8001, 0x007f, 0x807f, 0x0080,
                                             0x8080, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x3f80, 0xbf80, 0x3f00,
                                             0x3f7f, 0x3f81, 0x3fc0, 0x4020, 0x4b00, 0x4f00};
  static const std::map<int, std::vector<uint64_t>> ints = [] {
    std::map<int, std::vector<uint64_t>> m;
    for (int bits : {8, 16, 32, 64}) {
      const uint64_t top = uint64_t{1} << (bits - 1);
      // 0, 1, -1, INT_MIN, INT_MAX, 2, INT_MIN + 1, INT_MAX - 1, then the bytes' and halves' edges.
      m[bits] = masked_unique({0, 1, ~uint64_t{0}, top, top - 1, 2, top + 1, top - 2, 0x7f, 0x80, 0xff, 0x100,
                               0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff,
                               0x100000000, 0xfffffffe, 0x80808080, 0x7f7f7f7f, 0x01020304},
                              bits);
    }
    return m;
  }();
  if (count) return counts;
  switch (t) {
    case GT::f32: return f32;
    case GT::f64: return f64;
    case GT::f16: return f16;
    case GT::bf16: return bf16;
    case GT::pred: {
      static const std::vector<uint64_t> pred = {0, 1};
      return pred;
    }
    default: return ints.at(std::max(8, golden_type_bits(t)));
  }
}

size_t golden_instance_count(uint32_t form) {
  const GoldenForm& f = golden_forms().at(form);
  size_t n = kGoldenPerForm;
  for (size_t k = 0; k < f.inputs.size(); ++k) n = std::max(n, 3 * golden_edges(f.inputs[k], golden_is_count(f, k)).size());
  return n;
}

std::vector<GoldenInstance> golden_instances(uint32_t form) { return golden_instances(form, golden_instance_count(form)); }

std::vector<GoldenInstance> golden_instances(uint32_t form, size_t count) {
  static const task::Prf prf = task::Prf::from_seed(kGoldenSeed);
  const GoldenForm& f = golden_forms().at(form);
  std::vector<GoldenInstance> out(count);
  for (size_t j = 0; j < count; ++j) {
    const task::PrfBlock b = prf.block(form, j);
    GoldenInstance& in = out[j];
    in.form = form;
    for (size_t k = 0; k < f.inputs.size() && k < in.in.size(); ++k) in.in[k] = draw(f, k, j, b[1 + k], b[5 + k % 3] >> (16 * (k / 3)));
  }
  return out;
}

std::vector<uint64_t> golden_input_slots(const GoldenFamily& family, std::span<const GoldenInstance> instances) {
  const size_t stride = 1 + family.arity;
  std::vector<uint64_t> slots(stride * instances.size(), 0);
  for (size_t i = 0; i < instances.size(); ++i) {
    slots[i * stride] = instances[i].form;
    for (size_t k = 0; k < family.arity && k < 4; ++k) slots[i * stride + 1 + k] = instances[i].in[k];
  }
  return slots;
}

}  // namespace ptxforge::emu
