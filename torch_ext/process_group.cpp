#include "process_group.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include <ATen/ATen.h>

namespace panama::torchx {

void log_once(const std::string& reason) {
  static std::mutex mu;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> l(mu);
  if (!seen.insert(reason).second) return;
  std::fprintf(stderr, "panama_torch: %s\n", reason.c_str());
  std::fflush(stderr);
}

namespace {
// The channels of this process by job. An entry stays from the channel's opening until its
// freeing has ended: an entry whose channel can no longer be locked is a channel being freed
// (its queue running). Never destroyed, so that a freeing that outlasts exit() finds it.
struct Registry {
  std::mutex mu;
  std::condition_variable freed;
  struct Entry {
    std::weak_ptr<Channel> ch;
    const Channel* id = nullptr;  // which channel (never dereferenced: it may be freed)
    bool abandoned = false;       // left running at exit: never freed, never waited for
  };
  std::map<int, Entry> jobs;
};
Registry& registry() {
  static auto* r = new Registry;  // NOLINT: never freed on purpose
  return *r;
}
std::atomic<void (*)(const std::function<void()>&)> unlocked_runner{nullptr};

// A channel's last reference has gone: its registry entry (if still its own) is erased when the
// channel was freed, or marked abandoned; waiters on reg.freed (the exit handler, a reopening) wake.
void settle_entry(const Channel* ch, int job, bool freed) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> l(reg.mu);
  auto it = reg.jobs.find(job);
  if (it != reg.jobs.end() && it->second.id == ch) {
    if (freed)
      reg.jobs.erase(it);
    else
      it->second.abandoned = true;
  }
  reg.freed.notify_all();
}

void free_channel(Channel* ch, int job) {
  run_unlocked([ch] { delete ch; });
  settle_entry(ch, job, true);  // ch is only compared, never read
}

void leave_abandoned(const Channel* ch, int job) { settle_entry(ch, job, false); }
}  // namespace

void run_unlocked(const std::function<void()>& f) {
  if (auto r = unlocked_runner.load())
    r(f);
  else
    f();
}

void set_unlocked_runner(void (*runner)(const std::function<void()>&)) { unlocked_runner = runner; }

std::shared_ptr<Channel> open_channel(const Config& c, int rank, int world) {
  Registry& reg = registry();
  std::shared_ptr<Channel> found;  // outlives the lock: as a last reference it frees the channel
  std::lock_guard<std::mutex> l(reg.mu);
  auto it = reg.jobs.find(c.job);
  if (it != reg.jobs.end()) {
    if (!(found = it->second.ch.lock()))
      throw PanamaError(Cause::config, "job " + std::to_string(c.job) +
                                           "'s previous channel in this process is still shutting down (its queued "
                                           "all_reduces run first): open it again after that");
    const auto& p = found->params();
    if (p.rank != rank || p.world != world)
      throw PanamaError(Cause::config, "job " + std::to_string(c.job) + " is open in this process as rank " +
                                           std::to_string(p.rank) + " of " + std::to_string(p.world) + ", not rank " +
                                           std::to_string(rank) + " of " + std::to_string(world));
    return found;
  }
  const int job = c.job;
  auto* raw = new Channel(c, rank, world);
  std::shared_ptr<Channel> ch(raw, [job](Channel* p) {
    if (p->abandoned()) {  // its thread still runs, in a process that is exiting: never freed
      leave_abandoned(p, job);
      return;
    }
    if (p->on_own_thread())
      std::thread([p, job] { free_channel(p, job); }).detach();  // ~Channel joins that thread
    else
      free_channel(p, job);
  });
  reg.jobs[job] = {ch, raw, false};
  return ch;
}

std::vector<std::shared_ptr<Channel>> open_channels() {
  Registry& reg = registry();
  std::lock_guard<std::mutex> l(reg.mu);
  std::vector<std::shared_ptr<Channel>> v;
  for (auto& [job, e] : reg.jobs)
    if (auto ch = e.ch.lock()) v.push_back(std::move(ch));
  return v;
}

