#include "allreduce.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace panama::host {

// ---------------------------------------------------------------------------------------------
// Dctcp

Dctcp::Dctcp(const WindowParams& p) : p_(p), cwnd_(p.init) { target_ = allowed(); }

int Dctcp::allowed() const { return std::max(1, static_cast<int>(std::floor(cwnd_))); }

void Dctcp::on_result(bool ce) {
  if (!p_.cc) return;
  ++seen_;
  if (ce) ++marked_;
  if (seen_ < target_) return;
  const double f = static_cast<double>(marked_) / seen_;
  alpha_ = (1 - p_.gain) * alpha_ + p_.gain * f;
  if (marked_ > 0)
    cwnd_ = std::max(p_.min, cwnd_ * (1 - alpha_ / 2));
  else
    cwnd_ = std::min(p_.max, cwnd_ + 1);
  ++windows_;
  seen_ = marked_ = 0;
  target_ = allowed();
}

// ---------------------------------------------------------------------------------------------
// JobParams

int JobParams::count_for(int mtu, int max_elems, int es) {
  if (es != 2 && es != 4) throw AllReduceError("element size must be 2 or 4 bytes");
  if (mtu < 50 + es) throw AllReduceError("MTU " + std::to_string(mtu) + " is too small for one element");
  if (max_elems < 1) throw AllReduceError("MAX_ELEMS must be at least 1");
  return std::min(max_elems, (mtu - 50) / es);
}

