#include "allreduce.h"
#include "protocol.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace panama::host {

// ---------------------------------------------------------------------------------------------
// JobParams

int JobParams::count_for(int mtu, int max_elems, int es) {
  if (es != 2 && es != 4) throw AllReduceError("element size must be 2 or 4 bytes");
  if (mtu < proto::kIpHeaderBudget + es)
    throw AllReduceError("MTU " + std::to_string(mtu) + " is too small for one element");
  if (max_elems < 1) throw AllReduceError("MAX_ELEMS must be at least 1");
  return std::min(max_elems, (mtu - proto::kIpHeaderBudget) / es);
}

void JobParams::validate() const {
  auto bad = [](const std::string& s) { throw AllReduceError(s); };
  if (world < 1 || world > 0xFFFE) bad("world must be 1..65534");
  if (rank < 0 || rank >= world) bad("rank must be 0..world-1");
  if (trees < 1 || trees > 256) bad("trees must be 1..256");
  if (first_tid < 0 || first_tid + trees > 256) bad("first TID + trees must be at most 256");
  if (elem_bytes != 2 && elem_bytes != 4) bad("element size must be 2 or 4 bytes");
  if (count < 1 || count > 0xFFFF) bad("COUNT must be 1..65535");
  if (!(window.min >= 1) || !(window.init >= window.min) || !(window.max >= window.init) || window.max > 65536)
    bad("window: need 1 <= min <= init <= max <= 65536");
  if (!(window.gain > 0) || !(window.gain <= 1)) bad("ECN gain must be in (0, 1]");
  if (timeout_ms < 1) bad("timeout must be at least 1 ms");
  if (agg_port == 0) bad("aggregation port must be 1..65535");
  if (ecn > 3) bad("ECN must be 0..3");
  if (elem_bytes != (format == ref::Fmt::fp32 ? 4 : 2)) bad("element size does not match the format");
  if (repair_rounds < kRepairAuto || repair_rounds > 65535) bad("repair rounds must be auto (-1) or 0..65535");
  if (repair_stall_ms < 0) bad("repair stall time must be >= 0 ms (0: automatic)");
  if (repair_slots < 1 || repair_slots > 4096) bad("repair slots must be 1..4096");
  if (status_wait_ms < 1) bad("status wait must be at least 1 ms");
  if (status_copies < 1 || status_copies > 4) bad("status copies must be 1..4");
  if (repair_rounds != 0) {
    if (count < 2) bad("loss repair needs COUNT >= 2 (one element carries the repair tag)");
    // The repair tag (a count of workers) must be exact in the format.
    if (format == ref::Fmt::bf16 && world > 256) bad("loss repair with bf16 supports at most 256 workers");
    if (format == ref::Fmt::fp16 && world > 2048) bad("loss repair with fp16 supports at most 2048 workers");
  }
  if (!first_vids.empty() && static_cast<int>(first_vids.size()) != trees)
    bad("first VIDs: " + std::to_string(first_vids.size()) + " given for " + std::to_string(trees) + " trees");
}

// ---------------------------------------------------------------------------------------------
// AllReduce

StatusWait::StatusWait(double floor_ms, double cap_ms) : floor_(floor_ms), cap_(std::max(floor_ms, cap_ms)) {}

void StatusWait::sample(double r) {
  if (samples_++ == 0) {
    srtt_ = r;
    rttvar_ = r / 2;
    return;
  }
  rttvar_ += (std::fabs(srtt_ - r) - rttvar_) / 4;
  srtt_ += (r - srtt_) / 8;
}

double StatusWait::wait_ms() const {
  if (samples_ == 0) return floor_;
  return std::min(cap_, std::max(floor_, srtt_ + 4 * rttvar_));
}

AllReduce::AllReduce(Transport& t, const JobParams& p)
    : t_(t), p_(p), wait_(p.status_wait_ms, p.timeout_ms / 2.0), nonce_(std::random_device{}()) {
  p_.validate();
  next_vid_.assign(static_cast<size_t>(p_.trees), p_.first_vid);
  if (!p_.first_vids.empty()) next_vid_ = p_.first_vids;
  cc_.assign(static_cast<size_t>(p_.trees), Dctcp(p_.window));
  prev_span_.assign(static_cast<size_t>(p_.trees), 0);
}

void AllReduce::reduce_f32(float* data, size_t n) {
  if (p_.elem_bytes != 4) throw AllReduceError("reduce_f32 needs elem_bytes = 4");
  reduce_raw(reinterpret_cast<uint8_t*>(data), n);  // x86-64: floats are little-endian
}

void AllReduce::reduce_u16(uint16_t* data, size_t n) {
  if (p_.elem_bytes != 2) throw AllReduceError("reduce_u16 needs elem_bytes = 2");
  reduce_raw(reinterpret_cast<uint8_t*>(data), n);
}

namespace {

enum class Kind { main, status, repair };

// PANAMA_HOST_DEBUG lines' time: milliseconds of the clock, modulo 10^7 (compared across workers).
long long debug_ms() {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
  return static_cast<long long>(ms % 10000000);
}

// PANAMA_HOST_DEBUG: one line per status part decided (read or given up), with the time.
void debug_status(int rank, size_t t, size_t r, size_t q, const char* what) {
  static const bool on = std::getenv("PANAMA_HOST_DEBUG") != nullptr;
  if (on) std::fprintf(stderr, "rank %d tree %zu round %zu part %zu %s at %lld\n", rank, t, r, q, what, debug_ms());
}

// Status waits a worker waits for a status part: more than a peer takes to leave a jammed round
// (kLeaveWaits, rule 6); with adaptive waits, room for peers whose waits differ by up to 2x.
constexpr int kStatusWaits = 5, kStatusWaitsAdaptive = 8;
// After status parts given up, the next is waited for longer (doubling, up to this many status
// waits; reset when a status part is read): a backoff, so that workers that drifted apart by a
// round meet again (2026-11-28). At 20 % loss on two levels the workers of a job drifted up to
// eleven rounds apart: a worker behind (its round's slots taking longer) reached each status
// after its peers had given it up, and all went from round to round at the same pace of status
// waits, never meeting. Now the worker ahead waits longer at each status it gives up, until the
// one behind arrives (its copies complete with the ones still queued in the accelerator); when
// every worker missed a status together (all its copies lost), the next waits are longer for all.
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
// for it for good (seen at 10 % loss: every worker stuck at one VID of a tree with its probes
// used up).
constexpr size_t kProbeCap = 32;
// Once a main result came, and in a repair round once its status went out (read or given up),
// a silent status wait frees the whole window instead (rule 6). With probes only, at 20 % loss
// on two levels (a result reaches a worker for one slot in six, 0.8^8) one leaf's workers
// missed a run of results and stopped a window and 32 probes past their last one while the
// other leaf's went on; the accelerators overflowed with the leading leaf's frames and every
// worker of the job waited for good (no result at all for 6.4 s, in the main phase).
// A worker leaves a round after kLeaveWaits silent waits *and* so many frames without a result
// that chance gives it once in kLeaveOdds rounds (n q (1 - q)^L for n slots and a result for a
// fraction q of the frames). Until 2026-11-28 four silent waits with the window full were
// enough: at one result in six a window of 6 frames is silent one time in three, so every round
// ended by chance at about the same slot and the vectors behind it were never repaired. (Two
// were enough before that: at 15 % loss on one level workers left nearly every round after its
// first few dozen slots, 190 rounds for 2 MiB.)
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
  // Results go to a separate buffer until the call succeeds: the input stays intact for
  // re-aggregation, and a failed call leaves the caller's buffer as it was.
  // The AllReduce's buffer, kept across calls (no allocation, no page faults per call); every
  // byte is written by a result before the call succeeds.
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
  Clock::time_point last_vector_;  // the last time a vector was newly held (or the call's start)
  std::chrono::milliseconds stall() const;
  [[noreturn]] void fail_stalled(size_t missing);
  const std::atomic<bool>* stop_;  // AllReduce::stop_on
};

