// A type suffix dropped from every instruction family of the ISA table, against ptxas: each
// family's own example (src/ptx/isa_table.cpp), once as written and once with every type
// modifier removed from its opcode, on a Hopper and a Blackwell target. `check` must flag
// every typeless line ptxas rejects, at that line, and no line ptxas accepts (some families
// take no type, or a default one).
#include <gtest/gtest.h>

#include "ptx/isa.h"
#include "testing/rule_agreement.h"
#include "testing/rule_expect.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::ptx {
namespace {

using testing::expect_agreement;
using testing::RuleCase;
using testing::RuleHeader;

// The example with every type modifier taken out of its opcode ("popc.b32 %r1, %r2;" ->
// "popc %r1, %r2;"); "" when it has none.
std::string without_types(std::string_view example) {
  size_t space = example.find_first_of(" \t");
  if (space == std::string_view::npos) return "";
  std::string_view opcode = example.substr(0, space);
  std::string out;
  bool dropped = false;
  size_t at = 0;
  while (at < opcode.size()) {
    size_t next = opcode.find('.', at + 1);
    if (next == std::string_view::npos) next = opcode.size();
    std::string_view part = opcode.substr(at, next - at);
    if (at > 0 && is_type_name(part)) dropped = true;
    else out += part;
    at = next;
  }
  return dropped ? out + std::string(example.substr(space)) : "";
}

// Every family's example that runs on `target` at `version`, typed and typeless.
std::vector<RuleCase> typeless_cases(const Target& target, PtxVersion version) {
  std::vector<RuleCase> cases;
  const std::string setup = version >= PtxVersion{8, 3} ? ".reg .b128 %q<4>;\n.reg .b8 %c<4>;\n" : ".reg .b8 %c<4>;\n";
  for (auto& f : isa_families()) {
    if (!f.detailed || f.types.empty() || f.example.empty() || version < f.min_ptx) continue;
    bool runs = false;
    for (auto& t : parse_target_list(f.min_target)) runs = runs || satisfies(target, t);
    if (!runs) continue;
    std::string bare = without_types(f.example);
    if (bare.empty()) continue;
    cases.push_back({std::string(f.example), setup});
    cases.push_back({bare, setup});
  }
  return cases;
}

TEST(RuleAgreement, EveryFamilyWithoutItsType) {
  expect_agreement("typeless", typeless_cases(*Target::parse("sm_90a"), {8, 7}), RuleHeader{"8.7", "sm_90a"});
  expect_agreement("typeless", typeless_cases(*Target::parse("sm_100a"), {8, 7}), RuleHeader{"8.7", "sm_100a"});
}

}  // namespace
}  // namespace ptxforge::ptx