void JobParams::validate() const {
  auto bad = [](const std::string& s) { throw AllReduceError(s); };
  if (world < 1 || world > 0xFFFE) bad("world must be 1..65534");
  if (rank < 0 || rank >= world) bad("rank must be 0..world-1");
  if (trees < 1 || trees > 256) bad("trees must be 1..256");
  if (elem_bytes != 2 && elem_bytes != 4) bad("element size must be 2 or 4 bytes");
  if (count < 1 || count > 0xFFFF) bad("COUNT must be 1..65535");
  if (!(window.min >= 1) || !(window.init >= window.min) || !(window.max >= window.init) || window.max > 65536)
    bad("window: need 1 <= min <= init <= max <= 65536");
  if (!(window.gain > 0) || !(window.gain <= 1)) bad("ECN gain must be in (0, 1]");
  if (timeout_ms < 1) bad("timeout must be at least 1 ms");
  if (agg_port == 0) bad("aggregation port must be 1..65535");
  if (ecn > 3) bad("ECN must be 0..3");
  if (elem_bytes != (format == ref::Fmt::fp32 ? 4 : 2)) bad("element size does not match the format");
  if (repair_rounds < 0 || repair_rounds > 64) bad("repair rounds must be 0..64");
  if (repair_slots < 1 || repair_slots > 4096) bad("repair slots must be 1..4096");
  if (status_wait_ms < 1) bad("status wait must be at least 1 ms");
  if (repair_rounds > 0) {
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

AllReduce::AllReduce(Transport& t, const JobParams& p) : t_(t), p_(p) {
  p_.validate();
  next_vid_.assign(static_cast<size_t>(p_.trees), p_.first_vid);
  if (!p_.first_vids.empty()) next_vid_ = p_.first_vids;
  cc_.assign(static_cast<size_t>(p_.trees), Dctcp(p_.window));
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

constexpr size_t kMaxProbes = 2;

struct Slot {
  Kind kind = Kind::main;
  int round = 0;     // status / repair
  size_t index = 0;  // main: vector index within the tree; status: part q; repair: vector index
  bool lost = false;
  bool skipped = false;  // not sent (repair slot nobody needs, status part of a finished part)
  wire::Bytes payload;   // status parts: the built payload
};

// What round r's status says of one vector (TreeState::plan).
constexpr int kHeld = -2;   // every worker holds it: nothing to do
constexpr int kReagg = -1;  // nobody holds it: re-aggregate; >= 0: the lowest-rank holder forwards

enum class Part : uint8_t { undecided, known, failed };

struct TreeState {
  size_t n = 0;                       // vectors of this call on the tree
  size_t ns = 0;                      // status parts per round
  size_t vp = 0;                      // vectors per status part
  std::vector<Slot> slots;            // the reserved VID range, in VID order
  size_t sent = 0, settled = 0;       // slots handled (sent or skipped); settled prefix (results in VID order)
  std::vector<size_t> frames_before;  // frames_before[i]: frames actually sent at positions < i
  // Slots known to have left the accelerator's queues: a result for a later or equal VID came
  // back. Only these free window credit; a slot given up by the status wait may still sit in
  // the accelerator waiting for a slower peer, and sending more would overflow its buffer.
  size_t acked = 0;
  // One extra frame per status wait without any result (like a TCP retransmission timeout
  // sending one segment): if a peer's contribution at the head of the window was lost, the
  // peer's next frame makes the accelerator drop the incomplete vector and results flow again.
  size_t probes = 0;                    // at most kMaxProbes: a worker never runs further ahead than that
  std::vector<std::vector<Part>> part;  // [round][part]
  std::vector<std::vector<int>> plan;   // [round][vector]: kHeld, kReagg or a holder rank
  std::vector<bool> status_started;     // [round]: its first status part went out
  std::vector<bool> part_done;          // [part]: a status showed every vector held by all
  size_t parts_done = 0;
  bool done = false;
  size_t held = 0;                  // vectors of this tree this worker holds
  Clock::time_point last_progress;  // last in-order result, or the last status wait
  Clock::time_point last_result;    // last in-order result
  size_t inflight() const { return frames_before[sent] - frames_before[std::min(acked, sent)]; }
};

}  // namespace

void AllReduce::reduce_raw(uint8_t* data, size_t n) {
  const auto t0 = Clock::now();
  ++stats_.calls;
  if (n == 0) return;
  const size_t es = static_cast<size_t>(p_.elem_bytes);
  const size_t C = static_cast<size_t>(p_.count);
  const size_t T = static_cast<size_t>(p_.trees);
  const size_t W = static_cast<size_t>(p_.world);
  const int R = p_.repair_rounds;
  const bool repair = R > 0;
  const size_t Cd = repair ? C - 1 : C;  // data elements per vector (repair slots add the tag)
  const size_t K = (n + Cd - 1) / Cd;    // vectors in this call; vector k goes to tree k % T
  auto elems_of = [&](size_t k) { return std::min(Cd, n - k * Cd); };
  const ref::FmtBits fb = ref::fmt_bits(p_.format);
  const size_t B = p_.format == ref::Fmt::fp32 ? 24 : static_cast<size_t>(fb.frac_bits + 1);  // ranks per element
  const size_t G = (W + B - 1) / B;  // status elements per vector
  const uint32_t neg0 = ref::neg_zero(p_.format);
  auto encode = [&](double v) -> uint32_t {
    if (p_.format == ref::Fmt::fp32) return ref::float_to_bits(static_cast<float>(v));
    return ref::double_to_half(v, fb, false);
  };
  auto decode = [&](uint32_t b) -> double {
    if (p_.format == ref::Fmt::fp32) return ref::bits_to_float(b);
    if (p_.format == ref::Fmt::bf16) return ref::bits_to_float(b << 16);
    return ref::half_to_double(b, fb, false);
  };
  auto get_elem = [&](const uint8_t* p, size_t i) -> uint32_t {
    if (es == 4)
      return uint32_t{p[4 * i]} | uint32_t{p[4 * i + 1]} << 8 | uint32_t{p[4 * i + 2]} << 16 |
             uint32_t{p[4 * i + 3]} << 24;
    return uint32_t{p[2 * i]} | uint32_t{p[2 * i + 1]} << 8;
  };
  auto put_elem = [&](uint8_t* p, size_t i, uint32_t v) {
    for (size_t b = 0; b < es; ++b) p[es * i + b] = static_cast<uint8_t>(v >> (8 * b));
  };

  // Results go to a separate buffer until the call succeeds: the input stays intact for
  // re-aggregation, and a failed call leaves the caller's buffer as it was.
  std::vector<uint8_t> out(data, data + n * es);
  std::vector<bool> have(K, false);
  size_t held = 0;  // results held (count of true in have)
  std::vector<TreeState> tr(T);
  for (size_t t = 0; t < T; ++t) {
    TreeState& s = tr[t];
    s.n = t < K ? (K - t + T - 1) / T : 0;
    if (s.n == 0) {
      s.done = true;
      continue;
    }
    // Status part q carries the holder words of vectors [q vp, (q + 1) vp): every part can be
    // read on its own, so one lost part costs only its vectors a round.
    s.vp = repair ? std::max<size_t>(1, C / G) : 0;
    s.ns = repair ? (s.n + s.vp - 1) / s.vp : 0;
    for (size_t i = 0; i < s.n; ++i) s.slots.push_back(Slot{Kind::main, 0, i, false, false, {}});
    // Round r: ns status parts, then one repair slot per vector (slot j of the round is vector
    // j's, always: the slot's meaning never depends on what a worker received). Slots nobody
    // needs are not sent; the accelerator jumps over VIDs no member sent (rule 6).
    for (int r = 0; r < R; ++r) {
      for (size_t q = 0; q < s.ns; ++q) s.slots.push_back(Slot{Kind::status, r, q, false, false, {}});
      for (size_t j = 0; j < s.n; ++j) s.slots.push_back(Slot{Kind::repair, r, j, false, false, {}});
    }
    if (s.slots.size() >= 0x40000000u) throw AllReduceError("buffer too large for one call (VID space)");
    s.frames_before.assign(s.slots.size() + 1, 0);
    s.part.assign(static_cast<size_t>(R), std::vector<Part>(s.ns, Part::undecided));
    s.plan.assign(static_cast<size_t>(R), {});
    s.status_started.assign(static_cast<size_t>(R), false);
    s.part_done.assign(s.ns, false);
    s.last_progress = s.last_result = Clock::now();
  }

  wire::FrameSpec spec;
  spec.eth_dst = p_.eth_dst;
  spec.eth_src = p_.eth_src;
  spec.ip_src = p_.ip_src;
  spec.ip_dst = p_.ip_dst;
  spec.ecn = p_.ecn;
  spec.agg_port = p_.agg_port;
  spec.elem_bytes = p_.elem_bytes;
  spec.hdr.jid = p_.jid;
  spec.hdr.rank = static_cast<uint16_t>(p_.rank);

  // With repair on, a worker can legitimately hear nothing for a few (long) status waits while
  // it and its peers leave a jammed round; the call timeout (a dead peer) is kept above that.
  const auto timeout =
      std::chrono::milliseconds(repair ? std::max(p_.timeout_ms, 16 * p_.status_wait_ms) : p_.timeout_ms);
  const auto status_wait = std::chrono::milliseconds(p_.status_wait_ms);
  // How long a worker that holds every result waits in silence before it leaves (it may have
  // missed the final status): several status waits, since a peer still repairing can need a
  // few in a row, but well inside the peers' timeout, which starts at about the same time.
  // A peer that still misses a vector can spend several status waits getting out of a jammed
  // round (rule 6 of docs/host.md), so this is well above that but below the peer's timeout.
  const auto silence = std::max(2 * status_wait, std::min(timeout * 3 / 4, 12 * status_wait));
  auto last_progress = Clock::now();

  auto lost_error = [&](size_t t, uint32_t vid_lost, uint32_t vid_seen) {
    return AllReduceError("lost vector: job " + std::to_string(p_.jid) + " tree " + std::to_string(t) + " VID " +
                          std::to_string(vid_lost) + " has no result but VID " + std::to_string(vid_seen) +
                          " arrived (a contribution or this worker's result was lost); loss repair is off");
  };
  // Settles slots [s.settled, upto) as lost.
  auto settle_lost = [&](size_t t, size_t upto, uint32_t seen_vid) {
    TreeState& s = tr[t];
    for (; s.settled < upto; ++s.settled) {
      Slot& sl = s.slots[s.settled];
      sl.lost = true;
      stats_.unseen_vids.emplace_back(static_cast<uint32_t>(t), next_vid_[t] + static_cast<uint32_t>(s.settled));
      if (sl.kind == Kind::main) {
        if (!repair) throw lost_error(t, next_vid_[t] + static_cast<uint32_t>(s.settled), seen_vid);
        ++stats_.lost;
      } else if (sl.kind == Kind::status && !sl.skipped) {
        Part& pt = s.part[static_cast<size_t>(sl.round)][sl.index];
        if (pt == Part::undecided) pt = Part::failed;
      }
    }
  };
  // Skipped slots at the settled frontier settle at once (no result will come for them).
  auto settle_skipped = [&](size_t t) {
    TreeState& s = tr[t];
    while (s.settled < s.sent && s.slots[s.settled].skipped) {
      stats_.unseen_vids.emplace_back(static_cast<uint32_t>(t), next_vid_[t] + static_cast<uint32_t>(s.settled));
      s.slots[s.settled++].lost = true;
    }
  };
  // Builds and sends slot s.sent of tree t.
  auto send_slot = [&](size_t t) {
    TreeState& s = tr[t];
    const size_t i = s.sent;
    const Slot& sl = s.slots[i];
    spec.hdr.tid = static_cast<uint8_t>(t);
    spec.hdr.vid = next_vid_[t] + static_cast<uint32_t>(i);
    spec.hdr.flags = 0;
    spec.hdr.cookie = (stats_.calls << 40) | (static_cast<uint64_t>(sl.kind) << 32) | i;
    spec.ip_id = static_cast<uint16_t>(stats_.vectors_sent);
    if (sl.kind == Kind::main) {
      const size_t k = sl.index * T + t;
      if (sl.index + 1 == s.n) spec.hdr.flags = wire::kFlagFin;
      spec.payload.assign(data + k * Cd * es, data + (k * Cd + elems_of(k)) * es);
    } else if (sl.kind == Kind::status) {
      // This worker's holder bits for the part's vectors, as they are now.
      const size_t v0 = sl.index * s.vp, nv = std::min(s.vp, s.n - v0), cnt = nv * G;
      spec.payload.assign(cnt * es, 0);
      const size_t g_mine = static_cast<size_t>(p_.rank) / B;
      const uint32_t one_bit = encode(std::ldexp(1.0, static_cast<int>(static_cast<size_t>(p_.rank) % B)));
      for (size_t e = 0; e < cnt; ++e) {
        const size_t v = v0 + e / G, g = e % G;
        put_elem(spec.payload.data(), e, (g == g_mine && have[v * T + t]) ? one_bit : neg0);
      }
    } else {
      spec.payload.assign(C * es, 0);
      for (size_t e = 0; e < C; ++e) put_elem(spec.payload.data(), e, neg0);
      const auto& pl = s.plan[static_cast<size_t>(sl.round)];
      const int h = pl.empty() ? kHeld : pl[sl.index];
      const size_t k = sl.index * T + t, cnt = elems_of(k);
      if (h == kReagg) {  // nobody holds it: everyone sends its input again, tag 1
        std::memcpy(spec.payload.data(), data + k * Cd * es, cnt * es);
        put_elem(spec.payload.data(), C - 1, encode(1.0));
      } else if (h == p_.rank) {  // the designated holder forwards the sum, tag W
        std::memcpy(spec.payload.data(), out.data() + k * Cd * es, cnt * es);
        put_elem(spec.payload.data(), C - 1, encode(static_cast<double>(W)));
      }  // everybody else: -0.0 everywhere (x + -0 = x exactly), tag -0
    }
    t_.send(wire::build_frame(spec));
    s.frames_before[s.sent + 1] = s.frames_before[s.sent] + 1;
    ++s.sent;
    ++stats_.vectors_sent;
  };
  auto skip_slot = [&](size_t t) {
    TreeState& s = tr[t];
    s.slots[s.sent].skipped = true;
    s.frames_before[s.sent + 1] = s.frames_before[s.sent];
    ++s.sent;
    settle_skipped(t);
  };
  // What to do with slot s.sent now: 0 wait, 1 send, 2 skip.
  auto next_action = [&](size_t t) -> int {
    TreeState& s = tr[t];
    const Slot& sl = s.slots[s.sent];
    if (sl.kind == Kind::main) return 1;
    const size_t r = static_cast<size_t>(sl.round);
    if (sl.kind == Kind::status) {
      if (s.part_done[sl.index]) return 2;  // every worker held its vectors at an earlier status
      if (s.status_started[r]) return 1;
      if (s.settled != s.sent) return 0;  // the round's status waits until everything before it settled
      s.status_started[r] = true;
      return 1;
    }
    const size_t q = sl.index / s.vp;
    if (s.part[r][q] != Part::known && s.part_done[q]) return 2;  // its status part was not sent
    if (s.part[r][q] == Part::undecided) return 0;
    // Without the part's status this worker does not know which of its slots the others send:
    // it sends -0.0 (tag -0.0) to every one. Where the others send, the sum completes (invalid
    // for lack of this worker's tag) and their results keep flowing; where they do not, the
    // accelerator drops the lone frame as incomplete. Skipping instead would leave the others'
    // frames waiting for a contribution that never comes, and their windows jammed.
    if (s.part[r][q] == Part::failed) return 1;
    return s.plan[r][sl.index] == kHeld ? 2 : 1;
  };
  // Reads status part q of round r (its built payload), fills the round's plan for its vectors.
  auto decode_part = [&](size_t t, int round, size_t q, const uint8_t* pay, size_t cnt) {
    TreeState& s = tr[t];
    const size_t r = static_cast<size_t>(round);
    const size_t v0 = q * s.vp, nv = std::min(s.vp, s.n - v0);
    if (cnt != nv * G) return;
    std::vector<int> hold(nv);
    bool all = true;
    for (size_t v = 0; v < nv; ++v) {
      int holder = -1;
      size_t holders = 0;
      for (size_t g = 0; g < G; ++g) {
        const double x = decode(get_elem(pay, v * G + g));
        const size_t ranks_here = std::min(B, W - g * B);
        if (!(x >= 0) || x != std::floor(x) || x >= std::ldexp(1.0, static_cast<int>(ranks_here))) {
          if (s.part[r][q] == Part::undecided) s.part[r][q] = Part::failed;  // unreadable: as lost
          return;
        }
        const uint64_t m = static_cast<uint64_t>(x);
        for (size_t b = 0; b < ranks_here; ++b)
          if ((m >> b) & 1) {
            ++holders;
            if (holder < 0) holder = static_cast<int>(g * B + b);
          }
      }
      hold[v] = holders == W ? kHeld : holder;
      all &= holders == W;
    }
    if (s.plan[r].empty()) {
      s.plan[r].assign(s.n, kHeld);
      ++stats_.repair_rounds;
    }
    std::copy(hold.begin(), hold.end(), s.plan[r].begin() + static_cast<std::ptrdiff_t>(v0));
    s.part[r][q] = Part::known;
    if (all && !s.part_done[q]) {
      s.part_done[q] = true;
      if (++s.parts_done == s.ns) s.done = true;  // every worker holds every vector of this tree
    }
  };
  auto take_repair = [&](size_t t, const Slot& sl, const uint8_t* pay) {
    TreeState& s = tr[t];
    const auto& pl = s.plan[static_cast<size_t>(sl.round)];
    if (pl.empty() || pl[sl.index] == kHeld) return;                     // a slot this worker has no plan for
    if (decode(get_elem(pay, C - 1)) != static_cast<double>(W)) return;  // not every worker took part
    const size_t k = sl.index * T + t;
    if (!have[k]) {
      std::memcpy(out.data() + k * Cd * es, pay, elems_of(k) * es);
      have[k] = true;
      ++held;
      ++tr[k % T].held;
      ++stats_.repaired;
    }
  };

  // How long to wait for results before giving up on what is outstanding. A status part is
  // waited for longer than a peer takes to leave a jammed round (3 status waits, rule 6): a
  // worker that gave up on statuses sooner would run one round ahead of its peers for good,
  // leaving every round before they arrive.
  auto tree_wait = [&](size_t t) {
    const TreeState& s = tr[t];
    for (size_t i = s.settled; i < s.sent; ++i)
      if (s.slots[i].kind == Kind::status && !s.slots[i].skipped) return 4 * status_wait;
    return std::chrono::duration_cast<std::chrono::milliseconds>(status_wait);
  };
  wire::Bytes rx;
  for (;;) {
    // Trees that have used their whole range end here.
    bool all_done = true;
    for (size_t t = 0; t < T; ++t) {
      TreeState& s = tr[t];
      if (!s.done && s.sent == s.slots.size() && s.settled == s.slots.size()) s.done = true;
      all_done &= s.done;
    }
    if (all_done) break;
    // Send what the windows and the schedule allow.
    for (size_t t = 0; t < T; ++t) {
      TreeState& s = tr[t];
      while (!s.done && s.sent < s.slots.size()) {
        const int a = next_action(t);
        if (a == 0) break;
        if (a == 2) {
          skip_slot(t);
          continue;
        }
        // Status parts are outside the window (a few frames per round): a worker that sent -0.0
        // into slots the others skipped gets those acknowledged only by the next status's
        // result, so the status must be able to go out with the window full.
        if (s.slots[s.sent].kind != Kind::status && s.inflight() >= static_cast<size_t>(cc_[t].allowed()) + s.probes)
          break;
        send_slot(t);
      }
    }
    // The next deadline: the call's timeout while a main stream is open, else the status wait.
    Clock::time_point deadline = last_progress + timeout;
    if (repair && held == K) deadline = std::min(deadline, last_progress + silence);
    for (size_t t = 0; t < T; ++t) {
      const TreeState& s = tr[t];
      if (!s.done && repair && (s.inflight() > 0 || s.settled < s.sent))
        deadline = std::min(deadline, s.last_progress + tree_wait(t));
      if (!s.done && repair && s.held == s.n) deadline = std::min(deadline, s.last_result + silence);
    }
    if (!t_.recv(rx, deadline)) {
      const auto now = Clock::now();
      // Holding every result and hearing nothing more: done. The data is exact, and a peer
      // still repairing would be producing results with this worker's frames (it needs every
      // member for every slot). Typically this worker missed the final status.
      if (repair && held == K && now - last_progress >= silence) break;
      bool moved = false;
      for (size_t t = 0; t < T; ++t) {
        TreeState& s = tr[t];
        // The same for one tree: its peers that saw the final status have left it, so what
        // this worker still sends there would never complete.
        if (!s.done && repair && s.held == s.n && now - s.last_result >= silence) {
          s.done = true;
          moved = true;
          continue;
        }
        if (s.done || !repair || (s.inflight() == 0 && s.settled == s.sent) || now - s.last_progress < tree_wait(t))
          continue;
        // Nothing for a while: what was sent counts as lost (late results are still taken);
        // go on with the schedule, the repair rounds pick it up.
        settle_lost(t, s.sent, 0);
        if (s.inflight() > 0) s.probes = std::min<size_t>(s.probes + 1, kMaxProbes);
        // A window still full after the probes, in a repair phase: this worker's frames went
        // into VIDs the others have left behind (they gave up on this round and moved on), and
        // no result will ever acknowledge them. Leave the rest of the round; the next status
        // (outside the window) meets the others, and its result acknowledges everything.
        if (s.inflight() >= static_cast<size_t>(cc_[t].allowed()) + kMaxProbes)
          while (s.sent < s.slots.size() && s.slots[s.sent].kind == Kind::repair) skip_slot(t);
        s.last_progress = now;
        moved = true;
      }
      if (moved) continue;
      if (now < last_progress + timeout) continue;
      size_t missing = 0;
      for (size_t k = 0; k < K; ++k) missing += !have[k];
      // Holding every result, a worker that hears nothing more is done: its data is exact, and
      // a peer still missing something would have completed the round's status with it.
      if (repair && missing == 0) break;
      size_t t = 0;
      for (size_t u = 0; u < T; ++u)
        if (!tr[u].done && (tr[t].done || tr[u].settled < tr[t].settled)) t = u;
      if (std::getenv("PANAMA_HOST_DEBUG"))
        for (size_t u = 0; u < T; ++u) {
          const TreeState& z = tr[u];
          const Slot* nx = z.sent < z.slots.size() ? &z.slots[z.sent] : nullptr;
          std::fprintf(stderr,
                       "rank %d tree %zu: n %zu sent %zu settled %zu acked %zu inflight %zu probes %zu held %zu done "
                       "%d next kind %d round %d index %zu cwnd %d\n",
                       p_.rank, u, z.n, z.sent, z.settled, z.acked, z.inflight(), z.probes, z.held, z.done,
                       nx ? static_cast<int>(nx->kind) : -1, nx ? nx->round : -1, nx ? nx->index : 0, cc_[u].allowed());
        }
      throw AllReduceError("timeout: no result for job " + std::to_string(p_.jid) + " tree " + std::to_string(t) +
                           " VID " + std::to_string(next_vid_[t] + tr[t].settled) + " within " +
                           std::to_string(timeout.count()) + " ms (" + std::to_string(missing) + " of " +
                           std::to_string(K) + " vectors missing): a peer is not contributing or the path is down");
    }
    // Accept only final sums of this job for a slot of this call.
    if (rx.size() < wire::kHeaderBytes) {
      ++stats_.ignored;
      continue;
    }
    const wire::AggHeader h = wire::parse_header(rx);
    if (h.ver != 1 || !h.result() || h.jid != p_.jid || h.tid >= T || tr[h.tid].n == 0) {
      ++stats_.ignored;
      continue;
    }
    const size_t t = h.tid;
    TreeState& s = tr[t];
    const uint32_t i = wire::vid_distance(h.vid, next_vid_[t]);
    if (i >= s.sent) {  // an earlier call's result, or one for a slot we have not sent: not ours
      ++stats_.ignored;
      continue;
    }
    Slot& sl = s.slots[i];
    if (sl.skipped) {  // this worker sent nothing there, so no sum can be ours
      ++stats_.ignored;
      continue;
    }
    size_t want;
    if (sl.kind == Kind::main)
      want = elems_of(sl.index * T + t);
    else if (sl.kind == Kind::status)
      want = std::min(s.vp, s.n - sl.index * s.vp) * G;
    else
      want = C;
    if (h.count != want || rx.size() != wire::kHeaderBytes + es * h.count) {
      ++stats_.ignored;
      continue;
    }
    const uint8_t* pay = rx.data() + wire::kHeaderBytes;
    if (i + 1 > s.acked) {
      s.acked = i + 1;
      s.probes = 0;
    }
    const bool late = i < s.settled;
    if (late && !sl.lost) {
      ++stats_.duplicates;
      continue;
    }
    if (!late) {
      if (i > s.settled) settle_lost(t, i, h.vid);
      s.settled = i + 1;
      settle_skipped(t);
      s.last_progress = s.last_result = last_progress = Clock::now();
      const bool ce = wire::ecn(rx) == wire::kEcnCe;
      if (ce) ++stats_.results_ce, stats_.ce_vids.emplace_back(static_cast<uint32_t>(t), h.vid);
      cc_[t].on_result(ce);
    }
    // A late result (given up on by the status wait, or overtaken by reordering) is as good as
    // an in-order one: its slot's meaning is fixed.
    sl.lost = false;
    ++stats_.results;
    if (sl.kind == Kind::main) {
      const size_t k = sl.index * T + t;
      if (!have[k]) {
        std::memcpy(out.data() + k * Cd * es, pay, es * h.count);
        have[k] = true;
        ++held;
        ++tr[k % T].held;
      }
    } else if (sl.kind == Kind::status) {
      const Part pt = s.part[static_cast<size_t>(sl.round)][sl.index];
      if (pt != Part::known) decode_part(t, sl.round, sl.index, pay, h.count);
    } else {
      take_repair(t, sl, pay);
    }
  }
  for (size_t t = 0; t < T; ++t) next_vid_[t] += static_cast<uint32_t>(tr[t].slots.size());
  size_t missing = 0;
  for (size_t k = 0; k < K; ++k) missing += !have[k];
  if (missing && std::getenv("PANAMA_HOST_DEBUG"))
    for (size_t k = 0; k < K; ++k)
      if (!have[k]) {
        const size_t t = k % T, j = k / T;
        const TreeState& z = tr[t];
        std::fprintf(stderr, "rank %d missing k %zu tree %zu j %zu part %zu:", p_.rank, k, t, j, j / z.vp);
        for (int r = 0; r < R; ++r) {
          const size_t pos = z.n + static_cast<size_t>(r) * (z.ns + z.n) + z.ns + j;
          std::fprintf(stderr, " r%d[part %d plan %d slot sent %d skipped %d lost %d]", r,
                       static_cast<int>(z.part[static_cast<size_t>(r)][j / z.vp]),
                       z.plan[static_cast<size_t>(r)].empty() ? -9 : z.plan[static_cast<size_t>(r)][j], pos < z.sent,
                       z.slots[pos].skipped, z.slots[pos].lost);
        }
        std::fprintf(stderr, "\n");
      }
  if (missing)
    throw AllReduceError("loss repair failed: " + std::to_string(missing) + " of " + std::to_string(K) +
                         " vectors still missing after " + std::to_string(R) +
                         " repair rounds (a peer stopped answering or the loss is too heavy)");
  std::memcpy(data, out.data(), n * es);
  stats_.bytes_reduced += n * es;
  stats_.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace panama::host