ReduceCall::ReduceCall(Transport& t, const JobParams& p, std::vector<uint32_t>& next_vid,
                       std::vector<uint32_t>& prev_span, std::vector<Dctcp>& cc, StatusWait& wait, Stats& stats,
                       uint32_t nonce, const uint8_t* data, size_t n, const std::atomic<bool>* stop, uint8_t* out)
    : CallShape(p, n),
      t_(t),
      p_(p),
      next_vid_(next_vid),
      prev_span_(prev_span),
      cc_(cc),
      wait_(wait),
      stats_(stats),
      cookie_hi_(static_cast<uint64_t>(nonce + static_cast<uint32_t>(stats.calls) * 0x9E3779B9u) << 32),
      data_(data),
      codec_(p),
      neg0_(ref::neg_zero(p.format)),
      out_(out),
      have_(K, false),
      tr_(T),
      stop_(stop) {
  if (repair) {
    const size_t n0 = (K + T - 1) / T, vp = std::max<size_t>(1, C / G);
    resolve_rounds(((n0 + vp - 1) / vp) * static_cast<size_t>(p.status_copies));
  }
  for (size_t t = 0; t < T; ++t) plan_tree(t);
  init_spec();
  last_progress_ = last_vector_ = Clock::now();
}

std::chrono::milliseconds ReduceCall::status_wait() const {
  if (!p_.adaptive_wait) return std::chrono::milliseconds(p_.status_wait_ms);
  return std::chrono::milliseconds(static_cast<long>(std::ceil(wait_.wait_ms())));
}

// With repair on, a worker can legitimately hear nothing for a few (long) status waits while
// it and its peers leave a jammed round; the call timeout (a dead peer) is kept above that.
std::chrono::milliseconds ReduceCall::timeout() const {
  const std::chrono::milliseconds t(p_.timeout_ms);
  return repair ? std::max(t, 40 * status_wait()) : t;
}

// How long a worker that holds every result waits in silence before it leaves (it may have
// missed the final status): several status waits, since a peer still repairing can need a
// few in a row, but well inside the peers' timeout, which starts at about the same time.
// A peer that still misses a vector can spend several status waits getting out of a jammed
// round (rule 6 of docs/host.md) and up to kStatusWaitsMax at a status, so this is above both
// together but below the peer's timeout. (12 until 2026-11-28, with status waits of at most 5.)
std::chrono::milliseconds ReduceCall::silence() const {
  const auto w = status_wait();
  return std::max(2 * w, std::min(timeout() * 3 / 4, 24 * w));
}

// A status this worker read shows a peer still missing a vector of tree t (a part read and not
// shown done since): the peer needs this worker's frames for every repair it gets.
bool ReduceCall::peer_missing(size_t t) const {
  const TreeState& s = tr_[t];
  for (size_t q = 0; q < s.ns; ++q)
    if (s.part_read[q] && !s.part_done[q]) return true;
  return false;
}

std::chrono::milliseconds ReduceCall::call_silence() const {
  auto d = silence();
  for (size_t t = 0; t < T; ++t) d = std::max(d, leave_after(t));
  return d;
}

// How long a worker that holds every vector of tree t goes without hearing any result of it
// (in order or late: a late one is a peer behind completing a slot with this worker's queued
// frame) before it leaves the tree. While a status it read shows a peer still missing a vector,
// 3/4 of the call timeout (30 status waits by default; below the peers' timeout for the next
// call, in case this worker missed the final status): with repair, the peer's every frame
// needs it, and a longer --timeout-ms keeps it longer (statuses lost several times in a row
// are silence too, at high loss).
std::chrono::milliseconds ReduceCall::leave_after(size_t t) const {
  if (!peer_missing(t)) return silence();
  return std::max(silence(), timeout() * 3 / 4);
}

// How long a call with repair on may go without a newly completed vector while some are missing
// before it fails: a bound on a repair that no longer converges, not on its rounds.
std::chrono::milliseconds ReduceCall::stall() const {
  if (p_.repair_stall_ms > 0) return std::chrono::milliseconds(p_.repair_stall_ms);
  return std::max(4 * timeout(), 128 * status_wait());
}

// Lays out tree t's reserved VID range: its main vectors; the repair rounds follow lazily.
void ReduceCall::plan_tree(size_t t) {
  TreeState& s = tr_[t];
  s.n = t < K ? (K - t + T - 1) / T : 0;
  if (s.n == 0) {
    s.done = true;
    return;
  }
  // Status part q carries the holder words of vectors [q vp, (q + 1) vp): every part can be
  // read on its own, so one lost part costs only its vectors a round.
  s.vp = repair ? std::max<size_t>(1, C / G) : 0;
  s.ns = repair ? (s.n + s.vp - 1) / s.vp : 0;
  s.copies = static_cast<size_t>(p_.status_copies);
  // The reserved range: the main vectors, then R rounds of ns status parts (each in `copies`
  // VIDs) and one repair slot per vector. Its size is fixed before the call starts, so every
  // worker's next call starts at the same VID; rounds are laid out (add_round) only when the
  // schedule reaches them, and the accelerator jumps over the VIDs nobody sent (rule 6).
  const uint64_t span = s.n + static_cast<uint64_t>(std::max(R, 0)) * (s.ns * s.copies + s.n);
  if (span >= 0x40000000u) throw AllReduceError("buffer too large for one call (VID space)");
  s.span = static_cast<size_t>(span);
  for (size_t i = 0; i < s.n; ++i) s.slots.push_back(Slot{Kind::main, 0, i, false, false, {}});
  s.frames_before.assign(s.slots.size() + 1, 0);
  s.part_done.assign(s.ns, false);
  s.part_read.assign(s.ns, false);
  s.last_progress = s.last_result = s.last_heard = Clock::now();
}

