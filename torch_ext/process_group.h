// The c10d side of panama_torch (docs/torch.md "Design"): the process group "panama", whose
// all_reduce (SUM or AVG, one contiguous or strided CPU tensor of the design's format) runs
// through a Channel on the channel's own thread, and whose every other collective, op, dtype or
// device goes to an internal Gloo group with one log line per distinct reason.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "channel.h"

namespace panama::torchx {

// Writes "panama_torch: <reason>" to stderr the first time a reason is seen in this process.
void log_once(const std::string& reason);

// Runs f. The Python module installs a runner that lets go of the GIL around f: freeing a
// channel or a Gloo group waits for threads that may need the GIL to free a request's tensors
// (docs/torch.md "Shutdown").
void run_unlocked(const std::function<void()>& f);
void set_unlocked_runner(void (*runner)(const std::function<void()>&));

// The one channel of a job in this process: the process group and a DDP hook's state share it,
// so that their all-reduces keep one order and one VID sequence. Throws PanamaError, also while
// the job's previous channel is still shutting down. Its last owner frees it through
// run_unlocked; on the channel's own thread (a callback's closure held the last reference) the
// freeing moves to a thread of its own.
std::shared_ptr<Channel> open_channel(const Config& c, int rank, int world);
// Every channel open in this process.
std::vector<std::shared_ptr<Channel>> open_channels();
// Waits up to ms for the channels being freed (their queues running); returns how many remain.
size_t wait_freed(int ms);

// A request's Work: completed on the channel's thread; its future holds [tensor] (c10d's
// convention, which DDP's comm hooks accept as they are).
class PanamaWork : public c10d::Work {
 public:
  explicit PanamaWork(std::vector<at::Tensor> outputs);
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  std::vector<at::Tensor> result() override { return outputs_; }
  void complete(std::exception_ptr e);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// Why t cannot be summed by the accelerator of ch's design ("" when it can).
std::string unsupported(const Channel& ch, const at::Tensor& t);

// The ranks' agreement through c10d's store: exchange n writes this rank's word under "x<n>/<rank>",
// waits for every rank's (the store's timeout: the process group's), reads them, and deletes this
// rank's word of exchange n-1 (every rank has read it once its word of n is there).
class StorePeers : public Peers {
 public:
  StorePeers(c10::intrusive_ptr<c10d::Store> store, int rank, int world);
  std::vector<std::string> exchange(uint64_t n, const std::string& mine) override;

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  int rank_, world_;
};

// Sums (mean: averages) t in place through ch. `after` (may be null) must finish before t is
// read: the last fallback work, so that the order of the caller's collectives is kept. `gloo`
// (may be null): the group the request falls back to when the accelerator fails. Throws
// PanamaError at once when t does not fit the job's buffer or the job failed before.
c10::intrusive_ptr<PanamaWork> submit_tensor(Channel& ch, const at::Tensor& t, bool mean,
                                             c10::intrusive_ptr<c10d::Work> after,
                                             c10::intrusive_ptr<c10d::ProcessGroup> gloo = {});

class ProcessGroupPanama : public c10d::ProcessGroup {
 public:
  // With a store (and PANAMA_FALLBACK=gloo), an accelerator failure moves the job to `gloo` at the
  // request every rank agrees on, and re-join probes bring it back (Channel::enable_fallback).
  ProcessGroupPanama(std::shared_ptr<Channel> ch, c10::intrusive_ptr<c10d::ProcessGroup> gloo,
                     c10::intrusive_ptr<c10d::Store> store = {});
  ~ProcessGroupPanama() override;  // lets go of the channel and the Gloo group through run_unlocked
  const std::string getBackendName() const override { return "panama"; }
  std::shared_ptr<Channel> channel() const { return ch_; }
  c10::intrusive_ptr<c10d::ProcessGroup> fallback() const { return gloo_; }

  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts = c10d::AllreduceOptions()) override;

  // Everything else: the internal Gloo group.
  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& t, const c10d::BroadcastOptions& o) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& t,
                                                     const c10d::AllreduceCoalescedOptions& o) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& t, const c10d::ReduceOptions& o) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& out, std::vector<at::Tensor>& in,
                                           const c10d::AllgatherOptions& o) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& out, at::Tensor& in,
                                                 const c10d::AllgatherOptions& o) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& out,
                                                     std::vector<at::Tensor>& in,
                                                     const c10d::AllgatherOptions& o) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& out, std::vector<at::Tensor>& in,
                                        const c10d::GatherOptions& o) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& out, std::vector<std::vector<at::Tensor>>& in,
                                         const c10d::ScatterOptions& o) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& out, std::vector<std::vector<at::Tensor>>& in,
                                                const c10d::ReduceScatterOptions& o) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& out, at::Tensor& in,
                                                      const c10d::ReduceScatterOptions& o) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& out, at::Tensor& in, std::vector<int64_t>& out_split,
                                               std::vector<int64_t>& in_split, const c10d::AllToAllOptions& o) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& out, std::vector<at::Tensor>& in,
                                          const c10d::AllToAllOptions& o) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& t, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& t, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& t, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& o) override;
  void monitoredBarrier(const c10d::BarrierOptions& o, bool wait_all_ranks) override;
  void setSequenceNumberForGroup() override { gloo_->setSequenceNumberForGroup(); }
  uint64_t getSequenceNumberForGroup() override { return gloo_->getSequenceNumberForGroup(); }

 private:
  // Logs the reason once, waits for the accelerator's earlier work (the caller's order), runs f
  // on the Gloo group and remembers its work (the accelerator's next request waits for it).
  template <class F>
  c10::intrusive_ptr<c10d::Work> to_gloo(const std::string& reason, F&& f);

  std::shared_ptr<Channel> ch_;
  c10::intrusive_ptr<c10d::ProcessGroup> gloo_;
  std::mutex mu_;
  c10::intrusive_ptr<c10d::Work> last_gloo_;
};

}  // namespace panama::torchx
