#include "agent/compile.h"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent/extract.h"
#include "agent/feedback.h"
#include "agent/hardware.h"
#include "agent/progress.h"
#include "agent/session_layout.h"
#include "gpu/worker_client.h"
#include "llm/cache.h"
#include "task/seeds.h"
#include "toolchain/nvrtc.h"
#include "toolchain/ptxas.h"
#include "util/paths.h"
#include "util/text.h"

namespace ptxforge::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

RoundSummary summarize(const eval::RunRecord& r) {
  RoundSummary s;
  s.verdict = r.verdict();
  for (auto& st : r.stages)
    if (st.status == eval::StageStatus::failed && s.stage.empty()) s.stage = eval::to_string(st.id);
  s.extracted = true;
  s.passed = r.passed;
  s.gpu_verified = r.gpu_verified;
  const eval::StageResult* a = r.find_stage(eval::StageId::assemble);
  s.assembled = a && a->status == eval::StageStatus::passed;
  const eval::StageResult* v = r.find_stage(eval::StageId::verify);
  s.no_gpu = v && v->status == eval::StageStatus::skipped;
  s.seed = r.seed;
  eval::Speedups sp = eval::speedups(r);
  s.speedup_vs_nvcc = sp.vs_reference;
  s.speedup_vs_library = sp.vs_library;
  for (auto& f : r.resources)
    if (f.is_entry) {
      s.registers = std::max(s.registers, f.registers);
      s.spill_bytes += f.spill_stores + f.spill_loads;
    }
  return s;
}

struct Shared {
  const CompileOptions& o;
  const task::Task& task;
  const Hardware& hw;
  const std::vector<KnowledgeDoc>& knowledge;
  const llm::ResponseCache& cache;
  const ProviderFactory& make;
  GpuPool& gpus;  // one candidate at a time on each GPU: timings stay undisturbed
  bool gpu_here;  // a GPU is present now: rounds saved without one are verified again
};

// One independent trajectory: its rounds, in its own folder.
struct Trajectory {
  Shared& sh;
  int sample;
  std::string dir;
  std::vector<RoundSummary> rounds;
  std::string pending, stopped;

  bool done(const RoundSummary& s) const {
    // Passed without a GPU: the CPU engine verified it and timed nothing, so no target can be judged.
    if (s.passed) return sh.o.target_speedup <= 0 || !s.gpu_verified || speedup_toward_target(s, sh.o.target_base) >= sh.o.target_speedup;
    // Without a GPU (or a kernel the CPU engine does not run) there is nothing more to learn once
    // nothing failed: it assembled, or, on the engine without ptxas, passed the checks.
    return s.no_gpu && s.stage.empty();
  }