// Lays out tree t's next round: ns status parts, then one repair slot per vector (slot j of the
// round is vector j's, always: the slot's meaning never depends on what a worker received).
// Slots nobody needs are not sent.
bool ReduceCall::add_round(size_t t) {
  TreeState& s = tr_[t];
  if (!repair || s.rounds >= static_cast<size_t>(R)) return false;
  const int r = static_cast<int>(s.rounds++);
  for (size_t q = 0; q < s.ns; ++q)
    for (size_t c = 0; c < s.copies; ++c) s.slots.push_back(Slot{Kind::status, r, q, false, false, {}});
  for (size_t j = 0; j < s.n; ++j) s.slots.push_back(Slot{Kind::repair, r, j, false, false, {}});
  s.frames_before.resize(s.slots.size() + 1, s.frames_before.back());
  s.part.emplace_back(s.ns, Part::undecided);
  s.copies_lost.emplace_back(s.ns, 0);
  s.plan.emplace_back();
  s.status_started.push_back(false);
  return true;
}

void ReduceCall::init_spec() {
  spec_.eth_dst = p_.eth_dst;
  spec_.eth_src = p_.eth_src;
  spec_.ip_src = p_.ip_src;
  spec_.ip_dst = p_.ip_dst;
  spec_.ecn = p_.ecn;
  spec_.agg_port = p_.agg_port;
  spec_.elem_bytes = p_.elem_bytes;
  spec_.hdr.jid = p_.jid;
  spec_.hdr.rank = static_cast<uint16_t>(p_.rank);
  spec_.payload.clear();
  tmpl_ = wire::build_frame(spec_);
}

void ReduceCall::emit() {
  namespace off = wire::off;
  const size_t len = wire::kHeaderBytes + pay_len_;
  uint8_t* f = t_.tx_begin(len);
  std::memcpy(f, tmpl_.data(), wire::kHeaderBytes);
  wire::put16(f + off::ip_total_len, static_cast<uint16_t>(len - off::ip));
  wire::put16(f + off::ip + 4, spec_.ip_id);
  wire::put16(f + off::ip_csum, wire::ipv4_checksum(f + off::ip));
  wire::put16(f + off::udp_len, static_cast<uint16_t>(len - off::udp));
  f[off::flags] = spec_.hdr.flags;
  f[off::tid] = spec_.hdr.tid;
  wire::put16(f + off::count, static_cast<uint16_t>(pay_len_ / es));
  wire::put32(f + off::vid, spec_.hdr.vid);
  wire::put64(f + off::cookie, spec_.hdr.cookie);
  if (pay_len_) std::memcpy(f + off::payload, pay_, pay_len_);
  t_.tx_end(len);
}

// ---------------------------------------------------------------------------------------------
// Slot bookkeeping

// Settles slots [s.settled, upto) as lost.
void ReduceCall::settle_lost(size_t t, size_t upto, uint32_t seen_vid) {
  TreeState& s = tr_[t];
  for (; s.settled < upto; ++s.settled) {
    Slot& sl = s.slots[s.settled];
    const uint32_t vid = next_vid_[t] + static_cast<uint32_t>(s.settled);
    sl.lost = true;
    stats_.note(stats_.unseen_vids, t, vid);
    if (sl.kind == Kind::main) {
      if (!repair)
        throw AllReduceError("lost vector: job " + std::to_string(p_.jid) + " tree " + std::to_string(t) + " VID " +
                             std::to_string(vid) + " has no result but VID " + std::to_string(seen_vid) +
                             " arrived (a contribution or this worker's result was lost); loss repair is off");
      ++stats_.lost;
    } else if (sl.kind == Kind::status && !sl.skipped) {
      // The part is failed only when every copy went without a result.
      const size_t r = static_cast<size_t>(sl.round);
      Part& pt = s.part[r][sl.index];
      if (++s.copies_lost[r][sl.index] >= s.copies && pt == Part::undecided) {
        pt = Part::failed;
        ++s.status_misses;
        debug_status(p_.rank, t, r, sl.index, "given up");
      }
    }
  }
}

// Skipped slots at the settled frontier settle at once (no result will come for them).
void ReduceCall::settle_skipped(size_t t) {
  TreeState& s = tr_[t];
  while (s.settled < s.sent && s.slots[s.settled].skipped) {
    stats_.note(stats_.unseen_vids, t, next_vid_[t] + static_cast<uint32_t>(s.settled));
    s.slots[s.settled++].lost = true;
  }
}

// Fills spec_ with slot i of tree t.
void ReduceCall::build_slot(size_t t, size_t i) {
  TreeState& s = tr_[t];
  Slot& sl = s.slots[i];
  spec_.hdr.tid = static_cast<uint8_t>(p_.first_tid + static_cast<int>(t));
  spec_.hdr.vid = next_vid_[t] + static_cast<uint32_t>(i);
  spec_.hdr.flags = 0;
  spec_.hdr.cookie = cookie_hi_ | (static_cast<uint64_t>(sl.kind) << 30) | i;
  spec_.ip_id = static_cast<uint16_t>(stats_.vectors_sent + stats_.resent);
  if (sl.kind == Kind::main) {
    const size_t k = sl.index * T + t;
    if (sl.index + 1 == s.n) spec_.hdr.flags = wire::kFlagFin;
    pay_ = data_ + k * Cd * es;
    pay_len_ = elems_of(k) * es;
    return;
  }
  if (sl.kind == Kind::status) {
    if (sl.payload.empty()) {
      fill_status(t, sl);
      sl.payload = spec_.payload;
    }
    pay_ = sl.payload.data();
    pay_len_ = sl.payload.size();
    return;
  }
  fill_repair(t, sl);
  pay_ = spec_.payload.data();
  pay_len_ = spec_.payload.size();
}

