// panama_host: all-reduce through a PANAMA-style aggregation accelerator (docs/host.md).
//
//   panama::host::AllReduce ar(transport, params);
//   ar.reduce_f32(buf, n);        // buf now holds the sum over all workers, bit-identical everywhere
//   ar.reduce_f32(in, out, n);    // the same into out; in is only read (the results go straight to out)
//
// Protocol (wire-format.md, accelerator.md): the buffer is split into vectors of COUNT elements,
// striped round-robin over the job's trees (TID 0..T-1); per (JID, TID) VIDs start at
// JobParams::first_vid and continue across calls; FIN marks the last vector of each tree in a
// call; each tree keeps a DCTCP-controlled window of vectors in flight; the final sums come back
// as RESULT frames on the group.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>
#include <utility>

#include "dctcp.h"
#include "ref_float.h"
#include "transport.h"
#include "wire.h"

namespace panama::host {

struct AllReduceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A call ended because its stop flag was raised (AllReduce::stop_on); the input is untouched (an
// in-place call's buffer too; a separate output is then unspecified, like after any failure).
struct AllReduceStopped : AllReduceError {
  using AllReduceError::AllReduceError;
};

// The status wait adapted to the measured round trip of this worker's slots (docs/host.md,
// "Adaptive status wait"): RFC 6298's estimator (srtt += (r - srtt) / 8, rttvar += (|srtt - r| -
// rttvar) / 4, the first sample sets srtt = r, rttvar = r / 2), wait = srtt + 4 rttvar clamped to
// [floor, cap]. Before the first sample the wait is the floor.
class StatusWait {
 public:
  StatusWait(double floor_ms, double cap_ms);
  void sample(double rtt_ms);
  double wait_ms() const;
  double srtt_ms() const { return srtt_; }
  uint64_t samples() const { return samples_; }

 private:
  double floor_, cap_, srtt_ = 0, rttvar_ = 0;
  uint64_t samples_ = 0;
};

struct JobParams {
  uint16_t jid = 0;
  int rank = 0;  // 0..world-1, carried in RANK
  int world = 1;
  int trees = 1;                     // T: TIDs first_tid..first_tid+T-1
  int first_tid = 0;                 // a thread's share of the job's trees (worker --threads)
  int elem_bytes = 4;                // ES: 4 (fp32) or 2 (bf16/fp16)
  ref::Fmt format = ref::Fmt::fp32;  // must match elem_bytes; used by loss repair's encodings
  int count = 362;                   // COUNT per vector: <= min(MAX_ELEMS, (MTU - IP_HEADER_BUDGET) / ES)
  uint32_t first_vid = 0;            // VID of the first vector of every tree (0 after enabling the context)
  std::vector<uint32_t> first_vids;  // per tree (size T) instead of first_vid, when not empty
  WindowParams window;
  int timeout_ms = 2000;  // no new result for this long while waiting: AllReduceError
  // Loss repair (docs/host.md): rounds reserved per call and tree (0: off, a loss ends the call
  // with AllReduceError), repair slots per round, and how long a worker waits for a round's
  // status (or for the results before it) before going on without it.
  // Rounds reserved per call and tree: kRepairAuto (the default) reserves as many as fit a VID
  // budget of kRepairVidBudget per tree and call (at least 64): repair goes on while vectors keep
  // completing and ends by repair_stall_ms, not by a round count. 0: off; N: at most N rounds.
  int repair_rounds = kRepairAuto;
  static constexpr int kRepairAuto = -1;
  static constexpr uint32_t kRepairVidBudget = 1u << 24;
  // With repair on: a call in which no vector has completed for this long while some are
  // missing ends with AllReduceError (0: max(4 call timeouts, 128 status waits)).
  int repair_stall_ms = 0;
  int repair_slots = 8;  // unused since every vector has a slot in every round (kept for the API)
  int status_wait_ms = 200;
  // On: the status wait follows the measured round trip (StatusWait), never below
  // status_wait_ms and never above max(status_wait_ms, timeout_ms / 2); for a slow switch (the
  // RTL stand-in), where a fixed wait gives up on nearly every result before it arrives. Off
  // (the default): status_wait_ms as it is.
  bool adaptive_wait = false;
  // VIDs per status part and round, each carrying the same holder bits: a worker falls out of
  // step with its peers when it alone misses a status result they received (docs/host.md), and
  // with c copies that takes c lost copies on its link (p^c instead of p).
  int status_copies = 3;
  // Re-send (docs/host.md "Recall"): a tree that hears nothing for one status wait while its
  // first unsettled slot is a status part sends that part's outstanding copies again, once
  // each, the same frames. A switch chip with a result cache answers with the sum it sent
  // before (the worker's copy was lost); an accelerator alone drops them as stale.
  bool resend = true;
  // Addressing of the frames built here (raw backends use them as they are; udp replaces L2-L4).
  wire::Mac eth_dst{0x02, 0xaa, 0, 0, 0, 1}, eth_src{0x02, 0, 0, 0, 0, 1};
  wire::Ipv4 ip_src = 0, ip_dst = 0;
  uint16_t agg_port = wire::kDefaultAggPort;
  uint8_t ecn = 0b10;  // ECT(0) on every contribution

  // Throws AllReduceError with one line when a parameter is out of range.
  void validate() const;
  // COUNT for a given MTU and MAX_ELEMS: min(max_elems, floor((mtu - proto::kIpHeaderBudget) / es)).
  static int count_for(int mtu, int max_elems, int es);
};

struct Stats {
  uint64_t calls = 0, vectors_sent = 0, results = 0, results_ce = 0, ignored = 0, duplicates = 0;
  uint64_t leftovers = 0;                              // results of the previous call that arrived after it ended
  uint64_t lost = 0, repaired = 0, repair_rounds = 0;  // vectors seen lost, recovered; rounds used
  uint64_t resent = 0;                                 // frames sent again (JobParams::resend)
  uint64_t bytes_reduced = 0;                          // payload bytes of this worker's buffers
  // Where the results went: calls whose results were written straight into the caller's output
  // (out-of-place calls, AllReduce::reduce_raw(in, out, n)), and result bytes that went through
  // the AllReduce's staging buffer first (in-place calls: one more copy per byte).
  uint64_t calls_direct = 0, bytes_staged = 0;
  // Evidence for ECN checks: (tree, VID) of every in-order result marked CE, and of every slot
  // settled without an in-order result (lost or skipped). Workers must agree on the marks of
  // every VID that none of them settled without its result.
  // Each list keeps at most kEvidenceCap entries (8 MiB); entries past it are only counted in
  // evidence_dropped, and a check must then compare no more than the lists hold.
  static constexpr size_t kEvidenceCap = size_t{1} << 20;
  std::vector<std::pair<uint32_t, uint32_t>> ce_vids, unseen_vids;
  uint64_t evidence_dropped = 0;
  void note(std::vector<std::pair<uint32_t, uint32_t>>& list, size_t tree, uint32_t vid) {
    if (list.size() < kEvidenceCap)
      list.emplace_back(static_cast<uint32_t>(tree), vid);
    else
      ++evidence_dropped;
  }
  double seconds = 0;                      // time spent inside reduce calls
  double status_wait_ms = 0, srtt_ms = 0;  // the status wait in use and the smoothed round trip, at the last call's end
  uint64_t rtt_samples = 0;
};

class AllReduce {
 public:
  AllReduce(Transport& t, const JobParams& p);  // validates p

  // Sums n elements in place with the job's other workers (every worker calls with the same n).
  // The results are gathered in the AllReduce's staging buffer and copied into `data` only when
  // the call succeeded: repair may send any input vector again until the call ends, and a failed
  // call leaves `data` as it was.
  void reduce_f32(float* data, size_t n);
  void reduce_u16(uint16_t* data, size_t n);  // bf16 / fp16 bit patterns (elem_bytes = 2)
  void reduce_raw(uint8_t* data, size_t n);   // n elements of elem_bytes, little-endian
  // The same from `in` into `out`. When the two do not overlap, each result is written straight
  // into `out` as it arrives (one copy, from the frame where the backend received it) and `in` is
  // only read (repair sends its vectors again; it must not change during the call): no staging
  // buffer, no copy of the input. A failed call leaves `in` untouched and `out` unspecified (some
  // vectors written). Overlapping buffers (out == in included) take the in-place path above.
  void reduce_f32(const float* in, float* out, size_t n);
  void reduce_u16(const uint16_t* in, uint16_t* out, size_t n);
  void reduce_raw(const uint8_t* in, uint8_t* out, size_t n);
  // Bytes of the staging buffer (allocated by the first in-place call, kept for the next): 0 while
  // every call was out-of-place.
  size_t staging_bytes() const { return out_buf_.size(); }

  // While *flag is true a call under way ends within kStopPoll with AllReduceStopped (a
  // worker's SIGTERM); nullptr (the default): calls end only by their own rules.
  void stop_on(const std::atomic<bool>* flag) { stop_ = flag; }
  static constexpr std::chrono::milliseconds kStopPoll{100};

  const Stats& stats() const { return stats_; }
  uint32_t next_vid(int tree) const { return next_vid_.at(static_cast<size_t>(tree)); }
  const Dctcp& window(int tree) const { return cc_.at(static_cast<size_t>(tree)); }
  const JobParams& params() const { return p_; }

 private:
  Transport& t_;
  JobParams p_;
  std::vector<uint32_t> next_vid_;
  std::vector<uint32_t> prev_span_;  // per tree: VIDs reserved by the previous call
  std::vector<Dctcp> cc_;
  StatusWait wait_;  // carries over across calls, like the windows
  Stats stats_;
  // Random per AllReduce: the COOKIE's upper half (with the call number), so that a switch
  // chip's result cache tells this worker's re-sent frame from another process's frame that
  // reuses the same VIDs (docs/host.md "Recall").
  uint32_t nonce_;
  const std::atomic<bool>* stop_ = nullptr;
  std::vector<uint8_t> out_buf_;  // an in-place call's results until it succeeds, kept across calls
};

}  // namespace panama::host