  void run() {
    auto provider = sh.make(sh.o.model, provider_options());
    if (!provider) {
      stopped = provider.error().message;
      return;
    }
    std::vector<llm::Message> msgs;
    for (int r = 1; r <= sh.o.rounds; ++r) {
      std::string d = layout::round(dir, r);
      std::error_code ec;
      fs::create_directories(d, ec);
      std::optional<RoundSummary> saved = load_round(d);  // evaluated before (a resumed session)
      if (saved && !needs_gpu_reverify(*saved, sh.gpu_here)) {
        rounds.push_back(*saved);
        if (done(*saved)) return;
        if (!next_messages(d, msgs)) return;
        continue;
      }
      // Not evaluated yet, or only assembled where there was no GPU and now there is one:
      // evaluate the saved reply (the model is not asked again).
      if (file_exists(layout::messages(d))) {
        auto m = load_messages(d);
        if (!m) {
          stopped = m.error().message;
          return;
        }
        msgs = *m;
      } else {
        if (r == 1) {
          PromptOptions po = sh.o.prompt;
          po.max_tokens = sh.o.max_tokens;  // the prompt states the reply's token limit
          auto m = build_prompt(sh.task, po, sh.hw, sh.knowledge);
          if (!m) {
            stopped = m.error().message;
            return;
          }
          msgs = *m;
        }
        if (auto s = save_messages(d, msgs); !s) {
          stopped = s.error().message;
          return;
        }
      }
      RoundSummary sum;
      std::string reply;
      bool truncated = false;  // the model was stopped at max_tokens
      if (auto saved_reply = read_file(layout::reply(d))) {
        reply = *saved_reply;
        // A reply cut at the token limit stays cut when the round is evaluated again.
        if (auto usage = read_file(layout::reply_usage(d))) {
          json u = json::parse(*usage, nullptr, false);
          truncated = u.is_object() && u.value("truncated", false);
        }
        if (saved) {  // re-verified: the round's usage was counted when it was asked
          sum.prompt_tokens = saved->prompt_tokens;
          sum.completion_tokens = saved->completion_tokens;
          sum.cached = saved->cached;
        }
      } else {
        llm::Request req{msgs, sh.o.temperature, sh.o.max_tokens, sample - 1, r - 1, d};
        auto res = llm::complete_cached(**provider, req, sh.cache);
        if (!res) {
          stopped = res.error().message;
          (void)write_file(layout::error(d), stopped + "\n");
          return;
        }
        if (res->pending) {
          pending = res->text;
          return;
        }
        reply = res->text;
        truncated = res->truncated;
        sum.prompt_tokens = res->usage.prompt_tokens;
        sum.completion_tokens = res->usage.completion_tokens;
        sum.cached = res->from_cache;
        (void)write_file(layout::reply(d), reply);
        (void)write_file(layout::reply_usage(d), json({{"prompt_tokens", res->usage.prompt_tokens},
                                                  {"completion_tokens", res->usage.completion_tokens},
                                                  {"cached", res->from_cache},
                                                  {"seconds", res->seconds},
                                                  {"attempts", res->attempts},
                                                  {"truncated", res->truncated}})
                                                .dump(2));
      }
      std::string feedback;
      if (truncated) {  // half a module is not a broken kernel: not checked, a shorter one is asked for
        feedback = feedback_truncated(sh.o.max_tokens, reply);
        RoundSummary s;
        s.verdict = std::string(kTruncatedVerdict);
        s.stage = "extract";
        s.round = r;
        feedback += history(s);
        sum = merge(s, sum);
      } else if (auto ex = extract_candidate(reply, sh.o.prompt.arch); !ex) {
        feedback = feedback_no_code(ex.error().message);
        RoundSummary s;
        s.verdict = "no kernel in the reply: " + ex.error().message;
        s.stage = "extract";
        s.round = r;
        feedback += history(s);
        sum = merge(s, sum);
      } else {
        std::string path = layout::candidate(d, ex->kind == Extracted::cuda);
        (void)write_file(path, ex->code);
        eval::RunRecord record;
        int gpu = -1;
        bool on_engine = false;
        {
          eval::RunOptions run = sh.o.run;
          run.seed = round_seed(sh.o.run.seed, sample, r);
          auto lease = sh.gpus.acquire();
          record = lease.pipeline().run(sh.task, path, run);
          gpu = lease.ordinal();
          on_engine = lease.pipeline().uses_engine(run);
        }
        (void)write_file(layout::result(d), eval::render_report_json(record));
        // The summary first: the history section that ends the feedback is made from it.
        RoundSummary s = summarize(record);
        s.candidate = path;
        s.round = r;
        const eval::StageResult* verify = record.find_stage(eval::StageId::verify);
        bool verify_ran = verify && verify->status != eval::StageStatus::not_run;
        s.on_engine = on_engine && verify_ran;
        if (!s.no_gpu && !s.on_engine && verify) s.gpu = gpu;
        std::string past = history(s);
        feedback = feedback_for(sh.task, record, sh.hw, SpeedupTarget{sh.o.target_speedup, sh.o.target_base},
                                kFeedbackMaxChars - std::min(past.size(), kFeedbackMaxChars / 2)) + past;
        if (!ex->notes.empty()) {
          std::string notes;
          for (auto& n : ex->notes) notes += "- " + n + "\n";
          feedback = "Note on your reply:\n" + notes + "\n" + feedback;
        }
        sum = merge(s, sum);
      }
      sum.round = r;
      sum.sample = sample;
      (void)write_file(layout::feedback(d), feedback);
      (void)save_round(d, sum);
      rounds.push_back(sum);
      if (done(sum)) return;
      msgs.push_back({"assistant", reply});
      msgs.push_back({"user", feedback});
    }
  }

  // The trajectory so far, to end round s's feedback (agent/progress.h): made from the saved
  // summaries only, so a resumed session writes the same words.
  std::string history(const RoundSummary& s) const {
    std::string section = progress_section(rounds, s, sh.o.target_base);
    return section.empty() ? "" : "\n\n" + section;
  }

  static RoundSummary merge(RoundSummary evaluated, const RoundSummary& usage) {
    evaluated.prompt_tokens = usage.prompt_tokens;
    evaluated.completion_tokens = usage.completion_tokens;
    evaluated.cached = usage.cached;
    return evaluated;
  }