size_t wait_freed(int ms) {
  Registry& reg = registry();
  std::unique_lock<std::mutex> l(reg.mu);
  auto closing = [&] {
    size_t n = 0;
    for (auto& [job, e] : reg.jobs) n += e.ch.expired() && !e.abandoned;
    return n;
  };
  reg.freed.wait_for(l, std::chrono::milliseconds(ms), [&] { return closing() == 0; });
  return closing();
}

PanamaWork::PanamaWork(std::vector<at::Tensor> outputs)
    : c10d::Work(-1, c10d::OpType::ALLREDUCE),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

void PanamaWork::complete(std::exception_ptr e) {
  if (e)
    future_->setError(e);
  else
    future_->markCompleted(c10::IValue(outputs_));
  finish(e);
}

namespace {
at::ScalarType scalar_type(Format e) {
  return e == Format::fp32 ? at::kFloat : e == Format::bf16 ? at::kBFloat16 : at::kHalf;
}
}  // namespace

std::string unsupported(const Channel& ch, const at::Tensor& t) {
  if (t.is_sparse()) return "sparse tensors go to Gloo (the accelerator sums dense vectors)";
  if (!t.device().is_cpu()) return "tensors on " + t.device().str() + " go to Gloo (the host library reads CPU memory)";
  const Format f = ch.config().format;
  if (t.scalar_type() != scalar_type(f))
    return std::string("tensors of dtype ") + c10::toString(t.scalar_type()) + " go to Gloo (the design sums " +
           to_string(f) + ")";
  return "";
}

StorePeers::StorePeers(c10::intrusive_ptr<c10d::Store> store, int rank, int world)
    : store_(std::move(store)), rank_(rank), world_(world) {}

std::vector<std::string> StorePeers::exchange(uint64_t n, const std::string& mine) {
  auto key = [](uint64_t x, int r) { return "x" + std::to_string(x) + "/" + std::to_string(r); };
  std::vector<std::string> keys;
  for (int r = 0; r < world_; ++r) keys.push_back(key(n, r));
  try {
    store_->set(keys[static_cast<size_t>(rank_)], std::vector<uint8_t>(mine.begin(), mine.end()));
    store_->wait(keys);
  } catch (const std::exception& e) {
    std::string missing;
    try {
      for (int r = 0; r < world_; ++r)
        if (!store_->check({keys[static_cast<size_t>(r)]}))
          missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    } catch (const std::exception&) {
      missing = "unknown";
    }
    throw PanamaError(Cause::timeout, "rank(s) " + missing + " did not report all_reduce outcome " + std::to_string(n) +
                                          " within the process group's timeout (" + e.what() + ")");
  }
  std::vector<std::string> words;
  for (const auto& k : keys) {
    const std::vector<uint8_t> v = store_->get(k);
    words.emplace_back(v.begin(), v.end());
  }
  if (n > 0) store_->deleteKey(key(n - 1, rank_));
  return words;
}

c10::intrusive_ptr<PanamaWork> submit_tensor(Channel& ch, const at::Tensor& t, bool mean,
                                             c10::intrusive_ptr<c10d::Work> after,
                                             c10::intrusive_ptr<c10d::ProcessGroup> gloo) {
  auto work = c10::make_intrusive<PanamaWork>(std::vector<at::Tensor>{t});
  Request r;
  r.elems = static_cast<size_t>(t.numel());
  r.mean = mean;
  const size_t bytes = r.elems * static_cast<size_t>(elem_bytes(ch.config().format));
  if (t.is_contiguous()) {
    r.fill = [t, after, bytes](uint8_t* b) {
      if (after) after->wait();
      std::memcpy(b, t.data_ptr(), bytes);
    };
    r.out = static_cast<uint8_t*>(t.data_ptr());
  } else {
    // Strided (a slice, a transpose, channels-last): gathered into the job's buffer and
    // scattered back by ATen's copy.
    r.fill = [t, after](uint8_t* b) {
      if (after) after->wait();
      at::NoGradGuard no_grad;
      at::from_blob(b, t.sizes(), t.options()).copy_(t);
    };
    r.unpack = [t](const uint8_t* b) {
      at::NoGradGuard no_grad;
      at::Tensor dst = t;
      dst.copy_(at::from_blob(const_cast<uint8_t*>(b), t.sizes(), t.options()));
    };
  }
  if (gloo) {
    // Gloo's sum of the original input (in place; strided: through a contiguous copy), then the
    // division of a mean as ATen does it.
    const int world = ch.params().world;
    r.gloo = [t, after, gloo, mean, world] {
      if (after) after->wait();
      at::NoGradGuard no_grad;
      at::Tensor c = t.is_contiguous() ? t : t.contiguous();
      std::vector<at::Tensor> v{c};
      gloo->allreduce(v)->wait();
      if (mean) c.div_(world);
      if (!t.is_contiguous()) {
        at::Tensor dst = t;
        dst.copy_(c);
      }
    };
  }
  r.done = [work](std::exception_ptr e) { work->complete(e); };
  ch.submit(std::move(r));
  return work;
}

