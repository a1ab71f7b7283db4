#include "data/repair.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/feedback.h"
#include "agent/session.h"
#include "agent/session_layout.h"
#include "agent/session_reader.h"
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

// The repaired round's PTX candidate and feedback, read back from its repair session.
struct KeptFiles {
  std::optional<std::string> ptx, feedback;
};
KeptFiles kept_files(const std::string& session_dir, int round) {
  KeptFiles k;
  auto session = agent::SessionReader::open(session_dir);
  if (!session) return k;
  for (auto& t : session->trajectories())
    for (auto& r : t.rounds)
      if (r.round == round) {
        if (auto c = session->candidate(r); c && !c->cuda) k.ptx = c->text;
        k.feedback = session->feedback(r);
      }
  return k;
}

}  // namespace

std::vector<Failure> find_failures(const std::vector<std::string>& roots, std::vector<std::string>& skipped) {
  std::vector<Failure> out;
  for (auto& session : find_sessions(roots)) {
    auto reader = agent::SessionReader::open(session);
    if (!reader || !reader->options()) {
      skipped.push_back(fmt::format("{}: {}", session, reader ? reader->options().error().message : reader.error().message));
      continue;
    }
    const agent::CompileOptions& opts = *reader->options();
    for (auto& traj : reader->trajectories()) {
      for (auto& issue : traj.issues)
        if (agent::hides_rounds(issue.kind))
          skipped.push_back(issue.message);
      const agent::SessionRound* last = nullptr;
      bool done = false;
      for (auto& r : traj.rounds) {
        if (succeeded(r.summary)) done = true;
        if (r.summary.extracted) last = &r;
      }
      if (done || !last) continue;
      auto candidate = reader->candidate(*last);
      auto feedback = reader->feedback(*last);
      if (!candidate || candidate->cuda || !feedback) {
        skipped.push_back(fmt::format("{}: round {} has no {}", last->dir, last->round,
                                      candidate && !candidate->cuda ? "feedback" : "PTX candidate"));
        continue;
      }
      Failure f;
      f.session = session;
      f.task = reader->task();
      f.sample = traj.sample;
      f.round = last->round;
      f.candidate = candidate->text;
      f.feedback = *feedback;
      // As the model was told it: the summary's verdict names held-back size sets for a person.
      f.verdict = agent::verdict_in_feedback(*feedback);
      f.assembled = last->summary.assembled;
      f.options = opts;
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
      if (o.device) c.run.device = *o.device;
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
    KeptFiles files = kept ? kept_files(dir, kept->round) : KeptFiles{};
    const std::optional<std::string>& fixed_ptx = files.ptx;
    if (!kept || !fixed_ptx || normalised_ptx_hash(*fixed_ptx) == normalised_ptx_hash(f.candidate)) {
      ++stats.not_repaired;
      log << fmt::format("fixit: {} (sample {}, round {}): not repaired ({})\n", f.session, f.sample, f.round,
                         res->status_text());
      continue;
    }
    // A round that passed was verified by a GPU or by the CPU engine (RunRecord::passed).
    bool verified = kept->passed;
    std::string_view verified_by = !verified ? "none" : kept->gpu_verified ? "gpu" : "cpu_engine";
    const std::optional<std::string>& kept_feedback = files.feedback;
    std::string kept_verdict = kept_feedback ? agent::verdict_in_feedback(*kept_feedback) : "";
    ++(verified ? stats.verified : stats.assembled_only);
    if (verified && !kept->gpu_verified) ++stats.verified_on_engine;
    log << fmt::format("fixit: {} (sample {}, round {}): {} in round {}\n", f.session, f.sample, f.round,
                       !verified              ? "repaired, assembled (no GPU: not verified)"
                       : kept->gpu_verified ? "repaired, verified"
                                            : "repaired, verified on the CPU engine",
                       kept->round);
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
                          {"verified_by", verified_by},
                          {"failed_ptx", f.candidate},
                          {"feedback", f.feedback},
                          {"fixed_ptx", *fixed_ptx}}
                        .dump(-1, ' ', false, ojson::error_handler_t::replace));
  }
  return pairs;
}

}  // namespace ptxforge::data
