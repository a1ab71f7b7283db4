// The golden forms' table: enough forms, well-formed records (a template naming each of its
// operands, one family per operand signature), and every form's engine function runs on the
// edge values the golden vectors plant without crashing and gives a value of its type's width.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "emu/golden_forms.h"

namespace ptxforge::emu {
namespace {

TEST(GoldenForms, CoverAtLeast150FormsWithUniqueTemplates) {
  const auto& forms = golden_forms();
  EXPECT_GE(forms.size(), 150u);
  EXPECT_EQ(forms.size(), 349u);  // append-only: a change here means ids moved or forms were added
  std::set<std::string> seen;
  for (const GoldenForm& f : forms) {
    EXPECT_TRUE(seen.insert(f.ptx).second) << "duplicate form " << f.ptx;
    EXPECT_NE(f.ptx.find("%d"), std::string::npos) << f.ptx;
    const char* names[] = {"%a", "%b", "%c", "%e", "%f"};
    ASSERT_LT(f.inputs.size(), 5u) << f.ptx;
    for (size_t i = 0; i < f.inputs.size(); ++i) EXPECT_NE(f.ptx.find(names[i]), std::string::npos) << f.ptx;
    EXPECT_EQ(f.ptx.find(names[f.inputs.size()]), std::string::npos) << f.ptx << " names an operand it has no type for";
    EXPECT_TRUE(static_cast<bool>(f.eval)) << f.ptx;
    EXPECT_EQ(f.check == GoldenCheck::exact, f.ptx.find(".approx") == std::string::npos &&
                                                 f.ptx.find("div.full") == std::string::npos) << f.ptx;
  }
}

TEST(GoldenForms, FamiliesShareOperandSignatures) {
  // One generator kernel per family reads the same number of inputs for each of its forms
  // (register types may differ per form; the generator declares them per form).
  std::map<std::string, size_t> arity;
  for (const GoldenForm& f : golden_forms()) {
    EXPECT_FALSE(f.family.empty());
    auto [it, fresh] = arity.emplace(f.family, f.inputs.size());
    if (!fresh) {
      EXPECT_EQ(it->second, f.inputs.size()) << f.family << ": " << f.ptx;
    }
  }
  EXPECT_GE(arity.size(), 20u);
}

TEST(GoldenForms, EveryFormRunsOnEdgeValues) {
  const std::vector<uint64_t> edges = {
      0, 1, 0x80000000u, 0x7fffffffu, 0xffffffffu, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u,
      0x00000001u, 0x807fffffu, 0x3f800000u, 0x7f7fffffu, 0x7c00u, 0x7e00u, 0x0001u, 0x8000u, 32, 33, 64, 255, 256,
      0x8000000000000000ull, 0x7ff0000000000000ull, 0x7ff8000000000000ull, 0x0000000000000001ull,
      0xffffffffffffffffull, 0x7fefffffffffffffull, 0x3ff0000000000000ull};
  size_t runs = 0;
  for (const GoldenForm& f : golden_forms()) {
    const int bits = golden_type_bits(f.result);
    std::vector<uint64_t> in(f.inputs.size());
    for (size_t i = 0; i < edges.size(); ++i) {
      for (size_t k = 0; k < in.size(); ++k) {
        const int w = golden_type_bits(f.inputs[k]);
        const uint64_t v = edges[(i + 7 * k) % edges.size()];
        in[k] = w >= 64 ? v : (v & ((uint64_t{1} << w) - 1));
      }
      const uint64_t r = f.eval(in);
      ++runs;
      if (bits < 64 && f.result != GoldenType::s8 && f.result != GoldenType::s16 && f.result != GoldenType::s32) {
        EXPECT_EQ(r >> bits, 0u) << f.ptx << " gave a value wider than its type";
      }
    }
  }
  EXPECT_EQ(runs, golden_forms().size() * edges.size());
}

}  // namespace
}  // namespace ptxforge::emu
