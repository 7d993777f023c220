// ReduceCall: the call's loop, its windows and silences (reduce_call.h).
#include "reduce_call.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>

namespace panama::host::detail {

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
  now_ = Clock::now();
  while (!all_done()) {
    if (stop_ && stop_->load()) {
      close_range();
      throw AllReduceStopped("stopped on request with " + std::to_string(missing()) + " of " + std::to_string(K) +
                             " vectors missing");
    }
    if (repair && held_ < K && now_ - last_vector_ >= stall()) fail_stalled(missing());
    send_windows();
    // With a stop flag the wait is cut into slices of kStopPoll; a slice that ends before the
    // deadline is no silence.
    const auto deadline = next_deadline();
    const auto wake = stop_ ? std::min(deadline, now_ + AllReduce::kStopPoll) : deadline;
    const bool got = t_.recv_view(rx, rx_len, wake);
    now_ = Clock::now();  // the one clock read of the iteration
    if (got)
      take_frame(rx, rx_len);
    else if (now_ >= deadline && on_silence())
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
  const auto now = now_;
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

}  // namespace panama::host::detail
