// panama_torch's link to the accelerator (docs/torch.md "Design"), free of PyTorch: one host
// library `AllReduce` on a thread of its own, fed by a queue of requests. The framework adapter
// (process_group.cpp) turns tensors into requests; the protocol is entirely the host library's.
//
//   Channel ch(cfg, rank, world);         // opens the link named by PANAMA_BACKEND
//   ch.probe();                           // start-up check: path and design (PanamaError)
//   ch.submit({n, mean, fill, out, {}, done});   // returns at once; done() runs on the channel's thread
//
// A request's input is copied into the job's buffer (fill), summed there in calls of
// Config::chunk_elems elements, and only when every call succeeded written to its output, divided
// by the world size on the way for a mean: a failed request leaves its output untouched, and the
// mean costs no second pass over memory.
//
// With peers (enable_fallback: the process group's store and Gloo group), every rank reports each
// request's outcome before any result is stored, so that all switch to Gloo at the same request
// when the accelerator fails and come back together (docs/torch.md "Fallback and re-join").
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "allreduce.h"
#include "torch_config.h"
#include "transport.h"

namespace panama::torchx {

struct Request {
  size_t elems = 0;   // elements of the design's format
  bool mean = false;  // divide the sums by the world size
  // Writes the input (elems * ES bytes) into the job's buffer; runs on the channel's thread.
  std::function<void(uint8_t* buffer)> fill;
  // Contiguous destination of the results; when null, `unpack` takes them (already divided for a
  // mean) from the job's buffer.
  uint8_t* out = nullptr;
  std::function<void(const uint8_t* buffer)> unpack;
  // Runs the request on the fallback group (Gloo) with its original input, results written to
  // it (divided for a mean); null: the request has no fallback (the start-up probe).
  std::function<void()> gloo;
  // Last, on the channel's thread: nullptr on success, else the error: a PanamaError for the
  // accelerator's failures, the framework's own exception (ATen, Gloo) for its own.
  std::function<void(std::exception_ptr)> done;
};

// The ranks' agreement (the process group implements it with c10d's store).
class Peers {
 public:
  virtual ~Peers() = default;
  // Every rank's word for exchange n, in rank order (this rank's is `mine`); every rank calls it
  // with the same n in the same order. Throws PanamaError(timeout) when a rank does not report
  // within the process group's timeout.
  virtual std::vector<std::string> exchange(uint64_t n, const std::string& mine) = 0;
};

// What the fallback did (Channel::fallback_stats).
struct FallbackStats {
  bool on_gloo = false;             // the requests go to Gloo now
  uint64_t fallbacks = 0;           // switches to Gloo
  uint64_t rejoins = 0;             // returns to the accelerator
  uint64_t rejoin_attempts = 0;     // probes at re-join boundaries (successful ones included)
  uint64_t gloo_requests = 0;       // requests served by Gloo after a fallback
  int64_t fell_at = -1;             // the request of the last switch to Gloo (-1: never)
  std::vector<uint32_t> next_vids;  // per tree: the VID of the next vector
};

// PANAMA_BACKEND's names, "udp, tins, dpdk, xdp": the host library's table (host_driver/backends.h).
std::string backend_list();

class Channel {
 public:
  // Opens the link PANAMA_BACKEND names; throws PanamaError (config, transport).
  Channel(const Config& c, int rank, int world);
  // With a link of the caller's (tests: host::LoopbackTransport).
  Channel(const Config& c, int rank, int world, std::unique_ptr<host::Transport> link);
  // The requests still queued run first (close(): a failure ends the rest at once); then the
  // channel's thread ends. Never call it on that thread (on_own_thread()).
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Queues r. Throws PanamaError at once (never queues) when r is larger than the job's buffer
  // or an earlier request failed. A request of 0 elements completes here, in the caller.
  void submit(Request r);
  // Sums known values (one vector per tree) and checks the result bit for bit: an unreachable
  // switch, a context that drops the job's vectors, or an accelerator summing another format
  // end here with PanamaError (unreachable, design) instead of in the first training step.
  void probe();
  // Returns when every request submitted so far has completed.
  void drain();
  // Shutdown (docs/torch.md "Shutdown"). close(): from now on a request that fails ends the
  // queue, the rest failing at once. drain_for(): drain() for at most ms; false when requests
  // remain. abandon(): the process is exiting without them: requests that finish from now on are
  // neither completed nor freed (their callbacks and tensors may need an interpreter that is
  // going away).
  void close();
  bool drain_for(int ms);
  void abandon();
  bool abandoned() const { return abandoned_; }
  bool on_own_thread() const { return std::this_thread::get_id() == th_.get_id(); }
  // From now on an accelerator failure moves this and the following requests to Gloo (Request::
  // gloo) at the request every rank agrees on through `peers`, and every `rejoin_every` requests
  // on Gloo (0: never) all ranks probe the accelerator with new VIDs, each probe bounded by
  // probe_ms, and return to it when every rank's probe was exact. Call before the first request;
  // a second call changes nothing.
  void enable_fallback(std::shared_ptr<Peers> peers, int rejoin_every, int probe_ms);
  FallbackStats fallback_stats() const;

