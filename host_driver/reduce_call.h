// The state and steps of one all-reduce call (AllReduce::reduce_raw), private to the host library:
// the call's shape and element codec, the trees' slots and windows, status and repair rounds
// (docs/host.md "Repair"). Its methods are spread over reduce_call.cpp (set-up and waits),
// reduce_send.cpp (slots, windows, re-sends, repair plans), reduce_loop.cpp (the loop and its
// silences) and reduce_recv.cpp (frames received, the end of the call, debug output).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "allreduce.h"
#include "protocol.h"

namespace panama::host::detail {

enum class Kind { main, status, repair };

// PANAMA_HOST_DEBUG lines' time: milliseconds of the clock, modulo 10^7 (compared across workers).
inline long long debug_ms() {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
  return static_cast<long long>(ms % 10000000);
}

// PANAMA_HOST_DEBUG: one line per status part decided (read or given up), with the time.
inline void debug_status(int rank, size_t t, size_t r, size_t q, const char* what) {
  static const bool on = std::getenv("PANAMA_HOST_DEBUG") != nullptr;
  if (on) std::fprintf(stderr, "rank %d tree %zu round %zu part %zu %s at %lld\n", rank, t, r, q, what, debug_ms());
}

// Status waits a worker waits for a status part: more than a peer takes to leave a jammed round
// (kLeaveWaits, rule 6); with adaptive waits, room for peers whose waits differ by up to 2x.
constexpr int kStatusWaits = 5, kStatusWaitsAdaptive = 8;
// After status parts given up, the next is waited for longer (doubling, up to this many status
// waits; reset when a status part is read): a backoff, so that workers that drifted apart by a
// round meet again: the worker ahead waits longer at each status it gives up until the one
// behind arrives (its copies complete with the ones still queued in the accelerator); when every
// worker missed a status together, the next waits are longer for all.
constexpr int kStatusWaitsMax = 16;
// Re-sends of one status position (the first unsettled status part), a status wait apart. A
// re-send the switch chip's cache does not answer reaches the accelerator and holds buffer there
// until it is dropped as stale: repeating it every status wait (up to 9 frames per tree at a
// status part) overflowed the accelerator's buffer nine times as often at 15 % loss.
constexpr int kMaxResends = 2;
// Status waits in a row without any result of a tree, in a repair round, before the worker
// leaves the rest of the round (rule 6; with kLeaveOdds). kStatusWaits stays above it.
constexpr size_t kLeaveWaits = 4;
// In the main phase before its first result, a silent status wait allows one frame more (a
// probe), up to this many beyond the window: a worker whose every frame in the accelerator was
// consumed or dropped while its results were lost must keep sending, or its peers' frames wait
// for it for good.
constexpr size_t kProbeCap = 32;
// Once a main result came, and in a repair round once its status went out (read or given up),
// a silent status wait frees the whole window instead (rule 6): with probes only, one part of a
// job can stop while the rest goes on and overflows the accelerators, and then every worker
// waits for good.
// A worker leaves a round after kLeaveWaits silent waits *and* so many frames without a result
// that chance gives it once in kLeaveOdds rounds (n q (1 - q)^L for n slots and a result for a
// fraction q of the frames): silent waits alone end rounds by chance, at high loss always at
// about the same slot, and the vectors behind it are never repaired.
constexpr double kLeaveOdds = 100;

struct Slot {
  Kind kind = Kind::main;
  int round = 0;     // status / repair
  size_t index = 0;  // main: vector index within the tree; status: part q; repair: vector index
  bool lost = false;
  bool skipped = false;         // not sent (repair slot nobody needs, status part of a finished part)
  wire::Bytes payload;          // status parts: the payload as first sent (a re-send repeats it)
  Clock::time_point sent_at{};  // main and repair slots: when this worker sent it (round-trip samples)
};

// What round r's status says of one vector (TreeState::plan).
constexpr int kHeld = -2;   // every worker holds it: nothing to do
constexpr int kReagg = -1;  // some worker lacks it: re-aggregate

enum class Part : uint8_t { undecided, known, failed };

struct TreeState {
  size_t n = 0;                       // vectors of this call on the tree
  size_t ns = 0;                      // status parts per round
  size_t copies = 1;                  // VIDs per status part (each carries the same payload)
  size_t vp = 0;                      // vectors per status part
  size_t span = 0;                    // VIDs reserved for this call (main vectors and every round)
  size_t rounds = 0;                  // rounds laid out in slots so far (ReduceCall::add_round)
  std::vector<Slot> slots;            // the reserved VID range laid out so far, in VID order
  size_t sent = 0, settled = 0;       // slots handled (sent or skipped); settled prefix (results in VID order)
  std::vector<size_t> frames_before;  // frames_before[i]: frames actually sent at positions < i
  // Slots that no longer count in the window: a result for a later or equal VID came back
  // (they left the accelerator's queues), or a status wait went by without any result while
  // the peers are known to be in the same phase (kLeaveOdds).
  size_t acked = 0;
  size_t status_misses = 0;                       // status parts given up since one was last read
  size_t silent = 0;                              // status waits given up in a row without a result of this tree
  size_t probes = 0;                              // frames beyond the window (kProbeCap)
  bool heard_main = false;                        // a result of a main slot came
  size_t frames_at_result = 0;                    // frames_before[sent] when the last result came
  size_t results = 0;                             // first results of this tree's slots (kLeaveOdds)
  std::vector<std::vector<Part>> part;            // [round][part]
  std::vector<std::vector<uint8_t>> copies_lost;  // [round][part]: copies settled without a result
  std::vector<std::vector<int>> plan;             // [round][vector]: kHeld or kReagg
  std::vector<bool> status_started;               // [round]: its first status part went out
  std::vector<bool> part_done;                    // [part]: a status showed every vector held by all
  std::vector<bool> part_read;                    // [part]: some status of it was read (its holder bits known)
  size_t parts_done = 0;
  bool done = false;
  bool flushed = false;             // the tree's flush frames went out (ReduceCall::flush_tree)
  size_t held = 0;                  // vectors of this tree this worker holds
  Clock::time_point last_progress;  // last in-order result, or the last status wait
  Clock::time_point last_result;    // last in-order result
  size_t give_ups = 0;              // status waits that gave up on something (PANAMA_HOST_DEBUG)
  Clock::time_point last_resend{};  // the last re-send of the first unsettled status (JobParams::resend)
  size_t resent_pos = 0;            // the settled position the re-sends counted in `resends` were for
  int resends = 0;
  Clock::time_point last_heard;  // last result of any kind for this tree (in order or late)
  size_t inflight() const { return frames_before[sent] - frames_before[std::min(acked, sent)]; }
};

// The element format's encodings: repair tags and status words are numbers in it.
struct ElemCodec {
  ref::Fmt fmt;
  ref::FmtBits fb;
  size_t es;
  explicit ElemCodec(const JobParams& p)
      : fmt(p.format), fb(ref::fmt_bits(p.format)), es(static_cast<size_t>(p.elem_bytes)) {}
  uint32_t encode(double v) const {
    if (fmt == ref::Fmt::fp32) return ref::float_to_bits(static_cast<float>(v));
    return ref::double_to_half(v, fb, false);
  }
  double decode(uint32_t b) const {
    if (fmt == ref::Fmt::fp32) return ref::bits_to_float(b);
    if (fmt == ref::Fmt::bf16) return ref::bits_to_float(b << 16);
    return ref::half_to_double(b, fb, false);
  }
  uint32_t get(const uint8_t* p, size_t i) const {
    if (es == 4)
      return uint32_t{p[4 * i]} | uint32_t{p[4 * i + 1]} << 8 | uint32_t{p[4 * i + 2]} << 16 |
             uint32_t{p[4 * i + 3]} << 24;
    return uint32_t{p[2 * i]} | uint32_t{p[2 * i + 1]} << 8;
  }
  void put(uint8_t* p, size_t i, uint32_t v) const {
    for (size_t b = 0; b < es; ++b) p[es * i + b] = static_cast<uint8_t>(v >> (8 * b));
  }
};

// The numbers that fix one call's layout (docs/host.md), named as there.
struct CallShape {
  size_t n;     // elements
  size_t es;    // bytes per element
  size_t C;     // COUNT
  size_t T;     // trees
  size_t W;     // workers
  int R;        // repair rounds
  bool repair;  // R > 0
  size_t Cd;    // data elements per vector (repair slots add the tag)
  size_t K;     // vectors in this call; vector k goes to tree k % T
  size_t B;     // ranks per status element
  size_t G;     // status elements per vector
  CallShape(const JobParams& p, size_t elems)
      : n(elems),
        es(static_cast<size_t>(p.elem_bytes)),
        C(static_cast<size_t>(p.count)),
        T(static_cast<size_t>(p.trees)),
        W(static_cast<size_t>(p.world)),
        R(p.repair_rounds),
        repair(R != 0),
        Cd(repair ? C - 1 : C),
        K((n + Cd - 1) / Cd),
        B(p.format == ref::Fmt::fp32 ? 24 : static_cast<size_t>(ref::fmt_bits(p.format).frac_bits + 1)),
        G((W + B - 1) / B) {}
  size_t elems_of(size_t k) const { return std::min(Cd, n - k * Cd); }
  // Automatic rounds (JobParams::kRepairAuto): as many as fit the VID budget on the largest
  // tree, at least 64. Every worker computes the same number from the same call.
  void resolve_rounds(size_t status_vids_per_round) {
    if (R != JobParams::kRepairAuto) return;
    const size_t n0 = (K + T - 1) / T, per_round = status_vids_per_round + n0;
    const size_t budget = JobParams::kRepairVidBudget;
    R = static_cast<int>(std::min<size_t>(65535, std::max<size_t>(64, budget > n0 ? (budget - n0) / per_round : 0)));
  }
};

// One reduce_raw call: every tree's slot schedule, the results gathered so far, and one member
// function per phase of the loop (send what the windows allow, wait, take a result or act on
// silence). The AllReduce's VIDs, windows and statistics are updated in place.
class ReduceCall : CallShape {
 public:
  ReduceCall(Transport& t, const JobParams& p, std::vector<uint32_t>& next_vid, std::vector<uint32_t>& prev_span,
             std::vector<Dctcp>& cc, StatusWait& wait, Stats& stats, uint32_t nonce, const uint8_t* data, size_t n,
             const std::atomic<bool>* stop, uint8_t* out);
  // Runs the call to its end (throws AllReduceError); the sums are then in result().
  void run();
  const uint8_t* result() const { return out_; }