ProcessGroupPanama::ProcessGroupPanama(std::shared_ptr<Channel> ch, c10::intrusive_ptr<c10d::ProcessGroup> gloo,
                                       c10::intrusive_ptr<c10d::Store> store)
    : c10d::ProcessGroup(ch->params().rank, ch->params().world), ch_(std::move(ch)), gloo_(std::move(gloo)) {
  if (!gloo_) throw PanamaError(Cause::config, "the process group needs its internal Gloo group");
  if (gloo_->getRank() != getRank() || gloo_->getSize() != getSize())
    throw PanamaError(Cause::config, "the internal Gloo group's rank/size differ from the job's");
  const Config& c = ch_->config();
  if (store && c.fallback)
    ch_->enable_fallback(std::make_shared<StorePeers>(store, getRank(), getSize()), c.rejoin_every, c.rejoin_probe_ms);
  init();
}

ProcessGroupPanama::~ProcessGroupPanama() {
  auto ch = std::move(ch_);
  auto gloo = std::move(gloo_);
  auto last = std::move(last_gloo_);
  run_unlocked([&] {
    last.reset();
    gloo.reset();
    ch.reset();
  });
}

template <class F>
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::to_gloo(const std::string& reason, F&& f) {
  log_once(reason);
  ch_->drain();
  auto w = f();
  std::lock_guard<std::mutex> l(mu_);
  last_gloo_ = w;
  return w;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::allreduce(std::vector<at::Tensor>& tensors,
                                                             const c10d::AllreduceOptions& opts) {
  const auto op = static_cast<c10d::ReduceOp::RedOpType>(opts.reduceOp);
  std::string why;
  if (tensors.size() != 1)
    why = "all_reduce of a list of " + std::to_string(tensors.size()) +
          " tensors goes to Gloo (the accelerator takes one tensor per call)";
  else if (op != c10d::ReduceOp::SUM && op != c10d::ReduceOp::AVG)
    why = "all_reduce with an op other than SUM or AVG goes to Gloo (the accelerator sums)";
  else
    why = unsupported(*ch_, tensors[0]);
  if (!why.empty()) return to_gloo(why, [&] { return gloo_->allreduce(tensors, opts); });
  c10::intrusive_ptr<c10d::Work> after;
  {
    std::lock_guard<std::mutex> l(mu_);
    after = last_gloo_;
  }
  return submit_tensor(*ch_, tensors[0], op == c10d::ReduceOp::AVG, after, gloo_);
}

namespace {
std::string only_sums(const char* op) {
  return std::string(op) + " goes to Gloo (the accelerator only sums: all_reduce SUM/AVG)";
}
}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::broadcast(std::vector<at::Tensor>& t,
                                                             const c10d::BroadcastOptions& o) {
  return to_gloo(only_sums("broadcast"), [&] { return gloo_->broadcast(t, o); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::allreduce_coalesced(std::vector<at::Tensor>& t,
                                                                       const c10d::AllreduceCoalescedOptions& o) {
  return to_gloo("all_reduce_coalesced goes to Gloo (the accelerator takes one tensor per call)",
                 [&] { return gloo_->allreduce_coalesced(t, o); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::reduce(std::vector<at::Tensor>& t, const c10d::ReduceOptions& o) {
  return to_gloo(only_sums("reduce"), [&] { return gloo_->reduce(t, o); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::allgather(std::vector<std::vector<at::Tensor>>& out,
                                                             std::vector<at::Tensor>& in,
                                                             const c10d::AllgatherOptions& o) {
  return to_gloo(only_sums("all_gather"), [&] { return gloo_->allgather(out, in, o); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::_allgather_base(at::Tensor& out, at::Tensor& in,
                                                                   const c10d::AllgatherOptions& o) {
  return to_gloo(only_sums("_allgather_base"), [&] { return gloo_->_allgather_base(out, in, o); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::allgather_coalesced(std::vector<std::vector<at::Tensor>>& out,
                                                                       std::vector<at::Tensor>& in,
                                                                       const c10d::AllgatherOptions& o) {
  return to_gloo(only_sums("all_gather_coalesced"), [&] { return gloo_->allgather_coalesced(out, in, o); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::gather(std::vector<std::vector<at::Tensor>>& out,
                                                          std::vector<at::Tensor>& in, const c10d::GatherOptions& o) {
  return to_gloo(only_sums("gather"), [&] { return gloo_->gather(out, in, o); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::scatter(std::vector<at::Tensor>& out,
                                                           std::vector<std::vector<at::Tensor>>& in,
                                                           const c10d::ScatterOptions& o) {
  return to_gloo(only_sums("scatter"), [&] { return gloo_->scatter(out, in, o); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::reduce_scatter(std::vector<at::Tensor>& out,
                                                                  std::vector<std::vector<at::Tensor>>& in,
                                                                  const c10d::ReduceScatterOptions& o) {
  return to_gloo(only_sums("reduce_scatter"), [&] { return gloo_->reduce_scatter(out, in, o); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::_reduce_scatter_base(at::Tensor& out, at::Tensor& in,
                                                                        const c10d::ReduceScatterOptions& o) {
  return to_gloo(only_sums("_reduce_scatter_base"), [&] { return gloo_->_reduce_scatter_base(out, in, o); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::alltoall_base(at::Tensor& out, at::Tensor& in,
                                                                 std::vector<int64_t>& out_split,
                                                                 std::vector<int64_t>& in_split,
                                                                 const c10d::AllToAllOptions& o) {
  return to_gloo(only_sums("all_to_all"), [&] { return gloo_->alltoall_base(out, in, out_split, in_split, o); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::alltoall(std::vector<at::Tensor>& out, std::vector<at::Tensor>& in,
                                                            const c10d::AllToAllOptions& o) {
  return to_gloo(only_sums("all_to_all"), [&] { return gloo_->alltoall(out, in, o); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::send(std::vector<at::Tensor>& t, int dst, int tag) {
  return to_gloo(only_sums("send"), [&] { return gloo_->send(t, dst, tag); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::recv(std::vector<at::Tensor>& t, int src, int tag) {
  return to_gloo(only_sums("recv"), [&] { return gloo_->recv(t, src, tag); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::recvAnysource(std::vector<at::Tensor>& t, int tag) {
  return to_gloo(only_sums("recv"), [&] { return gloo_->recvAnysource(t, tag); });
}
c10::intrusive_ptr<c10d::Work> ProcessGroupPanama::barrier(const c10d::BarrierOptions& o) {
  return to_gloo("barrier goes to Gloo, after this process's earlier all_reduces", [&] { return gloo_->barrier(o); });
}
void ProcessGroupPanama::monitoredBarrier(const c10d::BarrierOptions& o, bool wait_all_ranks) {
  log_once("monitored_barrier goes to Gloo, after this process's earlier all_reduces");
  ch_->drain();
  gloo_->monitoredBarrier(o, wait_all_ranks);
}

}  // namespace panama::torchx
