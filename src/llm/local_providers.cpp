// Providers without HTTP: a command run per request, recorded replies, and the manual
// provider through which a person or another agent answers.
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "llm/provider.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace ptxforge::llm {

using nlohmann::json;

namespace {

json request_json(const Request& req) {
  json messages = json::array();
  for (auto& m : req.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  return {{"messages", messages}, {"temperature", req.temperature}, {"max_tokens", req.max_tokens},
          {"sample", req.sample}, {"round", req.round}};
}

// cmd:<command line>: the request as JSON on stdin, the reply text on stdout.
class Command : public Provider {
 public:
  Command(std::string command, ProviderOptions opts) : command_(std::move(command)), opts_(std::move(opts)) {}
  std::string kind() const override { return "cmd"; }
  std::string model() const override { return command_; }

  Result<Reply> complete(const Request& req) override {
    ProcessOptions po;
    po.input = request_json(req).dump();
    po.max_output = opts_.max_reply_bytes;
    // The one child that inherits everything: the user named this command to reach a model,
    // and it may need the user's own credentials to do that.
    po.env = ChildEnv::inherit;
    auto p = run_process({"/bin/sh", "-c", command_}, opts_.timeout, po);
    if (!p) return Error{fmt::format("cmd: {}", p.error().message)};
    if (p->output_capped) return Error{fmt::format("cmd: the reply is larger than {} MB; refused", opts_.max_reply_bytes >> 20)};
    if (p->timed_out)
      return Error{fmt::format("cmd: '{}' did not answer within {:.0f} s", command_, static_cast<double>(opts_.timeout.count()) / 1000)};
    if (p->exit_code != 0) {
      std::string err = p->err.size() > 1000 ? "..." + p->err.substr(p->err.size() - 1000) : p->err;
      return Error{fmt::format("cmd: '{}' exited with {}{}", command_,
                               p->signal ? fmt::format("signal {}", p->signal) : fmt::format("code {}", p->exit_code),
                               err.empty() ? "" : ": " + std::string(trim(err)))};
    }
    Reply r;
    r.text = std::move(p->out);
    r.seconds = p->seconds;
    return r;
  }

 private:
  std::string command_;
  ProviderOptions opts_;
};

// replay:<file>: {"produced_by": "...", "replies": ["round 1 reply", "round 2 reply", ...]}; a
// reply may be {"text": "...", "truncated": true}, one the model stopped at its token limit.
class Replay : public Provider {
 public:
  Replay(std::string file, std::vector<Reply> replies) : file_(std::move(file)), replies_(std::move(replies)) {}
  std::string kind() const override { return "replay"; }
  std::string model() const override { return file_; }

  Result<Reply> complete(const Request& req) override {
    if (req.round < 0 || static_cast<size_t>(req.round) >= replies_.size())
      return Error{fmt::format("replay: {} holds {} replies; there is none for round {}", file_, replies_.size(), req.round + 1)};
    return replies_[static_cast<size_t>(req.round)];
  }

 private:
  std::string file_;
  std::vector<Reply> replies_;
};

// manual: the prompt is already in the round's folder; someone writes reply.md beside it.
class Manual : public Provider {
 public:
  std::string kind() const override { return "manual"; }
  std::string model() const override { return "manual"; }
  Result<Reply> complete(const Request& req) override {
    Reply r;
    r.pending = true;
    std::string dir = req.exchange_dir.empty() ? "." : req.exchange_dir;
    r.text = fmt::format("the prompt is in {}/prompt.md; write the model's reply to {}/reply.md, then run "
                         "`ptxforge compile --resume <session folder>`",
                         dir, dir);
    return r;
  }
};

}  // namespace

std::unique_ptr<Provider> make_command(const std::string& command, const ProviderOptions& opts) {
  return std::make_unique<Command>(command, opts);
}

Result<std::unique_ptr<Provider>> make_replay(const std::string& file) {
  auto text = read_file(file);
  if (!text) return text.error();
  try {
    json j = json::parse(*text);
    std::vector<Reply> replies;
    for (auto& r : j.at("replies")) {
      Reply reply;
      reply.text = r.is_string() ? r.get<std::string>() : r.at("text").get<std::string>();
      reply.truncated = r.is_object() && r.value("truncated", false);
      replies.push_back(std::move(reply));
    }
    return std::unique_ptr<Provider>(std::make_unique<Replay>(file, std::move(replies)));
  } catch (const std::exception& e) {
    return Error{fmt::format("replay: {} is not a replay file ({{\"replies\": [...]}}): {}", file, e.what())};
  }
}

std::unique_ptr<Provider> make_manual(const ProviderOptions&) { return std::make_unique<Manual>(); }

}  // namespace ptxforge::llm
