// The best-effort fallback of a job with no accelerator context (docs/allocator.md "Fallback"):
// a ring all-reduce among the job's workers over the job's own link (any Transport of
// backends.h, or the in-process links of the tests). Frames are wire-format frames on the
// fallback port (not the aggregation port: an accelerator forwards them as bypass traffic) to the
// job's fallback group, so every worker of the job receives them and keeps those of its ring
// neighbours.
//
// Result order (exact, bit-identical on every rank): the buffer is cut into W chunks, chunk c =
// elements [c n / W, (c + 1) n / W); every element of chunk c is the left fold
//   ((x_c + x_{c+1}) + x_{c+2}) + ... + x_{c+W-1}      (rank indices mod W)
// with numerics.md's add (ref::add: the CPU's float addition, NaN canonical), computed once, by
// the ranks in that order (reduce-scatter), and copied to every rank as it is (all-gather).
//
// Loss: every data frame is kept by its sender until the receiver's status says it arrived; the
// receiver sends a status (how many pieces it holds, which are missing) when a step completes,
// every window / 2 pieces and every rto while it waits; a sender that hears nothing for rto sends
// its last frame again (which draws a status). A call fails only after timeout_ms without a
// frame from the ring (HostRingError).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "ref_float.h"
#include "transport.h"
#include "wire.h"

namespace panama::host {

struct HostRingError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RingParams {
  uint16_t job = 0;  // the job's id (JID field of every fallback frame)
  int rank = 0, world = 1;
  ref::Fmt format = ref::Fmt::fp32;
  int elem_bytes = 4;
  int count = 362;        // elements per data frame
  int window = 64;        // data frames of a step sent beyond what the receiver reported holding
  int rto_ms = 20;        // status and probe interval
  int timeout_ms = 5000;  // a call with nothing from the ring for this long fails
  // Addressing: raw backends send the frames as built; udp replaces L2-L4 (its own socket on the
  // fallback port, to the fallback group).
  wire::Mac eth_dst{}, eth_src{0x02, 0, 0, 0, 0, 1};
  wire::Ipv4 ip_src = 0, ip_dst = 0;
  uint16_t port = wire::kDefaultAggPort + 1;
  void validate() const;  // throws HostRingError with one line
};

struct RingStats {
  uint64_t calls = 0, data_sent = 0, resent = 0, status_sent = 0, frames_received = 0, ignored = 0;
  uint64_t stashed = 0;  // frames of the next call that arrived early
  double seconds = 0;
};

// The job's fallback group and its MAC: 239.255.(job >> 8).(job & 0xff), 01:00:5e:7f:(job >> 8):(job & 0xff).
wire::Ipv4 fallback_group(uint16_t job);
wire::Mac fallback_group_mac(uint16_t job);

class HostRing {
 public:
  HostRing(Transport& link, RingParams p);
  // All-reduces n elements of elem_bytes each, in place (little-endian bit patterns). Every rank
  // calls with the same n, the same number of times. Throws HostRingError (the buffer may then
  // hold partial sums).
  void reduce(void* buf, size_t n);
  // Serves the peers' repair requests of earlier calls until every frame this rank sent was
  // received, or ms passed. Call before leaving the ring (the last call's peers may still need
  // a frame of ours). Returns true when nothing was left unacknowledged.
  bool drain(int ms);
  const RingParams& params() const { return p_; }
  const RingStats& stats() const { return st_; }
  void stop_on(const std::atomic<bool>* flag) { stop_ = flag; }

 private:
  enum Kind : uint8_t { kData = 0, kStatus = 1 };
  struct Send {  // one step's frames to the successor, kept until its status says all arrived
    std::vector<wire::Bytes> frames;
    size_t next = 0, held = 0;  // frames sent so far; the receiver's count
    bool done = false;
    Clock::time_point heard;
  };
  struct Recv {  // one step's pieces from the predecessor
    std::vector<bool> got;
    size_t n = 0, since_status = 0;
    Clock::time_point nagged;
  };
  size_t chunk_begin(int c) const { return static_cast<size_t>(c) * n_ / static_cast<size_t>(p_.world); }
  int mod(int x) const { return ((x % p_.world) + p_.world) % p_.world; }
  int send_chunk(int step) const;
  int recv_chunk(int step) const;
  size_t pieces(int chunk) const;
  void start_send(int step);
  void start_sends();  // every step whose chunk is final, in order
  void pump(Send& s);
  void serve(Clock::time_point until);  // one frame (or none until then), then the timers
  void on_frame(const uint8_t* f, size_t len);
  void on_data(uint64_t call, int step, uint32_t piece, const uint8_t* payload, size_t count, size_t len);
  void on_status(uint64_t call, int step, const uint8_t* payload, size_t count);
  void send_status(uint64_t call, int step, const Recv* r);
  void timers(Clock::time_point now);
  wire::Bytes frame(Kind k, uint64_t call, int step, uint32_t piece, const uint8_t* payload, size_t count, int es);
  void send(const wire::Bytes& f);

  Transport& link_;
  RingParams p_;
  RingStats st_;
  const std::atomic<bool>* stop_ = nullptr;
  uint64_t call_ = 0;  // the current (or last) call, from 1
  bool active_ = false;
  uint8_t* buf_ = nullptr;
  size_t n_ = 0;
  int steps_ = 0, next_send_ = 0;
  std::vector<Recv> recv_;
  size_t recv_done_ = 0;
  std::map<std::pair<uint64_t, int>, Send> sends_;  // (call, step), unacknowledged
  std::deque<wire::Bytes> stash_;                   // frames of the next call
  Clock::time_point last_heard_;
};

}  // namespace panama::host