 private:
  enum class Action { wait, send, skip };
  void plan_tree(size_t t);
  bool add_round(size_t t);
  void init_spec();
  // Slot bookkeeping.
  void settle_lost(size_t t, size_t upto, uint32_t seen_vid);
  void settle_skipped(size_t t);
  void send_slot(size_t t);
  void build_slot(size_t t, size_t i);
  bool resend_due(size_t t) const;
  Clock::time_point resend_at(size_t t) const;
  void resend(size_t t, Clock::time_point now);
  void fill_status(size_t t, const Slot& sl);
  void fill_repair(size_t t, const Slot& sl);
  void skip_slot(size_t t);
  Action next_action(size_t t);
  bool part_held(size_t t, size_t q) const;  // this worker holds every vector of part q of tree t
  std::chrono::milliseconds tree_wait(size_t t) const;
  void take_vector(size_t k, const uint8_t* pay, size_t elems);
  void decode_part(size_t t, int round, size_t q, const uint8_t* pay, size_t cnt);
  void take_repair(size_t t, const Slot& sl, const uint8_t* pay);
  // The phases of the loop.
  bool all_done();
  void send_windows();
  Clock::time_point next_deadline() const;
  bool on_silence();  // true: the call is over
  bool give_up_stalled(Clock::time_point now);
  void on_silent_wait(size_t t);
  void take_frame(const uint8_t* rx, size_t len);
  size_t missing() const;
  [[noreturn]] void fail_timeout(size_t missing);
  void close_range();
  void flush_tree(size_t t);
  uint8_t flush_pay_[4] = {};  // a flush frame's one element (-0.0)
  void finish();
  void debug_trees() const;
  void debug_leave_round(size_t t) const;
  void debug_missing() const;