// Builds and sends slot s.sent of tree t.
void ReduceCall::send_slot(size_t t) {
  TreeState& s = tr_[t];
  const size_t i = s.sent;
  build_slot(t, i);
  emit();
  if (s.slots[i].kind != Kind::status) s.slots[i].sent_at = Clock::now();
  s.frames_before[s.sent + 1] = s.frames_before[s.sent] + 1;
  ++s.sent;
  ++stats_.vectors_sent;
}

// A tree silent for a status wait whose first unsettled slot is a status part not re-sent yet.
// Only status parts are asked for again: a worker that misses a status its peers received falls
// out of step with them (docs/host.md), while a lost main or repair result only costs a repair
// round; and every re-sent frame takes buffer in the accelerator when it misses the cache
// (re-sending every kind of slot measured no better and overflowed the accelerator's buffer more).
bool ReduceCall::resend_due(size_t t) const {
  const TreeState& s = tr_[t];
  return p_.resend && repair && !s.done && s.settled < s.sent && s.slots[s.settled].kind == Kind::status &&
         (s.resent_pos != s.settled || s.resends < kMaxResends);
}

// When the next re-send of tree t is due: one status wait after the tree's last progress or its
// last re-send, whichever is later. Re-sends repeat while the tree waits at the status (every
// status wait, at most `copies` frames each time, kMaxResends times): one asking answered from
// the cache that is lost again on the way back, or a re-sent contribution lost on the way in,
// no longer leaves the worker a round behind its peers.
Clock::time_point ReduceCall::resend_at(size_t t) const {
  const TreeState& s = tr_[t];
  return std::max(s.last_progress, s.last_resend) + status_wait();
}

// Sends the first unsettled status slots again, once each: up to `copies` of them, so that a
// status part whose copies all went without a result is asked for again whole. The same frames:
// same VID, same COOKIE, the payload of the first sending. A re-sent slot is no round-trip
// sample (Karn).
void ReduceCall::resend(size_t t, Clock::time_point now) {
  TreeState& s = tr_[t];
  size_t n = 0;
  for (size_t i = s.settled; i < s.sent && n < s.copies && s.slots[i].kind == Kind::status; ++i) {
    if (s.slots[i].skipped) continue;
    build_slot(t, i);
    emit();
    s.slots[i].sent_at = Clock::time_point{};
    ++stats_.resent;
    ++n;
  }
  s.last_resend = now;
  if (s.resent_pos != s.settled) s.resent_pos = s.settled, s.resends = 0;
  ++s.resends;
}

// A status part's payload: this worker's holder bits for the part's vectors, as they are now.
void ReduceCall::fill_status(size_t t, const Slot& sl) {
  const TreeState& s = tr_[t];
  const size_t v0 = sl.index * s.vp, nv = std::min(s.vp, s.n - v0), cnt = nv * G;
  spec_.payload.assign(cnt * es, 0);
  const size_t g_mine = static_cast<size_t>(p_.rank) / B;
  const uint32_t one_bit = codec_.encode(std::ldexp(1.0, static_cast<int>(static_cast<size_t>(p_.rank) % B)));
  for (size_t e = 0; e < cnt; ++e) {
    const size_t v = v0 + e / G, g = e % G;
    codec_.put(spec_.payload.data(), e, (g == g_mine && have_[v * T + t]) ? one_bit : neg0_);
  }
}

// A repair slot's payload: the worker's input again and tag 1 (re-aggregation), the same for
// every worker that sends the slot. A worker without the part's status sends it too (it sends
// every slot of the part it does not skip, next_action): the others' plan for a slot they send
// is always re-aggregation, so the slot completes valid with it.
void ReduceCall::fill_repair(size_t t, const Slot& sl) {
  spec_.payload.assign(C * es, 0);
  for (size_t e = 0; e < C; ++e) codec_.put(spec_.payload.data(), e, neg0_);
  const size_t k = sl.index * T + t, cnt = elems_of(k);
  std::memcpy(spec_.payload.data(), data_ + k * Cd * es, cnt * es);
  codec_.put(spec_.payload.data(), C - 1, codec_.encode(1.0));
}

void ReduceCall::skip_slot(size_t t) {
  TreeState& s = tr_[t];
  s.slots[s.sent].skipped = true;
  s.frames_before[s.sent + 1] = s.frames_before[s.sent];
  ++s.sent;
  settle_skipped(t);
}

bool ReduceCall::part_held(size_t t, size_t q) const {
  const TreeState& s = tr_[t];
  const size_t v0 = q * s.vp, v1 = std::min(s.n, v0 + s.vp);
  for (size_t v = v0; v < v1; ++v)
    if (!have_[v * T + t]) return false;
  return true;
}

// What to do with slot s.sent now.
ReduceCall::Action ReduceCall::next_action(size_t t) {
  TreeState& s = tr_[t];
  const Slot& sl = s.slots[s.sent];
  if (sl.kind == Kind::main) return Action::send;
  const size_t r = static_cast<size_t>(sl.round);
  if (sl.kind == Kind::status) {
    // A part known done (every worker held its vectors at an earlier status) still has its
    // status sent while the tree runs: a peer that missed that status result waits for this
    // round's (4 status waits per part and round) and, with it, learns the part is done. Not
    // sending it left such peers a round behind for good on two levels at 10 % loss (the
    // accelerators above then dropped their every frame as incomplete).
    if (s.status_started[r]) return Action::send;
    if (s.settled != s.sent) return Action::wait;  // the round's status waits until everything before it settled
    s.status_started[r] = true;
    return Action::send;
  }
  const size_t q = sl.index / s.vp;
  if (s.part[r][q] != Part::known && s.part_done[q]) return Action::skip;  // its status part was not sent
  if (s.part[r][q] == Part::undecided) return Action::wait;
  // Without the part's status this worker does not know which of its slots the others send:
  // it sends every one, re-aggregating (fill_repair). Where the others send, their plan is
  // re-aggregation too and the slot completes valid; where they do not, the accelerator drops
  // the lone frame as incomplete. Skipping instead would leave the others' frames waiting for a
  // contribution that never comes, and their windows jammed. (Until 2026-11-28 the plan could
  // forward a holder's sum, so such a worker sent -0.0 fillers, which completed a forward
  // valid but a re-aggregation invalid: at 20 % loss on two levels a round's status reached a
  // worker in about half the rounds, and the other half repaired almost nothing.)
  //
  // Except when this worker holds every vector of the part and no status it read showed a peer
  // missing one of them: then its peers most likely saw the part done (every vector held by
  // all: they send nothing more for it, and 362 lone frames only jammed this worker's window
  // until it left the round, every round, taking the slots its peers needed further on with
  // it: the 16 MiB failures of docs/host.md). Skipping is safe: a peer's frame for such a slot
  // is dropped as incomplete as soon as this worker's next frame, at a later VID, reaches the
  // accelerator. A holder that read a status showing a peer missing a vector of the part sends
  // (until 2026-11-28 it skipped as well: at 15 % loss on two levels, peers that lost every
  // status for a while sent the part's slots round after round while the one worker holding it
  // all skipped them, so nothing completed, and it left the tree by silence while they still
  // needed it).
  if (s.part[r][q] == Part::failed)
    return part_held(t, q) && !(s.part_read[q] && !s.part_done[q]) ? Action::skip : Action::send;
  return s.plan[r][sl.index] == kHeld ? Action::skip : Action::send;
}