  // The conversation after round d: what was sent, the reply, the feedback.
  bool next_messages(const std::string& d, std::vector<llm::Message>& msgs) {
    auto m = load_messages(d);
    auto reply = read_file(layout::reply(d));
    auto fb = read_file(layout::feedback(d));
    if (!m || !reply || !fb) {
      stopped = fmt::format("{} is incomplete (one of {}, {}, {} is missing)", d, layout::messages(d), layout::reply(d), layout::feedback(d));
      return false;
    }
    msgs = *m;
    msgs.push_back({"assistant", *reply});
    msgs.push_back({"user", *fb});
    return true;
  }

  llm::ProviderOptions provider_options() const {
    llm::ProviderOptions p;
    p.manual_dir = dir;
    return p;
  }
};

std::string describe_round(const RoundSummary& s) {
  std::string perf;
  if (s.passed && s.speedup_vs_nvcc > 0)
    perf = fmt::format(" — {:.2f}x nvcc{}", s.speedup_vs_nvcc,
                       s.speedup_vs_library > 0 ? fmt::format(", {:.2f}x library", s.speedup_vs_library) : "");
  return fmt::format("{}{}", s.verdict.size() > 110 ? s.verdict.substr(0, 107) + "..." : s.verdict, perf);
}

// The session's outputs: the best candidate (PTX, cubin, and the .cu it came from), the report
// and the transcript (agent/session_layout.h names them).
void write_outputs(const CompileOptions& o, CompileResult& res, const std::vector<Trajectory>& trajectories) {
  if (res.best && !res.best->candidate.empty()) {
    bool cuda = ends_with(res.best->candidate, ".cu");
    auto text = read_file(res.best->candidate);
    if (text) {
      std::string ptx = *text;
      if (cuda) {
        (void)write_file(layout::best_cu(o.out), *text);
        if (auto c = toolchain::compile_cuda_to_ptx(*text, "best.cu", o.prompt.arch)) ptx = c->ptx;
      }
      (void)write_file(layout::best_ptx(o.out), ptx);
      toolchain::AssembleOptions ao;
      ao.arch = o.prompt.arch;
      if (auto a = toolchain::assemble(ptx, ao); a && a->ok) (void)write_file(layout::best_cubin(o.out), a->cubin);
    }
  }
  json rounds = json::array();
  for (auto& r : res.rounds)
    rounds.push_back({{"sample", r.sample}, {"round", r.round}, {"verdict", r.verdict}, {"passed", r.passed},
                      {"gpu_verified", r.gpu_verified}, {"speedup_vs_nvcc", r.speedup_vs_nvcc},
                      {"speedup_vs_library", r.speedup_vs_library}, {"registers", r.registers}, {"spill_bytes", r.spill_bytes},
                      {"prompt_tokens", r.prompt_tokens}, {"completion_tokens", r.completion_tokens}, {"cached", r.cached},
                      {"seed", task::seed_text(r.seed)}});
  json report = {{"session", o.out}, {"task", o.task_dir}, {"model", o.model}, {"status", res.status_text()},
                 {"options", json::parse(session_options_json(o))}, {"rounds", rounds}, {"prompt_tokens", res.prompt_tokens},
                 {"completion_tokens", res.completion_tokens}};
  if (o.prices.known) report["cost_usd"] = res.cost_usd;
  if (res.best) report["best"] = {{"sample", res.best->sample}, {"round", res.best->round}, {"verdict", res.best->verdict},
                                  {"gpu_verified", res.best->gpu_verified}, {"speedup_vs_nvcc", res.best->speedup_vs_nvcc},
                                  {"speedup_vs_library", res.best->speedup_vs_library}};
  (void)write_file(layout::report(o.out), report.dump(2));
  std::string transcript = fmt::format("# Session {}\n\nTask `{}`, model `{}`.\n\n", o.out, o.task_dir, o.model);
  for (auto& t : trajectories) {
    for (auto& r : t.rounds) {
      std::string d = layout::round(t.dir, r.round);
      transcript += fmt::format("## {}round {}: {}\n\n", o.samples > 1 ? fmt::format("sample {}, ", t.sample) : "", r.round, r.verdict);
      if (r.round == 1)
        if (auto m = load_messages(d))
          for (auto& msg : *m) transcript += fmt::format("### {}\n\n{}\n\n", msg.role, msg.content);
      if (auto reply = read_file(layout::reply(d))) transcript += "### assistant\n\n" + *reply + "\n\n";
      if (auto fb = read_file(layout::feedback(d))) transcript += "### feedback\n\n" + *fb + "\n\n";
    }
  }
  (void)write_file(layout::transcript(o.out), transcript);
}

