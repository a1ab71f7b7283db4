// The names the contract's enums have on the wire (service.h): the JSON of the HTTP API and
// the state column of the run store spell them so.
#include "serve/service.h"

namespace ptxforge::serve {

std::string_view to_string(Language l) {
  switch (l) {
    case Language::ptx: return "ptx";
    case Language::cuda: return "cuda";
  }
  return "ptx";
}

std::string_view to_string(RunState s) {
  switch (s) {
    case RunState::queued: return "queued";
    case RunState::running: return "running";
    case RunState::done: return "done";
  }
  return "queued";
}

}  // namespace ptxforge::serve
