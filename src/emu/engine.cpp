// Names of the engine's finding kinds: the suffix of their check ids ("emu-" + name) in
// docs/checks.md.
#include "emu/engine.h"

namespace ptxforge::emu {

std::string_view to_string(FindingKind k) {
  switch (k) {
    case FindingKind::unsupported: return "unsupported";
    case FindingKind::oob: return "oob";
    case FindingKind::misaligned: return "misaligned";
    case FindingKind::uninit: return "uninit";
    case FindingKind::race: return "race";
    case FindingKind::barrier_divergence: return "barrier-divergence";
    case FindingKind::barrier_count: return "barrier-count";
    case FindingKind::deadlock: return "deadlock";
    case FindingKind::warp_mask: return "warp-mask";
    case FindingKind::budget: return "budget";
    case FindingKind::limit: return "limit";
    case FindingKind::trap: return "trap";
  }
  return "unknown";
}

}  // namespace ptxforge::emu