// How long to wait for results before giving up on what is outstanding. A status part is
// waited for longer than a peer takes to leave a jammed round (3 status waits, rule 6): a
// worker that gave up on statuses sooner would run one round ahead of its peers for good,
// leaving every round before they arrive.
std::chrono::milliseconds ReduceCall::tree_wait(size_t t) const {
  const TreeState& s = tr_[t];
  for (size_t i = s.settled; i < s.sent; ++i)
    if (s.slots[i].kind == Kind::status && !s.slots[i].skipped)
      return std::min(kStatusWaitsMax, (p_.adaptive_wait ? kStatusWaitsAdaptive : kStatusWaits)
                                           << std::min<size_t>(s.status_misses, 2)) *
             status_wait();
  return status_wait();
}

// Keeps the sum of vector k (the first time it arrives).
void ReduceCall::take_vector(size_t k, const uint8_t* pay, size_t elems) {
  if (have_[k]) return;
  std::memcpy(out_ + k * Cd * es, pay, elems * es);
  have_[k] = true;
  ++held_;
  last_vector_ = last_progress_;  // take_frame's time of this result
  ++tr_[k % T].held;
}

// Reads status part q of round r (its built payload), fills the round's plan for its vectors.
void ReduceCall::decode_part(size_t t, int round, size_t q, const uint8_t* pay, size_t cnt) {
  TreeState& s = tr_[t];
  const size_t r = static_cast<size_t>(round);
  const size_t v0 = q * s.vp, nv = std::min(s.vp, s.n - v0);
  if (cnt != nv * G) return;
  std::vector<int> hold(nv);
  bool all = true;
  for (size_t v = 0; v < nv; ++v) {
    size_t holders = 0;
    for (size_t g = 0; g < G; ++g) {
      const double x = codec_.decode(codec_.get(pay, v * G + g));
      const size_t ranks_here = std::min(B, W - g * B);
      if (!(x >= 0) || x != std::floor(x) || x >= std::ldexp(1.0, static_cast<int>(ranks_here))) {
        if (s.part[r][q] == Part::undecided) s.part[r][q] = Part::failed;  // unreadable: as lost
        return;
      }
      const uint64_t m = static_cast<uint64_t>(x);
      for (size_t b = 0; b < ranks_here; ++b) holders += (m >> b) & 1;
    }
    hold[v] = holders == W ? kHeld : kReagg;
    all &= holders == W;
  }
  if (s.plan[r].empty()) {
    s.plan[r].assign(s.n, kHeld);
    ++stats_.repair_rounds;
  }
  std::copy(hold.begin(), hold.end(), s.plan[r].begin() + static_cast<std::ptrdiff_t>(v0));
  if (s.part[r][q] != Part::known) debug_status(p_.rank, t, r, q, "read");
  s.status_misses = 0;
  s.part[r][q] = Part::known;
  s.part_read[q] = true;
  if (all && !s.part_done[q]) {
    s.part_done[q] = true;
    if (++s.parts_done == s.ns) s.done = true;  // every worker holds every vector of this tree
  }
}

// A slot's tag sums to W only when every worker re-aggregated (W x 1; a worker that sent
// nothing leaves the slot incomplete, and the accelerator drops it). So a result with tag W is
// vector j's exact sum, the same tree-order sum as the lost one (same ports, same order). The
// check still guards against a peer with another plan (the forward of earlier versions: the
// holder's sum with tag W, the others -0.0 with tag -0.0; a mix gives k + W).
void ReduceCall::take_repair(size_t t, const Slot& sl, const uint8_t* pay) {
  if (codec_.decode(codec_.get(pay, C - 1)) != static_cast<double>(W)) return;  // not every worker took part
  const size_t k = sl.index * T + t;
  if (!have_[k]) ++stats_.repaired;
  take_vector(k, pay, elems_of(k));
}

// ---------------------------------------------------------------------------------------------
// The loop

void ReduceCall::run() {
  const uint8_t* rx = nullptr;
  size_t rx_len = 0;
  while (!all_done()) {
    if (stop_ && stop_->load()) {
      close_range();
      throw AllReduceStopped("stopped on request with " + std::to_string(missing()) + " of " + std::to_string(K) +
                             " vectors missing");
    }
    if (repair && held_ < K && Clock::now() - last_vector_ >= stall()) fail_stalled(missing());
    send_windows();
    // With a stop flag the wait is cut into slices of kStopPoll; a slice that ends before the
    // deadline is no silence.
    const auto deadline = next_deadline();
    const auto wake = stop_ ? std::min(deadline, Clock::now() + AllReduce::kStopPoll) : deadline;
    if (t_.recv_view(rx, rx_len, wake))
      take_frame(rx, rx_len);
    else if (Clock::now() >= deadline && on_silence())
      break;
  }
  finish();
}

// Trees that have used their whole range end here.
bool ReduceCall::all_done() {
  bool all = true;
  for (size_t t = 0; t < T; ++t) {
    TreeState& s = tr_[t];
    if (!s.done && s.sent == s.slots.size() && s.settled == s.slots.size() && !add_round(t)) s.done = true;
    all &= s.done;
  }
  return all;
}

