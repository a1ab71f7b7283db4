// The scheduler (scheduler.h). One mutex guards the queue and the counts; the store has its
// own, always taken after this one (the admit callback runs inside the store's transaction
// with this one held), never before. A slot thread reads its run's candidate from the store
// when it takes the run, so the queue holds ids, not candidate texts.
#include "serve/scheduler.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ptxforge::serve {

namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void log_error(const std::string& what) { fmt::print(stderr, "ptxforge serve: {}\n", what); }

}  // namespace

std::vector<Slot> pipeline_slots(const std::vector<int>& gpu_ordinals, int cpu_workers, const std::string& binary) {
  std::vector<Slot> slots;
  for (int o : gpu_ordinals) slots.push_back({fmt::format("gpu{}", o), SlotKind::gpu, PipelineVerifier::for_gpu(o)});
  for (int i = 0; i < cpu_workers; ++i) slots.push_back({fmt::format("cpu{}", i), SlotKind::cpu, PipelineVerifier::for_cpu(binary)});
  return slots;
}

Scheduler::Scheduler(RunStore& store, TaskCatalog catalog, std::vector<Slot> slots, SchedulerLimits limits)
    : store_(store), catalog_(std::move(catalog)), slots_(std::move(slots)), limits_(limits), metrics_([&] {
        std::vector<std::string> names;
        for (auto& s : slots_) names.push_back(s.name);
        return names;
      }()) {
  for (auto& s : slots_) has_gpu_ = has_gpu_ || s.kind == SlotKind::gpu;
}

Result<std::unique_ptr<Scheduler>> Scheduler::start(RunStore& store, TaskCatalog catalog, std::vector<Slot> slots,
                                                    SchedulerLimits limits) {
  std::unique_ptr<Scheduler> s(new Scheduler(store, std::move(catalog), std::move(slots), limits));
  if (auto st = s->recover(); !st) return st.error();
  for (size_t i = 0; i < s->slots_.size(); ++i) s->threads_.emplace_back([p = s.get(), i] { p->serve_slot(i); });
  return s;
}

Scheduler::~Scheduler() {
  shutdown(std::chrono::milliseconds(0));
  for (auto& t : threads_) t.join();
}

bool Scheduler::can_run(eval::Device d) const {
  return std::any_of(slots_.begin(), slots_.end(), [&](const Slot& s) { return runs_on(d, s.kind, has_gpu_); });
}

void Scheduler::finish_unrun(const std::string& id, const std::string& task_name, const std::string& why) {
  const TaskCatalog::Entry* e = catalog_.find(task_name);
  task::Task named;
  named.name = task_name;
  Verified v = not_carried_out(e ? e->task : named, why);
  if (auto st = store_.mark_done(id, v.record_json, now_ms()); !st) log_error(st.error().message);
  metrics_.finished_without_slot(v);
  {
    std::lock_guard lock(m_);
    ++finished_count_;  // a waiter on this run (an idempotent replay's ?wait) wakes now
  }
  finished_.notify_all();
}

Status Scheduler::recover() {
  if (auto n = store_.requeue_running(); !n) return n.error();
  auto rows = store_.unfinished();
  if (!rows) return rows.error();
  for (auto& r : *rows) {
    if (r.attempts >= limits_.max_attempts) {
      finish_unrun(r.id, r.request.task,
                   fmt::format("it was started {} times and the server stopped each time before it finished", r.attempts));
    } else if (!can_run(r.request.options.device)) {
      finish_unrun(r.id, r.request.task, fmt::format("this server has no {} workers", r.request.options.device == eval::Device::gpu ? "GPU" : "CPU engine"));
    } else {
      queue_.push_back({r.seq, r.id, r.request.client, r.request.options.device});
      ++inflight_[r.request.client];
    }
  }
  return ok_status();
}

int Scheduler::retry_after_s() const {
  double mean = metrics_.mean_run_seconds();
  double per_slot = static_cast<double>(queue_.size()) * (mean > 0 ? mean : 1.0) / static_cast<double>(std::max<size_t>(1, slots_.size()));
  return static_cast<int>(std::clamp(std::ceil(per_slot), 1.0, 300.0));
}

