// The PTX instruction set as data. One IsaFamily per instruction family of the PTX ISA
// manual's instruction-set chapter, each with the anchor of its manual section, the modifiers
// and types it allows, its operand forms, the minimum .version and .target, and an example
// that the ptxas-agreement test assembles. Per-modifier overrides carry the manual's later
// additions (e.g. add.bf16 needs PTX 7.8 and sm_90).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/ast.h"
#include "ptx/target.h"

namespace ptxforge::ptx {

// Operand kinds, one letter per operand position in IsaFamily::operands:
//   d  destination register of the instruction type (a {vector} when .v2/.v4/.v8 is present)
//   a  register or immediate of the instruction type      r  register of the instruction type
//   s  cvt source: register or immediate of the second type
//   w  register of twice the instruction type's width (mul.wide, mad.wide destinations)
//   p  predicate destination (setp also takes p|q)         q  predicate source (!%p allowed)
//   u  32-bit integer register or immediate                m  memory address [..]
//   l  label or function name                              i  integer immediate
//   x  any operand (not type-checked)
// A trailing '?' makes the operand optional; '*' as the whole form means "not checked".
struct IsaFamily {
  std::string_view name;        // "add", "cp.async.bulk.tensor", "mbarrier.try_wait"
  std::string_view anchor;      // section anchor in the PTX ISA manual
  std::string_view types;       // allowed type modifiers, space separated
  std::string_view modifiers;   // allowed other modifiers; "*" = not checked; "x*" = prefix pattern
  std::string_view operands;    // forms separated by '|', e.g. "d,a,b|d,a,b,q"
  PtxVersion min_ptx;
  std::string_view min_target;  // "sm_20", "sm_90a", or alternatives "sm_100f|sm_120f"
  std::string_view example;     // an instruction that needs exactly min_ptx/min_target
  bool detailed = true;         // false: known by opcode only (modifiers and operands unchecked)
};

// A later addition to a family: using `modifier` needs a newer version or target.
struct IsaOverride {
  std::string_view family;
  std::string_view modifier;    // ".bf16", ".multicast::cluster"; a run: ".shared::cta.global"
  PtxVersion min_ptx;
  std::string_view min_target;
  std::string_view example;
};

const std::vector<IsaFamily>& isa_families();
const std::vector<IsaOverride>& isa_overrides();

inline constexpr std::string_view kManualBase = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html";
std::string manual_link(std::string_view anchor);

// The family an instruction belongs to: the longest table name that matches the opcode
// followed by its first modifiers ("cp" + ".async.bulk.tensor..." -> "cp.async.bulk.tensor").
// `consumed` receives how many modifiers the family name covers.
const IsaFamily* find_family(std::string_view opcode, const List<Text>& mods, size_t* consumed);

bool is_known_opcode(std::string_view opcode);
std::vector<std::string_view> all_opcodes();  // first words of every family, for "did you mean"

bool is_type_name(std::string_view mod);
struct TypeFacts {
  int bits = 0;
  char kind = 0;
};
TypeFacts type_facts(std::string_view type);  // type_bits and type_kind in one lookup       // ".u32", ".f16x2", ".e4m3x2", ".pred", ...
int type_bits(std::string_view type);          // 32 for .u32, 64 for .f16x4? (0 if unknown)
char type_kind(std::string_view type);         // 'b' bits, 'u', 's', 'f', 'p' pred, 0 unknown

// What one instruction needs: its family's minimum and every override its modifiers trigger.
struct IsaRequirement {
  PtxVersion ptx;
  Target target;               // the first (lowest) target that provides it
  std::vector<Target> any_of;  // every alternative: "sm_100f|sm_120f" in the table
  // Per alternative, a later version it needs than `ptx` ("sm_90|sm_89@8.1": sm_89 gained the
  // feature in PTX 8.1, sm_90 had it since `ptx`); nullopt: `ptx`.
  std::vector<std::optional<PtxVersion>> any_of_ptx;
  std::string what;            // "wgmma.mma_async", "add.bf16"
  bool met_by(const Target& have) const;
  // The version needed on `have`: the lowest over the alternatives it satisfies (`ptx` if none).
  PtxVersion ptx_on(const Target& have) const;
  std::string targets_text() const;  // "sm_100f or sm_120f"
};
// "sm_100f|sm_120f" -> {sm_100f, sm_120f}; the table's min_target strings. An alternative may
// carry the version it needs when later than the row's: "sm_90|sm_89@8.1".
std::vector<Target> parse_target_list(std::string_view s);
std::vector<std::optional<PtxVersion>> parse_target_versions(std::string_view s);
std::vector<IsaRequirement> requirements_of(const Instruction& ins);
// Whether `ins`, of family `f` (the first `consumed` modifiers belong to the family name),
// needs nothing that `version` and every one of `targets` lack. This is the cheap test made
// for every instruction; requirements_of says what is missing when it fails.
bool meets_requirements(const Instruction& ins, const IsaFamily& f, size_t consumed,
                        const std::optional<PtxVersion>& version, const std::vector<Target>& targets);

// Does the family's modifier list allow `mod`?
bool family_allows_modifier(const IsaFamily& f, std::string_view mod);
// Whether every instruction of the family needs a type modifier: its example writes one (the
// table's examples are the families' type-carrying forms; rules_types_test.cpp holds each
// against ptxas with its type dropped).
bool family_requires_type(const IsaFamily& f);
// Operand forms, split: {"d","a","b"} per form.
const std::vector<std::vector<std::string_view>>& operand_forms(const IsaFamily& f);

}  // namespace ptxforge::ptx