// Sends what the windows and the schedule allow.
void ReduceCall::send_windows() {
  for (size_t t = 0; t < T; ++t) {
    TreeState& s = tr_[t];
    if (s.done && !s.flushed) flush_tree(t);
    while (!s.done && (s.sent < s.slots.size() || add_round(t))) {
      const Action a = next_action(t);
      if (a == Action::wait) break;
      if (a == Action::skip) {
        skip_slot(t);
        continue;
      }
      // Status parts are not held back by the window: a round's first part goes out only once
      // everything before it settled (next_action), so what the window still counts then are
      // frames given up on, and a worker whose window was full of them (fillers, or repair
      // frames whose results were lost) sent the next part's copies only one probe per silent
      // status wait: on two levels at 10 % loss the workers of one leaf sat at one round's
      // status and those of the other at the next round's, neither able to send the part the
      // other waited at, until the call timed out. Status frames meet the peers (a status
      // result acknowledges everything before it); only their number is bounded: two parts'
      // copies unsettled at a time (a 16 MiB tensor has 17 parts per tree and round, and
      // sending them all at once, 51 full-size frames with 3 copies, overflowed the
      // accelerator's buffer, losing the last parts' statuses in almost every round).
      if (s.slots[s.sent].kind == Kind::status) {
        if (s.frames_before[s.sent] - s.frames_before[s.settled] >= 2 * s.copies) break;
      } else if (s.inflight() >= static_cast<size_t>(cc_[t].allowed()) + s.probes) {
        break;
      }
      send_slot(t);
    }
  }
}

// The call's timeout while a main stream is open, else the status wait.
Clock::time_point ReduceCall::next_deadline() const {
  Clock::time_point deadline = last_progress_ + timeout();
  if (repair && held_ == K) deadline = std::min(deadline, last_progress_ + call_silence());
  if (repair && held_ < K) deadline = std::min(deadline, last_vector_ + stall());
  for (size_t t = 0; t < T; ++t) {
    const TreeState& s = tr_[t];
    if (!s.done && repair && (s.inflight() > 0 || s.settled < s.sent))
      deadline = std::min(deadline, s.last_progress + tree_wait(t));
    if (resend_due(t)) deadline = std::min(deadline, resend_at(t));
    if (!s.done && repair && s.held == s.n) deadline = std::min(deadline, s.last_heard + leave_after(t));
  }
  return deadline;
}

// Nothing arrived before the deadline.
bool ReduceCall::on_silence() {
  const auto now = Clock::now();
  // Holding every result and hearing nothing more: done. The data is exact, and a peer
  // still repairing would be producing results with this worker's frames (it needs every
  // member for every slot). Typically this worker missed the final status.
  if (repair && held_ == K && now - last_progress_ >= call_silence()) return true;
  if (give_up_stalled(now)) return false;
  if (now < last_progress_ + timeout()) return false;
  const size_t miss = missing();
  // Holding every result, a worker that hears nothing more is done: its data is exact, and
  // a peer still missing something would have completed the round's status with it.
  if (repair && miss == 0) return true;
  fail_timeout(miss);
}

// With repair on, moves every tree that waited long enough past what it waits for. True when
// any tree moved.
bool ReduceCall::give_up_stalled(Clock::time_point now) {
  bool moved = false;
  for (size_t t = 0; t < T; ++t) {
    TreeState& s = tr_[t];
    // The same for one tree: its peers that saw the final status have left it, so what
    // this worker still sends there would never complete.
    if (!s.done && repair && s.held == s.n && now - s.last_heard >= leave_after(t)) {
      s.done = true;
      moved = true;
      continue;
    }
    // One status wait of silence: ask again for the first outstanding results (a switch chip
    // with a result cache answers at once when this worker's copy was lost).
    if (resend_due(t) && now >= resend_at(t)) {
      resend(t, now);
      moved = true;
    }
    if (s.done || !repair || (s.inflight() == 0 && s.settled == s.sent) || now - s.last_progress < tree_wait(t))
      continue;
    // Nothing for a while: what was sent counts as lost (late results are still taken);
    // go on with the schedule, the repair rounds pick it up.
    settle_lost(t, s.sent, 0);
    ++s.give_ups;
    on_silent_wait(t);
    s.last_progress = now;
    moved = true;
  }
  return moved;
}

// A status wait of tree t went by without any result while frames were out (rule 6): frees the
// window or sends a probe, and leaves a jammed round.
void ReduceCall::on_silent_wait(size_t t) {
  TreeState& s = tr_[t];
  const Slot& last = s.slots[s.sent - 1];  // give_up_stalled: frames were out
  // The window is freed once the peers are taken to send the same phase: in a round once its
  // status went out (read or given up: a status lost for everyone leaves everyone without it,
  // and they all re-aggregate every slot, rule 5; a given-up status's own copies never hold the
  // window, they are bounded by their own number in send_windows); in the main phase once a
  // main result came. Before that, probes.
  if (last.kind != Kind::main || s.heard_main) {
    // If a peer's contribution at the head of the window was lost, this worker's next frames
    // make the accelerator drop the incomplete vector and results flow again; if its own
    // results were lost, its frames have left the accelerator anyway.
    s.acked = s.sent;
    s.probes = 0;
  } else if (s.inflight() > 0) {
    s.probes = std::min(s.probes + 1, kProbeCap);
  }
  // Only silence among a round's repair slots counts towards leaving it: not at a status part
  // (nor the silence before one, for the round it opens), not in the main phase.
  if (last.kind != Kind::repair || s.sent == s.slots.size() || s.slots[s.sent].kind != Kind::repair) {
    s.silent = 0;
    return;
  }
  // Frames without a result that chance explains once in kLeaveOdds rounds, at this tree's
  // rate of results so far.
  const double q =
      std::clamp(static_cast<double>(s.results) / std::max<size_t>(1, s.frames_before[s.sent]), 0.01, 0.99);
  const double rare = std::ceil(std::log(std::max(2.0, static_cast<double>(s.n) * q * kLeaveOdds)) / -std::log1p(-q));
  const size_t since = s.frames_before[s.sent] - s.frames_at_result;
  if (++s.silent >= kLeaveWaits && since >= std::min(rare, 4096.0)) {
    // This worker's frames went into VIDs the others have left behind (they gave up on this
    // round and moved on), and no result will ever acknowledge them. Leave the rest of the
    // round; the next status (outside the window) meets the others, and its result
    // acknowledges everything.
    if (std::getenv("PANAMA_HOST_DEBUG")) debug_leave_round(t);
    while (s.sent < s.slots.size() && s.slots[s.sent].kind == Kind::repair) skip_slot(t);
  }
}

