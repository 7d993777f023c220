// ReduceCall: set-up, the call's waits and timeouts, the trees' VID plans (reduce_call.h).
#include "reduce_call.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>

namespace panama::host::detail {

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
  last_progress_ = last_vector_ = now_ = Clock::now();
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
// together but below the peer's timeout.
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

}  // namespace panama::host::detail