Result<CompileResult> run_session(const CompileOptions& o, const ProviderFactory& make, GpuPool& gpus,
                                  std::optional<bool> gpu_present) {
  auto task = task::load_task(o.task_dir);
  if (!task) return task.error();
  // The GPU's facts come from a worker (this process never loads the driver), asked only when
  // the hardware or the resume check needs them.
  std::optional<Result<gpu::DeviceInfo>> device;
  auto ask_gpu = [&]() -> const Result<gpu::DeviceInfo>& {
    if (!device) device = gpu::ask_device_info(gpus.worker_argv(0));
    return *device;
  };
  auto hw = o.hardware_profile.empty() ? find_hardware("", ask_gpu()) : find_hardware(o.hardware_profile, Error{"not asked"});
  if (!hw) return hw.error();
  std::vector<KnowledgeDoc> knowledge;
  if (o.prompt.knowledge >= KnowledgeLevel::templates) {
    auto data = data_dir();
    if (!data) return Error{"no data directory found (it holds knowledge/); set PTXFORGE_DATA_DIR"};
    auto k = load_knowledge(*data + "/knowledge");
    if (!k) return k.error();
    knowledge = std::move(*k);
  }
  llm::ResponseCache cache(o.cache ? cache_dir() + "/llm" : "");
  bool gpu_here = gpu_present ? *gpu_present : ask_gpu().ok();
  Shared sh{o, *task, *hw, knowledge, cache, make, gpus, gpu_here};
  std::vector<Trajectory> trajectories;
  for (int k = 1; k <= o.samples; ++k)
    trajectories.push_back({sh, k, layout::trajectory(o.out, k, o.samples), {}, "", ""});
  if (trajectories.size() == 1) {
    trajectories[0].run();
  } else {
    std::vector<std::thread> threads;
    for (auto& t : trajectories) threads.emplace_back([&t] { t.run(); });
    for (auto& th : threads) th.join();
  }
  CompileResult res;
  res.session = o.out;
  for (auto& t : trajectories)
    for (auto& r : t.rounds) {
      res.rounds.push_back(r);
      res.prompt_tokens += r.prompt_tokens;
      res.completion_tokens += r.completion_tokens;
      // The same order as the feedback's "best so far" (agent/progress.h).
      if (r.extracted && (!res.best || better_round(r, *res.best, o.target_base))) res.best = r;
    }
  res.cost_usd = llm::cost_usd({res.prompt_tokens, res.completion_tokens}, o.prices);
  std::string pending, stopped;
  for (auto& t : trajectories) {
    if (!t.pending.empty()) pending = t.pending;
    if (!t.stopped.empty()) stopped = t.stopped;
  }
  if (res.best && res.best->passed) res.status = SessionStatus::verified;
  else if (!pending.empty()) res.status = SessionStatus::pending;
  else if (!stopped.empty()) res.status = SessionStatus::stopped;
  else if (res.best && res.best->assembled && res.best->no_gpu) res.status = SessionStatus::assembled_not_verified;
  else res.status = SessionStatus::not_verified;
  if (res.status == SessionStatus::stopped) res.stop_reason = stopped;
  res.pending_message = pending;
  write_outputs(o, res, trajectories);
  return res;
}

}  // namespace

Result<std::pair<double, SpeedupBase>> parse_target_speedup(std::string_view text) {
  std::string t(trim(text));
  SpeedupBase base = SpeedupBase::nvcc;
  if (auto colon = t.find(':'); colon != std::string::npos) {
    std::string b = t.substr(colon + 1);
    if (b == "library") base = SpeedupBase::library;
    else if (b != "nvcc") return Error{fmt::format("'{}': a target speedup is relative to nvcc or library (e.g. 1.0x:library)", text)};
    t = t.substr(0, colon);
  }
  if (!t.empty() && (t.back() == 'x' || t.back() == 'X')) t.pop_back();
  char* end = nullptr;
  double v = t.empty() ? -1 : std::strtod(t.c_str(), &end);
  if (t.empty() || *end != '\0' || !(v >= 0) || v > 1000)
    return Error{fmt::format("'{}' is not a target speedup: give a number such as 1.2, 1.2x or 1.0x:library", text)};
  return std::pair{v, base};
}