// Accepts only final sums of this job for a slot of this call.
void ReduceCall::take_frame(const uint8_t* rx, size_t len) {
  if (len < wire::kHeaderBytes) {
    ++stats_.ignored;
    return;
  }
  const wire::AggHeader h = wire::parse_header(rx);
  const size_t t = static_cast<size_t>(h.tid) - static_cast<size_t>(p_.first_tid);  // wraps when below
  if (h.ver != 1 || !h.result() || h.jid != p_.jid || t >= T || tr_[t].n == 0) {
    ++stats_.ignored;
    return;
  }
  TreeState& s = tr_[t];
  const uint32_t i = wire::vid_distance(h.vid, next_vid_[t]);
  // i >= s.sent: an earlier call's result, or one for a slot we have not sent: not ours.
  // A skipped slot: this worker sent nothing there, so no sum can be ours.
  if (i >= s.sent || s.slots[i].skipped) {
    // The sum of the flush frames (flush_tree), of this call or of the previous one: expected,
    // and of no use.
    if (repair &&
        ((i >= s.span - s.copies && i < s.span) || (next_vid_[t] - h.vid >= 1 && next_vid_[t] - h.vid <= s.copies)))
      return;
    // The previous call's range: a result that came after that call ended (typically the
    // second copy of the status that showed every vector held).
    const uint32_t back = next_vid_[t] - h.vid;
    if (i >= s.sent && back >= 1 && back <= prev_span_[t])
      ++stats_.leftovers;
    else
      ++stats_.ignored;
    return;
  }
  Slot& sl = s.slots[i];
  size_t want = C;
  if (sl.kind == Kind::main)
    want = elems_of(sl.index * T + t);
  else if (sl.kind == Kind::status)
    want = std::min(s.vp, s.n - sl.index * s.vp) * G;
  if (h.count != want || len != wire::kHeaderBytes + es * h.count) {
    ++stats_.ignored;
    return;
  }
  const uint8_t* pay = rx + wire::kHeaderBytes;
  if (i + 1 > s.acked) {
    s.acked = i + 1;
    s.probes = 0;
  }
  const bool late = i < s.settled;
  if (late && !sl.lost) {
    ++stats_.duplicates;
    return;
  }
  // Any first result is progress for the call timeout (results still come); an in-order one
  // also for its tree.
  const auto now = Clock::now();
  last_progress_ = s.last_heard = now;
  s.silent = 0;
  s.frames_at_result = s.frames_before[s.sent];
  ++s.results;
  if (sl.kind == Kind::main) s.heard_main = true;  // the peers are known to send the main phase
  // A late result while this tree waits at a status part: a slot before it completed just now,
  // so peers are still sending the slots before the status (they are behind, not gone). The
  // status wait starts again: giving up the status now would put this worker a round ahead of
  // them, and on two levels at 10 % loss workers then leapfrogged one another round after round
  // (each waiting at a status the others had already left) until the call timed out.
  // Only a result of the round just before the status (or of the main phase before the first
  // one) says so: a late first result of an older slot (a peer's re-send answered from a cache,
  // passed down to every member of its leaf) kept resetting the wait, and at 15 % loss on two
  // levels a worker then sat at one status for the whole stall bound.
  if (late && s.settled < s.sent && s.slots[s.settled].kind == Kind::status &&
      (sl.kind == Kind::main ? s.slots[s.settled].round == 0 : sl.round + 1 >= s.slots[s.settled].round))
    s.last_progress = now;
  if (!late) {
    if (i > s.settled) settle_lost(t, i, h.vid);
    s.settled = i + 1;
    settle_skipped(t);
    s.last_progress = s.last_result = now;
    const bool ce = wire::ecn(rx) == wire::kEcnCe;
    if (ce) ++stats_.results_ce, stats_.note(stats_.ce_vids, t, h.vid);
    cc_[t].on_result(ce);
  }
  // A late result (given up on by the status wait, or overtaken by reordering) is as good as
  // an in-order one: its slot's meaning is fixed. Like every first result of a main or repair
  // slot, it is a round-trip sample: a switch slower than the status wait makes every result
  // late, and the wait must grow.
  if (sl.sent_at != Clock::time_point{})
    wait_.sample(std::chrono::duration<double, std::milli>(now - sl.sent_at).count());
  sl.lost = false;
  ++stats_.results;
  if (sl.kind == Kind::main) {
    take_vector(sl.index * T + t, pay, h.count);
  } else if (sl.kind == Kind::status) {
    const Part pt = s.part[static_cast<size_t>(sl.round)][sl.index];
    if (pt != Part::known) decode_part(t, sl.round, sl.index, pay, h.count);
  } else {
    take_repair(t, sl, pay);
  }
}

size_t ReduceCall::missing() const {
  size_t m = 0;
  for (size_t k = 0; k < K; ++k) m += !have_[k];
  return m;
}

// PANAMA_HOST_DEBUG: what fills tree t's window when the worker leaves a round: unacknowledged
// frames by kind, and blind ones (repair frames sent without the part's status).
void ReduceCall::debug_leave_round(size_t t) const {
  const TreeState& s = tr_[t];
  size_t st = 0, rep = 0, blind = 0, mainf = 0;
  for (size_t i = std::min(s.acked, s.sent); i < s.sent; ++i) {
    const Slot& z = s.slots[i];
    if (z.skipped) continue;
    if (z.kind == Kind::status) {
      ++st;
    } else if (z.kind == Kind::main) {
      ++mainf;
    } else {
      ++rep;
      if (s.part[static_cast<size_t>(z.round)][z.index / s.vp] != Part::known) ++blind;
    }
  }
  const Slot& nx = s.slots[std::min(s.sent, s.slots.size() - 1)];
  std::fprintf(stderr,
               "rank %d tree %zu leaves round %d at index %zu: inflight %zu (status %zu, repair %zu of which "
               "blind %zu, main %zu) allowed %d silent %zu acked %zu settled %zu sent %zu at %lld\n",
               p_.rank, t, nx.round, nx.index, s.inflight(), st, rep, blind, mainf, cc_[t].allowed(), s.silent, s.acked,
               s.settled, s.sent, debug_ms());
}

void ReduceCall::fail_timeout(size_t miss) {
  // The tree that is furthest behind.
  size_t t = 0;
  for (size_t u = 0; u < T; ++u)
    if (!tr_[u].done && (tr_[t].done || tr_[u].settled < tr_[t].settled)) t = u;
  if (std::getenv("PANAMA_HOST_DEBUG")) debug_trees();
  throw AllReduceError("timeout: no result for job " + std::to_string(p_.jid) + " tree " + std::to_string(t) + " VID " +
                       std::to_string(next_vid_[t] + tr_[t].settled) + " within " + std::to_string(timeout().count()) +
                       " ms (" + std::to_string(miss) + " of " + std::to_string(K) +
                       " vectors missing): a peer is not contributing or the path is down");
}