  const Config& config() const { return cfg_; }
  const host::JobParams& params() const { return p_; }
  size_t chunk_elems() const { return chunk_; }
  host::Stats stats() const;  // the host library's counters (without its lists of VIDs)
  uint64_t requests_done() const;
  // Requests queued or being served.
  size_t pending() const;

  // The store step of a request, public for tests: n elements from src to dst (may be equal),
  // divided by the world size when mean (fp32: IEEE division; bf16/fp16: the quotient rounded
  // once, to nearest even).
  void store(uint8_t* dst, const uint8_t* src, size_t n, bool mean) const;

 private:
  void start();
  void run();
  void serve(Request& r);
  void serve_alone(Request& r);
  void serve_agreed(Request& r, uint64_t k);
  void finish(Request& r, std::exception_ptr err, bool ends);
  // r.done(err), unless the channel was abandoned.
  void finish_now(Request& r, std::exception_ptr err);
  // The accelerator part of a request (fill, then the calls): the framework's error of fill in
  // *own, the accelerator's error returned. A failed fill still makes the calls (with zeros) when
  // peers agree on the outcome, so that every rank's VIDs stay in step.
  std::exception_ptr reduce(Request& r, std::exception_ptr* own);
  std::exception_ptr store_results(Request& r);
  std::exception_ptr run_gloo(Request& r);
  bool try_rejoin(uint64_t k);
  // Sums the probe's known values with a fresh AllReduce whose VIDs start at `vids`; "" when
  // exact, else why not. *next: the VIDs after it.
  std::string probe_at(const std::vector<uint32_t>& vids, const host::JobParams& q, std::vector<uint32_t>* next);
  std::vector<std::string> exchange(const std::string& mine);
  void fill_probe(uint8_t* b, size_t n) const;
  std::string check_probe(const uint8_t* b, size_t n, const char* label) const;  // "" or the first wrong element
  void note_vids();
  std::exception_ptr classify(const std::exception& e) const;

  Config cfg_;
  host::JobParams p_;
  std::unique_ptr<host::Transport> link_;
  std::unique_ptr<host::AllReduce> ar_;  // used on the channel's thread only
  size_t chunk_ = 0;
  // The job's buffer: cfg_.buffer_bytes of address space reserved at start (pages come on first touch).
  uint8_t* buf_ = nullptr;
  size_t buf_bytes_ = 0;
  std::vector<uint16_t> mean16_;  // bf16/fp16: bits -> bits of value / world (rounded once)

  mutable std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<Request> q_;
  bool busy_ = false, stop_ = false;
  bool closing_ = false, closing_failed_ = false;  // close(); a request failed since
  std::atomic<bool> abandoned_{false};
  std::string failed_;  // the first failure's message: later requests are refused
  // Fallback (enable_fallback): the channel's thread only, but for the copy in fb_ (under mu_).
  std::shared_ptr<Peers> peers_;
  int rejoin_every_ = 0, rejoin_probe_ms_ = 2000;
  uint64_t seq_ = 0, xn_ = 0;  // requests served, exchanges made (the same on every rank)
  FallbackStats fb_;
  host::Stats stats_;
  uint64_t done_ = 0;
  std::thread th_;
};

}  // namespace panama::torchx