  Transport& t_;
  const JobParams& p_;
  std::vector<uint32_t>& next_vid_;
  std::vector<uint32_t>& prev_span_;  // per tree: VIDs the previous call reserved (ends at next_vid_)
  std::vector<Dctcp>& cc_;
  StatusWait& wait_;
  Stats& stats_;
  // COOKIE = cookie_hi_ | kind << 30 | slot: the same for a slot's re-send, different for
  // every other process and call (a switch's result cache answers only the same frame).
  const uint64_t cookie_hi_;
  const uint8_t* data_;
  const ElemCodec codec_;
  const uint32_t neg0_;
  // Where each vector's result is written when it first arrives (take_vector: one copy from the
  // received frame). An out-of-place call: the caller's output, which shares no byte with data_
  // (the input, which repair sends again). An in-place call: the AllReduce's staging buffer, kept
  // across calls (no allocation, no page faults per call), copied into the caller's buffer when
  // the call succeeded, so that the input stays intact for re-aggregation and a failed call
  // leaves the caller's buffer as it was. Every byte is written by a result before the call
  // succeeds.
  uint8_t* out_;
  std::vector<bool> have_;
  size_t held_ = 0;  // results held (count of true in have_)
  std::vector<TreeState> tr_;
  wire::FrameSpec spec_;
  // The frame being sent: spec_'s header fields around pay_len_ bytes at pay_ (the gradient
  // itself for a main slot), built in the backend's buffer from a template of the fixed fields
  // (emit()): one copy of the gradient, no allocation.
  wire::Bytes tmpl_;
  const uint8_t* pay_ = nullptr;
  size_t pay_len_ = 0;
  void emit();
  // The status wait (adaptive: StatusWait) and what derives from it: the call timeout is at
  // least 40 status waits with repair on, the silence after which a worker holding everything
  // leaves is 24 (at least 2, at most 3/4 of the timeout).
  std::chrono::milliseconds status_wait() const;
  std::chrono::milliseconds timeout() const;
  std::chrono::milliseconds silence() const;
  bool peer_missing(size_t t) const;
  std::chrono::milliseconds call_silence() const;  // the longest leave_after of the trees
  std::chrono::milliseconds leave_after(size_t t) const;
  Clock::time_point last_progress_;
  // The loop's clock: read once per iteration, after the wait for a frame (run()); what is sent
  // and received in that iteration is timed with it.
  Clock::time_point now_;
  Clock::time_point last_vector_;  // the last time a vector was newly held (or the call's start)
  std::chrono::milliseconds stall() const;
  [[noreturn]] void fail_stalled(size_t missing);
  const std::atomic<bool>* stop_;  // AllReduce::stop_on
};

}  // namespace panama::host::detail
