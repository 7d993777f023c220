// ReduceCall: slots, windows and re-sends, status and repair plans (reduce_call.h).
#include "reduce_call.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>

namespace panama::host::detail {

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
  if (s.slots[i].kind != Kind::status) s.slots[i].sent_at = now_;
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
  // contribution that never comes, and their windows jammed. (-0.0 fillers would complete a
  // forward, never a re-aggregation: the plan is re-aggregation only.)
  //
  // Except when this worker holds every vector of the part and no status it read showed a peer
  // missing one of them: then its peers most likely saw the part done (every vector held by
  // all: they send nothing more for it, and 362 lone frames only jammed this worker's window
  // until it left the round, every round, taking the slots its peers needed further on with
  // it: the 16 MiB failures of docs/host.md). Skipping is safe: a peer's frame for such a slot
  // is dropped as incomplete as soon as this worker's next frame, at a later VID, reaches the
  // accelerator. A holder that read a status showing a peer missing a vector of the part sends:
  // its peers' every frame of the part needs it.
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

}  // namespace panama::host::detail
