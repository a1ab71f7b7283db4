#include "data/repair.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/feedback.h"
#include "agent/session.h"
#include "agent/session_layout.h"
#include "data/dataset.h"
#include "data/pairs.h"
#include "util/text.h"

namespace ptxforge::data {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

// A round that counts as done: verified on a GPU, or assembled where verify could not run
// (it may well be right; nothing here says it failed).
bool succeeded(const agent::RoundSummary& r) { return r.passed || (r.no_gpu && r.assembled); }

bool inside(const std::string& path, const std::string& folder) {
  if (folder.empty()) return false;
  std::error_code ec;
  auto p = fs::weakly_canonical(path, ec).string(), f = fs::weakly_canonical(folder, ec).string();
  return p == f || starts_with(p, f + "/");
}

}  // namespace

std::vector<Failure> find_failures(const std::vector<std::string>& roots, std::vector<std::string>& skipped) {
  std::vector<Failure> out;
  for (auto& session : find_sessions(roots)) {
    auto text = read_file(agent::layout::session_options(session));
    auto opts = text ? agent::session_options_from(*text, session) : Result<agent::CompileOptions>(text.error());
    if (!opts) {
      skipped.push_back(fmt::format("{}: {}", session, opts.error().message));
      continue;
    }
    for (int k = 1; k <= opts->samples; ++k) {
      std::string traj = agent::layout::trajectory(session, k, opts->samples);
      std::optional<agent::RoundSummary> last;
      bool done = false;
      for (int r = 1; r <= 100; ++r) {
        auto s = agent::load_round(agent::layout::round(traj, r));
        if (!s) break;
        if (succeeded(*s)) done = true;
        if (s->extracted) last = s;
      }
      if (done || !last) continue;
      std::string dir = agent::layout::round(traj, last->round);
      auto candidate = read_file(agent::layout::candidate(dir, false));
      auto feedback = read_file(agent::layout::feedback(dir));
      if (!candidate || !feedback) {
        skipped.push_back(fmt::format("{}: round {} has no {}", dir, last->round, candidate ? "feedback" : "PTX candidate"));
        continue;
      }
      Failure f;
      f.session = session;
      f.task = session_task(session);
      f.sample = k;
      f.round = last->round;
      f.candidate = *candidate;
      f.feedback = *feedback;
      // As the model was told it: the summary's verdict names held-back size sets for a person.
      f.verdict = agent::verdict_in_feedback(*feedback);
      f.assembled = last->assembled;
      f.options = *opts;
      out.push_back(std::move(f));
    }
  }
  return out;
}

Result<std::vector<std::string>> repair_failures(const std::vector<Failure>& failures, const RepairOptions& o,
                                                 const agent::ProviderFactory& make, agent::GpuPool& gpus,
                                                 RepairStats& stats, std::ostream& log) {
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) return Error{fmt::format("cannot create {}: {}", o.out, ec.message())};
  std::vector<std::string> pairs;
  // Repair sessions of an earlier run under the roots are not failures to repair; they are
  // left out before numbering, so a continued run numbers its folders as the first did.
  std::vector<const Failure*> todo;
  for (auto& f : failures)
    if (!inside(f.session, o.out)) todo.push_back(&f);
  int index = 0;
  for (const Failure* fp : todo) {
    const Failure& f = *fp;
    ++index;
    ++stats.failures;
    std::string dir = fmt::format("{}/{:03}-{}-s{}", o.out, index, fs::path(f.session).filename().string(), f.sample);
    Result<agent::CompileResult> res = Error{""};
    if (agent::file_exists(agent::layout::session_options(dir))) {
      res = agent::resume(dir, make, gpus);
    } else {
      agent::CompileOptions c = f.options;  // the task, target and run options of the failed session
      c.model = o.model;
      c.rounds = o.rounds;
      c.samples = 1;
      c.target_speedup = 0;
      c.temperature = o.temperature;
      c.max_tokens = o.max_tokens;
      c.prompt.max_tokens = o.max_tokens;
      c.prompt.repair_candidate = f.candidate;
      c.prompt.repair_feedback = f.feedback;
      c.run.seed = o.seed;
      c.prices = {};  // the failed session's prices were another model's
      c.out = dir;
      if (auto st = agent::validate_options(c); !st)
        res = st.error();
      else
        res = agent::compile(c, make, gpus);
    }
    if (!res) {
      ++stats.errors;
      log << fmt::format("fixit: {} (sample {}): {}\n", f.session, f.sample, res.error().message);
      continue;
    }
    for (auto& r : res->rounds)
      if (r.no_gpu) {
        ++stats.without_gpu;
        break;
      }
    // The repaired round: the verified one, else (without a GPU, where allowed) the last that
    // assembled.
    std::optional<agent::RoundSummary> kept;
    if (res->status == agent::SessionStatus::verified && res->best && res->best->passed) {
      kept = res->best;
    } else if (o.keep_unverified && !f.assembled) {
      for (auto& r : res->rounds)
        if (r.no_gpu && r.assembled) kept = r;
    }
    std::optional<std::string> fixed_ptx;
    if (kept)
      if (auto text = read_file(agent::layout::candidate(agent::layout::round(dir, kept->round), false))) fixed_ptx = *text;
    if (!kept || !fixed_ptx || normalised_ptx_hash(*fixed_ptx) == normalised_ptx_hash(f.candidate)) {
      ++stats.not_repaired;
      log << fmt::format("fixit: {} (sample {}, round {}): not repaired ({})\n", f.session, f.sample, f.round,
                         res->status_text());
      continue;
    }
    bool verified = kept->passed && kept->gpu_verified;
    auto kept_feedback = read_file(agent::layout::feedback(agent::layout::round(dir, kept->round)));
    std::string kept_verdict = kept_feedback ? agent::verdict_in_feedback(*kept_feedback) : "";
    ++(verified ? stats.verified : stats.assembled_only);
    log << fmt::format("fixit: {} (sample {}, round {}): {} in round {}\n", f.session, f.sample, f.round,
                       verified ? "repaired, verified" : "repaired, assembled (no GPU: not verified)", kept->round);
    pairs.push_back(ojson{{"kind", "fixit"},
                          {"origin", "model-repair"},
                          {"source_id", "task:" + f.task},
                          {"task", f.task},
                          {"arch", f.options.run.arch},
                          {"session", fs::path(f.session).filename().string()},
                          {"sample", f.sample},
                          {"round", f.round},
                          {"repaired_by", o.model},
                          {"repair_session", fs::path(dir).filename().string()},
                          {"repair_round", kept->round},
                          {"failed_verdict", f.verdict},
                          {"fixed_verdict", kept_verdict},
                          {"verified", verified},
                          {"failed_ptx", f.candidate},
                          {"feedback", f.feedback},
                          {"fixed_ptx", *fixed_ptx}}
                        .dump(-1, ' ', false, ojson::error_handler_t::replace));
  }
  return pairs;
}

}  // namespace ptxforge::data