std::string target_speedup_text(double target, SpeedupBase base) {
  return fmt::format("{:g}x {}", target, base == SpeedupBase::library ? "the library" : "nvcc");
}

uint64_t round_seed(std::optional<uint64_t> session_seed, int sample, int round) {
  if (!session_seed) return task::fresh_seed();
  return task::derive_seed(*session_seed, task::SeedUse::round, static_cast<uint64_t>(sample), static_cast<uint64_t>(round));
}

bool needs_gpu_reverify(const RoundSummary& saved, bool gpu_here) {
  // Verified on the CPU engine only (passed, not on a GPU) counts as not verified on a GPU.
  return gpu_here && (saved.no_gpu || saved.passed) && saved.assembled && !saved.gpu_verified;
}

std::string CompileResult::status_text() const {
  if (status == SessionStatus::stopped) return fmt::format("{}: {}", to_string(status), stop_reason);
  return std::string(to_string(status));
}

std::string CompileResult::summary() const {
  std::string out = fmt::format("session {}\n", session);
  for (auto& r : rounds)
    out += fmt::format("  {}round {:>2}  {}\n", rounds.size() && rounds.back().sample > 1 ? fmt::format("sample {} ", r.sample) : "",
                       r.round, describe_round(r));
  if (best) {
    out += fmt::format("best: {}round {} — {}\n", best->sample > 1 ? fmt::format("sample {}, ", best->sample) : "", best->round,
                       best->passed ? fmt::format("verified on the GPU; {:.2f}x nvcc{}", best->speedup_vs_nvcc,
                                                  best->speedup_vs_library > 0 ? fmt::format(", {:.2f}x library", best->speedup_vs_library) : "")
                                    : best->verdict);
    if (best->assembled) out += fmt::format("      {} registers, {} spill bytes\n", best->registers, best->spill_bytes);
  }
  out += fmt::format("tokens: {} prompt, {} completion{}\n", prompt_tokens, completion_tokens,
                     cost_usd > 0 ? fmt::format(", ${:.4f}", cost_usd) : "");
  out += fmt::format("status: {}\n", status_text());
  // The session's status is its best round's; where the last round came to something else
  // (a later attempt at a faster kernel failed, say), say so rather than let it pass unseen.
  if (!rounds.empty() && best && (rounds.back().round != best->round || rounds.back().sample != best->sample))
    out += fmt::format("last round: {}round {} — {}\n", rounds.back().sample > 1 ? fmt::format("sample {}, ", rounds.back().sample) : "",
                       rounds.back().round, describe_round(rounds.back()));
  if (!pending_message.empty()) out += "next: " + pending_message + "\n";
  if (best)
    out += fmt::format("files: {} {} {} {}\n", layout::best_ptx(session), layout::best_cubin(session), layout::report(session),
                       layout::transcript(session));
  return out;
}

Result<CompileResult> compile(const CompileOptions& o, const ProviderFactory& make, const std::vector<std::string>& worker_argv) {
  GpuPool gpus({{0, worker_argv}});
  return compile(o, make, gpus);
}

Result<CompileResult> compile(const CompileOptions& o, const ProviderFactory& make, GpuPool& gpus) {
  // Everything is checked before the folder is made: a mistyped option leaves nothing behind.
  if (auto s = validate_options(o); !s) return s.error();
  if (file_exists(layout::session_options(o.out)))
    return Error{fmt::format("{} already holds a session; continue it with --resume {}", o.out, o.out)};
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) return Error{fmt::format("cannot create the session folder {}: {}", o.out, ec.message())};
  if (auto s = write_file(layout::session_options(o.out), session_options_json(o)); !s) return s.error();
  return run_session(o, make, gpus, std::nullopt);
}

Result<CompileResult> resume(const std::string& dir, const ProviderFactory& make, const std::vector<std::string>& worker_argv,
                             std::optional<bool> gpu_present) {
  GpuPool gpus({{0, worker_argv}});
  return resume(dir, make, gpus, gpu_present);
}

Result<CompileResult> resume(const std::string& dir, const ProviderFactory& make, GpuPool& gpus, std::optional<bool> gpu_present) {
  auto text = read_file(layout::session_options(dir));
  if (!text) return Error{fmt::format("{} is not a session folder: {}", dir, text.error().message)};
  auto o = session_options_from(*text, dir);
  if (!o) return o.error();
  return run_session(*o, make, gpus, gpu_present);
}

}  // namespace ptxforge::agent
