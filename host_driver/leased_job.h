// A job that uses the accelerator while the allocator leases it contexts and all-reduces on the
// hosts (HostRing) otherwise (docs/allocator.md "Fallback"; `panama-host worker --allocator`).
//
// At every iteration boundary the ranks agree on the mode with one small ring all-reduce over the
// fallback link: rank 0 alone talks to the allocator (acquire when it holds no lease, renew when
// it does) and contributes its decision (the lease and its trees' addresses, as 16-bit halves in
// fp32 elements, exact), the others contribute +0. Every rank reads the same sum, so every rank
// switches at the same iteration. An iteration on the accelerator ends with a second small ring
// all-reduce of "my call failed" flags: when any rank's call failed (a lease revoked mid-call, a
// peer gone), every rank redoes that iteration on the ring and rank 0 releases the lease.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "allreduce.h"
#include "host_ring.h"

namespace panama::host {

// One request to the allocator -> its reply (docs/allocator.md "API"). Throws on a transport error.
using AllocatorCall = std::function<nlohmann::json(const nlohmann::json&)>;
// JSON lines over the allocator's Unix socket, one connection per request (bounded by timeout_ms).
AllocatorCall allocator_socket(const std::string& path, int timeout_ms = 5000);

struct LeaseTree {
  int tid = 0;
  wire::Ipv4 agg_ip = 0, group_ip = 0;  // 0: not given by the inventory
  uint32_t first_vid = 0;               // where the context expects the job to start (the allocator's)
};
struct Lease {
  int64_t id = 0;
  uint16_t jid = 0;
  std::vector<LeaseTree> trees;
};

// Opens the accelerator link for a lease and fills p's addresses (p.jid, trees, VIDs are set).
using AccelOpener = std::function<std::unique_ptr<Transport>(const Lease&, JobParams&)>;

struct LeasedJobParams {
  JobParams job;         // rank, world, trees, format, count, windows, waits (jid and VIDs from the lease)
  RingParams ring;       // the fallback ring (rank, world, format are taken from job)
  nlohmann::json ports;  // acquire's "ports" (rank 0): {"ACC": [port of rank 0, ...], ...}
  int first_tid = 0;     // acquire's "first_tid"
  int retry_every = 1;   // iterations on the ring between two acquisition attempts (rank 0)
  int heartbeat_ms = 0;  // rank 0 renews this often while leased (0: a third of the lease)
  std::string tag = "panama-host worker";       // prefix of the log lines
  std::function<void(const std::string&)> log;  // default: one line on stderr
};

struct LeasedStats {
  int accel_iterations = 0, ring_iterations = 0, redone = 0, switches = 0, grants = 0;
  double accel_seconds = 0, ring_seconds = 0, boundary_seconds = 0;
};

class LeasedJob {
 public:
  enum class Mode { ring, accelerator };
  // `fallback` carries the ring; `alloc` is used by rank 0 only (others may pass nullptr).
  LeasedJob(Transport& fallback, LeasedJobParams p, AccelOpener open, AllocatorCall alloc);
  ~LeasedJob();  // finish() if not called
  // One iteration: the boundary (agree on the mode), then the all-reduce of n elements in place.
  // Returns the mode the result was computed in. Throws HostRingError / AllReduceError.
  Mode iteration(void* buf, size_t n);
  // Releases the lease (rank 0) and serves the ring's last repairs for up to drain_ms.
  void finish(int drain_ms = 1000);
  const LeasedStats& stats() const { return st_; }
  const RingStats& ring_stats() const { return ring_.stats(); }
  const AllReduce* accel() const { return ar_.get(); }
  void stop_on(const std::atomic<bool>* flag);

 private:
  void boundary(int64_t iteration);
  void decide();  // rank 0: acquire or renew
  bool agree_failed(bool failed);
  void heartbeat_loop();
  void say(const std::string& line);
  void release();

  LeasedJobParams p_;
  AccelOpener open_;
  AllocatorCall alloc_;
  HostRing ring_;
  LeasedStats st_;
  int64_t iteration_ = 0, last_try_ = -1;
  Mode mode_ = Mode::ring;
  bool said_ring_ = false, finished_ = false;
  // Rank 0's lease (what it offers at the next boundary) and the agreed one in use.
  std::mutex mu_;
  Lease held_;
  bool lease_ok_ = false, just_ended_ = false;
  int64_t lease_ms_ = 10000;
  std::string why_;         // why there is no lease (rank 0)
  std::string open_error_;  // the accelerator's link did not open for the lease in use
  Lease used_;
  std::vector<uint32_t> vid_floor_;  // the next lease's first VIDs (per tree; identical on every rank)
  std::unique_ptr<Transport> link_;
  std::unique_ptr<AllReduce> ar_;
  const std::atomic<bool>* stop_ = nullptr;
  std::thread hb_;
  std::atomic<bool> hb_stop_{false};
};

}  // namespace panama::host