Submitted Scheduler::submit(const std::vector<RunRequest>& requests) {
  Submitted out;
  std::vector<size_t> unrunnable;  // indices of new runs no slot here may run
  {
    std::lock_guard lock(m_);
    if (stopping_) {
      out.refusal = Refusal::shutting_down;
      out.message = "the server is shutting down";
      out.retry_after_s = 10;
      return out;
    }
    auto admit = [&](const std::vector<const RunRequest*>& fresh) {
      size_t queued = 0;
      std::map<std::string, int> per_client;
      for (auto* q : fresh) {
        if (can_run(q->options.device)) ++queued;
        if (!q->client.empty()) ++per_client[q->client];
      }
      if (queue_.size() + queued > limits_.max_queue) {
        out.refusal = Refusal::queue_full;
        out.message = fmt::format("the queue holds {} runs and takes at most {}", queue_.size(), limits_.max_queue);
        return false;
      }
      for (auto& [client, n] : per_client) {
        auto it = inflight_.find(client);
        int now = it == inflight_.end() ? 0 : it->second;
        if (now + n > limits_.max_inflight_per_client) {
          out.refusal = Refusal::rate_limited;
          out.message = fmt::format("this client has {} runs queued or running and may have at most {}", now,
                                    limits_.max_inflight_per_client);
          return false;
        }
      }
      return true;
    };
    auto stored = store_.insert_batch(requests, now_ms(), admit);
    if (!stored) {
      log_error(stored.error().message);
      out.refusal = Refusal::internal;
      out.message = "the runs could not be stored";
      return out;
    }
    if (!stored->admitted) {
      out.retry_after_s = retry_after_s();
      return out;
    }
    size_t fresh = 0;
    for (size_t i = 0; i < stored->runs.size(); ++i) {
      const StoredRun& r = stored->runs[i];
      RunView v = r.view();
      v.replayed = stored->replayed[i];
      out.runs.push_back(v);
      if (v.replayed) continue;
      ++fresh;
      if (!can_run(r.request.options.device)) {
        unrunnable.push_back(i);
        continue;
      }
      queue_.push_back({r.seq, r.id, r.request.client, r.request.options.device});
      ++inflight_[r.request.client];
    }
    metrics_.accepted(fresh);
  }
  work_.notify_all();
  for (size_t i : unrunnable) {
    const RunRequest& q = requests[i];
    finish_unrun(out.runs[i].id, q.task, fmt::format("this server has no {} workers", q.options.device == eval::Device::gpu ? "GPU" : "CPU engine"));
    auto done = store_.get(out.runs[i].id);
    if (done && *done) out.runs[i] = (*done)->view();
  }
  return out;
}

Result<std::optional<RunView>> Scheduler::get(const std::string& id, std::chrono::milliseconds wait) {
  auto deadline = std::chrono::steady_clock::now() + std::max(wait, std::chrono::milliseconds(0));
  while (true) {
    uint64_t seen;
    bool stopping;
    {
      std::lock_guard lock(m_);
      seen = finished_count_;  // read before the row: a run finishing in between still wakes us
      stopping = stopping_;
    }
    auto row = store_.get(id);
    if (!row) return row.error();
    if (!*row) return std::optional<RunView>();
    if ((*row)->state == RunState::done || stopping || std::chrono::steady_clock::now() >= deadline)
      return std::optional<RunView>((*row)->view());
    std::unique_lock lock(m_);
    finished_.wait_until(lock, deadline, [&] { return finished_count_ != seen || stopping_; });
  }
}

Health Scheduler::health() {
  std::lock_guard lock(m_);
  Health h;
  h.queue_depth = queue_.size();
  h.running = running_.size();
  for (auto& s : slots_) (s.kind == SlotKind::gpu ? h.gpu_workers : h.cpu_workers) += 1;
  h.shutting_down = stopping_;
  return h;
}

std::string Scheduler::metrics_text() {
  size_t depth;
  {
    std::lock_guard lock(m_);
    depth = queue_.size();
  }
  return metrics_.render(depth);
}

void Scheduler::shutdown(std::chrono::milliseconds grace) {
  std::unique_lock lock(m_);
  stopping_ = true;
  work_.notify_all();
  finished_.notify_all();
  finished_.wait_for(lock, grace, [&] { return running_.empty(); });
}

void Scheduler::serve_slot(size_t index) {
  Slot& slot = slots_[index];
  while (true) {
    Queued q;
    {
      std::unique_lock lock(m_);
      auto mine = [&] {
        return std::find_if(queue_.begin(), queue_.end(), [&](const Queued& x) { return runs_on(x.device, slot.kind, has_gpu_); });
      };
      work_.wait(lock, [&] { return stopping_ || mine() != queue_.end(); });
      if (stopping_) return;  // what is queued stays stored for the next start
      auto it = mine();
      q = *it;
      queue_.erase(it);
      running_.insert(q.id);
    }
    auto started = std::chrono::steady_clock::now();
    std::optional<Verified> verified;
    auto row = store_.get(q.id);
    if (!row || !*row) {
      log_error(row ? fmt::format("run {} vanished from the store", q.id) : row.error().message);
    } else if (auto st = store_.mark_running(q.id, slot.name, now_ms()); !st) {
      // The row is still queued in the store: back in the queue, tried again after a pause,
      // so neither the run nor a waiter on it is stranded until a restart.
      log_error(st.error().message);
      std::unique_lock lock(m_);
      running_.erase(q.id);
      queue_.push_front(q);
      work_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_; });
      continue;
    } else {
      const StoredRun& r = **row;
      const TaskCatalog::Entry* e = catalog_.find(r.request.task);
      task::Task named;
      named.name = r.request.task;
      try {
        verified = e ? slot.verifier->verify(r.request, *e) : not_carried_out(named, "the task is no longer among the server's tasks");
      } catch (const std::exception& ex) {
        verified = not_carried_out(e ? e->task : named, fmt::format("an internal error ({})", ex.what()));
      }
      if (auto st = store_.mark_done(q.id, verified->record_json, now_ms()); !st) log_error(st.error().message);
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (verified) metrics_.finished(*verified, slot.name, seconds);
    {
      std::lock_guard lock(m_);
      running_.erase(q.id);
      if (--inflight_[q.client] <= 0) inflight_.erase(q.client);
      ++finished_count_;
    }
    finished_.notify_all();
  }
}

}  // namespace ptxforge::serve