void ReduceCall::fail_stalled(size_t miss) {
  if (std::getenv("PANAMA_HOST_DEBUG")) debug_missing(), debug_trees();
  close_range();
  const auto secs = std::chrono::duration_cast<std::chrono::milliseconds>(stall()).count() / 1000.0;
  char b[64];
  std::snprintf(b, sizeof b, "%.1f", secs);
  throw AllReduceError("loss repair failed: " + std::to_string(miss) + " of " + std::to_string(K) +
                       " vectors still missing and none completed in the last " + b +
                       " s (a peer stopped answering or the loss is too heavy)");
}

// When this worker leaves tree t (done, by a status or by silence, or at the call's end), it
// sends `copies` one-element frames of -0.0 into the last VIDs of the tree's reserved range,
// which no slot of a call ever reaches (the region holds 2^24 VIDs per call; a tree that used
// its range up to there sends none). Every worker sends them when it leaves, so the
// accelerator sees a head from every member at the end of the range, drops as incomplete every
// frame still queued before it, and sums the flush (its result is dropped here). Without them,
// frames a worker sent into slots its peers had skipped stayed queued after the tree ended
// (the peers send nothing more on it), held the contribution buffer's shared pool of that
// port for the rest of the call, and the other tree's frames overflowed there round after
// round: at 10 % loss, every worker missed the same vector for 25.6 s and the call failed.
void ReduceCall::flush_tree(size_t t) {
  TreeState& s = tr_[t];
  if (s.flushed || !repair || s.n == 0) return;
  s.flushed = true;
  if (s.span < s.copies || s.span - s.copies < s.sent) return;
  codec_.put(flush_pay_, 0, neg0_);
  spec_.hdr.tid = static_cast<uint8_t>(p_.first_tid + static_cast<int>(t));
  spec_.hdr.flags = 0;
  pay_ = flush_pay_;
  pay_len_ = es;
  for (size_t i = s.span - s.copies; i < s.span; ++i) {
    spec_.hdr.vid = next_vid_[t] + static_cast<uint32_t>(i);
    spec_.hdr.cookie = cookie_hi_ | (uint64_t{3} << 30) | i;
    spec_.ip_id = static_cast<uint16_t>(stats_.vectors_sent + stats_.resent);
    emit();
  }
}

// The call's range is used up whatever happened: the next call starts after it.
void ReduceCall::close_range() {
  for (size_t t = 0; t < T; ++t) flush_tree(t);
  t_.flush();  // whatever the backend still holds leaves now, not at the next call
  for (size_t t = 0; t < T; ++t) {
    prev_span_[t] = static_cast<uint32_t>(tr_[t].span);
    next_vid_[t] += prev_span_[t];
  }
}

// A vector still missing fails the call.
void ReduceCall::finish() {
  close_range();
  const size_t miss = missing();
  if (miss == 0) return;
  if (std::getenv("PANAMA_HOST_DEBUG")) debug_missing();
  throw AllReduceError("loss repair failed: " + std::to_string(miss) + " of " + std::to_string(K) +
                       " vectors still missing after all " + std::to_string(R) +
                       " reserved repair rounds (a peer stopped answering or the loss is too heavy)");
}

long long ms_since(Clock::time_point t) {
  return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
}

// PANAMA_HOST_DEBUG: every tree's progress, when the call times out.
void ReduceCall::debug_trees() const {
  std::fprintf(
      stderr, "rank %d gives up at t=%lld ms\n", p_.rank,
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count() % 1000000));
  for (size_t u = 0; u < T; ++u) {
    const TreeState& z = tr_[u];
    const Slot* nx = z.sent < z.slots.size() ? &z.slots[z.sent] : nullptr;
    std::fprintf(stderr,
                 "rank %d tree %zu: n %zu sent %zu settled %zu acked %zu inflight %zu silent %zu held %zu done "
                 "%d next kind %d round %d index %zu cwnd %d give_ups %zu since_progress %lld ms since_result %lld ms "
                 "since_call_progress %lld ms\n",
                 p_.rank, u, z.n, z.sent, z.settled, z.acked, z.inflight(), z.silent, z.held, z.done,
                 nx ? static_cast<int>(nx->kind) : -1, nx ? nx->round : -1, nx ? nx->index : 0, cc_[u].allowed(),
                 z.give_ups, ms_since(z.last_progress), ms_since(z.last_result), ms_since(last_progress_));
  }
}

// PANAMA_HOST_DEBUG: the repair history of every vector still missing at the end.
void ReduceCall::debug_missing() const {
  for (size_t k = 0; k < K; ++k) {
    if (have_[k]) continue;
    const size_t t = k % T, j = k / T;
    const TreeState& z = tr_[t];
    std::fprintf(stderr, "rank %d missing k %zu tree %zu j %zu part %zu:", p_.rank, k, t, j, j / z.vp);
    for (int r = 0; r < static_cast<int>(z.rounds); ++r) {
      const size_t pos = z.n + static_cast<size_t>(r) * (z.ns * z.copies + z.n) + z.ns * z.copies + j;
      std::fprintf(stderr, " r%d[part %d plan %d slot sent %d skipped %d lost %d]", r,
                   static_cast<int>(z.part[static_cast<size_t>(r)][j / z.vp]),
                   z.plan[static_cast<size_t>(r)].empty() ? -9 : z.plan[static_cast<size_t>(r)][j], pos < z.sent,
                   z.slots[pos].skipped, z.slots[pos].lost);
    }
    std::fprintf(stderr, "\n");
  }
}

}  // namespace

void AllReduce::reduce_raw(uint8_t* data, size_t n) {
  const auto t0 = Clock::now();
  ++stats_.calls;
  if (n == 0) return;
  const size_t bytes = n * static_cast<size_t>(p_.elem_bytes);
  if (out_buf_.size() < bytes) out_buf_.resize(bytes);
  ReduceCall call(t_, p_, next_vid_, prev_span_, cc_, wait_, stats_, nonce_, data, n, stop_, out_buf_.data());
  const auto note_wait = [this] {
    stats_.status_wait_ms = p_.adaptive_wait ? wait_.wait_ms() : p_.status_wait_ms;
    stats_.srtt_ms = wait_.srtt_ms();
    stats_.rtt_samples = wait_.samples();
  };
  try {
    call.run();
  } catch (...) {
    note_wait();
    throw;
  }
  note_wait();
  std::memcpy(data, call.result(), bytes);
  stats_.bytes_reduced += bytes;
  stats_.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace panama::host
