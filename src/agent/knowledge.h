// The knowledge a prompt can carry, kept as Markdown under knowledge/ in the data directory:
// ISA cards (syntax, operands, version/target, pitfalls), templates, contracts for the hard
// families (async proxy, mbarrier, TMA, wgmma, memory consistency) and negative examples.
// Each file starts with one metadata line:
//   <!-- level: templates; families: ld, st, cvta -->
// `level` is the lowest --knowledge level that includes it; `families` (optional) limits it
// to tasks that require one of those instruction families (below `full`).
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace ptxforge::agent {

enum class KnowledgeLevel { none, hardware, templates, contracts, full };
Result<KnowledgeLevel> parse_knowledge_level(const std::string& s);
std::string_view knowledge_level_name(KnowledgeLevel l);

struct KnowledgeDoc {
  std::string path, title, text;
  KnowledgeLevel level = KnowledgeLevel::full;
  std::vector<std::string> families;
};

Result<std::vector<KnowledgeDoc>> load_knowledge(const std::string& dir);
// The documents a prompt at `level` includes for a task requiring `required`.
std::vector<const KnowledgeDoc*> select_knowledge(const std::vector<KnowledgeDoc>& all, KnowledgeLevel level,
                                                  const std::vector<std::string>& required);

}  // namespace ptxforge::agent
